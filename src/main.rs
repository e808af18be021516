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
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};

use headroom::compilers::CompilerList;
use headroom::csvread::{CsvError, CsvRows};
use headroom::record::{self, CsvOut, OpenError, Plan, Stop, StopFlag, Watch, WriteState};
use headroom::root::Root;
use headroom::sampler::{Buffers, Options, Sampler, Source, StageLog, Warn};
use headroom::summary::{Summary, Text};

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
    Summarize(SummarizeArgs),
}

/// Sample the host every --interval seconds into resources-<run-id>.csv and
/// write the summary when stopped (--count, --watch-pid exit, SIGINT,
/// SIGTERM, SIGHUP).
#[derive(FromArgs)]
#[argh(subcommand, name = "record")]
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
    /// directory whose newest *.log gives stage and context
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
    /// read proc/ and sys/ under DIR instead of / (default /)
    #[argh(option)]
    root: Option<String>,
}

/// Summarize a recorded CSV (headroom's or the bash toolchain's) to stdout
/// and to <csv minus .csv>.summary.txt.
#[derive(FromArgs)]
#[argh(subcommand, name = "summarize")]
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
    let args: Vec<String> = std::env::args().collect();
    let name = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("headroom")
        .to_string();
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
                    let _ = writeln!(std::io::stderr(), "{}", early.output.trim_end());
                    let _ = writeln!(std::io::stderr(), "Run {name} --help for usage.");
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
        Cmd::Summarize(a) => summarize_cmd(a),
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

fn env_nonempty(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
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
}

/// The signal that asked us to stop (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Write end of the self-pipe that wakes the loop's poll(2).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

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
fn install_signals() -> Result<OwnedFd, Fail> {
    let (r, w) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )
    .map_err(|e| Fail(format!("cannot create a pipe: {}", errtext(e))))?;
    WAKE_FD.store(rustix::fd::AsRawFd::as_raw_fd(&w), Ordering::SeqCst);
    std::mem::forget(w);
    for sig in [
        rustix::process::Signal::INT,
        rustix::process::Signal::TERM,
        rustix::process::Signal::HUP,
    ] {
        // SAFETY: `on_signal` only touches atomics and calls write(2), both
        // async-signal-safe; it has the C ABI signal(2) expects.
        unsafe {
            signal(sig.as_raw(), on_signal as *const () as usize);
        }
    }
    Ok(r)
}

fn record_cmd(a: RecordArgs) -> Result<ExitCode, Fail> {
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
            "run id '{run_id}' is not usable in a file name (no '/', no '..')"
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
    let root_path = a.root.unwrap_or_else(|| "/".into());
    let root =
        Root::open(&root_path).map_err(|e| Fail(format!("--root {root_path}: {}", errtext(e))))?;
    let disk = disk_path(a.disk_path);

    // Start-up, before any sampling: std's recursive mkdir is fine here.
    std::fs::create_dir_all(&out_dir).map_err(|e| {
        Fail(format!(
            "cannot create --out-dir {out_dir}: {}",
            io_text(&e)
        ))
    })?;
    let dir = rustix::fs::open(
        out_dir.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("--out-dir {out_dir}: {}", errtext(e))))?;
    let csv_name = format!("resources-{run_id}.csv");
    let mut csv = CsvOut::create(dir.as_fd(), &csv_name, a.compat).map_err(|e| match e {
        OpenError::Symlink => Fail(format!(
            "{out_dir}/{csv_name} is a symlink: refusing to write through it"
        )),
        OpenError::Io(e) => Fail(format!("cannot write {out_dir}/{csv_name}: {}", errtext(e))),
    })?;

    let wake = install_signals()?;
    let mut bufs = Box::new(Buffers::new());
    let opts = Options {
        disk_path: &disk,
        tmp_path: "/tmp",
        stage_log,
        label: a.label.as_deref(),
        compilers: &compilers,
    };
    let mut sampler = Sampler::new(&root, opts, &mut bufs);
    let mut summary = Box::new(Summary::new(a.near_oom_mb, a.low_disk_gb));
    let plan = Plan {
        interval_ms: a.interval.unwrap_or(15_000),
        count: a.count,
        compat: a.compat,
    };
    let watch = match watch {
        Some(w) => w,
        None => {
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
    let stop = record::run(
        &mut sampler,
        &mut bufs,
        &mut csv,
        &mut summary,
        plan,
        &watch,
        &Signals,
        Some(wake.as_fd()),
        &mut warn,
        &mut |_row, state| match state {
            WriteState::Lost(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "headroom: warning: cannot write a row to {csv_name}: {}; sampling goes on and the summary counts lost rows",
                    errtext(e)
                );
            }
            WriteState::Resumed => {
                let _ = writeln!(std::io::stderr(), "headroom: writing {csv_name} again");
            }
            WriteState::Written | WriteState::StillLost => {}
        },
    );
    if let Stop::Signal(sig) = stop {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: stopped by signal {sig}; writing the summary"
        );
    }
    let stem = csv_name.trim_end_matches(".csv");
    emit_summary(
        &summary,
        dir.as_fd(),
        &format!("{stem}.summary.txt"),
        &out_dir,
        false,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary (as JSON with `json`) and writes its text next to the
/// CSV (temporary file + rename).
fn emit_summary(
    summary: &Summary,
    dir: BorrowedFd<'_>,
    name: &str,
    dir_label: &str,
    json: bool,
) -> Result<(), Fail> {
    let full = || Fail("summary larger than its buffer".into());
    let mut text = Text::new();
    summary.render(&mut text).map_err(|_| full())?;
    let tmp = format!(".{name}.tmp");
    let written = record::write_file_atomic(dir, name, &tmp, text.as_bytes());
    if json {
        text.clear();
        summary.render_json(&mut text).map_err(|_| full())?;
    }
    let mut out = std::io::stdout().lock();
    // A closed stdout (`| head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    written.map_err(|e| Fail(format!("cannot write {dir_label}/{name}: {}", errtext(e))))
}

fn summarize_cmd(a: SummarizeArgs) -> Result<ExitCode, Fail> {
    if a.file.is_empty() {
        return usage("summarize: the CSV path must not be empty");
    }
    let fd = rustix::fs::open(
        a.file.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| Fail(format!("{}: {}", a.file, errtext(e))))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| Fail(format!("{}: {}", a.file, errtext(e))))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(Fail(format!("{}: not a regular file", a.file)));
    }
    let mut summary = Box::new(Summary::new(a.near_oom_mb, a.low_disk_gb));
    let mut rows = Box::new(CsvRows::new());
    let mut buf = vec![0u8; 64 * 1024];
    let bad = |e: CsvError| match e {
        CsvError::MissingColumn(c) => Fail(format!(
            "{}: not a resource CSV (the header has no '{c}' column)",
            a.file
        )),
        CsvError::HeaderTooLong => Fail(format!(
            "{}: not a resource CSV (the first line is not a header)",
            a.file
        )),
    };
    loop {
        let n = match rustix::io::read(&fd, &mut buf[..]) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Fail(format!("{}: {}", a.file, errtext(e)))),
        };
        rows.feed(&buf[..n], &mut |r| summary.observe(r))
            .map_err(bad)?;
        if n == 0 {
            break;
        }
    }
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
    emit_summary(
        &summary,
        dir.as_fd(),
        &format!("{stem}.summary.txt"),
        &parent_s,
        a.json,
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

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
