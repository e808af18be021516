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
mod tests {
    //! Unit tests of `report::actions` (src/report/actions.rs).

    extern crate std;
    use super::*;
    use std::string::String as StdString;
    use std::vec::Vec as StdVec;

    const CRAFTED: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/actions-crafted.csv"
    ));
    const CRAFTED_TXT: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/actions-crafted.txt"
    ));
    const CRAFTED_JSON: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/actions-crafted.json"
    ));

    fn act(id: &str, wall_ms: u64, user_ms: u64, sys_ms: u64) -> Action {
        let mut a = Action {
            id: Id::new(),
            start: Iso::from_epoch(1_796_000_585),
            wall_ms,
            user_ms,
            sys_ms,
            max_rss_kib: 0,
            signal: None,
            exit: Some(0),
            counts: None,
        };
        a.id.push_str(id).unwrap();
        a
    }

    fn read_all(data: &[u8], chunk: usize) -> (Result<(), ActionsError>, StdVec<Action>, u64) {
        let mut r = ActionRows::new();
        let mut got = StdVec::new();
        for c in data.chunks(chunk.max(1)) {
            if let Err(e) = r.feed(c, &mut |a| got.push(a.clone())) {
                return (Err(e), got, r.skipped);
            }
        }
        let res = r.feed(&[], &mut |a| got.push(a.clone()));
        assert_eq!(r.rows, got.len() as u64);
        (res, got, r.skipped)
    }

    fn table_of(data: &[u8], top: usize, min_wall_ms: u64) -> Table {
        let mut t = Table::new(top, min_wall_ms);
        let (res, rows, skipped) = read_all(data, 4096);
        assert_eq!(res, Ok(()));
        for a in &rows {
            t.observe(a);
        }
        t.skipped_rows = skipped;
        t
    }

    fn text(t: &Table) -> StdString {
        let mut s: String<8192> = String::new();
        t.render(&mut s).unwrap();
        StdString::from(s.as_str())
    }

    fn json(t: &Table) -> StdString {
        let mut s: String<16384> = String::new();
        t.render_json(&mut s).unwrap();
        StdString::from(s.as_str())
    }

    // Hand check of the 0-5 s bucket of actions-crafted.csv (11 actions):
    // cores (user+sys)/wall, rounded half up to 0.01:
    //   a.c 0.800/0.812 = 0.985 -> 0.99   b.c 1.200/1.250 -> 0.96
    //   c.c 4.900/4.999 = 0.980 -> 0.98   start.S 0.040/0.050 -> 0.80
    //   ld.lld 4.000/3.400 = 1.176 -> 1.18   d.c 0.390/0.400 = 0.975 -> 0.98
    //   e.c 1.950/2.000 = 0.975 -> 0.98   ar 0.100/0.120 = 0.833 -> 0.83
    //   f.c 2.950/3.000 = 0.983 -> 0.98   sh 0/0.010 -> 0.00
    //   g.c 4.200/4.100 = 1.024 -> 1.02
    // sum = 970 hundredths, avg 970/11 = 88.2 -> 0.88; sorted, the p90
    // (nearest rank ceil(0.9 * 11) = 10th) is 1.02; wall 20.141 s of
    // 1832.989 s = 1.099 % -> 1.1; max RSS 310 MiB = 0.303 GiB -> 0.30.
    #[test]
    fn crafted_file_renders_the_golden_text_and_json() {
        for chunk in [1, 3, 64, 100_000] {
            let (res, rows, skipped) = read_all(CRAFTED, chunk);
            assert_eq!(res, Ok(()));
            assert_eq!(rows.len(), 25, "chunk {chunk}");
            // The garbage line and the row cut at the end.
            assert_eq!(skipped, 2, "chunk {chunk}");
        }
        let t = table_of(CRAFTED, 5, 0);
        let b = t.bucket(0).unwrap();
        assert_eq!(
            (b.actions, b.wall_ms, b.avg_cores_centi, b.p90_cores_centi),
            (11, 20_141, 88, 102)
        );
        assert_eq!(b.max_rss_kib, 310 * 1024);
        assert_eq!(text(&t), CRAFTED_TXT);
        assert_eq!(json(&t), CRAFTED_JSON);
    }

    #[test]
    fn min_wall_and_top_limit_the_longest_list() {
        let t = table_of(CRAFTED, 100, 60_000);
        let ids: StdVec<&str> = t.longest().iter().map(|a| a.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "rustc librustc_driver.rs",
                "link firmware",
                "nvcc kernels/attn.cu",
                "c++ src/huge_tables.cpp",
                "rustc compiler/big.rs"
            ]
        );
        let s = text(&t);
        assert!(s.contains("\nlongest 5 with wall >= 60 s:\n"), "{s}");
        assert!(json(&t).contains("\"top\":100,\"min_wall_s\":60,"));
        // Top 0: no list at all.
        let t = table_of(CRAFTED, 0, 0);
        assert!(t.longest().is_empty());
        assert!(!text(&t).contains("longest"));
        // A --top above the cap is clamped.
        assert_eq!(Table::new(1000, 0).top, TOP_CAP);
    }

    #[test]
    fn longest_keeps_ties_in_file_order_and_evicts_the_shortest() {
        let mut t = Table::new(3, 0);
        for (id, wall) in [
            ("a", 10),
            ("b", 30),
            ("c", 20),
            ("d", 30),
            ("e", 5),
            ("f", 25),
        ] {
            t.observe(&act(id, wall, 0, 0));
        }
        let got: StdVec<(&str, u64)> = t
            .longest()
            .iter()
            .map(|a| (a.id.as_str(), a.wall_ms))
            .collect();
        assert_eq!(got, [("b", 30), ("d", 30), ("f", 25)]);
    }

    #[test]
    fn format_row_then_read_back_round_trips() {
        let mut a = act("cc1plus src/x,y \"z\".cpp", 12_345, 11_000, 1_001);
        a.max_rss_kib = 210 * 1024;
        a.signal = Some(Signal::try_from("KILL").unwrap());
        a.exit = None;
        let mut out = Vec::new();
        format_row(&a, &mut out).unwrap();
        assert_eq!(
            out.as_slice(),
            b"cc1plus src/x y z .cpp,2026-11-30T01:03:05Z,12.345,11.000,1.001,0.97,210,KILL,\n"
        );
        let (res, rows, skipped) = read_all(&out, 5);
        assert_eq!((res, skipped), (Ok(()), 0));
        let mut want = a.clone();
        want.id = Id::try_from("cc1plus src/x y z .cpp").unwrap();
        assert_eq!(rows, [want]);

        // Extremes: every field at its widest still fits ROW_CAP.
        let mut big = act("", u64::MAX, u64::MAX, u64::MAX);
        for _ in 0..ID_CAP {
            big.id.push('x').unwrap();
        }
        big.max_rss_kib = u64::MAX;
        big.signal = Some(Signal::try_from("VTALRM").unwrap());
        big.exit = Some(i32::MIN);
        big.counts = Some(crate::followed::rusage::Counts::from_values([u64::MAX; 6]));
        format_row(&big, &mut out).unwrap();
        let (res, rows, skipped) = read_all(&out, 64);
        assert_eq!((res, skipped), (Ok(()), 0));
        assert_eq!(rows[0].wall_ms, u64::MAX);
        assert_eq!(rows[0].exit, Some(i32::MIN));
        assert_eq!(rows[0].max_rss_kib, u64::MAX / 1024 * 1024);
        assert_eq!(rows[0].id, big.id);
        assert_eq!(rows[0].counts, big.counts);

        // An empty id is written as `?`; exit and wall 0.
        let e = act("", 0, 0, 0);
        format_row(&e, &mut out).unwrap();
        assert_eq!(
            out.as_slice(),
            b"?,2026-11-30T01:03:05Z,0.000,0.000,0.000,0.00,0,,0\n"
        );
    }

    #[test]
    fn header_text_matches_the_row_shape() {
        assert_eq!(HEADER.trim_end().split(',').count(), COLUMNS);
        let (res, rows, skipped) = read_all(HEADER.as_bytes(), 7);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
        // Header only, without its newline: still not a malformed row.
        let (res, rows, skipped) = read_all(HEADER.trim_end().as_bytes(), 7);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
        let (res, rows, skipped) = read_all(b"", 7);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
    }

    #[test]
    fn malformed_rows_are_counted_never_fatal() {
        let good = "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n";
        let bad = [
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,extra\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,\n",
            "cc x.c,2026-11-30 01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.0000,0.500,0.500,1.00,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.,0.500,0.500,1.00,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,-1,0.500,0.500,1.00,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,99999999999999999999,0,0,0,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,x,10,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10.5,,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,kill,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,VERYLONGSIG,0\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,2147483648\n",
            // Counters: all six or none, each a non-negative integer.
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5,6,7\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,-4,5,6\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4,5,\n",
            "cc x.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0,1,2,3,4.5,5,6\n",
            "\x00\u{ff},,,\n",
            "id\n",
        ];
        let mut data = StdString::from(good);
        for b in bad {
            data.push_str(b);
        }
        let mut bytes = data.into_bytes();
        // A record longer than FIELD_BUF, and one with too many fields.
        bytes.extend_from_slice(&[b'x'; 3 * FIELD_BUF]);
        bytes.push(b'\n');
        bytes.extend_from_slice(&[b','; 100]);
        bytes.push(b'\n');
        bytes.extend_from_slice(good.as_bytes());
        for chunk in [1, 13, 4096] {
            let (res, rows, skipped) = read_all(&bytes, chunk);
            assert_eq!(res, Ok(()));
            assert_eq!(rows.len(), 2, "chunk {chunk}");
            assert_eq!(skipped, bad.len() as u64 + 2, "chunk {chunk}");
        }
    }

    /// A file begun before the counters existed keeps its old header and
    /// rows; the rows appended after it have them: both read, the old ones
    /// without counters (null in the JSON).
    #[test]
    fn rows_before_and_after_the_counters_read_in_one_file() {
        let data = b"id,start,wall_s,user_s,sys_s,cores,max_rss_mb,signal,exit\n\
        old.c,2026-11-30T01:00:00Z,1.000,0.500,0.500,1.00,10,,0\n\
        new.c,2026-11-30T01:00:01Z,2.000,1.500,0.500,1.00,20,,0,7,8000, 9 ,10,11,12\n";
        let (res, rows, skipped) = read_all(data, 5);
        assert_eq!((res, skipped), (Ok(()), 0));
        assert_eq!(rows[0].counts, None);
        let c = rows[1].counts.unwrap();
        assert_eq!(c.values(), [7, 8000, 9, 10, 11, 12]);
        assert_eq!((c.majflt, c.minflt, c.nvcsw), (7, 8000, 9));
        assert_eq!((c.nivcsw, c.inblock, c.oublock), (10, 11, 12));
        let mut out = Vec::new();
        format_row(&rows[1], &mut out).unwrap();
        assert!(out.ends_with(b",0,7,8000,9,10,11,12\n"));
        let mut t = Table::new(5, 0);
        for a in &rows {
            t.observe(a);
        }
        let j = json(&t);
        assert!(j.contains("\"exit\":0,\"majflt\":7,\"minflt\":8000,\"nvcsw\":9,\"nivcsw\":10,\"inblock\":11,\"oublock\":12}"), "{j}");
        assert!(j.contains("\"exit\":0,\"majflt\":null,\"minflt\":null,\"nvcsw\":null,\"nivcsw\":null,\"inblock\":null,\"oublock\":null}"), "{j}");
    }

    #[test]
    fn tolerant_forms_are_read() {
        // Fewer decimals, SIG prefix, CRLF, quoted id, spaces around numbers,
        // a numeric (realtime) signal and a negative exit.
        let data = b"\"cc, quoted.c\",2026-11-30T01:00:00Z,2, 1.5 ,0.25,0.9,7,SIGTERM,\r\n\
                     x,2026-11-30T01:00:00Z,2.5,0,0,0,0,34,-1\n";
        let (res, rows, skipped) = read_all(data, 3);
        assert_eq!((res, skipped), (Ok(()), 0));
        assert_eq!(rows[0].id.as_str(), "cc quoted.c");
        assert_eq!(
            (rows[0].wall_ms, rows[0].user_ms, rows[0].sys_ms),
            (2000, 1500, 250)
        );
        assert_eq!(rows[0].max_rss_kib, 7 * 1024);
        assert_eq!(rows[0].signal.as_deref(), Some("TERM"));
        assert_eq!(rows[0].exit, None);
        assert_eq!(rows[1].wall_ms, 2500);
        assert_eq!(rows[1].signal.as_deref(), Some("34"));
        assert_eq!(rows[1].exit, Some(-1));
    }

    #[test]
    fn an_id_named_id_is_a_row_not_a_header() {
        // The coreutils `id` command, wrapped.
        let data = b"id,2026-11-30T01:00:00Z,0.002,0.001,0.001,1.00,2,,0\n";
        let (res, rows, skipped) = read_all(data, 8);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 1, 0));
        assert_eq!(rows[0].id.as_str(), "id");
    }

    #[test]
    fn a_resources_csv_is_an_error() {
        let (res, rows, _) = read_all(crate::tick::row::columns::HEADER_FULL.as_bytes(), 16);
        assert_eq!((res, rows.len()), (Err(ActionsError::ResourceCsv), 0));
        // Only as the first record: later it is just a malformed row.
        let mut data = StdVec::from(HEADER.as_bytes());
        data.extend_from_slice(crate::tick::row::columns::HEADER_COMPAT.as_bytes());
        let (res, _, skipped) = read_all(&data, 16);
        assert_eq!((res, skipped), (Ok(()), 1));
    }

    #[test]
    fn cores_round_half_up_and_survive_extremes() {
        assert_eq!(act("", 0, 5, 5).cores_centi(), 0);
        assert_eq!(act("", 2000, 1950, 0).cores_centi(), 98); // 97.5
        assert_eq!(act("", 3000, 1000, 0).cores_centi(), 33); // 33.33
        assert_eq!(act("", 3000, 2000, 0).cores_centi(), 67); // 66.67
        assert_eq!(act("", 1, u64::MAX, u64::MAX).cores_centi(), u64::MAX);
        assert_eq!(act("", u64::MAX, u64::MAX, 0).cores_centi(), 100);
    }

    #[test]
    fn bucket_boundaries() {
        let cases = [
            (0, 0),
            (4_999, 0),
            (5_000, 1),
            (19_999, 1),
            (20_000, 2),
            (59_999, 2),
            (60_000, 3),
            (299_999, 3),
            (300_000, 4),
            (u64::MAX, 4),
        ];
        for (ms, b) in cases {
            assert_eq!(bucket_of(ms), b, "{ms} ms");
        }
        let mut t = Table::new(0, 0);
        t.observe(&act("five", 5_000, 5_000, 0));
        assert_eq!(t.bucket(0).unwrap().actions, 0);
        assert_eq!(t.bucket(1).unwrap().actions, 1);
        assert_eq!(t.bucket(BUCKETS), None);
    }

    fn with_cores(t: &mut Table, wall_ms: u64, cores_centi: u64) {
        // cpu = cores × wall exactly when wall is a multiple of 100 ms.
        t.observe(&act("x", wall_ms, cores_centi * wall_ms / 100, 0));
    }

    #[test]
    fn p90_on_known_distributions() {
        // 1..=100 hundredths: the 90th value is 0.90.
        let mut t = Table::new(0, 0);
        for c in 1..=100 {
            with_cores(&mut t, 1_000, c);
        }
        assert_eq!(t.bucket(0).unwrap().p90_cores_centi, 90);
        assert_eq!(t.bucket(0).unwrap().avg_cores_centi, 51); // 50.5 half up

        // Ten actions, nine at 1.00 and one at 8.00: p90 is 1.00.
        let mut t = Table::new(0, 0);
        for _ in 0..9 {
            with_cores(&mut t, 10_000, 100);
        }
        with_cores(&mut t, 10_000, 800);
        assert_eq!(t.bucket(1).unwrap().p90_cores_centi, 100);
        // An eleventh at 8.00: ceil(9.9) = 10th value is now 8.00.
        with_cores(&mut t, 10_000, 800);
        assert_eq!(t.bucket(1).unwrap().p90_cores_centi, 800);

        // One action: its own value, including 0.
        let mut t = Table::new(0, 0);
        with_cores(&mut t, 30_000, 0);
        assert_eq!(t.bucket(2).unwrap().p90_cores_centi, 0);

        // Above the histogram: the overflow bin reports the largest seen.
        let mut t = Table::new(0, 0);
        with_cores(&mut t, 100_000, 100);
        for c in [5_000, 9_600, 6_400] {
            with_cores(&mut t, 100_000, c);
        }
        assert_eq!(t.bucket(3).unwrap().p90_cores_centi, 9_600);
        // The last in-range bin is exact.
        let mut t = Table::new(0, 0);
        with_cores(&mut t, 400_000, CORE_BINS as u64 - 1);
        assert_eq!(t.bucket(4).unwrap().p90_cores_centi, 4095);
    }

    #[test]
    fn signal_list_is_bounded_and_counts_the_rest() {
        let mut t = Table::new(0, 0);
        for i in 0..40u32 {
            let mut a = act("", 100, 0, 0);
            ufmt::uwrite!(a.id, "job{}", i).unwrap();
            a.signal = Some(Signal::try_from(signal_name(9).unwrap()).unwrap());
            t.observe(&a);
        }
        assert_eq!(t.signalled(), 40);
        assert_eq!(t.signal_ids().len(), SIGNAL_IDS);
        let s = text(&t);
        assert!(s.contains("actions that ended on a signal: 40\n  job0 (KILL)\n"));
        assert!(s.contains("  job31 (KILL)\n  and 8 more\n"), "{s}");
        assert!(json(&t).contains("\"more\":8}"));
    }

    #[test]
    fn empty_table_renders() {
        let t = Table::new(10, 0);
        assert_eq!(
            text(&t),
            "0 actions | wall 0.00 s | cpu 0.00 s | average 0.00 cores while running\n\
             \nactions that ended on a signal: 0\n"
        );
        let j = json(&t);
        assert!(j.starts_with("{\"actions\":0,\"skipped_rows\":0,\"wall_s\":0.000,"));
        assert!(j.contains("\"avg_cores\":null,\"p90_cores\":null"));
        assert!(j.ends_with("\"actions\":[]}}\n"));
    }

    #[test]
    fn from_usage_maps_the_end_and_round_trips() {
        use crate::followed::rusage::{End, Usage};
        let mut u = Usage {
            wall_ms: 812_700,
            user_ms: 4_900_000,
            sys_ms: 120_300,
            max_rss_kib: 7400 * 1024,
            counts: crate::followed::rusage::Counts::from_values([1, 2, 3, 4, 5, 6]),
            end: End::Exited(0),
        };
        let id = Id::try_from("rustc librustc_driver.rs").unwrap();
        let a = Action::from_usage(id.clone(), 1_796_000_585, &u);
        assert_eq!((a.signal.clone(), a.exit), (None, Some(0)));
        assert_eq!(a.cores_centi(), u.cores_centi());
        let mut out = Vec::new();
        format_row(&a, &mut out).unwrap();
        let (_, rows, _) = read_all(&out, 10);
        assert_eq!(rows, [a]);
        u.end = End::Signaled(11);
        let a = Action::from_usage(id.clone(), 0, &u);
        assert_eq!((a.signal.as_deref(), a.exit), (Some("SEGV"), None));
        u.end = End::Signaled(35);
        let a = Action::from_usage(id, 0, &u);
        assert_eq!(a.signal.as_deref(), Some("35"));
        format_row(&a, &mut out).unwrap();
        let (_, rows, skipped) = read_all(&out, 10);
        assert_eq!((rows.len(), skipped), (1, 0));
        assert_eq!(rows[0].signal.as_deref(), Some("35"));
    }

    #[test]
    fn signal_names_follow_signal7() {
        let want = [
            (1, "HUP"),
            (2, "INT"),
            (3, "QUIT"),
            (6, "ABRT"),
            (7, "BUS"),
            (9, "KILL"),
            (10, "USR1"),
            (11, "SEGV"),
            (13, "PIPE"),
            (15, "TERM"),
            (16, "STKFLT"),
            (17, "CHLD"),
            (19, "STOP"),
            (24, "XCPU"),
            (26, "VTALRM"),
            (29, "IO"),
            (30, "PWR"),
            (31, "SYS"),
        ];
        for (n, name) in want {
            assert_eq!(signal_name(n), Some(name), "{n}");
        }
        for n in [0, -1, 32, 34, 64, i32::MIN, i32::MAX] {
            assert_eq!(signal_name(n), None, "{n}");
        }
        // Every name fits a Signal.
        for n in 1..=31 {
            assert!(signal_name(n).unwrap().len() <= SIGNAL_CAP);
        }
    }

    #[test]
    fn action_ids() {
        let mut id = Id::new();
        let mut check = |label: Option<&str>, argv: &[&str], want: &str| {
            action_id(label, argv, &mut id);
            assert_eq!(id.as_str(), want, "{label:?} {argv:?}");
        };
        check(None, &["gcc", "-c", "a.c", "-o", "a.o"], "gcc a.c");
        // The last source argument, path kept.
        check(
            None,
            &["/usr/bin/cc", "x/one.c", "../two.cpp"],
            "cc ../two.cpp",
        );
        for ext in SOURCE_EXTS {
            let arg = std::format!("d/f.{ext}");
            check(None, &["cc", &arg], &std::format!("cc d/f.{ext}"));
        }
        // Not sources: other extensions, options, bare extensions, case.
        check(None, &["cc", "-o", "x.o", "lib.a", "-MF", "x.d"], "cc");
        check(
            None,
            &["cc", "-fsrc=y.c", ".c", "dir.c/", "X.CPP", "f.F"],
            "cc",
        );
        check(None, &["as", "start.S"], "as start.S");
        // Label wins, and is sanitized; a blank label is ignored.
        check(Some("stage 2, \"final\""), &["cc", "a.c"], "stage 2 final");
        check(Some("  "), &["cc", "a.c"], "cc a.c");
        // No argv, empty program.
        check(None, &[], "?");
        check(None, &["", "a.c"], "? a.c");
        check(None, &["dir/"], "?");
        // Sanitized: a comma in a path.
        check(None, &["cc", "we,ird \"dir\"/x.c"], "cc we ird dir /x.c");
        // A long path keeps its end.
        let long = std::format!("{}/deep/file.cpp", "a".repeat(300));
        check(None, &["c++", &long], &{
            let mut w = StdString::from("c++ ...");
            let keep = ID_CAP - 4 - 3;
            w.push_str(&long[long.len() - keep..]);
            w
        });
        action_id(None, &["c++", &long], &mut id);
        assert_eq!(id.len(), ID_CAP);
        // Multibyte: the cut lands on a character boundary.
        let wide = std::format!("{}.c", "é".repeat(100));
        action_id(None, &["cc", &wide], &mut id);
        assert!(id.starts_with("cc ...é"), "{id}");
        assert!(id.ends_with("é.c") && !id.contains('?'));
        // A huge program name leaves no room for the path.
        let prog = "p".repeat(200);
        action_id(None, &[&prog, "a.c"], &mut id);
        assert_eq!(id.as_str(), "p".repeat(ID_CAP));
    }

    // Table's size is a compile-time constant: nothing in it grows with
    // the number of rows. This feeds a million actions and checks every
    // figure against a naive computation that keeps them all.
    #[test]
    fn a_million_actions_stay_exact_in_fixed_memory() {
        const N: u64 = 1_000_000;
        const TOP: usize = 10;
        let size_before = core::mem::size_of::<Table>();
        assert!(size_before < 128 * 1024, "{size_before}");
        let mut t = std::boxed::Box::new(Table::new(TOP, 1_000));
        let mut all: StdVec<Action> = StdVec::with_capacity(N as usize);
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..N {
            // xorshift64: deterministic spread of walls and cores.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let wall = match x % 10 {
                0..=5 => x % 5_000,
                6 | 7 => 5_000 + x % 15_000,
                8 => 20_000 + x % 40_000,
                _ => 60_000 + x % 400_000,
            };
            let cpu = wall * ((x >> 20) % 900) / 100;
            let mut a = act("", wall, cpu - cpu / 4, cpu / 4);
            ufmt::uwrite!(a.id, "job{}", i).unwrap();
            a.max_rss_kib = (x >> 30) % 8_000_000;
            if x % 1000 == 7 {
                a.signal = Some(Signal::try_from("KILL").unwrap());
            }
            t.observe(&a);
            all.push(a);
        }
        assert_eq!(core::mem::size_of_val(&*t), size_before);
        assert_eq!(t.actions(), N);
        assert_eq!(t.wall_ms(), all.iter().map(|a| a.wall_ms).sum::<u64>());
        assert_eq!(t.cpu_ms(), all.iter().map(|a| a.cpu_ms()).sum::<u64>());
        for i in 0..BUCKETS {
            let mut cores: StdVec<u64> = all
                .iter()
                .filter(|a| bucket_of(a.wall_ms) == i)
                .map(|a| a.cores_centi())
                .collect();
            cores.sort_unstable();
            let n = cores.len() as u64;
            let b = t.bucket(i).unwrap();
            assert!(n > 10_000, "bucket {i} has {n}");
            assert_eq!(b.actions, n);
            let sum: u64 = cores.iter().sum();
            assert_eq!(b.avg_cores_centi, (sum * 2 + n) / (2 * n), "bucket {i}");
            let rank = (n * 9).div_ceil(10) as usize;
            assert_eq!(b.p90_cores_centi, cores[rank - 1], "bucket {i}");
            let rss = all
                .iter()
                .filter(|a| bucket_of(a.wall_ms) == i)
                .map(|a| a.max_rss_kib)
                .max()
                .unwrap();
            assert_eq!(b.max_rss_kib, rss);
        }
        let mut longest: StdVec<&Action> = all.iter().filter(|a| a.wall_ms >= 1_000).collect();
        longest.sort_by_key(|a| core::cmp::Reverse(a.wall_ms)); // stable: file order on ties
        let want: StdVec<&Action> = longest.into_iter().take(TOP).collect();
        let got: StdVec<&Action> = t.longest().iter().collect();
        assert_eq!(got, want);
        let sig: StdVec<&Action> = all.iter().filter(|a| a.signal.is_some()).collect();
        assert_eq!(t.signalled(), sig.len() as u64);
        for ((id, _), a) in t.signal_ids().iter().zip(&sig) {
            assert_eq!(id, &a.id);
        }
    }

    /// The first line's totals never read `0.00 h`: seconds below a minute,
    /// minutes below an hour, hours from there, one unit for both (the
    /// larger's).
    #[test]
    fn totals_are_in_seconds_minutes_or_hours() {
        let first_line = |acts: &[(u64, u64)]| {
            let mut t = Table::new(0, 0);
            for &(wall, user) in acts {
                t.observe(&act("a", wall, user, 0));
            }
            StdString::from(text(&t).lines().next().unwrap())
        };
        assert_eq!(
            first_line(&[(1_234, 900), (266, 5)]),
            "2 actions | wall 1.50 s | cpu 0.91 s | average 0.60 cores while running"
        );
        // cpu over a minute puts both in minutes.
        assert_eq!(
            first_line(&[(30_000, 90_000)]),
            "1 action | wall 0.50 min | cpu 1.50 min | average 3.00 cores while running"
        );
        assert_eq!(
            first_line(&[(5_400_000, 5_400_000)]),
            "1 action | wall 1.50 h | cpu 1.50 h | average 1.00 cores while running"
        );
        assert_eq!(
            first_line(&[]),
            "0 actions | wall 0.00 s | cpu 0.00 s | average 0.00 cores while running"
        );
    }
}
