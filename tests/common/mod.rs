//! Shared by the end-to-end tests: a command run with a deadline, and for
//! the root-only ones a child memory cgroup with a limit and its OOM-kill
//! counter.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A child memory cgroup limited to `limit` bytes, removed on drop.
pub struct Cgroup {
    /// The cgroup's directory under /sys/fs/cgroup.
    pub dir: PathBuf,
}

impl Cgroup {
    /// Creates `headroom-<tag>-<pid>` with memory limit `limit` bytes (and
    /// no swap), or says why it cannot.
    pub fn create(tag: &str, limit: u64) -> Result<Cgroup, String> {
        let name = format!("headroom-{tag}-{}", std::process::id());
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

/// The kernel's count of OOM kills in `cg` (v1 `memory.oom_control` and
/// v2 `memory.events` both have an `oom_kill` line).
pub fn cgroup_oom_kills(cg: &Cgroup) -> u64 {
    ["memory.oom_control", "memory.events"]
        .iter()
        .filter_map(|f| fs::read_to_string(cg.dir.join(f)).ok())
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| l.strip_prefix("oom_kill "))
                .filter_map(|v| v.trim().parse().ok())
                .collect::<Vec<u64>>()
        })
        .next()
        .expect("the cgroup has an oom_kill counter (kernel 4.13+)")
}

/// The OOM kills a cgroup's own counter shows of `below` kills made in a
/// child cgroup (headroom's build cgroup): none on v1, whose
/// `memory.oom_control` counts only the cgroup itself; all on v2, whose
/// `memory.events` counts the subtree.
pub fn seen_from_parent(cg: &Cgroup, below: u64) -> u64 {
    if cg.dir.join("memory.oom_control").exists() {
        0
    } else {
        below
    }
}

/// Runs `cmd` with its output captured, killing it and failing if it
/// takes longer than `secs`: a hang must fail the test, not stall CI.
pub fn output_within(cmd: &mut Command, secs: u64) -> std::process::Output {
    output_with_pid(cmd, secs).1
}

/// [`output_within`], also giving the process id it ran as.
pub fn output_with_pid(cmd: &mut Command, secs: u64) -> (u32, std::process::Output) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(secs)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = tx.send(());
    assert!(
        out.status.code().is_some(),
        "killed after {secs} s: it hung ({out:?})"
    );
    (pid, out)
}

/// A copy of tail(1) named `name` in `dir`: its comm is `name` (a
/// "compiler" for headroom), and fed a stream without newlines it holds
/// all of it in memory until the stream ends.
pub fn tail_named(dir: &Path, name: &str) -> PathBuf {
    let tail = ["/usr/bin/tail", "/bin/tail"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("tail(1)");
    let p = dir.join(name);
    fs::copy(tail, &p).unwrap();
    p
}

/// Makes a FIFO at `path` with mkfifo(1).
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}
