//! The build and the host (SPEC.md): what headroom says about "the build"
//! comes from the build alone, its cgroup or its process tree, never from
//! another build's compilers on the same host.
//!
//! Every assertion counts what the test made: the memory its own `cc1`
//! holds, the build's own figures. Host-wide figures, which other work on
//! the machine moves, are only ever asserted as "at least".

use std::fs;
use std::os::unix::process::CommandExt;

use rustix::process::{Pid, Signal, kill_process, kill_process_group};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{BIN, host_oom_kills, output_with_pid, scratch, tail_named};

/// Starts `holder` holding `mib` MiB for `secs` seconds (a shell feeding
/// it), waiting until it holds them.
fn hold(holder: &Path, mib: u32, secs: u32) -> Child {
    let script = format!(
        "(head -c {mib}M /dev/zero; sleep {secs}) | {} >/dev/null",
        holder.display()
    );
    // A group of its own, so that the whole pipeline can be stopped.
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while resident_mib_of(holder).is_none_or(|m| m < u64::from(mib)) {
        if start.elapsed() > Duration::from_secs(20) {
            stop_group(&mut child);
            panic!("{} never held {mib} MiB", holder.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// VmRSS, MiB, of the process whose executable is `exe`.
fn resident_mib_of(exe: &Path) -> Option<u64> {
    fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let target = fs::read_link(e.path().join("exe")).ok()?;
        if target != exe {
            return None;
        }
        let status = fs::read_to_string(e.path().join("status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|k| k / 1024)
    })
}

/// The values of column `name` in a CSV's rows.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| l.split(',').nth(i).unwrap_or("").to_string())
        .collect()
}

/// The MB figure of a summary line starting with `head`.
fn mb_after(summary: &str, head: &str) -> Option<u64> {
    let line = summary.lines().find(|l| l.starts_with(head))?;
    line[head.len()..].split_whitespace().next()?.parse().ok()
}

/// Whether `run` may make a cgroup here: root, with a writable v1 memory
/// hierarchy (CI's machines).
fn cgroup_v1_as_root() -> bool {
    rustix_is_root() && Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()
}

/// Whether a process tree's `OOM kills in this build` line says the build
/// had no kill of its own: 0, or `unknown, 0 to N` when the host counted
/// kills during it whose victims could not be placed (other work on a
/// shared machine), counted the way a process tree's are, and ending with
/// why there was no cgroup: `no_cgroup` (any reason when empty).
fn tree_build_had_no_oom_kill(summary: &str, no_cgroup: &str) -> bool {
    let Some(line) = summary
        .lines()
        .find_map(|l| l.strip_prefix("OOM kills in this build: "))
    else {
        return false;
    };
    let host = host_oom_kills(summary).unwrap_or(0);
    let figure = line.starts_with("0 (") || (host > 0 && line.starts_with("unknown, 0 to "));
    let how = [
        "(victims named by the kernel's OOM reports in /dev/kmsg, matched against its processes",
        "(0 of the victims named by the kernel's OOM reports in /dev/kmsg were its processes; ",
        "(the host's OOM-kill counter did not rise during it",
        "(the host counted ",
    ]
    .iter()
    .any(|h| line.contains(h));
    let end = match no_cgroup {
        "" => line.contains("; no cgroup of its own: ") && line.ends_with(')'),
        why => line.ends_with(&format!("; no cgroup of its own: {why})")),
    };
    figure && how && end
}

fn rustix_is_root() -> bool {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|v| v.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Another process named `cc1plus` holds 300 MiB outside while `run`
/// follows a build whose own `cc1` holds 50: PEAK COMPILER RSS, ADVICE, the
/// build columns and `jobs --from` name the build's 50, with a cgroup (where
/// permitted) and as a process tree (`--no-cgroup`).
#[test]
fn another_builds_compiler_is_never_the_builds() {
    let d = scratch("build-not-host");
    let other = tail_named(&d, "cc1plus");
    let mine = tail_named(&d, "cc1");
    let mut outside = hold(&other, 300, 30);
    for (id, extra) in [("cg", None), ("tree", Some("--no-cgroup"))] {
        let script = format!(
            "(head -c 50M /dev/zero; sleep 2) | {} >/dev/null",
            mine.display()
        );
        let mut cmd = Command::new(BIN);
        cmd.args(["run", "--interval", "0.2", "--run-id", id, "--out-dir"])
            .arg(&d);
        cmd.args(extra);
        cmd.args(["--", "sh", "-c", &script]);
        let (pid, out) = output_with_pid(&mut cmd, 60);
        // Its cgroup (when it made one) is gone; only this headroom's are
        // looked for: other runs on the machine make theirs meanwhile.
        assert!(
            own_memory_cgroup()
                .is_none_or(|dir| !dir.join(format!("headroom-{pid}.build")).exists()),
            "{id}: headroom-{pid}.build left behind"
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let summary = String::from_utf8(out.stderr).unwrap();
        let build = mb_after(&summary, "PEAK COMPILER RSS: ")
            .unwrap_or_else(|| panic!("{id}: no build peak:\n{summary}"));
        assert!((50..80).contains(&build), "{id}: {build} MB:\n{summary}");
        let line = summary
            .lines()
            .find(|l| l.starts_with("PEAK COMPILER RSS: "))
            .unwrap();
        assert!(
            line.starts_with(&format!("PEAK COMPILER RSS: {build} MiB (cc1)  at "))
                && line.ends_with("  [this build]"),
            "{id}:\n{summary}"
        );
        // The host's largest is at least the outside 300 MiB, and said to
        // be someone else's.
        let host = mb_after(
            &summary,
            "LARGEST COMPILER ON THE HOST (not this build's): ",
        )
        .unwrap_or_else(|| panic!("{id}: no host line:\n{summary}"));
        assert!(host >= 300, "{id}:\n{summary}");
        assert!(
            summary.contains(&format!(
                "ADVICE (for this build's largest compiler, {build} MiB,"
            )),
            "{id}:\n{summary}"
        );
        let counted = match extra {
            None if cgroup_v1_as_root() => summary.contains(
                "\nOOM kills in this build: 0 (its cgroup's memory.oom_control oom_kill)\n",
            ),
            None => {
                summary.contains("\nOOM kills in this build: 0 (its cgroup's")
                    || tree_build_had_no_oom_kill(&summary, "")
            }
            Some(_) => tree_build_had_no_oom_kill(&summary, "--no-cgroup"),
        };
        assert!(counted, "{id}:\n{summary}");
        let csv = fs::read_to_string(d.join(format!("resources-{id}.csv"))).unwrap();
        let comms: Vec<String> = column(&csv, "build_peak_rss_comm");
        assert!(
            comms.iter().all(|c| c.is_empty() || c == "cc1"),
            "{id}: {comms:?}"
        );
        let peaks: Vec<u64> = column(&csv, "build_peak_rss_mb")
            .iter()
            .filter_map(|v| v.parse().ok())
            .collect();
        assert_eq!(peaks.iter().max(), Some(&build), "{id}:\n{csv}");
        let host_peaks: Vec<u64> = column(&csv, "peak_rss_mb")
            .iter()
            .filter_map(|v| v.parse().ok())
            .collect();
        assert!(
            host_peaks.iter().all(|&p| p >= 300),
            "{id}: host column keeps its meaning"
        );
        let plan = Command::new(BIN)
            .args([
                "jobs",
                "--cores",
                "64",
                "--avail-mb",
                "10000",
                "--explain",
                "--from",
            ])
            .arg(d.join(format!("resources-{id}.csv")))
            .output()
            .unwrap();
        let plan = String::from_utf8(plan.stdout).unwrap();
        assert!(
            plan.contains(&format!("peak per job:   {build} MiB  (measured: ")),
            "{id}:\n{plan}"
        );
    }
    stop_group(&mut outside);
}

/// Kills the process group `child` leads, and reaps it. With kill(2)
/// itself: procps-ng 4.0's `kill -9 -PGID` was seen to signal every
/// process (pid -1), the test harness included.
fn stop_group(child: &mut Child) {
    if let Some(pgid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) {
        let _ = kill_process_group(pgid, Signal::KILL);
    }
    let _ = child.wait();
}

/// SIGKILL to the process `pid` (text, as /proc names it); nothing for
/// text that is not a positive pid.
fn kill_pid(pid: &str) {
    if let Some(p) = pid.trim().parse::<i32>().ok().and_then(Pid::from_raw) {
        let _ = kill_process(p, Signal::KILL);
    }
}

/// SIGKILL to every process whose executable is `exe`; how many.
fn kill_exe(exe: &Path) -> u32 {
    let mut n = 0;
    for e in fs::read_dir("/proc").unwrap().flatten() {
        if fs::read_link(e.path().join("exe")).is_ok_and(|x| x == exe) {
            kill_pid(&e.file_name().to_string_lossy());
            n += 1;
        }
    }
    n
}

/// This process's v1 memory cgroup directory, when there is one.
fn own_memory_cgroup() -> Option<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own
        .lines()
        .find_map(|l| l.split_once(":memory:").map(|(_, p)| p.to_string()))?;
    let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
    dir.is_dir().then_some(dir)
}

/// A made-up /proc (`--root`) whose build process is a live `sleep`:
/// `record --watch-pid` follows that process's tree in it — the process
/// tree path, on any machine.
#[test]
fn watch_pid_follows_its_tree_under_a_root() {
    let d = scratch("build-tree-root");
    let mut sleeper = Command::new("sleep")
        .arg("30")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let p = sleeper.id();
    let root = d.join("root");
    let proc_of = |pid: u32, comm: &str, ppid: u32, mib: u64| {
        let dir = root.join(format!("proc/{pid}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
        fs::write(
            dir.join("stat"),
            format!("{pid} ({comm}) S {ppid} 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n"),
        )
        .unwrap();
        let kib = mib * 1024;
        fs::write(
            dir.join("status"),
            format!("VmHWM:\t{kib} kB\nVmRSS:\t{kib} kB\n"),
        )
        .unwrap();
    };
    proc_of(p, "make", 1, 2);
    proc_of(p + 1, "sh", p, 1);
    proc_of(p + 2, "cc1", p + 1, 52);
    proc_of(p + 3, "cc1plus", 1, 300);
    let board = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/x86_64-vm-2c-24g/proc");
    for f in ["meminfo", "stat", "loadavg", "vmstat"] {
        fs::copy(board.join(f), root.join("proc").join(f)).unwrap();
    }
    let out = Command::new(BIN)
        .arg("--root")
        .arg(&root)
        .args([
            "record",
            "--interval",
            "0",
            "--count",
            "2",
            "--run-id",
            "t",
            "--out-dir",
        ])
        .arg(&d)
        .args(["--watch-pid", &p.to_string()])
        .output()
        .unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(out.status.success(), "{out:?}");
    let summary = String::from_utf8(out.stdout).unwrap();
    // A tree's /dev/kmsg is not this host's, and its counter stands
    // still: no kill, and said how that is known.
    assert!(
        summary.contains(
            "\nOOM kills in this build: 0 (the host's OOM-kill counter did not rise during it)\n"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("\nPEAK COMPILER RSS: 52 MiB (cc1)  at ")
            && summary.contains("  [this build]\n"),
        "{summary}"
    );
    assert!(
        summary
            .contains("\nLARGEST COMPILER ON THE HOST (not this build's): 300 MiB (cc1plus)  at "),
        "{summary}"
    );
    let csv = fs::read_to_string(d.join("resources-t.csv")).unwrap();
    assert_eq!(column(&csv, "build_peak_rss_mb"), ["52", "52"], "{csv}");
    // `summarize` writes the summary again from the CSV: the build's OOM
    // line, which no column carries, is kept in its place.
    let again = Command::new(BIN)
        .arg("summarize")
        .arg(d.join("resources-t.csv"))
        .output()
        .unwrap();
    let again = String::from_utf8(again.stdout).unwrap();
    let line = |s: &str| {
        s.lines()
            .skip_while(|l| !l.starts_with("kernel OOM-kill events: "))
            .nth(1)
            .map(str::to_string)
    };
    assert_eq!(line(&again), line(&summary), "{again}");
    assert!(
        line(&again)
            .unwrap()
            .starts_with("OOM kills in this build: 0 ")
    );
    assert_eq!(column(&csv, "peak_rss_mb"), ["300", "300"], "{csv}");
    // Plain `record` of the same root follows no build: the host's peak is
    // the only one, and said to be the host's.
    let out = Command::new(BIN)
        .arg("--root")
        .arg(&root)
        .args([
            "record",
            "--interval",
            "0",
            "--count",
            "1",
            "--run-id",
            "h",
            "--out-dir",
        ])
        .arg(&d)
        .output()
        .unwrap();
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(!summary.contains("this build"), "{summary}");
    assert!(
        summary.contains("\nPEAK COMPILER RSS: 300 MiB (cc1plus)  at ")
            && summary.contains("  [host-wide: every compiler on the host; no build followed]\n"),
        "{summary}"
    );
    let csv = fs::read_to_string(d.join("resources-h.csv")).unwrap();
    assert_eq!(column(&csv, "build_peak_rss_mb"), [""], "{csv}");
}

/// `run --root` follows the process tree (a board tree is not this host:
/// no cgroup is made in it), and says so.
#[test]
fn run_under_a_root_makes_no_cgroup() {
    let d = scratch("build-run-root");
    let board = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/rpi4-4g-zram");
    let out = Command::new(BIN)
        .arg("--root")
        .arg(&board)
        .args([
            "run",
            "--interval",
            "0",
            "--count",
            "1",
            "--run-id",
            "r",
            "--out-dir",
        ])
        .arg(&d)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let summary = String::from_utf8(out.stderr).unwrap();
    assert!(
        summary.contains("; no cgroup of its own: --root is not this host)\n"),
        "{summary}"
    );
    // The board's three cc1plus are not this build's: no ADVICE from them.
    assert!(!summary.contains("ADVICE"), "{summary}");
    assert!(
        summary.contains("LARGEST COMPILER ON THE HOST (not this build's): 771 MiB (cc1plus)"),
        "{summary}"
    );
    let made = Command::new("find")
        .arg(&board)
        .args(["-name", "headroom-*"])
        .output()
        .unwrap();
    assert!(made.stdout.is_empty(), "{made:?}");
}

/// A command that is over before headroom looks (`true`) was still in the
/// build's cgroup: where one may be made, every run says so, none warns.
#[test]
fn a_command_that_ends_at_once_was_in_its_cgroup() {
    let d = scratch("build-true");
    for i in 0..20 {
        let out = Command::new(BIN)
            .args([
                "run",
                "--interval",
                "1",
                "--run-id",
                &format!("t{i}"),
                "--out-dir",
            ])
            .arg(&d)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!err.contains("warning"), "{err}");
        let counted = if cgroup_v1_as_root() {
            err.contains("OOM kills in this build: 0 (its cgroup's memory.oom_control oom_kill)\n")
        } else {
            err.contains("OOM kills in this build: 0 (its cgroup's")
                || tree_build_had_no_oom_kill(&err, "")
        };
        assert!(counted, "{err}");
    }
}

/// Root on cgroup v1 only (CI's machines): the cgroup life cycle against
/// the real kernel. Elsewhere these say so and check nothing.
fn cgroup_case(name: &str) -> Option<PathBuf> {
    if !cgroup_v1_as_root() {
        eprintln!("{name}: skipped (needs root and a v1 memory cgroup)");
        return None;
    }
    own_memory_cgroup()
}

/// A leftover cgroup of the same name (a headroom of the same pid in
/// another PID namespace, or one killed long ago) is never taken over:
/// its 40 MiB limit does not apply to this build, nor its counters.
#[test]
fn a_leftover_cgroup_of_the_same_name_is_not_adopted() {
    let Some(own) = cgroup_case("leftover") else {
        return;
    };
    let d = scratch("build-leftover");
    let mine = tail_named(&d, "cc1");
    // The shell makes headroom-$$.build, busy (a sleep in it) and limited
    // to 40 MiB, then becomes headroom (exec keeps the pid). It is made
    // under another name and renamed once busy: empty under its own name
    // it would be stale to the other tests' headrooms (the shell's comm is
    // not headroom yet), and one of them could remove it first.
    let script = format!(
        "T={own}/headroom-$$.build; M={own}/squatter-$$; mkdir $M || exit 9; echo {limit} > $M/memory.limit_in_bytes || exit 9; \
         sleep 30 </dev/null >/dev/null 2>&1 & S=$!; echo $S > $M/cgroup.procs || exit 9; echo $S > {d}/squatter; \
         mv $M $T || exit 9; \
         exec {BIN} run --interval 0.2 --run-id l --out-dir {d} -- \
         sh -c '(head -c 60M /dev/zero; sleep 1) | {mine} >/dev/null'",
        own = own.display(),
        limit = 40u64 << 20,
        d = d.display(),
        mine = mine.display(),
    );
    let (pid, out) = output_with_pid(Command::new("sh").args(["-c", &script]), 60);
    let squatter = fs::read_to_string(d.join("squatter")).unwrap_or_default();
    kill_pid(&squatter);
    let taken = own.join(format!("headroom-{pid}.build"));
    for _ in 0..50 {
        if fs::remove_dir(&taken).is_ok() || !taken.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let summary = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "the other's limit applied:\n{summary}"
    );
    assert!(
        summary.contains("\nOOM kills in this build: 0 (its cgroup's"),
        "{summary}"
    );
    let peak = mb_after(&summary, "PEAK COMPILER RSS: ").unwrap_or(0);
    assert!(peak >= 55, "{summary}");
    assert!(
        !own.join(format!("headroom-{pid}-2.build")).exists(),
        "its own, removed"
    );
}

/// A build that makes cgroups of its own below its cgroup: they are
/// emptied and removed with it, and no warning is false.
#[test]
fn the_builds_own_child_cgroups_go_with_it() {
    if cgroup_case("children").is_none() {
        return;
    }
    let d = scratch("build-children");
    // A sleep of this test's own, known by its path.
    let sleeper = d.join("child-sleep");
    fs::copy("/bin/sleep", &sleeper).unwrap();
    let script = format!(
        "B=/sys/fs/cgroup/memory$(grep :memory: /proc/self/cgroup | cut -d: -f3); \
         mkdir $B/child $B/child/grandchild; \
         sh -c 'echo $$ > '$B'/child/grandchild/cgroup.procs; exec setsid {} 30' \
         </dev/null >/dev/null 2>&1 & sleep 0.3",
        sleeper.display()
    );
    let (pid, out) = output_with_pid(
        Command::new(BIN)
            .args(["run", "--interval", "1", "--run-id", "c", "--out-dir"])
            .arg(&d)
            .args(["--", "sh", "-c", &script]),
        60,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("could not be removed"), "{err}");
    assert!(err.contains("1 process(es) outlived the command"), "{err}");
    let own = own_memory_cgroup().unwrap();
    assert!(!own.join(format!("headroom-{pid}.build")).exists(), "{err}");
    // The sleep it left is now in this test's cgroup: stop it.
    assert_eq!(kill_exe(&sleeper), 1, "{err}");
}

/// More processes left behind than one read of `cgroup.procs` holds: all
/// are moved out and the cgroup goes.
#[test]
fn hundreds_of_processes_left_behind_are_all_moved_out() {
    let Some(own) = cgroup_case("many") else {
        return;
    };
    let d = scratch("build-many");
    let sleeper = d.join("x");
    fs::copy("/bin/sleep", &sleeper).unwrap();
    let script = format!(
        "i=0; while [ $i -lt 1000 ]; do setsid {} 30 </dev/null >/dev/null 2>&1 & i=$((i+1)); done; sleep 1",
        sleeper.display()
    );
    let (pid, out) = output_with_pid(
        Command::new(BIN)
            .args(["run", "--interval", "1", "--run-id", "m", "--out-dir"])
            .arg(&d)
            .args(["--", "sh", "-c", &script]),
        120,
    );
    let err = String::from_utf8(out.stderr).unwrap();
    // Stop them first, whatever the outcome.
    let stopped = kill_exe(&sleeper);
    assert!(out.status.success(), "{err}");
    assert!(stopped >= 1000, "{stopped}");
    assert!(
        err.contains("1000 process(es) outlived the command"),
        "{err}"
    );
    assert!(!own.join(format!("headroom-{pid}.build")).exists(), "{err}");
}

/// Issue 25: one process left running by the command is one that
/// outlived it, counted once, and the RUN block says the command did not
/// wait for it (its CPU is in no one's rusage).
#[test]
fn a_real_orphan_counts_one() {
    if cgroup_case("orphan").is_none() {
        return;
    }
    let d = scratch("build-orphan");
    let sleeper = d.join("orphan-sleep");
    fs::copy("/bin/sleep", &sleeper).unwrap();
    let script = format!(
        "{} 30 </dev/null >/dev/null 2>&1 & exit 0",
        sleeper.display()
    );
    let out = common::output_within(
        Command::new(BIN)
            .args(["run", "--interval", "1", "--run-id", "o", "--out-dir"])
            .arg(&d)
            .args(["--", "sh", "-c", &script]),
        60,
    );
    let stopped = kill_exe(&sleeper);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert_eq!(stopped, 1, "{err}");
    assert!(
        err.contains("headroom: 1 process(es) outlived the command; moved out of its cgroup\n"),
        "{err}"
    );
    assert!(
        err.contains("\n  exit 0\n  not all reaped: 1 process(es) of the build were not waited for by the command; "),
        "{err}"
    );
    assert!(!err.contains("\n  interrupted: "), "{err}");
}

/// Issue 25: Ctrl-C during `make -j2` said "32 process(es) outlived the
/// command" (two exiting compilers counted at each of sixteen moves).
/// Here each job's process forks a child that takes a second to end on
/// SIGINT while its parent dies at once (as cc1 outlives gcc): when make
/// has ended, both children are still there, and neither outlives the
/// build.
#[test]
fn make_j2_stopped_by_sigint_leaves_none_behind() {
    use std::os::unix::process::ExitStatusExt;
    if common::ignored_here(2, "make_j2_stopped_by_sigint_leaves_none_behind") {
        return;
    }
    if cgroup_case("sigint").is_none() {
        return;
    }
    let d = scratch("build-sigint");
    let job = "import os, signal, sys, time\n\
               if os.fork() == 0:\n\
               \x20   signal.signal(signal.SIGINT, lambda *a: (time.sleep(1), os._exit(0)))\n\
               \x20   open(sys.argv[1], 'w').close()\n\
               \x20   time.sleep(60)\n\
               time.sleep(60)\n";
    fs::write(d.join("job.py"), job).unwrap();
    fs::write(
        d.join("Makefile"),
        "all: a b\na b:\n\t@python3 job.py ready-$@ 2>/dev/null\n",
    )
    .unwrap();
    let child = Command::new(BIN)
        .args(["run", "--interval", "1", "--run-id", "s", "--out-dir"])
        .arg(&d)
        .args(["--", "make", "-s", "-j2", "-C"])
        .arg(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ready = || d.join("ready-a").exists() && d.join("ready-b").exists();
    let start = Instant::now();
    while !ready() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(ready(), "the jobs never started:\n{err}");
    assert_eq!(out.status.signal(), Some(2), "{err}");
    assert!(!err.contains("outlived the command"), "{err}");
    assert!(err.contains("\n  interrupted: SIGINT after "), "{err}");
}

/// The `context` column of each row of the CSV at `csv` (quotes stripped).
fn contexts(csv: &Path) -> Vec<String> {
    let text = fs::read_to_string(csv).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(13)
                .unwrap_or("")
                .trim_matches('"')
                .to_string()
        })
        .collect()
}

/// Issue 15: `--stage-log build.log` of a plain Makefile gave `?,""` on
/// every row (make's echo lines have none of the toolchain's markers).
/// Now each row's context names the file being compiled, as `a.c (cc -O2)`.
#[test]
fn a_plain_makefile_log_names_the_file_being_compiled() {
    let d = scratch("makefile-context");
    for n in ["a", "b", "c", "d"] {
        fs::write(
            d.join(format!("{n}.c")),
            format!("int {n}(void) {{ return 1; }}\n"),
        )
        .unwrap();
    }
    // Each compile is followed by a sleep in its recipe, so the 1 s rows
    // see its echo line as the log's last compiler command.
    fs::write(
        d.join("Makefile"),
        "OBJ := a.o b.o c.o d.o\nall: $(OBJ)\n%.o: %.c\n\tcc -O2 -c $< -o $@ && sleep 2\n",
    )
    .unwrap();
    let out = common::output_within(
        Command::new(BIN)
            .args([
                "run",
                "--run-id",
                "mk",
                "--stage-log",
                "build.log",
                "--out-dir",
                ".",
            ])
            .args(["--", "sh", "-c", "make -j2 2>&1 | tee build.log"])
            .current_dir(&d)
            .env_remove("MAKEFLAGS"),
        120,
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("--stage-log"), "no warning: {stderr}");
    let ctx = contexts(&d.join("resources-mk.csv"));
    let named: Vec<&String> = ctx.iter().filter(|c| !c.is_empty()).collect();
    // make -j2 echoes two compiles at once: the later one is the log's
    // last line while both run, so two files at least are named.
    let files: std::collections::BTreeSet<&str> = named
        .iter()
        .filter_map(|c| c.strip_suffix(" (cc -O2)"))
        .collect();
    assert!(files.len() >= 2, "{ctx:?}");
    for c in &named {
        assert!(
            ["a.c", "b.c", "c.c", "d.c"]
                .iter()
                .any(|f| **c == format!("{f} (cc -O2)")),
            "every context names a compile: {c:?} in {ctx:?}"
        );
    }
    // Rows during the 4 s of compiles name them.
    assert!(named.len() >= 3, "{ctx:?}");
    // --compat: the same column.
    let out = common::output_within(
        Command::new(BIN)
            .args([
                "run",
                "--compat",
                "--run-id",
                "mk14",
                "--stage-log",
                "build.log",
                "--out-dir",
                ".",
            ])
            .args(["--", "sh", "-c", "make -B -j2 2>&1 | tee build.log"])
            .current_dir(&d)
            .env_remove("MAKEFLAGS"),
        120,
    );
    assert!(out.status.success(), "{out:?}");
    let ctx = contexts(&d.join("resources-mk14.csv"));
    assert!(ctx.iter().any(|c| c.ends_with(".c (cc -O2)")), "{ctx:?}");
}

/// Issue 15: a `--stage-log` that does not exist warns once, not per row.
#[test]
fn a_missing_stage_log_warns_once() {
    let d = scratch("missing-log");
    let out = common::output_within(
        Command::new(BIN)
            .args([
                "run",
                "--run-id",
                "m",
                "--stage-log",
                "nothere.log",
                "--out-dir",
                ".",
            ])
            .args(["--", "sleep", "3"])
            .current_dir(&d),
        60,
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("nothere.log"))
        .collect();
    assert_eq!(
        lines,
        [
            "headroom: warning: --stage-log nothere.log: does not exist (yet); stage and context stay empty until it does"
        ],
        "{stderr}"
    );
}

/// A second run's log still holds the first run's lines until CMD writes
/// it: `run` gives no context from a log not modified since it started
/// (a new user saw the last run's `error:` as this run's context).
#[test]
fn run_ignores_an_earlier_runs_build_log() {
    let d = scratch("stale-log");
    let log = d.join("build.log");
    std::fs::write(&log, "a.c:1:1: error: from the run before\n").unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let out = common::output_within(
        Command::new(BIN)
            .args([
                "run",
                "--run-id",
                "s",
                "--stage-log",
                "build.log",
                "--out-dir",
                ".",
            ])
            .args([
                "--",
                "sh",
                "-c",
                "sleep 1.5; echo 'cc -O2 -c new.c -o new.o' >build.log; sleep 1.5",
            ])
            .current_dir(&d),
        60,
    );
    assert!(out.status.success(), "{out:?}");
    let csv = std::fs::read_to_string(d.join("resources-s.csv")).unwrap();
    assert!(!csv.contains("from the run before"), "{csv}");
    assert!(csv.contains("\"new.c (cc -O2)\""), "{csv}");
}
