//! `run --jobserver` pauses a job rather than let the build be OOM-killed.
//! As root in a memory cgroup of 400 MiB without swap: eight targets
//! declared at `--peak-mb 100` that really grow to 180 MiB at 40 MiB/s,
//! each starting its growth after 0, 0.5 or 1 s. The governor admits three
//! at once (3 × 100 MiB fit); three at 180 do not. With `--no-pause` the
//! kernel kills; by default the later jobs are stopped while the first
//! grows, and all eight end.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{BIN, Cgroup};

/// A Makefile of eight targets: each waits 0, 0.5 or 1 s, then grows by
/// 10 MiB every 0.25 s to 180 MiB (written, so resident), logging `start`
/// and `end`.
fn makefile(dir: &Path) {
    let grow = "import sys, time; time.sleep(float(sys.argv[1])); b = bytearray(); [(b.extend(bytes(10 << 20)), time.sleep(0.25)) for _ in range(18)]";
    let mut text = String::from("T := t0 t1 t2 t3 t4 t5 t6 t7\nall: $(T)\n");
    for i in 0..8 {
        let delay = [0.0, 0.5, 1.0][i % 3];
        text.push_str(&format!(
            "t{i}:\n\t@echo start $@ >> log && python3 -c '{grow}' {delay} && echo end $@ >> log\n"
        ));
    }
    fs::write(dir.join("Makefile"), text).unwrap();
}

/// `run --jobserver --max-jobs 4 --peak-mb 100 EXTRA -- make -k` in a new
/// 400 MiB cgroup; its directory and output.
fn build(tag: &str, extra: &str) -> (Cgroup, PathBuf, Output) {
    build_with(tag, &format!("--peak-mb 100 {extra}"), makefile)
}

/// [`followed`] of the Makefile `write` makes, `extra` naming the peak.
fn build_with(tag: &str, extra: &str, write: fn(&Path)) -> (Cgroup, PathBuf, Output) {
    let cg = Cgroup::create(tag, 400 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pause-{tag}"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    write(&d);
    let script = format!(
        "exec {BIN} run --jobserver --max-jobs 4 {extra} --run-id p --out-dir out -- make -k"
    );
    let out = common::sh_in_cgroup(&cg, &d, &script, 240);
    (cg, d, out)
}

/// The build's own OOM kills, from its summary.
fn build_oom_kills(stderr: &str) -> u64 {
    common::build_oom_line(stderr)
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no build OOM line: {stderr}"))
}

fn ended(dir: &Path) -> usize {
    let log = fs::read_to_string(dir.join("log")).unwrap_or_default();
    log.lines().filter(|l| l.starts_with("end ")).count()
}

/// The largest `jobs_paused` of the CSV.
fn most_paused(dir: &Path) -> u32 {
    let csv = fs::read_to_string(dir.join("out/resources-p.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "jobs_paused").unwrap();
    lines
        .filter_map(|l| l.split(',').nth(at)?.parse().ok())
        .max()
        .unwrap_or(0)
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn jobs_that_outgrow_their_estimate_are_oom_killed_without_pausing() {
    let (_cg, d, out) = build("nopause", "--no-pause");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        build_oom_kills(&stderr) > 0 || ended(&d) < 8,
        "no kill: {stderr}"
    );
    assert_eq!(most_paused(&d), 0, "{stderr}");
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn jobs_that_outgrow_their_estimate_are_paused_and_all_end() {
    let (_cg, d, out) = build("pause", "--explain");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(build_oom_kills(&stderr), 0, "{stderr}");
    assert_eq!(ended(&d), 8, "{stderr}");
    // It paused (the CSV, --explain and the summary say so) and continued.
    assert!(most_paused(&d) >= 1, "{stderr}");
    assert!(
        stderr.contains("headroom: jobserver: paused job "),
        "{stderr}"
    );
    assert!(
        stderr.contains("headroom: jobserver: continued job "),
        "{stderr}"
    );
    assert!(stderr.contains("  paused, not killed: "), "{stderr}");
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn a_recursive_make_s_jobs_are_paused_not_the_sub_make() {
    // `all: ; $(MAKE) -f sub.mk`: the top make has one child, the sub-make,
    // whose eight jobs are the ones to pause.
    fn recursive(d: &Path) {
        makefile(d);
        fs::rename(d.join("Makefile"), d.join("sub.mk")).unwrap();
        fs::write(d.join("Makefile"), "all:\n\t$(MAKE) -f sub.mk\n").unwrap();
    }
    let (_cg, d, out) = build_with("recursive", "--peak-mb 100 --explain", recursive);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(build_oom_kills(&stderr), 0, "{stderr}");
    assert_eq!(ended(&d), 8, "{stderr}");
    assert!(most_paused(&d) >= 1, "{stderr}");
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn a_paused_job_holding_a_lock_the_others_wait_on_is_continued() {
    // h takes a lock and grows to 250 MiB; w0..w2 start first, then wait
    // for the lock. h is paused (started last); the waiters make no
    // progress: all paused jobs go on, h ends and so do they.
    fn locked(d: &Path) {
        let grow = |mib: u32| {
            format!(
                "python3 -c 'import time; b = bytearray(); [(b.extend(bytes(10 << 20)), time.sleep(0.1)) for _ in range({})]'",
                mib / 10
            )
        };
        let mut text = String::from("all: w0 w1 w2 h\n");
        for w in ["w0", "w1", "w2"] {
            text.push_str(&format!(
                "{w}:\n\t@sleep 1; flock L {} && echo end $@ >> log\n",
                grow(20)
            ));
        }
        text.push_str(&format!(
            "h:\n\t@sleep 0.5; flock L {} && echo end $@ >> log\n",
            grow(250)
        ));
        fs::write(d.join("Makefile"), text).unwrap();
    }
    // At 80 MiB a job, all four start.
    let (_cg, d, out) = build_with("locked", "--peak-mb 80 --explain", locked);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(ended(&d), 4, "{stderr}");
    assert!(stderr.contains("made no progress"), "{stderr}");
}
