//! End-to-end: `jobs`, `advise` and `status` through the CLI.

use std::process::Command;

mod common;
use common::BIN;

const JOB_VARS: [&str; 6] = headroom::plan::jobs::ENV_VARS;

/// `headroom jobs ARGS` with exactly the given job variables set.
fn jobs(args: &[&str], env: &[(&str, &str)]) -> (String, String, Option<i32>) {
    let mut cmd = Command::new(BIN);
    cmd.arg("jobs").args(args);
    for v in JOB_VARS {
        cmd.env_remove(v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

#[test]
fn spec_reference_cases_through_the_cli() {
    let host = ["--cores", "8", "--avail-mb", "16000"];
    fn with(host: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
        [host, extra].concat()
    }
    /// Arguments, environment, expected output.
    type Case = (
        Vec<&'static str>,
        &'static [(&'static str, &'static str)],
        &'static str,
    );
    let cases: [Case; 6] = [
        (with(&host, &["--peak-mb", "4096"]), &[], "3\n"),
        (with(&host, &["--peak-mb", "2000"]), &[], "8\n"),
        (with(&host, &["--peak-mb", "99999"]), &[], "1\n"),
        (
            with(&host, &["--profile", "heavy"]),
            &[("PARALLEL_JOBS", "5")],
            "5\n",
        ),
        (
            with(&host, &["--profile", "heavy"]),
            &[("PARALLEL_JOBS", "0")],
            "3\n",
        ),
        (
            with(&host, &["--profile", "heavy"]),
            &[("PARALLEL_JOBS", "bogus")],
            "3\n",
        ),
    ];
    for (args, env, want) in cases {
        let (out, err, code) = jobs(&args, env);
        assert_eq!(
            (out.as_str(), code),
            (want, Some(0)),
            "{args:?} {env:?}: {err}"
        );
        if env.iter().any(|(_, v)| *v != "5") {
            assert!(err.contains("warning: PARALLEL_JOBS="), "{err}");
        }
    }
    let big = ["--cores", "64", "--avail-mb", "24000", "--peak-mb", "1000"];
    for (div, want) in [("1", "24\n"), ("3", "8\n"), ("bogus", "24\n")] {
        let (out, err, _) = jobs(&big, &[("BUILD_MEM_DIVISOR", div)]);
        assert_eq!(out, want, "divisor {div}: {err}");
    }
}

#[test]
fn taskset_binds_and_explain_names_the_affinity_mask() {
    let out = Command::new("taskset")
        .args(["-c", "0", BIN, "jobs", "--profile", "generic", "--explain"])
        .env_remove("PARALLEL_JOBS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("cores:          1  (sched_getaffinity: 1 in the affinity mask"),
        "{text}"
    );
    assert!(
        text.contains("bound by:       cores (sched_getaffinity"),
        "{text}"
    );
    let bare = Command::new("taskset")
        .args(["-c", "0", BIN, "jobs", "--profile", "generic"])
        .env_remove("PARALLEL_JOBS")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(bare.stdout).unwrap(), "1\n");
}

#[test]
fn a_limit_on_a_parent_cgroup_only_binds() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid"
    );
    let (out, err, code) = jobs(
        &[
            "--root",
            root,
            "--peak-mb",
            "500",
            "--cores",
            "8",
            "--explain",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    // The limiting level has no memory.stat: limit − usage, said so.
    assert!(
        out.contains("usable memory:  2032 MiB  (cgroup /user.slice binds: memory.limit_in_bytes 3072 MiB − usage 1040 MiB = available 2032 MiB (no inactive_file in memory.stat: its cache counts as used); MemAvailable 6466 MiB)\n"),
        "{out}"
    );
    assert!(
        out.contains("jobs = max(1, min(cores 8, 2032 / 1 / 500 = 4)) = 4\n"),
        "{out}"
    );
    assert!(out.contains("bound by:       memory (cgroup"), "{out}");
}

/// `headroom CMD ARGS` with no job variable set: stdout, and exit 0.
fn run_ok(cmd: &str, args: &[&str]) -> String {
    let mut c = Command::new(BIN);
    c.arg(cmd).args(args);
    for v in JOB_VARS {
        c.env_remove(v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{cmd} {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Issue 25's first acceptance, on fixture 46 (a 1 GiB cgroup after 700 MB
/// of clean file cache was charged to it, swap capped at the limit; v1
/// captured, v2 assembled): `jobs --peak-mb 300` gives the cores (2: the
/// old `limit − usage` of 304 MiB gave 1), `advise` asks for no swap, even
/// for a job that does not fit, and `status` shows the cgroup's ~1 GiB
/// available, named.
#[test]
fn fixture_46_a_cgroup_s_clean_cache_is_available_memory() {
    for case in ["a-v1-docker-memsw-equal", "b-v2-docker-swap-max-0"] {
        let root = format!(
            "{}/tests/fixtures/46-cgroup-page-cache-is-available/{case}",
            env!("CARGO_MANIFEST_DIR")
        );
        let r = ["--root", root.as_str()];
        assert_eq!(
            run_ok("jobs", &[&r[..], &["--peak-mb", "300"]].concat()),
            "2\n",
            "{case}"
        );
        let explain = run_ok(
            "jobs",
            &[&r[..], &["--peak-mb", "300", "--explain"]].concat(),
        );
        assert!(
            explain.contains(" binds: memory.") && explain.contains(" 1024 MiB − (usage 719 MiB − inactive file 700 MiB) = available 1004 MiB; MemAvailable "),
            "{case}: {explain}"
        );
        let advise = run_ok("advise", &[&r[..], &["--peak-mb", "300"]].concat());
        assert!(
            advise.starts_with("safe parallel jobs: 2  "),
            "{case}: {advise}"
        );
        assert!(
            advise.contains("  fits in RAM: no swap needed for -j2\n"),
            "{case}: {advise}"
        );
        let heavy = run_ok("advise", &[&r[..], &["--profile", "heavy"]].concat());
        for never in ["add swap", "zram", "dphys", "swapfile"] {
            assert!(!heavy.contains(never), "{case}: {never}: {heavy}");
        }
        assert!(
            heavy.contains("A larger memory limit can: 4608M"),
            "{case}: {heavy}"
        );
        let status = run_ok("status", &r);
        assert!(
            status.contains(": available 1004 MiB of 1024 (usage 719, inactive file 700)\n            usable 1004 MiB: the cgroup binds\n"),
            "{case}: {status}"
        );
        assert!(
            status.contains("            swap: none allowed ("),
            "{case}: {status}"
        );
    }
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        vec!["jobs", "--profile", "nope"],
        vec!["jobs", "--peak-mb", "0"],
        vec!["jobs", "--cores", "0"],
        vec!["jobs", "--peak-mb", "x"],
        vec!["advise", "--profile", "nope"],
        vec!["status", "--bogus"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            !err.is_empty() && err.lines().count() <= 2,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn from_a_recorded_csv_plans_with_its_measured_peak() {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-from");
    std::fs::create_dir_all(&d).unwrap();
    let csv = d.join("r.csv");
    let mut text = String::from(
        "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,swap_total_mb,zram_stored_mb,zram_ram_mb,tmp_avail_mb,tmp_pct,disk_avail_mb,oom_kills,cg_mem_avail_mb,psi_mem_some_avg10,peak_rss_mb,peak_rss_comm\n",
    );
    for (i, peak) in [300, 1000, 700].iter().enumerate() {
        text.push_str(&format!(
            "{e},1970-01-01T00:00:0{i}Z,{i},0.10,50,100,900,10,0,5,50,1,b,\"x\",0,,,100,1,5000,0,,,{peak},cc1plus\n",
            e = i
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let (out, err, code) = jobs(
        &[
            "--from",
            csv.to_str().unwrap(),
            "--cores",
            "16",
            "--avail-mb",
            "10000",
            "--explain",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("peak per job:   1000 MiB  (measured: "),
        "{out}"
    );
    assert!(
        out.contains("jobs = max(1, min(cores 16, 10000 x 0.9 / 1 / 1000 = 9)) = 9\n"),
        "{out}"
    );
    let (_, err, code) = jobs(&["--from", "/nonexistent.csv"], &[]);
    assert_eq!(code, Some(1), "{err}");
}

#[test]
fn status_and_advise_run_on_this_host() {
    for args in [
        vec!["status"],
        vec!["advise"],
        vec!["advise", "--profile", "heavy"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.lines().count() <= 40,
            "{args:?} is more than one screen:\n{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 110), "{text}");
    }
}

/// `advise ARGS` on the Pi Zero 2 W board, without the job-count
/// variables: its stdout.
fn pi_zero_advice(args: &[&str]) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/rpi-zero2w-512m");
    let mut cmd = Command::new(BIN);
    cmd.args(["--root", root, "advise"]).args(args);
    for v in JOB_VARS {
        cmd.env_remove(v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn pi_zero_heavy_advice_says_one_job_does_not_fit_then_the_swap_then_j1() {
    let a = pi_zero_advice(&["--profile", "heavy", "--peak-mb", "4096"]);
    // That one job does not fit is said first, and -j1 is never called
    // safe: it is what to run once the swap is on.
    assert!(a.starts_with("one job does NOT fit: "), "{a}");
    assert!(!a.contains("safe parallel jobs"), "{a}");
    assert!(
        a.contains("  no -j is safe, not even -j1 or taskset -c 0: add swap first"),
        "{a}"
    );
    assert!(a.contains("CONF_SWAPSIZE="), "{a}");
    let swap_on = a
        .find("    sudo dphys-swapfile setup\n    sudo dphys-swapfile swapon\n")
        .unwrap_or_else(|| panic!("no dphys-swapfile commands:\n{a}"));
    let j1 = a.find("make -j1").unwrap_or_else(|| panic!("no -j1:\n{a}"));
    assert!(swap_on < j1, "{a}");
    for line in ["    make -j1\n", "    ninja -j1\n", "    taskset -c 0 "] {
        assert!(a.contains(line), "{line:?} missing:\n{a}");
    }
    assert!(!a.contains("guess"), "{a}");
}

/// Issue 33: from the profile's guess alone (no --peak-mb, no --from),
/// a job that does not fit is said to be a guess, with how to measure it
/// and -j1 until then, never "no -j is safe, not even -j1".
#[test]
fn pi_zero_heavy_guess_says_guess_and_how_to_measure() {
    let a = pi_zero_advice(&["--profile", "heavy"]);
    assert!(a.starts_with("one job may NOT fit, by a guess: "), "{a}");
    assert!(
        a.contains("  a guess: the heavy profile's default peak"),
        "{a}"
    );
    assert!(
        a.contains("    headroom jobs --from resources-run.csv\n"),
        "{a}"
    );
    assert!(a.contains("  until measured, -j1: "), "{a}");
    assert!(a.contains("  does NOT fit if the guess is right: "), "{a}");
    assert!(
        !a.contains("no -j is safe") && !a.contains("not even -j1"),
        "{a}"
    );
}

#[test]
fn status_lists_at_most_eight_swap_devices() {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("many-swap");
    std::fs::create_dir_all(d.join("proc")).unwrap();
    let mut swaps = String::from("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
    for i in 0..16 {
        swaps.push_str(&format!(
            "/dev/zram{i}                              partition\t1024\t\t0\t\t100\n"
        ));
    }
    std::fs::write(d.join("proc/swaps"), swaps).unwrap();
    let out = Command::new(BIN)
        .arg("--root")
        .arg(&d)
        .arg("status")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("/dev/zram").count(), 8, "{text}");
    assert!(text.contains("            and 8 more\n"), "{text}");
}

/// Another build's cc1plus held 301 MiB beside this build, whose own cc1
/// peaked at 51: `--from` sizes from the build's, never the other's.
#[test]
fn from_a_csv_with_a_build_sizes_from_the_builds_compilers_only() {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-from-build");
    std::fs::create_dir_all(&d).unwrap();
    let csv = d.join("r.csv");
    let mut text = String::from(
        "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context,swap_total_mb,zram_stored_mb,zram_ram_mb,tmp_avail_mb,tmp_pct,disk_avail_mb,oom_kills,cg_mem_avail_mb,psi_mem_some_avg10,peak_rss_mb,peak_rss_comm,build_peak_rss_mb,build_peak_rss_comm\n",
    );
    for (i, build) in ["", "51", "31"].iter().enumerate() {
        let comm = if build.is_empty() { "" } else { "cc1" };
        text.push_str(&format!(
            "{i},1970-01-01T00:00:0{i}Z,{i},0.10,50,100,900,10,0,5,50,2,b,\"x\",0,,,100,1,5000,0,,,301,cc1plus,{build},{comm}\n"
        ));
    }
    std::fs::write(&csv, &text).unwrap();
    let args = [
        "--from",
        csv.to_str().unwrap(),
        "--cores",
        "64",
        "--avail-mb",
        "1000",
        "--explain",
    ];
    let (out, err, code) = jobs(&args, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("peak per job:   51 MiB  (measured: ")
            && out.contains("this build's largest compiler (build_peak_rss_mb)"),
        "{out}"
    );
    assert!(out.contains("1000 x 0.9 / 1 / 51 = 17)) = 17\n"), "{out}");
    // The same CSV without build figures (a plain `record`): the host's,
    // said as such.
    let host_only = text
        .replace(",51,cc1\n", ",,\n")
        .replace(",31,cc1\n", ",,\n");
    std::fs::write(&csv, host_only).unwrap();
    let (out, err, code) = jobs(&args, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("peak per job:   301 MiB  (measured: ")
            && out.contains("the largest compiler on the host (peak_rss_mb"),
        "{out}"
    );
}

/// A Pi whose mount table names its root `/dev/root` (no `mmcblk` in
/// it): sysfs still tells the SD card (fixture 35), and the swap advice
/// says swap there wears it.
#[test]
fn a_card_mounted_as_dev_root_is_flash_for_the_swap_advice() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/35-mount-to-diskstats-pi-root"
    );
    let mut cmd = Command::new(BIN);
    cmd.args(["--root", root, "advise", "--peak-mb", "4096"])
        .args(["--avail-mb", "500", "--cores", "4"])
        .env("HOME", "/home/pi")
        .env_remove("BUILDKIT_CACHE_DIR");
    for v in JOB_VARS {
        cmd.env_remove(v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let a = String::from_utf8(out.stdout).unwrap();
    assert!(
        a.contains(
            "  the build disk /dev/root is SD/eMMC flash: swap there wears it out; zram first.\n"
        ),
        "{a}"
    );
    assert!(
        a.contains("# after the build: sudo swapoff /swapfile"),
        "{a}"
    );
}

/// Issue 41, item 3 (2), on fixture 53: a container on a 6.12 kernel built
/// without `CONFIG_MEMCG_V1`, whose /proc/cgroups has no `memory` line
/// whether the controller is on or not, and no cgroup filesystem mounted.
/// The memory limit is unknown and said so, as the CPU limit: `status`
/// (screen and JSON) and `jobs --explain` never plan from the whole RAM
/// as if there were no memory controller.
#[test]
fn fixture_53_proc_cgroups_no_memory_line_6_12_memory_limit_unknown() {
    let root = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/53-proc-cgroups-no-memory-line-6.12"
    );
    let not_mounted = "proc/self/cgroup names a cgroup, but no cgroup filesystem is mounted";
    let run = |args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(["--root", root]).args(args);
        for v in JOB_VARS {
            c.env_remove(v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (screen, err) = run(&["status"]);
    assert!(
        screen.contains(&format!("cgroup mem  unknown ({not_mounted})\n")),
        "{screen}"
    );
    assert!(!screen.contains("no memory controller"), "{screen}");
    assert!(err.contains("memory and CPU limits are unknown"), "{err}");
    let (json, _) = run(&["status", "--json"]);
    assert!(
        json.contains(&format!(
            "\"cgroup_memory\":{{\"state\":\"unknown\",\"reason\":\"{not_mounted}\"}}"
        )),
        "{json}"
    );
    assert!(json.contains(",\"mem_limited_by\":\"unknown\","), "{json}");
    let (explain, err) = run(&["jobs", "--explain"]);
    assert!(err.contains("memory and CPU limits are unknown"), "{err}");
    assert!(
        explain.contains("usable memory:  7449 MiB  (MemAvailable (proc/meminfo); "),
        "{explain}"
    );
    assert!(
        explain.contains("the cgroup's memory limit is unknown)\n"),
        "{explain}"
    );
}
