//! A real OOM kill, recorded: a memory hog in a child memory cgroup with a
//! 64 MiB limit is killed by the kernel, and the CSV and summary say so.
//!
//! Needs root and a writable memory cgroup (v1 `memory.limit_in_bytes` or
//! v2 `memory.max`), so it is `#[ignore]`d in a plain `cargo test`;
//! `ci/test` runs it where it can and reports it as skipped, with the
//! reason, where it cannot.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

/// A child memory cgroup limited to `limit` bytes, removed on drop.
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    fn create(limit: u64) -> Result<Cgroup, String> {
        let name = format!("headroom-oom-test-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, limit_file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1.join(&name), "memory.limit_in_bytes")
        } else if v2.join("cgroup.controllers").exists()
            && fs::read_to_string(v2.join("cgroup.subtree_control"))
                .map(|s| s.contains("memory"))
                .unwrap_or(false)
        {
            (v2.join(&name), "memory.max")
        } else {
            return Err("no memory cgroup controller mounted at /sys/fs/cgroup".into());
        };
        fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cg = Cgroup { dir };
        fs::write(cg.dir.join(limit_file), limit.to_string())
            .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
        // Without swap accounting the limit alone applies; with it, cap both.
        let _ = fs::write(
            cg.dir.join("memory.memsw.limit_in_bytes"),
            limit.to_string(),
        );
        let _ = fs::write(cg.dir.join("memory.swap.max"), "0");
        Ok(cg)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

#[test]
#[ignore = "needs root and a writable memory cgroup; ci/test runs it"]
fn an_oom_kill_in_a_limited_cgroup_is_recorded_with_its_context() {
    let cg = Cgroup::create(64 << 20).unwrap_or_else(|why| panic!("cannot run: {why}"));
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oom");
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
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
    let mut build = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    let rec = Command::new(BIN)
        .args(["record", "--interval", "0.2", "--run-id", "oom"])
        .arg("--out-dir")
        .arg(&d)
        .arg("--stage-log")
        .arg(&log)
        .arg("--watch-pid")
        .arg(build.id().to_string())
        .output()
        .unwrap();
    build.wait().unwrap();
    assert!(rec.status.success(), "{rec:?}");
    let csv = fs::read_to_string(d.join("resources-oom.csv")).unwrap();
    let kills: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(20).unwrap().parse().unwrap())
        .collect();
    assert_eq!(kills.last(), Some(&1), "oom_kills column:\n{csv}");
    let summary = String::from_utf8(rec.stdout).unwrap();
    assert!(summary.contains("kernel OOM-kill events: 1\n"), "{summary}");
    assert!(
        summary.contains("OOM KILLS (rows where the kernel counter rose):\n  +1 at ")
            && summary.contains("stage=hog  context=[ 50%] Building CXX object hog.o\n"),
        "{summary}"
    );
}
