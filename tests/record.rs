//! End-to-end: the built binary, run as a user runs it.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{BIN, mkfifo, output_within, scratch};

const HEADER: &str = "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,swap_total_mb,zram_stored_mb,zram_ram_mb,tmp_avail_mb,tmp_pct,disk_avail_mb,oom_kills,cg_mem_avail_mb,psi_mem_some_avg10,peak_rss_mb,peak_rss_comm,build_peak_rss_mb,build_peak_rss_comm,swap_in_mibps,swap_out_mibps,majflt_ps,refaults_ps,disk_read_mibps,disk_write_mibps,disk_util_pct,cpu_temp_c,cpu_freq_pct,throttled,cg_mem_limit_mb,disk_stalled,cg_oom_kills";

const HEADINGS: [&str; 9] = [
    "=== resource-monitor summary ===",
    "samples=",
    "PEAK MEMORY USE:",
    "MIN MEMORY AVAILABLE (closest to OOM):",
    "PEAK SWAP USE:",
    "MIN DISK FREE (build fs):",
    "PEAK LOAD:",
    "samples below ",
    "kernel OOM-kill events:",
];

/// Splits a row as the toolchain's consumer does: on every comma.
fn fields(line: &str) -> Vec<&str> {
    line.split(',').collect()
}

fn assert_headings_in_order(summary: &str) {
    let mut at = 0;
    for h in HEADINGS {
        let i = summary[at..]
            .find(h)
            .unwrap_or_else(|| panic!("heading {h:?} missing or out of order in:\n{summary}"));
        at += i + h.len();
    }
}

fn check_row(line: &str, width: usize) {
    let f = fields(line);
    assert_eq!(f.len(), width, "row {line:?}");
    for (i, v) in f.iter().take(12).enumerate() {
        if i == 1 {
            assert_eq!(v.len(), 20, "iso {v}");
            continue;
        }
        assert!(
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'),
            "field {i} not numeric: {v:?} in {line:?}"
        );
    }
    let ctx = f[13];
    assert!(
        ctx.len() >= 2 && ctx.starts_with('"') && ctx.ends_with('"'),
        "{ctx}"
    );
    assert!(!ctx[1..ctx.len() - 1].contains('"'));
}

#[test]
fn record_three_rows_full_and_compat() {
    let d = scratch("three");
    let out = Command::new(BIN)
        .args(["record", "--interval", "1", "--count", "3", "--run-id", "t"])
        .arg("--out-dir")
        .arg(d.join("D"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let csv = fs::read_to_string(d.join("D/resources-t.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], HEADER);
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(csv.ends_with('\n'));
    for l in &lines[1..] {
        check_row(l, common::FULL_WIDTH);
    }
    let summary = fs::read_to_string(d.join("D/resources-t.summary.txt")).unwrap();
    assert_headings_in_order(&summary);
    // The duration is the rows' epoch span: 2 s apart on the schedule, 3
    // when the second boundary falls between them late (a loaded host).
    let epoch = |l: &str| l.split(',').next().unwrap().parse::<u64>().unwrap();
    let span = epoch(lines[3]) - epoch(lines[1]);
    assert!((2..=3).contains(&span), "{csv}");
    let want = format!("samples=3  duration=0m{span:02}s");
    assert!(summary.contains(&want), "{want} in {summary}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), summary);

    let out = Command::new(BIN)
        .args([
            "record",
            "--interval",
            "0",
            "--count",
            "2",
            "--run-id",
            "c",
            "--compat",
        ])
        .arg("--out-dir")
        .arg(&d)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let csv = fs::read_to_string(d.join("resources-c.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], HEADER.split(",swap_total_mb").next().unwrap());
    assert_eq!(lines.len(), 3);
    for l in &lines[1..] {
        check_row(l, 14);
    }
}

#[test]
fn env_defaults_out_dir_and_run_id() {
    let d = scratch("env");
    let out = Command::new(BIN)
        .args(["record", "--interval", "0", "--count", "1"])
        .env("LOG_DIR", &d)
        .env("CROSS_RUN_ID", "fromenv")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(d.join("resources-fromenv.csv").is_file());
    assert!(d.join("resources-fromenv.summary.txt").is_file());
}

/// A C file that keeps cc1 busy for a couple of seconds at -O2.
fn write_heavy_c(path: &Path) {
    let mut src = String::from("#include <stdio.h>\n");
    for i in 0..1500 {
        src.push_str(&format!(
            "static double f{i}(double x) {{ double s = 0; for (int k = 0; k < {n}; k++) {{ s += x * k / (k + {i}.0); if (s > 1e9) s -= x; }} return s; }}\n",
            n = 10 + i % 7
        ));
    }
    src.push_str("int main(void) { double t = 0;\n");
    for i in 0..1500 {
        src.push_str(&format!("t += f{i}(t + {i});\n"));
    }
    src.push_str("printf(\"%f\\n\", t); return 0; }\n");
    fs::write(path, src).unwrap();
}

#[test]
fn records_a_real_compile_until_it_exits() {
    if Command::new("cc").arg("--version").output().is_err() {
        panic!("this test needs a C compiler (cc): apt-get install gcc");
    }
    let d = scratch("build");
    write_heavy_c(&d.join("heavy.c"));
    let log = d.join("build.log");
    // The build: a shell that logs like make and runs the compiler.
    let script = "echo '[stage compile]'; \
                  echo '[ 50%] Building C object heavy.c.o'; \
                  cc -O2 -c heavy.c -o heavy.o && echo '[100%] Linking C executable heavy' && cc heavy.o -o heavy";
    let mut build = Command::new("sh")
        .args(["-c", script])
        .current_dir(&d)
        .stdout(fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Only the C compiler counts: a rustc elsewhere on the machine (cargo
    // building other tests) must not become the peak compiler.
    let rec = Command::new(BIN)
        .args(["record", "--interval", "0.2", "--run-id", "build"])
        .args(["--compilers", "cc1,cc,gcc,as,collect2,ld"])
        .arg("--out-dir")
        .arg(&d)
        .arg("--stage-log")
        .arg(&log)
        .arg("--watch-pid")
        .arg(build.id().to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = build.wait().unwrap();
    assert!(status.success(), "the test build failed");
    let out = rec.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "recording did not stop with the build"
    );
    let csv = fs::read_to_string(d.join("resources-build.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(fields).collect();
    assert!(!rows.is_empty());
    // Rows where the build's own compilers ran (build_peak_rss_*): the
    // host's `compilers` count and peak are anyone's on a shared machine.
    let busy: Vec<&Vec<&str>> = rows.iter().filter(|r| !r[25].is_empty()).collect();
    assert!(!busy.is_empty(), "no row saw the compiler:\n{csv}");
    assert!(
        busy.iter()
            .any(|r| r[13].contains("Building C object heavy.c.o")),
        "no context from the log:\n{csv}"
    );
    assert!(busy.iter().all(|r| r[12] == "compile"), "stage:\n{csv}");
    // One last row once the build has exited shows its final step.
    let last = rows.last().unwrap();
    assert!(
        last[13].contains("[100%] Linking C executable heavy"),
        "last row is not the final step:\n{csv}"
    );
    assert!(busy.iter().any(|r| r[26] == "cc1"), "{csv}");
    // The host's count holds at least the build's compiler on those rows.
    assert!(
        busy.iter().all(|r| r[11].parse::<u32>().unwrap() >= 1),
        "{csv}"
    );
    let summary = String::from_utf8(out.stdout).unwrap();
    assert_headings_in_order(&summary);
    let min_avail = summary
        .split("MIN MEMORY AVAILABLE (closest to OOM):\n")
        .nth(1)
        .unwrap();
    let ctx_line = min_avail.lines().nth(1).unwrap();
    assert!(
        ctx_line.contains("context=") && !ctx_line.ends_with("context="),
        "MIN MEMORY AVAILABLE names no context:\n{summary}"
    );
}

#[test]
fn sigterm_writes_the_summary_and_exits_zero() {
    for (i, (sig, n)) in [("TERM", 15), ("INT", 2), ("HUP", 1)].iter().enumerate() {
        if common::ignored_here(*n, &format!("SIG{sig}")) {
            continue;
        }
        let d = scratch(&format!("sig{i}"));
        let child = Command::new(BIN)
            .args(["record", "--interval", "0.1", "--run-id", "s"])
            .arg("--out-dir")
            .arg(&d)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        let k = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(k.success());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "SIG{sig}: {out:?}");
        let csv = fs::read_to_string(d.join("resources-s.csv")).unwrap();
        assert!(csv.ends_with('\n'));
        let n = csv.lines().count() - 1;
        assert!(n >= 2, "{csv}");
        for l in csv.lines().skip(1) {
            check_row(l, common::FULL_WIDTH);
        }
        let summary = fs::read_to_string(d.join("resources-s.summary.txt")).unwrap();
        assert_headings_in_order(&summary);
        assert!(summary.contains(&format!("samples={n} ")), "{summary}");
    }
}

#[test]
fn watch_pid_of_a_finished_process_takes_one_row() {
    let d = scratch("gone");
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    let out = Command::new(BIN)
        .args([
            "record",
            "--interval",
            "5",
            "--run-id",
            "g",
            "--watch-pid",
            &pid.to_string(),
        ])
        .arg("--out-dir")
        .arg(&d)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let csv = fs::read_to_string(d.join("resources-g.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2);
    // Stopped before it began, a recording still has its one row, so its
    // summary is written and `summarize` of it succeeds (issue 33).
    let summary = fs::read_to_string(d.join("resources-g.summary.txt")).unwrap();
    assert!(summary.contains("samples=1 "), "{summary}");
    let again = Command::new(BIN)
        .arg("summarize")
        .arg(d.join("resources-g.csv"))
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
}

#[test]
fn usage_errors_exit_2_and_runtime_errors_exit_1() {
    let d = scratch("usage");
    for args in [
        vec!["record", "--bogus"],
        vec!["record", "--interval", "x"],
        vec!["record", "--stage-log", "a", "--stage-log-dir", "b"],
        vec!["record", "--run-id", "../x"],
        vec!["record", "--watch-pid", "0"],
        vec!["record", "--compilers", ",,"],
        vec!["frobnicate"],
        vec![],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty());
    }
    for args in [
        vec!["record", "--count", "0"],
        vec!["record", "--out-dir", ""],
        vec!["record", "--root", ""],
        vec!["summarize", ""],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(&d)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    let out = Command::new(BIN)
        .args(["summarize", "/nonexistent.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err,
        "headroom: /nonexistent.csv: No such file or directory\n"
    );
    for dev in ["/dev/null", "/dev/zero"] {
        let out = output_within(Command::new(BIN).args(["summarize", dev]), 20);
        assert_eq!(out.status.code(), Some(1), "{dev}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("headroom: {dev}: not a regular file\n")
        );
    }
    let not_csv = d.join("nul.csv");
    fs::write(&not_csv, vec![0u8; 100_000]).unwrap();
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(&not_csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let help = Command::new(BIN)
        .args(["record", "--help"])
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0));
}

#[test]
fn a_symlink_at_the_csv_path_is_refused_and_its_target_untouched() {
    let d = scratch("symlink");
    let target = d.join("precious");
    fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, d.join("resources-x.csv")).unwrap();
    let out = Command::new(BIN)
        .args(["record", "--count", "1", "--interval", "0", "--run-id", "x"])
        .arg("--out-dir")
        .arg(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("symlink"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
}

/// Issue 28: `record --count 1` with a `--stage-log` that does not exist
/// warns as a longer run does (once, at its end: it has no second row).
#[test]
fn one_row_with_a_missing_stage_log_warns() {
    let d = scratch("one-row-missing-log");
    for count in ["1", "3"] {
        let out = Command::new(BIN)
            .args([
                "record",
                "--count",
                count,
                "--interval",
                "0",
                "--run-id",
                count,
            ])
            .args(["--stage-log", "nothere.log", "--out-dir", "."])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("nothere.log"))
            .collect();
        assert_eq!(
            said,
            [
                "headroom: warning: --stage-log nothere.log: does not exist (yet); stage and context stay empty until it does"
            ],
            "--count {count}: {stderr}"
        );
    }
}

#[test]
fn summarize_the_toolchains_csv_matches_the_golden_summary() {
    let d = scratch("summarize");
    let csv = d.join("resources-cargo.csv");
    fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/toolchain-cargo-build.csv"
        ),
        &csv,
    )
    .unwrap();
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let want = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.summary.txt"
    ))
    .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    assert_eq!(
        fs::read_to_string(d.join("resources-cargo.summary.txt")).unwrap(),
        want
    );
}

#[test]
fn summarize_skips_garbage_and_reports_it() {
    let d = scratch("garbage");
    let csv = d.join("g.csv");
    let mut data = fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.csv"
    ))
    .unwrap();
    data.extend_from_slice(b"not,a,row\n\xff\xfe garbage\n");
    fs::write(&csv, data).unwrap();
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("samples=18 "), "{s}");
    assert!(s.contains("skipped 2 malformed rows\n"), "{s}");
    assert!(d.join("g.summary.txt").is_file());
}

/// Issue 33: a CSV with no samples (0 bytes, or a header alone) still
/// prints `samples=0` (text or JSON), but is no summary: one line on
/// stderr, exit 1 as for a garbage file, and the summary beside it stays
/// as it was.
#[test]
fn summarize_empty_and_header_only_files_say_no_samples_and_fail() {
    let d = scratch("empty");
    fs::write(d.join("e.csv"), "").unwrap();
    fs::write(d.join("h.csv"), format!("{HEADER}\n")).unwrap();
    fs::write(d.join("h.summary.txt"), "kept\n").unwrap();
    for name in ["e.csv", "h.csv"] {
        let file = d.join(name);
        for json in [false, true] {
            let mut cmd = Command::new(BIN);
            cmd.arg("summarize").arg(&file);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{name} json={json}: {out:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!("headroom: {} has no samples\n", file.display())
            );
            let text = String::from_utf8(out.stdout).unwrap();
            if json {
                assert!(text.starts_with("{\"samples\":0,"), "{text}");
            } else {
                assert_eq!(
                    text,
                    "=== resource-monitor summary ===\nsamples=0  duration=0m00s\n"
                );
            }
        }
    }
    assert!(!d.join("e.summary.txt").exists());
    assert_eq!(
        fs::read_to_string(d.join("h.summary.txt")).unwrap(),
        "kept\n"
    );
}

/// Issue 33: `summarize` of a `record` or `run` CSV gives, whole, the
/// summary the recording wrote beside it: its ADVICE (computed when the
/// recording ended, from that host), the line on headroom's memory, the
/// RUN block and the build's OOM line, none of which a CSV column holds.
#[test]
fn summarize_of_a_recording_gives_the_summary_it_wrote_advice_included() {
    let d = scratch("resummarize");
    let rec = Command::new(BIN)
        .args([
            "record",
            "--count",
            "3",
            "--interval",
            "0.1",
            "--run-id",
            "a",
        ])
        .arg("--compilers")
        .arg("headroom")
        .arg("--out-dir")
        .arg(&d)
        .output()
        .unwrap();
    assert!(rec.status.success(), "{rec:?}");
    let run = Command::new(BIN)
        .args(["run", "--interval", "0.1", "--run-id", "r", "--out-dir"])
        .arg(&d)
        .args(["--", "sh", "-c", "sleep 0.3"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    for (id, marker) in [("a", "\nADVICE ("), ("r", "\nRUN: ")] {
        let summary = d.join(format!("resources-{id}.summary.txt"));
        let written = fs::read_to_string(&summary).unwrap();
        assert!(written.contains(marker), "{written}");
        let out = Command::new(BIN)
            .arg("summarize")
            .arg(d.join(format!("resources-{id}.csv")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), written);
        assert_eq!(fs::read_to_string(&summary).unwrap(), written);
    }
}

#[test]
fn closed_stdout_never_sends_the_summary_into_the_csv() {
    let d = scratch("closed-stdout");
    let status = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" record --count 2 --interval 0 --run-id c --out-dir \"$1\" >&-")
        .arg(BIN)
        .arg(&d)
        .status()
        .unwrap();
    assert!(status.success());
    let csv = fs::read_to_string(d.join("resources-c.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(!csv.contains("summary"));
    for l in csv.lines().skip(1) {
        check_row(l, common::FULL_WIDTH);
    }
    let piped = Command::new("sh")
        .arg("-c")
        .arg("\"$0\" summarize \"$1\" | head -c 10 >/dev/null")
        .arg(BIN)
        .arg(d.join("resources-c.csv"))
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("panicked"));
}

#[test]
fn summarize_json_on_stdout_text_in_the_file() {
    let d = scratch("json");
    let csv = d.join("resources-cargo.csv");
    fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/toolchain-cargo-build.csv"
        ),
        &csv,
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["summarize", "--json"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let want = fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.summary.json"
    ))
    .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let text = fs::read_to_string(d.join("resources-cargo.summary.txt")).unwrap();
    assert!(text.starts_with("=== resource-monitor summary ===\n"));
}

#[test]
fn a_fifo_or_device_as_the_log_never_blocks() {
    let d = scratch("fifo");
    let fifo = d.join("fifo.log");
    mkfifo(&fifo);
    for log in [fifo.as_path(), Path::new("/dev/zero"), d.as_path()] {
        let out = output_within(
            Command::new(BIN)
                .args(["record", "--count", "2", "--interval", "0", "--run-id", "f"])
                .arg("--out-dir")
                .arg(&d)
                .arg("--stage-log")
                .arg(log),
            20,
        );
        assert_eq!(out.status.code(), Some(0), "{log:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches("not a regular file").count(), 1, "{err}");
    }
}

#[test]
fn root_goes_before_or_after_the_subcommand_and_an_empty_root_is_no_oom() {
    let d = scratch("root");
    let empty = d.join("empty-root");
    fs::create_dir_all(&empty).unwrap();
    for args in [
        vec![
            "--root".to_string(),
            empty.display().to_string(),
            "record".into(),
        ],
        vec![
            "record".into(),
            "--root".into(),
            empty.display().to_string(),
        ],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .args(["--count", "2", "--interval", "0", "--run-id", "r"])
            .arg("--out-dir")
            .arg(&d)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let summary = String::from_utf8(out.stdout).unwrap();
        assert!(
            summary.contains("(near-OOM): unknown (no sample had the memory figures)\n"),
            "{summary}"
        );
        assert!(
            summary.contains("unknown: /proc/meminfo could not be read"),
            "{summary}"
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            err.matches("proc/meminfo").count(),
            1,
            "warned once:\n{err}"
        );
    }
}

#[test]
fn a_non_utf8_path_is_a_usage_error_not_another_file() {
    use std::os::unix::ffi::OsStrExt;
    let d = scratch("non-utf8");
    let bad = std::ffi::OsStr::from_bytes(b"out\xff");
    let out = Command::new(BIN)
        .args(["record", "--count", "1", "--out-dir"])
        .arg(bad)
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not valid UTF-8"), "{err}");
    assert_eq!(fs::read_dir(&d).unwrap().count(), 0, "nothing was created");
}

/// Issue 12: in a `--stage-log-dir` where an orchestrator's run log is the
/// newest `*.log` (full of buildkitd's stderr) and an older step log has a
/// `.log.run` marker, the row's stage and context come from the step log.
#[test]
fn stage_log_dir_follows_the_marked_log_and_skips_buildkitd_stderr() {
    let d = scratch("logdir");
    let logs = d.join("logs");
    fs::create_dir_all(&logs).unwrap();
    let mut step = String::from("#9 [media 2/5] RUN cargo build\n#9 3.1 Compiling foo v0.1.0\n");
    for i in 0..45 {
        step.push_str(&format!(
            "time=\"2024-05-01T10:00:{i:02}Z\" level=error msg=\"(*service).Write failed\" error=\"rpc error\"\n"
        ));
    }
    fs::write(logs.join("media.log"), step).unwrap();
    fs::write(logs.join("media.log.run"), "").unwrap();
    // Modified after the step log: the newest *.log, but unmarked.
    let orchestrator = logs.join("orchestrator.log");
    fs::write(
        &orchestrator,
        "[stage publish]\nBuilding images: 3 of 7\nlevel=warning msg=\"x\"\n",
    )
    .unwrap();
    let later = fs::metadata(logs.join("media.log"))
        .unwrap()
        .modified()
        .unwrap()
        + Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(&orchestrator)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let row = |run_id: &str| {
        let out = output_within(
            Command::new(BIN)
                .args([
                    "record",
                    "--count",
                    "1",
                    "--interval",
                    "0",
                    "--run-id",
                    run_id,
                ])
                .arg("--out-dir")
                .arg(&d)
                .arg("--stage-log-dir")
                .arg(&logs),
            20,
        );
        assert!(out.status.success(), "{out:?}");
        let csv = fs::read_to_string(d.join(format!("resources-{run_id}.csv"))).unwrap();
        let last = csv.lines().nth(1).unwrap().to_string();
        let f = fields(&last);
        (f[12].to_string(), f[13].to_string())
    };
    assert_eq!(
        row("m"),
        ("media".into(), "\"Compiling foo v0.1.0\"".into())
    );
    // No marker left: the newest *.log, as the toolchain's older release.
    fs::remove_file(logs.join("media.log.run")).unwrap();
    assert_eq!(
        row("n"),
        ("publish".into(), "\"Building images: 3 of 7\"".into())
    );
}

/// Issue 12: the last row after a `--watch-pid` exit repeated the previous
/// row's epoch. Ten recordings (interval 1 s) of a `sleep` of random
/// length, so that each exit falls at a random moment of a second: in no
/// CSV do two rows share an epoch. What is asserted does not depend on
/// load: a slow machine only changes how many rows there are.
#[test]
fn watch_pid_rows_never_share_an_epoch() {
    let d = scratch("epochs");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64;
    let mut state = seed | 1;
    let mut next_ms = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        100 + (state >> 33) % 1900
    };
    let runs: Vec<_> = (0..10)
        .map(|i| {
            let ms = next_ms();
            let sleeper = Command::new("sleep")
                .arg(format!("{}.{:03}", ms / 1000, ms % 1000))
                .spawn()
                .unwrap();
            let recorder = Command::new(BIN)
                .args(["record", "--interval", "1", "--run-id", &format!("e{i}")])
                .arg("--watch-pid")
                .arg(sleeper.id().to_string())
                .arg("--out-dir")
                .arg(&d)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            (i, ms, sleeper, recorder)
        })
        .collect();
    for (i, ms, mut sleeper, mut recorder) in runs {
        sleeper.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = recorder.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "run {i} did not stop");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            status.success(),
            "run {i} (sleep {ms} ms, seed {seed}): {status:?}"
        );
        let csv = fs::read_to_string(d.join(format!("resources-e{i}.csv"))).unwrap();
        let epochs: Vec<u64> = csv
            .lines()
            .skip(1)
            .map(|l| fields(l)[0].parse().unwrap())
            .collect();
        assert!(!epochs.is_empty(), "run {i}: no rows");
        let distinct: std::collections::BTreeSet<u64> = epochs.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            epochs.len(),
            "run {i} (sleep {ms} ms, seed {seed}): epochs {epochs:?} repeat"
        );
    }
}
