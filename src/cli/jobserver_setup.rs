//! `run --jobserver` set up: its options checked, the governor's parts
//! started (the FIFO made, the pool joined, CMD's jobs followed) and lent
//! to the recording loop, and the MAKEFLAGS CMD is given. The governor
//! itself, its rules and its tick, is the library's `govern::jobserver`.

use std::io::Write;

use rustix::fd::{AsRawFd, BorrowedFd};

use headroom::followed::buildcg::BuildCgroup;
use headroom::govern::jobserver::driver::{Driver, Governor};
use headroom::govern::jobserver::estimate::{Starts, starting_peak};
use headroom::govern::jobserver::handout::{self, CapFrom, Handout};
use headroom::govern::jobserver::pausing::Pausing;
use headroom::govern::jobserver::pool_member::{JoinError, PoolMember};
use headroom::govern::jobserver::token_fifo::TokenFifo;
use headroom::kernel::root::Root;
use headroom::report::jobserver_block::{PeakReport, Source};

use super::defaults::env_nonempty;
use super::jobs_flag::{self, Jobs, JobsFlag};
use super::jobserver_notes::basis_text;
use super::messages::{Fail, StderrWarn, errtext, io_text, shown};
use super::options::RunOnly;

/// `run --jobserver` and its options.
pub struct JobserverArgs {
    max_jobs: Option<u32>,
    peak_mb: Option<u64>,
    /// `--from FILE.csv`: a recorded run whose measured peak to start from.
    pub from: Option<String>,
    profile: headroom::plan::jobs::Profile,
    /// `--profile` was given (its figure is then the user's, not a guess).
    profile_given: bool,
    fifo: bool,
    explain: bool,
    /// `--pool DIR` (or $HEADROOM_POOL), and which of the two named it.
    pool: Option<(String, &'static str)>,
    /// Jobs that would outgrow memory are paused (not `--no-pause`).
    pause: bool,
    /// CMD's own `-j` (make or ninja), to be taken out of its command line
    /// ([`JobserverArgs::take_own_j`]).
    own_j: Option<Vec<JobsFlag>>,
}

impl JobserverArgs {
    /// `--max-jobs` was given: the governor's cap does not come from the
    /// cores (nor from a cgroup CPU limit that may be unknown).
    pub fn max_jobs_given(&self) -> bool {
        self.max_jobs.is_some()
    }

    /// `run`'s jobserver options checked: `None` without `--jobserver`
    /// (then none of its options may be given); the usage error's text
    /// otherwise. `count`: `--count` was given. A `-j` of make's or
    /// ninja's own as CMD is to be taken out, its N the cap (the smaller
    /// with `--max-jobs`), and that is said once; one inside CMD's shell
    /// script, where it cannot be, is warned about.
    pub fn check(a: &RunOnly, count: bool) -> Result<Option<JobserverArgs>, String> {
        if !a.jobserver {
            let given = [
                ("--max-jobs", a.max_jobs.is_some()),
                ("--peak-mb", a.peak_mb.is_some()),
                ("--from", a.from.is_some()),
                ("--profile", a.profile.is_some()),
                ("--jobserver-style", a.jobserver_style.is_some()),
                ("--explain", a.explain),
                ("--no-pause", a.no_pause),
                ("--pool", a.pool.is_some()),
            ];
            return match given.iter().find(|(_, on)| *on) {
                Some((name, _)) => Err(format!("{name} goes with --jobserver")),
                None => Ok(None),
            };
        }
        let Some(profile) =
            headroom::plan::jobs::Profile::parse(a.profile.as_deref().unwrap_or("generic"))
        else {
            return Err("--profile: expected generic, rust or heavy".into());
        };
        let fifo = match a.jobserver_style.as_deref() {
            None => ninja_build(&a.cmd),
            Some("pipe") => false,
            Some("fifo") => true,
            Some(other) => {
                return Err(format!(
                    "--jobserver-style {}: expected pipe or fifo",
                    shown(other)
                ));
            }
        };
        let pool = match (&a.pool, env_nonempty("HEADROOM_POOL")) {
            (Some(d), _) => Some((d.clone(), "--pool")),
            (None, Some(d)) => Some((d, "$HEADROOM_POOL")),
            (None, None) => None,
        };
        if let Some((d, _)) = &pool
            && (d.is_empty() || d.starts_with('-'))
        {
            return Err(format!("--pool needs a directory, not '{}'", shown(d)));
        }
        if a.max_jobs == Some(0) || a.peak_mb == Some(0) {
            return Err("--max-jobs and --peak-mb must be at least 1".into());
        }
        if count {
            return Err(
                "--count and --jobserver exclude each other: the jobserver ticks until CMD ends"
                    .into(),
            );
        }
        let own_j = own_jobs(&a.cmd);
        let max_jobs = match own_j.as_ref().and_then(|(_, _, cap)| *cap) {
            Some(n) => Some(a.max_jobs.map_or(n, |m| m.min(n))),
            None => a.max_jobs,
        };
        if let Some((said, _, n)) = &own_j {
            tell_taken(said, *n, a.max_jobs);
        }
        if let Some(j) = jobs_flag::in_script(&a.cmd) {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --jobserver: '{j}' in {}'s script makes it run its own slots and ignore the jobserver, and headroom cannot take it out there: leave it out (the summary says the jobs that really ran)",
                a.cmd[0]
            );
        }
        Ok(Some(JobserverArgs {
            max_jobs,
            own_j: own_j.map(|(_, flags, _)| flags),
            peak_mb: a.peak_mb,
            from: a.from.clone(),
            profile,
            profile_given: a.profile.is_some(),
            fifo,
            explain: a.explain,
            pool,
            pause: !a.no_pause,
        }))
    }
}

impl JobserverArgs {
    /// CMD's own `-j` taken out of `argv` (as decoded) and `raw` (as the
    /// OS gave them), at the same places: make or ninja then uses the
    /// jobserver, whose cap the `-j` set ([`JobserverArgs::check`]).
    pub fn take_own_j(&self, argv: &mut Vec<String>, raw: &mut Vec<std::ffi::OsString>) {
        if let Some(flags) = &self.own_j {
            *argv = jobs_flag::take_out(argv, flags);
            *raw = jobs_flag::take_out(raw, flags);
        }
    }
}

/// CMD's own `-j` when CMD is make or ninja with one: the tool's `-j` as
/// written (the last, which it obeys, e.g. `make's -j4`), every flag to
/// take out, and its N (`None` for no limit).
fn own_jobs(cmd: &[String]) -> Option<(String, Vec<JobsFlag>, Option<u32>)> {
    let (tool, flags) = jobs_flag::find(cmd).or_else(|| jobs_flag::find_wrapped(cmd))?;
    let last = flags.last()?;
    let cap = match last.jobs {
        Jobs::Count(n) => Some(n),
        Jobs::Unlimited => None,
    };
    let said = format!("{}'s {}", tool.name(), jobs_flag::said(cmd, last));
    Some((said, flags, cap))
}

/// Says once on stderr that CMD's own `-j` (`said`, e.g. `make's -j4`,
/// whose N is `n`, `None` for no limit) is taken out, and what caps the
/// slots: its N, `--max-jobs` (`max_jobs`) when smaller, else the cores.
fn tell_taken(said: &str, n: Option<u32>, max_jobs: Option<u32>) {
    let what = match (n, max_jobs) {
        (Some(n), Some(m)) if m < n => {
            format!("is taken out; --max-jobs {m} is the cap (at most {m} jobs, as memory allows)")
        }
        (Some(n), _) => format!("is the cap (at most {n} jobs, as memory allows)"),
        (None, Some(m)) => {
            format!(
                "(no limit) is taken out; --max-jobs {m} is the cap (at most {m} jobs, as memory allows)"
            )
        }
        (None, None) => {
            "(no limit) is taken out; the usable cores are the cap, as memory allows".into()
        }
    };
    let _ = writeln!(
        std::io::stderr(),
        "headroom: --jobserver: {said} {what}; headroom hands out the slots"
    );
}

/// `run --jobserver` while it runs: the governor's parts (the library's,
/// `govern::jobserver`), kept here and lent to the recording loop as a
/// [`Driver`], and what CMD is told in its environment.
pub struct JobserverRun {
    /// The handout, its FIFO, what `--explain` said.
    gov: Governor,
    /// `--pool`: the memory budget shared with other governors.
    pool: Option<Box<PoolMember>>,
    /// The pausing of CMD's jobs, once CMD runs ([`JobserverRun::follow`]).
    pausing: Option<Box<Pausing>>,
    /// MAKEFLAGS and CARGO_MAKEFLAGS for CMD.
    pub env: Vec<(&'static str, std::ffi::OsString)>,
    /// Jobs may be paused (not `--no-pause`).
    pause_on: bool,
    /// `--run-id`: the name the pool remembers the measured peak under.
    run_id: String,
}

impl JobserverRun {
    /// Makes the FIFO in the out dir, sizes the governor (cap: --max-jobs,
    /// else `handout::default_cap`; peak: `estimate::starting_peak`, `measured`
    /// being `--from`'s peak and where it was read), joins `--pool` and
    /// composes MAKEFLAGS.
    ///
    /// Never inlined: with `--pool` it builds the pool's tables (tens of
    /// KiB) on its own frame, which inlined into `record_job` would be made
    /// resident by every recording, `--jobserver` or not.
    #[inline(never)]
    pub fn start(
        j: &JobserverArgs,
        root: &Root,
        dir: BorrowedFd<'_>,
        out_dir: &str,
        run_id: &str,
        measured: Option<(u64, String)>,
    ) -> Result<JobserverRun, Fail> {
        let cap = j
            .max_jobs
            .unwrap_or_else(|| handout::default_cap(root, &mut vec![0u8; handout::CORES_BUF_LEN]));
        let (peak, source) = starting(j, measured.as_ref().map(|m| m.0), run_id);
        let mut fifo = TokenFifo::create(dir).map_err(|e| {
            Fail(format!(
                "--jobserver: cannot make its FIFO in {out_dir}: {}",
                errtext(e)
            ))
        })?;
        let auth = if j.fifo {
            let abs = std::fs::canonicalize(out_dir)
                .map_err(|e| Fail(format!("--jobserver: {out_dir}: {}", io_text(&e))))?;
            let _ = rustix::io::fcntl_setfd(fifo.client_fd(), rustix::io::FdFlags::CLOEXEC);
            let _ = rustix::io::fcntl_setfd(fifo.client_fd_w(), rustix::io::FdFlags::CLOEXEC);
            format!("fifo:{}", abs.join(fifo.name()).display())
        } else {
            fifo.unlink();
            format!(
                "{},{}",
                fifo.client_fd().as_raw_fd(),
                fifo.client_fd_w().as_raw_fd()
            )
        };
        // CMD's -jN taken out, or --max-jobs: the user's, a hard cap.
        let from = match j.max_jobs {
            Some(_) => CapFrom::Given,
            None => CapFrom::Cores,
        };
        let handout = Handout::new(cap, from, peak, source);
        if handout.cap < cap {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --max-jobs {cap}: at most {} slots",
                handout.cap
            );
        }
        let pool = match &j.pool {
            Some((d, from)) => Some(join_pool(d, from, run_id, &handout, root)?),
            None => None,
        };
        let flags = makeflags(std::env::var_os("MAKEFLAGS").as_deref(), handout.cap, &auth);
        if j.explain {
            say_start(&handout.estimate().report(), j, measured.as_ref());
        }
        Ok(JobserverRun {
            gov: Governor::new(handout, fifo, j.explain),
            pool,
            pausing: None,
            env: vec![("MAKEFLAGS", flags.clone()), ("CARGO_MAKEFLAGS", flags)],
            pause_on: j.pause,
            run_id: run_id.to_string(),
        })
    }

    /// Follows CMD, just started as `pid` (in the build cgroup `cg` when
    /// it joined one), to pause its jobs (unless `--no-pause`; where
    /// pausing applies is the governor's rule, `Governor::follow`).
    ///
    /// Never inlined: the job table (about 40 KiB) is built on its frame
    /// before it is boxed, which inlined into `record_job` every recording
    /// would carry and make resident, `--jobserver` or not.
    #[inline(never)]
    pub fn follow(&mut self, root: &Root, pid: u32, cg: Option<&BuildCgroup>) {
        if self.pause_on {
            self.pausing = self.gov.follow(root, pid, cg).map(Box::new);
        }
        if let (Some(p), Some(member)) = (self.pausing.as_deref_mut(), self.pool.as_deref()) {
            p.weighing = true;
            super::pool::remembered_jobs(member.dir(), &self.run_id, p.weights.remembered_mut());
        }
    }

    /// The governor's parts lent to the recording loop (and its end).
    pub fn driver(&mut self) -> Driver<'_> {
        Driver {
            gov: &mut self.gov,
            pool: self.pool.as_deref_mut(),
            pausing: self.pausing.as_deref_mut(),
        }
    }

    /// The end of a run whose CMD ended by itself as `end`: with `--pool`,
    /// the peak per job its build measured is remembered for the next run
    /// of the same run id, when the rule allows ([`Driver::remember`]).
    pub fn remember(&mut self, end: headroom::followed::rusage::End) {
        let run_id = std::mem::take(&mut self.run_id);
        let mut buf = vec![0u8; headroom::govern::jobserver::job_peaks::JOB_PEAKS_BUF];
        self.driver()
            .remember(end, &run_id, &mut buf, &mut StderrWarn);
        self.run_id = run_id;
    }
}

/// Joins pool `dir` (named by `from`: `--pool` or `$HEADROOM_POOL`) as
/// run `run_id` with `handout`'s cap and peak per job; when a live build
/// there has the same run id, says so once on stderr and goes on.
///
/// Never inlined, as [`JobserverRun::start`]: the pool's tables are built on its
/// frame before they are boxed.
///
/// # Errors
/// One line naming DIR and why (`pool::open_text`: not a directory,
/// others may write it, this user may not write or read it, the lock or
/// lease cannot be made).
#[inline(never)]
fn join_pool(
    dir: &str,
    from: &str,
    run_id: &str,
    handout: &Handout,
    root: &Root,
) -> Result<Box<PoolMember>, Fail> {
    let mut buf = vec![0u8; headroom::kernel::cgroup::OPEN_BUF_LEN];
    match PoolMember::join(dir, run_id, handout.cap, handout.peak_mb(), root, &mut buf) {
        Ok(mut p) => {
            if let Some(pid) = p.run_id_shared() {
                let _ = writeln!(
                    std::io::stderr(),
                    "{}",
                    super::pool::run_id_shared_text(from, dir, run_id, pid)
                );
            }
            Ok(Box::new(p))
        }
        Err(JoinError::Meminfo) => Err(Fail(format!("{from} {dir}: cannot read proc/meminfo"))),
        Err(JoinError::Pool(e)) => Err(Fail(super::pool::open_text(from, dir, e))),
    }
}

/// The peak per job to start from (`estimate::starting_peak`): `--from`'s
/// measured peak (`from_csv`), the one the pool remembers for `run_id`
/// (read only without `--from`), `--peak-mb`, the profile's environment
/// variable, the profile.
fn starting(j: &JobserverArgs, from_csv: Option<u64>, run_id: &str) -> (u64, Source) {
    let remembered = match (from_csv, &j.pool) {
        (None, Some((dir, from))) => super::pool::remembered(dir, from, run_id),
        _ => None,
    };
    let from_env = env_nonempty(j.profile.env_var()).and_then(|v| v.parse::<u64>().ok());
    starting_peak(&Starts {
        from_csv,
        remembered,
        peak_mb: j.peak_mb,
        env: (j.profile.env_var(), from_env),
        profile: (
            j.profile.default_mb(false),
            j.profile.name(),
            j.profile_given,
        ),
    })
}

/// `--explain`: the peak per job it starts from, and where that came from
/// (`measured`: `--from`'s peak and where it was read).
fn say_start(p: &PeakReport, j: &JobserverArgs, measured: Option<&(u64, String)>) {
    let mut why = basis_text(p);
    if let (Source::FromCsv(_), Some((_, label))) = (p.source, measured) {
        why.push_str(&format!(" [{label}]"));
    }
    if let (Some(mb), Some(_)) = (j.peak_mb, p.source.measured_mb()) {
        why.push_str(&format!(
            "; --peak-mb {mb} not used: a measurement comes first"
        ));
    }
    let _ = writeln!(
        std::io::stderr(),
        "headroom: jobserver: peak per job {} MiB to start {why}",
        p.now_mb
    );
}

/// MAKEFLAGS for CMD: the caller's own flags kept (bytes as they are),
/// any -j and jobserver given before dropped, then `-j<cap>
/// --jobserver-auth=<auth>` (a -j number, not a bare -j, so that a tool
/// that reads only -j is bounded) — before ` -- `, after which make keeps
/// command-line variables (`k -- FOO=bar`).
pub fn makeflags(existing: Option<&std::ffi::OsStr>, cap: u32, auth: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let bytes = existing.map_or(&b""[..], OsStrExt::as_bytes);
    let words: Vec<&[u8]> = bytes
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let (flags, vars) = match words.iter().position(|w| *w == b"--") {
        Some(at) => words.split_at(at),
        None => (&words[..], &[][..]),
    };
    let mut out: Vec<u8> = Vec::new();
    let mut skip_number = false;
    for w in flags {
        let number = w.iter().all(u8::is_ascii_digit);
        if std::mem::take(&mut skip_number) && number {
            continue;
        }
        if *w == b"-j" || *w == b"--jobs" {
            skip_number = true;
            continue;
        }
        if w.starts_with(b"-j")
            || w.starts_with(b"--jobs=")
            || w.starts_with(b"--jobserver-auth=")
            || w.starts_with(b"--jobserver-fds=")
        {
            continue;
        }
        out.extend_from_slice(w);
        out.push(b' ');
    }
    out.extend_from_slice(format!("-j{cap} --jobserver-auth={auth}").as_bytes());
    for w in vars {
        out.push(b' ');
        out.extend_from_slice(w);
    }
    std::ffi::OsString::from_vec(out)
}

/// CMD runs ninja, which reads only the `fifo:` form of a jobserver on
/// POSIX (ninja 1.13 and later ignore `R,W` with a warning): ninja itself,
/// `meson compile` (meson's backend on Linux is ninja), or `cmake --build
/// DIR` of a tree whose CMakeCache.txt names a Ninja generator.
pub fn ninja_build(argv: &[String]) -> bool {
    let Some((prog, args)) = argv.split_first() else {
        return false;
    };
    let name = prog.rsplit('/').next().unwrap_or(prog);
    match (name, args.first().map(String::as_str)) {
        ("ninja", _) => true,
        ("meson", Some("compile")) => true,
        ("cmake", Some("--build")) => args.get(1).is_some_and(|dir| {
            let cache = std::path::Path::new(dir).join("CMakeCache.txt");
            std::fs::read_to_string(cache).is_ok_and(|text| {
                text.lines()
                    .any(|l| l.starts_with("CMAKE_GENERATOR:INTERNAL=Ninja"))
            })
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makeflags_keep_the_callers_flags_and_variables() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let mf = |s: &[u8]| makeflags(Some(OsStr::from_bytes(s)), 3, "5,6");
        assert_eq!(makeflags(None, 3, "5,6"), "-j3 --jobserver-auth=5,6");
        assert_eq!(mf(b"k"), "k -j3 --jobserver-auth=5,6");
        // A make above headroom: its -j and jobserver give way to ours.
        assert_eq!(
            mf(b" -j8 --jobserver-auth=3,4 --jobserver-fds=3,4 -k"),
            "-k -j3 --jobserver-auth=5,6"
        );
        assert_eq!(
            mf(b"--jobs 4 -j 2 --jobs=9 s"),
            "s -j3 --jobserver-auth=5,6"
        );
        // Command-line variables stay after `--`, ours before it.
        assert_eq!(
            mf(b"k -- FOO=bar B=1"),
            "k -j3 --jobserver-auth=5,6 -- FOO=bar B=1"
        );
        // Bytes that are not UTF-8 are kept as they are.
        assert_eq!(mf(b"k \xff").as_bytes(), b"k \xff -j3 --jobserver-auth=5,6");
    }

    #[test]
    fn ninja_builds_get_the_fifo_style() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(ninja_build(&v(&["ninja"])));
        assert!(ninja_build(&v(&["/usr/bin/ninja", "-C", "out"])));
        assert!(ninja_build(&v(&["meson", "compile", "-C", "b"])));
        assert!(!ninja_build(&v(&["meson", "setup", "b"])));
        assert!(!ninja_build(&v(&["make"])));
        assert!(!ninja_build(&v(&[])));
        let d = std::env::temp_dir().join(format!("headroom-cmake-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let build = |cache: &str| {
            std::fs::write(d.join("CMakeCache.txt"), cache).unwrap();
            ninja_build(&v(&["cmake", "--build", d.to_str().unwrap()]))
        };
        assert!(build("CMAKE_GENERATOR:INTERNAL=Ninja\n"));
        assert!(build("x\nCMAKE_GENERATOR:INTERNAL=Ninja Multi-Config\n"));
        assert!(!build("CMAKE_GENERATOR:INTERNAL=Unix Makefiles\n"));
        std::fs::remove_dir_all(&d).unwrap();
        assert!(!ninja_build(&v(&["cmake", "--build", "/nonexistent"])));
    }
}
