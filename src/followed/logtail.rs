//! The `stage` and `context` columns: what the build log says right now.
//!
//! Every tick the sampler reads only the tail of the active build log (at
//! most [`TAIL_BYTES`]), never the whole file, and [`scan`]s it for the
//! latest progress line (`context`) and the latest stage marker (`stage`).
//! The log may be in any encoding, contain ANSI colours, `\r` progress bars,
//! lines longer than the window and a half-written last line; nothing here
//! fails or panics on such input. I/O ([`read_tail`], [`active_log`]) is
//! separate from the pure scanner.
//!
//! # References
//! SPEC.md, "stage and context"; fstat(2), pread(2), fstatat(2),
//! getdents64(2); Docker BuildKit plain progress output (`--progress=plain`:
//! `#<step> [<stage> <i>/<n>] <instruction>`, `#<step> <seconds> <output>`).

use core::mem::MaybeUninit;

use rustix::fd::BorrowedFd;
use rustix::fs::{AtFlags, FileType};
use rustix::io::Errno;

use crate::followed::cmdline::{self, Command};
use crate::followed::text::{CONTEXT_CHARS, Context, after_last_cr, sanitize_into};
use crate::kernel::root::{ReadError, for_each_entry};

/// Most bytes read from the end of the log per tick (SPEC.md: "the last
/// 64 KiB at most"). 40 lines of even a verbose C++ build (link lines of a
/// few KiB) fit; the read stays a single cheap pread(2).
pub const TAIL_BYTES: usize = 64 * 1024;

/// How many of the last lines are searched for a context line (SPEC.md).
pub const CONTEXT_LINES: usize = 40;

/// How many of the last lines are searched for a stage marker (SPEC.md).
pub const STAGE_LINES: usize = 200;

/// Words whose presence makes a line a candidate context line (besides the
/// `[N/M]` counter checked by [`has_counter`]). Case-sensitive, anywhere in
/// the line. SPEC.md's list plus `Linking`: CMake announces its link step
/// as `[100%] Linking CXX executable x`, and the link (with LTO, often the
/// largest process of the build) must not be blamed on the last compile.
const CONTEXT_MARKERS: [&[u8]; 13] = [
    b"Building",
    b"Linking",
    b"Compiling",
    b"CC ",
    b"CXX ",
    b"LD ",
    b"LINK",
    b"Built target",
    b"[stage ",
    b"Finished",
    b"Installing",
    b"error",
    b"warning",
];

/// `MARKER_START[b]`: some context marker starts with byte `b`.
const MARKER_START: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < CONTEXT_MARKERS.len() {
        t[CONTEXT_MARKERS[i][0] as usize] = true;
        i += 1;
    }
    t
};

/// What [`scan`] found in a log tail: zero-copy views into the tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found<'a> {
    /// The raw context line (the text after its last `\r`, without the
    /// line's `\n`), not yet sanitized: pass it to [`context_into`]. `None`
    /// when none of the last [`CONTEXT_LINES`] lines has a marker.
    pub context: Option<&'a [u8]>,
    /// When no line of the last [`CONTEXT_LINES`] has a marker: the newest
    /// compiler or linker command among them ([`cmdline::parse`], e.g.
    /// make's echo `cc -O2 -c a.c -o a.o`); `None` otherwise.
    pub command: Option<Command<'a>>,
    /// The stage NAME (ASCII lowercase letters, digits and `-`, at least one
    /// byte) of the last `[stage NAME]` or BuildKit `#<digits> [NAME `
    /// marker in the last [`STAGE_LINES`] lines; `None` when there is none.
    pub stage: Option<&'a [u8]>,
}

/// The lines of a tail window, oldest first; iterate with `.rev()` for the
/// newest first.
///
/// When the window does not start at the file start (`starts_at_file_start`
/// false), its first line is a fragment and is dropped, unless it is the
/// only line in the window (a single line longer than the window, e.g. a
/// progress bar redrawn with `\r` for megabytes): then its visible end is
/// the best there is, and it is kept. The unterminated last line (a writer
/// mid-flush) counts as a line; a final `\n` does not start an empty one.
/// Lines are yielded without `\n` and never cut at any buffer size other
/// than the window's own start.
pub fn whole_lines(
    tail: &[u8],
    starts_at_file_start: bool,
) -> impl DoubleEndedIterator<Item = &[u8]> {
    let mut body = tail;
    if !starts_at_file_start && let Some(i) = tail.iter().position(|&c| c == b'\n') {
        let rest = tail.get(i + 1..).unwrap_or_default();
        if !rest.is_empty() {
            body = rest;
        }
    }
    let empty = body.is_empty();
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    body.split(|&c| c == b'\n').filter(move |_| !empty)
}

/// Substrings that mark a line as buildkitd's own stderr (logrus fields and
/// the content store's `(*service).Write` failures) when a daemon writes
/// into the build log. Such a line says `error` or `warning` about the
/// daemon, not the build: it is never a context line (SPEC.md, the
/// toolchain's current sampler) and does not count towards the last
/// [`CONTEXT_LINES`].
const DAEMON_NOISE: [&[u8]; 3] = [b"level=error", b"level=warning", b"(*service).Write"];

/// True when `line` contains one of [`DAEMON_NOISE`]. One pass: the
/// needles are compared only where a byte could start one (`l` or `(`).
fn is_daemon_noise(line: &[u8]) -> bool {
    line.iter().enumerate().any(|(i, &c)| {
        matches!(c, b'l' | b'(')
            && DAEMON_NOISE
                .iter()
                .any(|n| n[0] == c && line[i..].starts_with(n))
    })
}

/// Finds the context line and the stage in a log tail.
///
/// `tail` is the end of the log (e.g. from [`read_tail`]);
/// `starts_at_file_start` says whether it is the whole file (see
/// [`whole_lines`] for how a partial first line is treated).
///
/// - context: lines containing `level=error`, `level=warning` or
///   `(*service).Write` (buildkitd's own stderr) are dropped first; then,
///   among the last [`CONTEXT_LINES`] lines left, the last whose text
///   after its last `\r` contains `Building`, `Compiling`, `[N/M]` (ASCII
///   digits on both sides, e.g. ninja's `[12/345]`), `CC `, `CXX `, `LD `,
///   `LINK`, `Linking`, `Built target`, `[stage `, `Finished`, `Installing`,
///   `error` or `warning` (case-sensitive). That text is returned raw.
///   When none of those lines has one, the newest of them that is a
///   compiler or linker command ([`cmdline::parse`], after a BuildKit
///   prefix) is [`Found::command`] instead.
/// - stage: among the last [`STAGE_LINES`] lines (all of them, daemon lines
///   included), the last `[stage NAME]` or `#<digits> [NAME ` (BuildKit
///   step, e.g. `#5 [builder 3/7] RUN make` gives `builder`), anywhere in
///   the line; the last one in its line wins.
///
/// Pure and total: any bytes give a (possibly empty) [`Found`].
///
/// ```
/// use headroom::followed::logtail::scan;
/// let log = b"#5 [builder 3/7] RUN make\n#5 1.02 [ 3/20] CC foo.o\n#5 1.10 ok\n\
/// time=\"2024-05-01T10:00:00Z\" level=error msg=\"(*service).Write failed\"\n";
/// let f = scan(log, true);
/// assert_eq!(f.stage, Some(&b"builder"[..]));
/// assert_eq!(f.context, Some(&b"#5 1.02 [ 3/20] CC foo.o"[..]));
/// ```
pub fn scan(tail: &[u8], starts_at_file_start: bool) -> Found<'_> {
    let mut found = Found {
        context: None,
        command: None,
        stage: None,
    };
    // Lines kept for the context search (daemon lines are not counted).
    let mut kept = 0usize;
    for (i, line) in whole_lines(tail, starts_at_file_start).rev().enumerate() {
        if found.context.is_none() && kept < CONTEXT_LINES && !is_daemon_noise(line) {
            kept += 1;
            let text = after_last_cr(line);
            if is_context_line(text) {
                found.context = Some(text);
                found.command = None;
            } else if found.command.is_none() {
                found.command = cmdline::parse(strip_buildkit_prefix(text));
            }
        }
        if found.stage.is_none() && i < STAGE_LINES {
            found.stage = last_stage_in(line);
        }
        let context_done = found.context.is_some() || kept >= CONTEXT_LINES;
        let stage_done = found.stage.is_some() || i + 1 >= STAGE_LINES;
        if context_done && stage_done {
            break;
        }
    }
    found
}

impl Found<'_> {
    /// Writes the `context` column: the marker line ([`context_into`]),
    /// else the compiler command ([`Command::context_into`], e.g.
    /// `a.c (cc -O2)`). Returns false, leaving `out` as it was, when the
    /// tail gave neither.
    ///
    /// ```
    /// use headroom::followed::logtail::scan;
    /// use headroom::followed::text::Context;
    /// let mut out = Context::new();
    /// let log = b"make[1]: Entering directory '/src'\ncc -O2 -c a.c -o a.o\n";
    /// assert!(scan(log, true).context_into(&mut out));
    /// assert_eq!(out.as_str(), "a.c (cc -O2)");
    /// assert!(!scan(b"plain\n", true).context_into(&mut out));
    /// ```
    pub fn context_into(&self, out: &mut Context) -> bool {
        match (self.context, self.command) {
            (Some(raw), _) => context_into(raw, out),
            (None, Some(c)) => c.context_into(out),
            (None, None) => return false,
        }
        true
    }
}

/// Writes the `context` column for a raw context line from [`scan`]: a
/// leading BuildKit timing prefix `#<digits> <digits or dots> ` (e.g.
/// `#12 45.67 `) is dropped, then the rest is sanitized and cut to
/// [`CONTEXT_CHARS`] characters by [`sanitize_into`].
///
/// ```
/// use headroom::followed::logtail::context_into;
/// use headroom::followed::text::Context;
/// let mut out = Context::new();
/// context_into(b"#12 45.67 Compiling serde v1.0.200", &mut out);
/// assert_eq!(out.as_str(), "Compiling serde v1.0.200");
/// ```
pub fn context_into(raw: &[u8], out: &mut Context) {
    sanitize_into(strip_buildkit_prefix(raw), CONTEXT_CHARS, out);
}

/// `raw` without a leading `#<digits> <digits or dots> `, or `raw` itself.
fn strip_buildkit_prefix(raw: &[u8]) -> &[u8] {
    let strip = || {
        let rest = raw.strip_prefix(b"#")?;
        let rest = skip_while_nonempty(rest, |c| c.is_ascii_digit())?;
        let rest = rest.strip_prefix(b" ")?;
        let rest = skip_while_nonempty(rest, |c| c.is_ascii_digit() || c == b'.')?;
        rest.strip_prefix(b" ")
    };
    strip().unwrap_or(raw)
}

/// Skips the leading bytes of `b` that satisfy `pred`; `None` when there is
/// not at least one.
fn skip_while_nonempty(b: &[u8], pred: impl Fn(u8) -> bool) -> Option<&[u8]> {
    let n = b.iter().position(|&c| !pred(c)).unwrap_or(b.len());
    if n == 0 { None } else { b.get(n..) }
}

/// True when `text` contains a context marker (see [`scan`]).
///
/// One pass over `text`: only at a byte that starts some marker are the
/// markers compared. A 64 KiB line with no marker (a link command still
/// being written, binary noise) costs one table look per byte, not one
/// comparison per byte and marker.
fn is_context_line(text: &[u8]) -> bool {
    text.iter().enumerate().any(|(i, &c)| {
        MARKER_START[usize::from(c)]
            && CONTEXT_MARKERS
                .iter()
                .any(|m| m[0] == c && text[i..].starts_with(m))
    }) || has_counter(text)
}

/// True when `text` contains `[<digits>/<digits>]`.
fn has_counter(text: &[u8]) -> bool {
    text.iter().enumerate().any(|(i, &c)| {
        c == b'['
            && (|| {
                let rest = text.get(i + 1..)?;
                let rest = skip_while_nonempty(rest, |c| c.is_ascii_digit())?;
                let rest = rest.strip_prefix(b"/")?;
                let rest = skip_while_nonempty(rest, |c| c.is_ascii_digit())?;
                rest.strip_prefix(b"]")
            })()
            .is_some()
    })
}

/// A stage NAME byte: ASCII lowercase letter, digit or `-`.
fn is_name_byte(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'
}

/// The NAME at the start of `b` (at least one byte) and what follows it.
fn take_name(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = b.iter().position(|&c| !is_name_byte(c)).unwrap_or(b.len());
    if n == 0 {
        return None;
    }
    Some((b.get(..n)?, b.get(n..)?))
}

/// The NAME of a stage marker starting exactly at the start of `b`.
fn stage_at(b: &[u8]) -> Option<&[u8]> {
    if let Some(rest) = b.strip_prefix(b"[stage ") {
        let (name, after) = take_name(rest)?;
        return after.starts_with(b"]").then_some(name);
    }
    let rest = b.strip_prefix(b"#")?;
    let rest = skip_while_nonempty(rest, |c| c.is_ascii_digit())?;
    let rest = rest.strip_prefix(b" [")?;
    let (name, after) = take_name(rest)?;
    after.starts_with(b" ").then_some(name)
}

/// The NAME of the last stage marker in `line`.
fn last_stage_in(line: &[u8]) -> Option<&[u8]> {
    (0..line.len())
        .rev()
        .filter(|&i| matches!(line.get(i), Some(b'[' | b'#')))
        .find_map(|i| stage_at(line.get(i..)?))
}

/// Reads the last `buf.len()` bytes (or the whole file, if smaller) of the
/// open regular file `file` into `buf`.
///
/// Returns the bytes read and whether they start at the file's first byte
/// (`true` when the whole file fit). The size comes from fstat(2), then
/// pread(2) is repeated until `buf` is full or end of file: a file that
/// shrank in between (a restarted build truncating its log) gives what is
/// there, possibly nothing. Cutting the start off is the point here, so a
/// file larger than `buf` is not an error. Use a [`TAIL_BYTES`] buffer.
///
/// # Errors
/// [`ReadError::NotRegular`] for a FIFO, device or directory (a FIFO would
/// block, `/dev/zero` never ends); [`ReadError::Read`] with the errno of
/// fstat(2) or pread(2).
///
/// # References
/// fstat(2), pread(2).
pub fn read_tail<'b>(
    file: BorrowedFd<'_>,
    buf: &'b mut [u8],
) -> Result<(&'b [u8], bool), ReadError> {
    read_tail_since(file, buf, None)
}

/// [`read_tail`], but a log last modified before `not_before` (Unix
/// seconds) reads as empty, from its start: its lines are an earlier
/// build's (`run` following a log that CMD has not written yet: the last
/// run's errors would be this one's context). The one fstat(2) serves both.
///
/// # Errors
/// As [`read_tail`].
pub fn read_tail_since<'b>(
    file: BorrowedFd<'_>,
    buf: &'b mut [u8],
    not_before: Option<u64>,
) -> Result<(&'b [u8], bool), ReadError> {
    let st = rustix::fs::fstat(file).map_err(ReadError::Read)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(ReadError::NotRegular);
    }
    let modified = u64::try_from(st.st_mtime).unwrap_or(0);
    if not_before.is_some_and(|t| modified < t) {
        return Ok((buf.get(..0).unwrap_or_default(), true));
    }
    let size = u64::try_from(st.st_size).unwrap_or(0);
    let cap = u64::try_from(buf.len()).unwrap_or(u64::MAX);
    let start = size.saturating_sub(cap);
    let mut len = 0usize;
    while let Some(rest) = buf.get_mut(len..) {
        if rest.is_empty() {
            break;
        }
        let offset = start.saturating_add(u64::try_from(len).unwrap_or(u64::MAX));
        match rustix::io::pread(file, rest, offset) {
            Ok(0) => break,
            Ok(n) => len = len.saturating_add(n),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(ReadError::Read(e)),
        }
    }
    Ok((buf.get(..len).unwrap_or_default(), start == 0))
}

/// Finds the active log in the directory `dir` (the `--stage-log-dir`
/// rule of the toolchain's current sampler) and writes its name to
/// `name_out`: the most recently modified `*.log` that has a sibling marker
/// file `<that name>.run` (e.g. `media.log` and `media.log.run`, which the
/// toolchain creates while that step runs), else, when no log has one, the
/// most recently modified `*.log`. Without the marker rule an orchestrator's
/// own run log, written last, was chosen over the step's log.
///
/// Candidates are regular files (by lstat: a symlink is skipped; its target
/// is normally in the same directory) whose name ends in `.log` and does
/// not start with `.` (as the shell glob `*.log` does). Entries that vanish
/// or cannot be stat'ed are skipped, as are non-UTF-8 names and names of
/// 256 bytes or more. A marker is a regular file, symlinks followed (as
/// `test -f` does); a log name of more than 251 bytes cannot have one
/// (NAME_MAX is 255). Ties on mtime (seconds and nanoseconds) go to the
/// greater name, so the choice does not depend on directory order.
/// `dir_scratch` is the getdents64(2) buffer (1 KiB holds several entries;
/// any size that fits one entry works). One pass over the directory, names
/// in fixed buffers: nothing is allocated.
///
/// Returns `Ok(true)` with the name in `name_out`, or `Ok(false)` with
/// `name_out` empty when there is no candidate.
///
/// # Errors
/// The errno of lseek(2) or getdents64(2) on `dir`.
///
/// # References
/// getdents64(2), fstatat(2) with `AT_SYMLINK_NOFOLLOW`, glob(7), test(1).
pub fn active_log(
    dir: BorrowedFd<'_>,
    dir_scratch: &mut [MaybeUninit<u8>],
    name_out: &mut heapless::String<256>,
) -> Result<bool, Errno> {
    name_out.clear();
    // The newest marked log is kept in `name_out`, the newest of all here.
    let mut marked: Option<(i64, i64)> = None;
    let mut newest: Option<(i64, i64)> = None;
    let mut newest_name = heapless::String::<256>::new();
    for_each_entry(dir, dir_scratch, |name, file_type| {
        let is_candidate_name = name.len() < 256
            && name.len() > b".log".len()
            && name.ends_with(b".log")
            && !name.starts_with(b".")
            && matches!(file_type, FileType::RegularFile | FileType::Unknown);
        if !is_candidate_name {
            return true;
        }
        let Ok(name) = core::str::from_utf8(name) else {
            return true;
        };
        let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            return true;
        };
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return true;
        }
        let t = mtime(&st);
        if beats(newest, &newest_name, name, t) {
            keep(&mut newest, &mut newest_name, name, t);
        }
        if beats(marked, name_out, name, t) && has_run_marker(dir, name) {
            keep(&mut marked, name_out, name, t);
        }
        true
    })?;
    if marked.is_some() {
        return Ok(true);
    }
    name_out.clear();
    Ok(newest.is_some() && name_out.push_str(&newest_name).is_ok())
}

/// True when a log modified at `t` and named `name` is chosen over the
/// best so far (`best` at `best_name`): newer, or as new with a greater
/// name.
fn beats(best: Option<(i64, i64)>, best_name: &str, name: &str, t: (i64, i64)) -> bool {
    match best {
        None => true,
        Some(b) => t > b || (t == b && name > best_name),
    }
}

/// Makes `name` (modified at `t`) the best so far.
fn keep(
    best: &mut Option<(i64, i64)>,
    best_name: &mut heapless::String<256>,
    name: &str,
    t: (i64, i64),
) {
    best_name.clear();
    *best = best_name.push_str(name).is_ok().then_some(t);
}

/// True when `dir` holds the regular file `<log>.run` (symlinks followed).
/// The marker's name is built in a 255-byte buffer (NAME_MAX), so rustix
/// passes it through its stack path buffer: no allocation.
fn has_run_marker(dir: BorrowedFd<'_>, log: &str) -> bool {
    let mut marker = heapless::String::<255>::new();
    if marker.push_str(log).is_err() || marker.push_str(".run").is_err() {
        return false;
    }
    rustix::fs::statat(dir, marker.as_str(), AtFlags::empty())
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
}

/// The modification time of `st` as (seconds, nanoseconds). The field types
/// differ between architectures and rustix backends, hence the casts.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn mtime(st: &rustix::fs::Stat) -> (i64, i64) {
    (st.st_mtime as i64, st.st_mtime_nsec as i64)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use rustix::fd::{AsFd, OwnedFd};
    use std::vec::Vec;

    const LOG: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/23-build-log-hostile-bytes/build.log"
    ));
    const LOG_PATH: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/23-build-log-hostile-bytes/build.log"
    );

    /// Opens `path` read-only with rustix (the library's fd types are
    /// rustix's no_std ones, not std's).
    fn open(path: impl AsRef<std::path::Path>) -> OwnedFd {
        let path = path.as_ref().to_str().unwrap();
        rustix::fs::open(
            path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap()
    }

    fn ctx(raw: &[u8]) -> Context {
        let mut out = Context::new();
        context_into(raw, &mut out);
        out
    }

    /// A fresh directory under the system temp dir, unique per test.
    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(std::format!(
            "headroom-logtail-{}-{tag}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn fixture_23_build_log_hostile_bytes() {
        assert_eq!(LOG.len(), 5340);
        assert!(!LOG.ends_with(b"\n"));
        let all: Vec<&[u8]> = whole_lines(LOG, true).collect();
        assert_eq!(all.len(), 9);
        // CASE.md's "4624-byte" line 4 counts its `\n`.
        assert_eq!(all[3].len() + 1, 4624);

        // Whole file: line 9 is the context, there is no stage marker.
        let f = scan(LOG, true);
        assert_eq!(f.context, Some(all[8]));
        assert_eq!(f.stage, None);
        assert_eq!(
            ctx(f.context.unwrap()).as_str(),
            "[ 41%] Building CXX object src/CMakeFiles/core.dir/ast.cpp.o ?"
        );

        // The last 4096 bytes, read from the file: the window starts inside
        // line 4 (4624 bytes), which is dropped; lines 5–9 are whole.
        let file = open(LOG_PATH);
        let mut buf = [0u8; 4096];
        let (tail, at_start) = read_tail(file.as_fd(), &mut buf).unwrap();
        assert!(!at_start);
        assert_eq!(tail, &LOG[LOG.len() - 4096..]);
        let win: Vec<&[u8]> = whole_lines(tail, at_start).collect();
        assert_eq!(win, all[4..].to_vec());
        assert!(win[0].starts_with(b"Downloading wheel  10%"));
        assert_eq!(
            ctx(after_last_cr(win[0])).as_str(),
            "Downloading wheel 100%|██████████| 10.0M/10.0M"
        );
        assert_eq!(scan(tail, at_start), f);
        // tail(4) starts with the OOM kill line an OOM detector must see.
        assert_eq!(
            win[1],
            b"g++: fatal error: Killed signal terminated program cc1plus"
        );

        // Without line 9, `fatal error` (line 6) is the last context line:
        // `Error 1` (line 8) does not match, markers are case-sensitive.
        let upto8 = &LOG[..LOG.len() - all[8].len()];
        assert_eq!(scan(upto8, true).context, Some(all[5]));

        // The whole file fits a TAIL_BYTES buffer and starts at the start.
        let mut big = std::vec![0u8; TAIL_BYTES];
        let (t, at_start) = read_tail(file.as_fd(), &mut big).unwrap();
        assert!(at_start);
        assert_eq!(t, LOG);
    }

    #[test]
    fn huge_single_line_without_newline() {
        let dir = temp_dir("huge");
        let path = dir.join("huge.log");
        let mut line = std::vec![b'x'; 10 * 1024 * 1024];
        line[..9].copy_from_slice(b"Compiling");
        std::fs::write(&path, &line).unwrap();
        let file = open(&path);
        let mut buf = std::vec![0u8; TAIL_BYTES];
        let (tail, at_start) = read_tail(file.as_fd(), &mut buf).unwrap();
        assert!(!at_start);
        assert_eq!(tail.len(), TAIL_BYTES);
        // The marker is 10 MB back, outside the window: no context.
        assert_eq!(
            scan(tail, at_start),
            Found {
                context: None,
                command: None,
                stage: None
            }
        );

        // A marker inside the window: the window's text is the context.
        let n = line.len();
        line[n - 20..n - 11].copy_from_slice(b"Compiling");
        std::fs::write(&path, &line).unwrap();
        let file = open(&path);
        let (tail, at_start) = read_tail(file.as_fd(), &mut buf).unwrap();
        let f = scan(tail, at_start);
        assert_eq!(f.context, Some(tail));
        let c = ctx(f.context.unwrap());
        assert_eq!(c.chars().count(), CONTEXT_CHARS);

        // Progress bar redrawn with `\r` past the window: the last redraw.
        let mut bar = Vec::new();
        for i in 0..200_000u32 {
            bar.extend_from_slice(std::format!("\rBuilding [{i}/200000]").as_bytes());
        }
        let f = scan(&bar[bar.len() - TAIL_BYTES..], false);
        assert_eq!(f.context, Some(&b"Building [199999/200000]"[..]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `run` ignores a log that its CMD has not written: one modified
    /// before the run started reads as empty; written since, as it is.
    #[test]
    fn read_tail_since_skips_an_earlier_builds_log() {
        let dir = temp_dir("since");
        let path = dir.join("build.log");
        std::fs::write(&path, b"a.c:1:1: error: old\n").unwrap();
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        let now = std::time::UNIX_EPOCH.elapsed().unwrap().as_secs();
        let file = open(&path);
        let mut buf = [0u8; 64];
        assert_eq!(
            read_tail_since(file.as_fd(), &mut buf, Some(now)).unwrap(),
            (&b""[..], true)
        );
        let (t, _) = read_tail_since(file.as_fd(), &mut buf, None).unwrap();
        assert_eq!(t, b"a.c:1:1: error: old\n");
        std::fs::write(&path, b"cc -c new.c\n").unwrap();
        let (t, _) = read_tail_since(file.as_fd(), &mut buf, Some(now)).unwrap();
        assert_eq!(t, b"cc -c new.c\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn read_tail_sizes_and_errors() {
        let dir = temp_dir("shrink");
        let path = dir.join("a.log");
        std::fs::write(&path, b"").unwrap();
        let file = open(&path);
        let mut buf = [0u8; 16];
        assert_eq!(read_tail(file.as_fd(), &mut buf).unwrap(), (&b""[..], true));
        // Exactly the buffer size: whole file, starts at the start.
        std::fs::write(&path, b"0123456789abcdef").unwrap();
        let (t, s) = read_tail(file.as_fd(), &mut buf).unwrap();
        assert_eq!((t, s), (&b"0123456789abcdef"[..], true));
        // One byte more: the first byte is cut off.
        std::fs::write(&path, b"0123456789abcdefg").unwrap();
        let (t, s) = read_tail(file.as_fd(), &mut buf).unwrap();
        assert_eq!((t, s), (&b"123456789abcdefg"[..], false));
        // A directory is refused before any read.
        let d = open(&dir);
        assert_eq!(read_tail(d.as_fd(), &mut buf), Err(ReadError::NotRegular));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_input() {
        let none = Found {
            context: None,
            command: None,
            stage: None,
        };
        assert_eq!(scan(b"", true), none);
        assert_eq!(scan(b"", false), none);
        assert_eq!(scan(b"\n\n\n", true), none);
        assert_eq!(whole_lines(b"", true).count(), 0);
        assert_eq!(ctx(b"").as_str(), "");
    }

    #[test]
    fn window_starting_mid_line() {
        // `Compiling` is in the fragment: it must not be chosen.
        let w = b"Compiling foo\nplain\n";
        assert_eq!(scan(w, false).context, None);
        assert_eq!(scan(w, true).context, Some(&b"Compiling foo"[..]));
        let w = b"ing x\n[stage y]\nCompiling b";
        let f = scan(w, false);
        assert_eq!(f.context, Some(&b"Compiling b"[..]));
        assert_eq!(f.stage, Some(&b"y"[..]));
        // A fragment that is the window's only line is kept.
        assert_eq!(
            scan(b"ing Compiling z\n", false).context,
            Some(&b"ing Compiling z"[..])
        );
        let lines: Vec<&[u8]> = whole_lines(b"frag\na\n\nb", false).collect();
        assert_eq!(lines, [&b"a"[..], b"", b"b"]);
        // Starting exactly at a line start is still "not at file start":
        // the first line is dropped because it cannot be told apart.
        assert_eq!(whole_lines(b"a\nb\n", false).count(), 1);
    }

    #[test]
    fn crlf_lines() {
        let log = b"Compiling a v1\r\n[stage deps]\r\nnothing\r\n";
        let f = scan(log, true);
        assert_eq!(f.context, Some(&b"[stage deps]"[..]));
        assert_eq!(f.stage, Some(&b"deps"[..]));
        let log = b"Compiling a v1\r\nnothing\r\n";
        assert_eq!(
            ctx(scan(log, true).context.unwrap()).as_str(),
            "Compiling a v1"
        );
    }

    #[test]
    fn buildkit_prefix_and_stage() {
        let log = b"#1 [internal] load build definition from Dockerfile\n\
#5 [builder 3/7] RUN make -j4\n\
#5 12.34 [ 50%] Building C object foo.o\n\
#5 12.40 make: Leaving directory\n";
        let f = scan(log, true);
        assert_eq!(f.stage, Some(&b"builder"[..]));
        assert_eq!(
            ctx(f.context.unwrap()).as_str(),
            "[ 50%] Building C object foo.o"
        );
        // Prefix variants: only `#digits digits-or-dots ` at the very start.
        assert_eq!(ctx(b"#12 45.67 Compiling x").as_str(), "Compiling x");
        assert_eq!(ctx(b"#12 5 CC a.o").as_str(), "CC a.o");
        assert_eq!(ctx(b"#12 DONE 0.1s").as_str(), "#12 DONE 0.1s");
        assert_eq!(ctx(b"#12 45.67").as_str(), "#12 45.67");
        assert_eq!(ctx(b"# 45.67 x").as_str(), "# 45.67 x");
        assert_eq!(ctx(b" #12 45.67 x").as_str(), " #12 45.67 x");
        assert_eq!(ctx(b"#12  45.67 x").as_str(), "#12 45.67 x");
        // `[internal]` has no space after its name; `[2/5]` is no NAME.
        assert_eq!(scan(b"#1 [internal] load\n", true).stage, None);
        assert_eq!(scan(b"#8 [2/5] RUN x\n", true).stage, None);
        // Near misses for the step form.
        for bad in [
            &b"# [builder 1/2]"[..],
            b"#5[builder 1/2]",
            b"#5 [Builder 1/2]",
            b"#5 [builder]",
            b"#5 [ builder 1/2]",
            b"#x5 [builder 1/2]",
        ] {
            assert_eq!(scan(bad, true).stage, None, "{bad:?}");
        }
        // Anywhere in the line, and the last one in the line wins.
        assert_eq!(
            scan(b"12:00 #7 [deps 1/3] x #9 [final-2 2/2] y\n", true).stage,
            Some(&b"final-2"[..])
        );
    }

    #[test]
    fn stage_markers() {
        let log = b"[stage configure]\nCC a.o\n[stage build] go\nLD app\n";
        let f = scan(log, true);
        assert_eq!(f.stage, Some(&b"build"[..]));
        assert_eq!(f.context, Some(&b"LD app"[..]));
        for bad in [
            &b"[stage ]"[..],
            b"[stage Build]",
            b"[stage build",
            b"[stage build x]",
            b"[stagebuild]",
            b"[Stage build]",
        ] {
            assert_eq!(scan(bad, true).stage, None, "{bad:?}");
        }
        // The stage is searched 200 lines back, the context only 40.
        let mut log = Vec::new();
        log.extend_from_slice(b"[stage old]\nCompiling old\n");
        for _ in 0..198 {
            log.extend_from_slice(b"plain\n");
        }
        let f = scan(&log, true);
        assert_eq!(f.stage, Some(&b"old"[..]));
        assert_eq!(f.context, None);
        log.extend_from_slice(b"plain\n");
        assert_eq!(scan(&log, true).stage, None);
    }

    #[test]
    fn context_markers_and_window() {
        // ninja counters.
        assert_eq!(
            scan(b"[12/345] foo\n", true).context,
            Some(&b"[12/345] foo"[..])
        );
        for bad in [
            &b"[12/] x"[..],
            b"[/3] x",
            b"[1/2 x",
            b"[1 /2] x",
            b"[a/b] x",
            b"[ 40%] x",
        ] {
            assert_eq!(scan(bad, true).context, None, "{bad:?}");
        }
        for good in [
            &b"  CC      kernel/fork.o"[..],
            b"  CXX src/a.o",
            b"  LD      vmlinux",
            b"[100%] LINKING",
            b"[100%] Linking CXX executable app",
            b"[ 10%] Built target core",
            b"    Finished `release` profile",
            b"Installing /usr/lib/x",
            b"x: error: y",
            b"x: warning: y",
        ] {
            assert_eq!(scan(good, true).context, Some(good), "{good:?}");
        }
        // Near misses: no trailing space, wrong case.
        for near in [
            &b"CC"[..],
            b"xLD",
            b"Error 1",
            b"WARNING",
            b"compiling",
            b"Link",
            b"linking",
        ] {
            assert_eq!(scan(near, true).context, None, "{near:?}");
        }
        // Only the last 40 lines are searched for context.
        let mut log = Vec::new();
        log.extend_from_slice(b"Compiling a\n");
        for _ in 0..39 {
            log.extend_from_slice(b"plain\n");
        }
        assert_eq!(scan(&log, true).context, Some(&b"Compiling a"[..]));
        log.extend_from_slice(b"plain");
        assert_eq!(scan(&log, true).context, None);
        // The marker must be in the visible text after the last `\r`.
        assert_eq!(scan(b"Compiling x\rdone\n", true).context, None);
    }

    /// The context column `scan` gives for a whole log.
    fn column(log: &[u8]) -> Option<std::string::String> {
        let mut out = Context::new();
        scan(log, true)
            .context_into(&mut out)
            .then(|| out.as_str().into())
    }

    /// Issue 15: a plain Makefile's log gave `?,""` on every row: make's
    /// echo lines have none of the toolchain's markers.
    #[test]
    fn a_makefile_log_without_markers_gives_the_file_being_compiled() {
        let log = b"make: Entering directory '/src/demo'\n\
cc -O2 -c a.c -o a.o\n\
cc -O2 -c b.c -o b.o\n\
a.c: In function 'main':\n";
        assert_eq!(column(log).as_deref(), Some("b.c (cc -O2)"));
        let f = scan(log, true);
        assert_eq!(f.context, None);
        assert_eq!(f.command.map(|c| c.file), Some(&b"b.c"[..]));
        // The link comes last: its output.
        let mut log = log.to_vec();
        log.extend_from_slice(b"cc -o demo a.o b.o\n");
        assert_eq!(column(&log).as_deref(), Some("demo (cc)"));
        // A BuildKit prefix and `\r` are dropped first.
        assert_eq!(
            column(b"#7 3.20 g++ -O2 -c x.cpp -o x.o\n").as_deref(),
            Some("x.cpp (g++ -O2)")
        );
        // Nothing to show: no context, as before.
        assert_eq!(column(b"make: Nothing to be done for 'all'.\n"), None);
    }

    /// The toolchain's rule comes first: wherever one of the last 40 lines
    /// has a marker, the context is that line, raw, as before.
    #[test]
    fn a_marker_line_in_the_window_wins_over_a_newer_command() {
        let log = b"[ 50%] Building C object CMakeFiles/app.dir/a.c.o\n\
/usr/bin/cc -O2 -o CMakeFiles/app.dir/b.c.o -c /src/b.c\n";
        assert_eq!(
            column(log).as_deref(),
            Some("[ 50%] Building C object CMakeFiles/app.dir/a.c.o")
        );
        assert_eq!(scan(log, true).command, None);
        // `-Werror` holds the marker `error`: the line is shown raw.
        assert_eq!(
            column(b"gcc -Werror -c a.c\n").as_deref(),
            Some("gcc -Werror -c a.c")
        );
        // The command fallback has the same 40-line window.
        let mut log = std::vec::Vec::from(&b"cc -c old.c\n"[..]);
        for _ in 0..39 {
            log.extend_from_slice(b"plain\n");
        }
        assert_eq!(column(&log).as_deref(), Some("old.c (cc)"));
        log.extend_from_slice(b"plain\n");
        assert_eq!(column(&log), None);
    }

    #[test]
    fn only_commas_and_quotes_context() {
        let f = scan(b"Compiling \",,\"\n", true);
        assert_eq!(ctx(f.context.unwrap()).as_str(), "Compiling");
        assert_eq!(ctx(b",\",\",\"\"").as_str(), "");
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed: u64 = 7;
        let alphabet = b"#[]/ 0123456789stagebuilder-\n\r\x1b\xe9,\"CLD";
        for _ in 0..3000 {
            let mut v = [0u8; 48];
            for b in v.iter_mut() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *b = alphabet[(seed >> 33) as usize % alphabet.len()];
            }
            for at_start in [true, false] {
                let f = scan(&v, at_start);
                if let Some(c) = f.context {
                    let out = ctx(c);
                    assert!(!out.contains(',') && !out.contains('"'));
                }
                if let Some(s) = f.stage {
                    assert!(!s.is_empty() && s.iter().all(|&c| is_name_byte(c)));
                }
            }
        }
    }

    #[test]
    fn active_log_without_markers_picks_latest_regular_log() {
        use std::time::{Duration, SystemTime};
        let dir = temp_dir("newest");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let set = |name: &str, secs: u64| {
            let f = std::fs::File::options()
                .write(true)
                .open(dir.join(name))
                .unwrap();
            f.set_modified(t0 + Duration::from_secs(secs)).unwrap();
        };
        let root = crate::kernel::root::Root::open(dir.to_str().unwrap()).unwrap();
        let d = root.open_dir(".").unwrap();
        let mut scratch = [MaybeUninit::<u8>::uninit(); 1024];
        let mut name = heapless::String::<256>::new();
        // Empty directory.
        assert_eq!(active_log(d.as_fd(), &mut scratch, &mut name), Ok(false));
        assert_eq!(name.as_str(), "");

        for n in ["a.log", "b.log", "c.txt", ".hidden.log", ".log", "blog"] {
            std::fs::write(dir.join(n), b"x").unwrap();
        }
        set("a.log", 10);
        set("b.log", 20);
        set("c.txt", 30);
        set(".hidden.log", 40);
        set(".log", 50);
        set("blog", 60);
        std::fs::create_dir(dir.join("d.log")).unwrap();
        std::os::unix::fs::symlink("a.log", dir.join("link.log")).unwrap();
        assert_eq!(active_log(d.as_fd(), &mut scratch, &mut name), Ok(true));
        assert_eq!(name.as_str(), "b.log");
        // Nanoseconds count; ties go to the greater name.
        set("a.log", 20);
        assert_eq!(active_log(d.as_fd(), &mut scratch, &mut name), Ok(true));
        assert_eq!(name.as_str(), "b.log");
        let f = std::fs::File::options()
            .write(true)
            .open(dir.join("a.log"))
            .unwrap();
        f.set_modified(t0 + Duration::from_nanos(20_000_000_001))
            .unwrap();
        assert_eq!(active_log(d.as_fd(), &mut scratch, &mut name), Ok(true));
        assert_eq!(name.as_str(), "a.log");
        // Re-chosen on every call (the directory is rewound).
        set("b.log", 99);
        assert_eq!(active_log(d.as_fd(), &mut scratch, &mut name), Ok(true));
        assert_eq!(name.as_str(), "b.log");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 12: an orchestrator's run log, written last, was chosen over
    /// the step's log; the newest `*.log` with a `.log.run` marker wins.
    #[test]
    fn active_log_prefers_the_newest_log_with_a_run_marker() {
        use std::time::{Duration, SystemTime};
        let dir = temp_dir("marker");
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let write = |name: &str, secs: u64| {
            std::fs::write(dir.join(name), b"x").unwrap();
            let f = std::fs::File::options()
                .write(true)
                .open(dir.join(name))
                .unwrap();
            f.set_modified(t0 + Duration::from_secs(secs)).unwrap();
        };
        let root = crate::kernel::root::Root::open(dir.to_str().unwrap()).unwrap();
        let d = root.open_dir(".").unwrap();
        let mut scratch = [MaybeUninit::<u8>::uninit(); 1024];
        let mut name = heapless::String::<256>::new();
        let mut pick = || {
            let found = active_log(d.as_fd(), &mut scratch, &mut name).unwrap();
            assert!(found);
            std::string::String::from(name.as_str())
        };
        write("media.log", 10);
        write("base.log", 20);
        write("orchestrator.log", 30);
        assert_eq!(pick(), "orchestrator.log");
        // Only an older log is marked: it wins over newer unmarked ones.
        write("media.log.run", 5);
        assert_eq!(pick(), "media.log");
        // Among marked logs the newest wins, ties to the greater name.
        write("base.log.run", 1);
        assert_eq!(pick(), "base.log");
        write("media.log", 20);
        assert_eq!(pick(), "media.log");
        // A marker that is a directory or a dangling symlink does not count;
        // a symlink to a regular file does (as `test -f`).
        std::fs::remove_file(dir.join("media.log.run")).unwrap();
        std::fs::create_dir(dir.join("media.log.run")).unwrap();
        assert_eq!(pick(), "base.log");
        std::fs::remove_dir(dir.join("media.log.run")).unwrap();
        std::os::unix::fs::symlink("gone", dir.join("media.log.run")).unwrap();
        assert_eq!(pick(), "base.log");
        std::fs::remove_file(dir.join("media.log.run")).unwrap();
        std::os::unix::fs::symlink("base.log.run", dir.join("media.log.run")).unwrap();
        assert_eq!(pick(), "media.log");
        // A marker without its log, or for a hidden log, is no candidate.
        write("ghost.log.run", 99);
        write(".hidden.log", 99);
        write(".hidden.log.run", 99);
        assert_eq!(pick(), "media.log");
        // Markers gone: back to the newest *.log.
        for m in ["media.log.run", "base.log.run"] {
            std::fs::remove_file(dir.join(m)).unwrap();
        }
        assert_eq!(pick(), "orchestrator.log");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Issue 12: buildkitd's own stderr in the log (`level=error`,
    /// `level=warning`, `(*service).Write`) was taken for the context.
    #[test]
    fn buildkitd_stderr_is_never_the_context() {
        let mut log = Vec::new();
        log.extend_from_slice(b"#7 [builder 4/9] RUN cargo build --release\n");
        log.extend_from_slice(b"#7 12.5 Compiling foo v0.1.0 (/src/foo)\n");
        log.extend_from_slice(b"#7 12.9 note: plain output\n");
        // More daemon lines than the context window: they do not count.
        for i in 0..60 {
            let line = match i % 3 {
                0 => std::format!(
                    "time=\"2024-05-01T10:00:{i:02}Z\" level=error msg=\"/moby.buildkit.v1.Control/Solve returned error: rpc error: code = Canceled\"\n"
                ),
                1 => std::format!(
                    "time=\"2024-05-01T10:00:{i:02}Z\" level=warning msg=\"failed to update distribution source\" error=\"not found\"\n"
                ),
                _ => std::format!("(*service).Write failed: error=\"unexpected EOF\" ref={i}\n"),
            };
            log.extend_from_slice(line.as_bytes());
        }
        let f = scan(&log, true);
        assert_eq!(f.stage, Some(&b"builder"[..]));
        assert_eq!(
            ctx(f.context.unwrap()).as_str(),
            "Compiling foo v0.1.0 (/src/foo)"
        );
        // The build's own errors still are.
        log.extend_from_slice(b"#7 13.0 error[E0425]: cannot find value `x`\n");
        assert_eq!(
            ctx(scan(&log, true).context.unwrap()).as_str(),
            "error[E0425]: cannot find value `x`"
        );
        // Near misses are not daemon lines.
        for line in [
            &b"level=info error: x"[..],
            b"level= error",
            b"service).Write error",
        ] {
            assert_eq!(scan(line, true).context, Some(line), "{line:?}");
        }
        // Kept lines still count: 40 plain lines hide an older context.
        let mut log = std::vec::Vec::from(&b"Compiling a\n"[..]);
        for _ in 0..40 {
            log.extend_from_slice(b"plain\nlevel=error x\n");
        }
        assert_eq!(scan(&log, true).context, None);
    }
}
