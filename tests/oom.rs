//! Real OOM kills, recorded: memory hogs in a child memory cgroup with a
//! 64 MiB limit are killed by the kernel, and the CSV and summary say so —
//! one kill; a storm of five in a row recorded from outside, each with its
//! row and step; and a storm with `headroom run` itself inside the cgroup,
//! which must outlive it and give CMD the OOM score it started with.
//!
//! Needs root and a writable memory cgroup (v1 `memory.limit_in_bytes` or
//! v2 `memory.max`), so it is `#[ignore]`d in a plain `cargo test`;
//! `ci/test` runs them one at a time (the kernel's oom_kill counter is
//! host-wide) where it can and reports them as skipped, with the
//! reason, where it cannot.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{Cgroup, cgroup_oom_kills};

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

/// A scratch directory for one test, emptied.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `sh -c script` as the build and records it from outside, every
/// 0.2 s, following `log`, until it exits, with `--prom <run_id>.prom`;
/// returns headroom's output.
fn record_build(d: &Path, run_id: &str, log: &Path, script: &str) -> std::process::Output {
    let mut build = Command::new("sh").args(["-c", script]).spawn().unwrap();
    let rec = Command::new(BIN)
        .args(["record", "--interval", "0.2", "--run-id", run_id])
        .arg("--out-dir")
        .arg(d)
        .arg("--stage-log")
        .arg(log)
        .arg("--watch-pid")
        .arg(build.id().to_string())
        .arg("--prom")
        .arg(d.join(format!("{run_id}.prom")))
        .output()
        .unwrap();
    build.wait().unwrap();
    assert!(rec.status.success(), "{rec:?}");
    rec
}

/// A build of `hogs` steps in a row, each logging its compile line and
/// then growing past the cgroup's limit, 0.8 s apart (four ticks at 0.2 s,
/// so each kill gets a row of its own). Joins `join` first when given;
/// writes its own OOM score adjustment to `report`.
fn storm_script(join: Option<&Cgroup>, log: &Path, hogs: u32, report: &Path) -> String {
    let join = join.map_or(String::new(), |cg| {
        format!("echo $$ > {}; ", cg.dir.join("cgroup.procs").display())
    });
    format!(
        "{join}cat /proc/self/oom_score_adj > {report}; \
         for i in $(seq 1 {hogs}); do \
           echo \"[ $((i * 10))%] Building CXX object hog$i.o\" >> {log}; \
           head -c 200M /dev/zero | tail >/dev/null; sleep 0.8; \
         done",
        log = log.display(),
        report = report.display(),
    )
}

fn kills_column(csv: &str) -> Vec<u64> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').nth(20).unwrap().parse().unwrap())
        .collect()
}

/// Whether this process may lower an OOM score adjustment (root with
/// CAP_SYS_RESOURCE; a sandbox's root may lack it).
fn may_lower_oom_score_adj() -> bool {
    Command::new("sh")
        .args(["-c", "echo -1 > /proc/self/oom_score_adj"])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn an_oom_storm_is_recorded_kill_by_kill_from_outside() {
    const HOGS: u32 = 5;
    let cg = Cgroup::create("storm", 64 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("oom-storm");
    let log = d.join("build.log");
    fs::write(&log, "[stage storm]\n").unwrap();
    let script = storm_script(Some(&cg), &log, HOGS, &d.join("adj"));
    let rec = record_build(&d, "storm", &log, &script);
    let kills = cgroup_oom_kills(&cg);
    assert_eq!(kills, u64::from(HOGS), "every hog was killed by the kernel");
    let csv = fs::read_to_string(d.join("resources-storm.csv")).unwrap();
    let col = kills_column(&csv);
    // Other processes on the host could add kills, never remove them.
    assert!(
        col.last().copied().unwrap_or(0) >= kills,
        "oom_kills:\n{csv}"
    );
    assert!(
        col.windows(2).all(|w| w[0] <= w[1]),
        "a counter only rises:\n{csv}"
    );
    let summary = String::from_utf8(rec.stdout).unwrap();
    for i in 1..=HOGS {
        assert!(
            summary.contains(&format!(
                "context=[ {}%] Building CXX object hog{i}.o\n",
                i * 10
            )),
            "kill {i} has its row with its step:\n{summary}"
        );
    }
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn headroom_run_inside_the_storm_survives_and_hands_the_build_its_oom_score() {
    const HOGS: u32 = 3;
    let cg =
        Cgroup::create("storm-run", 64 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("oom-storm-run");
    let log = d.join("build.log");
    fs::write(&log, "").unwrap();
    let adj = d.join("adj");
    // The build records headroom's score (its parent), then storms.
    let storm = d.join("storm.sh");
    fs::write(
        &storm,
        format!(
            "cat /proc/$PPID/oom_score_adj > {}\n{}\n",
            d.join("witness-adj").display(),
            storm_script(None, &log, HOGS, &adj)
        ),
    )
    .unwrap();
    // headroom itself joins the cgroup, so it is an OOM candidate too.
    let script = format!(
        "echo $$ > {procs}; exec {BIN} run --interval 0.2 --run-id storm --out-dir {d} \
         --stage-log {log} -- sh {storm}",
        procs = cg.dir.join("cgroup.procs").display(),
        d = d.display(),
        log = log.display(),
        storm = storm.display(),
    );
    let before = fs::read_to_string("/proc/self/oom_score_adj").unwrap();
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    // The build's last hog was killed: its loop ends with `sleep`, status 0.
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("\nRUN: sh "),
        "headroom lived to report:\n{stderr}"
    );
    for i in 1..=HOGS {
        assert!(
            stderr.contains(&format!("Building CXX object hog{i}.o\n")),
            "kill {i} has its row:\n{stderr}"
        );
    }
    assert_eq!(
        cgroup_oom_kills(&cg),
        u64::from(HOGS),
        "only the hogs were killed"
    );
    // CMD runs with the score headroom started with, whatever headroom took.
    assert_eq!(fs::read_to_string(&adj).unwrap(), before);
    let witness = fs::read_to_string(d.join("witness-adj")).unwrap();
    if may_lower_oom_score_adj() {
        assert_eq!(witness, "-900\n", "headroom lowers its own score");
    } else {
        eprintln!("oom_score_adj -900: not checked (no CAP_SYS_RESOURCE here)");
        assert_eq!(witness, before, "a refused lowering changes nothing");
    }
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn an_oom_kill_in_a_limited_cgroup_is_recorded_with_its_context() {
    let cg = Cgroup::create("oom", 64 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("oom");
    let log = d.join("build.log");
    fs::write(&log, "[stage hog]\n").unwrap();
    // The "build": joins the limited cgroup, logs a compile line, then a
    // 200 MiB hog (tail keeps a newline-free stream whole) that the kernel
    // must kill.
    let script = format!(
        "echo $$ > {procs}; echo '[ 50%] Building CXX object hog.o' >> {log}; \
         head -c 200M /dev/zero | tail >/dev/null; sleep 1",
        procs = cg.dir.join("cgroup.procs").display(),
        log = log.display()
    );
    let rec = record_build(&d, "oom", &log, &script);
    let csv = fs::read_to_string(d.join("resources-oom.csv")).unwrap();
    let kills: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(20).unwrap().parse().unwrap())
        .collect();
    assert_eq!(kills.last(), Some(&1), "oom_kills column:\n{csv}");
    let prom = fs::read_to_string(d.join("oom.prom")).unwrap();
    assert!(
        prom.contains("\nheadroom_oom_kills_total{run_id=\"oom\"} 1\n"),
        "{prom}"
    );
    let summary = String::from_utf8(rec.stdout).unwrap();
    assert!(summary.contains("kernel OOM-kill events: 1\n"), "{summary}");
    assert!(
        summary.contains("OOM KILLS (rows where the kernel counter rose):\n  +1 at ")
            && summary.contains("stage=hog  context=[ 50%] Building CXX object hog.o\n"),
        "{summary}"
    );
}
