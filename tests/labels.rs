//! Issue 33, item 4, end to end: headroom recording inside a memory cgroup
//! the test makes (a container, by its 32 MiB limit) says which figures
//! are the host's, and counts the container's own OOM kills apart from
//! the host's.
//!
//! - `an_idle_recording_in_a_container_labels_load_and_cpu_as_the_hosts`:
//!   `record` inside the cgroup: `PEAK LOAD ... PEAK CPU` ends with the
//!   label, every row has `cg_mem_limit_mb` 32 and `cg_oom_kills` 0, and
//!   `summarize` of the CSV says the same.
//! - `a_kill_in_the_container_is_its_own_and_a_kill_elsewhere_is_not`:
//!   while `record` runs inside one 32 MiB cgroup, a process there grows
//!   past the limit and is OOM-killed, then one in another 32 MiB cgroup:
//!   `cg_oom_kills` ends at exactly 1 (the test's own kill), the host's
//!   `oom_kills` at 2 or more (other work on the host may add kills, never
//!   remove them), and the summary's `kernel OOM-kill events:` gives the
//!   container's 1 with the host's beside it, from `record` and from
//!   `summarize` alike.
//! - `run_in_the_container_counts_its_builds_kill_as_the_containers`:
//!   `run` inside the 32 MiB cgroup puts CMD in a cgroup of its own below
//!   it, where CMD is OOM-killed: the container's count is 1 on v1 too,
//!   whose `memory.oom_control` does not pass a child's kill up.
//!
//! Needs root and a writable memory cgroup: `#[ignore]`d in a plain
//! `cargo test`; `ci/test` runs them in its `oom` stage, one at a time.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{BIN, Cgroup, cgroup_oom_kills, scratch, sh_in_cgroup};

/// The label after `PEAK CPU` in a container.
const HOST_LOAD_CPU: &str = "(both the host's: work beside this container counts too)";

/// The fields of column `name` of `csv`, row by row.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|h| *h == name).expect(name);
    lines
        .map(|l| l.split(',').nth(i).unwrap_or("").to_string())
        .collect()
}

/// The summary's line that starts with `prefix`.
fn line<'s>(summary: &'s str, prefix: &str) -> &'s str {
    summary
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in:\n{summary}"))
}

/// `headroom summarize CSV`'s text.
fn summarize(csv: &Path) -> String {
    let out = Command::new(BIN)
        .arg("summarize")
        .arg(csv)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn an_idle_recording_in_a_container_labels_load_and_cpu_as_the_hosts() {
    let cg =
        Cgroup::create("labels-idle", 32 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("labels-idle");
    let script = format!(
        "exec {BIN} record --count 3 --interval 0.2 --run-id idle --out-dir {}",
        d.display()
    );
    let out = sh_in_cgroup(&cg, &d, &script, 60);
    assert!(out.status.success(), "{out:?}");
    let summary = String::from_utf8(out.stdout).unwrap();
    let load = line(&summary, "PEAK LOAD: ");
    assert!(
        load.contains("   PEAK CPU: ") && load.ends_with(&format!("%  {HOST_LOAD_CPU}")),
        "{summary}"
    );
    let csv_path = d.join("resources-idle.csv");
    let csv = fs::read_to_string(&csv_path).unwrap();
    assert_eq!(column(&csv, "cg_mem_limit_mb"), ["32", "32", "32"], "{csv}");
    assert_eq!(column(&csv, "cg_oom_kills"), ["0", "0", "0"], "{csv}");
    assert!(
        line(&summary, "kernel OOM-kill events: ")
            .starts_with("kernel OOM-kill events: 0  (this container's: "),
        "{summary}"
    );
    // The summary is written from the CSV: summarize says the same.
    let again = summarize(&csv_path);
    for prefix in ["PEAK LOAD: ", "kernel OOM-kill events: "] {
        assert_eq!(line(&again, prefix), line(&summary, prefix), "{again}");
    }
}

/// Runs a process in `cg` that grows past its limit (tail holds a
/// newline-free stream whole) and waits until the kernel has killed it.
/// One process beside its shell: with `head -c 200M /dev/zero |
/// tail`, a charge made while tail's memory was being reaped took a
/// second victim (head, the shell, or the recording beside it) now and
/// then, and the count was 2.
fn hog_in(cg: &Cgroup, d: &Path) {
    let out = sh_in_cgroup(cg, d, "tail /dev/zero >/dev/null", 60);
    assert!(!out.status.success(), "the hog was killed: {out:?}");
    assert_eq!(cgroup_oom_kills(cg), 1, "one kill in {}", cg.name());
}

/// Rows in the CSV at `p` so far.
fn rows(p: &Path) -> usize {
    fs::read_to_string(p).map_or(0, |t| t.lines().count().saturating_sub(1))
}

/// Waits until the CSV at `p` has `n` rows (a minute at most).
fn wait_rows(p: &Path, n: usize) {
    for _ in 0..3000 {
        if rows(p) >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} never reached {n} rows", p.display());
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn a_kill_in_the_container_is_its_own_and_a_kill_elsewhere_is_not() {
    if common::ignored_here(
        2,
        "a_kill_in_the_container_is_its_own_and_a_kill_elsewhere_is_not",
    ) {
        return;
    }
    let inside =
        Cgroup::create("labels-in", 32 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let outside =
        Cgroup::create("labels-out", 32 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("labels-oom");
    let csv_path = d.join("resources-oom.csv");
    // headroom joins the limited cgroup, then records until SIGINT, kept
    // out of the OOM killer's choice as a monitor is (systemd's
    // OOMScoreAdjust=-1000): the test counts the hog's kill, not its own.
    let script = format!(
        "echo $$ > {procs}; echo -1000 > /proc/self/oom_score_adj; exec {BIN} record --interval 0.2 --run-id oom --out-dir {d}",
        procs = inside.dir.join("cgroup.procs").display(),
        d = d.display(),
    );
    let rec = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = rec.id().to_string();
    let watchdog = pid.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(120));
        let _ = Command::new("kill").args(["-9", &watchdog]).status();
    });
    wait_rows(&csv_path, 2);
    hog_in(&inside, &d);
    hog_in(&outside, &d);
    // Two more rows see both counters after the kills.
    let seen = rows(&csv_path);
    wait_rows(&csv_path, seen + 2);
    let _ = Command::new("kill").args(["-INT", &pid]).status();
    let out = rec.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let csv = fs::read_to_string(&csv_path).unwrap();
    let own = column(&csv, "cg_oom_kills");
    assert_eq!(own.last().map(String::as_str), Some("1"), "{csv}");
    let host: u64 = column(&csv, "oom_kills").last().unwrap().parse().unwrap();
    assert!(host >= 2, "the host saw both kills:\n{csv}");
    let summary = String::from_utf8(out.stdout).unwrap();
    let oom = line(&summary, "kernel OOM-kill events: ");
    let host_said: u64 = oom
        .strip_prefix("kernel OOM-kill events: 1  (this container's: its memory cgroup's oom_kill; the host's: ")
        .and_then(|r| r.strip_suffix(')'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(host_said >= 2, "{summary}");
    assert_eq!(line(&summarize(&csv_path), "kernel OOM-kill events: "), oom);
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn run_in_the_container_counts_its_builds_kill_as_the_containers() {
    let cg =
        Cgroup::create("labels-run", 32 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("labels-run");
    let script = format!(
        "echo -1000 > /proc/self/oom_score_adj; exec {BIN} run --interval 0.2 --run-id run --out-dir {} -- \
         sh -c 'echo 0 > /proc/self/oom_score_adj; tail /dev/zero >/dev/null; sleep 0.5'",
        d.display()
    );
    let out = sh_in_cgroup(&cg, &d, &script, 60);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let summary = String::from_utf8(out.stderr).unwrap();
    assert!(
        summary.contains("\nOOM kills in this build: 1 (its cgroup's"),
        "run made the build a cgroup of its own:\n{summary}"
    );
    assert!(
        line(&summary, "kernel OOM-kill events: ")
            .starts_with("kernel OOM-kill events: 1  (this container's: "),
        "{summary}"
    );
    let csv = fs::read_to_string(d.join("resources-run.csv")).unwrap();
    let own = column(&csv, "cg_oom_kills");
    assert_eq!(own.last().map(String::as_str), Some("1"), "{csv}");
}
