//! Per-action resource use: the rows `headroom run --actions FILE` appends,
//! one per wrapped command, and the `headroom actions FILE` table.
//!
//! Many wrapped compiles may append to the same file at once (`make -j8`
//! with `CC="headroom run --actions a.csv -- gcc"`): each row is formatted
//! into one fixed buffer by [`format_row`] so the caller can append it with
//! a single `write(2)` on an `O_APPEND` descriptor, which never interleaves
//! with the other writers' rows. Each writer may also append a [`HEADER`];
//! the reader skips a header wherever it appears.
//!
//! Reading is streaming and fixed-size: [`ActionRows`] turns chunks of the
//! file into [`Action`]s, and [`Table`] accumulates them into wall-time
//! buckets with a fixed histogram for the p90 of cores, so memory does not
//! grow with the file; only the longest-N list keeps whole actions, and it
//! holds at most [`TOP_CAP`].
//!
//! All numbers are fixed-point integers: milliseconds, hundredths of a core
//! ("centi-cores"), KiB. Rounding for display is half up.
//!
//! # References
//! getrusage(2) and wait4(2) (`ru_utime`, `ru_stime`, `ru_maxrss` in KiB,
//! `ru_majflt`, `ru_minflt`, `ru_nvcsw`, `ru_nivcsw`, `ru_inblock`, `ru_oublock`),
//! signal(7) (signal numbers), RFC 4180 via `csv-core`, SPEC.md
//! "Command line"; the per-bucket table imitates the layout of Buildbarn's
//! per-action usage reports (POSIXResourceUsage).

use csv_core::{ReadRecordResult, Reader};
use heapless::{String, Vec};
use ufmt::{uWrite, uwrite};

use crate::followed::figures::{div_round, fixed, gib_centi, seconds};
use crate::followed::rusage::Counts;
use crate::followed::text::sanitize_into;
use crate::kernel::parse::{parse_i64, parse_u64, trim};
use crate::tick::clock::Iso;
use crate::tick::row::BufferFull;

/// The actions file's header line, with its newline. The getrusage(2)
/// counters ([`Counts::NAMES`]) came after `exit` later: a file written
/// before them has rows of [`OLD_COLUMNS`] and reads the same, without
/// them; rows of both kinds may share one file (under its old header).
pub const HEADER: &str = "id,start,wall_s,user_s,sys_s,cores,max_rss_mb,signal,exit,majflt,minflt,nvcsw,nivcsw,inblock,oublock\n";

/// Number of columns in a row (and in [`HEADER`]).
pub const COLUMNS: usize = OLD_COLUMNS + Counts::NAMES.len();

/// Number of columns in a row written before the counters were added
/// (`id` to `exit`).
pub const OLD_COLUMNS: usize = 9;

/// Byte capacity of an action id: a program name and a source path, enough
/// to tell `cc1plus src/big/template_heavy.cpp` apart from its neighbours;
/// longer paths keep their end (see [`action_id`]).
pub const ID_CAP: usize = 96;

/// An action id: sanitized text (no `,` `"` or control characters) of at
/// most [`ID_CAP`] bytes.
pub type Id = String<ID_CAP>;

/// Byte capacity of a signal name without `SIG` (`VTALRM` is the longest,
/// 6 bytes; a realtime signal written as its number fits too).
pub const SIGNAL_CAP: usize = 8;

/// A signal name without the `SIG` prefix (`KILL`, `SEGV`).
pub type Signal = String<SIGNAL_CAP>;

/// Byte capacity of one formatted row. The longest possible row is an id
/// of 96 bytes, a 20-byte start time, three seconds fields of at most 21
/// bytes (`u64::MAX` ms), cores of at most 21 bytes, max_rss_mb of at most
/// 17 digits, an 8-byte signal, an 11-byte exit code, 8 commas and the
/// newline: 245 bytes; six counters of at most 20 digits, each with its
/// comma, add 126: 371 bytes. 384 holds it.
pub const ROW_CAP: usize = 384;

/// One wrapped command's resource use, as `headroom run` measured it with
/// wait4(2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// What ran: `--label`, or the program and its source file (see
    /// [`action_id`]); sanitized, never containing `,` or `"`.
    pub id: Id,
    /// When the command was started (UTC, to the second).
    pub start: Iso,
    /// Wall time from fork to exit, milliseconds.
    pub wall_ms: u64,
    /// User CPU time of the command and its waited-for children
    /// (`ru_utime`), milliseconds.
    pub user_ms: u64,
    /// System CPU time of the command and its waited-for children
    /// (`ru_stime`), milliseconds.
    pub sys_ms: u64,
    /// Peak resident set of the largest single process (`ru_maxrss`), KiB.
    /// Not a total: a `make -j4` reports its biggest compiler.
    pub max_rss_kib: u64,
    /// The signal that ended the command, without `SIG` (`KILL`, `SEGV`);
    /// `None` when it exited.
    pub signal: Option<Signal>,
    /// The exit status when it exited; `None` when a signal ended it.
    pub exit: Option<i32>,
    /// Page faults, context switches and file system blocks; `None` for
    /// a row written before they were recorded.
    pub counts: Option<Counts>,
}

impl Action {
    /// Average cores while it ran, in hundredths: (user + sys) × 100 / wall,
    /// rounded half up; 0 when the wall time is 0.
    ///
    /// ```
    /// use headroom::report::actions::Action;
    /// use headroom::tick::clock::Iso;
    /// let a = Action { id: Default::default(), start: Iso::from_epoch(0), wall_ms: 3000,
    ///     user_ms: 3500, sys_ms: 500, max_rss_kib: 0, signal: None, exit: Some(0),
    ///     counts: None };
    /// assert_eq!(a.cores_centi(), 133); // 4.000 / 3.000 = 1.333…
    /// ```
    pub fn cores_centi(&self) -> u64 {
        div_round(
            u128::from(self.cpu_ms()).saturating_mul(100),
            u128::from(self.wall_ms),
        )
    }

    /// The action of a finished command: `id` (see [`action_id`]),
    /// started at `start_epoch` (Unix seconds), with the wait4(2) figures
    /// of `u`. A signal without a name (realtime, 34–64) is kept as its
    /// number, e.g. `34`.
    ///
    /// ```
    /// use headroom::report::actions::{Action, Id};
    /// use headroom::followed::rusage::{Counts, End, Usage};
    /// let u = Usage { wall_ms: 2000, user_ms: 1500, sys_ms: 100, max_rss_kib: 4096,
    ///     counts: Counts::default(), end: End::Signaled(9) };
    /// let a = Action::from_usage(Id::try_from("cc x.c").unwrap(), 1796000585, &u);
    /// assert_eq!(a.signal.as_deref(), Some("KILL"));
    /// assert_eq!((a.exit, a.cores_centi()), (None, 80));
    /// ```
    pub fn from_usage(id: Id, start_epoch: u64, u: &crate::followed::rusage::Usage) -> Action {
        use crate::followed::rusage::End;
        let (signal, exit) = match u.end {
            End::Exited(code) => (None, Some(code)),
            End::Signaled(sig) => {
                let mut name = Signal::new();
                // Both fit: names are at most 6 bytes, an i32 at most 11
                // digits but signal numbers are at most 2 (the status word
                // keeps 7 bits).
                let _ = match signal_name(sig) {
                    Some(n) => name.push_str(n).map_err(|_| ()),
                    None => uwrite!(name, "{}", sig).map_err(|_| ()),
                };
                (Some(name), None)
            }
        };
        Action {
            id,
            start: Iso::from_epoch(start_epoch),
            wall_ms: u.wall_ms,
            user_ms: u.user_ms,
            sys_ms: u.sys_ms,
            max_rss_kib: u.max_rss_kib,
            signal,
            exit,
            counts: Some(u.counts),
        }
    }

    /// User plus system CPU time, milliseconds (saturating).
    pub fn cpu_ms(&self) -> u64 {
        self.user_ms.saturating_add(self.sys_ms)
    }
}

/// The Linux name (without `SIG`) of a signal number: the same table as
/// [`crate::followed::rusage::signal_name`] (signal(7), generic numbering of x86_64,
/// aarch64, arm and riscv64); `None` for 0, realtime signals (34–64) and
/// anything else.
///
/// ```
/// use headroom::report::actions::signal_name;
/// assert_eq!(signal_name(9), Some("KILL"));
/// assert_eq!(signal_name(11), Some("SEGV"));
/// assert_eq!(signal_name(0), None);
/// assert_eq!(signal_name(34), None);
/// ```
pub use crate::followed::rusage::signal_name;

/// File-name extensions (after the last `.`, case-sensitive) that
/// [`action_id`] takes as naming a source file: C, C++, Objective-C,
/// Fortran, assembler, CUDA, Rust, Go, Java and LLVM IR/bitcode.
pub const SOURCE_EXTS: [&str; 22] = [
    "c", "cc", "cp", "cpp", "cxx", "c++", "C", "m", "mm", "f", "f90", "f95", "for", "s", "S", "sx",
    "cu", "rs", "go", "java", "ll", "bc",
];

/// True when `arg` names a source file: not an option, and its last path
/// component has a non-empty stem and an extension in [`SOURCE_EXTS`].
fn is_source(arg: &str) -> bool {
    if arg.starts_with('-') {
        return false;
    }
    let base = arg.rsplit('/').next().unwrap_or(arg);
    match base.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && SOURCE_EXTS.contains(&ext),
        None => false,
    }
}

/// Writes the id of a wrapped command into `out` (cleared first).
///
/// `label` (`--label`) when given and not blank; otherwise the basename of
/// `argv[0]` plus, when one of the later arguments names a source file
/// (see [`SOURCE_EXTS`]; options starting with `-` are not), a space and
/// the LAST such argument, path kept as given. When the whole does not fit
/// in [`ID_CAP`] bytes the path keeps its end behind `...`. Everything is
/// sanitized with [`sanitize_into`]; an empty program name becomes `?`.
///
/// ```
/// use headroom::report::actions::{action_id, Id};
/// let mut id = Id::new();
/// action_id(None, &["/usr/bin/gcc", "-c", "-o", "x.o", "src/x.c"], &mut id);
/// assert_eq!(id.as_str(), "gcc src/x.c");
/// action_id(Some("linking, final"), &["ld"], &mut id);
/// assert_eq!(id.as_str(), "linking final");
/// action_id(None, &["make", "-j4"], &mut id);
/// assert_eq!(id.as_str(), "make");
/// ```
pub fn action_id(label: Option<&str>, argv: &[&str], out: &mut Id) {
    out.clear();
    if let Some(l) = label.filter(|l| !l.trim().is_empty()) {
        sanitize_into(l.as_bytes(), ID_CAP, out);
        return;
    }
    let prog = argv.first().copied().unwrap_or("");
    let base = prog.rsplit('/').next().unwrap_or(prog);
    sanitize_into(base.as_bytes(), ID_CAP, out);
    if out.is_empty() {
        // Cannot fail: the buffer is empty and has room for one byte.
        let _ = out.push('?');
    }
    let Some(src) = argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .rev()
        .find(|a| is_source(a))
    else {
        return;
    };
    const ELLIPSIS: &str = "...";
    // Bytes left for the path after the program and a space.
    let room = ID_CAP.saturating_sub(out.len()).saturating_sub(1);
    if room <= ELLIPSIS.len() + 4 {
        return;
    }
    let bytes = src.as_bytes();
    let mut path = Id::new();
    if bytes.len() <= room {
        // Sanitizing never makes text longer, so the whole path fits.
        sanitize_into(bytes, room, &mut path);
    } else {
        let keep = room - ELLIPSIS.len();
        let mut at = bytes.len() - keep;
        // Start on a character boundary: skip UTF-8 continuation bytes.
        while bytes.get(at).is_some_and(|&b| b & 0xC0 == 0x80) {
            at += 1;
        }
        let mut tail = Id::new();
        sanitize_into(bytes.get(at..).unwrap_or_default(), keep, &mut tail);
        if tail.is_empty() {
            return;
        }
        // Both fit: ELLIPSIS + keep <= room <= ID_CAP.
        let _ = path.push_str(ELLIPSIS);
        let _ = path.push_str(&tail);
    }
    if path.is_empty() {
        return;
    }
    // Fits: out.len() + 1 + path.len() <= out.len() + 1 + room = ID_CAP.
    let _ = out.push(' ');
    let _ = out.push_str(&path);
}

/// Capacity of a formatted number cell: 20 digits, a point and 3 decimals
/// is 24 bytes; 32 leaves room.
const CELL_CAP: usize = 32;

/// [`fixed`] into a cell, for right-aligning.
fn fixed_cell(v: u64, scale: u64) -> String<CELL_CAP> {
    let mut s = String::new();
    // Cannot fail: at most 24 bytes (see CELL_CAP).
    let _ = fixed(&mut s, v, scale);
    s
}

/// An integer into a cell, for right-aligning.
fn int_cell(v: u64) -> String<CELL_CAP> {
    let mut s = String::new();
    let _ = uwrite!(s, "{}", v);
    s
}

/// Writes `s` right-aligned in `width` characters (never cut).
fn right<W: uWrite>(w: &mut W, width: usize, s: &str) -> Result<(), W::Error> {
    for _ in s.chars().count()..width {
        w.write_char(' ')?;
    }
    w.write_str(s)
}

/// Writes `s` left-aligned in `width` characters (never cut).
fn left<W: uWrite>(w: &mut W, width: usize, s: &str) -> Result<(), W::Error> {
    w.write_str(s)?;
    for _ in s.chars().count()..width {
        w.write_char(' ')?;
    }
    Ok(())
}

/// Formats `a` as one actions-file row, with its newline, into `out`
/// (cleared first): `id,start,wall_s,user_s,sys_s,cores,max_rss_mb,signal,exit`
/// then, when it has them, the counters `majflt,minflt,nvcsw,nivcsw,inblock,oublock`.
///
/// The id is sanitized again (so a hand-built [`Action`] cannot break the
/// CSV) and written unquoted, `?` when empty; seconds have 3 decimals
/// (`12.345`); cores ([`Action::cores_centi`]) have 2 (`1.23`);
/// max_rss_mb is whole MiB, rounded down; signal and exit are empty when
/// absent. Append the result with one `write(2)` so concurrent writers'
/// rows never interleave. The counters are integers, inblock and oublock
/// in 512-byte blocks.
///
/// # Errors
/// [`BufferFull`] only if `out` is too small, which [`ROW_CAP`] rules out.
///
/// ```
/// use headroom::report::actions::{format_row, Action};
/// use headroom::followed::rusage::Counts;
/// use headroom::tick::clock::Iso;
/// let a = Action { id: "gcc x.c".try_into().unwrap(), start: Iso::from_epoch(1796000585),
///     wall_ms: 12345, user_ms: 11000, sys_ms: 1000, max_rss_kib: 210_000,
///     signal: None, exit: Some(0), counts: Some(Counts::from_values([2, 51000, 40, 9, 16, 800])) };
/// let mut out = heapless::Vec::new();
/// format_row(&a, &mut out).unwrap();
/// assert_eq!(out.as_slice(), b"gcc x.c,2026-11-30T01:03:05Z,12.345,11.000,1.000,0.97,205,,0,2,51000,40,9,16,800\n");
/// ```
pub fn format_row(a: &Action, out: &mut Vec<u8, ROW_CAP>) -> Result<(), BufferFull> {
    out.clear();
    let mut id = Id::new();
    sanitize_into(a.id.as_bytes(), ID_CAP, &mut id);
    let id = if id.is_empty() { "?" } else { id.as_str() };
    let mut sig = Signal::new();
    if let Some(s) = &a.signal {
        sanitize_into(s.as_bytes(), SIGNAL_CAP, &mut sig);
    }
    uwrite!(out, "{},{},", id, a.start.as_str()).map_err(|_| BufferFull)?;
    for ms in [a.wall_ms, a.user_ms, a.sys_ms] {
        fixed(out, ms, 1000).map_err(|_| BufferFull)?;
        out.push(b',').map_err(|_| BufferFull)?;
    }
    fixed(out, a.cores_centi(), 100).map_err(|_| BufferFull)?;
    uwrite!(out, ",{},{},", a.max_rss_kib / 1024, sig.as_str()).map_err(|_| BufferFull)?;
    if let Some(e) = a.exit {
        uwrite!(out, "{}", e).map_err(|_| BufferFull)?;
    }
    if let Some(c) = &a.counts {
        for v in c.values() {
            uwrite!(out, ",{}", v).map_err(|_| BufferFull)?;
        }
    }
    out.push(b'\n').map_err(|_| BufferFull)
}

/// Parses `<digits>[.<1..=max_decimals digits>]` into units of
/// 10^-`max_decimals` (`12.3` at 3 → 12300); `None` otherwise or on
/// overflow.
fn parse_fixed(b: &[u8], max_decimals: u32) -> Option<u64> {
    let (int, frac) = match b.iter().position(|&c| c == b'.') {
        Some(i) => (b.get(..i)?, Some(b.get(i + 1..)?)),
        None => (b, None),
    };
    let scale = 10u64.pow(max_decimals);
    let mut v = parse_u64(int)?.checked_mul(scale)?;
    if let Some(frac) = frac {
        let n = u32::try_from(frac.len()).ok()?;
        if n == 0 || n > max_decimals {
            return None;
        }
        let f = parse_u64(frac)?.checked_mul(10u64.pow(max_decimals - n))?;
        v = v.checked_add(f)?;
    }
    Some(v)
}

/// Parses a signal field: empty → `Some(None)`; a name of 1–8 bytes of
/// `A-Z 0-9 + -` (an optional `SIG` prefix is dropped) → `Some(Some(_))`;
/// anything else → `None` (malformed).
fn parse_signal(b: &[u8]) -> Option<Option<Signal>> {
    if b.is_empty() {
        return Some(None);
    }
    let b = b.strip_prefix(b"SIG").unwrap_or(b);
    let ok = !b.is_empty()
        && b.iter()
            .all(|&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'+' || c == b'-');
    if !ok {
        return None;
    }
    let s = core::str::from_utf8(b).ok()?;
    let mut sig = Signal::new();
    sig.push_str(s).ok()?;
    Some(Some(sig))
}

/// Builds an action from a record's fields; `None` when malformed (not
/// exactly [`COLUMNS`] or [`OLD_COLUMNS`] fields, a bad number, time or
/// signal). The cores column is checked for shape only: cores are
/// recomputed from the times.
fn action_from(fields: &[&[u8]]) -> Option<Action> {
    let (old, more) = fields.split_at_checked(OLD_COLUMNS)?;
    let [id, start, wall, user, sys, cores, rss, signal, exit] = old else {
        return None;
    };
    let counts = match more {
        [] => None,
        [a, b, c, d, e, f] => {
            let mut v = [0u64; 6];
            for (slot, field) in v.iter_mut().zip([a, b, c, d, e, f]) {
                *slot = parse_u64(trim(field))?;
            }
            Some(Counts::from_values(v))
        }
        _ => return None,
    };
    let mut a = Action {
        id: Id::new(),
        start: Iso::parse(trim(start))?,
        wall_ms: parse_fixed(trim(wall), 3)?,
        user_ms: parse_fixed(trim(user), 3)?,
        sys_ms: parse_fixed(trim(sys), 3)?,
        max_rss_kib: parse_u64(trim(rss))?.saturating_mul(1024),
        signal: parse_signal(trim(signal))?,
        exit: match trim(exit) {
            b"" => None,
            e => Some(i32::try_from(parse_i64(e)?).ok()?),
        },
        counts,
    };
    parse_fixed(trim(cores), 2)?;
    sanitize_into(id, ID_CAP, &mut a.id);
    Some(a)
}

/// Bytes of unquoted field data one record may hold: a row is at most
/// [`ROW_CAP`] bytes; 640 leaves room for hand-edited files. A longer
/// record is skipped as malformed.
pub const FIELD_BUF: usize = 640;

/// Fields one record may have before it is skipped as malformed: the 15
/// columns plus room, so that a row with a few extra fields is counted as
/// malformed rather than overflowing.
pub const MAX_FIELDS: usize = 24;

/// Why an actions file cannot be read at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionsError {
    /// The first record is a resources CSV header (`epoch,iso,…`): the
    /// file is a `record`/`run` CSV for `summarize`, not an actions file.
    ResourceCsv,
}

/// A streaming reader of actions files with fixed buffers (about 850
/// bytes whatever the file size).
///
/// Rows that do not parse (wrong field count, a bad number or time, a
/// record longer than [`FIELD_BUF`], a final record cut short with no
/// newline) are counted in [`ActionRows::skipped`] and never stop the
/// reading. Header lines (first field `id`, second `start`) are skipped
/// wherever they appear and not counted: each concurrent writer may have
/// written one. Empty lines are ignored.
pub struct ActionRows {
    rdr: Reader,
    out: [u8; FIELD_BUF],
    out_len: usize,
    ends: [usize; MAX_FIELDS],
    ends_len: usize,
    overflow: bool,
    last_byte: u8,
    seen_record: bool,
    /// Well-formed actions delivered so far.
    pub rows: u64,
    /// Records skipped as malformed.
    pub skipped: u64,
}

impl Default for ActionRows {
    fn default() -> Self {
        Self::new()
    }
}

impl ActionRows {
    /// A reader at the start of a file.
    pub fn new() -> ActionRows {
        ActionRows {
            rdr: Reader::new(),
            out: [0; FIELD_BUF],
            out_len: 0,
            ends: [0; MAX_FIELDS],
            ends_len: 0,
            overflow: false,
            last_byte: b'\n',
            seen_record: false,
            rows: 0,
            skipped: 0,
        }
    }

    /// Feeds the next chunk of the file (of any size); `on` is called for
    /// every well-formed action. Feed an empty chunk at end of file: a
    /// final record without its newline is then counted as cut short.
    ///
    /// # Errors
    /// [`ActionsError::ResourceCsv`] when the first record is a resources
    /// CSV's header.
    pub fn feed(
        &mut self,
        mut chunk: &[u8],
        on: &mut impl FnMut(&Action),
    ) -> Result<(), ActionsError> {
        let at_eof = chunk.is_empty();
        if let Some(&b) = chunk.last() {
            self.last_byte = b;
        }
        loop {
            let (res, nin, nout, nend) = self.rdr.read_record(
                chunk,
                self.out.get_mut(self.out_len..).unwrap_or_default(),
                self.ends.get_mut(self.ends_len..).unwrap_or_default(),
            );
            chunk = chunk.get(nin..).unwrap_or_default();
            self.out_len += nout;
            self.ends_len += nend;
            match res {
                ReadRecordResult::InputEmpty => {
                    if chunk.is_empty() && !at_eof {
                        return Ok(());
                    }
                }
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {
                    // A resources CSV header has 25 fields: too many to
                    // hold, but its first one is already complete.
                    if !self.seen_record && !self.overflow && self.first_is_epoch() {
                        return Err(ActionsError::ResourceCsv);
                    }
                    // Keep consuming the record, discarding its data.
                    self.overflow = true;
                    self.out_len = 0;
                    self.ends_len = 0;
                }
                ReadRecordResult::Record => {
                    // Writers end every row with a newline: a last record
                    // without one was cut short.
                    let cut = at_eof && self.last_byte != b'\n';
                    let r = self.record(cut, on);
                    self.out_len = 0;
                    self.ends_len = 0;
                    self.overflow = false;
                    r?;
                }
                ReadRecordResult::End => return Ok(()),
            }
        }
    }

    /// True when the record being read starts with a complete `epoch` field.
    fn first_is_epoch(&self) -> bool {
        let first = match self.ends.get(..self.ends_len) {
            Some([end, ..]) => self.out.get(..*end).unwrap_or_default(),
            _ => return false,
        };
        trim(first) == b"epoch"
    }

    /// Handles one complete record held in `out`/`ends`.
    fn record(&mut self, cut: bool, on: &mut impl FnMut(&Action)) -> Result<(), ActionsError> {
        let first = !self.seen_record;
        self.seen_record = true;
        if self.overflow {
            self.skipped += 1;
            return Ok(());
        }
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        let mut start = 0;
        let ends = self.ends.get(..self.ends_len).unwrap_or_default();
        for (slot, &end) in fields.iter_mut().zip(ends) {
            *slot = self.out.get(start..end).unwrap_or_default();
            start = end;
        }
        let fields = fields.get(..ends.len()).unwrap_or_default();
        let name = |i: usize| fields.get(i).map(|f| trim(f));
        if name(0) == Some(b"id") && name(1) == Some(b"start") {
            return Ok(());
        }
        if first && self.first_is_epoch() {
            return Err(ActionsError::ResourceCsv);
        }
        match action_from(fields).filter(|_| !cut) {
            Some(a) => {
                self.rows += 1;
                on(&a);
            }
            None => self.skipped += 1,
        }
        Ok(())
    }
}

/// Number of wall-time buckets.
pub const BUCKETS: usize = 5;

/// Bucket labels as the table prints them.
pub const BUCKET_LABELS: [&str; BUCKETS] = ["0-5 s", "5-20 s", "20-60 s", "60-300 s", ">=300 s"];

/// Lower bound (inclusive) of each bucket, ms; each ends where the next
/// starts (exclusive), the last is open: exactly 5.000 s is in `5-20 s`.
pub const BUCKET_START_MS: [u64; BUCKETS] = [0, 5_000, 20_000, 60_000, 300_000];

/// Bins of the per-bucket cores histogram: one per hundredth of a core
/// from 0.00 to 40.95 cores. The p90 is exact to 0.01 core in that range;
/// above it one overflow bin keeps the count and the largest value seen,
/// which is what the p90 reports when it falls there. Each bin counts up
/// to 2^32 − 1 actions (saturating).
pub const CORE_BINS: usize = 4096;

/// Most actions the longest list holds (`--top` is clamped to it).
pub const TOP_CAP: usize = 100;

/// Signalled actions listed by id; later ones are only counted.
pub const SIGNAL_IDS: usize = 32;

/// The bucket of an action that ran `wall_ms` milliseconds.
pub fn bucket_of(wall_ms: u64) -> usize {
    BUCKET_START_MS
        .iter()
        .rposition(|&s| wall_ms >= s)
        .unwrap_or(0)
}

/// Accumulated figures of one wall-time bucket.
#[derive(Clone)]
struct Bucket {
    actions: u64,
    wall_ms: u64,
    cpu_ms: u64,
    cores_centi_sum: u64,
    max_rss_kib: u64,
    bins: [u32; CORE_BINS],
    over: u64,
    over_max_centi: u64,
}

impl Bucket {
    const EMPTY: Bucket = Bucket {
        actions: 0,
        wall_ms: 0,
        cpu_ms: 0,
        cores_centi_sum: 0,
        max_rss_kib: 0,
        bins: [0; CORE_BINS],
        over: 0,
        over_max_centi: 0,
    };

    /// Nearest-rank 90th percentile of cores, hundredths: the smallest
    /// value that at least 90 % of the bucket's actions do not exceed.
    fn p90_centi(&self) -> u64 {
        let rank = u128::from(self.actions).saturating_mul(9).div_ceil(10);
        let mut seen: u128 = 0;
        for (centi, &n) in (0u64..).zip(self.bins.iter()) {
            seen += u128::from(n);
            if seen >= rank && seen > 0 {
                return centi;
            }
        }
        self.over_max_centi
    }
}

/// The figures of one wall-time bucket, as the table shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketStats {
    /// Actions in the bucket.
    pub actions: u64,
    /// Their total wall time, ms (saturating).
    pub wall_ms: u64,
    /// Their total user + system time, ms (saturating).
    pub cpu_ms: u64,
    /// Mean of their [`Action::cores_centi`], hundredths of a core,
    /// rounded half up; 0 when empty.
    pub avg_cores_centi: u64,
    /// Nearest-rank p90 of their cores, hundredths (see [`CORE_BINS`] for
    /// the resolution); 0 when empty.
    pub p90_cores_centi: u64,
    /// Largest `max_rss_kib` among them, KiB.
    pub max_rss_kib: u64,
}

/// The `headroom actions` accumulator: sees each [`Action`] once and keeps
/// fixed-size figures.
///
/// Its size is a constant, `size_of::<Table>()` (about 100 KiB, mostly the
/// 5 × 4096 histogram bins), whatever the number of actions: nothing grows
/// but counters, and the longest list and signal list are bounded
/// ([`TOP_CAP`], [`SIGNAL_IDS`]). Keep it off small thread stacks.
pub struct Table {
    buckets: [Bucket; BUCKETS],
    actions: u64,
    wall_ms: u64,
    cpu_ms: u64,
    signalled: u64,
    signal_ids: Vec<(Id, Signal), SIGNAL_IDS>,
    top: usize,
    min_wall_ms: u64,
    longest: Vec<Action, TOP_CAP>,
    /// Malformed rows the reader skipped ([`ActionRows::skipped`]); the
    /// caller sets it before rendering; shown when non-zero.
    pub skipped_rows: u64,
}

impl Table {
    /// An empty table listing the `top` longest actions (clamped to
    /// [`TOP_CAP`]) among those with a wall time of at least `min_wall_ms`.
    pub fn new(top: usize, min_wall_ms: u64) -> Table {
        Table {
            buckets: [Bucket::EMPTY; BUCKETS],
            actions: 0,
            wall_ms: 0,
            cpu_ms: 0,
            signalled: 0,
            signal_ids: Vec::new(),
            top: top.min(TOP_CAP),
            min_wall_ms,
            longest: Vec::new(),
            skipped_rows: 0,
        }
    }

    /// Counts one action.
    pub fn observe(&mut self, a: &Action) {
        let cores = a.cores_centi();
        let cpu = a.cpu_ms();
        self.actions = self.actions.saturating_add(1);
        self.wall_ms = self.wall_ms.saturating_add(a.wall_ms);
        self.cpu_ms = self.cpu_ms.saturating_add(cpu);

        if let Some(b) = self.buckets.get_mut(bucket_of(a.wall_ms)) {
            b.actions = b.actions.saturating_add(1);
            b.wall_ms = b.wall_ms.saturating_add(a.wall_ms);
            b.cpu_ms = b.cpu_ms.saturating_add(cpu);
            b.cores_centi_sum = b.cores_centi_sum.saturating_add(cores);
            b.max_rss_kib = b.max_rss_kib.max(a.max_rss_kib);
            match usize::try_from(cores).ok().and_then(|i| b.bins.get_mut(i)) {
                Some(n) => *n = n.saturating_add(1),
                None => {
                    b.over = b.over.saturating_add(1);
                    b.over_max_centi = b.over_max_centi.max(cores);
                }
            }
        }

        if let Some(sig) = &a.signal {
            self.signalled = self.signalled.saturating_add(1);
            // Full list: the action is only counted.
            let _ = self.signal_ids.push((a.id.clone(), sig.clone()));
        }

        if self.top > 0 && a.wall_ms >= self.min_wall_ms {
            // After every action at least as long: ties keep file order.
            let at = self
                .longest
                .iter()
                .position(|l| l.wall_ms < a.wall_ms)
                .unwrap_or(self.longest.len());
            if at < self.top {
                if self.longest.len() >= self.top {
                    self.longest.pop();
                }
                // Cannot fail: a slot was freed above when needed.
                let _ = self.longest.insert(at, a.clone());
            }
        }
    }

    /// Actions counted.
    pub fn actions(&self) -> u64 {
        self.actions
    }

    /// Total wall time of all actions, ms (saturating).
    pub fn wall_ms(&self) -> u64 {
        self.wall_ms
    }

    /// Total user + system time of all actions, ms (saturating).
    pub fn cpu_ms(&self) -> u64 {
        self.cpu_ms
    }

    /// Average cores while running: total CPU / total wall, hundredths,
    /// rounded half up; 0 when no wall time.
    pub fn avg_cores_centi(&self) -> u64 {
        div_round(
            u128::from(self.cpu_ms).saturating_mul(100),
            u128::from(self.wall_ms),
        )
    }

    /// The figures of bucket `i` (index into [`BUCKET_LABELS`]); `None`
    /// past the last bucket.
    pub fn bucket(&self, i: usize) -> Option<BucketStats> {
        let b = self.buckets.get(i)?;
        Some(BucketStats {
            actions: b.actions,
            wall_ms: b.wall_ms,
            cpu_ms: b.cpu_ms,
            avg_cores_centi: div_round(u128::from(b.cores_centi_sum), u128::from(b.actions)),
            p90_cores_centi: if b.actions == 0 { 0 } else { b.p90_centi() },
            max_rss_kib: b.max_rss_kib,
        })
    }

    /// Actions that ended on a signal.
    pub fn signalled(&self) -> u64 {
        self.signalled
    }

    /// The first [`SIGNAL_IDS`] signalled actions: (id, signal name).
    pub fn signal_ids(&self) -> &[(Id, Signal)] {
        &self.signal_ids
    }

    /// The longest actions with wall ≥ `min_wall_ms`, longest first (ties
    /// in file order), at most `top`.
    pub fn longest(&self) -> &[Action] {
        &self.longest
    }

    /// How many longest actions are listed at most (clamped to [`TOP_CAP`]).
    pub fn top(&self) -> usize {
        self.top
    }

    /// The least wall time of a listed longest action, ms.
    pub fn min_wall_ms(&self) -> u64 {
        self.min_wall_ms
    }

    /// Share of the total wall time, tenths of a percent, rounded half up.
    pub fn pct_tenths(&self, wall_ms: u64) -> u64 {
        div_round(
            u128::from(wall_ms).saturating_mul(1000),
            u128::from(self.wall_ms),
        )
    }

    /// Writes the rest of the table's first line after its count of
    /// actions, with its newline: ` | wall X h | cpu Y h | average Z cores
    /// while running`. The totals are in hours, minutes or seconds,
    /// whichever keeps the larger of them at 1 or more (one unit for both),
    /// with 2 decimals; cores with 2; all rounded half up. `actions
    /// --remote` writes its own count before it.
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn render_rates<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let (unit_ms, unit) = time_unit(self.wall_ms.max(self.cpu_ms));
        uwrite!(w, " | wall ")?;
        fixed(w, div_round(u128::from(self.wall_ms) * 100, unit_ms), 100)?;
        uwrite!(w, " {} | cpu ", unit)?;
        fixed(w, div_round(u128::from(self.cpu_ms) * 100, unit_ms), 100)?;
        uwrite!(w, " {} | average ", unit)?;
        fixed(w, self.avg_cores_centi(), 100)?;
        uwrite!(w, " cores while running\n")
    }

    /// Writes the wall-time buckets: a blank line, the heading and one line
    /// per bucket that has actions (nothing when no action was counted).
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn render_buckets<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        if self.actions > 0 {
            uwrite!(
                w,
                "\n   wall time  actions  % of wall  avg cores  p90 cores  max RSS GiB\n"
            )?;
            for (i, label) in BUCKET_LABELS.iter().enumerate() {
                let Some(b) = self.bucket(i).filter(|b| b.actions > 0) else {
                    continue;
                };
                right(w, 12, label)?;
                right(w, 9, &int_cell(b.actions))?;
                right(w, 11, &fixed_cell(self.pct_tenths(b.wall_ms), 10))?;
                right(w, 11, &fixed_cell(b.avg_cores_centi, 100))?;
                right(w, 11, &fixed_cell(b.p90_cores_centi, 100))?;
                right(w, 13, &fixed_cell(gib_centi(b.max_rss_kib), 100))?;
                w.write_char('\n')?;
            }
        }
        Ok(())
    }

    /// Renders the table as text:
    ///
    /// ```text
    /// 20 actions | wall 0.45 h | cpu 1.84 h | average 4.08 cores while running
    ///
    ///    wall time  actions  % of wall  avg cores  p90 cores  max RSS GiB
    ///        0-5 s       78        2.1       0.92       0.98         0.07
    ///
    /// actions that ended on a signal: 1
    ///   cc1plus big.cpp (KILL)
    ///
    /// longest 10:
    /// id               wall s   cores  RSS GiB  signal
    /// cc1plus big.cpp   254.1    5.65     1.33  KILL
    /// ```
    ///
    /// A `skipped N malformed rows` line follows the first when rows were
    /// skipped; only buckets with actions are shown; the signal list shows
    /// the first [`SIGNAL_IDS`] then `and N more`; the longest heading
    /// names `--min-wall` when it is set. The first line's totals are in
    /// hours, minutes or seconds, whichever keeps the larger of them at
    /// 1 or more (one unit for both). Those totals, cores and GiB have 2
    /// decimals, % and wall s 1, all rounded half up.
    ///
    /// # Errors
    /// Whatever `out` returns.
    pub fn render<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        let noun = if self.actions == 1 {
            "action"
        } else {
            "actions"
        };
        uwrite!(w, "{} {}", self.actions, noun)?;
        self.render_rates(w)?;
        if self.skipped_rows > 0 {
            let rows = if self.skipped_rows == 1 {
                "row"
            } else {
                "rows"
            };
            uwrite!(w, "skipped {} malformed {}\n", self.skipped_rows, rows)?;
        }
        self.render_buckets(w)?;

        uwrite!(w, "\nactions that ended on a signal: {}\n", self.signalled)?;
        for (id, sig) in &self.signal_ids {
            uwrite!(w, "  {} ({})\n", id.as_str(), sig.as_str())?;
        }
        let listed = u64::try_from(self.signal_ids.len()).unwrap_or(u64::MAX);
        if self.signalled > listed {
            uwrite!(w, "  and {} more\n", self.signalled - listed)?;
        }

        if !self.longest.is_empty() {
            uwrite!(w, "\nlongest {}", self.longest.len())?;
            if self.min_wall_ms > 0 {
                uwrite!(w, " with wall >= ")?;
                seconds(w, self.min_wall_ms)?;
                uwrite!(w, " s")?;
            }
            uwrite!(w, ":\n")?;
            let id_w = self
                .longest
                .iter()
                .map(|a| a.id.chars().count())
                .fold(2, usize::max);
            left(w, id_w, "id")?;
            uwrite!(w, "    wall s   cores  RSS GiB  signal\n")?;
            for a in &self.longest {
                left(w, id_w, &a.id)?;
                right(
                    w,
                    10,
                    &fixed_cell(div_round(u128::from(a.wall_ms), 100), 10),
                )?;
                right(w, 8, &fixed_cell(a.cores_centi(), 100))?;
                right(w, 9, &fixed_cell(gib_centi(a.max_rss_kib), 100))?;
                if let Some(s) = &a.signal {
                    uwrite!(w, "  {}", s.as_str())?;
                }
                w.write_char('\n')?;
            }
        }
        Ok(())
    }
}

/// The unit of the first line's wall and cpu totals, for the larger of
/// them (`ms`): hours from one hour up, else minutes from one minute, else
/// seconds, so a short build does not read `0.00 h`. Returns the unit in
/// ms and its label.
fn time_unit(ms: u64) -> (u128, &'static str) {
    if ms >= 3_600_000 {
        (3_600_000, "h")
    } else if ms >= 60_000 {
        (60_000, "min")
    } else {
        (1000, "s")
    }
}

#[cfg(test)]
#[path = "actions_tests.rs"]
mod tests;
