//! Shared by the end-to-end tests: the binary under test (its path, a run
//! of it with arguments), a command run with a deadline, a scratch
//! directory, builds whose targets log when they start and end (and
//! what those logs and a recording's jobs columns say), and for the
//! root-only ones a child memory cgroup with a limit and its OOM-kill
//! counter, a hand-made minimal container ([`namespace`]), and SQLite's
//! amalgamation to compile ([`sqlite`]).
//!
//! Each test binary compiles this file on its own and uses only part of it:
//! hence `dead_code` allowed for the whole module.
#![allow(dead_code)]

pub mod namespace;
pub mod sqlite;

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
        Cgroup::make(tag, limit, false)
    }

    /// Like [`Cgroup::create`], but the cgroup may swap: only its memory
    /// is limited (memsw and `memory.swap.max` left unlimited), so what
    /// exceeds `limit` is pushed into swap instead of OOM-killed.
    pub fn create_swapping(tag: &str, limit: u64) -> Result<Cgroup, String> {
        Cgroup::make(tag, limit, true)
    }

    fn make(tag: &str, limit: u64, swap: bool) -> Result<Cgroup, String> {
        let name = format!("headroom-{tag}-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        let v2 = Path::new("/sys/fs/cgroup");
        let (parent, limit_file) = if v1.join("memory.limit_in_bytes").exists() {
            (v1, "memory.limit_in_bytes")
        } else if v2.join("cgroup.controllers").exists()
            && fs::read_to_string(v2.join("cgroup.subtree_control"))
                .map(|s| s.contains("memory"))
                .unwrap_or(false)
        {
            (v2, "memory.max")
        } else {
            return Err("no memory cgroup controller mounted at /sys/fs/cgroup".into());
        };
        remove_stale(parent, tag);
        let dir = parent.join(&name);
        fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cg = Cgroup { dir };
        fs::write(cg.dir.join(limit_file), limit.to_string())
            .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
        if swap {
            return Ok(cg);
        }
        // Without swap accounting the limit alone applies; with it, cap both.
        let _ = fs::write(
            cg.dir.join("memory.memsw.limit_in_bytes"),
            limit.to_string(),
        );
        let _ = fs::write(cg.dir.join("memory.swap.max"), "0");
        Ok(cg)
    }

    /// The cgroup's name (its directory's last component), as the kernel
    /// writes it in the paths it logs.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Whether this is a cgroup v1 memory cgroup (else v2).
    pub fn is_v1(&self) -> bool {
        self.dir.join("memory.limit_in_bytes").exists()
    }

    /// Checks that the cgroup may not swap beyond its memory limit, as
    /// `docker run -m X --memory-swap X` sets it: v1
    /// `memory.memsw.limit_in_bytes` equal to `memory.limit_in_bytes`,
    /// v2 `memory.swap.max` 0.
    pub fn swap_capped(&self) -> Result<(), String> {
        let read = |f: &str| {
            fs::read_to_string(self.dir.join(f))
                .map(|s| s.trim().to_string())
                .map_err(|e| format!("{f}: {e} (no swap accounting?)"))
        };
        if self.is_v1() {
            let (mem, memsw) = (
                read("memory.limit_in_bytes")?,
                read("memory.memsw.limit_in_bytes")?,
            );
            (mem == memsw)
                .then_some(())
                .ok_or(format!("memsw limit {memsw} is not the limit {mem}"))
        } else {
            let max = read("memory.swap.max")?;
            (max == "0")
                .then_some(())
                .ok_or(format!("memory.swap.max is {max}, not 0"))
        }
    }

    /// The cgroup's memory as the kernel accounts it now.
    pub fn memory(&self) -> CgroupMemory {
        let num = |f: &str| -> u64 {
            let t = fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            t.trim().parse().unwrap_or(u64::MAX)
        };
        let stat = fs::read_to_string(self.dir.join("memory.stat")).unwrap_or_default();
        let key = |k: &str| -> u64 {
            stat.lines()
                .find_map(|l| l.strip_prefix(k)?.strip_prefix(' ')?.trim().parse().ok())
                .unwrap_or(0)
        };
        if self.is_v1() {
            CgroupMemory {
                limit_bytes: num("memory.limit_in_bytes"),
                usage_bytes: num("memory.usage_in_bytes"),
                inactive_file_bytes: key("total_inactive_file"),
                dirty_bytes: key("total_dirty") + key("total_writeback"),
                major_faults: key("total_pgmajfault"),
                refaults: key("total_workingset_refault_file"),
            }
        } else {
            CgroupMemory {
                limit_bytes: num("memory.max"),
                usage_bytes: num("memory.current"),
                inactive_file_bytes: key("inactive_file"),
                dirty_bytes: key("file_dirty") + key("file_writeback"),
                major_faults: key("pgmajfault"),
                refaults: key("workingset_refault_file"),
            }
        }
    }
}

/// A memory cgroup's figures, bytes: v1 `memory.limit_in_bytes`,
/// `memory.usage_in_bytes` and `memory.stat`'s hierarchical `total_*`
/// keys; v2 `memory.max`, `memory.current` and `memory.stat` (whose keys
/// count the subtree).
#[derive(Clone, Copy, Debug)]
pub struct CgroupMemory {
    /// The memory limit (`u64::MAX` when unlimited or unreadable).
    pub limit_bytes: u64,
    /// What is charged to it, page cache included.
    pub usage_bytes: u64,
    /// Its inactive file cache: reclaimed before anything is OOM-killed.
    pub inactive_file_bytes: u64,
    /// Its file pages not yet written back (dirty and under writeback).
    pub dirty_bytes: u64,
    /// Major page faults of its processes so far (a count).
    pub major_faults: u64,
    /// File pages read again soon after they were evicted so far (a
    /// count; `workingset_refault_file`, kernel 5.9+).
    pub refaults: u64,
}

impl CgroupMemory {
    /// The limit less what cannot be reclaimed (usage less inactive file
    /// cache), MiB: what a build in it can still use.
    pub fn available_mib(&self) -> u64 {
        let held = self.usage_bytes.saturating_sub(self.inactive_file_bytes);
        self.limit_bytes.saturating_sub(held) >> 20
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        remove_tree(&self.dir);
    }
}

/// Kills whatever is left in cgroup `dir` and the cgroups below it (a
/// build cgroup headroom made, a make a test interrupted) and removes
/// them, deepest first; retries for 5 s while the kernel lets the killed
/// go. A cgroup that still cannot be removed is left, said on stderr.
fn remove_tree(dir: &Path) {
    for _ in 0..50 {
        kill_all(dir);
        if remove_dirs(dir) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("cannot remove cgroup {}", dir.display());
}

/// SIGKILL to every process of `dir`'s `cgroup.procs` and below (never
/// this test process itself).
fn kill_all(dir: &Path) {
    for sub in sub_dirs(dir) {
        kill_all(&sub);
    }
    let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        if pid as u32 != std::process::id()
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Removes the cgroups below `dir`, then `dir`; whether `dir` is gone.
fn remove_dirs(dir: &Path) -> bool {
    for sub in sub_dirs(dir) {
        remove_dirs(&sub);
    }
    fs::remove_dir(dir).is_ok() || !dir.exists()
}

/// The child cgroups of `dir` (its sub-directories).
fn sub_dirs(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Removes the `headroom-<tag>-<pid>` cgroups under `parent` left by a test
/// process that is gone (killed before its `Drop` ran), with what is still
/// running in them.
fn remove_stale(parent: &Path, tag: &str) {
    let prefix = format!("headroom-{tag}-");
    for d in sub_dirs(parent) {
        let name = d.file_name().unwrap_or_default().to_string_lossy();
        let Some(pid) = name.strip_prefix(&prefix) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            remove_tree(&d);
        }
    }
}

/// The kernel's log (`/dev/kmsg`) from the moment it is opened, read
/// without blocking: what a cgroup's counters cannot show, such as the
/// OOM kills in a child cgroup that is gone by the time one looks (on v1,
/// `memory.oom_control` counts only the cgroup itself).
pub struct KernelLog {
    file: fs::File,
}

impl KernelLog {
    /// Opens `/dev/kmsg` positioned after the last record (root, or
    /// CAP_SYSLOG), or says why it cannot.
    pub fn open() -> Result<KernelLog, String> {
        use std::io::Seek;
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open("/dev/kmsg")
            .map_err(|e| format!("/dev/kmsg: {e}"))?;
        file.seek(std::io::SeekFrom::End(0))
            .map_err(|e| format!("/dev/kmsg: seek: {e}"))?;
        Ok(KernelLog { file })
    }

    /// The OOM kills the kernel logged since the previous call (or since
    /// [`KernelLog::open`]) of processes in `cg` or a cgroup below it: its
    /// `oom-kill:` line names the victim's cgroup (`task_memcg=`), one line
    /// per kill.
    pub fn oom_kills_below(&mut self, cg: &Cgroup) -> u64 {
        let name = cg.name();
        self.records()
            .iter()
            .filter_map(|r| r.split_once("oom-kill:").map(|(_, rest)| rest))
            .filter_map(|rest| {
                rest.split(',')
                    .find_map(|f| f.strip_prefix("task_memcg="))
                    .map(str::to_string)
            })
            .filter(|path| path.split('/').any(|c| c == name))
            .count() as u64
    }

    /// The messages of the records logged since the last read.
    fn records(&mut self) -> Vec<String> {
        use std::io::Read;
        let mut out = Vec::new();
        // One record per read(2); a record is at most ~8 KiB.
        let mut buf = vec![0u8; 16 << 10];
        loop {
            match self.file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    if let Some((_, msg)) = rec.split_once(';') {
                        out.push(msg.to_string());
                    }
                }
                // EPIPE: records overwritten before we read them; go on.
                Err(e) if e.raw_os_error() == Some(32) => continue,
                Err(_) => break,
            }
        }
        out
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

/// What follows `OOM kills in this build: ` in a summary (the figure, or
/// `unknown, …`, then how it was counted); `None` without that line.
pub fn build_oom_line(summary: &str) -> Option<&str> {
    summary
        .lines()
        .find_map(|l| l.strip_prefix("OOM kills in this build: "))
}

/// The host's OOM kills from a summary's `kernel OOM-kill events:` line:
/// its number, or in a container (where the number is the container's
/// own) the host's given beside it (`the host's: N)`).
pub fn host_oom_kills(summary: &str) -> Option<u64> {
    let rest = summary
        .lines()
        .find_map(|l| l.strip_prefix("kernel OOM-kill events: "))?;
    let host = match rest.split_once("the host's: ") {
        Some((_, h)) => h.trim_end_matches(')'),
        None => rest,
    };
    host.split_whitespace().next()?.parse().ok()
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

/// Variables that would change what headroom, make or the compiler
/// decide: the root-only build tests remove them from what they run.
pub const SCRUBBED_ENV: [&str; 13] = [
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "CARGO_MAKEFLAGS",
    "HEADROOM_POOL",
    "PARALLEL_JOBS",
    "BUILD_MEM_DIVISOR",
    "DEFAULT_MB_PER_JOB",
    "RUST_MB_PER_JOB",
    "CPP_HEAVY_MB_PER_JOB",
    "AGGRESSIVE_PARALLELISM",
    "LOG_DIR",
    "CC",
];

/// Runs `sh -c SCRIPT` in `dir` from inside memory cgroup `cg` (the shell
/// joins it first), without the caller's MAKEFLAGS or $HEADROOM_POOL, as
/// [`output_within`] `secs`.
pub fn sh_in_cgroup(cg: &Cgroup, dir: &Path, script: &str, secs: u64) -> std::process::Output {
    let script = format!(
        "echo $$ > {}\n{script}",
        cg.dir.join("cgroup.procs").display()
    );
    output_within(
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(dir)
            .env_remove("MAKEFLAGS")
            .env_remove("HEADROOM_POOL"),
        secs,
    )
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

/// A fresh, empty `<test binary>-<name>` (`pool-x`, `jobserver-x`) under
/// Cargo's temporary directory for the tests.
pub fn scratch(name: &str) -> PathBuf {
    let d =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}", env!("CARGO_CRATE_NAME")));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A job that grows to about 150 MiB over 1.5 s (10 steps of 15 MiB,
/// written so they are resident).
pub const HOG: &str = "python3 -c 'import time; b = bytearray(); [(b.extend(bytes(15 << 20)), time.sleep(0.15)) for _ in range(10)]'";

/// The lease files (`lease-*`) in pool directory `pool`, sorted.
pub fn leases(pool: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(pool)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("lease-"))
        .collect();
    v.sort();
    v
}

/// A Makefile of `n` targets `t0`…; each logs `start NAME T` and, when
/// `recipe` succeeds, `end NAME T` (seconds, date +%s.%N) to `log`; a
/// failed recipe fails its target.
pub fn makefile(dir: &Path, n: usize, recipe: &str) {
    let names: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let text = format!(
        "T := {}\nall: $(T)\n$(T):\n\t@echo \"start $@ $$(date +%s.%N)\" >> log && {recipe} && echo \"end $@ $$(date +%s.%N)\" >> log\n",
        names.join(" ")
    );
    fs::write(dir.join("Makefile"), text).unwrap();
}

/// The `log` of each of `dirs` as (time, +1 for a start, −1 for an end),
/// in time order, ends before starts at the same instant.
pub fn log_events(dirs: &[impl AsRef<Path>]) -> Vec<(f64, i32)> {
    let mut events: Vec<(f64, i32)> = Vec::new();
    for d in dirs {
        let log = fs::read_to_string(d.as_ref().join("log")).unwrap_or_default();
        events.extend(log.lines().filter_map(|l| {
            let mut w = l.split_whitespace();
            let kind = w.next()?;
            let t: f64 = w.nth(1)?.parse().ok()?;
            Some((t, if kind == "start" { 1 } else { -1 }))
        }));
    }
    events.sort_by(|a, b| a.partial_cmp(b).unwrap());
    events
}

/// The most targets running at once across the `log`s of `dirs`, and how
/// many ended.
pub fn overlap(dirs: &[impl AsRef<Path>]) -> (usize, usize) {
    let events = log_events(dirs);
    let (mut now, mut max) = (0, 0);
    for (_, d) in &events {
        now += d;
        max = max.max(now);
    }
    (max as usize, events.iter().filter(|(_, d)| *d < 0).count())
}

/// Fields of a full (not `--compat`) row without the jobserver's columns.
pub const FULL_WIDTH: usize = headroom::tick::row::columns::CORE_COLUMNS.len()
    + headroom::tick::row::columns::EXT_COLUMNS.len();

/// `row`, a full-format row's fields from the first up to any column (no
/// comma inside a field; a trailing newline is dropped), ended with empty
/// fields up to [`FULL_WIDTH`] and a newline: the columns after those a
/// test sets follow the column table, so a new column needs no edit.
pub fn full_width(row: &str) -> String {
    let mut r = row.trim_end_matches('\n').to_string();
    for _ in r.split(',').count()..FULL_WIDTH {
        r.push(',');
    }
    r.push('\n');
    r
}

/// A recording's jobs columns (`run --jobserver`'s CSV): (jobs_running,
/// jobs_allowed) per row.
pub fn jobs_columns(csv: &Path) -> Vec<(u32, u32)> {
    let csv = fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let w = FULL_WIDTH;
    assert_eq!(header.len(), w + 3);
    assert_eq!(
        &header[w..],
        ["jobs_running", "jobs_allowed", "jobs_paused"]
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), w + 3, "{l}");
            (f[w].parse().unwrap(), f[w + 1].parse().unwrap())
        })
        .collect()
}

/// A ninja ≥ 1.13 (a jobserver client): `$HEADROOM_TEST_NINJA`, else
/// `ninja` on PATH when new enough. `None` (the test says it skipped)
/// unless `$HEADROOM_REQUIRE_NINJA` is set, as `ci/test` sets it.
pub fn ninja() -> Option<String> {
    let candidates = [
        std::env::var("HEADROOM_TEST_NINJA").ok(),
        Some("ninja".into()),
    ];
    let found = candidates.into_iter().flatten().find(|n| {
        Command::new(n)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| {
                let v = String::from_utf8_lossy(&o.stdout).to_string();
                let mut parts = v.trim().split('.');
                let major: u32 = parts.next()?.parse().ok()?;
                let minor: u32 = parts.next()?.parse().ok()?;
                Some((major, minor) >= (1, 13))
            })
            .unwrap_or(false)
    });
    if found.is_none() {
        assert!(
            std::env::var_os("HEADROOM_REQUIRE_NINJA").is_none(),
            "no ninja >= 1.13 (HEADROOM_TEST_NINJA or PATH)"
        );
        eprintln!("skipped: no ninja >= 1.13");
    }
    found
}

/// A build.ninja of `n` targets, each running `recipe` through `job.sh`,
/// which logs start and end (as [`makefile`]'s) and the MAKEFLAGS it saw.
pub fn ninja_file(dir: &Path, n: usize, recipe: &str) {
    let job = format!(
        "echo \"start $1 $(date +%s.%N)\" >> log\necho \"$MAKEFLAGS\" > \"$1.mf\"\n{recipe} || exit 1\necho \"end $1 $(date +%s.%N)\" >> log\ntouch \"$1\"\n"
    );
    fs::write(dir.join("job.sh"), job).unwrap();
    let mut text = String::from("rule job\n  command = sh ./job.sh $out\n");
    for i in 0..n {
        text.push_str(&format!("build t{i}: job\n"));
    }
    fs::write(dir.join("build.ninja"), text).unwrap();
}

/// The headroom binary this build made, for the tests that always run it
/// (a cross-built one is checked through [`headroom`]).
pub const BIN: &str = env!("CARGO_BIN_EXE_headroom");

/// `headroom ARGS` (this build's binary), run to its end: its output.
pub fn headroom_with(args: &[&str]) -> std::process::Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// The headroom binary under test: this build's, or `$HEADROOM_BIN`
/// (words split on spaces, e.g. `qemu-arm-static target/armv7-…/headroom`)
/// so that a cross-built binary can be checked by the same test.
pub fn headroom() -> Command {
    match std::env::var("HEADROOM_BIN") {
        Ok(words) if !words.trim().is_empty() => {
            let mut w = words.split_whitespace();
            let mut cmd = Command::new(w.next().unwrap_or(BIN));
            cmd.args(w);
            cmd
        }
        _ => Command::new(BIN),
    }
}

/// True when this process ignores signal `n` (SigIgn of /proc/self/status),
/// said on stderr with `test`'s name: a child inherits that, and headroom
/// rightly keeps ignoring it (as under `nohup`, or a non-interactive
/// shell's `cmd &` for SIGINT and SIGQUIT), so a test that sends it has
/// nothing to check there.
pub fn ignored_here(n: u32, test: &str) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (n - 1)) != 0);
    if ignored {
        eprintln!(
            "{test}: signal {n} is ignored by this test process (nohup, or a shell's `&`), as by headroom then: not sent"
        );
    }
    ignored
}
