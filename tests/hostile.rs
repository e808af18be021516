//! Hostile inputs, end to end through the built binary: /proc files that
//! fail with real kernel errors, processes vanishing mid-scan, build logs
//! made to break a tail reader, and `summarize` on files no recorder wrote.
//!
//! Every case must end the same way: whole CSV rows, an empty (or the
//! compatible 0) field where a source failed, at most one warning per
//! source, and no crash.

/// Fields of a full row (no jobserver columns).
const FULL_WIDTH: usize = headroom::tick::row::columns::CORE_COLUMNS.len()
    + headroom::tick::row::columns::EXT_COLUMNS.len();

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

mod common;
use common::{BIN, scratch};

const WIDTH: usize = FULL_WIDTH;

/// Splits one CSV row, honouring quotes (`""` inside quotes is a quote).
fn split_row(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    assert!(!quoted, "unterminated quote in {line:?}");
    out
}

/// The data rows of a recorded CSV, each checked to be whole: the header,
/// then rows of exactly [`WIDTH`] fields, no control bytes, newline-ended.
fn rows(csv_path: &Path) -> Vec<Vec<String>> {
    let bytes = fs::read(csv_path).unwrap();
    let text = String::from_utf8(bytes).expect("the CSV is UTF-8 whatever the inputs were");
    assert!(text.ends_with('\n'), "last row is whole");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "no control characters reach the CSV"
    );
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("epoch,iso,"));
    lines
        .map(|l| {
            let f = split_row(l);
            assert_eq!(f.len(), WIDTH, "row {l:?}");
            f
        })
        .collect()
}

fn record(root: Option<&Path>, d: &Path, extra: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    if let Some(r) = root {
        c.arg("--root").arg(r);
    }
    c.args(["record", "--interval", "0", "--run-id", "h", "--out-dir"])
        .arg(d)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A copy of a captured board root to break files in.
fn board_copy(d: &Path) -> PathBuf {
    let root = d.join("root");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/x86_64-vm-2c-24g");
    let ok = Command::new("cp")
        .args(["-R", src])
        .arg(&root)
        .status()
        .unwrap();
    assert!(ok.success());
    root
}

/// A sysfs file whose read(2) fails with EOPNOTSUPP on this machine (a
/// virtio NIC's `phys_port_name`), as /proc/pressure/* does on a kernel
/// booted with psi=0.
fn eopnotsupp_file() -> Option<PathBuf> {
    let devs: Vec<PathBuf> = fs::read_dir("/sys/class/net")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    devs.iter()
        .flat_map(|dev| ["phys_port_name", "phys_port_id", "phys_switch_id"].map(|a| dev.join(a)))
        .find(|p| matches!(fs::read(p), Err(e) if e.raw_os_error() == Some(95)))
}

fn swap_in_symlink(at: &Path, to: &Path) {
    let _ = fs::remove_file(at);
    std::os::unix::fs::symlink(to, at).unwrap();
}

#[test]
fn proc_files_failing_with_eio_eisdir_eopnotsupp_warn_once_and_leave_fields_empty() {
    let d = scratch("errno");
    let root = board_copy(&d);
    // Real kernel errors from real files: reading /proc/self/mem at
    // offset 0 fails with EIO; a directory fails with EISDIR.
    swap_in_symlink(&root.join("proc/meminfo"), Path::new("/proc/self/mem"));
    fs::remove_file(root.join("proc/loadavg")).unwrap();
    fs::create_dir(root.join("proc/loadavg")).unwrap();
    let psi_errno = match eopnotsupp_file() {
        Some(f) => {
            swap_in_symlink(&root.join("proc/pressure/memory"), &f);
            "EOPNOTSUPP"
        }
        None => {
            eprintln!("no EOPNOTSUPP file here: PSI gets EIO instead");
            swap_in_symlink(
                &root.join("proc/pressure/memory"),
                Path::new("/proc/self/mem"),
            );
            "EIO"
        }
    };
    let prom = d.join("h.prom");
    let out = record(
        Some(&root),
        &d,
        &["--count", "5", "--prom", prom.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    for (file, errno) in [
        ("proc/meminfo", "EIO"),
        ("proc/loadavg", "EISDIR"),
        ("proc/pressure/memory", psi_errno),
    ] {
        let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(file)).collect();
        assert_eq!(lines.len(), 1, "one warning for {file}:\n{stderr}");
        assert!(
            lines[0].contains(errno),
            "{file} names {errno}: {}",
            lines[0]
        );
    }
    let rows = rows(&d.join("resources-h.csv"));
    assert_eq!(rows.len(), 5);
    for r in &rows {
        // What could not be read is empty, in the compatible core too
        // (issue 33): mem_used_mb, mem_avail_mb, mem_pct, swap_used_mb.
        assert_eq!(&r[5..9], ["", "", "", ""], "{r:?}");
        assert_eq!(r[3], "", "load1");
        assert_eq!(r[14], "", "swap_total_mb comes from meminfo");
        assert_eq!(r[22], "", "psi");
        // What still worked is still there: the process scan.
        assert_eq!(r[24], "cc1", "{r:?}");
    }
    // An unreadable meminfo is not a host at 0 MB available.
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(
        summary.contains("(near-OOM): unknown (no sample had the memory figures)\n"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "MIN MEMORY AVAILABLE (closest to OOM):\n  unknown: /proc/meminfo could not be read"
        ),
        "{summary}"
    );
    // No load was read: the peak is `-`, not 0 (issue 33).
    assert!(
        summary.contains("\nPEAK LOAD: -  at - (stage=-)   PEAK CPU: "),
        "{summary}"
    );
    // summarize and its JSON read the empty fields back as unknown.
    let csv = d.join("resources-h.csv");
    let again = Command::new(BIN)
        .arg("summarize")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    let again = String::from_utf8(again.stdout).unwrap();
    assert!(
        again.contains("(near-OOM): unknown (no sample had the memory figures)\n"),
        "{again}"
    );
    assert!(again.contains("PEAK LOAD: -  at - (stage=-)"), "{again}");
    let json = Command::new(BIN)
        .args(["summarize", "--json"])
        .arg(&csv)
        .output()
        .unwrap();
    let json = String::from_utf8(json.stdout).unwrap();
    for null in [
        "\"peak_mem\":null",
        "\"min_mem_avail\":null",
        "\"peak_load\":null",
        "\"samples\":null}",
    ] {
        assert!(json.contains(null), "{null} in {json}");
    }
    // The exposition leaves out what was not read, rather than give 0.
    let prom = fs::read_to_string(&prom).unwrap();
    for family in ["headroom_memory_available_bytes ", "headroom_load1 "] {
        assert!(
            !prom.lines().any(|l| l.starts_with(family)),
            "{family} in:\n{prom}"
        );
    }
}

#[test]
fn processes_vanishing_mid_scan_are_skipped_without_a_word() {
    let d = scratch("vanish");
    // Two shells starting and reaping a process as fast as they can:
    // /proc/PID entries appear and vanish between getdents and read.
    let storms: Vec<_> = (0..2)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do /bin/true; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let out = record(None, &d, &["--count", "300", "--compilers", "true,sh"]);
    for mut s in storms {
        let _ = s.kill();
        let _ = s.wait();
    }
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("proc/<pid>"), "{stderr}");
    let rows = rows(&d.join("resources-h.csv"));
    assert_eq!(rows.len(), 300);
    // The storm was seen: some tick counted its shells as compilers.
    assert!(rows.iter().any(|r| r[11].parse::<u32>().unwrap() >= 2));
}

fn fixture_23() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/23-build-log-hostile-bytes/build.log")
}

#[test]
fn fixture_23_latin1_ansi_progress_bars_and_a_cut_utf8_tail() {
    let d = scratch("f23");
    let log = fixture_23();
    let out = record(
        None,
        &d,
        &["--count", "2", "--stage-log", log.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for r in rows(&d.join("resources-h.csv")) {
        // The last marker line, its cut `…` shown as one U+FFFD (or dropped).
        assert!(
            r[13].starts_with("[ 41%] Building CXX object src/CMakeFiles/core.dir/ast.cpp.o"),
            "{r:?}"
        );
        assert!(r[13].chars().count() <= 200, "context is bounded");
    }
}

/// Records two rows following `log`; each must be whole, with a bounded
/// context.
fn record_two_rows_of(d: &Path, log: &Path) {
    let out = record(
        None,
        d,
        &["--count", "2", "--stage-log", log.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let rows = rows(&d.join("resources-h.csv"));
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(
            r[13].chars().count() <= 200,
            "context is bounded: {}",
            r[13].len()
        );
    }
}

#[test]
fn a_single_10_mb_line_and_binary_data_as_the_log() {
    let d = scratch("bigline");
    let log = d.join("build.log");
    let mut f = fs::File::create(&log).unwrap();
    f.write_all(b"[ 10%] Building CXX object before.o\n")
        .unwrap();
    f.write_all(&vec![b'x'; 10 << 20]).unwrap();
    drop(f);
    record_two_rows_of(&d, &log);

    // 1 MiB of noise (every byte value, NULs and ESCs included).
    let mut x: u32 = 0x2545_f491;
    let noise: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect();
    fs::write(&log, &noise).unwrap();
    record_two_rows_of(&d, &log);
}

#[test]
fn a_log_truncated_then_replaced_mid_run_is_followed() {
    let d = scratch("rotate");
    let log = d.join("build.log");
    fs::write(&log, "[ 10%] Building CXX object first.o\n").unwrap();
    let rec = Command::new(BIN)
        .args([
            "record",
            "--interval",
            "0.1",
            "--count",
            "30",
            "--run-id",
            "h",
        ])
        .arg("--out-dir")
        .arg(&d)
        .arg("--stage-log")
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(900));
    // Truncated in place (O_TRUNC), shorter than before.
    fs::write(&log, "[ 20%] Building CXX object b.o\n").unwrap();
    std::thread::sleep(Duration::from_millis(900));
    // Replaced: a new file renamed over the old name.
    let new = d.join("build.log.new");
    fs::write(&new, "[ 30%] Linking CXX executable third\n").unwrap();
    fs::rename(&new, &log).unwrap();
    let out = rec.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let contexts: Vec<String> = rows(&d.join("resources-h.csv"))
        .into_iter()
        .map(|r| r[13].clone())
        .collect();
    let pos = |s: &str| contexts.iter().position(|c| c.contains(s));
    let (a, b, c) = (pos("first.o"), pos("b.o"), pos("third"));
    assert!(a.is_some() && b.is_some() && c.is_some(), "{contexts:#?}");
    assert!(a < b && b < c, "{contexts:#?}");
    assert!(contexts.last().unwrap().contains("third"), "{contexts:#?}");
}

#[test]
fn a_log_dir_of_10000_files_takes_the_newest() {
    let d = scratch("logdir");
    let logs = d.join("logs");
    fs::create_dir(&logs).unwrap();
    let old = SystemTime::now() - Duration::from_secs(3600);
    for i in 0..10_000 {
        let p = logs.join(format!("step-{i:05}.log"));
        let f = fs::File::create(&p).unwrap();
        f.set_modified(old).unwrap();
    }
    fs::write(
        logs.join("step-04242.log"),
        "[ 77%] Building CXX object newest.o\n",
    )
    .unwrap();
    fs::write(
        logs.join("notes.txt"),
        "[ 99%] Building CXX object not-a-log.o\n",
    )
    .unwrap();
    let out = record(
        None,
        &d,
        &["--count", "3", "--stage-log-dir", logs.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for r in rows(&d.join("resources-h.csv")) {
        assert!(r[13].contains("newest.o"), "{r:?}");
    }
}

/// A full-format row for `summarize`: epoch, a mem_avail_mb, a mem_used_mb.
fn synthetic_row(epoch: u64, used: u64, avail: u64) -> String {
    common::full_width(&format!(
        "{epoch},2026-11-30T00:00:00Z,{e},1.50,90,{used},{avail},50,0,70,22,4,build,\"[ 50%] Building CXX object x.o\",0,,,70000,1,70000,0,,0.00,900,cc1plus,900,cc1plus,0.00,0.00,0,0,1.00,2.00,10,55.0,80",
        e = epoch - 1_700_000_000,
    ))
}

#[test]
fn summarize_a_million_rows_finds_the_one_planted_minimum() {
    let d = scratch("million");
    let csv = d.join("m.csv");
    let mut f = std::io::BufWriter::new(fs::File::create(&csv).unwrap());
    let header = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/x86_64-vm-2c-24g/expected/record.csv"),
    )
    .unwrap();
    writeln!(f, "{}", header.lines().next().unwrap()).unwrap();
    for i in 0..1_000_000u64 {
        let (used, avail) = match i {
            777_777 => (20_000, 123),
            _ => (10_000 + i % 1000, 5_000 + i % 1000),
        };
        f.write_all(synthetic_row(1_700_000_000 + i, used, avail).as_bytes())
            .unwrap();
    }
    drop(f);
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("samples=1000000  duration=16666m39s\n"), "{s}");
    assert!(
        s.contains("  20000 MB used  (only 123 MB available)"),
        "{s}"
    );
    assert!(s.contains("  123 MB free  at "), "{s}");
    assert!(!s.contains("malformed"), "{s}");
}

#[test]
fn summarize_a_file_cut_mid_row_and_pure_garbage() {
    let d = scratch("cut");
    let full = fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.csv"
    ))
    .unwrap();
    // Cut in the middle of the last row: the rows before it all count.
    let cut = &full[..full.len() - 20];
    fs::write(d.join("c.csv"), cut).unwrap();
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(d.join("c.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("samples=17 "), "{s}");
    assert!(s.contains("skipped 1 malformed row\n"), "{s}");

    // Not a CSV at all: one line, exit 1, no summary file.
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    fs::write(d.join("g.csv"), noise).unwrap();
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(d.join("g.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a resource CSV"), "{err}");
    assert!(!d.join("g.summary.txt").exists());
}

/// A wanted /proc/vmstat key whose value is not a decimal makes the file
/// unparsable: its fields (oom_kills and the four thrash rates) stay empty
/// and that is said once, not in silence.
#[test]
fn a_vmstat_value_that_is_not_a_number_warns_once() {
    let d = scratch("vmstat-bad-value");
    let root = board_copy(&d);
    let vm = root.join("proc/vmstat");
    let text = fs::read_to_string(&vm).unwrap();
    assert!(text.lines().any(|l| l.starts_with("pswpin ")));
    let bad: String = text
        .lines()
        .map(|l| {
            if l.starts_with("pswpin ") {
                "pswpin hot"
            } else {
                l
            }
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    fs::write(&vm, bad).unwrap();
    let out = record(Some(&root), &d, &["--count", "3"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("proc/vmstat"))
        .collect();
    assert_eq!(lines.len(), 1, "one warning for proc/vmstat:\n{stderr}");
    assert!(lines[0].contains("unexpected format"), "{}", lines[0]);
    for r in rows(&d.join("resources-h.csv")) {
        assert_eq!(r[20], "", "oom_kills: {r:?}");
        assert_eq!(r[27], "", "swap_in_mibps: {r:?}");
    }
}

/// Two CPU sensors: `status` names the one whose reading it shows (the
/// hottest), not the first found; and when the first fails to read, the
/// one that did.
#[test]
fn status_names_the_sensor_that_gave_the_temperature() {
    let d = scratch("two-sensors");
    let root = board_copy(&d);
    let put = |rel: &str, text: &str| {
        let f = root.join(rel);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(f, text).unwrap();
    };
    put("sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
    put("sys/class/thermal/thermal_zone0/temp", "50000\n");
    put("sys/class/hwmon/hwmon0/name", "coretemp\n");
    put("sys/class/hwmon/hwmon0/temp1_input", "95000\n");
    let status = || {
        let out = Command::new(BIN)
            .args(["status", "--root"])
            .arg(&root)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().find(|l| l.starts_with("cpu temp"));
        line.unwrap_or_default().to_owned()
    };
    assert_eq!(status(), "cpu temp    95.0 °C (coretemp)");
    put("sys/class/hwmon/hwmon0/temp1_input", "45000\n");
    assert_eq!(status(), "cpu temp    50.0 °C (x86_pkg_temp)");
    put("sys/class/thermal/thermal_zone0/temp", "garbage\n");
    assert_eq!(status(), "cpu temp    45.0 °C (coretemp)");
    // Sensors found, none read: a failure, not "no sensor".
    put("sys/class/hwmon/hwmon0/temp1_input", "garbage\n");
    assert_eq!(
        status(),
        "cpu temp    not available (the CPU sensor gave no reading: a failed read, or a value that means none)"
    );
}
