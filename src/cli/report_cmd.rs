//! The report commands (`summarize`, `actions`, `plot`) and writing a
//! summary beside its CSV.

use std::io::Write;
use std::process::ExitCode;

use rustix::fd::{AsFd, BorrowedFd};

use headroom::report::csvread::{CsvError, CsvRows};
use headroom::report::summary::{Summary, Text};
use headroom::tick::held::Held;

use super::files::{open_parent, open_regular, stream};
use super::messages::{Fail, errtext, print_text, usage};
use super::options::{ActionsArgs, PlotArgs, SummarizeArgs};

/// Where and how the summary is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Text on stdout.
    Text,
    /// JSON on stdout.
    Json,
    /// Text on stderr (`run`: stdout belongs to the command).
    Stderr,
}

/// Prints the summary (as JSON with `json`) and writes its text next to the
/// CSV (temporary file + rename).
pub fn emit_summary(
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
    let printed = if output == Output::Stderr {
        let _ = std::io::stderr().write_all(text.as_bytes());
        Ok(())
    } else {
        print_text(&text)
    };
    written.map_err(|e| Fail(format!("cannot write {dir_label}/{name}: {}", errtext(e))))?;
    printed
}

/// [`emit_summary`] for `record` and `run`, whose CSV was rewritten at
/// start: when the new summary cannot be written, an older one of the same
/// name describes another run, so it is removed (better none than a stale
/// one beside the new CSV).
pub fn emit_record_summary(
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

/// The one line for a file `summarize` or `plot` cannot read as a
/// resource CSV.
pub fn not_a_csv(file: &str, e: CsvError) -> Fail {
    Fail(match e {
        CsvError::MissingColumn(c) => {
            format!("{file}: not a resource CSV (the header has no '{c}' column)")
        }
        CsvError::HeaderTooLong => {
            format!("{file}: not a resource CSV (the first line is not a header)")
        }
    })
}

/// The summary file beside the CSV at `csv`: `<csv minus .csv>.summary.txt`
/// in the same directory, where `record`, `run` and `summarize` write it.
pub fn summary_path(csv: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(csv);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let name = name.unwrap_or_default();
    let stem = name.strip_suffix(".csv").unwrap_or(&name);
    path.with_file_name(format!("{stem}.summary.txt"))
}

/// The interruption the summary beside the CSV at `csv` records (its RUN
/// block's `interrupted:` line, which `summarize` keeps): the one place
/// the fact is kept with a recording, the CSV's format being the
/// toolchain's. `None` when the run was whole, or there is no summary.
pub fn recorded_interrupt(csv: &str) -> Option<headroom::followed::rusage::Interrupt> {
    let text = std::fs::read_to_string(summary_path(csv)).ok()?;
    headroom::followed::rusage::Partial::interrupt_in(&text)
}

/// `summarize`: the summary of a recorded CSV, on stdout and beside it (the RUN block of an earlier summary kept).
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn summarize_cmd(a: SummarizeArgs) -> Result<ExitCode, Fail> {
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
    // A summary written by `record` or `run` holds what no CSV column
    // carries: keep it when rewriting, so `summarize` gives the summary the
    // recording gave.
    let old = std::fs::read_to_string(summary_path(&a.file)).ok();
    let kept = old.as_deref().map(recorded_tail).unwrap_or_default();
    summary.tmp_is_tmpfs = old
        .as_deref()
        .and_then(|old| old.contains(TMPFS_NOTE).then_some(true));
    let kept_line = |prefix: &str| {
        let line = old.as_deref()?.lines().find(|l| l.starts_with(prefix))?;
        heapless::String::try_from(line).ok()
    };
    summary.kept_build_oom_line = kept_line("OOM kills in this build: ");
    summary.kept_cgroup_unknown_line = kept_line("CGROUP HEADROOM: unknown: ");
    if summary.kept_cgroup_unknown_line.is_some() {
        summary.set_in_container();
    }
    // The build disk's kind, which no CSV column carries: from the
    // summary written when it was recorded, else unknown (never this
    // host's disk: the CSV may come from another).
    summary.disk_device = old
        .as_deref()
        .and_then(headroom::report::summary::why_slow::device_in);
    // Kept in the RUN block's text; read back for --json.
    summary.partial.interrupt = old
        .as_deref()
        .and_then(headroom::followed::rusage::Partial::interrupt_in);
    let output = if a.json { Output::Json } else { Output::Text };
    if summary.samples() == 0 {
        // Printed as SPEC says, but a failure: the summary beside the CSV
        // (which may count rows a full disk lost) is left as it is.
        let full = || Fail("summary larger than its buffer".into());
        let mut text = Text::new();
        match output {
            Output::Json => summary.render_json(&mut text),
            Output::Text | Output::Stderr => summary.render(&mut text),
        }
        .map_err(|_| full())?;
        print_text(&text)?;
        return Err(Fail(format!("{} has no samples", a.file)));
    }
    emit_summary(
        &summary,
        dir.as_fd(),
        &format!("{stem}.summary.txt"),
        &parent_s,
        output,
        &kept,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// The note the summary of a recording adds when /tmp was a tmpfs
/// (`summarize` cannot tell from the CSV).
const TMPFS_NOTE: &str = "\n  /tmp is tmpfs: ";

/// The end of a summary written by `record` or `run` that only the
/// recording could write, from its first such section on: the `RUN:`
/// block (and the JOBSERVER block), the line on headroom's own memory,
/// and the ADVICE, computed when the recording ended from that host's
/// memory, cores, swap and /tmp. Empty when there is none (a summary of
/// the bash toolchain's).
fn recorded_tail(old: &str) -> String {
    ["\nRUN: ", "\nheadroom's memory: ", "\nADVICE ("]
        .iter()
        .filter_map(|m| old.find(m))
        .min()
        .map(|at| old[at..].to_string())
        .unwrap_or_default()
}

/// `actions`: the options checked (usage errors, exit 2, in every build),
/// then the table (or JSON) of an actions FILE, or, with no FILE, the
/// action cache's report ([`super::remote::remote_cmd`]).
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn actions_cmd(mut a: ActionsArgs) -> Result<ExitCode, Fail> {
    // `--log *_events.pb.zst`: the shell's glob gives one file to --log and
    // the rest as positionals; after --log they are logs too.
    if !a.log.is_empty() {
        let more = std::mem::take(&mut a.files);
        a.log.extend(more);
    }
    if let Some(msg) = actions_usage(&a) {
        return usage(&msg);
    }
    match a.files.first().cloned() {
        Some(file) => local_actions(&a, &file),
        None => super::remote::remote_cmd(a),
    }
}

/// The first remote-only option given, by its flag (`--remote`, ...).
fn remote_option(a: &ActionsArgs) -> Option<&'static str> {
    [
        ("--remote", a.remote.is_some()),
        ("--instance", a.instance.is_some()),
        ("--log", !a.log.is_empty()),
        ("--digest", !a.digest.is_empty()),
        ("--tls-ca", a.tls_ca.is_some()),
        ("--tls-cert", a.tls_cert.is_some()),
        ("--tls-key", a.tls_key.is_some()),
        ("--header", !a.header.is_empty()),
        ("--worker-cores", a.worker_cores.is_some()),
        ("--worker-mem", a.worker_mem.is_some()),
        ("--prometheus", a.prometheus.is_some()),
        ("--prometheus-selector", a.prometheus_selector.is_some()),
        ("--prometheus-header", !a.prometheus_header.is_empty()),
        ("--since", a.since.is_some()),
        ("--until", a.until.is_some()),
    ]
    .into_iter()
    .find_map(|(flag, given)| given.then_some(flag))
}

/// What is wrong with `actions`' options, as one line; `None` when they
/// go together.
pub fn actions_usage(a: &ActionsArgs) -> Option<String> {
    use headroom::report::actions::TOP_CAP;
    if a.top > TOP_CAP {
        return Some(format!("--top {}: at most {TOP_CAP}", a.top));
    }
    if a.json && a.json_rows {
        return Some("actions: --json or --json-rows, not both".into());
    }
    if a.files.len() > 1 {
        return Some(format!(
            "actions: one actions FILE, not {} (Buck2 or Bazel logs go after --log)",
            a.files.len()
        ));
    }
    if let Some(file) = a.files.first() {
        if file.is_empty() {
            return Some("actions: the file path must not be empty".into());
        }
        return remote_option(a).map(|flag| {
            format!("actions: {flag} is for reading a cluster (its action cache or Prometheus), not an actions FILE: give FILE alone, or the build's logs after --log")
        });
    }
    if a.remote.as_deref() == Some("") {
        return Some(
            "actions: --remote needs a URL (grpc://HOST:PORT or grpcs://HOST:PORT)".into(),
        );
    }
    if a.log.is_empty() && a.digest.is_empty() {
        return Some(match remote_option(a) {
            Some(_) => "actions --remote: name the actions with --log FILE (a Buck2 or Bazel log) or --digest HASH/SIZE".into(),
            None => "actions: give an actions FILE, or --log FILE / --digest HASH/SIZE for a remote build".into(),
        });
    }
    if a.tls_cert.is_some() != a.tls_key.is_some() {
        return Some("actions: --tls-cert and --tls-key go together (mutual TLS)".into());
    }
    if a.worker_cores.is_some() != a.worker_mem.is_some() {
        return Some("actions: --worker-cores and --worker-mem go together".into());
    }
    if a.worker_cores == Some(0) {
        return Some("actions: --worker-cores must be at least 1".into());
    }
    if a.prometheus.is_some() && a.json_rows {
        return Some(
            "actions: --prometheus adds a block to the text and --json, not to --json-rows".into(),
        );
    }
    if a.prometheus.is_none() {
        let needs = [
            ("--prometheus-selector", a.prometheus_selector.is_some()),
            ("--prometheus-header", !a.prometheus_header.is_empty()),
            ("--since", a.since.is_some()),
            ("--until", a.until.is_some()),
        ];
        if let Some((flag, _)) = needs.iter().find(|(_, given)| *given) {
            return Some(format!("actions: {flag} goes with --prometheus URL"));
        }
    }
    let plain = a
        .remote
        .as_deref()
        .is_some_and(|u| u.starts_with("grpc://") || u.starts_with("http://"));
    if plain && (a.tls_ca.is_some() || a.tls_cert.is_some()) {
        return Some("actions: --tls-ca and --tls-cert need a grpcs:// (TLS) --remote".into());
    }
    None
}

/// `actions FILE`: the table, `--json`, or `--json-rows` streamed.
fn local_actions(a: &ActionsArgs, file: &str) -> Result<ExitCode, Fail> {
    let fd = open_regular(file)?;
    let not_actions = |e| match e {
        headroom::report::actions::ActionsError::ResourceCsv => Fail(format!(
            "{file}: this is a resources CSV; use headroom summarize"
        )),
    };
    if a.json_rows {
        return local_rows(&fd, file, not_actions);
    }
    let mut table = Box::new(headroom::report::actions::Table::new(
        a.top,
        a.min_wall.unwrap_or(0),
    ));
    let mut rows = Box::new(headroom::report::actions::ActionRows::new());
    stream(
        &fd,
        file,
        |chunk| rows.feed(chunk, &mut |act| table.observe(act)),
        not_actions,
    )?;
    table.skipped_rows = rows.skipped;
    // Not one row read, and some refused: not an actions file at all (a
    // Buck2 or Bazel log given without --log, a binary file), rather than
    // a build of no actions.
    if table.actions() == 0 && rows.skipped > 0 {
        return Err(Fail(format!(
            "{file}: no row is an actions row ({} malformed): a file of run --actions; a Buck2 or Bazel log goes after --log",
            rows.skipped
        )));
    }
    let mut text = Box::new(Text::new());
    // Held: the renderers have no test after each piece (smaller code).
    let mut held = Held::new(&mut *text);
    let Ok(()) = if a.json {
        table.render_json(&mut held)
    } else {
        table.render(&mut held)
    };
    held.finish()
        .map_err(|_| Fail("the table is larger than its buffer".into()))?;
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `actions FILE --json-rows`: each row written as it is read (a fixed
/// buffer per row, a buffered stdout), so nothing grows with the file. A
/// closed stdout (`| head`) ends it quietly.
fn local_rows(
    fd: &rustix::fd::OwnedFd,
    file: &str,
    not_actions: impl Fn(headroom::report::actions::ActionsError) -> Fail,
) -> Result<ExitCode, Fail> {
    use headroom::report::actions_json::{JsonRows, ROW_JSON_CAP};
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut failed: Option<std::io::Error> = None;
    let mut put = |s: &str, failed: &mut Option<std::io::Error>| {
        if failed.is_none()
            && let Err(e) = out.write_all(s.as_bytes())
        {
            *failed = Some(e);
        }
    };
    let mut json = JsonRows::new();
    let mut row = heapless::String::<ROW_JSON_CAP>::new();
    // Cannot fail: "[" fits.
    let _ = json.begin(&mut row);
    put(&row, &mut failed);
    let mut rows = Box::new(headroom::report::actions::ActionRows::new());
    stream(
        fd,
        file,
        |chunk| {
            rows.feed(chunk, &mut |act| {
                row.clear();
                // ROW_JSON_CAP holds the longest row; a row that did not
                // fit would be cut, so it is left out rather than broken.
                if json.row(&mut row, act).is_ok() {
                    put(&row, &mut failed);
                }
            })
        },
        not_actions,
    )?;
    row.clear();
    let _ = json.end(&mut row);
    put(&row, &mut failed);
    let flushed = match failed {
        Some(e) => Err(e),
        None => out.flush(),
    };
    match flushed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Fail(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `plot`: two streaming passes over the CSV (headroom::report::plot), then the SVG
/// into a temporary file beside the output, renamed over it when whole.
/// Never inlined: `Plot::new` builds ~300 KiB of buckets in this frame, and
/// inlined into `main` stack probes would make it resident for every
/// command.
#[inline(never)]
pub fn plot_cmd(a: PlotArgs) -> Result<ExitCode, Fail> {
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
        let sink = FdSink::new(unsafe { BorrowedFd::borrow_raw(1) });
        return match svg_to(&plot, &title, sink) {
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
        svg_to(&plot, &title, FdSink::new(fd))
    })
    .map_err(cannot)?;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{out}").and_then(|()| stdout.flush());
    Ok(ExitCode::SUCCESS)
}

/// Writes `plot`'s SVG to `sink` and flushes it; the first write error
/// ends the writing. Through [`Held`], so the renderer has no test after
/// each piece (smaller code).
fn svg_to(
    plot: &headroom::report::plot::Plot,
    title: &str,
    mut sink: FdSink<'_>,
) -> Result<(), rustix::io::Errno> {
    let mut held = Held::new(&mut sink);
    let Ok(()) = plot.render(title, &mut held);
    held.finish()?;
    sink.flush()
}

/// A [`ufmt::uWrite`] sink over a file descriptor: text is gathered in a
/// 64 KiB buffer and written out when it fills and at [`FdSink::flush`].
pub struct FdSink<'a> {
    fd: BorrowedFd<'a>,
    buf: Vec<u8>,
}

impl<'a> FdSink<'a> {
    const CAP: usize = 64 * 1024;

    /// An empty sink over `fd`.
    pub fn new(fd: BorrowedFd<'a>) -> FdSink<'a> {
        FdSink {
            fd,
            buf: Vec::with_capacity(Self::CAP),
        }
    }

    /// Writes out what is buffered (all of it, or an error).
    pub fn flush(&mut self) -> Result<(), rustix::io::Errno> {
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

    #[test]
    fn the_summary_beside_a_csv() {
        let p = |csv: &str| summary_path(csv).display().to_string();
        assert_eq!(p("resources-run.csv"), "resources-run.summary.txt");
        assert_eq!(p("logs/r.csv"), "logs/r.summary.txt");
        assert_eq!(p("/a/b.csv.csv"), "/a/b.csv.summary.txt");
        assert_eq!(p("data"), "data.summary.txt");
    }
}
