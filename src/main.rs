//! `headroom`: the command line over the `headroom` library.
//!
//! std is used here only for what the library cannot do without it:
//! arguments, environment, stdout/stderr. Sampling, formatting and the
//! summary live in the `#![no_std]` library and allocate nothing.
//!
//! Exit codes: 0 success; 1 runtime failure (one line on stderr); 2 usage.

use std::io::Write;
use std::os::raw::c_int;
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

use argh::FromArgs;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use headroom::build::buildcg::BuildCgroup;
use headroom::build::compilers::CompilerList;
use headroom::build::usage::{End, Usage};
use headroom::govern::record::{self, CsvOut, OpenError, Plan, Stop, StopFlag, Watch, WriteState};
use headroom::kernel::root::Root;
use headroom::report::csvread::{CsvError, CsvRows};
use headroom::report::summary::{BuildScope, Summary, Text};
use headroom::tick::sampler::{Buffers, Build, Options, Sampler, Source, StageLog, Warn};

/// headroom: what a build did to RAM, swap, zram, /tmp, disk and CPU on a
/// small Linux host.
#[derive(FromArgs)]
struct Cli {
    /// read proc/ and sys/ under DIR instead of / (before the subcommand:
    /// `headroom --root boards/x record ...`)
    #[argh(option)]
    root: Option<String>,
    #[argh(subcommand)]
    cmd: Cmd,
}

#[derive(FromArgs)]
#[argh(subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start-up
enum Cmd {
    Record(RecordArgs),
    Run(RunArgs),
    Summarize(SummarizeArgs),
    Actions(ActionsArgs),
    Jobs(JobsArgs),
    Advise(AdviseArgs),
    Status(StatusArgs),
    Plot(PlotArgs),
}

/// Sample the host every --interval seconds into resources-<run-id>.csv and
/// write the summary when stopped (--count, --watch-pid exit, SIGINT,
/// SIGTERM, SIGHUP).
#[derive(FromArgs)]
#[argh(subcommand, name = "record")]
#[argh(example = "make -j4 >build.log 2>&1 & {command_name} --stage-log build.log --watch-pid $!")]
#[argh(example = "{command_name} --out-dir ~/build-logs --run-id pi-build --interval 5")]
#[argh(example = "{command_name} --count 20 --interval 1 --compat")]
struct RecordArgs {
    /// output directory (default: $LOG_DIR, else .)
    #[argh(option)]
    out_dir: Option<String>,
    /// run id: the CSV is resources-<ID>.csv (default: $CROSS_RUN_ID, else run)
    #[argh(option)]
    run_id: Option<String>,
    /// seconds between rows, e.g. 15, 0.5 or 0 (default 15)
    #[argh(option, from_str_fn(parse_interval))]
    interval: Option<u64>,
    /// stop after N rows
    #[argh(option)]
    count: Option<u64>,
    /// directory whose filesystem is the build disk (default:
    /// $BUILDKIT_CACHE_DIR, else $HOME, else /)
    #[argh(option)]
    disk_path: Option<String>,
    /// build log to take stage and context from
    #[argh(option)]
    stage_log: Option<String>,
    /// directory whose active log (the newest *.log with a NAME.log.run
    /// marker, else the newest *.log) gives stage and context
    #[argh(option)]
    stage_log_dir: Option<String>,
    /// stage when the log names none
    #[argh(option)]
    label: Option<String>,
    /// stop when this process exits
    #[argh(option)]
    watch_pid: Option<i32>,
    /// near-OOM threshold in MB of MemAvailable (default 4096, scaled on small hosts)
    #[argh(option)]
    near_oom_mb: Option<u64>,
    /// low-disk threshold in GB free (default 20, scaled on small disks)
    #[argh(option)]
    low_disk_gb: Option<u64>,
    /// write only the 14 toolchain-compatible columns
    #[argh(switch)]
    compat: bool,
    /// comma-separated process names that count as compilers (replaces the
    /// default list; a trailing * matches a prefix)
    #[argh(option)]
    compilers: Option<String>,
    /// rewrite FILE after every row with the latest figures in the
    /// Prometheus text format, for node_exporter's textfile collector
    /// (FILE's directory must exist; name it *.prom)
    #[argh(option)]
    prom: Option<String>,
    /// read proc/ and sys/ under DIR instead of / (default /)
    #[argh(option)]
    root: Option<String>,
}

/// Run CMD while recording, then print the summary and what CMD used
/// (wall, CPU, average cores, ru_maxrss, signal) on stderr and exit with
/// CMD's status. On a terminal CMD shares headroom's job (Ctrl-C, Ctrl-Z and
/// fg act on both); SIGTERM and SIGHUP sent to headroom are passed on to CMD,
/// and without a terminal SIGINT too, to CMD's whole process group. With
/// --actions and none of --out-dir, --run-id or --prom, nothing is
/// recorded or printed: one row is appended to the actions file (for
/// wrapping every compile: make CC="headroom run --actions a.csv -- gcc").
#[derive(FromArgs)]
#[argh(subcommand, name = "run")]
#[argh(example = "{command_name} --out-dir ~/build-logs --run-id pi-build -- make -j4")]
#[argh(example = "make CC=\"{command_name} --actions $PWD/actions.csv -- gcc\" -j4")]
#[argh(example = "{command_name} --jobserver --profile heavy -- make")]
struct RunArgs {
    /// output directory (default: $LOG_DIR, else .)
    #[argh(option)]
    out_dir: Option<String>,
    /// run id: the CSV is resources-<ID>.csv (default: $CROSS_RUN_ID, else run)
    #[argh(option)]
    run_id: Option<String>,
    /// seconds between rows, e.g. 15, 0.5 or 0 (default 15)
    #[argh(option, from_str_fn(parse_interval))]
    interval: Option<u64>,
    /// stop recording after N rows (CMD still runs to its end)
    #[argh(option)]
    count: Option<u64>,
    /// directory whose filesystem is the build disk (default:
    /// $BUILDKIT_CACHE_DIR, else $HOME, else /)
    #[argh(option)]
    disk_path: Option<String>,
    /// build log to take stage and context from
    #[argh(option)]
    stage_log: Option<String>,
    /// directory whose active log (the newest *.log with a NAME.log.run
    /// marker, else the newest *.log) gives stage and context
    #[argh(option)]
    stage_log_dir: Option<String>,
    /// stage when the log names none; also the id in --actions
    #[argh(option)]
    label: Option<String>,
    /// near-OOM threshold in MB of MemAvailable (default 4096, scaled on small hosts)
    #[argh(option)]
    near_oom_mb: Option<u64>,
    /// low-disk threshold in GB free (default 20, scaled on small disks)
    #[argh(option)]
    low_disk_gb: Option<u64>,
    /// write only the 14 toolchain-compatible columns
    #[argh(switch)]
    compat: bool,
    /// comma-separated process names that count as compilers
    #[argh(option)]
    compilers: Option<String>,
    /// rewrite FILE after every row with the latest figures in the
    /// Prometheus text format, for node_exporter's textfile collector
    /// (FILE's directory must exist; name it *.prom)
    #[argh(option)]
    prom: Option<String>,
    /// read proc/ and sys/ under DIR instead of / (default /)
    #[argh(option)]
    root: Option<String>,
    /// append one row (id, start, wall, CPU, max RSS, signal, exit) to FILE
    #[argh(option)]
    actions: Option<String>,
    /// be CMD's GNU make jobserver (MAKEFLAGS, CARGO_MAKEFLAGS), handing
    /// out job slots only while memory allows; rows every 0.25 s at most
    #[argh(switch)]
    jobserver: bool,
    /// with --jobserver: most jobs at once (default: the usable cores)
    #[argh(option)]
    max_jobs: Option<u32>,
    /// with --jobserver: the memory a job may grow to, MiB, before any
    /// compiler is measured (default: the profile's)
    #[argh(option)]
    peak_mb: Option<u64>,
    /// with --jobserver: generic, rust or heavy, as for `jobs` (default
    /// generic)
    #[argh(option)]
    profile: Option<String>,
    /// with --jobserver: pipe (inherited descriptors R,W: make 4.3 and
    /// later, cargo) or fifo (a named FIFO: make 4.4, ninja 1.13, cargo)
    /// (default pipe)
    #[argh(option)]
    jobserver_style: Option<String>,
    /// with --jobserver: say on stderr each time the slots change, and why
    #[argh(switch)]
    explain: bool,
    /// make no memory cgroup for CMD: the build is CMD's process tree
    /// (default: a cgroup of its own where permitted: root on cgroup v1,
    /// a delegated cgroup on v2)
    #[argh(switch)]
    no_cgroup: bool,
    /// the command and its arguments, after --
    #[argh(positional, greedy)]
    cmd: Vec<String>,
}

/// Summarize a recorded CSV (headroom's or the bash toolchain's) to stdout
/// and to <csv minus .csv>.summary.txt.
#[derive(FromArgs)]
#[argh(subcommand, name = "summarize")]
#[argh(example = "{command_name} ~/build-logs/resources-pi-build.csv")]
#[argh(example = "{command_name} --json resources-run.csv | jq .min_mem_avail")]
#[argh(example = "{command_name} --near-oom-mb 512 --low-disk-gb 2 resources-run.csv")]
struct SummarizeArgs {
    /// the CSV file
    #[argh(positional)]
    file: String,
    /// near-OOM threshold in MB of MemAvailable (default 4096, scaled on small hosts)
    #[argh(option)]
    near_oom_mb: Option<u64>,
    /// low-disk threshold in GB free (default 20, scaled on small disks)
    #[argh(option)]
    low_disk_gb: Option<u64>,
    /// print the summary as JSON on stdout (the .summary.txt file stays text)
    #[argh(switch)]
    json: bool,
}

/// Summarize an actions file written by `run --actions`: a table by
/// wall-time bucket, the actions that ended on a signal, the longest ones.
#[derive(FromArgs)]
#[argh(subcommand, name = "actions")]
#[argh(example = "{command_name} actions.csv")]
#[argh(example = "{command_name} --top 20 --min-wall 30 actions.csv")]
#[argh(example = "{command_name} --json actions.csv | jq .buckets")]
struct ActionsArgs {
    /// the actions CSV
    #[argh(positional)]
    file: String,
    /// how many of the longest actions to list (default 10, at most 100)
    #[argh(option, default = "10")]
    top: usize,
    /// list only actions with at least this many seconds of wall time
    #[argh(option, from_str_fn(parse_interval))]
    min_wall: Option<u64>,
    /// print JSON instead of the table
    #[argh(switch)]
    json: bool,
}

/// How many parallel compile jobs this host takes: prints the bare number
/// (make -j"$(headroom jobs --profile heavy)"). Environment: PARALLEL_JOBS,
/// BUILD_MEM_DIVISOR, AGGRESSIVE_PARALLELISM, DEFAULT_MB_PER_JOB,
/// RUST_MB_PER_JOB, CPP_HEAVY_MB_PER_JOB.
#[derive(FromArgs)]
#[argh(subcommand, name = "jobs")]
#[argh(example = "make -j\"$({command_name} --profile heavy)\"")]
#[argh(example = "{command_name} --explain")]
#[argh(example = "{command_name} --from ~/build-logs/resources-pi-build.csv --explain")]
struct JobsArgs {
    #[argh(option, default = "String::from(\"generic\")")]
    /// generic (2000 MB per job, 800 aggressive), rust (2500/1200) or heavy (4096)
    profile: String,
    /// peak MB one job needs (overrides the profile)
    #[argh(option)]
    peak_mb: Option<u64>,
    /// a recorded CSV: plan from its build's largest compiler
    /// (build_peak_rss_mb; without a build, peak_rss_mb), keeping 10 %
    /// headroom
    #[argh(option)]
    from: Option<String>,
    /// the job count you would like; capped by what fits
    #[argh(option)]
    requested: Option<u64>,
    /// plan for this many cores instead of this host's
    #[argh(option)]
    cores: Option<u64>,
    /// plan for this much usable memory (MB) instead of this host's
    #[argh(option)]
    avail_mb: Option<u64>,
    /// print each input, its value and where it came from
    #[argh(switch)]
    explain: bool,
    /// read proc/ and sys/ under DIR instead of / (a board tree)
    #[argh(option)]
    root: Option<String>,
}

/// The safe -j with a command per build tool and, when one job does not
/// fit, the swap to add and how (zram, dphys-swapfile or a swapfile).
#[derive(FromArgs)]
#[argh(subcommand, name = "advise")]
#[argh(example = "{command_name} --profile heavy")]
#[argh(example = "{command_name} --from ~/build-logs/resources-pi-build.csv")]
#[argh(example = "{command_name} --cores 4 --avail-mb 900 --peak-mb 1500")]
struct AdviseArgs {
    #[argh(option, default = "String::from(\"generic\")")]
    /// generic, rust or heavy
    profile: String,
    /// peak MB one job needs (overrides the profile)
    #[argh(option)]
    peak_mb: Option<u64>,
    /// a recorded CSV: plan from its build's largest compiler
    /// (build_peak_rss_mb; without a build, peak_rss_mb)
    #[argh(option)]
    from: Option<String>,
    /// the job count you would like
    #[argh(option)]
    requested: Option<u64>,
    /// plan for this many cores
    #[argh(option)]
    cores: Option<u64>,
    /// plan for this much usable memory (MB)
    #[argh(option)]
    avail_mb: Option<u64>,
    /// directory on the build disk (default: $BUILDKIT_CACHE_DIR, else
    /// $HOME, else /; / for a --root tree)
    #[argh(option)]
    disk_path: Option<String>,
    /// read proc/ and sys/ under DIR instead of / (a board tree)
    #[argh(option)]
    root: Option<String>,
}

/// One screen to read before a build: memory, swap, zram, /tmp and the build
/// disk, cgroup limits, cores, memory pressure, OOM kills.
#[derive(FromArgs)]
#[argh(subcommand, name = "status")]
#[argh(example = "{command_name}")]
#[argh(example = "{command_name} --disk-path ~/src")]
#[argh(example = "{command_name} --root boards/rpi4-4g-zram   # a board in the source tree")]
struct StatusArgs {
    /// directory on the build disk (default: $BUILDKIT_CACHE_DIR, else
    /// $HOME, else /; / for a --root tree)
    #[argh(option)]
    disk_path: Option<String>,
    /// read proc/ and sys/ under DIR instead of / (a board tree)
    #[argh(option)]
    root: Option<String>,
}

/// Draw a recorded CSV (headroom's or the toolchain's) as one self-contained
/// SVG: RAM used and available, swap, zram, disk free, CPU % and compilers
/// over time, stage bands, the near-OOM line and a marker at each OOM kill.
/// Prints the SVG's path on stdout (nothing else with -o -).
#[derive(FromArgs)]
#[argh(
    subcommand,
    name = "plot",
    example = "{command_name} ~/build-logs/resources-pi-build.csv   # writes resources-pi-build.svg beside it",
    example = "{command_name} resources-run.csv -o /var/www/html/build.svg",
    example = "{command_name} resources-run.csv -o - | gzip >build.svgz"
)]
struct PlotArgs {
    /// the CSV file
    #[argh(positional)]
    file: String,
    /// the SVG to write (default: the CSV's path with .csv replaced by
    /// .svg); - writes it to stdout
    #[argh(option, short = 'o')]
    out: Option<String>,
}

/// Parses seconds with up to three decimals into milliseconds.
fn parse_interval(s: &str) -> Result<u64, String> {
    let bad = || format!("bad interval '{s}': expected seconds such as 15, 0.5 or 0");
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty())
        || frac.len() > 3
        || !all_digits(whole)
        || !all_digits(frac)
    {
        return Err(bad());
    }
    let w: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let f: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<3}").parse().map_err(|_| bad())?
    };
    w.checked_mul(1000)
        .and_then(|ms| ms.checked_add(f))
        .ok_or_else(bad)
}

/// The message of a std I/O error ("No such file or directory").
fn io_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => errtext(rustix::io::Errno::from_raw_os_error(n)),
        None => e.to_string(),
    }
}

/// The C library's message for an errno, without the "(os error N)" tail.
fn errtext(e: rustix::io::Errno) -> String {
    let msg = std::io::Error::from_raw_os_error(e.raw_os_error()).to_string();
    // "No such file or directory (os error 2)" -> keep the words only.
    match msg.rfind(" (os error") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

/// A runtime failure: one line on stderr, exit 1.
struct Fail(String);

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(e: E) -> Fail {
        Fail(e.to_string())
    }
}

/// Makes sure fds 0, 1 and 2 are open (on /dev/null if closed), so that a
/// file headroom opens can never become "stdout" and receive the summary.
fn guard_std_fds() {
    for fd in 0..3 {
        // SAFETY: only queried with fcntl(F_GETFD), never closed or used for I/O.
        let probe = unsafe { BorrowedFd::borrow_raw(fd) };
        if rustix::io::fcntl_getfd(probe) == Err(rustix::io::Errno::BADF) {
            // open(2) returns the lowest free descriptor: this one.
            if let Ok(null) = rustix::fs::open(
                "/dev/null",
                rustix::fs::OFlags::RDWR,
                rustix::fs::Mode::empty(),
            ) {
                std::mem::forget(null);
            }
        }
    }
}

fn main() -> ExitCode {
    guard_std_fds();
    // Past the file-size limit (ulimit -f), write(2) fails with EFBIG, as
    // a full disk does, instead of SIGXFSZ killing headroom mid-summary. A
    // handler, not SIG_IGN, so CMD of `run` starts with the default.
    // SAFETY: `on_xfsz` does nothing; it has the C ABI signal(2) expects.
    unsafe {
        signal(
            rustix::process::Signal::XFSZ.as_raw(),
            on_xfsz as *const () as usize,
        );
    }
    // Arguments as the OS gave them: a Latin-1 file name must not panic.
    // argh sees a lossy UTF-8 copy; `run` passes CMD's raw bytes on.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let args: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let name = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("headroom")
        .to_string();
    // Paths and options must be UTF-8 (a lossy copy would point at another
    // file); only CMD, after `--`, may be any bytes.
    let ours = raw.iter().skip(1).take_while(|a| *a != "--");
    if let Some((i, bad)) = ours.enumerate().find(|(_, a)| a.to_str().is_none()) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: argument {} ('{}') is not valid UTF-8: options and paths must be (see {name} --help)",
            i + 1,
            shown(&bad.to_string_lossy())
        );
        return ExitCode::from(2);
    }
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let cli = match Cli::from_args(&[&name], &rest) {
        Ok(c) => c,
        Err(early) => {
            return match early.status {
                Ok(()) => {
                    let _ = writeln!(std::io::stdout(), "{}", early.output);
                    ExitCode::SUCCESS
                }
                Err(()) => {
                    // One line: argh's message, then where the usage is.
                    let words: Vec<&str> = early.output.split_whitespace().collect();
                    let _ = writeln!(
                        std::io::stderr(),
                        "headroom: {} (see {name} --help)",
                        words.join(" ")
                    );
                    ExitCode::from(2)
                }
            };
        }
    };
    let result = match cli.cmd {
        Cmd::Record(mut a) => {
            a.root = a.root.or(cli.root);
            record_cmd(a)
        }
        Cmd::Run(mut a) => {
            a.root = a.root.or(cli.root);
            // CMD's own bytes, untouched: everything after the first `--`.
            let raw_cmd = raw
                .iter()
                .position(|x| x == "--")
                .map(|i| raw[i + 1..].to_vec())
                .filter(|c| c.len() == a.cmd.len())
                .unwrap_or_else(|| a.cmd.iter().map(std::ffi::OsString::from).collect());
            run_cmd(a, raw_cmd)
        }
        Cmd::Summarize(a) => summarize_cmd(a),
        Cmd::Actions(a) => actions_cmd(a),
        Cmd::Jobs(mut a) => {
            a.root = a.root.or(cli.root);
            jobs_cmd(a)
        }
        Cmd::Advise(mut a) => {
            a.root = a.root.or(cli.root);
            advise_cmd(a)
        }
        Cmd::Status(mut a) => {
            a.root = a.root.or(cli.root);
            status_cmd(a)
        }
        Cmd::Plot(a) => plot_cmd(a),
    };
    match result {
        Ok(code) => code,
        Err(Fail(msg)) => {
            let _ = writeln!(std::io::stderr(), "headroom: {msg}");
            ExitCode::from(1)
        }
    }
}

/// A usage error found after argh: one line, exit 2.
fn usage(msg: &str) -> Result<ExitCode, Fail> {
    let _ = writeln!(std::io::stderr(), "headroom: {msg}");
    Ok(ExitCode::from(2))
}

/// `s` for a one-line message: control characters (a newline in a run id)
/// shown as `?`. (Not `{:?}`: its Unicode escaping tables cost ~10 KB.)
fn shown(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

fn env_nonempty(key: &str) -> Option<String> {
    match std::env::var(key) {
        Ok(v) => Some(v).filter(|v| !v.is_empty()),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: ${key} ('{}') is not valid UTF-8: ignored",
                shown(&v.to_string_lossy())
            );
            None
        }
    }
}

/// `--disk-path`, else $BUILDKIT_CACHE_DIR, else $HOME, else `/`; `/` when
/// the path is not a directory (as the toolchain does).
fn disk_path(arg: Option<String>) -> String {
    let p = arg
        .or_else(|| env_nonempty("BUILDKIT_CACHE_DIR"))
        .or_else(|| env_nonempty("HOME"))
        .unwrap_or_else(|| "/".into());
    if std::path::Path::new(&p).is_dir() {
        p
    } else {
        "/".into()
    }
}

/// The build-disk path for the planning commands: [`disk_path`] on the live
/// host; in a `--root` tree, `--disk-path` or the tree's `/` (this
/// machine's $HOME means nothing there).
fn disk_for(live: bool, arg: Option<String>) -> String {
    if live {
        disk_path(arg)
    } else {
        arg.unwrap_or_else(|| "/".into())
    }
}

/// A run id becomes part of a file name: no `/`, no `..`, nothing empty.
fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id != "."
        && !id.contains('/')
        && !id.contains("..")
        && !id.bytes().any(|b| b.is_ascii_control())
}

struct StderrWarn;

impl Warn for StderrWarn {
    fn warn(&mut self, source: Source, why: &'static str) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}: {why} (its field stays empty)",
            source.path()
        );
    }

    fn note(&mut self, source: Source, what: &'static str) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}: {what}",
            source.path()
        );
    }
}

/// The signal that asked us to stop (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Write end of the self-pipe that wakes the loop's poll(2).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

/// SIGXFSZ: nothing to do, the write(2) that raised it fails with EFBIG.
extern "C" fn on_xfsz(_sig: c_int) {}

extern "C" fn on_signal(sig: c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: `fd` is the write end of the self-pipe created in
        // `install_signals`, kept open for the life of the process
        // (`std::mem::forget`); write(2) is async-signal-safe.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = rustix::io::write(fd, &[0u8]);
    }
}

unsafe extern "C" {
    /// signal(2) from the C library linked into every Rust binary; the
    /// handler is a function address (SIG_DFL = 0, SIG_IGN = 1).
    fn signal(signum: c_int, handler: usize) -> usize;
}

struct Signals;

impl StopFlag for Signals {
    fn signal(&self) -> Option<i32> {
        match SIGNAL.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }
}

/// Installs SIGINT/SIGTERM/SIGHUP handlers that set [`SIGNAL`] and wake the
/// loop through a non-blocking self-pipe; returns the read end.
/// signal(2)'s SIG_DFL and SIG_IGN.
const SIG_DFL: usize = 0;
const SIG_IGN: usize = 1;

/// Sets the stop-signal handlers (INT, TERM, HUP, and QUIT for `run`, whose
/// terminal sends Ctrl-\\ to the whole job) and returns the read end of the
/// self-pipe they write to.
fn install_signals(quit: bool) -> Result<OwnedFd, Fail> {
    let (r, w) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )
    .map_err(|e| Fail(format!("cannot create a pipe: {}", errtext(e))))?;
    WAKE_FD.store(rustix::fd::AsRawFd::as_raw_fd(&w), Ordering::SeqCst);
    std::mem::forget(w);
    let quit = quit.then_some(rustix::process::Signal::QUIT);
    for sig in [
        rustix::process::Signal::INT,
        rustix::process::Signal::TERM,
        rustix::process::Signal::HUP,
    ]
    .into_iter()
    .chain(quit)
    {
        // SAFETY: `on_signal` only touches atomics and calls write(2), both
        // async-signal-safe; it has the C ABI signal(2) expects.
        let before = unsafe { signal(sig.as_raw(), on_signal as *const () as usize) };
        // `nohup headroom record &` (SIGHUP ignored) and a background job
        // of a non-interactive shell (SIGINT ignored) keep ignoring them,
        // as the GNU coding standards ask; SIGTERM is always caught.
        if before == SIG_IGN && sig != rustix::process::Signal::TERM {
            // (SIGQUIT ignored at start stays ignored too.)
            // SAFETY: SIG_IGN is a valid disposition for any of these.
            unsafe {
                signal(sig.as_raw(), SIG_IGN);
            }
        }
    }
    Ok(r)
}

fn record_cmd(a: RecordArgs) -> Result<ExitCode, Fail> {
    record_job(a, None)
}

/// The command `run` starts, and where its action row goes.
struct ChildSpec {
    /// CMD and its arguments, lossily decoded (for labels and ids).
    argv: Vec<String>,
    /// The same, as the OS gave them (what is executed).
    raw: Vec<std::ffi::OsString>,
    actions: Option<String>,
    jobserver: Option<JobserverArgs>,
    /// Try a memory cgroup of its own for CMD (not `--no-cgroup`).
    cgroup: bool,
}

/// `run --jobserver` and its options.
struct JobserverArgs {
    max_jobs: Option<u32>,
    peak_mb: Option<u64>,
    profile: headroom::plan::jobs::Profile,
    fifo: bool,
    explain: bool,
}

fn run_cmd(a: RunArgs, raw: Vec<std::ffi::OsString>) -> Result<ExitCode, Fail> {
    if a.cmd.is_empty() {
        return usage("run: no command given (headroom run [options] -- CMD [ARGS...])");
    }
    let light =
        a.actions.is_some() && a.out_dir.is_none() && a.run_id.is_none() && a.prom.is_none();
    let jobserver = if a.jobserver {
        let Some(profile) =
            headroom::plan::jobs::Profile::parse(a.profile.as_deref().unwrap_or("generic"))
        else {
            return usage("--profile: expected generic, rust or heavy");
        };
        let fifo = match a.jobserver_style.as_deref() {
            None | Some("pipe") => false,
            Some("fifo") => true,
            Some(other) => {
                return usage(&format!(
                    "--jobserver-style {}: expected pipe or fifo",
                    shown(other)
                ));
            }
        };
        if a.max_jobs == Some(0) || a.peak_mb == Some(0) {
            return usage("--max-jobs and --peak-mb must be at least 1");
        }
        if a.count.is_some() {
            return usage(
                "--count and --jobserver exclude each other: the jobserver ticks until CMD ends",
            );
        }
        if let Some(j) = own_jobs_flag(&a.cmd) {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --jobserver: '{j}' makes {} run its own slots and ignore the jobserver; leave it out",
                a.cmd[0]
            );
        }
        Some(JobserverArgs {
            max_jobs: a.max_jobs,
            peak_mb: a.peak_mb,
            profile,
            fifo,
            explain: a.explain,
        })
    } else {
        let given = [
            ("--max-jobs", a.max_jobs.is_some()),
            ("--peak-mb", a.peak_mb.is_some()),
            ("--profile", a.profile.is_some()),
            ("--jobserver-style", a.jobserver_style.is_some()),
            ("--explain", a.explain),
        ];
        if let Some((name, _)) = given.iter().find(|(_, on)| *on) {
            return usage(&format!("{name} goes with --jobserver"));
        }
        None
    };
    let light = light && jobserver.is_none();
    let spec = ChildSpec {
        argv: a.cmd,
        raw,
        actions: a.actions,
        jobserver,
        cgroup: !a.no_cgroup,
    };
    if light {
        return run_light(spec, a.label.as_deref());
    }
    let r = RecordArgs {
        out_dir: a.out_dir,
        run_id: a.run_id,
        interval: a.interval,
        count: a.count,
        disk_path: a.disk_path,
        stage_log: a.stage_log,
        stage_log_dir: a.stage_log_dir,
        label: a.label,
        watch_pid: None,
        near_oom_mb: a.near_oom_mb,
        low_disk_gb: a.low_disk_gb,
        compat: a.compat,
        compilers: a.compilers,
        prom: a.prom,
        root: a.root,
    };
    record_job(r, Some(spec))
}

/// Passes stop signals on to CMD instead of stopping: the recording ends
/// when CMD does.
///
/// With a controlling terminal CMD shares headroom's process group, as
/// under `time`: the terminal's Ctrl-C, Ctrl-\\ and Ctrl-Z reach CMD (and
/// a make or script around headroom) directly, so SIGINT is not sent again;
/// Ctrl-Z stops headroom with CMD and the shell's `fg` continues both.
/// Without one (CI, cron, systemd), CMD leads a process group of its own
/// and every signal goes to that whole group, grandchildren included.
struct Forward<'a> {
    /// CMD's pid; with `own_group`, also its process group.
    pid: rustix::process::Pid,
    own_group: bool,
    wake: BorrowedFd<'a>,
}

impl StopFlag for Forward<'_> {
    fn signal(&self) -> Option<i32> {
        use rustix::process::{Signal, kill_process, kill_process_group};
        // Empty the self-pipe so the next poll(2) waits again.
        let mut sink = [0u8; 64];
        while matches!(rustix::io::read(self.wake, &mut sink), Ok(n) if n > 0) {}
        let forward = match (SIGNAL.swap(0, Ordering::SeqCst), self.own_group) {
            (0, _) => return None,
            // From the terminal, CMD got it as we did.
            (2 | 3, false) => return None,
            (2, true) => Signal::INT,
            (3, true) => Signal::QUIT,
            (15, _) => Signal::TERM,
            _ => Signal::HUP,
        };
        let send = if self.own_group {
            kill_process_group
        } else {
            kill_process
        };
        let _ = send(self.pid, forward);
        // A stopped command (SIGTSTP, SIGTTIN) would never see it: wake it.
        let _ = send(self.pid, Signal::CONT);
        None
    }
}

/// Whether this process has a controlling terminal (job control applies).
fn controlling_terminal() -> bool {
    rustix::fs::open(
        "/dev/tty",
        rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::NOCTTY
            | rustix::fs::OFlags::NONBLOCK
            | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .is_ok()
}

/// After `run` has reported: when CMD died of SIGINT or SIGQUIT, headroom
/// dies of it too, so that a shell loop or make around it stops as it
/// would without headroom ("wait and cooperative exit"); the shell's `$?`
/// is the same 128 + signal either way. So it does when such a signal
/// reached headroom after CMD had ended (Ctrl-C during the summary), since
/// CMD never saw it. Returns otherwise: CMD that caught SIGINT and exited
/// normally decided for both.
fn die_like(end: headroom::build::usage::End) {
    use rustix::process::Signal;
    let sig = match (end, SIGNAL.load(Ordering::SeqCst)) {
        (headroom::build::usage::End::Signaled(2), _) | (_, 2) => Signal::INT,
        (headroom::build::usage::End::Signaled(3), _) | (_, 3) => Signal::QUIT,
        _ => return,
    };
    // SAFETY: SIG_DFL is a valid disposition for SIGINT and SIGQUIT.
    unsafe {
        signal(sig.as_raw(), SIG_DFL);
    }
    let _ = rustix::process::kill_process(rustix::process::getpid(), sig);
}

/// A started child: its pid and when it started.
struct Started {
    pid: rustix::process::Pid,
    start_epoch: u64,
    start: std::time::Instant,
}

/// Starts `argv` — in a process group of its own when `own_group` (see
/// [`Forward`]) — with `oom_score_adj` (when known) as its OOM score
/// adjustment: the value headroom had before it lowered its own, and, with
/// `join`, in the build's cgroup (it writes `0`, itself, to that
/// `cgroup.procs` before it execs; a refused write fails the spawn).
/// A command that cannot be started is reported like a shell would: 127
/// not found, 126 otherwise.
fn spawn(
    argv: &[std::ffi::OsString],
    oom_score_adj: Option<i16>,
    own_group: bool,
    env: &[(&str, std::ffi::OsString)],
    join: Option<BorrowedFd<'_>>,
) -> Result<Started, (u8, String)> {
    use std::os::unix::process::CommandExt;
    let (prog_os, args) = argv.split_first().ok_or((2, "no command".to_string()))?;
    let prog = prog_os.to_string_lossy();
    let start_epoch = headroom::tick::clock::now_epoch();
    let start = std::time::Instant::now();
    let mut cmd = std::process::Command::new(prog_os);
    cmd.args(args);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if own_group {
        cmd.process_group(0);
    }
    let join_raw = join.map(|fd| fd.as_raw_fd());
    if oom_score_adj.is_some() || join_raw.is_some() {
        // SAFETY: the closure runs in the forked child before execve; it
        // only calls open(2), write(2) and close(2) through rustix with a
        // stack buffer: no allocation, no lock, async-signal-safe. The raw
        // descriptor is the parent's open `cgroup.procs`, which outlives
        // this call (the caller borrows it for the whole spawn) and is
        // inherited by the child until its execve closes it.
        unsafe {
            cmd.pre_exec(move || {
                // CMD must not run outside the cgroup it is counted by:
                // a refused move fails the spawn (the caller retries
                // without a cgroup).
                if let Some(fd) = join_raw {
                    rustix::io::write(BorrowedFd::borrow_raw(fd), b"0")
                        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
                }
                if let Some(v) = oom_score_adj {
                    let _ = headroom::kernel::oom_score_adj::write_self(v);
                }
                Ok(())
            });
        }
    }
    match cmd.spawn() {
        Ok(child) => {
            let raw = i32::try_from(child.id()).unwrap_or(0);
            let pid =
                rustix::process::Pid::from_raw(raw).ok_or((126, format!("{prog}: bad pid")))?;
            // The child is reaped with wait4(2) below, for its rusage.
            drop(child);
            Ok(Started {
                pid,
                start_epoch,
                start,
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err((127, format!("{prog}: command not found")))
        }
        Err(e) => Err((126, format!("{prog}: cannot execute: {}", io_text(&e)))),
    }
}

/// `struct timeval` of the 64-bit Linux ABIs headroom is built for.
#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: std::os::raw::c_long,
    tv_usec: std::os::raw::c_long,
}

/// `struct rusage` (getrusage(2)): two timevals and fourteen longs.
#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    ru_maxrss: std::os::raw::c_long,
    rest: [std::os::raw::c_long; 13],
}

#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Rusage>() == 144);

unsafe extern "C" {
    /// wait4(2) from the C library: waits for `pid` and fills `rusage` with
    /// the resources of it and its waited-for descendants.
    fn wait4(pid: c_int, status: *mut c_int, options: c_int, rusage: *mut Rusage) -> c_int;
}

fn tv_ms(t: &Timeval) -> u64 {
    let s = u64::try_from(t.tv_sec).unwrap_or(0);
    let us = u64::try_from(t.tv_usec).unwrap_or(0);
    s.saturating_mul(1000).saturating_add(us / 1000)
}

/// Waits for the child to exit, forwarding stop signals meanwhile, then
/// reaps it with wait4(2) for its status and rusage.
fn finish_child(c: &Started, watch: &Watch, wake: BorrowedFd<'_>, own_group: bool) -> Usage {
    let fwd = Forward {
        pid: c.pid,
        own_group,
        wake,
    };
    while !watch.exited() {
        // Wakes at once on the exit (pidfd) or a signal (the self-pipe).
        record::wait(1000, Some(wake), watch);
        fwd.signal();
    }
    let mut status: c_int = 0;
    let mut ru = Rusage::default();
    loop {
        // SAFETY: `status` and `ru` are valid, writable and of the C types
        // wait4(2) expects (Rusage's size is checked at compile time).
        let r = unsafe { wait4(c.pid.as_raw_nonzero().get(), &mut status, 0, &mut ru) };
        if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
        fwd.signal();
    }
    Usage {
        wall_ms: u64::try_from(c.start.elapsed().as_millis()).unwrap_or(u64::MAX),
        user_ms: tv_ms(&ru.ru_utime),
        sys_ms: tv_ms(&ru.ru_stime),
        max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
        end: End::from_wait_status(status),
    }
}

/// A short label for the command: its words, cut to fit.
fn command_label(argv: &[String]) -> heapless::String<128> {
    let mut label = heapless::String::<128>::new();
    let joined = argv.join(" ");
    headroom::build::text::sanitize_into(joined.as_bytes(), 100, &mut label);
    label
}

/// Appends the action row for a finished run to `path` with one
/// O_APPEND write (header first when the file is new), so concurrent
/// wrapped commands never interleave.
fn append_action(path: &str, id_label: Option<&str>, argv: &[String], c: &Started, u: &Usage) {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut id = heapless::String::<96>::new();
    headroom::report::actions::action_id(id_label, &words, &mut id);
    let action = headroom::report::actions::Action::from_usage(id, c.start_epoch, u);
    let mut line = heapless::Vec::<u8, 256>::new();
    if headroom::report::actions::format_row(&action, &mut line).is_err() {
        return;
    }
    // O_NONBLOCK: a FIFO without a reader fails at once instead of
    // blocking; O_NOFOLLOW: a planted symlink is refused.
    // Read and write: the last byte is checked before appending.
    let flags = rustix::fs::OFlags::RDWR
        | rustix::fs::OFlags::APPEND
        | rustix::fs::OFlags::CREATE
        | rustix::fs::OFlags::NOFOLLOW
        | rustix::fs::OFlags::NONBLOCK
        | rustix::fs::OFlags::CLOEXEC;
    let mode = rustix::fs::Mode::from_raw_mode(0o644);
    // A table we may append to but not read (mode 0222, 0622 of another
    // user): write-only, without the torn-row check.
    let opened = match rustix::fs::open(path, flags, mode) {
        Err(rustix::io::Errno::ACCESS) => {
            let write_only = (flags - rustix::fs::OFlags::RDWR) | rustix::fs::OFlags::WRONLY;
            rustix::fs::open(path, write_only, mode)
        }
        other => other,
    };
    let fd = match opened {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: --actions {path} is a symlink: refusing to write through it"
            );
            return;
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: --actions {path}: {}",
                errtext(e)
            );
            return;
        }
    };
    let st = rustix::fs::fstat(&fd).ok();
    let regular = st.is_some_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
    });
    if !regular {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: --actions {path}: not a regular file"
        );
        return;
    }
    let size = st.map_or(0, |st| u64::try_from(st.st_size).unwrap_or(0));
    let mut bytes = Vec::with_capacity(line.len() + 64);
    if size == 0 {
        bytes.extend_from_slice(headroom::report::actions::HEADER.as_bytes());
    } else {
        // A row torn by an earlier full disk must not swallow this one.
        let mut last = [0u8; 1];
        if matches!(rustix::io::pread(&fd, &mut last, size - 1), Ok(1) if last[0] != b'\n') {
            bytes.push(b'\n');
        }
    }
    bytes.extend_from_slice(&line);
    // Reserve the space first (with slack for parallel appenders), so a
    // full disk refuses the row instead of tearing it; the file is shared,
    // so a torn row could not be cut back.
    let written = record::reserve(fd.as_fd(), size, bytes.len() + 4096)
        .and_then(|()| rustix::io::write(&fd, &bytes));
    let problem = match written {
        Ok(n) if n == bytes.len() => return,
        Ok(_) => "short write (disk full?): the row is torn".to_string(),
        Err(e) => format!("row not written: {}", errtext(e)),
    };
    let _ = writeln!(std::io::stderr(), "headroom: --actions {path}: {problem}");
}

/// `run --actions FILE` with nothing to record: start, wait, append a row,
/// exit with the command's status.
fn run_light(spec: ChildSpec, label: Option<&str>) -> Result<ExitCode, Fail> {
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
    let u = finish_child(&c, &watch, wake.as_fd(), own_group);
    if let Some(path) = &spec.actions {
        append_action(path, label, &spec.argv, &c, &u);
    }
    die_like(u.end);
    Ok(ExitCode::from(u.end.shell_status()))
}

/// The text of the live status line for `row`, with its `\r\x1b[K`
/// prefix: elapsed time, MemAvailable, swap used, the zram RAM saving
/// (stored / RAM used, the row's only zram figures), compilers, stage.
fn status_text(row: &headroom::tick::row::Row) -> heapless::String<256> {
    let mut line = heapless::String::<256>::new();
    let _ = ufmt::uwrite!(line, "\r\x1b[Kheadroom {}m", row.elapsed_s / 60);
    if row.elapsed_s % 60 < 10 {
        let _ = line.push('0');
    }
    let _ = ufmt::uwrite!(
        line,
        "{}s  avail {} MB  swap {} MB",
        row.elapsed_s % 60,
        row.mem_avail_mb,
        row.swap_used_mb
    );
    // The RAM saving (stored / RAM used): the row has no compressed size.
    if let (Some(stored), Some(ram)) = (row.ext.zram_stored_mb, row.ext.zram_ram_mb)
        && let Some(saving) = headroom::kernel::zram::ram_saving_centi(stored, ram)
    {
        let _ = ufmt::uwrite!(line, "  zram saving ");
        let _ = headroom::build::usage::write_centi(&mut line, saving);
        let _ = ufmt::uwrite!(line, ":1");
    }
    // The build's compilers first when there is a build: the host's count
    // is anyone's.
    let _ = match row.build_compilers {
        Some(n) => ufmt::uwrite!(line, "  compilers {} (host {})", n, row.compilers),
        None => ufmt::uwrite!(line, "  compilers {}", row.compilers),
    };
    let _ = ufmt::uwrite!(line, "  stage {}", row.stage.as_str());
    line
}

/// The live status line: rewritten in place on a terminal, never written
/// to a pipe or file.
struct StatusLine {
    on: bool,
    shown: bool,
    /// Terminal columns: a longer line would wrap, and `\r` would then
    /// rewrite only its last row.
    width: usize,
}

impl StatusLine {
    fn new() -> StatusLine {
        // SAFETY: fd 2 stays open for the life of the process (guard_std_fds).
        let err = unsafe { BorrowedFd::borrow_raw(2) };
        let width = rustix::termios::tcgetwinsize(err)
            .map(|w| usize::from(w.ws_col))
            .unwrap_or(80);
        StatusLine {
            on: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            shown: false,
            width: if width == 0 { 80 } else { width },
        }
    }

    fn show(&mut self, row: &headroom::tick::row::Row) {
        if !self.on {
            return;
        }
        let line = status_text(row);
        // Keep one column free so the cursor never wraps.
        let keep = line
            .char_indices()
            .nth(self.width.saturating_sub(1) + 4) // +4: the "\r\x1b[K" prefix
            .map_or(line.len(), |(i, _)| i);
        let _ = std::io::stderr().write_all(&line.as_bytes()[..keep]);
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = std::io::stderr().write_all(b"\r\x1b[K");
            self.shown = false;
        }
    }
}

fn record_job(a: RecordArgs, child: Option<ChildSpec>) -> Result<ExitCode, Fail> {
    // Where the out dir came from, for messages.
    let out_from = if a.out_dir.is_some() {
        "--out-dir"
    } else {
        "out dir ($LOG_DIR)"
    };
    let out_dir = a
        .out_dir
        .or_else(|| env_nonempty("LOG_DIR"))
        .unwrap_or_else(|| ".".into());
    let run_id = a
        .run_id
        .or_else(|| env_nonempty("CROSS_RUN_ID"))
        .unwrap_or_else(|| "run".into());
    if a.count == Some(0) {
        return usage("--count must be at least 1");
    }
    if out_dir.is_empty() {
        return usage("--out-dir must not be empty");
    }
    if a.root.as_deref() == Some("") {
        return usage("--root must not be empty");
    }
    if !valid_run_id(&run_id) {
        return usage(&format!(
            "run id '{}' is not usable in a file name (no '/', no '..', no control characters)",
            shown(&run_id)
        ));
    }
    let stage_log = match (&a.stage_log, &a.stage_log_dir) {
        (Some(_), Some(_)) => return usage("--stage-log and --stage-log-dir exclude each other"),
        (Some(f), None) => StageLog::File(f),
        (None, Some(d)) => StageLog::Dir(d),
        (None, None) => StageLog::None,
    };
    let compilers = match &a.compilers {
        Some(list) => match CompilerList::parse(list.as_bytes()) {
            Ok(l) => l,
            Err(_) => {
                return usage(&format!(
                    "--compilers '{list}': expected comma-separated names of 1 to 15 bytes"
                ));
            }
        },
        None => CompilerList::default_list(),
    };
    let watch = match a.watch_pid {
        None => Some(Watch::None),
        Some(p) if p <= 0 => return usage(&format!("--watch-pid {p}: not a process id")),
        Some(p) => Watch::pid(p),
    };
    if let Some(p) = &a.prom
        && std::path::Path::new(p).file_name().is_none()
    {
        return usage(&format!(
            "--prom '{}': not a file path (e.g. /var/lib/prometheus/node-exporter/headroom.prom)",
            shown(p)
        ));
    }
    let (root, _) = open_root(&a.root)?;
    let disk = disk_path(a.disk_path);

    // From here on a stop signal yields the summary, however early it
    // comes: the handlers are in place before the CSV exists.
    let wake = install_signals(child.is_some())?;
    // Start-up, before any sampling: std's recursive mkdir is fine here.
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        Fail(format!(
            "cannot create {out_from} {out_dir}: {}",
            io_text(&e)
        ))
    })?;
    let dir = rustix::fs::open(
        out_dir.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{out_from} {out_dir}: {}", errtext(e))))?;
    let csv_name = format!("resources-{run_id}.csv");
    let stem = csv_name.trim_end_matches(".csv");
    let summary_name = format!("{stem}.summary.txt");
    // --prom before the CSV: a bad path must not cost the last run's CSV.
    let mut prom = match &a.prom {
        None => None,
        Some(path) => {
            let (pdir, name) = open_parent(path, "--prom")?;
            if same_file(pdir.as_fd(), dir.as_fd()) && (name == csv_name || name == summary_name) {
                return usage(&format!(
                    "--prom {path} is this recording's own {}",
                    if name == csv_name { "CSV" } else { "summary" }
                ));
            }
            Some(create_prom(pdir.as_fd(), &name, path)?)
        }
    };
    let jobserver = child.as_ref().and_then(|c| c.jobserver.as_ref());
    // run --jobserver: the FIFO and the governor, before CMD starts and
    // before the CSV is truncated (a failure must not cost the last one).
    let mut js = match jobserver {
        Some(j) => Some(Js::start(j, &root, dir.as_fd(), &out_dir)?),
        None => None,
    };
    let header = headroom::tick::row::header(a.compat, jobserver.is_some());
    let mut csv = CsvOut::create(dir.as_fd(), &csv_name, header).map_err(|e| match e {
        OpenError::Symlink => Fail(format!(
            "{out_dir}/{csv_name} is a symlink: refusing to write through it"
        )),
        OpenError::Io(e) => Fail(format!("cannot write {out_dir}/{csv_name}: {}", errtext(e))),
    })?;

    let labels = headroom::report::prom::Labels {
        run_id: &run_id,
        disk_path: &disk,
    };
    let prom_path = a.prom.as_deref().unwrap_or("");

    // The witness must outlive the build: ask the OOM killer to pick the
    // build first (root only; CMD gets the value we started with back).
    let adj_before = headroom::kernel::oom_score_adj::protect_self();
    // With a controlling terminal CMD shares our process group (see Forward).
    let own_group = !controlling_terminal();
    let mut bufs = Box::new(Buffers::new());
    let opts = Options {
        disk_path: &disk,
        tmp_path: "/tmp",
        stage_log,
        label: a.label.as_deref(),
        compilers: &compilers,
    };
    // `run`: the build's own memory cgroup, where permitted, before CMD
    // starts (it joins it before it execs).
    let (mut build_cg, mut cg_why) = match &child {
        Some(spec) if spec.cgroup && root_is_live(&root) => make_build_cgroup(&root),
        Some(spec) if spec.cgroup => (None, "--root is not this host"),
        Some(_) => (None, "--no-cgroup"),
        None => (None, ""),
    };
    let mut sampler = Sampler::new(&root, opts, &mut bufs);
    let mut summary = Box::new(Summary::new(a.near_oom_mb, a.low_disk_gb));
    summary.tmp_is_tmpfs = sampler.tmp_is_tmpfs;
    let interval_ms = a.interval.unwrap_or(15_000);
    let plan = Plan {
        interval_ms: match js {
            Some(_) => interval_ms.min(headroom::govern::jobserver::TICK_MS),
            None => interval_ms,
        },
        count: a.count,
        compat: a.compat,
    };
    // `run`: start the command now that the CSV is ready and the signal
    // handlers are in place, and watch it.
    let started = match &child {
        None => None,
        Some(spec) => {
            let env = js.as_ref().map_or(&[][..], |j| &j.env[..]);
            let join = build_cg.as_ref().map(BuildCgroup::join_fd);
            let first = spawn(&spec.raw, adj_before, own_group, env, join);
            // CMD that could not join its cgroup did not run: once more
            // without it (an exec that fails fails the same way again).
            let again = match first {
                Err(_) if join.is_some() => {
                    let r = spawn(&spec.raw, adj_before, own_group, env, None);
                    if r.is_ok() {
                        // Removed now: the build is its process tree.
                        build_cg = None;
                        cg_why = "the command could not join its cgroup";
                        let _ = writeln!(
                            std::io::stderr(),
                            "headroom: warning: the command could not join its cgroup; the build is its process tree"
                        );
                    }
                    r
                }
                r => r,
            };
            match again {
                Ok(c) => Some(c),
                Err((code, msg)) => {
                    let _ = writeln!(std::io::stderr(), "headroom: {msg}");
                    return Ok(ExitCode::from(code));
                }
            }
        }
    };
    // THE BUILD: its cgroup when CMD is in it, else CMD's process tree, or
    // --watch-pid's; its compilers are told apart from the host's.
    let build_pid = match &started {
        Some(c) => u32::try_from(c.pid.as_raw_nonzero().get()).ok(),
        None => a
            .watch_pid
            .filter(|_| matches!(watch, Some(Watch::PidFd(_) | Watch::Kill(_))))
            .and_then(|p| u32::try_from(p).ok()),
    };
    let (build, scope) = build_scope(build_pid, build_cg.as_ref(), cg_why);
    sampler.build = build;
    summary.build = scope;
    let watch = match (&started, watch) {
        (Some(c), _) => Watch::child(c.pid.as_raw_nonzero().get()).unwrap_or(Watch::Child(c.pid)),
        (None, Some(w)) => w,
        (None, None) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --watch-pid {}: no such process; taking one row",
                a.watch_pid.unwrap_or(0)
            );
            Watch::None
        }
    };
    let plan = if matches!(watch, Watch::None) && a.watch_pid.is_some() {
        Plan {
            count: Some(1),
            ..plan
        }
    } else {
        plan
    };
    let mut warn = StderrWarn;
    let mut tune = |row: &mut headroom::tick::row::Row| {
        if let Some(j) = js.as_mut() {
            j.tick(row);
        }
    };
    let mut status = StatusLine::new();
    let mut on_row = |row: &headroom::tick::row::Row, state, summary: &Summary| {
        if let Some(p) = prom.as_mut() {
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
    };
    // The footprint, fixed from the first tick: the stack the loop's
    // frames use (committed from this frame, the one that calls the loop),
    // every page already mapped, then all of it locked in RAM.
    headroom::tick::footprint::commit_stack();
    summary.memory_lock = Some(commit_footprint(&mut bufs));
    let stop = match &started {
        None => record::run(
            &mut sampler,
            &mut bufs,
            &mut csv,
            &mut summary,
            plan,
            &watch,
            &Signals,
            Some(wake.as_fd()),
            &mut warn,
            &mut tune,
            &mut on_row,
        ),
        Some(c) => record::run(
            &mut sampler,
            &mut bufs,
            &mut csv,
            &mut summary,
            plan,
            &watch,
            &Forward {
                pid: c.pid,
                own_group,
                wake: wake.as_fd(),
            },
            Some(wake.as_fd()),
            &mut warn,
            &mut tune,
            &mut on_row,
        ),
    };
    status.clear();
    if let Some(j) = js.as_mut() {
        summary.jobserver = j.gov.report();
        // The FIFO's name goes now; CMD has ended or is being waited for.
        j.pool.unlink();
    }
    if let Some(p) = prom.as_mut()
        && let Err(e) = p.finish(&summary, labels)
    {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: cannot write {prom_path} at the end: {}",
            errtext(e)
        );
    }
    match (started, child) {
        (Some(c), Some(spec)) => {
            let u = finish_child(&c, &watch, wake.as_fd(), own_group);
            summary.run = Some((command_label(&spec.argv), u));
            if let Some(mut cg) = build_cg {
                end_build_cgroup(&mut cg, &mut summary);
            }
            if let Some(path) = &spec.actions {
                append_action(path, a.label.as_deref(), &spec.argv, &c, &u);
            }
            // CMD owns stdout (it may be `gcc -E`): the report goes to stderr.
            let advice = measured_advice(&root, &summary);
            // A summary that cannot be written is said, but the exit status
            // stays CMD's: that is what a build script checks.
            if let Err(Fail(msg)) = emit_record_summary(
                &summary,
                dir.as_fd(),
                &summary_name,
                &out_dir,
                Output::Stderr,
                &advice,
            ) {
                let _ = writeln!(std::io::stderr(), "headroom: {msg}");
            }
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
            let advice = measured_advice(&root, &summary);
            emit_record_summary(
                &summary,
                dir.as_fd(),
                &summary_name,
                &out_dir,
                Output::Text,
                &advice,
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Makes the build's memory cgroup (and removes those left by killed
/// headrooms), or says in a few words why not: the build is then its
/// process tree.
fn make_build_cgroup(root: &Root) -> (Option<BuildCgroup>, &'static str) {
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
    headroom::build::buildcg::remove_stale(root, &own, pid, &mut dir, &mut buf);
    match BuildCgroup::create(root, &own, pid, &mut buf) {
        Ok(cg) => (Some(cg), ""),
        Err(headroom::build::buildcg::CreateError::NoController) => {
            (None, "no memory cgroup controller")
        }
        Err(headroom::build::buildcg::CreateError::Refused(
            _,
            rustix::io::Errno::ACCESS | rustix::io::Errno::PERM,
        )) => (None, "not permitted to make a cgroup"),
        Err(headroom::build::buildcg::CreateError::Refused(..)) => {
            (None, "the cgroup could not be made")
        }
        Err(headroom::build::buildcg::CreateError::Busy) => {
            (None, "cgroup v2: other processes share headroom's cgroup")
        }
    }
}

/// The build cgroup's last figures (its OOM kills, its peak charge) into
/// the summary, then the cgroup removed, leftovers moved out first.
fn end_build_cgroup(cg: &mut BuildCgroup, summary: &mut Summary) {
    let mut buf = vec![0u8; headroom::build::buildcg::BUF_LEN];
    if matches!(summary.build, Some(BuildScope::Cgroup(_))) {
        summary.build_oom_final(cg.oom_kills(&mut buf));
        summary.build_peak_charge_mb = cg.peak_bytes(&mut buf).map(|b| b >> 20);
    }
    let r = cg.remove(&mut buf);
    if r.moved > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: {} process(es) outlived the command; moved out of its cgroup",
            r.moved
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

/// THE BUILD for the sampler and the summary: `cg` when the build's
/// process `pid` joined it (before exec), else `pid`'s process tree; no
/// build without a pid. `why`: why there is no cgroup.
fn build_scope<'c>(
    pid: Option<u32>,
    cg: Option<&'c BuildCgroup>,
    why: &'static str,
) -> (Build<'c>, Option<BuildScope>) {
    match (pid, cg) {
        (None, _) => (Build::None, None),
        (Some(_), Some(cg)) => (Build::Cgroup(cg), Some(BuildScope::Cgroup(cg.version))),
        (Some(pid), None) => (Build::Tree(pid), Some(BuildScope::Tree(why))),
    }
}

/// Faults in every page the recording can touch and locks them in RAM
/// unless `HEADROOM_NO_MLOCK` is set (see [`headroom::tick::footprint`]); one
/// line on stderr says what could not be done. Call it after
/// [`headroom::tick::footprint::commit_stack`], just before the loop.
fn commit_footprint(bufs: &mut Buffers) -> headroom::tick::footprint::Lock {
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

/// `HEADROOM_NO_MLOCK` is set (to anything but `0`): record and run do not
/// lock their memory (for measuring what the lock is worth).
fn no_mlock() -> bool {
    env_nonempty("HEADROOM_NO_MLOCK").is_some_and(|v| v != "0")
}

/// Opens the directory of `path` (which must exist) and returns it with
/// the file name; `what` names the path in messages (`--prom`, `-o`).
fn open_parent(path: &str, what: &str) -> Result<(OwnedFd, String), Fail> {
    let p = std::path::Path::new(path);
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| Fail(format!("{what} {path}: not a file path")))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_string_lossy().into_owned(),
        _ => ".".into(),
    };
    let dir = rustix::fs::open(
        parent.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| {
        Fail(format!(
            "cannot write {what} {path}: {parent}: {}",
            errtext(e)
        ))
    })?;
    Ok((dir, name))
}

/// True when `a` and `b` are the same file (device and inode).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(x), Ok(y)) => x.st_dev == y.st_dev && x.st_ino == y.st_ino,
        _ => false,
    }
}

/// Creates `--prom` `path` (`name` in `dir`) and writes it once, empty, so
/// a path that cannot be written fails now, not at the first row.
///
/// Boxed and never inlined: a [`headroom::report::prom::PromFile`] holds 32 KiB of
/// text, and in `record_job`'s frame it would be made resident (stack
/// probes touch every page of a frame) by every recording, `--prom` or not.
#[inline(never)]
fn create_prom(
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

/// `run --jobserver` while it runs: the FIFO, the governor, and what CMD
/// is told in its environment.
struct Js {
    pool: headroom::govern::jobserver::Pool,
    gov: headroom::govern::jobserver::Governor,
    env: Vec<(&'static str, std::ffi::OsString)>,
    explain: bool,
    /// The slots last said (with --explain): (allowed, memory-bound).
    said: Option<(u32, bool)>,
}

impl Js {
    /// Makes the FIFO in the out dir, sizes the governor (cap: --max-jobs,
    /// else the usable cores; peak: --peak-mb, else the profile's, with
    /// its environment override) and composes MAKEFLAGS.
    fn start(
        j: &JobserverArgs,
        root: &Root,
        dir: BorrowedFd<'_>,
        out_dir: &str,
    ) -> Result<Js, Fail> {
        use headroom::govern::jobserver::{Governor, Pool};
        let cap = match j.max_jobs {
            Some(n) => n,
            None => {
                let mut buf = vec![0u8; 64 * 1024];
                headroom::plan::host::cores(root, root_is_live(root), &mut buf).usable
            }
        };
        let from_env = env_nonempty(j.profile.env_var()).and_then(|v| v.parse::<u64>().ok());
        let (peak, from) = match (j.peak_mb, from_env) {
            (Some(p), _) => (p, "--peak-mb"),
            (None, Some(p)) if p > 0 => (p, j.profile.env_var()),
            _ => (j.profile.default_mb(false), j.profile.name()),
        };
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
        let gov = Governor::new(cap, peak, from);
        if gov.cap < cap {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: --max-jobs {cap}: at most {} slots",
                gov.cap
            );
        }
        let flags = makeflags(std::env::var_os("MAKEFLAGS").as_deref(), gov.cap, &auth);
        Ok(Js {
            pool,
            gov,
            env: vec![("MAKEFLAGS", flags.clone()), ("CARGO_MAKEFLAGS", flags)],
            explain: j.explain,
            said: None,
        })
    }

    /// One governor tick: decide from `row`, act on the FIFO, and fill the
    /// row's jobs columns.
    fn tick(&mut self, row: &mut headroom::tick::row::Row) {
        let usable = row.mem_known.then(|| {
            row.ext
                .cg_mem_avail_mb
                .map_or(row.mem_avail_mb, |cg| cg.min(row.mem_avail_mb))
        });
        let inp = headroom::govern::jobserver::Inputs {
            usable_mb: usable,
            compiler_rss_mb: row.build_rss_mb,
            compiler_peak_mb: row.ext.build_peak_rss_mb,
            in_pipe: self.pool.in_pipe().unwrap_or(0),
            now_ms: headroom::tick::clock::monotonic_ns() / 1_000_000,
        };
        let d = self.gov.decide(&inp);
        let put = self.pool.put(d.put);
        let taken = self.pool.take(d.take);
        self.gov.settled(put, taken);
        row.jobs = Some((d.running, d.allowed));
        let now = (d.allowed, d.memory_bound);
        if self.explain && self.said != Some(now) {
            self.said = Some(now);
            let why = if d.memory_bound {
                format!(
                    "memory: room {} MiB for {} MiB per job (usable {} MiB, {} running)",
                    d.room_mb,
                    self.gov.peak_mb,
                    usable.unwrap_or(0),
                    d.running
                )
            } else {
                format!("the cap, {}", self.gov.cap)
            };
            let _ = writeln!(
                std::io::stderr(),
                "headroom: jobserver: {} job(s) at once ({why})",
                d.allowed
            );
        }
    }
}

/// MAKEFLAGS for CMD: the caller's own flags kept (bytes as they are),
/// any -j and jobserver given before dropped, then `-j<cap>
/// --jobserver-auth=<auth>` (a -j number, not a bare -j, so that a tool
/// that reads only -j is bounded) — before ` -- `, after which make keeps
/// command-line variables (`k -- FOO=bar`).
fn makeflags(existing: Option<&std::ffi::OsStr>, cap: u32, auth: &str) -> std::ffi::OsString {
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

/// A `-j` in CMD's own arguments when CMD is make or ninja: they then run
/// their own slots and ignore the jobserver (make says "-jN forced in
/// submake: resetting jobserver mode").
fn own_jobs_flag(argv: &[String]) -> Option<&str> {
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

/// The advice of `advise` for the largest compiler this recording measured
/// (keeping 10 % headroom), on the host recorded: THE BUILD's when a build
/// was followed, else the host's; empty when no such compiler ran.
fn measured_advice(root: &Root, summary: &Summary) -> String {
    let Some((peak, whose)) = summary.sizing_peak().filter(|&(p, _)| p > 0) else {
        return String::new();
    };
    let live = root_is_live(root);
    let mut buf = vec![0u8; 64 * 1024];
    let mut dir = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    let cores = headroom::plan::host::cores(root, live, &mut buf);
    let Ok(mem) = headroom::plan::host::memory(root, &mut buf) else {
        return String::new();
    };
    let cap = headroom::plan::jobs::Capacity {
        cores: u64::from(cores.usable),
        cores_from: "this host",
        usable_mb: mem.usable_mb,
        usable_from: "this host",
        usable_figure: usable_figure(mem.limit),
    };
    let ask = headroom::plan::jobs::Ask {
        profile: headroom::plan::jobs::Profile::Generic,
        peak_mb: None,
        measured: Some((peak, whose.words())),
        requested: None,
    };
    let plan = headroom::plan::jobs::plan(&ask, &headroom::plan::jobs::Env::default(), &cap);
    let disk = disk_path(None);
    let s = headroom::plan::advise::gather(
        root,
        live,
        mem.usable_mb,
        &disk,
        "/tmp",
        &mut buf,
        &mut dir,
    );
    let mut text = Box::new(Text::new());
    let _ = ufmt::uwrite!(
        text,
        "\nADVICE (for {}, {} MB, with 10 % headroom, on this host now):\n",
        whose.words(),
        peak
    );
    let _ = headroom::plan::advise::render(
        &plan,
        headroom::plan::jobs::Profile::Generic,
        &s,
        &mut *text,
    );
    text.as_str().to_string()
}

/// True when `root` is the machine's own `/`.
fn root_is_live(root: &Root) -> bool {
    let (Ok(a), Ok(b)) = (rustix::fs::fstat(root.fd()), rustix::fs::stat("/")) else {
        return false;
    };
    a.st_dev == b.st_dev && a.st_ino == b.st_ino
}

/// Where and how the summary is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    /// Text on stdout.
    Text,
    /// JSON on stdout.
    Json,
    /// Text on stderr (`run`: stdout belongs to the command).
    Stderr,
}

/// Prints the summary (as JSON with `json`) and writes its text next to the
/// CSV (temporary file + rename).
fn emit_summary(
    summary: &Summary,
    dir: BorrowedFd<'_>,
    name: &str,
    dir_label: &str,
    output: Output,
    extra: &str,
) -> Result<(), Fail> {
    let full = || Fail("summary larger than its buffer".into());
    let mut text = Text::new();
    summary.render(&mut text).map_err(|_| full())?;
    text.push_str(extra).map_err(|_| full())?;
    let tmp = format!(".{name}.tmp");
    let written = headroom::report::replace::write(dir, name, &tmp, text.as_bytes());
    if output == Output::Json {
        text.clear();
        summary.render_json(&mut text).map_err(|_| full())?;
    }
    // A closed stdout (`| head`) is not an error worth reporting.
    if output == Output::Stderr {
        let _ = std::io::stderr().write_all(text.as_bytes());
    } else {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    }
    written.map_err(|e| Fail(format!("cannot write {dir_label}/{name}: {}", errtext(e))))
}

/// [`emit_summary`] for `record` and `run`, whose CSV was rewritten at
/// start: when the new summary cannot be written, an older one of the same
/// name describes another run, so it is removed (better none than a stale
/// one beside the new CSV).
fn emit_record_summary(
    summary: &Summary,
    dir: BorrowedFd<'_>,
    name: &str,
    dir_label: &str,
    output: Output,
    extra: &str,
) -> Result<(), Fail> {
    emit_summary(summary, dir, name, dir_label, output, extra).map_err(|Fail(msg)| {
        match rustix::fs::unlinkat(dir, name, rustix::fs::AtFlags::empty()) {
            Ok(()) => Fail(format!("{msg} (the older one there was removed)")),
            Err(_) => Fail(msg),
        }
    })
}

/// The planning inputs shared by `jobs` and `advise`.
struct PlanArgs {
    profile: String,
    peak_mb: Option<u64>,
    from: Option<String>,
    requested: Option<u64>,
    cores: Option<u64>,
    avail_mb: Option<u64>,
    root: Option<String>,
}

/// Opens `--root` (default `/`); `live` is true for the real machine.
fn open_root(root: &Option<String>) -> Result<(Root, bool), Fail> {
    let path = root.as_deref().unwrap_or("/");
    let r = Root::open(path).map_err(|e| Fail(format!("--root {path}: {}", errtext(e))))?;
    let live = root_is_live(&r);
    Ok((r, live))
}

/// Everything `jobs` and `advise` compute before printing.
struct Planned {
    root: Root,
    live: bool,
    profile: headroom::plan::jobs::Profile,
    cores: u64,
    cores_from: String,
    usable_mb: u64,
    usable_from: String,
    usable_figure: &'static str,
    measured: Option<(u64, String)>,
    env: [Option<String>; 6],
}

fn prepare_plan(a: &PlanArgs) -> Result<Result<Planned, ExitCode>, Fail> {
    let Some(profile) = headroom::plan::jobs::Profile::parse(&a.profile) else {
        return usage(&format!(
            "--profile {}: expected generic, rust or heavy",
            a.profile
        ))
        .map(Err);
    };
    for (name, v) in [
        ("--peak-mb", a.peak_mb),
        ("--cores", a.cores),
        ("--requested", a.requested),
    ] {
        if v == Some(0) {
            return usage(&format!("{name} must be at least 1")).map(Err);
        }
    }
    let (root, live) = open_root(&a.root)?;
    let mut buf = vec![0u8; 64 * 1024];
    let (cores, cores_from) = match a.cores {
        Some(n) => (n, "--cores".to_string()),
        None => {
            let c = headroom::plan::host::cores(&root, live, &mut buf);
            let mut from = match c.limit {
                headroom::plan::host::CoreLimit::Affinity => {
                    format!("sched_getaffinity: {} in the affinity mask", c.usable)
                }
                headroom::plan::host::CoreLimit::Online => {
                    format!("{} CPUs online ({})", c.usable, c.online_from)
                }
                headroom::plan::host::CoreLimit::Quota => format!(
                    "cgroup CPU quota {}.{:02} CPUs, rounded up",
                    c.quota_millicpus.unwrap_or(0) / 1000,
                    c.quota_millicpus.unwrap_or(0) % 1000 / 10
                ),
                headroom::plan::host::CoreLimit::Cpuset => {
                    format!("cgroup cpuset of {} CPUs", c.usable)
                }
            };
            if let Some(online) = c.online
                && online != c.usable
            {
                from.push_str(&format!("; {online} online"));
            }
            (u64::from(c.usable), from)
        }
    };
    let (usable_mb, usable_from, usable_figure) = match a.avail_mb {
        Some(n) => (n, "--avail-mb".to_string(), "--avail-mb"),
        None => {
            let m = headroom::plan::host::memory(&root, &mut buf)
                .map_err(|_| Fail("cannot read proc/meminfo: use --avail-mb to plan".into()))?;
            let avail = m.meminfo.mem_available_kib / 1024;
            if let Some(e) = m.cgroup_error {
                let _ = writeln!(
                    std::io::stderr(),
                    "headroom: warning: the memory cgroup could not be read ({e}): a limit there is not counted"
                );
            }
            let from = match (m.limit, m.cgroup) {
                (headroom::plan::host::MemLimit::Cgroup, Some(r)) => {
                    let mut path = heapless::String::<256>::new();
                    headroom::plan::host::cgroup_path(
                        &root, b"memory", r.depth, &mut buf, &mut path,
                    );
                    let file = match m.cgroup_version {
                        Some(headroom::kernel::cgroup::Version::V1) => "memory.limit_in_bytes",
                        _ => "memory.max",
                    };
                    format!(
                        "cgroup {file} on {} : limit {} MB, usage {} MB; MemAvailable {} MB",
                        path.as_str(),
                        r.limit_bytes >> 20,
                        r.usage_bytes >> 20,
                        avail
                    )
                }
                _ => {
                    let est = if m.meminfo.mem_available_estimated {
                        ", estimated"
                    } else {
                        ""
                    };
                    format!("MemAvailable (proc/meminfo{est})")
                }
            };
            (m.usable_mb, from, usable_figure(m.limit))
        }
    };
    let measured = match &a.from {
        None => None,
        Some(path) => Some(largest_peak(path)?),
    };
    let env = headroom::plan::jobs::ENV_VARS.map(|k| std::env::var(k).ok());
    Ok(Ok(Planned {
        root,
        live,
        profile,
        cores,
        cores_from,
        usable_mb,
        usable_from,
        usable_figure,
        measured,
        env,
    }))
}

/// The short name of the figure usable memory is, for the aggressive-mode
/// line of `jobs --explain`.
fn usable_figure(limit: headroom::plan::host::MemLimit) -> &'static str {
    match limit {
        headroom::plan::host::MemLimit::MemAvailable => "MemAvailable",
        headroom::plan::host::MemLimit::Cgroup => "cgroup remaining",
    }
}

/// The peak a recorded CSV measured, and whose, by the summary's rule
/// ([`Summary::sizing_peak`]): the largest build_peak_rss_mb (THE BUILD's
/// compilers) when the CSV has any, else the largest peak_rss_mb (every
/// compiler on the host: a plain `record`, or a CSV from before the build
/// columns), said as such.
fn largest_peak(path: &str) -> Result<(u64, String), Fail> {
    let fd = open_regular(path)?;
    let mut rows = Box::new(CsvRows::new());
    let mut summary = Box::new(Summary::new(None, None));
    stream(
        &fd,
        path,
        |chunk| rows.feed(chunk, &mut |r| summary.observe(r)),
        |_| Fail(format!("{path}: not a resource CSV")),
    )?;
    let (peak, whose) = summary.sizing_peak().ok_or_else(|| {
        Fail(format!(
            "{path}: no peak_rss_mb recorded (a --compat CSV, or no compiler ran)"
        ))
    })?;
    Ok((
        peak,
        format!("{path}: {} ({})", whose.words(), whose.column()),
    ))
}

impl Planned {
    fn env(&self) -> headroom::plan::jobs::Env<'_> {
        headroom::plan::jobs::Env {
            parallel_jobs: self.env[0].as_deref(),
            build_mem_divisor: self.env[1].as_deref(),
            aggressive: self.env[2].as_deref(),
            default_mb_per_job: self.env[3].as_deref(),
            rust_mb_per_job: self.env[4].as_deref(),
            cpp_heavy_mb_per_job: self.env[5].as_deref(),
        }
    }

    fn capacity(&self) -> headroom::plan::jobs::Capacity<'_> {
        headroom::plan::jobs::Capacity {
            cores: self.cores,
            cores_from: &self.cores_from,
            usable_mb: self.usable_mb,
            usable_from: &self.usable_from,
            usable_figure: self.usable_figure,
        }
    }

    fn ask(&self, a: &PlanArgs) -> headroom::plan::jobs::Ask<'_> {
        headroom::plan::jobs::Ask {
            profile: self.profile,
            peak_mb: a.peak_mb,
            measured: self.measured.as_ref().map(|(p, f)| (*p, f.as_str())),
            requested: a.requested,
        }
    }
}

fn warn_ignored(plan: &headroom::plan::jobs::Plan<'_>) {
    for i in &plan.ignored {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}={} ignored (expected {})",
            i.var,
            i.value,
            i.expected
        );
    }
}

fn print_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn jobs_cmd(a: JobsArgs) -> Result<ExitCode, Fail> {
    let pa = PlanArgs {
        profile: a.profile,
        peak_mb: a.peak_mb,
        from: a.from,
        requested: a.requested,
        cores: a.cores,
        avail_mb: a.avail_mb,
        root: a.root,
    };
    let p = match prepare_plan(&pa)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let env = p.env();
    let cap = p.capacity();
    let ask = p.ask(&pa);
    let plan = headroom::plan::jobs::plan(&ask, &env, &cap);
    warn_ignored(&plan);
    let mut text = Box::new(Text::new());
    if a.explain {
        plan.explain(&ask, &cap, &mut *text)
            .map_err(|_| Fail("explanation larger than its buffer".into()))?;
    } else {
        let _ = ufmt::uwrite!(text, "{}\n", plan.jobs);
    }
    print_text(&text);
    Ok(ExitCode::SUCCESS)
}

fn advise_cmd(a: AdviseArgs) -> Result<ExitCode, Fail> {
    let pa = PlanArgs {
        profile: a.profile,
        peak_mb: a.peak_mb,
        from: a.from,
        requested: a.requested,
        cores: a.cores,
        avail_mb: a.avail_mb,
        root: a.root,
    };
    let p = match prepare_plan(&pa)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let env = p.env();
    let cap = p.capacity();
    let ask = p.ask(&pa);
    let plan = headroom::plan::jobs::plan(&ask, &env, &cap);
    warn_ignored(&plan);
    let disk = disk_for(p.live, a.disk_path);
    let mut buf = vec![0u8; 64 * 1024];
    let mut dir = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    let s = headroom::plan::advise::gather(
        &p.root,
        p.live,
        p.usable_mb,
        &disk,
        "/tmp",
        &mut buf,
        &mut dir,
    );
    let mut text = Box::new(Text::new());
    headroom::plan::advise::render(&plan, p.profile, &s, &mut *text)
        .map_err(|_| Fail("advice larger than its buffer".into()))?;
    print_text(&text);
    Ok(ExitCode::SUCCESS)
}

fn status_cmd(a: StatusArgs) -> Result<ExitCode, Fail> {
    let (root, live) = open_root(&a.root)?;
    let disk = disk_for(live, a.disk_path);
    let mut buf = vec![0u8; 64 * 1024];
    let opts = headroom::plan::status::StatusOpts {
        live,
        disk_path: &disk,
        tmp_path: "/tmp",
        memlock: live.then(|| headroom::tick::footprint::Outlook::of_self(no_mlock(), &mut buf)),
    };
    let mut text = Box::new(Text::new());
    headroom::plan::status::render(&root, &opts, &mut buf, &mut *text)
        .map_err(|_| Fail("status larger than its buffer".into()))?;
    print_text(&text);
    Ok(ExitCode::SUCCESS)
}

/// Opens `path` for reading, refusing anything but a regular file (a FIFO
/// would block, /dev/zero never ends).
fn open_regular(path: &str) -> Result<OwnedFd, Fail> {
    let fd = rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC | rustix::fs::OFlags::NONBLOCK,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Fail(format!("{path}: {}", errtext(e))))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Fail(format!("{path}: not a regular file")));
    }
    Ok(fd)
}

/// Feeds the whole of `fd` to `feed` in 64 KiB chunks, then an empty chunk
/// for end of file.
fn stream<E>(
    fd: &OwnedFd,
    path: &str,
    mut feed: impl FnMut(&[u8]) -> Result<(), E>,
    on_err: impl Fn(E) -> Fail,
) -> Result<(), Fail> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match rustix::io::read(fd, &mut buf[..]) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Fail(format!("{path}: {}", errtext(e)))),
        };
        feed(&buf[..n]).map_err(&on_err)?;
        if n == 0 {
            return Ok(());
        }
    }
}

fn actions_cmd(a: ActionsArgs) -> Result<ExitCode, Fail> {
    if a.file.is_empty() {
        return usage("actions: the file path must not be empty");
    }
    if a.top > headroom::report::actions::TOP_CAP {
        return usage(&format!(
            "--top {}: at most {}",
            a.top,
            headroom::report::actions::TOP_CAP
        ));
    }
    let fd = open_regular(&a.file)?;
    let mut table = Box::new(headroom::report::actions::Table::new(
        a.top,
        a.min_wall.unwrap_or(0),
    ));
    let mut rows = Box::new(headroom::report::actions::ActionRows::new());
    stream(
        &fd,
        &a.file,
        |chunk| rows.feed(chunk, &mut |act| table.observe(act)),
        |e| match e {
            headroom::report::actions::ActionsError::ResourceCsv => Fail(format!(
                "{}: this is a resources CSV; use headroom summarize",
                a.file
            )),
        },
    )?;
    table.skipped_rows = rows.skipped;
    let mut text = Box::new(Text::new());
    let rendered = if a.json {
        table.render_json(&mut *text)
    } else {
        table.render(&mut *text)
    };
    rendered.map_err(|_| Fail("the table is larger than its buffer".into()))?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    Ok(ExitCode::SUCCESS)
}

/// The one line for a file `summarize` or `plot` cannot read as a
/// resource CSV.
fn not_a_csv(file: &str, e: CsvError) -> Fail {
    Fail(match e {
        CsvError::MissingColumn(c) => {
            format!("{file}: not a resource CSV (the header has no '{c}' column)")
        }
        CsvError::HeaderTooLong => {
            format!("{file}: not a resource CSV (the first line is not a header)")
        }
    })
}

fn summarize_cmd(a: SummarizeArgs) -> Result<ExitCode, Fail> {
    if a.file.is_empty() {
        return usage("summarize: the CSV path must not be empty");
    }
    let fd = open_regular(&a.file)?;
    let mut summary = Box::new(Summary::new(a.near_oom_mb, a.low_disk_gb));
    let mut rows = Box::new(CsvRows::new());
    stream(
        &fd,
        &a.file,
        |chunk| rows.feed(chunk, &mut |r| summary.observe(r)),
        |e| not_a_csv(&a.file, e),
    )?;
    summary.skipped = rows.skipped;
    let path = std::path::Path::new(&a.file);
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Fail(format!("{}: not a file name", a.file)))?;
    let stem = file_name.strip_suffix(".csv").unwrap_or(file_name);
    let parent_s = parent.to_string_lossy().into_owned();
    let dir = rustix::fs::open(
        parent_s.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{parent_s}: {}", errtext(e))))?;
    // A summary written by `run` holds the RUN block (and the advice from
    // that host) and the build's OOM kills, which no CSV column carries:
    // keep them when rewriting.
    let old = std::fs::read_to_string(parent.join(format!("{stem}.summary.txt"))).ok();
    let kept = old
        .as_deref()
        .and_then(|old| old.find("\nRUN: ").map(|at| old[at..].to_string()))
        .unwrap_or_default();
    summary.kept_build_oom_line = old.as_deref().and_then(|old| {
        let line = old
            .lines()
            .find(|l| l.starts_with("OOM kills in this build: "))?;
        heapless::String::try_from(line).ok()
    });
    emit_summary(
        &summary,
        dir.as_fd(),
        &format!("{stem}.summary.txt"),
        &parent_s,
        if a.json { Output::Json } else { Output::Text },
        &kept,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `plot`: two streaming passes over the CSV (headroom::report::plot), then the SVG
/// into a temporary file beside the output, renamed over it when whole.
/// Never inlined: `Plot::new` builds 130 KiB of buckets in this frame, and
/// inlined into `main` stack probes would make it resident for every
/// command.
#[inline(never)]
fn plot_cmd(a: PlotArgs) -> Result<ExitCode, Fail> {
    use headroom::report::plot::{Plot, Scan};
    if a.file.is_empty() {
        return usage("plot: the CSV path must not be empty");
    }
    if a.out.as_deref() == Some("") {
        return usage("plot: -o needs a path, or - for stdout");
    }
    let not_csv = |e| not_a_csv(&a.file, e);
    let fd = open_regular(&a.file)?;
    let mut scan = Box::new(Scan::new(None));
    let mut rows = Box::new(CsvRows::new());
    stream(
        &fd,
        &a.file,
        |chunk| rows.feed(chunk, &mut |r| scan.observe(r)),
        not_csv,
    )?;
    if scan.rows() == 0 {
        let why = match (rows.skipped, rustix::fs::fstat(&fd).map(|s| s.st_size)) {
            (0, Ok(0)) => "the file is empty".to_string(),
            (0, _) => "a header and no rows".to_string(),
            (1, _) => "its only row is malformed".to_string(),
            (n, _) => format!("all {n} rows are malformed"),
        };
        return Err(Fail(format!("{}: no samples to plot ({why})", a.file)));
    }
    rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))
        .map_err(|e| Fail(format!("{}: {}", a.file, errtext(e))))?;
    let mut plot = Box::new(Plot::new(&scan));
    plot.skipped = rows.skipped;
    let mut rows = Box::new(CsvRows::new());
    stream(
        &fd,
        &a.file,
        |chunk| rows.feed(chunk, &mut |r| plot.observe(r)),
        not_csv,
    )?;
    let title = std::path::Path::new(&a.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| a.file.clone());
    if a.out.as_deref() == Some("-") {
        // SAFETY: fd 1 stays open for the life of the process (guard_std_fds).
        let mut sink = FdSink::new(unsafe { BorrowedFd::borrow_raw(1) });
        return match plot.render(&title, &mut sink).and_then(|()| sink.flush()) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            // `plot x.csv -o - | head`: a closed pipe is not an error.
            Err(rustix::io::Errno::PIPE) => Ok(ExitCode::SUCCESS),
            Err(e) => Err(Fail(format!("stdout: {}", errtext(e)))),
        };
    }
    let out = match a.out {
        Some(o) => o,
        None => format!("{}.svg", a.file.strip_suffix(".csv").unwrap_or(&a.file)),
    };
    let (dir, name) = open_parent(&out, "-o")?;
    // As record refuses a symlink at the CSV path: its target is never
    // written (and the rename would only replace the link itself).
    let input = rustix::fs::fstat(&fd).map_err(|e| Fail(format!("{}: {}", a.file, errtext(e))))?;
    match headroom::report::replace::target(dir.as_fd(), &name) {
        headroom::report::replace::Target::Symlink => {
            return Err(Fail(format!(
                "{out}: is a symlink; refused (its target is not written)"
            )));
        }
        headroom::report::replace::Target::Other => {
            return Err(Fail(format!(
                "{out}: not a regular file (a directory, device or FIFO); refused"
            )));
        }
        headroom::report::replace::Target::Regular { dev, ino }
            if dev == input.st_dev && ino == input.st_ino =>
        {
            return Err(Fail(format!(
                "{out}: is the CSV being plotted; refusing to overwrite it"
            )));
        }
        _ => {}
    }
    let cannot = |e| Fail(format!("cannot write {out}: {}", errtext(e)));
    let tmp = headroom::report::replace::tmp_name(&name).map_err(cannot)?;
    headroom::report::replace::replace(dir.as_fd(), &name, &tmp, |fd| {
        let mut sink = FdSink::new(fd);
        plot.render(&title, &mut sink).and_then(|()| sink.flush())
    })
    .map_err(cannot)?;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}").and_then(|()| stdout.flush());
    Ok(ExitCode::SUCCESS)
}

/// A [`ufmt::uWrite`] sink over a file descriptor: text is gathered in a
/// 64 KiB buffer and written out when it fills and at [`FdSink::flush`].
struct FdSink<'a> {
    fd: BorrowedFd<'a>,
    buf: Vec<u8>,
}

impl<'a> FdSink<'a> {
    const CAP: usize = 64 * 1024;

    fn new(fd: BorrowedFd<'a>) -> FdSink<'a> {
        FdSink {
            fd,
            buf: Vec::with_capacity(Self::CAP),
        }
    }

    /// Writes out what is buffered (all of it, or an error).
    fn flush(&mut self) -> Result<(), rustix::io::Errno> {
        headroom::report::replace::write_all(self.fd, &self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl ufmt::uWrite for FdSink<'_> {
    type Error = rustix::io::Errno;

    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        if self.buf.len() + s.len() > Self::CAP {
            self.flush()?;
        }
        self.buf.extend_from_slice(s.as_bytes());
        if self.buf.len() >= Self::CAP {
            self.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: the status line called stored / RAM used the zram
    /// "ratio", the word `status` uses for stored / compressed.
    #[test]
    fn status_line_names_the_zram_ram_saving() {
        let mut row = headroom::tick::row::Row::empty(100);
        row.elapsed_s = 65;
        row.mem_avail_mb = 900;
        row.ext.zram_stored_mb = Some(768);
        row.ext.zram_ram_mb = Some(316);
        let _ = row.stage.push_str("build");
        assert_eq!(
            status_text(&row).as_str(),
            "\r\x1b[Kheadroom 1m05s  avail 900 MB  swap 0 MB  zram saving 2.43:1  compilers 0  stage build"
        );
        row.ext.zram_ram_mb = Some(0);
        assert!(!status_text(&row).contains("zram"));
        // With a build, its compilers are told apart from the host's.
        row.compilers = 5;
        row.build_compilers = Some(2);
        assert!(
            status_text(&row).ends_with("  compilers 2 (host 5)  stage build"),
            "{}",
            status_text(&row)
        );
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

    #[test]
    fn interval_parsing() {
        assert_eq!(parse_interval("15"), Ok(15_000));
        assert_eq!(parse_interval("0"), Ok(0));
        assert_eq!(parse_interval("0.5"), Ok(500));
        assert_eq!(parse_interval("1.25"), Ok(1250));
        assert!(parse_interval("1.2345").is_err());
        assert!(parse_interval("-1").is_err());
        assert_eq!(parse_interval(".5"), Ok(500));
        assert!(parse_interval(".").is_err());
        assert!(parse_interval("+1").is_err());
        assert!(parse_interval("x").is_err());
        assert!(parse_interval("99999999999999999999").is_err());
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
