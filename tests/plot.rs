//! `headroom plot` end to end: the built binary on the toolchain's sample
//! CSV, on a run recorded from a board root, on a CSV with OOM kills and
//! hostile text, and on bad input; every SVG checked for well-formedness.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;
use common::{BIN, headroom_with, mkfifo, scratch};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Checks that `svg` is well-formed XML as far as this SVG needs: one
/// root `<svg>`, every tag closed in order, attributes quoted, and no
/// raw `<` or `&` outside markup that is not an entity. Returns the number
/// of elements.
fn well_formed(svg: &str) -> usize {
    let b = svg.as_bytes();
    let mut i = 0;
    let mut stack: Vec<&str> = Vec::new();
    let mut elements = 0;
    let mut roots = 0;
    let entity = |at: usize| -> bool {
        let rest = &svg[at..];
        ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
            .iter()
            .any(|e| rest.starts_with(e))
    };
    assert!(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
    i += svg.find("?>").unwrap() + 2;
    while i < b.len() {
        match b[i] {
            b'<' => {
                let end = i + svg[i..].find('>').expect("unclosed tag");
                let tag = &svg[i + 1..end];
                if let Some(name) = tag.strip_prefix('/') {
                    assert_eq!(stack.pop(), Some(name), "mismatched </{name}> at {i}");
                } else {
                    let self_closing = tag.ends_with('/');
                    let tag = tag.trim_end_matches('/');
                    let name = tag.split_whitespace().next().unwrap();
                    assert!(
                        name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'),
                        "bad tag name {name:?}"
                    );
                    // Attributes: name="value" pairs, values without < or raw &.
                    let mut rest = tag[name.len()..].trim_start();
                    while !rest.is_empty() {
                        let eq = rest.find("=\"").expect("unquoted attribute");
                        let close = rest[eq + 2..].find('"').expect("open attribute") + eq + 2;
                        let value = &rest[eq + 2..close];
                        assert!(!value.contains('<'), "< in attribute {value:?}");
                        for (j, _) in value.match_indices('&') {
                            let at = i + 1 + (value.as_ptr() as usize - tag.as_ptr() as usize) + j;
                            assert!(entity(at), "raw & in attribute {value:?}");
                        }
                        rest = rest[close + 1..].trim_start();
                    }
                    elements += 1;
                    if stack.is_empty() {
                        roots += 1;
                    }
                    if !self_closing {
                        stack.push(name);
                    }
                }
                i = end + 1;
            }
            b'&' => {
                assert!(
                    entity(i),
                    "raw & at {i}: {:?}",
                    &svg[i..(i + 20).min(b.len())]
                );
                i += 1;
            }
            b'>' => panic!("raw > in text at {i}"),
            c => {
                assert!(c >= 0x20 || c == b'\n', "control byte {c} at {i}");
                i += 1;
            }
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert_eq!(roots, 1, "one root element");
    assert!(
        svg[svg.find("?>").unwrap() + 2..]
            .trim_start()
            .starts_with("<svg ")
    );
    elements
}

/// Runs plot on `csv` and returns the SVG it wrote (the path printed).
fn plot_ok(csv: &Path) -> String {
    let out = headroom_with(&["plot", s(csv)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    let svg_path = csv.with_extension("svg");
    assert_eq!(printed, format!("{}\n", s(&svg_path)));
    let svg = fs::read_to_string(&svg_path).unwrap();
    well_formed(&svg);
    svg
}

fn no_temp_files(dir: &Path) {
    for e in fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".tmp"), "temp file left: {n}");
    }
}

#[test]
fn the_checker_rejects_broken_xml() {
    for bad in [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=\"1\"><g></svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=\"1\">a<b</svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=\"1\">a & b</svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=\"x&y\"></svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=1></svg>",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg></svg><svg></svg>",
    ] {
        assert!(
            std::panic::catch_unwind(|| well_formed(bad)).is_err(),
            "{bad}"
        );
    }
    let ok = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg a=\"&amp;\"><g/>a &lt; b</svg>\n";
    assert_eq!(well_formed(ok), 2);
}

#[test]
fn toolchain_sample_csv() {
    let d = scratch("toolchain");
    let csv = d.join("toolchain-cargo-build.csv");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/toolchain-cargo-build.csv"),
        &csv,
    )
    .unwrap();
    let svg = plot_ok(&csv);
    for col in ["mem_used_mb", "disk_avail_mb", "cpu_pct", "compilers"] {
        assert!(
            svg.contains(&format!("<polyline class=\"series\" data-series=\"{col}\"")),
            "{col}"
        );
    }
    assert!(!svg.contains("data-series=\"zram"));
    assert!(svg.contains("not in this CSV (omitted): zram stored (MiB), zram RAM (MiB)"));
    // Swap is 0 throughout; on this 24 GB host RAM available (~23,500 MiB)
    // is above the axis that RAM used (413 to 689 MiB) sets.
    assert!(!svg.contains("data-series=\"swap_used_mb\""));
    assert!(svg.contains("0 throughout (not drawn): swap used (MiB)"));
    assert!(!svg.contains("data-series=\"mem_avail_mb\""));
    assert!(
        svg.contains(">800</text>"),
        "the memory axis tops at 800 MiB"
    );
    assert!(svg.contains("above the chart: MemTotal 24105 MiB"), "{svg}");
    assert!(svg.contains("<title>stage build: 0s to 18s after the start, 18 rows</title>"));
    assert!(svg.contains("<title>headroom plot: toolchain-cargo-build.csv</title>"));
    assert!(svg.contains("18 samples, duration 18s"));
    // The near-OOM line: this 24 GB host keeps the toolchain's 4096 MB.
    assert!(svg.contains("near-OOM &lt; 4096 MiB"));
    assert!(svg.contains("OOM kills: unknown"));
    no_temp_files(&d);
}

#[test]
fn a_run_recorded_from_a_board_root() {
    let d = scratch("board");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/rpi4-4g-zram");
    let out = headroom_with(&[
        "--root",
        s(&root),
        "record",
        "--count",
        "4",
        "--interval",
        "0",
        "--label",
        "board-stage",
        "--run-id",
        "b",
        "--out-dir",
        s(&d),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = plot_ok(&d.join("resources-b.csv"));
    for col in [
        "zram_stored_mb",
        "zram_ram_mb",
        "mem_used_mb",
        "mem_avail_mb",
    ] {
        assert!(svg.contains(&format!("data-series=\"{col}\"")), "{col}");
    }
    // A board tree's CPU counters do not move: 0 % throughout, left out.
    assert!(!svg.contains("data-series=\"cpu_pct\""));
    assert!(svg.contains("0 throughout (not drawn): CPU %"), "{svg}");
    assert!(
        !svg.contains("not in this CSV"),
        "a full CSV has every series"
    );
    assert!(svg.contains("4 samples"));
    assert!(svg.contains("<title>stage board-stage: "));
    assert!(svg.contains(", no OOM kill"));
    // 4 GB board: the summary's threshold scaled to 1/8 of RAM.
    assert!(svg.contains("(scaled from "), "{svg}");
}

/// Issue 25: a 1 GiB cgroup on a 22 GiB host (tests/data/cgroup-1g.csv),
/// and a run recorded in the container board's 2 GiB cgroup: the memory
/// panel draws the cgroup's limit (dashed), its use and its available
/// memory, and the legend names them.
#[test]
fn a_binding_cgroup_is_drawn() {
    let d = scratch("cgroup");
    let csv = d.join("cgroup-1g.csv");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cgroup-1g.csv"),
        &csv,
    )
    .unwrap();
    let svg = plot_ok(&csv);
    assert!(
        svg.contains(
            "data-series=\"cg_mem_limit_mb\" stroke=\"#393b79\" stroke-dasharray=\"8 4\" points=\""
        ),
        "{svg}"
    );
    for col in ["cg_mem_used_mb", "cg_mem_avail_mb"] {
        assert!(svg.contains(&format!("data-series=\"{col}\"")), "{col}");
    }
    for label in [
        ">cgroup limit (MiB)<",
        ">cgroup used (MiB)<",
        ">cgroup available (MiB)<",
    ] {
        assert!(svg.contains(label), "{label}");
    }
    assert!(svg.contains("near-OOM &lt; 128 MiB"), "{svg}");

    // The host-bound twin: nothing of a cgroup.
    let host = d.join("host-bound.csv");
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/host-bound.csv"),
        &host,
    )
    .unwrap();
    assert!(!plot_ok(&host).contains("cgroup"));

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/container-2g-1.5cpu");
    let out = headroom_with(&[
        "--root",
        s(&root),
        "record",
        "--count",
        "3",
        "--interval",
        "0",
        "--run-id",
        "c",
        "--out-dir",
        s(&d),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = plot_ok(&d.join("resources-c.csv"));
    assert!(svg.contains("data-series=\"cg_mem_limit_mb\""), "{svg}");
    assert!(
        svg.contains("<title>cgroup limit (MiB), peak 2048</title>"),
        "{svg}"
    );
    assert!(svg.contains("data-series=\"cg_mem_used_mb\""), "{svg}");
}

/// Issue 25: a `run --jobserver` CSV draws the jobs running, allowed and
/// paused on the CPU panel's count axis.
#[test]
fn a_jobserver_csv_draws_its_paused_jobs() {
    let d = scratch("jobs");
    let data =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/host-bound.csv"))
            .unwrap();
    let mut csv = String::new();
    for (i, line) in data.lines().enumerate() {
        let jobs = match i {
            0 => ",jobs_running,jobs_allowed,jobs_paused".to_string(),
            5..=7 => ",2,3,1".to_string(),
            _ => ",3,3,0".to_string(),
        };
        csv.push_str(&format!("{line}{jobs}\n"));
    }
    let path = d.join("resources-j.csv");
    fs::write(&path, csv).unwrap();
    let svg = plot_ok(&path);
    for col in ["jobs_running", "jobs_allowed", "jobs_paused"] {
        assert!(svg.contains(&format!("data-series=\"{col}\"")), "{col}");
    }
    assert!(
        svg.contains("<title>jobs paused (count), peak 1</title>"),
        "{svg}"
    );
    assert!(svg.contains(">jobs paused (count)</text>"), "{svg}");
}

/// A headroom CSV with OOM kills, in the 27 columns of before the slow
/// ones (a recording of an earlier version); the context is CSV-quoted.
fn oom_csv(rows: usize) -> String {
    use headroom::tick::row::columns::{CORE_COLUMNS, EXT_COLUMNS};
    let mut cols = CORE_COLUMNS.to_vec();
    cols.extend(&EXT_COLUMNS[..13]);
    let mut t = format!("{}\n", cols.join(","));
    let mut kills = 0;
    for i in 0..rows {
        let e = 1_796_000_000 + 15 * i as u64;
        let iso = headroom::tick::clock::Iso::from_epoch(e);
        if i == rows / 2 || i == rows / 2 + 3 {
            kills += 1;
        }
        let (stage, ctx) = if i == rows / 2 {
            ("st<&>'age", "ld <&>\"\"'x.so")
        } else {
            ("compile", "[ 10%] Building CXX object a.o")
        };
        let used = 1000 + (i % 97) as u64 * 20;
        t.push_str(&format!(
            "{e},{},{},1.00,{},{used},{},50,0,12,40,{},{stage},\"{ctx}\",2048,{},{},900,5,12288,{kills},,0.10,700,cc1plus,,\n",
            iso.as_str(),
            15 * i,
            i % 101,
            4000 - used,
            i % 5,
            used / 4,
            used / 12
        ));
    }
    t
}

#[test]
fn oom_kills_are_marked_with_escaped_hover_text() {
    let d = scratch("oom");
    let csv = d.join("resources-oom.csv");
    fs::write(&csv, oom_csv(40)).unwrap();
    let svg = plot_ok(&csv);
    assert_eq!(svg.matches("<g class=\"oom-kill\">").count(), 2);
    // `"` is never kept in a context (the reader makes it a space); the
    // rest is escaped.
    let want = "(5m00s after the start), stage=st&lt;&amp;&gt;&apos;age, context=ld &lt;&amp;&gt; &apos;x.so</title>";
    assert!(svg.contains(want), "{svg}");
    assert!(!svg.contains("<&>"));
    assert!(svg.contains("2 OOM kill(s)"));
    assert!(svg.contains("<title>stage st&lt;&amp;&gt;&apos;age: "));
}

#[test]
fn output_path_options() {
    let d = scratch("out");
    let csv = d.join("run.csv");
    fs::write(&csv, oom_csv(5)).unwrap();
    // -o elsewhere.
    let other = d.join("elsewhere.svg");
    let out = headroom_with(&["plot", s(&csv), "-o", s(&other)]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", s(&other))
    );
    well_formed(&fs::read_to_string(&other).unwrap());
    assert!(!d.join("run.svg").exists());
    // -o -: the SVG on stdout and nothing else.
    let out = headroom_with(&["plot", s(&csv), "-o", "-"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, fs::read_to_string(&other).unwrap());
    // A name without .csv gets .svg appended.
    let bare = d.join("data");
    fs::copy(&csv, &bare).unwrap();
    let out = headroom_with(&["plot", s(&bare)]);
    assert!(out.status.success());
    assert!(d.join("data.svg").exists());
    // Relative path, in the working directory.
    let out = Command::new(BIN)
        .args(["plot", "run.csv"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "run.svg\n");
    no_temp_files(&d);
}

#[test]
fn a_symlink_at_the_output_path_is_refused() {
    let d = scratch("symlink");
    let csv = d.join("run.csv");
    fs::write(&csv, oom_csv(5)).unwrap();
    let target = d.join("precious.txt");
    fs::write(&target, "keep me").unwrap();
    std::os::unix::fs::symlink(&target, d.join("run.svg")).unwrap();
    let out = headroom_with(&["plot", s(&csv)]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("symlink"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
    assert!(
        fs::symlink_metadata(d.join("run.svg"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    no_temp_files(&d);
}

#[test]
fn a_fifo_or_the_input_itself_at_the_output_path_is_refused() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("not-regular");
    let csv = d.join("run.csv");
    let data = oom_csv(5);
    fs::write(&csv, &data).unwrap();
    // A FIFO (as root, a device node such as /dev/null, which rename(2)
    // would replace with a regular file): refused, left as it was.
    let fifo = d.join("f.svg");
    mkfifo(&fifo);
    let out = headroom_with(&["plot", s(&csv), "-o", s(&fifo)]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{err}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // The CSV being plotted, by another name too (a hard link).
    for out_path in [csv.clone(), d.join("link.csv")] {
        if out_path != csv {
            fs::hard_link(&csv, &out_path).unwrap();
        }
        let out = headroom_with(&["plot", s(&csv), "-o", s(&out_path)]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is the CSV being plotted"), "{err}");
        assert_eq!(fs::read_to_string(&csv).unwrap(), data);
    }
    no_temp_files(&d);
}

#[test]
fn a_failed_write_leaves_no_half_svg() {
    let d = scratch("fail");
    let csv = d.join("run.csv");
    fs::write(&csv, oom_csv(5)).unwrap();
    // The output name is a directory: refused before anything is written.
    // (A write that fails midway removes its temporary file: the unit test
    // of replace::replace.)
    fs::create_dir(d.join("run.svg")).unwrap();
    let out = headroom_with(&["plot", s(&csv)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    no_temp_files(&d);
    // A directory that does not exist.
    let out = headroom_with(&["plot", s(&csv), "-o", s(&d.join("nope/x.svg"))]);
    assert_eq!(out.status.code(), Some(1));
    // /dev/full as stdout: ENOSPC is an error, one line.
    let full = fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let out = Command::new(BIN)
            .args(["plot", s(&csv), "-o", "-"])
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains("stdout: No space left"));
    }
    // A bad CSV does not touch an existing SVG.
    let good = d.join("good.csv");
    fs::write(&good, oom_csv(5)).unwrap();
    let before = plot_ok(&good);
    fs::write(&good, "not,a,csv\n").unwrap();
    assert_eq!(headroom_with(&["plot", s(&good)]).status.code(), Some(1));
    assert_eq!(fs::read_to_string(d.join("good.svg")).unwrap(), before);
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    let d = scratch("bad");
    let header = headroom::tick::row::columns::HEADER_FULL;
    let cases: [(&str, String, &str); 6] = [
        (
            "empty.csv",
            String::new(),
            "no samples to plot (the file is empty)",
        ),
        (
            "header.csv",
            header.to_string(),
            "no samples to plot (a header and no rows)",
        ),
        (
            "malformed.csv",
            format!("{header}x,y\n1,2,3\n"),
            "no samples to plot (all 2 rows are malformed)",
        ),
        (
            "one-bad.csv",
            format!("{header}x,y\n"),
            "no samples to plot (its only row is malformed)",
        ),
        (
            "text.csv",
            "hello world\nthis is not a csv\n".to_string(),
            "not a resource CSV (the header has no 'epoch' column)",
        ),
        (
            "binary.csv",
            String::from_utf8_lossy(&[0u8; 10_000]).into_owned(),
            "not a resource CSV",
        ),
    ];
    for (name, body, want) in cases {
        let p = d.join(name);
        fs::write(&p, body).unwrap();
        let out = headroom_with(&["plot", s(&p)]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(out.stdout.is_empty());
        assert!(!p.with_extension("svg").exists(), "{name}");
    }
    for (args, code) in [
        (vec!["plot"], 2),
        (vec!["plot", ""], 2),
        (vec!["plot", "x.csv", "-o", ""], 2),
        (vec!["plot", "x.csv", "--bogus"], 2),
        (vec!["plot", s(&d.join("missing.csv"))], 1),
        (vec!["plot", "/dev/null"], 1),
        (vec!["plot", s(&d)], 1),
    ] {
        let out = headroom_with(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
    no_temp_files(&d);
}

#[test]
fn one_row_and_time_going_backwards_still_plot() {
    let d = scratch("odd");
    let body = oom_csv(6);
    let mut lines: Vec<&str> = body.lines().collect();
    let one = format!("{}\n{}\n", lines[0], lines[1]);
    fs::write(d.join("one.csv"), one).unwrap();
    let svg = plot_ok(&d.join("one.csv"));
    assert!(svg.contains("1 samples, duration 0s"));
    assert!(svg.contains("data-series=\"mem_used_mb\""));
    // Reversed rows, and a duplicate.
    let dup = lines[3];
    lines[1..].reverse();
    lines.push(dup);
    fs::write(d.join("back.csv"), lines.join("\n") + "\n").unwrap();
    let svg = plot_ok(&d.join("back.csv"));
    assert!(svg.contains("7 samples, duration 1m15s"));
}

#[test]
fn output_is_bounded_whatever_the_row_count() {
    let d = scratch("big");
    let csv = d.join("big.csv");
    fs::write(&csv, oom_csv(30_000)).unwrap();
    let svg = plot_ok(&csv);
    assert!(svg.len() < 1024 * 1024, "{} bytes", svg.len());
    assert!(svg.contains("30000 samples"));
}

#[test]
fn help_shows_examples() {
    let out = headroom_with(&["plot", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Examples:"), "{text}");
    assert!(text.contains("plot resources-run.csv -o -"), "{text}");
}
