//! `run --jobserver`: the FIFO made and sized, the governor's ticks (at
//! each row and each glance between rows), and the MAKEFLAGS CMD is given.

use std::io::Write;

use rustix::fd::{AsRawFd, BorrowedFd};

use headroom::followed::buildcg::BuildCgroup;
use headroom::kernel::root::Root;
use headroom::tick::sampler::glance::Glance;

use headroom::govern::estimate::Seen;
use headroom::report::jobserver_block::{Basis, PeakReport, Source};

use super::defaults::env_nonempty;
use super::messages::{Fail, errtext, io_text, shown};
use super::options::RunOnly;
use super::pause::Pausing;
use super::pool::Shared;

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
}

impl JobserverArgs {
    /// `run`'s jobserver options checked: `None` without `--jobserver`
    /// (then none of its options may be given); the usage error's text
    /// otherwise. `count`: `--count` was given. A `-j` of CMD's own is
    /// warned about.
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
        if let Some(j) = own_jobs_flag(&a.cmd) {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --jobserver: '{j}' makes {} run its own slots and ignore the jobserver; leave it out",
                a.cmd[0]
            );
        }
        Ok(Some(JobserverArgs {
            max_jobs: a.max_jobs,
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

/// `run --jobserver` while it runs: the FIFO, the governor, and what CMD
/// is told in its environment.
pub struct Js {
    /// The FIFO (or pipe) whose bytes are the job slots.
    pub pool: headroom::govern::jobserver::Pool,
    /// How many slots memory allows, tick by tick.
    pub gov: headroom::govern::jobserver::Governor,
    /// MAKEFLAGS and CARGO_MAKEFLAGS for CMD.
    pub env: Vec<(&'static str, std::ffi::OsString)>,
    explain: bool,
    /// The slots last said (with --explain): (allowed, memory-bound, left
    /// to other builds).
    said: Option<(u32, bool, u32)>,
    /// The peak per job last said (with --explain), and why.
    said_peak: (u64, Basis),
    /// `--run-id`: the name the pool remembers the measured peak under.
    run_id: String,
    /// `--pool`: the memory budget shared with other governors.
    pub shared: Option<Box<Shared>>,
    /// Jobs may be paused (not `--no-pause`).
    pause_on: bool,
    /// The pausing of CMD's jobs, once CMD runs ([`Js::follow`]).
    pausing: Option<Box<Pausing>>,
    /// The jobs columns of the next row, tick by tick.
    columns: JobsColumns,
}

/// The jobs columns of a row from the governor's ticks since the
/// previous row (it ticks between rows too): `jobs_running` and
/// `jobs_allowed` as decided at the row's own tick, `jobs_paused` the most
/// jobs paused at once since the previous row's tick, so that a job paused
/// and continued between two rows still shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobsColumns {
    /// The last tick's (running, allowed); `None` when it decided nothing.
    decided: Option<(u32, u32)>,
    /// Jobs paused at the last tick.
    paused_now: u32,
    /// The most jobs paused at once at the ticks since the last row.
    paused_most: u32,
}

impl JobsColumns {
    /// A governor tick decided `decided` (running, allowed), if anything,
    /// with `paused` jobs paused.
    pub fn ticked(&mut self, decided: Option<(u32, u32)>, paused: u32) {
        self.decided = decided;
        self.paused_now = paused;
        self.paused_most = self.paused_most.max(paused);
    }

    /// The row's (jobs_running, jobs_allowed, jobs_paused) after its tick;
    /// the next row's paused count starts from those paused now.
    pub fn row(&mut self) -> Option<(u32, u32, u32)> {
        let most = core::mem::replace(&mut self.paused_most, self.paused_now);
        self.decided
            .map(|(running, allowed)| (running, allowed, most))
    }
}

impl Js {
    /// Makes the FIFO in the out dir, sizes the governor (cap: --max-jobs,
    /// else the usable cores; peak: [`starting_peak`], `measured` being
    /// `--from`'s peak and where it was read) and composes MAKEFLAGS.
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
    ) -> Result<Js, Fail> {
        use headroom::govern::jobserver::{Governor, Pool};
        let cap = match j.max_jobs {
            Some(n) => n,
            None => {
                let mut buf = vec![0u8; 64 * 1024];
                headroom::plan::host::cores(root, root.is_live(), &mut buf).usable
            }
        };
        let (peak, source) = starting_peak(j, measured.as_ref().map(|m| m.0), run_id);
        let mut pool = Pool::create(dir).map_err(|e| {
            Fail(format!(
                "--jobserver: cannot make its FIFO in {out_dir}: {}",
                errtext(e)
            ))
        })?;
        let auth = if j.fifo {
            let abs = std::fs::canonicalize(out_dir)
                .map_err(|e| Fail(format!("--jobserver: {out_dir}: {}", io_text(&e))))?;
            let _ = rustix::io::fcntl_setfd(pool.client_fd(), rustix::io::FdFlags::CLOEXEC);
            let _ = rustix::io::fcntl_setfd(pool.client_fd_w(), rustix::io::FdFlags::CLOEXEC);
            format!("fifo:{}", abs.join(pool.name()).display())
        } else {
            pool.unlink();
            format!(
                "{},{}",
                pool.client_fd().as_raw_fd(),
                pool.client_fd_w().as_raw_fd()
            )
        };
        let gov = Governor::new(cap, peak, source);
        if gov.cap < cap {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --max-jobs {cap}: at most {} slots",
                gov.cap
            );
        }
        let shared = match &j.pool {
            Some((d, from)) => Some(Box::new(Shared::open(
                d,
                from,
                run_id,
                gov.cap,
                gov.peak_mb(),
                root,
            )?)),
            None => None,
        };
        let flags = makeflags(std::env::var_os("MAKEFLAGS").as_deref(), gov.cap, &auth);
        if j.explain {
            say_start(&gov.estimate().report(), j, measured.as_ref());
        }
        let said_peak = (gov.peak_mb(), Basis::Start);
        Ok(Js {
            shared,
            pool,
            gov,
            env: vec![("MAKEFLAGS", flags.clone()), ("CARGO_MAKEFLAGS", flags)],
            explain: j.explain,
            said: None,
            said_peak,
            run_id: run_id.to_string(),
            pause_on: j.pause,
            pausing: None,
            columns: JobsColumns::default(),
        })
    }

    /// Follows CMD, just started as `pid` (in the build cgroup `cg` when
    /// it joined one), to pause its jobs (on the live host, unless
    /// `--no-pause`). Never inlined, as [`Pausing::follow`].
    #[inline(never)]
    pub fn follow(&mut self, root: &Root, pid: u32, cg: Option<&BuildCgroup>) {
        if self.pause_on && root.is_live() {
            let members = cg.and_then(|cg| cg.members().ok());
            self.pausing = Pausing::follow(root, pid, self.explain, members);
        }
    }

    /// The end of a run whose CMD ended `end`: with `--pool`, the peak per
    /// job its build measured is remembered for the next run of the same
    /// run id — when CMD ended by itself with status 0 (a build that
    /// failed or was stopped may not have run its largest job) and a
    /// compiler of it was measured. Every job of a build that ended has
    /// ended: the largest seen is whole.
    pub fn remember(&self, end: headroom::followed::rusage::End) {
        let (Some(sh), Some(mb)) = (self.shared.as_ref(), self.gov.estimate().build_peak_mb())
        else {
            return;
        };
        let named = headroom::govern::peakfile::name(&self.run_id).is_some();
        if end != headroom::followed::rusage::End::Exited(0) || !named {
            return;
        }
        if sh.remember(&self.run_id, mb) && self.explain {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: jobserver: --pool {} remembers {mb} MiB, the largest peak of run {}'s jobs, for its next run",
                sh.dir,
                self.run_id
            );
        }
    }

    /// The end of the run: every paused job continued; the pauses so far
    /// (`None` with `--no-pause`).
    pub fn end_pausing(&mut self) -> Option<(u32, u64)> {
        let p = self.pausing.as_mut()?;
        p.release();
        Some(p.counts())
    }

    /// One governor tick, at a row or a glance between rows: decide from
    /// `g` (and, with `--pool`, from what the pool admits) and act on the
    /// FIFO; the next row's jobs columns follow ([`Js::fill_row`]).
    pub fn tick(&mut self, g: Glance) {
        let usable = g.mem_known.then(|| {
            g.cg_mem_avail_mb
                .map_or(g.mem_avail_mb, |cg| cg.min(g.mem_avail_mb))
        });
        // What the jobs reach first: pausing, slots and the pool then
        // weigh the same peak per job.
        let job_mb = self.pausing.as_mut().and_then(|p| p.scan());
        let moved = self.gov.measure(&Seen {
            usable_mb: usable,
            held_mb: g.build_rss_mb,
            compiler_peak_mb: g.build_peak_rss_mb,
            job_mb,
        });
        if self.explain && moved.is_some() {
            self.say_peak();
        }
        let paused = self.pause(usable);
        let in_pipe = self.pool.in_pipe().unwrap_or(0);
        let mut inp = headroom::govern::jobserver::Inputs {
            usable_mb: usable,
            compiler_rss_mb: g.build_rss_mb,
            in_pipe,
            now_ms: headroom::tick::clock::monotonic_ns() / 1_000_000,
            pool_allowed: None,
        };
        let own = headroom::govern::admit::Own {
            available_mb: g.mem_avail_mb,
            running: self.gov.running(in_pipe),
            cap: self.gov.cap,
            peak_mb: self.gov.peak_mb(),
            held_mb: g.build_rss_mb,
        };
        let (gov, fifo) = (&mut self.gov, &mut self.pool);
        let mut d = None;
        let mut step = |pool_allowed: Option<u32>| {
            inp.pool_allowed = pool_allowed;
            let dec = gov.decide(&inp);
            let put = fifo.put(dec.put);
            let taken = fifo.take(dec.take);
            gov.settled(put, taken);
            d = Some(dec);
            // It would start more: no token waits in its FIFO, below its cap.
            (
                dec.running,
                dec.allowed,
                in_pipe == 0 && dec.running < gov.cap,
            )
        };
        let admitted = match (self.shared.as_mut(), g.mem_known) {
            (Some(sh), true) => sh.tick(own, |a| step(Some(a))),
            _ => {
                step(None);
                None
            }
        };
        self.columns
            .ticked(d.map(|d| (d.running, d.allowed)), paused);
        let Some(d) = d else { return };
        let yielded = admitted.map_or(0, |a| a.yielded);
        let now = (d.allowed, d.memory_bound, yielded);
        if self.explain && self.said != Some(now) {
            self.said = Some(now);
            self.say(&d, usable, admitted);
        }
    }

    /// Fills the jobs columns of `row`, whose tick was the last
    /// ([`JobsColumns`]), the pauses so far and, with `--pool`, the pool's
    /// figures.
    pub fn fill_row(&mut self, row: &mut headroom::tick::row::Row) {
        row.jobs = self.columns.row();
        row.pauses = self.pausing.as_ref().map(|p| p.counts());
        row.pool = self.shared.as_ref().map(|sh| sh.figures());
    }

    /// The FIFO to watch between ticks while tokens are withheld (see
    /// [`Js::reclaim`]); `None` otherwise.
    pub fn watch_fd(&self) -> Option<BorrowedFd<'_>> {
        (self.gov.withholding() > 0).then(|| self.pool.own_fd())
    }

    /// Between ticks: tokens that came back while withheld are kept at
    /// once, before the client that returned them reads them again.
    pub fn reclaim(&mut self) {
        let want = self.gov.withholding();
        if want > 0 {
            let got = self.pool.take(want);
            self.gov.reclaimed(got);
        }
    }

    /// The pausing step of a tick, before the slots are decided: room is
    /// `usable` less the other builds' growth and the reserve. Returns the
    /// jobs paused now (also into the lease).
    fn pause(&mut self, usable: Option<u64>) -> u32 {
        let (Some(p), Some(usable)) = (self.pausing.as_mut(), usable) else {
            return self.pausing.as_ref().map_or(0, |p| p.paused_now());
        };
        let others = self
            .shared
            .as_ref()
            .map_or(0, |sh| sh.figures().others_growth_mb);
        // The running jobs' growth is the pauser's to weigh: none here.
        let room = headroom::govern::jobserver::room_mb(i128::from(usable) - i128::from(others), 0);
        let now_ms = headroom::tick::clock::monotonic_ns() / 1_000_000;
        let n = p.act(self.gov.peak_mb(), room, now_ms);
        if let Some(sh) = self.shared.as_mut() {
            sh.set_paused(p.paused());
        }
        n
    }

    /// `--explain`: the peak per job moved: from what was last said, to
    /// what it is now, and why. Said when why changes, or when it moved by
    /// a tenth or more since (a job growing past it would raise it a few
    /// MiB every tick).
    fn say_peak(&mut self) {
        let p = self.gov.estimate().report();
        let (was, why) = self.said_peak;
        let moved_far = p.now_mb.abs_diff(was).saturating_mul(10) >= was;
        if core::mem::discriminant(&why) == core::mem::discriminant(&p.basis) && !moved_far {
            return;
        }
        self.said_peak = (p.now_mb, p.basis);
        let moved = if was == p.now_mb {
            format!("still {was} MiB")
        } else {
            format!("{was} MiB → {} MiB", p.now_mb)
        };
        let _ = writeln!(
            std::io::stderr(),
            "headroom: jobserver: peak per job {moved} {}",
            basis_text(&p)
        );
    }

    /// `--explain`: the slots now, and why.
    fn say(
        &self,
        d: &headroom::govern::jobserver::Decision,
        usable: Option<u64>,
        admitted: Option<headroom::govern::admit::Admission>,
    ) {
        let why = match (admitted, self.shared.as_ref()) {
            (Some(a), Some(sh)) if d.memory_bound => format!(
                "pool {}: room {} MiB for {} MiB per job with {} other build(s)' growth reserved{}",
                sh.dir,
                a.room_mb,
                self.gov.peak_mb(),
                sh.others.len(),
                if a.yielded > 0 {
                    format!("; {} slot(s) left to builds running fewer", a.yielded)
                } else {
                    String::new()
                }
            ),
            _ if d.memory_bound => format!(
                "memory: room {} MiB for {} MiB per job (usable {} MiB, {} running)",
                d.room_mb,
                self.gov.peak_mb(),
                usable.unwrap_or(0),
                d.running
            ),
            _ => format!("the cap, {}", self.gov.cap),
        };
        let _ = writeln!(
            std::io::stderr(),
            "headroom: jobserver: {} job(s) at once ({why})",
            d.allowed
        );
    }
}

/// The peak per job to start from, and where it came from, surest first:
/// `--from`'s measured peak (`from_csv`), else the one the pool remembers
/// for `run_id` (`--pool`), else `--peak-mb`, else the profile's
/// environment override, else the profile: named with `--profile`, the
/// user's choice; else the default profile's, headroom's guess.
fn starting_peak(j: &JobserverArgs, from_csv: Option<u64>, run_id: &str) -> (u64, Source) {
    let remembered = match (from_csv, &j.pool) {
        (None, Some((dir, from))) => super::pool::remembered(dir, from, run_id),
        _ => None,
    };
    let from_env = env_nonempty(j.profile.env_var()).and_then(|v| v.parse::<u64>().ok());
    match (from_csv.or(remembered), j.peak_mb, from_env) {
        (Some(p), ..) if from_csv.is_some() => (p, Source::FromCsv(p)),
        (Some(p), ..) => (p, Source::Pool(p)),
        (None, Some(p), _) => (p, Source::PeakMb),
        (None, None, Some(p)) if p > 0 => (p, Source::Env(j.profile.env_var())),
        _ if j.profile_given => (
            j.profile.default_mb(false),
            Source::Profile(j.profile.name()),
        ),
        _ => (j.profile.default_mb(false), Source::Guess(j.profile.name())),
    }
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

/// Why the peak per job is what `p` says, as the report layer writes it.
fn basis_text(p: &PeakReport) -> String {
    let mut t: heapless::String<256> = heapless::String::new();
    let _ = p.write_basis(&mut t);
    t.as_str().to_string()
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

/// A `-j` in CMD's own arguments when CMD is make or ninja: they then run
/// their own slots and ignore the jobserver (make says "-jN forced in
/// submake: resetting jobserver mode").
pub fn own_jobs_flag(argv: &[String]) -> Option<&str> {
    let (prog, args) = argv.split_first()?;
    let name = prog.rsplit('/').next().unwrap_or(prog);
    if !matches!(name, "make" | "gmake" | "ninja" | "samu") {
        return None;
    }
    args.iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .find(|a| {
            (a.starts_with("-j") && a[2..].bytes().all(|b| b.is_ascii_digit()))
                || *a == "--jobs"
                || a.starts_with("--jobs=")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: a pause between two rows is in the next row's
    /// jobs_paused; running and allowed are those of the row's own tick.
    #[test]
    fn a_row_s_jobs_paused_is_the_most_since_the_previous_row() {
        let mut c = JobsColumns::default();
        assert_eq!(c.row(), None, "nothing decided yet");
        c.ticked(Some((2, 4)), 0);
        assert_eq!(c.row(), Some((2, 4, 0)));
        // Between rows: one paused, then two, then continued.
        c.ticked(Some((3, 4)), 1);
        c.ticked(Some((3, 3)), 2);
        c.ticked(Some((2, 3)), 0);
        c.ticked(Some((2, 4)), 0);
        assert_eq!(c.row(), Some((2, 4, 2)));
        // Still paused at a row: the next row starts from it.
        c.ticked(Some((1, 2)), 1);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 1);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 0);
        assert_eq!(c.row(), Some((1, 2, 1)));
        c.ticked(Some((1, 2)), 0);
        assert_eq!(c.row(), Some((1, 2, 0)));
        // A tick that decided nothing leaves the row's columns empty.
        c.ticked(None, 0);
        assert_eq!(c.row(), None);
    }

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

    #[test]
    fn a_j_of_make_or_ninja_is_told() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(own_jobs_flag(&v(&["make", "-j8"])), Some("-j8"));
        assert_eq!(
            own_jobs_flag(&v(&["/usr/bin/make", "-k", "-j"])),
            Some("-j")
        );
        assert_eq!(own_jobs_flag(&v(&["ninja", "--jobs=4"])), Some("--jobs=4"));
        assert_eq!(own_jobs_flag(&v(&["make", "-C", "sub"])), None);
        assert_eq!(own_jobs_flag(&v(&["make", "-jobs-file"])), None);
        // cargo keeps to the jobserver whatever its -j.
        assert_eq!(own_jobs_flag(&v(&["cargo", "build", "-j8"])), None);
        assert_eq!(own_jobs_flag(&v(&["make", "--", "-j8"])), None);
    }
}
