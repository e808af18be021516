//! `run --jobserver --pool DIR` as users find it (issue 42): the RUN steps
//! of parallel BuildKit builds share one pool through a cache mount,
//! each step as its own USER and run id. Without root: a pool's lock file
//! and leases made under umask 077 are still everyone's to lock and read;
//! a build joining a pool where a live build has its run id is told so
//! once; a pool that cannot be used is one line naming it and why, exit 1.
//! As root (ignored; ci/test runs them), a build as uid 1000: a pool it
//! may not write or read is one line with the directory's owner and mode
//! and what to do; in a sticky 1777 pool it shares root's budget.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{BIN, leases, output_within, scratch};

/// The user a BuildKit step's `USER 1000` runs as.
const USER: u32 = 1000;

/// `BIN run --jobserver --max-jobs 2 --peak-mb 100 --pool POOL --run-id ID
/// --out-dir OUT -- CMD`, without `$HEADROOM_POOL` or `$MAKEFLAGS`.
fn governor(bin: &Path, pool: &Path, id: &str, out: &Path, cmd: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(["run", "--jobserver", "--max-jobs", "2", "--peak-mb", "100"])
        .arg("--pool")
        .arg(pool)
        .args(["--interval", "0.2", "--run-id", id, "--out-dir"])
        .arg(out)
        .arg("--")
        .args(cmd)
        .env_remove("HEADROOM_POOL")
        .env_remove("MAKEFLAGS");
    c
}

/// `c` as `sh -c 'umask UMASK; exec …'` would run it (077: a governor
/// whose umask would leave the files it makes readable by no one else).
fn under_umask(umask: &str, c: &Command) -> Command {
    let mut line = format!("umask {umask}; exec");
    line.push_str(&format!(" '{}'", c.get_program().to_string_lossy()));
    for a in c.get_args() {
        line.push_str(&format!(" '{}'", a.to_string_lossy()));
    }
    let mut sh = Command::new("sh");
    sh.args(["-c", &line])
        .env_remove("HEADROOM_POOL")
        .env_remove("MAKEFLAGS");
    sh
}

/// `c` started in the background (stderr dropped); returns once `pool`
/// holds `n` leases (10 s at most).
fn start_until_leases(c: &mut Command, pool: &Path, n: usize) -> Child {
    let child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while leases(pool).len() < n && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(leases(pool).len(), n, "{:?}", leases(pool));
    child
}

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

/// Issue 42: a governor whose umask is 077 makes the pool's lock file and
/// its lease 0644 all the same, so that the builds of other users of a
/// 1777 pool can lock the one and read the other (root's lease counts
/// for everyone). Each lease stays its maker's.
#[test]
fn a_pools_files_made_under_umask_077_are_everyones_to_lock_and_read() {
    let d = scratch("umask");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    chmod(&pool, 0o1777);
    let g = governor(
        Path::new(BIN),
        &pool,
        "private",
        &d.join("out"),
        &["sleep", "2"],
    );
    let mut g = start_until_leases(&mut under_umask("077", &g), &pool, 1);
    let lease = pool.join(&leases(&pool)[0]);
    let lock = pool.join(".headroom-pool.lock");
    let modes = (mode(&lock), mode(&lease));
    let uid = rustix::process::geteuid().as_raw();
    let owner = fs::metadata(&lease).unwrap().uid();
    g.wait().unwrap();
    assert_eq!(modes, (0o644, 0o644), "lock file, lease");
    assert_eq!(owner, uid);
}

/// Issue 42: the man page's `--run-id "$TARGETARCH"` gave every lane of
/// one architecture the same run id, and one remembered peak. A build
/// that joins a pool where a live build has its run id is told once, with
/// that build's PID; a dead lease of the same run id, or a live one of
/// another, says nothing.
#[test]
fn a_build_joining_with_the_run_id_of_a_live_build_is_told_once() {
    let d = scratch("same-run");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    let said = |out: &Output| {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let told = stderr.matches("is also used by a live build").count();
        (told, stderr)
    };
    // A dead lease of run id `lane` (nobody holds it): not a live build.
    let uid = rustix::process::geteuid().as_raw();
    let dead = format!(
        "headroom-lease 1\nuid {uid}\npid 4242\nrun lane\nlimits\ncap 2\nrunning 1\nallowed 1\npeak_mb 100\nheld_mb 0\ngrowth_mb 100\nwants_more 0\n"
    );
    fs::write(pool.join("lease-4242-0"), dead).unwrap();
    let bin = Path::new(BIN);
    let out = output_within(
        &mut governor(bin, &pool, "lane", &d.join("o1"), &["sleep", "0.5"]),
        60,
    );
    let (told, stderr) = said(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(told, 0, "{stderr}");
    assert!(
        stderr.contains("(run lane, whose governor is gone); removed"),
        "{stderr}"
    );
    // A live build of run id `lane`, and one of `other`.
    let mut first = start_until_leases(
        &mut governor(bin, &pool, "lane", &d.join("o2"), &["sleep", "4"]),
        &pool,
        1,
    );
    let out = output_within(
        &mut governor(bin, &pool, "lane", &d.join("o3"), &["sleep", "0.5"]),
        60,
    );
    let other = output_within(
        &mut governor(bin, &pool, "other", &d.join("o4"), &["sleep", "0.5"]),
        60,
    );
    let _ = first.kill();
    let _ = first.wait();
    let (told, stderr) = said(&out);
    assert!(out.status.success(), "{stderr}");
    let line = format!(
        "headroom: warning: --pool {}: run id lane is also used by a live build (pid {}): give each lane its own --run-id; their remembered peaks mix\n",
        pool.display(),
        first.id()
    );
    assert_eq!(told, 1, "{stderr}");
    assert!(stderr.contains(&line), "{line}\n{stderr}");
    let (told, stderr) = said(&other);
    assert!(other.status.success(), "{stderr}");
    assert_eq!(told, 0, "{stderr}");
}

/// `c` (as `uid` when given): exit 1 and `headroom: --pool P: WHY`, the
/// only line on stderr; returns WHY.
fn refused(c: &mut Command, pool: &Path, uid: Option<u32>) -> String {
    if let Some(uid) = uid {
        c.uid(uid).gid(uid);
    }
    let o = output_within(c, 60);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let prefix = format!("headroom: --pool {}: ", pool.display());
    match stderr.strip_prefix(&prefix) {
        Some(why) => why.trim_end().to_string(),
        None => panic!("{prefix}…\n{stderr}"),
    }
}

/// `run --pool P` refused ([`refused`]).
fn run_refused(bin: &Path, pool: &Path, out: &Path, uid: Option<u32>) -> String {
    refused(
        &mut governor(bin, pool, "refused", out, &["true"]),
        pool,
        uid,
    )
}

/// `status --pool P` refused ([`refused`]).
fn status_refused(bin: &Path, pool: &Path, uid: Option<u32>) -> String {
    let mut status = Command::new(bin);
    status.args(["status", "--pool"]).arg(pool);
    refused(&mut status, pool, uid)
}

/// Issue 42: each pool that cannot be used is one line naming it and
/// the cause: a symlink is said to be one (O_DIRECTORY | O_NOFOLLOW gives
/// ENOTDIR, which was said as "Not a directory"), a directory its group
/// may write is told `chmod go-w` (`chmod o-w` would not do), a lock file
/// that is a symlink or cannot be opened is named.
#[test]
fn a_pool_that_cannot_be_used_is_one_line_naming_it_and_the_cause() {
    let d = scratch("refused");
    let bin = Path::new(BIN);
    let out = d.join("out");
    let real = d.join("real");
    fs::create_dir(&real).unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let said = "is a symlink, never followed; name the directory itself";
    assert_eq!(run_refused(bin, &link, &out, None), said);
    assert_eq!(status_refused(bin, &link, None), said);
    let group = d.join("group");
    fs::create_dir(&group).unwrap();
    chmod(&group, 0o775);
    let said = "users other than its owner may write it (mode 0775) and it is not sticky: refused (chmod +t it, as /tmp is, or chmod go-w)";
    assert_eq!(run_refused(bin, &group, &out, None), said);
    assert_eq!(status_refused(bin, &group, None), said);
    let locked = d.join("locked");
    fs::create_dir(&locked).unwrap();
    std::os::unix::fs::symlink(d.join("elsewhere"), locked.join(".headroom-pool.lock")).unwrap();
    let said = "its lock file .headroom-pool.lock is a symlink, never followed: remove it";
    assert_eq!(run_refused(bin, &locked, &out, None), said);
    assert_eq!(status_refused(bin, &locked, None), said);
    assert!(!d.join("elsewhere").exists());
    // A lock file that cannot be opened for another cause (a socket:
    // ENXIO) names the file and the errno. Under /tmp: a socket's path
    // is at most 107 bytes.
    let sock = std::env::temp_dir().join(format!("headroom-pool-sock-{}", std::process::id()));
    let _ = fs::remove_dir_all(&sock);
    fs::create_dir(&sock).unwrap();
    let _l = std::os::unix::net::UnixListener::bind(sock.join(".headroom-pool.lock")).unwrap();
    let said = "cannot open or make its lock file .headroom-pool.lock: No such device or address";
    assert_eq!(run_refused(bin, &sock, &out, None), said);
    assert_eq!(status_refused(bin, &sock, None), said);
    fs::remove_dir_all(&sock).unwrap();
}

/// A directory under /tmp for a test run as [`USER`] (the build
/// directory may be out of its reach), with a copy of the binary, mode
/// 0755 and root's; and an out dir [`USER`]'s.
fn for_another_user(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("headroom-pool-users-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    chmod(&d, 0o755);
    let bin = d.join("headroom");
    fs::copy(BIN, &bin).unwrap();
    chmod(&bin, 0o755);
    let out = d.join("out");
    fs::create_dir(&out).unwrap();
    std::os::unix::fs::chown(&out, Some(USER), Some(USER)).unwrap();
    (d, bin, out)
}

/// Issue 42: a build as uid 1000 in a pool it may not use is told, in one
/// line, that, with the directory's owner and mode and what to do, where
/// it was told "cannot open its lock file: No such file or directory"
/// (root's 0755 directory, no lock file yet), "cannot write a lease:
/// Permission denied" (the same with a lock file; a pool root's headroom
/// made, 1755 under umask 022), "Permission denied" (0700; `status` too)
/// and "cannot create it: Permission denied" (a missing pool in root's
/// 0755 directory, or one below a directory it may not search).
#[test]
#[ignore = "needs root to run as another user; ci/test runs it"]
fn another_user_is_told_what_to_do_with_a_pool_it_may_not_use() {
    let (d, bin, out) = for_another_user("refused");
    let fix = "make it writable (BuildKit: --mount=type=cache,...,mode=1777), or run as its owner";
    let p0755 = d.join("p0755");
    fs::create_dir(&p0755).unwrap();
    chmod(&p0755, 0o755);
    let said = format!("not writable by uid {USER} (owner 0, mode 0755): {fix}");
    assert_eq!(run_refused(&bin, &p0755, &out, Some(USER)), said);
    assert!(!p0755.join(".headroom-pool.lock").exists());
    // With the lock file root's build made: the same.
    let mut root = governor(&bin, &p0755, "root", &d.join("root-out"), &["true"]);
    assert!(output_within(&mut root, 60).status.success());
    assert!(p0755.join(".headroom-pool.lock").exists());
    assert_eq!(run_refused(&bin, &p0755, &out, Some(USER)), said);
    // One root's headroom made: 1777 less root's umask 022.
    let made = d.join("made/pool");
    let root = governor(&bin, &made, "root", &d.join("root-out"), &["true"]);
    assert!(
        output_within(&mut under_umask("022", &root), 60)
            .status
            .success()
    );
    let said = format!("not writable by uid {USER} (owner 0, mode 1755): {fix}");
    assert_eq!(run_refused(&bin, &made, &out, Some(USER)), said);
    let p0700 = d.join("p0700");
    fs::create_dir(&p0700).unwrap();
    chmod(&p0700, 0o700);
    let fix = fix.replace("writable", "readable and writable");
    let said = format!("not readable by uid {USER} (owner 0, mode 0700): {fix}");
    assert_eq!(run_refused(&bin, &p0700, &out, Some(USER)), said);
    assert_eq!(status_refused(&bin, &p0700, Some(USER)), said);
    let missing = p0755.join("pool");
    let said = format!(
        "cannot create it: uid {USER} may not write its parent directory, or search one above it: make it once as a user who may (install -d -m 1777 {}), or name another",
        missing.display()
    );
    assert_eq!(run_refused(&bin, &missing, &out, Some(USER)), said);
    // One there, below a directory it may not search: mkdir(2) says
    // EACCES as well; `status`, which creates nothing, says where.
    let below = p0700.join("pool");
    fs::create_dir(&below).unwrap();
    chmod(&below, 0o1777);
    let said = said.replace(&missing.display().to_string(), &below.display().to_string());
    assert_eq!(run_refused(&bin, &below, &out, Some(USER)), said);
    let said = format!(
        "uid {USER} may not reach it (a directory above it is not searchable: Permission denied)"
    );
    assert_eq!(status_refused(&bin, &below, Some(USER)), said);
    let _ = fs::remove_dir_all(&d);
}

/// Issue 42: root's build and uid 1000's share a sticky 1777 pool (a
/// BuildKit cache mount with `mode=1777`), root's started first under
/// umask 077: uid 1000's joins, counts root's lease, and leaves none of
/// its own. A lock file another user cannot read (as a headroom before
/// this made under umask 077) is said as such, with its owner and mode.
#[test]
#[ignore = "needs root to run as another user; ci/test runs it"]
fn another_user_shares_a_sticky_pool_with_root() {
    let (d, bin, out) = for_another_user("sticky");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    chmod(&pool, 0o1777);
    let root = governor(
        &bin,
        &pool,
        "root-lane",
        &d.join("root-out"),
        &["sleep", "4"],
    );
    let mut root = start_until_leases(&mut under_umask("077", &root), &pool, 1);
    let mut user = governor(&bin, &pool, "user-lane", &out, &["sleep", "1"]);
    let o = output_within(user.uid(USER).gid(USER), 60);
    let _ = root.kill();
    let _ = root.wait();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let line = format!(
        "  pool {}: shared with 1 other build(s): root-lane\n",
        pool.display()
    );
    assert!(stderr.contains(&line), "{line}\n{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let lock = pool.join(".headroom-pool.lock");
    assert_eq!(fs::metadata(&lock).unwrap().uid(), 0);
    // Root's lease is left (killed); uid 1000's went with its build.
    let left: Vec<u32> = leases(&pool)
        .iter()
        .map(|n| fs::metadata(pool.join(n)).unwrap().uid())
        .collect();
    assert_eq!(left, [0]);
    chmod(&lock, 0o600);
    let said = format!(
        "its lock file .headroom-pool.lock is not readable by uid {USER} (owner 0, mode 0600): make it mode 0644 (chmod, as its owner or root)"
    );
    assert_eq!(run_refused(&bin, &pool, &out, Some(USER)), said);
    assert_eq!(status_refused(&bin, &pool, Some(USER)), said);
    let _ = fs::remove_dir_all(&d);
}
