//! End-to-end: `record --prom FILE` and `run --prom FILE` as a user runs
//! them. The file is checked against the Prometheus text format by hand
//! here; `ci/prom-check` also gives it to `promtool check metrics` and to a
//! real node_exporter.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::{BIN, mkfifo, scratch};

fn board(name: &str) -> String {
    format!("{}/boards/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One parsed sample: name, labels in order, value text.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: String,
}

/// Parses an exposition strictly: every sample's family has HELP then
/// TYPE before it, names and label names are valid, label values are
/// quoted with only `\\`, `\"` and `\n` escapes, every line ends with LF.
fn parse(text: &str) -> (Vec<Sample>, HashMap<String, String>) {
    assert!(text.is_empty() || text.ends_with('\n'), "{text:?}");
    let mut types = HashMap::new();
    let mut helped = None;
    let mut samples = Vec::new();
    let valid_name = |n: &str| {
        !n.is_empty()
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
            && !n.as_bytes()[0].is_ascii_digit()
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap();
            assert!(valid_name(name) && !help.is_empty(), "{line}");
            helped = Some(name.to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert_eq!(helped.as_deref(), Some(name), "TYPE without HELP: {line}");
            assert!(["gauge", "counter"].contains(&kind), "{line}");
            assert_eq!(name.ends_with("_total"), kind == "counter", "{line}");
            assert!(types.insert(name.to_string(), kind.to_string()).is_none());
            continue;
        }
        let (name, rest) = line.split_once('{').unwrap();
        assert!(valid_name(name), "{line}");
        assert!(types.contains_key(name), "sample before its TYPE: {line}");
        let mut labels = Vec::new();
        let mut chars = rest.chars().peekable();
        loop {
            let lname: String = chars.by_ref().take_while(|&c| c != '=').collect();
            assert!(valid_name(&lname), "{line}");
            assert_eq!(chars.next(), Some('"'), "{line}");
            let mut value = String::new();
            loop {
                match chars.next().unwrap() {
                    '"' => break,
                    '\\' => match chars.next().unwrap() {
                        '\\' => value.push('\\'),
                        '"' => value.push('"'),
                        'n' => value.push('\n'),
                        c => panic!("bad escape \\{c} in {line}"),
                    },
                    c => value.push(c),
                }
            }
            labels.push((lname, value));
            match chars.next() {
                Some(',') => continue,
                Some('}') => break,
                c => panic!("{c:?} after a label in {line}"),
            }
        }
        assert_eq!(chars.next(), Some(' '), "{line}");
        let value: String = chars.collect();
        assert!(value.parse::<f64>().is_ok(), "value {value:?} in {line}");
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    (samples, types)
}

fn get<'s>(samples: &'s [Sample], name: &str) -> &'s Sample {
    samples
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn num(samples: &[Sample], name: &str) -> f64 {
    get(samples, name).value.parse().unwrap()
}

#[test]
fn record_on_a_board_exposes_the_last_rows_figures_in_base_units() {
    let d = scratch("board");
    let out = Command::new(BIN)
        .args(["--root", &board("rpi4-4g-zram"), "record", "--count", "3"])
        .args(["--interval", "0", "--run-id", "pi", "--out-dir"])
        .arg(&d)
        .arg("--prom")
        .arg(d.join("headroom.prom"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(d.join("headroom.prom")).unwrap();
    let (samples, types) = parse(&text);
    // One sample a family, but headroom_throttled's one per flag (the
    // board has the firmware's throttle word).
    assert_eq!(types.len() + 3, samples.len());
    for s in &samples {
        assert_eq!(s.labels[0], ("run_id".into(), "pi".into()), "{s:?}");
    }
    // The same figures as the CSV's last row, MiB → bytes.
    let csv = fs::read_to_string(d.join("resources-pi.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let last: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
    let col = |name: &str| -> f64 {
        let i = header.iter().position(|h| *h == name).unwrap();
        last[i].parse().unwrap()
    };
    let mib = 1024.0 * 1024.0;
    for (metric, column) in [
        ("headroom_memory_available_bytes", "mem_avail_mb"),
        ("headroom_memory_used_bytes", "mem_used_mb"),
        ("headroom_swap_used_bytes", "swap_used_mb"),
        ("headroom_swap_total_bytes", "swap_total_mb"),
        ("headroom_zram_stored_bytes", "zram_stored_mb"),
        ("headroom_zram_ram_bytes", "zram_ram_mb"),
        ("headroom_tmp_available_bytes", "tmp_avail_mb"),
        ("headroom_disk_available_bytes", "disk_avail_mb"),
        ("headroom_compiler_rss_bytes", "peak_rss_mb"),
    ] {
        assert_eq!(num(&samples, metric), col(column) * mib, "{metric}");
    }
    assert!(col("zram_stored_mb") > 0.0, "the board has zram in use");
    assert_eq!(num(&samples, "headroom_compilers"), col("compilers"));
    assert_eq!(num(&samples, "headroom_load1"), col("load1"));
    assert_eq!(
        num(&samples, "headroom_cpu_busy_ratio"),
        col("cpu_pct") / 100.0
    );
    assert_eq!(num(&samples, "headroom_samples_total"), 3.0);
    // The slow columns: a ratio for a percentage, °C as written, one
    // 0/1 sample per throttle flag as the CSV's text names them.
    assert_eq!(
        num(&samples, "headroom_disk_busy_ratio"),
        col("disk_util_pct") / 100.0
    );
    assert_eq!(
        num(&samples, "headroom_cpu_temperature_celsius"),
        col("cpu_temp_c")
    );
    let flags_i = header.iter().position(|h| *h == "throttled").unwrap();
    let flags: Vec<&str> = last[flags_i].split('|').collect();
    let exposed: Vec<(&str, &str)> = samples
        .iter()
        .filter(|s| s.name == "headroom_throttled")
        .map(|s| (s.labels[1].1.as_str(), s.value.as_str()))
        .collect();
    assert_eq!(exposed.len(), 4, "{exposed:?}");
    for (flag, v) in exposed {
        assert_eq!(v == "1", flags.contains(&flag), "{flag}: {flags:?}");
    }
    assert_eq!(
        num(&samples, "headroom_last_sample_timestamp_seconds"),
        col("epoch")
    );
    // The recording has ended: the file says so and keeps the figures.
    assert_eq!(num(&samples, "headroom_recording"), 0.0);
    let rss = get(&samples, "headroom_compiler_rss_bytes");
    assert_eq!(rss.labels[1], ("comm".into(), last[24].to_string()));
    let stage = get(&samples, "headroom_stage_info");
    assert_eq!(stage.labels[1].0, "stage");
    assert_eq!(stage.value, "1");
    // Every family is documented in the man page.
    let page =
        fs::read_to_string(format!("{}/src/headroom.1", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for name in types.keys() {
        assert!(
            page.contains(&format!(".BR {name} \"")),
            "{name} not in src/headroom.1"
        );
    }
    // No temporary file is left beside it.
    let names: Vec<_> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
}

/// Issue 33: on a Pi whose only power source is `rpi_volt` (its
/// under-voltage alarm, no `get_throttled`: `rpi5-8g-16k`), the three
/// flags it cannot see are unknown: Prometheus has the under-voltage
/// sample alone and no time throttled, and `summarize --json` of the CSV
/// says `throttled_s` null, never 0. The firmware word's board (`rpi4`)
/// keeps all four flags and the time.
#[test]
fn rpi_volt_alone_exposes_under_voltage_only_and_no_time_throttled() {
    let d = scratch("rpi-volt");
    for (name, id) in [("rpi5-8g-16k", "volt"), ("rpi4-4g-zram", "word")] {
        let out = Command::new(BIN)
            .args(["--root", &board(name), "record", "--count", "2"])
            .args(["--interval", "0", "--run-id", id, "--out-dir"])
            .arg(&d)
            .arg("--prom")
            .arg(d.join(format!("{id}.prom")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let flags = |id: &str| -> (Vec<String>, HashMap<String, String>) {
        let text = fs::read_to_string(d.join(format!("{id}.prom"))).unwrap();
        let (samples, types) = parse(&text);
        let flags = samples
            .iter()
            .filter(|s| s.name == "headroom_throttled")
            .map(|s| format!("{}={}", s.labels[1].1, s.value))
            .collect();
        (flags, types)
    };
    let (volt, types) = flags("volt");
    assert_eq!(volt, ["under-voltage=1"]);
    assert!(!types.contains_key("headroom_throttled_seconds_total"));
    assert!(types.contains_key("headroom_under_voltage_seconds_total"));
    let (word, types) = flags("word");
    assert_eq!(
        word,
        [
            "under-voltage=0",
            "freq-capped=0",
            "throttled=1",
            "soft-temp-limit=0"
        ]
    );
    assert!(types.contains_key("headroom_throttled_seconds_total"));
    let json = |id: &str| {
        let out = Command::new(BIN)
            .arg("summarize")
            .arg("--json")
            .arg(d.join(format!("resources-{id}.csv")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let volt = json("volt");
    assert!(
        volt.contains(",\"throttled_s\":null,\"throttled_minute\":null,\"under_voltage_s\":"),
        "{volt}"
    );
    assert!(!volt.contains("\"under_voltage_s\":null"), "{volt}");
    assert!(json("word").contains(",\"throttled_s\":"), "word");
    assert!(!json("word").contains("\"throttled_s\":null"));
}

#[test]
fn quotes_backslashes_and_newlines_in_label_values_are_escaped() {
    let d = scratch("escape");
    // A real directory whose name has all three, as the build disk; a run
    // id with a quote and a backslash; a stage from --label.
    let disk = d.join("build \"disk\"\\\nnew line");
    fs::create_dir_all(&disk).unwrap();
    let out = Command::new(BIN)
        .args(["record", "--count", "2", "--interval", "0"])
        .args(["--run-id", "q\"\\", "--label", "stage \"x\" \\y"])
        .arg("--out-dir")
        .arg(&d)
        .arg("--disk-path")
        .arg(&disk)
        .arg("--prom")
        .arg(d.join("h.prom"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(d.join("h.prom")).unwrap();
    let expected_path = format!("path=\"{}/build \\\"disk\\\"\\\\\\nnew line\"", d.display());
    assert!(text.contains(&expected_path), "{expected_path} in\n{text}");
    assert!(text.contains("{run_id=\"q\\\"\\\\\""), "{text}");
    // The parser takes the escapes back to the very same values.
    let (samples, _) = parse(&text);
    let disk_s = get(&samples, "headroom_disk_available_bytes");
    assert_eq!(disk_s.labels[1].1, disk.to_str().unwrap());
    assert_eq!(disk_s.labels[0].1, "q\"\\");
    // The stage is the CSV's: quotes are dropped from it there (SPEC.md,
    // "CSV"); the backslash stays and is escaped.
    assert!(text.contains("stage=\"stage x \\\\y\"} 1\n"), "{text}");
    let stage = get(&samples, "headroom_stage_info");
    assert_eq!(stage.labels[1].1, "stage x \\y");
}

#[test]
fn counters_only_go_up_and_a_reader_never_sees_half_a_file() {
    let d = scratch("reader");
    let prom = d.join("h.prom");
    let mut child = Command::new(BIN)
        .args([
            "record",
            "--count",
            "400",
            "--interval",
            "0",
            "--run-id",
            "r",
        ])
        .arg("--out-dir")
        .arg(&d)
        .arg("--prom")
        .arg(&prom)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut last_samples = 0.0;
    let mut reads = 0;
    loop {
        let done = child.try_wait().unwrap().is_some();
        if let Ok(text) = fs::read_to_string(&prom)
            && !text.is_empty()
        {
            let (samples, _) = parse(&text);
            let n = num(&samples, "headroom_samples_total");
            assert!(n >= last_samples, "{n} after {last_samples}");
            last_samples = n;
            reads += 1;
        }
        if done {
            break;
        }
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(last_samples, 400.0);
    assert!(reads > 10, "only {reads} reads while recording");
}

#[test]
fn run_exposes_its_command_and_ends_with_recording_0() {
    let d = scratch("run");
    let out = Command::new(BIN)
        .args(["run", "--interval", "0.1", "--run-id", "m", "--out-dir"])
        .arg(&d)
        .arg("--prom")
        .arg(d.join("m.prom"))
        .args(["--", "sh", "-c", "sleep 0.5; exit 3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let (samples, _) = parse(&fs::read_to_string(d.join("m.prom")).unwrap());
    assert_eq!(num(&samples, "headroom_recording"), 0.0);
    assert!(num(&samples, "headroom_samples_total") >= 3.0);
}

#[test]
fn run_actions_with_prom_records_instead_of_staying_quiet() {
    let d = scratch("light");
    let out = Command::new(BIN)
        .args(["run", "--interval", "0.1", "--actions"])
        .arg(d.join("a.csv"))
        .arg("--prom")
        .arg(d.join("l.prom"))
        .current_dir(&d)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(d.join("l.prom").exists());
    assert!(d.join("a.csv").exists());
}

#[test]
fn a_prom_path_that_cannot_be_written_fails_at_start() {
    let d = scratch("bad");
    let run = |prom: &Path| {
        Command::new(BIN)
            .args(["record", "--count", "1", "--out-dir"])
            .arg(&d)
            .arg("--prom")
            .arg(prom)
            .output()
            .unwrap()
    };
    // No such directory: exit 1, one line, before any row.
    let out = run(&d.join("missing/h.prom"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing"), "{err}");
    // A symlink planted at the path: refused, its target untouched.
    fs::write(d.join("target"), "keep").unwrap();
    std::os::unix::fs::symlink(d.join("target"), d.join("l.prom")).unwrap();
    let out = run(&d.join("l.prom"));
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(fs::read_to_string(d.join("target")).unwrap(), "keep");
    // Not a file path at all: usage, exit 2.
    let out = run(Path::new("/"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_bad_prom_path_costs_nothing_already_recorded() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("keep");
    let record = |prom: Option<&Path>| {
        let mut c = Command::new(BIN);
        c.args(["record", "--count", "3", "--interval", "0", "--out-dir"])
            .arg(&d);
        if let Some(p) = prom {
            c.arg("--prom").arg(p);
        }
        c.output().unwrap()
    };
    assert!(record(None).status.success());
    let csv = fs::read_to_string(d.join("resources-run.csv")).unwrap();
    let summary = fs::read_to_string(d.join("resources-run.summary.txt")).unwrap();
    assert_eq!(csv.lines().count(), 4);
    let fifo = d.join("f.prom");
    mkfifo(&fifo);
    for (prom, code) in [
        (d.join("missing/h.prom"), 1),
        (d.clone(), 1),
        (fifo.clone(), 1),
        // This recording's own files: a usage error.
        (d.join("resources-run.csv"), 2),
        (d.join(".").join("resources-run.summary.txt"), 2),
    ] {
        let out = record(Some(&prom));
        assert_eq!(out.status.code(), Some(code), "{prom:?}: {out:?}");
        assert_eq!(
            fs::read_to_string(d.join("resources-run.csv")).unwrap(),
            csv,
            "{prom:?}"
        );
        assert_eq!(
            fs::read_to_string(d.join("resources-run.summary.txt")).unwrap(),
            summary
        );
    }
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

proptest::proptest! {
    // No regression files: a failure prints its shrunk input.
    #![proptest_config(proptest::test_runner::Config {
        cases: 2048,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Any run id, disk path and stage — quotes, backslashes, newlines,
    /// any Unicode — renders, passes the strict parser and reads back as
    /// the very same label values.
    #[test]
    fn any_label_values_render_and_read_back(
        run_id in "(?s).{0,60}",
        disk in "(?s).{0,200}",
        stage in "[^,\"\\r\\n]{0,20}",
        mem in proptest::prelude::any::<u64>(),
        kills in proptest::prelude::any::<Option<u64>>(),
    ) {
        use headroom::report::prom::{render, Labels, PromText};
        let mut row = headroom::tick::row::Row::empty(1_796_000_000);
        row.mem_avail_mb = mem;
        row.ext.oom_kills = kills;
        let _ = row.stage.push_str(&stage);
        let mut summary = headroom::report::summary::Summary::new(None, None);
        summary.observe(&row);
        let mut text = PromText::new();
        let labels = Labels { run_id: &run_id, disk_path: &disk };
        proptest::prop_assert!(render(&row, &summary, labels, true, &mut text).is_ok());
        let (samples, _) = parse(&text);
        for s in &samples {
            proptest::prop_assert_eq!(&s.labels[0].1, &run_id);
        }
        proptest::prop_assert_eq!(&get(&samples, "headroom_disk_available_bytes").labels[1].1, &disk);
        let bytes = u128::from(mem) * 1024 * 1024;
        proptest::prop_assert_eq!(
            get(&samples, "headroom_memory_available_bytes").value.parse::<u128>().ok(),
            Some(bytes)
        );
    }
}
