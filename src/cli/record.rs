//! `record` and `run`: the options checked into one value, the files
//! opened, the build's cgroup and CMD started, the recording loop, and the
//! end (summary, advice, CMD's status).

use std::cell::RefCell;
use std::io::Write;
use std::process::ExitCode;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};

use headroom::followed::buildcg::BuildCgroup;
use headroom::followed::compilers::CompilerList;
use headroom::govern::jobserver::notes::{Note, Tell};
use headroom::govern::recording::{
    self, CsvOut, Hooks, Interval, Loop, LoopSettings, OpenError, Stop, StopFlag, Watch, WriteState,
};
use headroom::kernel::root::Root;
use headroom::report::prom::{Labels, PromFile};
use headroom::report::summary::{BuildScope, Summary};
use headroom::tick::row::Row;
use headroom::tick::sampler::{Buffers, Build, Options, Sampler, Source, StageLog, Warn};

use super::action_row::append_action;
use super::child::{
    Forward, Started, Stops, command_label, controlling_terminal, die_like, findable, finish_child,
    not_found, spawn,
};
use super::defaults::{disk_path, env_nonempty, no_mlock};
use super::files::{open_parent, open_root, same_file};
use super::jobserver_setup::{JobserverArgs, JobserverRun};
use super::messages::{
    Fail, Instead, StderrWarn, errtext, io_text, shown, usage, warn_unknown_limits,
};
use super::options::{RecordArgs, RunArgs};
use super::plan::measured_advice;
use super::report_cmd::{Output, emit_record_summary};
use super::signals::{Signals, install_signals};
use super::status_line::StatusLine;

/// `record`: a recording without a command.
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn record_cmd(a: RecordArgs) -> Result<ExitCode, Fail> {
    record_job(a, None)
}

/// The command `run` starts, and where its action row goes.
pub struct ChildSpec {
    /// CMD and its arguments, lossily decoded (for labels and ids).
    pub argv: Vec<String>,
    /// The same, as the OS gave them (what is executed).
    pub raw: Vec<std::ffi::OsString>,
    /// `--actions FILE`: where the action row goes.
    pub actions: Option<String>,
    /// `--jobserver` and its options, checked.
    pub jobserver: Option<JobserverArgs>,
    /// Try a memory cgroup of its own for CMD (not `--no-cgroup`).
    pub cgroup: bool,
}

/// `run`: CMD recorded (or, with only `--actions`, just timed), its status
/// passed on.
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn run_cmd(a: RunArgs, raw: Vec<std::ffi::OsString>) -> Result<ExitCode, Fail> {
    if a.cmd.is_empty() {
        return usage("run: no command given (headroom run [options] -- CMD [ARGS...])");
    }
    let (r, own) = a.split();
    let light =
        own.actions.is_some() && r.out_dir.is_none() && r.run_id.is_none() && r.prom.is_none();
    let jobserver = match JobserverArgs::check(&own, r.count.is_some()) {
        Ok(j) => j,
        Err(msg) => return usage(&msg),
    };
    let light = light && jobserver.is_none();
    let (mut argv, mut raw) = (own.cmd, raw);
    if let Some(j) = &jobserver {
        j.take_own_j(&mut argv, &mut raw);
    }
    let spec = ChildSpec {
        argv,
        raw,
        actions: own.actions,
        jobserver,
        cgroup: !own.no_cgroup,
    };
    if light {
        return run_light(spec, r.label.as_deref());
    }
    record_job(r, Some(spec))
}

/// `run --actions FILE` with nothing to record: start, wait, append a row,
/// exit with the command's status.
pub fn run_light(spec: ChildSpec, label: Option<&str>) -> Result<ExitCode, Fail> {
    let wake = install_signals(true)?;
    let own_group = !controlling_terminal();
    let c = match spawn(&spec.raw, None, own_group, &[], None) {
        Ok(c) => c,
        Err((code, msg)) => {
            let _ = writeln!(std::io::stderr(), "headroom: {msg}");
            return Ok(ExitCode::from(code));
        }
    };
    let watch = Watch::child(c.pid.as_raw_nonzero().get()).unwrap_or(Watch::Child(c.pid));
    let stops = Stops::default();
    let fwd = Forward {
        pid: c.pid,
        own_group,
        wake: wake.as_fd(),
        stops: &stops,
    };
    let u = finish_child(&c, &watch, &fwd, None);
    if let Some(path) = &spec.actions {
        append_action(path, label, &spec.argv, &c, &u);
    }
    die_like(u.end);
    Ok(ExitCode::from(u.end.shell_status()))
}

/// A run id becomes part of a file name: no `/`, no `..`, nothing empty.
pub fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && !id.contains('/')
        && !id.contains("..")
        && !id.bytes().any(|b| b.is_ascii_control())
}

/// A recording, `record`'s or `run`'s, as a sequence of steps: the options
/// checked, the files opened, the build's cgroup and CMD started, the
/// loop, the end.
fn record_job(a: RecordArgs, child: Option<ChildSpec>) -> Result<ExitCode, Fail> {
    let mut r = match Recording::check(a)? {
        Ok(r) => r,
        Err(code) => return Ok(code),
    };
    let pid_watch = r.watch.take();
    // From here on a stop signal yields the summary, however early it
    // comes: the handlers are in place before the CSV exists.
    let wake = install_signals(child.is_some())?;
    // A command that cannot be found fails before the files are opened:
    // an earlier run's CSV of the same run id stays as it was.
    if let Some(prog) = child.as_ref().and_then(|c| c.raw.first())
        && !findable(prog)
    {
        let (code, msg) = not_found(prog);
        let _ = writeln!(std::io::stderr(), "headroom: {msg}");
        return Ok(ExitCode::from(code));
    }
    let mut f = match Files::open(&r, child.as_ref())? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    // The witness must outlive the build: ask the OOM killer to pick the
    // build first (root only; CMD gets the value we started with back).
    let adj_before = headroom::kernel::oom_score_adj::protect_self();
    // With a controlling terminal CMD shares our process group (see Forward).
    let own_group = !controlling_terminal();
    let mut bufs = boxed(Buffers::new);
    // `run`: the build's own memory cgroup, where permitted, before CMD
    // starts (it joins it before it execs).
    let mut cg = match &child {
        Some(spec) if spec.cgroup && r.root.is_live() => make_build_cgroup(&r.root),
        Some(spec) if spec.cgroup => (None, "--root is not this host"),
        Some(_) => (None, "--no-cgroup"),
        None => (None, ""),
    };
    let mut sampler = Sampler::new(&r.root, r.options(child.is_some()), &mut bufs);
    warn_limits(&r.root, &sampler, child.as_ref());
    let mut summary = boxed(|| Summary::new(r.a.near_oom_mb, r.a.low_disk_gb));
    summary.tmp_is_tmpfs = sampler.tmp_is_tmpfs;
    summary.disk_device = sampler.disk_device();
    summary.cgroup_unknown = sampler.mem_cgroup_unknown;
    if sampler.container.is_some() {
        summary.set_in_container();
    }
    // `run`: start the command now that the CSV is ready and the signal
    // handlers are in place, and watch it.
    let started = match &child {
        None => None,
        Some(spec) => match start_child(spec, &f, adj_before, own_group, &mut cg) {
            Ok(c) => Some(c),
            Err(code) => return Ok(code),
        },
    };
    if let (Some(j), Some(c)) = (f.js.as_mut(), started.as_ref()) {
        j.follow(
            &r.root,
            c.pid.as_raw_nonzero().get().unsigned_abs(),
            cg.0.as_ref(),
        );
    }
    let (build_cg, cg_why) = cg;
    let watch = r.follow(
        pid_watch,
        started.as_ref(),
        build_cg.as_ref(),
        cg_why,
        &mut sampler,
        &mut summary,
    );
    let settings = r.settings(child.is_some(), &watch);
    let stops = Stops::default();
    let forward = started.as_ref().map(|c| Forward {
        pid: c.pid,
        own_group,
        wake: wake.as_fd(),
        stops: &stops,
    });
    let stop = run_loop(LoopParts {
        sampler: &mut sampler,
        bufs: &mut bufs,
        files: &mut f,
        summary: &mut summary,
        settings,
        watch: &watch,
        stop: LoopStop(forward),
        recording: &r,
        wake: wake.as_fd(),
    });
    let ended = Ended {
        started,
        child,
        build_cg,
        watch,
        own_group,
        stops,
    };
    finish(&r, &mut f, &mut summary, stop, ended, wake.as_fd())
}

/// `record`'s and `run`'s options, checked: one value the later steps
/// read.
struct Recording {
    /// The arguments as given (`out_dir` and `run_id` resolved below).
    a: RecordArgs,
    out_dir: String,
    /// Where the out dir came from, for messages.
    out_from: &'static str,
    run_id: String,
    compilers: CompilerList,
    /// `--watch-pid`'s process (`Some(Watch::None)` without one; `None`:
    /// no such process); taken by [`Recording::follow`].
    watch: Option<Watch>,
    root: Root,
    disk: String,
}

impl Recording {
    /// Checks the options (a usage error is printed and its exit code
    /// returned) and opens `--root`.
    fn check(a: RecordArgs) -> Result<Result<Recording, ExitCode>, Fail> {
        let out_from = if a.out_dir.is_some() {
            "--out-dir"
        } else {
            "out dir ($LOG_DIR)"
        };
        let out_dir = a
            .out_dir
            .clone()
            .or_else(|| env_nonempty("LOG_DIR"))
            .unwrap_or_else(|| ".".into());
        let run_id = a
            .run_id
            .clone()
            .or_else(|| env_nonempty("CROSS_RUN_ID"))
            .unwrap_or_else(|| "run".into());
        if let Err(msg) = check_values(&a, &out_dir, &run_id) {
            return usage(&msg).map(Err);
        }
        let compilers = match &a.compilers {
            Some(list) => match CompilerList::parse(list.as_bytes()) {
                Ok(l) => l,
                Err(_) => {
                    return usage(&format!(
                        "--compilers '{list}': expected comma-separated names of 1 to 15 bytes"
                    ))
                    .map(Err);
                }
            },
            None => CompilerList::default_list(),
        };
        let watch = match a.watch_pid {
            None => Some(Watch::None),
            Some(p) if p <= 0 => {
                return usage(&format!("--watch-pid {p}: not a process id")).map(Err);
            }
            Some(p) => Watch::pid(p),
        };
        if let Some(p) = &a.prom
            && std::path::Path::new(p).file_name().is_none()
        {
            return usage(&format!(
                "--prom '{}': not a file path (e.g. /var/lib/prometheus/node-exporter/headroom.prom)",
                shown(p)
            ))
            .map(Err);
        }
        let (root, _) = open_root(&a.root)?;
        let disk = disk_path(a.disk_path.clone());
        Ok(Ok(Recording {
            a,
            out_dir,
            out_from,
            run_id,
            compilers,
            watch,
            root,
            disk,
        }))
    }

    /// The sampler's options; `run` (`for_run`) ignores a log that CMD has
    /// not written since it started.
    fn options(&self, for_run: bool) -> Options<'_> {
        Options {
            disk_path: &self.disk,
            tmp_path: "/tmp",
            stage_log: match (&self.a.stage_log, &self.a.stage_log_dir) {
                (Some(f), _) => StageLog::File(f),
                (None, Some(d)) => StageLog::Dir(d),
                (None, None) => StageLog::None,
            },
            label: self.a.label.as_deref(),
            compilers: &self.compilers,
            log_since: for_run.then(headroom::tick::clock::now_epoch),
        }
    }

    /// THE BUILD: its cgroup when CMD is in it, else CMD's process tree,
    /// or --watch-pid's; its compilers are told apart from the host's. Set
    /// in the sampler and the summary; returns what the loop watches.
    fn follow<'s>(
        &self,
        pid_watch: Option<Watch>,
        started: Option<&Started>,
        build_cg: Option<&'s BuildCgroup>,
        cg_why: &'static str,
        sampler: &mut Sampler<'s>,
        summary: &mut Summary,
    ) -> Watch {
        let build_pid = match started {
            Some(c) => u32::try_from(c.pid.as_raw_nonzero().get()).ok(),
            None => self
                .a
                .watch_pid
                .filter(|_| matches!(pid_watch, Some(Watch::PidFd(_) | Watch::Kill(_))))
                .and_then(|p| u32::try_from(p).ok()),
        };
        let (build, scope) = build_scope(build_pid, build_cg, cg_why);
        // A process tree's OOM kills are named by /dev/kmsg, when it can
        // be read: the summary says how they were counted.
        let kmsg = sampler.follow(build);
        summary.build = scope.map(|s| match s {
            BuildScope::Tree(why, _) => BuildScope::Tree(why, kmsg),
            s => s,
        });
        match (started, pid_watch) {
            (Some(c), _) => {
                Watch::child(c.pid.as_raw_nonzero().get()).unwrap_or(Watch::Child(c.pid))
            }
            (None, Some(w)) => w,
            (None, None) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "headroom: warning: --watch-pid {}: no such process; taking one row",
                    self.a.watch_pid.unwrap_or(0)
                );
                Watch::None
            }
        }
    }

    /// The loop's settings: the interval (`--interval`, else 15 s for
    /// `record` and the widening one for `run`), the row count (one row
    /// when `--watch-pid`'s process is gone), the columns.
    fn settings(&self, run: bool, watch: &Watch) -> LoopSettings {
        let count = if matches!(watch, Watch::None) && self.a.watch_pid.is_some() {
            Some(1)
        } else {
            self.a.count
        };
        let interval = match self.a.interval {
            Some(ms) => Interval::Fixed(ms),
            None if run => Interval::Widening,
            None => Interval::Fixed(RECORD_INTERVAL_MS),
        };
        LoopSettings {
            interval,
            count,
            compat: self.a.compat,
        }
    }
}

/// `record`'s interval without `--interval`: the toolchain's 15 s.
const RECORD_INTERVAL_MS: u64 = 15_000;

/// The checks of [`Recording::check`] on plain values: the usage error's
/// text, if any.
fn check_values(a: &RecordArgs, out_dir: &str, run_id: &str) -> Result<(), String> {
    if a.count == Some(0) {
        return Err("--count must be at least 1".into());
    }
    if out_dir.is_empty() {
        return Err("--out-dir must not be empty".into());
    }
    if a.root.as_deref() == Some("") {
        return Err("--root must not be empty".into());
    }
    if !valid_run_id(run_id) {
        return Err(format!(
            "run id '{}' is not usable in a file name (no '/', no '..', no control characters)",
            shown(run_id)
        ));
    }
    if a.stage_log.is_some() && a.stage_log_dir.is_some() {
        return Err("--stage-log and --stage-log-dir exclude each other".into());
    }
    Ok(())
}

/// What a recording writes to, opened before CMD starts.
struct Files {
    /// The out dir.
    dir: OwnedFd,
    csv_name: String,
    summary_name: String,
    prom: Option<Box<PromFile>>,
    /// `run --jobserver`: the FIFO and the governor.
    js: Option<JobserverRun>,
    csv: CsvOut,
}

impl Files {
    /// The out dir, `--prom`, the jobserver's FIFO, then the CSV — in that
    /// order, so that a failure costs no earlier CSV.
    fn open(r: &Recording, child: Option<&ChildSpec>) -> Result<Result<Files, ExitCode>, Fail> {
        let (out_dir, out_from) = (&r.out_dir, r.out_from);
        // Start-up, before any sampling: std's recursive mkdir is fine here.
        std::fs::create_dir_all(out_dir).map_err(|e| {
            Fail(format!(
                "cannot create {out_from} {out_dir}: {}",
                io_text(&e)
            ))
        })?;
        let dir = rustix::fs::open(
            out_dir.as_str(),
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| Fail(format!("{out_from} {out_dir}: {}", errtext(e))))?;
        let csv_name = format!("resources-{}.csv", r.run_id);
        let stem = csv_name.trim_end_matches(".csv");
        let summary_name = format!("{stem}.summary.txt");
        // --prom before the CSV: a bad path must not cost the last run's CSV.
        let prom = match &r.a.prom {
            None => None,
            Some(path) => {
                let (pdir, name) = open_parent(path, "--prom")?;
                if same_file(pdir.as_fd(), dir.as_fd())
                    && (name == csv_name || name == summary_name)
                {
                    return usage(&format!(
                        "--prom {path} is this recording's own {}",
                        if name == csv_name { "CSV" } else { "summary" }
                    ))
                    .map(Err);
                }
                Some(create_prom(pdir.as_fd(), &name, path)?)
            }
        };
        let jobserver = child.and_then(|c| c.jobserver.as_ref());
        // run --jobserver: the FIFO and the governor, before CMD starts and
        // before the CSV is truncated (a failure must not cost the last one).
        let js = match jobserver {
            Some(j) => {
                // `--from`: read as `jobs --from` reads it, before anything
                // is made (a bad file fails the run now).
                let measured = j
                    .from
                    .as_deref()
                    .map(super::plan::largest_peak)
                    .transpose()?;
                Some(JobserverRun::start(
                    j,
                    &r.root,
                    dir.as_fd(),
                    out_dir,
                    &r.run_id,
                    measured,
                )?)
            }
            None => None,
        };
        let replacing = child.is_some() && holds_rows(dir.as_fd(), &csv_name);
        let header = headroom::tick::row::columns::header(r.a.compat, jobserver.is_some());
        let csv = CsvOut::create(dir.as_fd(), &csv_name, header).map_err(|e| match e {
            OpenError::Symlink => Fail(format!(
                "{out_dir}/{csv_name} is a symlink: refusing to write through it"
            )),
            OpenError::Io(e) => Fail(format!("cannot write {out_dir}/{csv_name}: {}", errtext(e))),
            OpenError::Header(e) => Fail(format!(
                "cannot write {out_dir}/{csv_name}: {}; nothing recorded, no CSV left there",
                errtext(e)
            )),
        })?;
        if replacing {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: replacing {} from an earlier run (use --run-id NAME to keep both)",
                shown(&path_in(out_dir, &csv_name))
            );
        }
        Ok(Ok(Files {
            dir,
            csv_name,
            summary_name,
            prom,
            js,
            csv,
        }))
    }
}

/// True when `dir` holds a regular file `name` (not followed through a
/// symlink) that is not empty: a CSV of an earlier run that rewriting
/// would lose.
fn holds_rows(dir: BorrowedFd<'_>, name: &str) -> bool {
    rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
            && st.st_size > 0
    })
}

/// The path of `name` in the out dir `out_dir` as the user gave it, to
/// paste into the same shell: the bare name for `.`, else
/// `out_dir/name` (one `/` between them).
pub fn path_in(out_dir: &str, name: &str) -> String {
    match out_dir.trim_end_matches('/') {
        "." => name.to_string(),
        "" if out_dir.starts_with('/') => format!("/{name}"),
        dir => format!("{dir}/{name}"),
    }
}

/// The last line of `record` and `run`: where the CSV and, when it could
/// be written, the summary went.
pub fn wrote_line(out_dir: &str, csv: &str, summary: Option<&str>) -> String {
    let csv = shown(&path_in(out_dir, csv));
    match summary {
        Some(s) => format!("headroom: wrote {csv} and {}", shown(&path_in(out_dir, s))),
        None => format!("headroom: wrote {csv}"),
    }
}

/// Starts CMD in the build's cgroup `cg` when there is one; when it cannot
/// join, once more without (the cgroup dropped, `cg`'s reason set, one
/// warning). A command that cannot start: its message, and the shell's
/// exit code.
fn start_child(
    spec: &ChildSpec,
    f: &Files,
    adj_before: Option<i16>,
    own_group: bool,
    cg: &mut (Option<BuildCgroup>, &'static str),
) -> Result<Started, ExitCode> {
    let env = f.js.as_ref().map_or(&[][..], |j| &j.env[..]);
    let join = cg.0.as_ref().map(BuildCgroup::join_fd);
    let first = spawn(&spec.raw, adj_before, own_group, env, join);
    // CMD that could not join its cgroup did not run: once more
    // without it (an exec that fails fails the same way again).
    let again = match first {
        Err(_) if join.is_some() => {
            let r = spawn(&spec.raw, adj_before, own_group, env, None);
            if r.is_ok() {
                // Removed now: the build is its process tree.
                *cg = (None, "the command could not join its cgroup");
                let _ = writeln!(
                    std::io::stderr(),
                    "headroom: warning: the command could not join its cgroup; the build is its process tree"
                );
            }
            r
        }
        r => r,
    };
    again.map_err(|(code, msg)| {
        let _ = writeln!(std::io::stderr(), "headroom: {msg}");
        ExitCode::from(code)
    })
}

/// The recording loop with its parts: the governor (`run --jobserver`),
/// the `--prom` file and the status line after each row, a warning when a row
/// is lost or written again.
///
/// The footprint is fixed here, from the first tick: the stack the loop's
/// frames use (committed from this frame, the one that calls the loop),
/// every page already mapped, then all of it locked in RAM.
fn run_loop(l: LoopParts<'_, '_>) -> Stop {
    let LoopParts {
        sampler,
        bufs,
        files: f,
        summary,
        settings,
        watch,
        stop,
        recording: r,
        wake,
    } = l;
    let labels = Labels {
        run_id: &r.run_id,
        disk_path: &r.disk,
    };
    let prom_path = r.a.prom.as_deref().unwrap_or("");
    let status = RefCell::new(StatusLine::new());
    let mut warn = LoopWarn(&status);
    let mut hooks = Shown {
        prom: &mut f.prom,
        csv_name: f.csv_name.as_str(),
        labels,
        prom_path,
        status: &status,
    };
    headroom::tick::footprint::commit_stack();
    summary.memory_lock = Some(commit_footprint(bufs));
    let stop = recording::run(Loop {
        sampler,
        bufs,
        csv: &mut f.csv,
        summary,
        settings,
        watch,
        stop: &stop,
        stop_fd: Some(wake),
        warn: &mut warn,
        governor: f.js.as_mut().map(JobserverRun::driver),
        hooks: &mut hooks,
    });
    sampler.end(&mut warn);
    status.borrow_mut().clear();
    stop
}

/// `make()`'s value on the heap. Never inlined: `Box::new` builds the
/// value on the stack first, and in `record_job`'s frame the sampler's
/// buffers (88 KiB) or the summary (54 KiB) would stay resident for the
/// whole recording, above the stack it commits; in a frame of its own,
/// below `record_job`'s, the stack is given back before the first tick
/// (`headroom::tick::footprint::commit_mappings`).
#[inline(never)]
fn boxed<T>(make: impl FnOnce() -> T) -> Box<T> {
    Box::new(make())
}

/// The recording loop's parts, gathered for [`run_loop`].
struct LoopParts<'l, 's> {
    /// Reads each row and each glance.
    sampler: &'l mut Sampler<'s>,
    /// The sampler's buffers.
    bufs: &'l mut Buffers,
    /// The CSV, `--prom` and the jobserver's governor.
    files: &'l mut Files,
    /// Fed with each row.
    summary: &'l mut Summary,
    /// Interval, count, columns.
    settings: LoopSettings,
    /// The process whose exit ends the recording.
    watch: &'l Watch,
    /// How a stop signal is seen (and passed on to CMD with `run`).
    stop: LoopStop<'l>,
    /// The options, checked.
    recording: &'l Recording,
    /// The self-pipe, readable when a stop signal arrives.
    wake: BorrowedFd<'l>,
}

/// How the loop sees a stop signal: `run` passes it on to CMD
/// ([`Forward`]); `record` only reads the flag ([`Signals`]).
struct LoopStop<'a>(Option<Forward<'a>>);

impl StopFlag for LoopStop<'_> {
    fn signal(&self) -> Option<i32> {
        match &self.0 {
            Some(forward) => forward.signal(),
            None => Signals.signal(),
        }
    }
}

/// What the loop shows after each row and between rows: the `--prom`
/// file and the status line after a row, a warning when a row is lost or
/// written again; the status line's clock each second between rows.
struct Shown<'a, 's> {
    prom: &'a mut Option<Box<PromFile>>,
    csv_name: &'a str,
    labels: Labels<'a>,
    prom_path: &'a str,
    status: &'s RefCell<StatusLine>,
}

impl Hooks for Shown<'_, '_> {
    fn row_done(&mut self, row: &Row, state: WriteState, summary: &Summary) {
        let mut status = self.status.borrow_mut();
        if let Some(p) = self.prom.as_mut() {
            update_prom(p, row, summary, self.labels, self.prom_path, &mut status);
        }
        row_written(state, row, self.csv_name, &mut status);
    }

    fn wants_seconds(&self) -> bool {
        self.status.borrow().is_on()
    }

    fn second(&mut self, since_row_s: u64) {
        self.status.borrow_mut().tick(since_row_s);
    }
}

/// The sampler's warnings during the loop: the status line cleared first,
/// so a warning never lands after it on its line.
struct LoopWarn<'s>(&'s RefCell<StatusLine>);

impl Warn for LoopWarn<'_> {
    fn warn(&mut self, source: Source, why: &'static str) {
        self.0.borrow_mut().clear();
        StderrWarn.warn(source, why);
    }

    fn note(&mut self, source: Source, what: &'static str) {
        self.0.borrow_mut().clear();
        StderrWarn.note(source, what);
    }

    fn log(&mut self, option: &'static str, path: &str, what: &'static str) {
        self.0.borrow_mut().clear();
        StderrWarn.log(option, path, what);
    }
}

impl Tell for LoopWarn<'_> {
    fn tell(&mut self, note: &Note<'_>) {
        self.0.borrow_mut().clear();
        StderrWarn.tell(note);
    }
}

/// The `--prom` file rewritten after a row; one line when writing it starts
/// failing and one when it works again.
fn update_prom(
    p: &mut PromFile,
    row: &Row,
    summary: &Summary,
    labels: Labels<'_>,
    prom_path: &str,
    status: &mut StatusLine,
) {
    let was_failing = p.failing;
    match p.update(row, summary, labels, true) {
        Ok(()) if was_failing => {
            p.failing = false;
            status.clear();
            let _ = writeln!(std::io::stderr(), "headroom: writing {prom_path} again");
        }
        Err(e) if !was_failing => {
            p.failing = true;
            status.clear();
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: cannot write {prom_path}: {}; it keeps the previous figures and sampling goes on",
                errtext(e)
            );
        }
        _ => {}
    }
}

/// After a row: the status line, or the line that says a row was lost,
/// written again, or went to a new CSV.
fn row_written(state: WriteState, row: &Row, csv_name: &str, status: &mut StatusLine) {
    match state {
        WriteState::Lost(e) => {
            status.clear();
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: cannot write a row to {csv_name}: {}; sampling goes on and the summary counts lost rows",
                errtext(e)
            );
        }
        WriteState::Resumed => {
            status.clear();
            let _ = writeln!(std::io::stderr(), "headroom: writing {csv_name} again");
        }
        WriteState::Recreated => {
            status.clear();
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: {csv_name} was deleted; writing a new one from this row on"
            );
        }
        WriteState::Written | WriteState::StillLost => status.show(row),
    }
}

/// What the loop leaves to the end.
struct Ended {
    started: Option<Started>,
    child: Option<ChildSpec>,
    build_cg: Option<BuildCgroup>,
    watch: Watch,
    own_group: bool,
    /// The first stop signal while CMD ran.
    stops: Stops,
}

/// The end: the governor's report and its FIFO's name gone, `--prom`'s
/// last figures; for `run`, CMD reaped, its cgroup's last figures and the
/// cgroup removed, its action row; then the summary with the advice, and
/// the exit status (CMD's for `run`, whatever became of the summary).
fn finish(
    r: &Recording,
    f: &mut Files,
    summary: &mut Summary,
    stop: Stop,
    e: Ended,
    wake: BorrowedFd<'_>,
) -> Result<ExitCode, Fail> {
    if let Some(j) = f.js.as_mut() {
        // No job is left stopped, the FIFO's name goes, and so does this
        // build's share of a pool.
        summary.jobserver = j.driver().finish();
    }
    let labels = Labels {
        run_id: &r.run_id,
        disk_path: &r.disk,
    };
    if let Some(p) = f.prom.as_mut()
        && let Err(err) = p.finish(summary, labels)
    {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: cannot write {} at the end: {}",
            r.a.prom.as_deref().unwrap_or(""),
            errtext(err)
        );
    }
    let (dir, name, out_dir) = (f.dir.as_fd(), f.summary_name.as_str(), r.out_dir.as_str());
    match (e.started, e.child) {
        (Some(c), Some(spec)) => {
            let exited_ns = match stop {
                Stop::WatchedExited { at_ns } => Some(at_ns),
                Stop::Count | Stop::Signal(_) => None,
            };
            let fwd = Forward {
                pid: c.pid,
                own_group: e.own_group,
                wake,
                stops: &e.stops,
            };
            let u = finish_child(&c, &e.watch, &fwd, exited_ns);
            if let (Some(j), Stop::WatchedExited { .. }) = (f.js.as_mut(), &stop) {
                j.remember(u.end);
            }
            summary.run = Some((command_label(&spec.argv), u));
            summary.partial.interrupt = e.stops.interrupt(&c, &u);
            if let Some(mut cg) = e.build_cg {
                end_build_cgroup(&mut cg, summary);
            }
            if let Some(path) = &spec.actions {
                append_action(path, r.a.label.as_deref(), &spec.argv, &c, &u);
            }
            // CMD owns stdout (it may be `gcc -E`): the report goes to stderr.
            let advice = measured_advice(&r.root, summary);
            // A summary that cannot be written is said, but the exit status
            // stays CMD's: that is what a build script checks.
            let written = emit_record_summary(summary, dir, name, out_dir, Output::Stderr, &advice);
            if let Err(Fail(msg)) = &written {
                let _ = writeln!(std::io::stderr(), "headroom: {msg}");
            }
            let summary_name = written.is_ok().then_some(name);
            let line = wrote_line(out_dir, &f.csv_name, summary_name);
            let _ = writeln!(std::io::stderr(), "{line}");
            die_like(u.end);
            Ok(ExitCode::from(u.end.shell_status()))
        }
        _ => {
            if let Stop::Signal(sig) = stop {
                let _ = writeln!(
                    std::io::stderr(),
                    "headroom: stopped by signal {sig}; writing the summary"
                );
            }
            let advice = measured_advice(&r.root, summary);
            let written = emit_record_summary(summary, dir, name, out_dir, Output::Text, &advice);
            let line = wrote_line(out_dir, &f.csv_name, written.is_ok().then_some(name));
            let _ = writeln!(std::io::stderr(), "{line}");
            written?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Says, once, that the container's memory limit (and, for `run
/// --jobserver` without `--max-jobs`, its CPU limit) is unknown, when
/// `/proc/self/cgroup` names a cgroup that cannot be read.
fn warn_limits(root: &Root, sampler: &Sampler<'_>, child: Option<&ChildSpec>) {
    let governed = child.and_then(|c| c.jobserver.as_ref());
    let cpu = match governed {
        Some(j) if !j.max_jobs_given() => {
            let mut buf = vec![0u8; headroom::kernel::cgroup::OPEN_BUF_LEN];
            headroom::kernel::cgroup::open_cpu(root, &mut buf).err()
        }
        _ => None,
    };
    let instead = match governed {
        Some(_) => Instead {
            then: "the governor plans from the host's figures and the cg_mem_* columns stay empty",
            memory: None,
            cpu: Some("--max-jobs N"),
        },
        None => Instead {
            then: "the cg_mem_* columns stay empty and the summary's memory figures are the host's",
            memory: None,
            cpu: None,
        },
    };
    warn_unknown_limits(sampler.mem_cgroup_unknown, cpu, &instead);
}

/// Makes the build's memory cgroup (and removes those left by killed
/// headrooms), or says in a few words why not: the build is then its
/// process tree.
pub fn make_build_cgroup(root: &Root) -> (Option<BuildCgroup>, &'static str) {
    let mut buf = vec![0u8; headroom::kernel::cgroup::OPEN_BUF_LEN];
    let own = match headroom::kernel::cgroup::open_memory(root, &mut buf) {
        Ok(Some(own)) => own,
        Ok(None) => return (None, "no memory cgroup controller"),
        Err(_) => return (None, "its memory cgroup could not be read"),
    };
    let pid = rustix::process::getpid()
        .as_raw_nonzero()
        .get()
        .unsigned_abs();
    let mut dir = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    headroom::followed::buildcg::remove_stale(root, &own, pid, &mut dir, &mut buf);
    match BuildCgroup::create(root, &own, pid, &mut buf) {
        Ok(cg) => (Some(cg), ""),
        Err(headroom::followed::buildcg::CreateError::NoController) => {
            (None, "no memory cgroup controller")
        }
        Err(headroom::followed::buildcg::CreateError::Refused(
            _,
            rustix::io::Errno::ACCESS | rustix::io::Errno::PERM,
        )) => (None, "not permitted to make a cgroup"),
        Err(headroom::followed::buildcg::CreateError::Refused(..)) => {
            (None, "the cgroup could not be made")
        }
        Err(headroom::followed::buildcg::CreateError::Busy) => {
            (None, "cgroup v2: other processes share headroom's cgroup")
        }
    }
}

/// The build cgroup's last figures (its OOM kills, its peak charge) into
/// the summary, and the processes CMD never waited for
/// ([`headroom::followed::rusage::Partial::unreaped`]); then the cgroup
/// removed, leftovers moved out first, and those that really outlived
/// CMD said ([`leftovers`]).
pub fn end_build_cgroup(cg: &mut BuildCgroup, summary: &mut Summary) {
    let mut buf = vec![0u8; headroom::followed::buildcg::BUF_LEN];
    if matches!(summary.build, Some(BuildScope::Cgroup(_))) {
        summary
            .build_oom_final(cg.oom_kills(&mut headroom::kernel::kept::Kept::new(false), &mut buf));
        summary.build_peak_charge_mb = cg.peak_bytes(&mut buf).map(|b| b >> 20);
    }
    let interrupted = summary.partial.interrupt.is_some();
    let (unreaped, outlived) = leftovers(cg, interrupted, &mut buf);
    summary.partial.unreaped = unreaped;
    let r = cg.remove(&mut buf);
    if outlived > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: {outlived} process(es) outlived the command; moved out of its cgroup"
        );
    }
    if !r.removed {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: cgroup {} could not be removed; the next run removes it once it is empty",
            cg.name()
        );
    }
}

/// The build's processes once CMD has been reaped: how many it never
/// waited for (the first look: running on, or exiting on the same
/// signal), and how many really outlived it (running on, each counted
/// once, after a look every [`outlived::STEP_MS`] until they have
/// settled, [`outlived::Look::settled`]: at most [`outlived::GRACE_MS`],
/// all of it when the build was `interrupted` and some are left).
fn leftovers(cg: &BuildCgroup, interrupted: bool, buf: &mut [u8]) -> (u32, u32) {
    use headroom::followed::outlived::{self, Fate, Look};
    let mut list = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    let mut pids = Vec::new();
    let mut look = || {
        pids.clear();
        let _ = cg
            .members_here()
            .for_each(&mut list, buf, &mut |p| pids.push(p));
        Look::of(&mut pids, |p| {
            Fate::of_stat(std::fs::read(format!("/proc/{p}/stat")).ok().as_deref())
        })
    };
    let first = look();
    let (mut prev, mut now, mut waited_ms) = (None, first, 0);
    while !now.settled(prev, interrupted, waited_ms) {
        std::thread::sleep(std::time::Duration::from_millis(outlived::STEP_MS));
        waited_ms += outlived::STEP_MS;
        (prev, now) = (Some(now), look());
    }
    (first.present(), now.live)
}

/// THE BUILD for the sampler and the summary: `cg` when the build's
/// process `pid` joined it (before exec), else `pid`'s process tree; no
/// build without a pid. `why`: why there is no cgroup. A tree's scope
/// says /dev/kmsg names its OOM victims until [`Sampler::follow`] says.
pub fn build_scope<'c>(
    pid: Option<u32>,
    cg: Option<&'c BuildCgroup>,
    why: &'static str,
) -> (Build<'c>, Option<BuildScope>) {
    match (pid, cg) {
        (None, _) => (Build::None, None),
        (Some(_), Some(cg)) => (Build::Cgroup(cg), Some(BuildScope::Cgroup(cg.version))),
        (Some(pid), None) => (Build::Tree(pid), Some(BuildScope::Tree(why, None))),
    }
}

/// Faults in every page the recording can touch and locks them in RAM
/// unless `HEADROOM_NO_MLOCK` is set (see [`headroom::tick::footprint`]); one
/// line on stderr says what could not be done. Call it after
/// [`headroom::tick::footprint::commit_stack`], just before the loop.
pub fn commit_footprint(bufs: &mut Buffers) -> headroom::tick::footprint::Lock {
    use headroom::tick::footprint::{self, Lock, NotLocked, Permit};
    let vm_size = match footprint::commit_mappings(bufs.file_buf()) {
        Ok(c) => Some(c.vm_size),
        Err(e) => {
            let mut why = heapless::String::<256>::new();
            let _ = e.write(&mut why);
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: its own pages could not all be made resident before the first tick ({}); its footprint may grow later",
                why.as_str()
            );
            None
        }
    };
    let lock = footprint::lock(vm_size, no_mlock(), Permit::of_self());
    if let Lock::NotLocked(why @ (NotLocked::Limit { .. } | NotLocked::Failed(_))) = lock {
        let mut text = heapless::String::<256>::new();
        let _ = why.write(&mut text);
        let _ = writeln!(
            std::io::stderr(),
            "headroom: note: its memory is not locked in RAM: {}",
            text.as_str()
        );
    }
    lock
}

/// Creates `--prom` `path` (`name` in `dir`) and writes it once, empty, so
/// a path that cannot be written fails now, not at the first row.
///
/// Boxed and never inlined: a [`headroom::report::prom::PromFile`] holds 32 KiB of
/// text, and in `record_job`'s frame it would be made resident (stack
/// probes touch every page of a frame) by every recording, `--prom` or not.
#[inline(never)]
pub fn create_prom(
    dir: BorrowedFd<'_>,
    name: &str,
    path: &str,
) -> Result<Box<headroom::report::prom::PromFile>, Fail> {
    use headroom::report::prom::{PromError, PromFile};
    PromFile::create(dir, name).map(Box::new).map_err(|e| {
        Fail(match e {
            PromError::Name => format!("--prom {path}: the file name is longer than 240 bytes"),
            PromError::Symlink => {
                format!("--prom {path} is a symlink: refusing to write through it")
            }
            PromError::NotRegular => {
                format!("--prom {path} is not a regular file (a directory, device or FIFO)")
            }
            PromError::Io(e) => format!("cannot write --prom {path}: {}", errtext(e)),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_given() {
        assert_eq!(path_in(".", "resources-run.csv"), "resources-run.csv");
        assert_eq!(path_in("./", "r.csv"), "r.csv");
        assert_eq!(path_in("logs", "r.csv"), "logs/r.csv");
        assert_eq!(path_in("logs//", "r.csv"), "logs/r.csv");
        assert_eq!(path_in("/", "r.csv"), "/r.csv");
        assert_eq!(path_in("/var/log/b", "r.csv"), "/var/log/b/r.csv");
        assert_eq!(
            wrote_line("out", "resources-a.csv", Some("resources-a.summary.txt")),
            "headroom: wrote out/resources-a.csv and out/resources-a.summary.txt"
        );
        assert_eq!(
            wrote_line(".", "resources-a.csv", None),
            "headroom: wrote resources-a.csv"
        );
    }

    #[test]
    fn run_ids() {
        assert!(valid_run_id("t"));
        assert!(valid_run_id("build-2026.11"));
        assert!(!valid_run_id("a/b"));
        assert!(!valid_run_id(".."));
        assert!(!valid_run_id(""));
        assert!(!valid_run_id("x\ny"));
    }
}
