//! Issue 33, item 1, end to end: a minimal container without /sys. The
//! test makes a 1 GiB memory cgroup and a 1-CPU cpu cgroup (CFS quota
//! 100000/100000), and runs headroom in them with private mount, PID and
//! cgroup namespaces, a fresh /proc and no /sys
//! ([`common::namespace::in_container`]). /proc/self/cgroup there names
//! the memory and cpu cgroups, but nothing can read their limits, so
//! every command must say that they are unknown (once, on stderr, with
//! the fix) and never plan as if there were none:
//!
//! - `status`: the memory and CPU limits unknown with the reason, on the
//!   screen and in `--json` (`{"state":"unknown",…}`, not `null`);
//! - `jobs --peak-mb 600` warns and still prints a number; with
//!   `--avail-mb` and `--cores` it needs no warning;
//! - `advise --peak-mb 600` warns;
//! - `record --count 2 --interval 1` warns once, its CSV's `cg_mem_*`
//!   fields are empty, and its summary says the limit is unknown;
//! - `run` warns of the memory limit, `run --jobserver` of the CPU limit
//!   too (its governor's cap) unless `--max-jobs` is given.
//!
//! The same commands in the same cgroups and namespaces with the cgroup
//! hierarchies mounted read-only on /sys/fs/cgroup (the fix the warning
//! gives) read the 1024 MiB limit and the 1-CPU quota: the unknown is the
//! missing /sys, not the test's cgroups.
//!
//! Needs root, a writable memory controller and CFS bandwidth control
//! (v1 or v2), util-linux `unshare`: `#[ignore]`d in a plain `cargo test`,
//! run by `ci/test` (the `container` stage). About 3 s.

mod common;

use std::process::Output;

use common::namespace::{CpuQuota, Sys, in_container};
use common::{BIN, Cgroup, output_within, scratch};

/// The container's memory limit: `-m 1g`.
const LIMIT_BYTES: u64 = 1 << 30;

/// Why the limits are unknown without /sys, as status and the warning say.
const NOT_MOUNTED: &str = "proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted";

/// The test's memory and cpu cgroups.
struct Box1g {
    mem: Cgroup,
    cpu: CpuQuota,
}

impl Box1g {
    fn new(tag: &str) -> Box1g {
        let mem = Cgroup::create(tag, LIMIT_BYTES).expect("memory cgroup");
        let cpu = CpuQuota::create(&mem, tag, 100_000, 100_000).expect("cpu quota");
        Box1g { mem, cpu }
    }

    /// `headroom ARGS` inside, as [`in_container`] with `sys`.
    fn headroom(&self, sys: Sys, args: &[&str]) -> Output {
        let mut argv = vec![BIN];
        argv.extend_from_slice(args);
        let dirs = [self.mem.dir.as_path(), self.cpu.dir.as_path()];
        let dirs = if dirs[0] == dirs[1] {
            &dirs[..1]
        } else {
            &dirs[..]
        };
        let out = output_within(&mut in_container(dirs, sys, &argv), 60);
        assert!(
            !matches!(out.status.code(), Some(97 | 98)),
            "the container could not be made: {out:?}"
        );
        out
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The stderr lines that say a container limit is unknown.
fn unknown_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("limit is unknown") || l.contains("limits are unknown"))
        .collect()
}

/// A CSV's field `name` in each row.
fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no {name}"));
    lines
        .map(|l| l.split(',').nth(i).unwrap_or("").to_string())
        .collect()
}

#[test]
#[ignore = "root: makes cgroups and namespaces"]
fn without_sys_every_command_says_the_container_limits_are_unknown() {
    let b = Box1g::new("nosys");

    // status: the screen and the JSON.
    let out = b.headroom(Sys::Gone, &["status"]);
    assert!(out.status.success(), "{out:?}");
    let (screen, err) = (text(&out.stdout), text(&out.stderr));
    assert!(
        screen.contains(&format!("cgroup mem  unknown ({NOT_MOUNTED})\n")),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("cgroup cpu  CPU quota unknown ({NOT_MOUNTED})\n")),
        "{screen}"
    );
    assert!(!screen.contains("no memory controller"), "{screen}");
    let warned = unknown_lines(&err);
    assert_eq!(warned.len(), 1, "one line:\n{err}");
    assert!(
        warned[0].contains("memory and CPU limits are unknown"),
        "{err}"
    );
    assert!(
        warned[0].contains("mount /sys/fs/cgroup (read-only is enough)"),
        "{err}"
    );
    let out = b.headroom(Sys::Gone, &["status", "--json"]);
    let json = text(&out.stdout);
    let unknown = format!("{{\"state\":\"unknown\",\"reason\":\"{NOT_MOUNTED}\"}}");
    assert!(
        json.contains(&format!("\"cgroup_memory\":{unknown}")),
        "{json}"
    );
    assert!(
        json.contains(&format!("\"cgroup_cpu\":{unknown}")),
        "{json}"
    );
    assert!(json.contains(",\"mem_limited_by\":\"unknown\","), "{json}");
    assert!(json.contains(",\"cores_limited_by\":\"unknown\""), "{json}");

    // jobs: warned, still a number; no warning for what is given.
    let out = b.headroom(Sys::Gone, &["jobs", "--peak-mb", "600"]);
    assert!(out.status.success(), "{out:?}");
    let n: u64 = text(&out.stdout).trim().parse().expect("a number");
    assert!(n >= 1);
    let err = text(&out.stderr);
    let warned = unknown_lines(&err);
    assert_eq!(warned.len(), 1, "{err}");
    assert!(
        warned[0].contains("or pass --avail-mb N and --cores N"),
        "{err}"
    );
    let out = b.headroom(
        Sys::Gone,
        &["jobs", "--peak-mb", "600", "--avail-mb", "1000"],
    );
    let err = text(&out.stderr);
    let warned = unknown_lines(&err);
    assert_eq!(warned.len(), 1, "{err}");
    assert!(
        warned[0].contains("CPU limit is unknown") && warned[0].ends_with("--cores N"),
        "{err}"
    );
    let given = [
        "jobs",
        "--peak-mb",
        "600",
        "--avail-mb",
        "1000",
        "--cores",
        "1",
    ];
    let out = b.headroom(Sys::Gone, &given);
    assert_eq!(text(&out.stdout), "1\n");
    assert!(unknown_lines(&text(&out.stderr)).is_empty(), "{out:?}");

    // advise: warned.
    let out = b.headroom(Sys::Gone, &["advise", "--peak-mb", "600"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(unknown_lines(&text(&out.stderr)).len(), 1, "{out:?}");
    // advise of a job that needs swap, with the figures given by hand as
    // the warning says: the swap is still the host's to add, and how much
    // the container may use of it is unknown (the host here has none).
    let args = [
        "advise",
        "--peak-mb",
        "1500",
        "--avail-mb",
        "1000",
        "--cores",
        "1",
    ];
    let out = b.headroom(Sys::Gone, &args);
    let advice = text(&out.stdout);
    let swap_free_mib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let l = m.lines().find(|l| l.starts_with("SwapFree:"))?;
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |k| k / 1024);
    // 1000 MiB of RAM and under 500 MiB of swap cannot hold 1500.
    if swap_free_mib < 500 {
        assert!(advice.contains("add swap:"), "{advice}");
        assert!(
            advice.contains("  swap is the host's to add (a container cannot): run these on the host;\n  how much of it this container may use is unknown (its memory cgroup could not be read)\n"),
            "{advice}"
        );
    }

    // record: warned once, the cgroup columns empty.
    let d = scratch("record");
    let dir = d.to_str().unwrap();
    let rec = [
        "record",
        "--count",
        "2",
        "--interval",
        "1",
        "--run-id",
        "ns",
        "--out-dir",
        dir,
    ];
    let out = b.headroom(Sys::Gone, &rec);
    assert!(out.status.success(), "{out:?}");
    let err = text(&out.stderr);
    let warned = unknown_lines(&err);
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("memory limit is unknown"), "{err}");
    let summary = text(&out.stdout);
    assert!(
        summary.contains(
            "\nCGROUP HEADROOM: unknown: the container's memory limit could not be read ("
        ),
        "{summary}"
    );
    let csv = std::fs::read_to_string(d.join("resources-ns.csv")).unwrap();
    for name in ["cg_mem_avail_mb", "cg_mem_limit_mb"] {
        assert_eq!(column(&csv, name), ["", ""], "{name} in\n{csv}");
    }
    // summarize of that CSV keeps the line the recording wrote: no column
    // says the limit was unknown, and it must not read as "no limit".
    let csv_path = d.join("resources-ns.csv");
    let again = common::headroom_with(&["summarize", csv_path.to_str().unwrap()]);
    assert!(again.status.success(), "{again:?}");
    let again = text(&again.stdout);
    let line = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("CGROUP HEADROOM: unknown: "))
            .map(str::to_string)
    };
    assert!(line(&summary).is_some(), "{summary}");
    assert_eq!(line(&again), line(&summary), "{again}");
    // A container all the same: the host's load and CPU are said to be
    // the host's, by record and by summarize alike.
    for t in [&summary, &again] {
        let peak = t.lines().find(|l| l.starts_with("PEAK LOAD: "));
        assert!(peak.is_some_and(|l| l.contains("the host's")), "{t}");
    }

    // run: the memory limit; run --jobserver: the governor's CPU limit
    // too, with --max-jobs as its option, and none with --max-jobs.
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--run-id", "r", "--out-dir", dir];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "true"]);
        let out = b.headroom(Sys::Gone, &args);
        assert!(out.status.success(), "{out:?}");
        let err = text(&out.stderr);
        let warned: Vec<String> = unknown_lines(&err).iter().map(|l| l.to_string()).collect();
        assert_eq!(warned.len(), 1, "{extra:?}: {err}");
        warned[0].clone()
    };
    let plain = run(&[]);
    assert!(
        plain.contains("the container's memory limit is unknown"),
        "{plain}"
    );
    let governed = run(&["--jobserver"]);
    assert!(
        governed.contains("memory and CPU limits are unknown"),
        "{governed}"
    );
    assert!(
        governed.contains("governor") && governed.ends_with("or pass --max-jobs N"),
        "{governed}"
    );
    let capped = run(&["--jobserver", "--max-jobs", "1"]);
    assert!(capped.contains("memory limit is unknown"), "{capped}");
    assert!(!capped.contains("--max-jobs"), "{capped}");
}

/// The control: the same cgroups and namespaces with the cgroup
/// hierarchies mounted read-only read the limits, and nothing is warned.
#[test]
#[ignore = "root: makes cgroups and namespaces"]
fn with_cgroupfs_mounted_read_only_the_same_container_reads_its_limits() {
    let b = Box1g::new("rosys");
    let out = b.headroom(Sys::CgroupReadOnly, &["status"]);
    assert!(out.status.success(), "{out:?}");
    let screen = text(&out.stdout);
    assert!(screen.contains("cgroup mem  limit 1024 MiB"), "{screen}");
    assert!(screen.contains("cgroup cpu  quota 1.00 CPUs\n"), "{screen}");
    assert!(unknown_lines(&text(&out.stderr)).is_empty(), "{out:?}");
    let out = b.headroom(Sys::CgroupReadOnly, &["jobs", "--peak-mb", "600"]);
    assert_eq!(text(&out.stdout), "1\n", "{out:?}");
    assert!(unknown_lines(&text(&out.stderr)).is_empty(), "{out:?}");
    let d = scratch("record-ro");
    let dir = d.to_str().unwrap();
    let rec = [
        "record",
        "--count",
        "2",
        "--interval",
        "1",
        "--run-id",
        "ro",
        "--out-dir",
        dir,
    ];
    let out = b.headroom(Sys::CgroupReadOnly, &rec);
    assert!(out.status.success(), "{out:?}");
    assert!(unknown_lines(&text(&out.stderr)).is_empty(), "{out:?}");
    assert!(
        !text(&out.stdout).contains("CGROUP HEADROOM: unknown"),
        "{out:?}"
    );
    let csv = std::fs::read_to_string(d.join("resources-ro.csv")).unwrap();
    assert_eq!(column(&csv, "cg_mem_limit_mb"), ["1024", "1024"], "{csv}");
}
