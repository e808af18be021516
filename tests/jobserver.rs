//! `headroom run --jobserver` with real clients: GNU make (the pipe style
//! make 4.3 speaks), cargo (a build script shows cargo passing on the very
//! jobserver headroom made), a client that dies holding tokens, and, as
//! root in a memory cgroup of 400 MiB, eight jobs of ~150 MiB: plain
//! `make -j8` is OOM-killed there, the jobserver's `make` is not.
//!
//! The cgroup tests need root and a writable memory cgroup: `#[ignore]`d in
//! a plain `cargo test`, run one at a time by `ci/test`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{
    BIN, Cgroup, HOG, cgroup_oom_kills, jobs_columns, makefile, ninja, ninja_file, output_within,
    overlap, scratch,
};

fn run_jobserver(dir: &Path, args: &[&str], cmd: &[&str]) -> Output {
    output_within(
        Command::new(BIN)
            .args(["run", "--jobserver", "--run-id", "j", "--out-dir"])
            .arg(dir.join("out"))
            .args(args)
            .arg("--")
            .args(cmd)
            .current_dir(dir)
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("CARGO_MAKEFLAGS"),
        120,
    )
}

fn no_fifo_left(dir: &Path) {
    let left: Vec<_> = fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".headroom-jobserver"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn cmd_gets_the_pipe_in_makeflags_and_cargo_makeflags() {
    let d = scratch("env");
    let out = run_jobserver(
        &d,
        &["--max-jobs", "3"],
        &[
            "sh",
            "-c",
            "echo \"$MAKEFLAGS\" > mf; echo \"$CARGO_MAKEFLAGS\" > cmf; \
             a=${MAKEFLAGS##*--jobserver-auth=}; r=${a%,*}; w=${a#*,}; \
             [ -p /proc/self/fd/$r ] && [ -p /proc/self/fd/$w ] && [ $r != $w ] && echo ok > fds",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let mf = fs::read_to_string(d.join("mf")).unwrap();
    assert!(mf.starts_with("-j3 --jobserver-auth="), "{mf}");
    assert_eq!(fs::read_to_string(d.join("cmf")).unwrap(), mf);
    assert_eq!(fs::read_to_string(d.join("fds")).unwrap(), "ok\n");
    no_fifo_left(&d);
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains("JOBSERVER: up to 3 job(s) at once; peak per job 2000 MiB (generic)"),
        "{summary}"
    );
}

#[test]
fn the_fifo_style_names_a_fifo_that_is_gone_afterwards() {
    let d = scratch("fifo");
    let out = run_jobserver(
        &d,
        &["--jobserver-style", "fifo", "--max-jobs", "2"],
        &[
            "sh",
            "-c",
            "echo \"$MAKEFLAGS\" > mf; p=${MAKEFLAGS##*fifo:}; [ -p \"$p\" ] && echo fifo > kind",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let mf = fs::read_to_string(d.join("mf")).unwrap();
    let path = mf.trim().split("fifo:").nth(1).unwrap();
    assert!(Path::new(path).is_absolute(), "{mf}");
    assert_eq!(fs::read_to_string(d.join("kind")).unwrap(), "fifo\n");
    assert!(!Path::new(path).exists());
    no_fifo_left(&d);
}

#[test]
fn make_runs_as_many_jobs_as_the_slots_and_no_more() {
    let d = scratch("make");
    makefile(&d, 6, "sleep 0.6");
    let began = Instant::now();
    let out = run_jobserver(&d, &["--max-jobs", "3"], &["make"]);
    let took = began.elapsed();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(overlap(&[&d]), (3, 6));
    let cols = jobs_columns(&d.join("out/resources-j.csv"));
    assert!(cols.iter().all(|&(r, a)| r <= 3 && a == 3), "{cols:?}");
    assert!(cols.iter().any(|&(r, _)| r == 3), "{cols:?}");
    // Rows at the sampling interval, 1 s (the governor ticks every 0.25 s
    // between them): at its tick there were 4 a second.
    assert!(
        cols.len() as f64 <= took.as_secs_f64() + 2.0,
        "{} rows in {took:?}",
        cols.len()
    );
    no_fifo_left(&d);
    // summarize --json of the CSV says what its jobs columns say.
    let out = Command::new(BIN)
        .args(["summarize", "--json"])
        .arg(d.join("out/resources-j.csv"))
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(
        json.contains(",\"jobs_max\":3,")
            && json.contains("\"pauses\":0,\"paused_ms\":0,\"allowed_max\":3}"),
        "{json}"
    );
}

#[test]
fn with_memory_to_spare_make_reaches_the_core_count() {
    let d = scratch("cores");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    makefile(&d, 2 * cores, "sleep 0.6");
    let out = run_jobserver(&d, &[], &["make"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(overlap(&[&d]), (cores, 2 * cores));
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(
        summary.contains(&format!("JOBSERVER: up to {cores} job(s) at once")),
        "{summary}"
    );
}

#[test]
fn a_peak_larger_than_memory_leaves_one_job_and_explain_says_why() {
    let d = scratch("one");
    makefile(&d, 4, "sleep 0.3");
    let out = run_jobserver(
        &d,
        &["--max-jobs", "4", "--peak-mb", "100000000", "--explain"],
        &["make"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(overlap(&[&d]), (1, 4));
    let err = String::from_utf8_lossy(&out.stderr);
    // The peak per job it starts from, said once: stated, it never moves
    // (no compiler runs here).
    assert!(
        err.contains(
            "headroom: jobserver: peak per job 100000000 MiB to start (--peak-mb, as given)\n"
        ),
        "{err}"
    );
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("headroom: jobserver: ") && l.contains(" at once "))
        .collect();
    assert_eq!(said.len(), 1, "one line per change: {err}");
    assert!(!err.contains("peak per job 100000000 MiB →"), "{err}");
    assert!(said[0].contains("1 job(s) at once (memory: room "), "{err}");
    assert!(err.contains("throttled by memory: "), "{err}");
}

#[test]
fn a_client_that_dies_holding_tokens_does_not_hang_headroom() {
    let d = scratch("dies");
    let start = Instant::now();
    // Wait for the tokens, take two through the pipe, die with them.
    let out = run_jobserver(
        &d,
        &["--max-jobs", "3"],
        &[
            "sh",
            "-c",
            "a=${MAKEFLAGS##*--jobserver-auth=}; r=${a%,*}; sleep 0.5; \
             head -c 2 /proc/self/fd/$r > took; exit 5",
        ],
    );
    assert_eq!(out.status.code(), Some(5), "{out:?}");
    assert_eq!(fs::read(d.join("took")).unwrap().len(), 2);
    assert!(start.elapsed() < Duration::from_secs(30));
    no_fifo_left(&d);
}

#[test]
fn tokens_a_client_forges_are_taken_back_and_the_cap_holds() {
    let d = scratch("forge");
    makefile(&d, 6, "sleep 0.5");
    // Six bytes written into the pipe that headroom never gave out; once
    // the pipe holds no more than the one token it gives (read with
    // FIONREAD, not a sleep: a loaded machine's tick comes late), make:
    // it must still run at most two jobs at once. Bytes never taken back
    // are still there after 20 s, and make runs six.
    let wait = "import array, fcntl, sys, termios, time\n\
                for _ in range(400):\n\
                \x20   n = array.array('i', [0])\n\
                \x20   fcntl.ioctl(int(sys.argv[1]), termios.FIONREAD, n)\n\
                \x20   if n[0] <= 1: break\n\
                \x20   time.sleep(0.05)\n";
    let out = run_jobserver(
        &d,
        &["--max-jobs", "2"],
        &[
            "sh",
            "-c",
            "a=${MAKEFLAGS##*--jobserver-auth=}; r=${a%,*}; w=${a#*,}; \
             printf '++++++' > /proc/self/fd/$w; python3 -c \"$1\" $r; exec make",
            "sh",
            wait,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(overlap(&[&d]), (2, 6));
}

#[test]
fn count_is_refused() {
    let d = scratch("count");
    let out = run_jobserver(&d, &["--count", "3"], &["true"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Issue 33: `run --jobserver -- make -j2` means at most 2, as memory
/// allows: the -j is taken out of make's command line (make's own -j
/// beside the jobserver makes make say "resetting jobserver mode" and run
/// its own slots), its 2 is the cap (below --max-jobs 4), and that is
/// said once.
#[test]
fn make_s_own_j_is_taken_out_and_is_the_cap() {
    let d = scratch("own-j");
    makefile(&d, 6, "sleep 0.6");
    let out = run_jobserver(&d, &["--max-jobs", "4"], &["make", "-j2"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("headroom: --jobserver: make's -j2 is the cap (at most 2 jobs, as memory allows); headroom hands out the slots\n").count(),
        1,
        "{err}"
    );
    assert!(
        !err.contains("jobserver mode"),
        "make saw its own -j: {err}"
    );
    assert!(!err.contains("warning: --jobserver"), "{err}");
    assert_eq!(overlap(&[&d]), (2, 6));
    let cols = jobs_columns(&d.join("out/resources-j.csv"));
    assert!(cols.iter().all(|&(r, a)| r <= 2 && a == 2), "{cols:?}");
    assert!(
        err.contains("JOBSERVER: up to 2 job(s) at once") && err.contains("RUN: make\n"),
        "{err}"
    );
}

/// Issue 33: behind a wrapper (`nice -n 5 make -j2`) make's own -j is
/// found, taken out and is the cap, as when make is CMD itself.
#[test]
fn make_s_own_j_behind_nice_is_taken_out_and_is_the_cap() {
    let d = scratch("nice-j");
    makefile(&d, 6, "sleep 0.6");
    let out = run_jobserver(
        &d,
        &["--max-jobs", "4"],
        &["nice", "-n", "1", "make", "-j2"],
    );
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "headroom: --jobserver: make's -j2 is the cap (at most 2 jobs, as memory allows)"
        ),
        "{err}"
    );
    assert!(
        !err.contains("jobserver mode"),
        "make saw its own -j: {err}"
    );
    assert_eq!(overlap(&[&d]), (2, 6));
    assert!(err.contains("RUN: nice -n 1 make\n"), "{err}");
}

/// Issue 33: a -j headroom cannot take out (inside `sh -c`) is warned
/// about, and the JOBSERVER block says the jobs that really ran (three,
/// make's own slots), not the one slot it had to give.
#[test]
fn a_j_inside_sh_c_is_warned_and_the_jobs_that_ran_are_said() {
    let d = scratch("sh-j");
    makefile(&d, 3, "sleep 2");
    let out = run_jobserver(&d, &["--max-jobs", "1"], &["sh", "-c", "make -j3"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(overlap(&[&d]), (3, 3), "make ran its own slots");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "headroom: warning: --jobserver: 'make -j3' in sh's script makes it run its own slots"
        ),
        "{err}"
    );
    let block = jobserver_block(&err);
    assert!(
        block
            .starts_with("JOBSERVER: its slots did not bind: the build ran up to 3 job(s) at once")
            && block.contains("  jobs at once (the build's own processes): max 3;")
            && !block.contains("up to 1 job(s)")
            && !block.contains("slots in use"),
        "{block}"
    );
    let cols = jobs_columns(&d.join("out/resources-j.csv"));
    assert!(cols.iter().any(|&(r, _)| r == 3), "{cols:?}");
    assert!(cols.iter().all(|&(r, a)| r <= 3 && a == 1), "{cols:?}");
}

#[test]
fn cargo_builds_through_the_same_jobserver() {
    let d = scratch("cargo");
    let krate = d.join("tiny");
    fs::create_dir_all(krate.join("src")).unwrap();
    fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    fs::write(krate.join("src/main.rs"), "fn main() {}\n").unwrap();
    // cargo hands its jobserver on to build scripts: this one writes down
    // which it got.
    fs::write(
        krate.join("build.rs"),
        "fn main() { std::fs::write(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/seen\"), \
         std::env::var(\"CARGO_MAKEFLAGS\").unwrap_or_default()).unwrap(); }\n",
    )
    .unwrap();
    let out = output_within(
        Command::new(BIN)
            .args(["run", "--jobserver", "--max-jobs", "2", "--run-id", "j"])
            .arg("--out-dir")
            .arg(krate.join("out"))
            .args(["--", "sh", "-c"])
            .arg("echo \"$CARGO_MAKEFLAGS\" > ours; exec cargo build --offline --quiet")
            .current_dir(&krate)
            .env("CARGO_TARGET_DIR", krate.join("target"))
            .env("MAKEFLAGS", "-k")
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("RUSTC_WRAPPER"),
        300,
    );
    assert!(out.status.success(), "{out:?}");
    let seen = fs::read_to_string(krate.join("seen")).unwrap();
    let ours = seen
        .split_whitespace()
        .find(|w| w.starts_with("--jobserver-auth="))
        .unwrap_or_else(|| panic!("cargo passed no jobserver: {seen:?}"));
    // The very descriptors headroom handed over (with the caller's -k
    // kept), not a jobserver of cargo's own: that would be a new pipe.
    let given = fs::read_to_string(krate.join("ours")).unwrap();
    assert!(given.starts_with("-k -j2 --jobserver-auth="), "{given}");
    assert!(
        given.split_whitespace().any(|w| w == ours),
        "{given} vs {seen}"
    );
    // The summary says the jobserver ran.
    let summary = fs::read_to_string(krate.join("out/resources-j.summary.txt")).unwrap();
    assert!(
        summary.contains("JOBSERVER: up to 2 job(s) at once"),
        "{summary}"
    );
}

#[test]
fn without_jobserver_run_is_as_before() {
    let d = scratch("plain");
    let out = output_within(
        Command::new(BIN)
            .args(["run", "--interval", "0.2", "--run-id", "j", "--out-dir"])
            .arg(d.join("out"))
            .args(["--", "sh", "-c", "echo \"${MAKEFLAGS-unset}\" > mf"])
            .current_dir(&d)
            .env_remove("MAKEFLAGS"),
        60,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(fs::read_to_string(d.join("mf")).unwrap(), "unset\n");
    let csv = fs::read_to_string(d.join("out/resources-j.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap().split(',').count(),
        common::FULL_WIDTH
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("JOBSERVER"));
    // Its options alone are a usage error.
    for opt in [
        &["--max-jobs", "2"][..],
        &["--peak-mb", "100"],
        &["--explain"],
        &["--jobserver-style", "fifo"],
    ] {
        let out = Command::new(BIN)
            .arg("run")
            .args(opt)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{opt:?}");
    }
    let out = Command::new(BIN)
        .args([
            "run",
            "--jobserver",
            "--jobserver-style",
            "socket",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `sh -c "exec BUILD"` in a new 400 MiB memory cgroup, in a scratch
/// directory that `files` fills (a Makefile or build.ninja of eight
/// [`HOG`]s).
fn in_cgroup(tag: &str, files: impl FnOnce(&Path), build: &str) -> (Cgroup, PathBuf, Output) {
    let cg = Cgroup::create(tag, 400 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch(tag);
    files(&d);
    let out = common::sh_in_cgroup(&cg, &d, &format!("exec {build}"), 180);
    (cg, d, out)
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn in_a_400_mib_cgroup_plain_make_j8_is_oom_killed() {
    let (cg, _, out) = in_cgroup("js-plain", |d| makefile(d, 8, HOG), "make -j8 -k");
    let kills = cgroup_oom_kills(&cg);
    assert!(kills > 0, "no OOM kill: {out:?}");
    assert!(!out.status.success());
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn in_a_400_mib_cgroup_the_jobserver_build_is_never_oom_killed() {
    let (cg, d, out) = in_cgroup(
        "js-gov",
        |d| makefile(d, 8, HOG),
        &format!(
            "{BIN} run --jobserver --max-jobs 8 --peak-mb 160 --run-id j --out-dir out -- make"
        ),
    );
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{summary}");
    // headroom, in the limited cgroup itself, was not killed (the build, in
    // its own cgroup below, is counted by the summary line below).
    assert_eq!(cgroup_oom_kills(&cg), 0, "{summary}");
    // Eight slots by --max-jobs: memory alone held it to two.
    let (max, ended) = overlap(&[&d]);
    assert_eq!(ended, 8);
    assert!((1..=2).contains(&max), "{max} at once");
    assert!(
        summary.contains("JOBSERVER: up to 8 job(s) at once"),
        "{summary}"
    );
    // The build's own count (the host's is anyone's).
    assert!(
        summary.contains("\nOOM kills in this build: 0 (its cgroup's"),
        "{summary}"
    );
    assert!(summary.contains("JOBSERVER: "), "{summary}");
}

#[test]
fn ninja_gets_the_fifo_and_uses_the_slots() {
    let Some(ninja) = ninja() else { return };
    let d = scratch("ninja");
    ninja_file(&d, 8, "sleep 0.6");
    let out = run_jobserver(&d, &["--max-jobs", "3", "--peak-mb", "10"], &[&ninja]);
    assert!(out.status.success(), "{out:?}");
    // Chosen for ninja without --jobserver-style: the FIFO form (PyPI's
    // build would also take the pipe form, so a finished build proves
    // nothing: the MAKEFLAGS its jobs saw do).
    let mf = fs::read_to_string(d.join("t0.mf")).unwrap();
    assert!(mf.contains("--jobserver-auth=fifo:"), "{mf}");
    let (max, ended) = overlap(&[&d]);
    assert_eq!(ended, 8);
    assert!((2..=3).contains(&max), "{max} at once");
    no_fifo_left(&d);
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn in_a_400_mib_cgroup_ninja_under_the_jobserver_is_never_oom_killed() {
    let Some(ninja) = ninja() else { return };
    let (cg, d, out) = in_cgroup(
        "js-ninja",
        |d| ninja_file(d, 8, HOG),
        &format!(
            "{BIN} run --jobserver --max-jobs 8 --peak-mb 160 --run-id j --out-dir out -- {ninja}"
        ),
    );
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{summary}");
    assert_eq!(cgroup_oom_kills(&cg), 0, "{summary}");
    let (max, ended) = overlap(&[&d]);
    assert_eq!(ended, 8);
    assert!((1..=2).contains(&max), "{max} at once");
    assert!(
        summary.contains("\nOOM kills in this build: 0 (its cgroup's"),
        "{summary}"
    );
}

/// Issue 16: `run` without `--interval` widens from 1 s, with the
/// jobserver too: its governor ticks every 250 ms between the rows, which
/// stay at the sampling interval (they were at its tick: a six-hour build
/// left 86,000 rows).
#[test]
fn without_interval_the_jobserver_rows_are_the_sampling_interval_s() {
    let d = scratch("tick-rows");
    let out = run_jobserver(&d, &[], &["sleep", "3"]);
    assert!(out.status.success(), "{out:?}");
    let csv = fs::read_to_string(d.join("out/resources-j.csv")).unwrap();
    let rows = csv.lines().skip(1).count();
    // 3 s at 1 s: 0, 1, 2, (3,) the final one; at 250 ms it was about 13.
    assert!((3..=5).contains(&rows), "{rows} rows:\n{csv}");
    // Each row has the governor's figures all the same.
    let cols = jobs_columns(&d.join("out/resources-j.csv"));
    assert_eq!(cols.len(), rows);
    assert!(cols.iter().all(|&(r, a)| r == 1 && a >= 1), "{cols:?}");
    // --interval still sets the rows, not the governor's tick.
    let d = scratch("tick-rows-2s");
    let out = run_jobserver(&d, &["--interval", "2"], &["sleep", "3"]);
    assert!(out.status.success(), "{out:?}");
    let rows = jobs_columns(&d.join("out/resources-j.csv")).len();
    assert!((2..=3).contains(&rows), "{rows} rows");
}

/// A recipe of python3 (by its own path, so its comm is `python3`: a
/// "compiler" with `--compilers python3`) holding `mib` MiB, resident,
/// for `secs` s.
fn holder(mib: u32, secs: f64) -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    let py = String::from_utf8(out.stdout).unwrap().trim().to_string();
    format!(
        "{py} -c 'import time; t = time.time(); b = bytearray({mib} << 20); time.sleep(max(0, {secs} - (time.time() - t)))'"
    )
}

/// The peak a pool remembers for run id `run`, from its `peak-RUN`.
fn remembered(pool: &Path, run: &str) -> u64 {
    let text = fs::read_to_string(pool.join(format!("peak-{run}")))
        .unwrap_or_else(|e| panic!("peak-{run}: {e}"));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("headroom-peak 1"), "{text}");
    lines
        .find_map(|l| l.strip_prefix("peak_mb "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{text}"))
}

/// The JOBSERVER block of a summary on stderr.
fn jobserver_block(stderr: &str) -> &str {
    let at = stderr
        .find("JOBSERVER: ")
        .unwrap_or_else(|| panic!("no JOBSERVER block: {stderr}"));
    &stderr[at..]
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn a_second_run_starts_from_the_peak_the_pool_remembers_and_from_works() {
    use headroom::govern::jobserver::estimate::with_margin;
    let cg =
        Cgroup::create("js-remember", 400 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch("remember");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    // Three jobs of python3 holding 60 MiB (about 70 resident), measured as
    // compilers.
    makefile(&d, 3, &holder(60, 1.0));
    let run = |extra: &str| {
        let _ = fs::remove_file(d.join("log"));
        let out = common::sh_in_cgroup(
            &cg,
            &d,
            &format!(
                "exec {BIN} run --jobserver --explain --compilers python3 {extra} --run-id rem --out-dir out -- make"
            ),
            120,
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        assert_eq!(overlap(&[&d]).1, 3, "{stderr}");
        stderr
    };
    let with_pool = format!("--pool {}", pool.display());
    // The first run: nothing remembered, the profile's guess; at its end
    // the pool remembers what its jobs measured.
    let first = run(&with_pool);
    assert!(
        first.contains(
            "headroom: jobserver: peak per job 2000 MiB to start (profile generic, a guess)\n"
        ),
        "{first}"
    );
    let peak = remembered(&pool, "rem");
    assert!((60..=120).contains(&peak), "{peak} MiB\n{first}");
    assert!(
        first.contains(&format!(
            "remembers {peak} MiB, the largest peak of run rem's jobs"
        )),
        "{first}"
    );
    // The second starts there, plus the margin; --explain and the
    // JOBSERVER block say so.
    let second = run(&with_pool);
    let said = format!("(--pool: an earlier run measured {peak} MiB, + 10 %)");
    assert!(
        second.contains(&format!(
            "headroom: jobserver: peak per job {} MiB to start {said}\n",
            with_margin(peak)
        )),
        "{second}"
    );
    assert!(jobserver_block(&second).contains(&said), "{second}");
    // --from a recording: its largest compiler as `jobs --from` reads it,
    // ahead of the pool's and of --peak-mb.
    let csv = d.join("out/resources-rem.csv");
    let jobs = Command::new(BIN)
        .args(["jobs", "--explain", "--from"])
        .arg(&csv)
        .output()
        .unwrap();
    let jobs = String::from_utf8_lossy(&jobs.stdout).into_owned();
    let measured: u64 = jobs
        .lines()
        .find_map(|l| l.strip_prefix("peak per job:"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{jobs}"));
    let third = run(&format!(
        "{with_pool} --peak-mb 500 --from {}",
        csv.display()
    ));
    let said = format!("(--from: an earlier run measured {measured} MiB, + 10 %)");
    assert!(
        third.contains(&format!(
            "headroom: jobserver: peak per job {} MiB to start {said} [",
            with_margin(measured)
        )),
        "{third}"
    );
    assert!(
        third.contains("; --peak-mb 500 not used: a measurement comes first\n"),
        "{third}"
    );
    assert!(jobserver_block(&third).contains(&said), "{third}");
}

#[test]
fn from_goes_with_jobserver_and_a_csv_without_a_peak_stops_the_run_before_cmd() {
    let d = scratch("from-bad");
    fs::write(
        d.join("empty.csv"),
        "epoch,iso,elapsed_s,load1,cpu_pct,mem_used_mb,mem_avail_mb,mem_pct,swap_used_mb,disk_avail_gb,disk_pct,compilers,stage,context\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--from", "empty.csv", "--", "true"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    for csv in ["empty.csv", "missing.csv"] {
        let out = run_jobserver(&d, &["--from", csv], &["sh", "-c", "echo ran > ran"]);
        assert!(!out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(csv), "{err}");
        assert!(!d.join("ran").exists(), "CMD ran: {err}");
    }
}

#[test]
fn a_bad_remembered_peak_is_warned_about_and_ignored() {
    let d = scratch("bad-peak");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    fs::write(pool.join("peak-j"), "peak_mb 350\n").unwrap();
    let out = run_jobserver(
        &d,
        &["--max-jobs", "2", "--pool", pool.to_str().unwrap()],
        &["sh", "-c", "echo ran > ran"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(d.join("ran").exists(), "{err}");
    assert!(
        err.contains(&format!(
            "headroom: warning: --pool {}: peak-j: not a peak file (Magic); ignored\n",
            pool.display()
        )),
        "{err}"
    );
    assert!(err.contains("peak per job 2000 MiB (generic)"), "{err}");
    // No compiler ran: nothing measured, the file is left as it was.
    assert_eq!(
        fs::read_to_string(pool.join("peak-j")).unwrap(),
        "peak_mb 350\n"
    );
}

/// Issue 35: with `--pool`, each job's own peak is remembered by the key
/// its command line names (here `python3 … tN.out`: its last word), in
/// `DIR/jobs-ID` (run id `j`); the next run weighs each job by it, and `--explain` and
/// the JOBSERVER block say so. Not root: no memory pressure is needed to
/// see what is remembered and said.
#[test]
fn each_job_s_own_peak_is_remembered_by_its_key_and_the_next_run_weighs_it() {
    let d = scratch("job-peaks");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    fs::write(
        d.join("hold.py"),
        "import sys, time\nb = bytearray(int(sys.argv[1]) << 20)\ntime.sleep(0.8)\nopen(sys.argv[2], 'w').write('x')\n",
    )
    .unwrap();
    // Two jobs of 90 MiB, two of 30: make runs each recipe directly
    // (no shell syntax), so the job's command line is python3's.
    fs::write(
        d.join("Makefile"),
        "all: t1.out t2.out t3.out t4.out\nt1.out t2.out:\n\tpython3 hold.py 90 $@\nt3.out t4.out:\n\tpython3 hold.py 30 $@\n",
    )
    .unwrap();
    let run = || {
        for i in 1..=4 {
            let _ = fs::remove_file(d.join(format!("t{i}.out")));
        }
        let out = run_jobserver(
            &d,
            &[
                "--max-jobs",
                "2",
                "--pool",
                pool.to_str().unwrap(),
                "--explain",
            ],
            &["make"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    let first = run();
    assert!(
        first.contains("remembers the peaks of run j's 4 job(s), each by its key"),
        "{first}"
    );
    assert!(
        jobserver_block(&first).contains(
            "  per-job peaks: 0 of 4 job(s) started with a remembered peak (none remembered yet); 4 measured for the next run\n"
        ),
        "{first}"
    );
    // The file: heaviest first, each job's largest process's VmHWM.
    let table = fs::read_to_string(pool.join("jobs-j")).unwrap();
    let mut lines = table.lines();
    assert_eq!(lines.next(), Some("headroom-job-peaks 1"), "{table}");
    let peaks: Vec<(u64, String)> = lines
        .filter_map(|l| {
            let (mb, key) = l.split_once(' ')?;
            Some((mb.parse().ok()?, key.to_string()))
        })
        .collect();
    let peak_of = |k: &str| {
        peaks
            .iter()
            .find(|(_, key)| key == k)
            .map(|(mb, _)| *mb)
            .unwrap_or_else(|| panic!("no {k} in {table}"))
    };
    for k in ["t1.out", "t2.out"] {
        assert!((90..=140).contains(&peak_of(k)), "{k}: {table}");
    }
    for k in ["t3.out", "t4.out"] {
        assert!((30..=80).contains(&peak_of(k)), "{k}: {table}");
    }
    // The next run: each job started with its own peak, + 10 %.
    let second = run();
    for k in ["t1.out", "t2.out", "t3.out", "t4.out"] {
        let mb = peak_of(k);
        let said = format!(
            " {k} started, expected peak {} MiB (remembered {mb} MiB + 10 %)",
            mb + (mb * 10).div_ceil(100)
        );
        assert!(second.contains(&said), "{said}\n{second}");
    }
    let block = jobserver_block(&second);
    assert!(
        block.contains(
            "  per-job peaks: 4 of 4 job(s) started with a remembered peak; largest error "
        ),
        "{second}"
    );
}

/// Issue 42: `run --jobserver -- make -j4` ran 5 jobs at once while one
/// was paused ("the cap, 4, and 1 for the paused job(s)"). A cap the user
/// gave (make's own `-j2` here, taken out) is at most that many jobs, the
/// paused ones included. The pool remembers `big` far above memory: it is
/// paused at its start beside `a`, and no third job starts in its slot.
/// Not root: the remembered peak, not memory pressure, pauses it.
#[test]
fn a_j_the_user_gave_is_never_exceeded_while_a_job_is_paused() {
    let d = scratch("hard-cap");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    fs::write(
        pool.join("jobs-j"),
        "headroom-job-peaks 1\nothers_mb 0\n1000000 big\n1 a\n1 l1\n1 l2\n1 l3\n1 l4\n",
    )
    .unwrap();
    fs::write(
        d.join("job.sh"),
        "echo \"start $2 $(date +%s.%N)\" >> log\nsleep $1\necho \"end $2 $(date +%s.%N)\" >> log\n",
    )
    .unwrap();
    // Each recipe run directly (no shell syntax): keyed by its last word.
    // `big` starts when `l1` ends, beside `a`.
    fs::write(
        d.join("Makefile"),
        "all: a l1 big l2 l3 l4\na:\n\tsh job.sh 4 $@\nbig:\n\tsh job.sh 1 $@\nl1 l2 l3 l4:\n\tsh job.sh 1 $@\n",
    )
    .unwrap();
    let out = run_jobserver(
        &d,
        &["--pool", pool.to_str().unwrap(), "--explain"],
        &["make", "-j2"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let paused = stderr
        .lines()
        .any(|l| l.starts_with("headroom: jobserver: paused job ") && l.contains(" big ("));
    assert!(paused, "big was never paused: {stderr}");
    assert!(!stderr.contains("for the paused job(s)"), "{stderr}");
    assert_eq!(overlap(&[&d]), (2, 6), "{stderr}");
}

/// The keys `DIR/jobs-j` remembers, sorted.
fn remembered_keys(pool: &Path) -> Vec<String> {
    let table = fs::read_to_string(pool.join("jobs-j")).unwrap();
    let mut keys: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(' '))
        .filter(|(mb, _)| mb.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, k)| k.to_string())
        .collect();
    keys.sort();
    keys
}

/// A holder of `mib` MiB for 0.8 s writing `out` (`hold.py` in `dir`):
/// long enough for the governor, at 0.25 s, to key it.
fn hold_py(dir: &Path) {
    fs::write(
        dir.join("hold.py"),
        "import sys, time\nb = bytearray(int(sys.argv[1]) << 20)\ntime.sleep(0.8)\nopen(sys.argv[2], 'w').write('x')\n",
    )
    .unwrap();
}

/// Issue 42: lanes running one build as `make` in /src and as `make -C
/// /src` from / stored one compile as `sqlite3.c` and `/src/sqlite3.c`.
/// A job's key is relative to the build tool's own directory (make's
/// after `-C`), whatever directory headroom and CMD start in; a
/// sub-make's `-C a` and a recipe's `cd c &&` still name their
/// subdirectory. Three ways of starting one build, one pool: one set of
/// keys, and the second and third runs start every job with its peak.
#[test]
fn a_job_s_key_is_the_same_whatever_directory_make_was_started_from() {
    let d = scratch("keys-dirs");
    let src = d.join("src");
    for sub in ["a", "b", "c"] {
        fs::create_dir_all(src.join(sub)).unwrap();
    }
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    hold_py(&src);
    fs::write(
        src.join("Makefile"),
        "all: top.out subs c/u.out\ntop.out:\n\tpython3 hold.py 5 $@\nsubs:\n\t$(MAKE) -C a\n\t$(MAKE) -C b\nc/u.out:\n\tcd c && python3 ../hold.py 5 u.out\n",
    )
    .unwrap();
    for sub in ["a", "b"] {
        fs::write(
            src.join(sub).join("Makefile"),
            "u.out:\n\tpython3 ../hold.py 5 $@\n",
        )
        .unwrap();
    }
    let pool_arg = pool.to_str().unwrap();
    let ways: [(&Path, &[&str]); 3] = [
        (&src, &["make"]),
        (&d, &["make", "-C", "src"]),
        (&d, &["sh", "-c", "cd src && make"]),
    ];
    for (i, (at, cmd)) in ways.iter().enumerate() {
        for f in ["top.out", "a/u.out", "b/u.out", "c/u.out"] {
            let _ = fs::remove_file(src.join(f));
        }
        let out = run_jobserver(
            at,
            &["--max-jobs", "2", "--pool", pool_arg, "--explain"],
            cmd,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{cmd:?}: {stderr}");
        assert_eq!(
            remembered_keys(&pool),
            ["a/u.out", "b/u.out", "c/u.out", "top.out"],
            "{cmd:?}: {stderr}"
        );
        if i > 0 {
            assert!(
                jobserver_block(&stderr)
                    .contains("  per-job peaks: 4 of 4 job(s) started with a remembered peak"),
                "{cmd:?}: {stderr}"
            );
        }
    }
}

/// Issue 42: `N := $(shell seq 1 4)` was recorded as a job named `4`.
/// What make runs for `$(shell …)`, while it reads the Makefile or
/// expands a recipe, holds no slot and is no job: not started, keyed or
/// remembered (make reads its output through a pipe: followed::makeshell).
/// Each lasts 1.5 s, so the governor sees it.
#[test]
fn make_s_shell_function_commands_are_no_jobs() {
    let d = scratch("shell-fn");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    hold_py(&d);
    fs::write(
        d.join("Makefile"),
        "N := $(shell sleep 1.5; seq 1 4)\nall: t1.out t2.out\nt1.out:\n\tpython3 hold.py 5 $@\nt2.out:\n\tpython3 hold.py 5 $@ $(shell sleep 1.5; true)\n",
    )
    .unwrap();
    let out = run_jobserver(
        &d,
        &[
            "--max-jobs",
            "2",
            "--pool",
            pool.to_str().unwrap(),
            "--explain",
        ],
        &["make"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(remembered_keys(&pool), ["t1.out", "t2.out"], "{stderr}");
    let started: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("headroom: jobserver: job ") && l.contains(" started"))
        .collect();
    assert_eq!(started.len(), 2, "{stderr}");
    assert!(
        jobserver_block(&stderr).contains("; 2 measured for the next run"),
        "{stderr}"
    );
}
