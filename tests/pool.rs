//! `headroom run --jobserver --pool DIR`: several builds on one host share
//! one memory budget. As root in one memory cgroup of 600 MiB, three lanes
//! of six ~150 MiB targets each, all started together: each lane's own
//! jobserver sees the same free memory and they OOM-kill each other; with
//! one pool they never spend the same megabytes. Without root: two
//! governors in one pool see each other's leases, a killed one's lease is
//! taken back, hostile files in the pool are ignored.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{Cgroup, HOG, makefile, output_within, overlap, scratch};

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

/// "OOM kills in this build: N" of each lane's summary, summed.
fn build_oom_kills(stderr: &str) -> u64 {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("OOM kills in this build: "))
        .filter_map(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Three lanes of six targets in one new 600 MiB memory cgroup, started
/// together; `pool`: the same `--pool` for all three. Returns the lanes'
/// directories and the shell's output (every lane's stderr).
fn three_lanes(tag: &str, pool: Option<&Path>) -> (Cgroup, Vec<PathBuf>, Output) {
    let cg = Cgroup::create(tag, 600 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = scratch(tag);
    let lanes: Vec<PathBuf> = (0..3).map(|i| d.join(format!("lane{i}"))).collect();
    let pool_arg = pool.map_or(String::new(), |p| format!("--pool {}", p.display()));
    let mut script = format!("echo $$ > {}\n", cg.dir.join("cgroup.procs").display());
    for (i, lane) in lanes.iter().enumerate() {
        fs::create_dir_all(lane).unwrap();
        makefile(lane, 6, HOG);
        script.push_str(&format!(
            "(cd {} && {BIN} run --jobserver --max-jobs 6 --peak-mb 160 {pool_arg} --run-id lane{i} --out-dir out -- make -k) &\n",
            lane.display()
        ));
    }
    script.push_str("wait\n");
    let out = output_within(
        Command::new("sh")
            .args(["-c", &script])
            .env_remove("MAKEFLAGS")
            .env_remove("HEADROOM_POOL"),
        300,
    );
    (cg, lanes, out)
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn three_lanes_in_600_mib_race_without_a_pool() {
    let (_cg, lanes, out) = three_lanes("race", None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (max, ended) = overlap(&lanes);
    // Each lane's governor sees the whole 600 MiB as its own: together
    // they run more than it holds, and the kernel kills.
    assert!(
        build_oom_kills(&stderr) > 0 || ended < 18,
        "no race shown: {max} at once, {ended} ended\n{stderr}"
    );
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn three_lanes_in_600_mib_share_one_pool_and_none_is_killed() {
    let pool = scratch("pool-dir");
    let (_cg, lanes, out) = three_lanes("shared", Some(&pool));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (max, ended) = overlap(&lanes);
    assert_eq!(build_oom_kills(&stderr), 0, "{stderr}");
    assert_eq!(ended, 18, "{stderr}");
    // 600 MiB less the 32 MiB reserve holds three jobs of 160 MiB.
    assert!(max <= 3, "{max} targets at once across the lanes\n{stderr}");
    // Each summary names the pool and the two others.
    let line = format!("  pool {}: shared with 2 other build(s): ", pool.display());
    assert_eq!(stderr.matches(&line).count(), 3, "{stderr}");
    // Every lease is gone with its governor.
    let left: Vec<_> = fs::read_dir(&pool)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("lease-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `run --jobserver --pool POOL --explain -- CMD` in `dir`, its output.
fn pooled(dir: &Path, pool: &Path, run_id: &str, cmd: &[&str]) -> Output {
    output_within(
        Command::new(BIN)
            .args(["run", "--jobserver", "--max-jobs", "2", "--peak-mb", "100"])
            .arg("--pool")
            .arg(pool)
            .args([
                "--explain",
                "--interval",
                "0.2",
                "--run-id",
                run_id,
                "--out-dir",
            ])
            .arg(dir.join("out"))
            .arg("--")
            .args(cmd)
            .env_remove("MAKEFLAGS")
            .env_remove("HEADROOM_POOL"),
        60,
    )
}

fn leases(pool: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(pool)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("lease-"))
        .collect();
    v.sort();
    v
}

/// Starts `run --jobserver OPTS --pool POOL --run-id ID --out-dir DIR/ID --
/// CMD` in the background for each `(ID, OPTS, CMD)` (stderr dropped), and
/// waits until the pool holds a lease of each (10 s at most).
fn start_governors(pool: &Path, dir: &Path, each: &[(&str, &[&str], &[&str])]) -> Vec<Child> {
    let children: Vec<Child> = each
        .iter()
        .map(|(id, opts, cmd)| {
            Command::new(BIN)
                .args(["run", "--jobserver"])
                .args(*opts)
                .arg("--pool")
                .arg(pool)
                .args(["--run-id", id, "--out-dir"])
                .arg(dir.join(id))
                .arg("--")
                .args(*cmd)
                .env_remove("HEADROOM_POOL")
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let t0 = Instant::now();
    while leases(pool).len() < each.len() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(leases(pool).len(), each.len(), "{:?}", leases(pool));
    children
}

#[test]
fn a_killed_governors_lease_is_taken_back_by_the_next() {
    let d = scratch("killed");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    let mut first = start_governors(&pool, &d, &[("doomed", &[], &["sleep", "30"])])
        .pop()
        .unwrap();
    let lease = leases(&pool);
    assert_eq!(lease.len(), 1);
    assert!(
        fs::read_to_string(pool.join(&lease[0]))
            .unwrap()
            .contains("\nrun doomed\n")
    );
    // SIGKILL: no chance to remove its lease. (Its `sleep` lives on.)
    let pid = rustix::process::Pid::from_raw(first.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    first.wait().unwrap();
    assert_eq!(leases(&pool), lease);
    let out = pooled(&d, &pool, "next", &["sleep", "0.5"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: {} (run doomed) belongs to a governor that is gone; removed",
            pool.display(),
            lease[0]
        )),
        "{stderr}"
    );
    assert!(leases(&pool).is_empty(), "{:?}", leases(&pool));
}

#[test]
fn hostile_files_in_the_pool_are_ignored_and_the_build_goes_on() {
    let d = scratch("hostile");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    fs::write(d.join("precious"), "keep").unwrap();
    std::os::unix::fs::symlink(d.join("precious"), pool.join("lease-1-0")).unwrap();
    // A live governor's lease claiming 1 TiB of growth, and garbage, each
    // held locked as a live governor holds its own.
    let greedy = "headroom-lease 1\nuid 0\npid 2\nrun greedy\nlimits\ncap 4\nrunning 1\nallowed 1\npeak_mb 100\nheld_mb 0\ngrowth_mb 1099511627776\nwants_more 1\n";
    fs::write(pool.join("lease-2-0"), greedy).unwrap();
    fs::write(pool.join("lease-3-0"), b"\xff\x00garbage").unwrap();
    let holder = Command::new("sh")
        .args([
            "-c",
            "exec 3<lease-2-0 4<lease-3-0; flock -x 3; flock -x 4; sleep 30",
        ])
        .current_dir(&pool)
        .spawn();
    let Ok(mut holder) = holder else {
        return; // no sh
    };
    std::thread::sleep(Duration::from_millis(300));
    let out = pooled(&d, &pool, "calm", &["sleep", "0.6"]);
    let _ = holder.kill();
    let _ = holder.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for (name, why) in [
        (
            "lease-1-0",
            "not a regular file (a symlink?); ignored, never followed",
        ),
        (
            "lease-2-0",
            "claims 1099511627776 MiB of growth, more than this host has; ignored",
        ),
        ("lease-3-0", "not a lease (Magic); ignored"),
    ] {
        let line = format!(
            "headroom: warning: --pool {}: {name}: {why}",
            pool.display()
        );
        assert_eq!(stderr.matches(&line).count(), 1, "{line}\n{stderr}");
    }
    assert_eq!(fs::read_to_string(d.join("precious")).unwrap(), "keep");
    // Nobody seen: the greedy lease is not counted.
    let line = format!("  pool {}: no other build seen\n", pool.display());
    assert!(stderr.contains(&line), "{stderr}");
    // Two slots by --max-jobs; nothing counted against them.
    assert!(
        stderr.contains("JOBSERVER: up to 2 job(s) at once"),
        "{stderr}"
    );
}

#[test]
fn pool_goes_with_jobserver_and_an_unsafe_directory_is_refused() {
    let d = scratch("usage");
    let out = Command::new(BIN)
        .args(["run", "--pool", "/tmp", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pool goes with --jobserver"));
    // Without --jobserver, $HEADROOM_POOL is not used at all.
    let out = Command::new(BIN)
        .args(["run", "--interval", "0.2", "--run-id", "p", "--out-dir"])
        .arg(d.join("out"))
        .args(["--", "true"])
        .env("HEADROOM_POOL", "/nonexistent")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let open = d.join("open");
    fs::create_dir(&open).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let out = pooled(&d, &open, "x", &["true"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("others may write it (mode 777) and it is not sticky: refused"),
        "{stderr}"
    );
    let out = pooled(&d, &d.join("missing"), "x", &["true"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn status_shows_the_builds_in_a_pool() {
    let d = scratch("status");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    let opts: &[&str] = &["--max-jobs", "3", "--peak-mb", "50"];
    let both = start_governors(
        &pool,
        &d,
        &[
            ("alpha", opts, &["sleep", "3"]),
            ("beta", opts, &["sleep", "3"]),
        ],
    );
    std::thread::sleep(Duration::from_millis(600));
    let out = Command::new(BIN)
        .args(["status", "--pool"])
        .arg(&pool)
        .output()
        .unwrap();
    for mut g in both {
        g.wait().unwrap();
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.contains(&format!("\nPOOL {}: 2 build(s)\n", pool.display())),
        "{text}"
    );
    for id in ["alpha", "beta"] {
        assert!(text.contains(&format!("\n  {id}: 1 running, ")), "{text}");
    }
    assert!(
        text.contains("of 3, 0 paused; peak 50 MiB per job"),
        "{text}"
    );
    // Gone with their governors.
    let out = Command::new(BIN)
        .args(["status", "--pool"])
        .arg(&pool)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(": 0 build(s)\n"), "{text}");
}

#[test]
fn prom_exports_the_jobs_and_the_pool() {
    let d = scratch("prom");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    let mut other = start_governors(
        &pool,
        &d,
        &[(
            "other",
            &["--max-jobs", "2", "--peak-mb", "70"],
            &["sleep", "3"],
        )],
    )
    .pop()
    .unwrap();
    let prom = d.join("h.prom");
    let out = output_within(
        Command::new(BIN)
            .args([
                "run",
                "--jobserver",
                "--max-jobs",
                "3",
                "--peak-mb",
                "50",
                "--pool",
            ])
            .arg(&pool)
            .arg("--prom")
            .arg(&prom)
            .args(["--run-id", "me", "--out-dir"])
            .arg(d.join("me"))
            .args(["--", "sleep", "1"])
            .env_remove("HEADROOM_POOL"),
        60,
    );
    other.wait().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(&prom).unwrap();
    for line in [
        "headroom_pool_builds{run_id=\"me\"} 1\n",
        "headroom_jobs_running{run_id=\"me\"} 1\n",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    // The other build reserves at least its one job of 70 MiB; this one
    // at least one of 50.
    let value = |name: &str| -> u64 {
        let at = text
            .find(&format!("{name}{{"))
            .unwrap_or_else(|| panic!("{name}\n{text}"));
        text[at..]
            .lines()
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(value("headroom_pool_reserved_bytes") >= 70 << 20, "{text}");
    assert!(
        value("headroom_pool_own_reserved_bytes") >= 50 << 20,
        "{text}"
    );
    assert!(value("headroom_jobs_allowed") >= 1, "{text}");
}
