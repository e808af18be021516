//! The peak of each job a pool remembers for each run id: under a key
//! naming a job's work (its output or source file, a crate), the largest
//! memory that job reached the last time it ran, so that the next run of
//! the same build weighs a torch TU as heavy and a small C file as light
//! from its start. Kept in `DIR/jobs-RUN` beside the run's one peak
//! (`peakfile`), merged under the pool lock at the end of a run
//! (`pool_dir::PoolDir::remember_job_peaks`).
//!
//! The file, text, whole lines, heaviest first:
//!
//! ```text
//! headroom-job-peaks 1
//! others_mb 0
//! 360 sqlite-1.o
//! 59 light-07.o
//! ```
//!
//! - the first line names the format and its version;
//! - `others_mb`: the largest peak of a job that was not kept (the table
//!   was full), MiB, 0 when none; other `word value` lines before the
//!   entries are ignored (a later version may add some);
//! - then one line per job: its peak in MiB (1 to
//!   [`PEAK_MAX_MB`]), a space, its key (the rest of the line: at most
//!   [`KEY_LEN`] bytes, no control byte, no `\`);
//! - at most [`KEYS_CAP`] jobs and [`JOB_PEAKS_FILE_CAP`] bytes.
//!
//! A line that does not parse is skipped and counted
//! ([`JobPeaks::skipped`]), never fatal: one bad line must not lose a
//! build's whole history; nor does a last line without its newline (a
//! torn copy). Heaviest first, so that a file cut short keeps the jobs
//! that matter most to the budget, and `head` shows them.
//!
//! It is written whole (a temporary file renamed over it) under the
//! pool's name and trust rules, as `peakfile` is.
//!
//! # References
//! openat(2) `O_NOFOLLOW`, rename(2).

use rustix::fd::BorrowedFd;

use crate::govern::jobserver::peakfile::{self, PEAK_MAX_MB, PeakError, PeakIssue};

/// The first line of the file.
pub const MAGIC: &str = "headroom-job-peaks 1";

/// The start of every per-job peak file's name.
pub const JOBS_PREFIX: &str = "jobs-";

/// Bytes of a key kept: a longer key keeps its last KEY_LEN bytes (the
/// file name end is the most specific part).
pub const KEY_LEN: usize = 96;

/// Jobs remembered per run id.
pub const KEYS_CAP: usize = 512;

/// The longest file read or written, bytes (64 KiB): [`KEYS_CAP`] lines
/// of the longest peak (8 digits), a space, the longest key and a newline
/// are 54 272 bytes, plus the two header lines.
pub const JOB_PEAKS_FILE_CAP: usize = 64 * 1024;

/// The buffer [`read`], [`render`] and
/// `pool_dir::PoolDir::remember_job_peaks` need, bytes.
pub const JOB_PEAKS_BUF: usize = JOB_PEAKS_FILE_CAP;

/// A job's key: at most [`KEY_LEN`] bytes, made by [`key`].
pub type Key = heapless::Vec<u8, KEY_LEN>;

/// The key for the bytes naming a job's work: their last [`KEY_LEN`]
/// bytes, each byte below 0x20, 0x7f and `\` replaced by `?`, so that a
/// key is one line of the file. Applying it to a key changes nothing.
pub fn key(bytes: &[u8]) -> Key {
    let tail = &bytes[bytes.len().saturating_sub(KEY_LEN)..];
    tail.iter()
        .map(|&b| {
            if b < 0x20 || b == 0x7f || b == b'\\' {
                b'?'
            } else {
                b
            }
        })
        .collect()
}

/// The file name for run id `run`: `jobs-RUN`; `None` when `run` is not
/// a safe name (the rule of `peakfile::name`).
pub fn name(run: &str) -> Option<heapless::String<72>> {
    peakfile::name_with(JOBS_PREFIX, run)
}

/// One remembered job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// What names its work ([`key`]).
    pub key: Key,
    /// The largest memory it reached, MiB, 1 to [`PEAK_MAX_MB`].
    pub peak_mb: u32,
}

/// The jobs remembered for one run id: at most [`KEYS_CAP`], kept sorted
/// by key, and the largest peak of those that did not fit. About 56 KiB:
/// made once (`new` is `const`), never per tick.
#[derive(Debug)]
pub struct JobPeaks {
    entries: heapless::Vec<Entry, KEYS_CAP>,
    others_mb: u32,
    skipped: u32,
}

impl Default for JobPeaks {
    fn default() -> JobPeaks {
        JobPeaks::new()
    }
}

impl JobPeaks {
    /// An empty table.
    pub const fn new() -> JobPeaks {
        JobPeaks {
            entries: heapless::Vec::new(),
            others_mb: 0,
            skipped: 0,
        }
    }

    /// Forgets every job, `others_mb` and the skipped lines.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.others_mb = 0;
        self.skipped = 0;
    }

    /// How many jobs are remembered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no job is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Index and peak (MiB) of `key` (already made by [`key`]; made again
    /// here, which changes nothing), if remembered.
    pub fn get(&self, key: &[u8]) -> Option<(usize, u64)> {
        let k = self::key(key);
        let i = self.find(&k).ok()?;
        Some((i, u64::from(self.entries[i].peak_mb)))
    }

    /// The entry at index `i` (from [`JobPeaks::get`]); indexes are stable
    /// until the next `set`.
    ///
    /// # Panics
    /// When `i` is not below [`JobPeaks::len`].
    pub fn entry(&self, i: usize) -> &Entry {
        &self.entries[i]
    }

    /// Remembers `peak_mb` (clamped 1..=[`PEAK_MAX_MB`]) for `key` (made
    /// by [`key`] here; an empty key is not kept), replacing what was
    /// there (a job's latest measured peak is its truth, down as well as
    /// up). When full: the lightest entry is dropped if it is lighter than
    /// the new one, else the new one is not kept; either way `others_mb`
    /// rises to the dropped peak.
    pub fn set(&mut self, key: &[u8], peak_mb: u64) {
        let k = self::key(key);
        if k.is_empty() {
            return;
        }
        // At most 2^24: fits.
        let mb = peak_mb.clamp(1, PEAK_MAX_MB) as u32;
        let at = match self.find(&k) {
            Ok(i) => {
                self.entries[i].peak_mb = mb;
                return;
            }
            Err(at) => at,
        };
        let at = if self.entries.is_full() {
            let Some((light, light_mb)) = self.lightest() else {
                return;
            };
            if light_mb >= mb {
                self.others_mb = self.others_mb.max(mb);
                return;
            }
            self.entries.remove(light);
            self.others_mb = self.others_mb.max(light_mb);
            if light < at { at - 1 } else { at }
        } else {
            at
        };
        // Not full here: cannot fail.
        let _ = self.entries.insert(
            at,
            Entry {
                key: k,
                peak_mb: mb,
            },
        );
    }

    /// The largest peak of a job that was not kept (the table was full),
    /// MiB; 0 when none was dropped.
    pub fn others_mb(&self) -> u64 {
        u64::from(self.others_mb)
    }

    /// Lines [`parse`] skipped into this table (malformed, or a torn last
    /// line); 0 for a table only `set`.
    pub fn skipped(&self) -> u32 {
        self.skipped
    }

    /// The `N` heaviest entries, heaviest first (ties: by key), into
    /// `out` (cleared first).
    pub fn heaviest<'a, const N: usize>(&'a self, out: &mut heapless::Vec<&'a Entry, N>) {
        out.clear();
        // Entries come by key: an equal peak goes after those already in.
        for e in &self.entries {
            let at = out.iter().position(|o| o.peak_mb < e.peak_mb);
            let at = at.unwrap_or(out.len());
            if at >= N {
                continue;
            }
            if out.is_full() {
                out.pop();
            }
            let _ = out.insert(at, e);
        }
    }

    /// Every entry of `newer` set into self (newer wins), `others_mb` the
    /// larger.
    pub fn merge(&mut self, newer: &JobPeaks) {
        for e in &newer.entries {
            self.set(&e.key, u64::from(e.peak_mb));
        }
        self.others_mb = self.others_mb.max(newer.others_mb);
    }

    /// Where `k` is, or where it would go.
    fn find(&self, k: &[u8]) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.key.as_slice().cmp(k))
    }

    /// The index and peak of the lightest entry (the first by key among
    /// equals).
    fn lightest(&self) -> Option<(usize, u32)> {
        let mut best: Option<(usize, u32)> = None;
        for (i, e) in self.entries.iter().enumerate() {
            if best.is_none_or(|(_, mb)| e.peak_mb < mb) {
                best = Some((i, e.peak_mb));
            }
        }
        best
    }
}

/// Why a file's bytes are not a per-job peak table at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobPeaksError {
    /// The first line is not [`MAGIC`].
    Magic,
    /// Longer than [`JOB_PEAKS_FILE_CAP`] (or, rendering, than the buffer
    /// given).
    TooLong,
}

impl From<JobPeaksError> for PeakError {
    fn from(e: JobPeaksError) -> PeakError {
        match e {
            JobPeaksError::Magic => PeakError::Magic,
            JobPeaksError::TooLong => PeakError::Shape,
        }
    }
}

/// The jobs in a file's `bytes`, into `into` (cleared first); a line that
/// does not parse is skipped and counted ([`JobPeaks::skipped`]), and so
/// is a last line without its newline. A key met twice keeps its last
/// peak; more than [`KEYS_CAP`] jobs are kept as [`JobPeaks::set`] keeps
/// them.
///
/// # Errors
/// [`JobPeaksError`]: no magic line, or too long.
pub fn parse(bytes: &[u8], into: &mut JobPeaks) -> Result<(), JobPeaksError> {
    into.clear();
    if bytes.len() > JOB_PEAKS_FILE_CAP {
        return Err(JobPeaksError::TooLong);
    }
    let mut lines = bytes.split_inclusive(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    if first.strip_suffix(b"\n").unwrap_or(first) != MAGIC.as_bytes() {
        return Err(JobPeaksError::Magic);
    }
    let mut header = true;
    for line in lines {
        let Some(line) = line.strip_suffix(b"\n") else {
            into.skipped += 1; // torn: the writer did not finish it
            continue;
        };
        header &= !line.first().is_some_and(u8::is_ascii_digit);
        let ok = if header {
            header_line(line, into)
        } else {
            entry_line(line, into)
        };
        into.skipped += u32::from(!ok);
    }
    Ok(())
}

/// A line before the entries: `others_mb N` taken, another `word value`
/// ignored; `false` when it is neither.
fn header_line(line: &[u8], into: &mut JobPeaks) -> bool {
    if let Some(v) = line.strip_prefix(b"others_mb ") {
        return match number(v) {
            Some(mb) if mb <= PEAK_MAX_MB => {
                // At most 2^24: fits.
                into.others_mb = into.others_mb.max(mb as u32);
                true
            }
            _ => false,
        };
    }
    let word = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_';
    match line.iter().position(|&b| b == b' ') {
        Some(sp) => sp > 0 && line[..sp].iter().all(word),
        None => false,
    }
}

/// `PEAK KEY` set into `into`; `false` when it is not one.
fn entry_line(line: &[u8], into: &mut JobPeaks) -> bool {
    let Some(sp) = line.iter().position(|&b| b == b' ') else {
        return false;
    };
    let (peak, key) = (&line[..sp], &line[sp + 1..]);
    match number(peak) {
        Some(mb @ 1..=PEAK_MAX_MB) if !key.is_empty() => {
            into.set(key, mb);
            true
        }
        _ => false,
    }
}

/// A whole decimal number of ASCII digits; `None` when empty, not digits
/// or above `u64::MAX`.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let d = d.checked_sub(b'0').filter(|d| *d <= 9)?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// The file's text for `peaks`, heaviest first (ties: by key), into
/// `out`: the written part. Never more than [`JOB_PEAKS_FILE_CAP`] bytes,
/// so a buffer of [`JOB_PEAKS_BUF`] always holds it.
///
/// # Errors
/// [`JobPeaksError::TooLong`] when `out` is too short.
pub fn render<'o>(peaks: &JobPeaks, out: &'o mut [u8]) -> Result<&'o [u8], JobPeaksError> {
    let mut order = [0u16; KEYS_CAP];
    let order = &mut order[..peaks.len()];
    for (i, o) in order.iter_mut().enumerate() {
        // At most KEYS_CAP (512): fits.
        *o = i as u16;
    }
    let peak = |i: u16| peaks.entries[usize::from(i)].peak_mb;
    // Entries are by key: a tie keeps index order.
    crate::kernel::order::sort_by(&mut order[..], |&a, &b| (peak(b), a) < (peak(a), b));
    let mut w = Cursor { out, len: 0 };
    let head = ufmt::uwrite!(w, "{}\nothers_mb {}\n", MAGIC, peaks.others_mb);
    head.map_err(|()| JobPeaksError::TooLong)?;
    for &i in order.iter() {
        let e = &peaks.entries[usize::from(i)];
        ufmt::uwrite!(w, "{} ", e.peak_mb).map_err(|()| JobPeaksError::TooLong)?;
        w.put(&e.key).map_err(|()| JobPeaksError::TooLong)?;
        w.put(b"\n").map_err(|()| JobPeaksError::TooLong)?;
    }
    let len = w.len;
    Ok(&w.out[..len])
}

/// A caller's buffer being filled from its start.
struct Cursor<'o> {
    out: &'o mut [u8],
    len: usize,
}

impl Cursor<'_> {
    /// Appends `b`; `Err` when it does not fit (nothing appended).
    fn put(&mut self, b: &[u8]) -> Result<(), ()> {
        let end = self.len + b.len();
        let slot = self.out.get_mut(self.len..end).ok_or(())?;
        slot.copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

impl ufmt::uWrite for Cursor<'_> {
    type Error = ();
    fn write_str(&mut self, s: &str) -> Result<(), ()> {
        self.put(s.as_bytes())
    }
}

/// The jobs remembered for `run` in the pool directory `dir`, into `into`
/// (cleared first), under `peakfile::read`'s trust rules (`shared`: others
/// may write `dir`, so only `uid`'s or root's file counts); `Ok(false)`
/// when there is none. `buf` holds the file (at least [`JOB_PEAKS_BUF`]
/// bytes).
///
/// # Errors
/// [`PeakIssue`]: the file is there but not used (not a table:
/// `Unparsable(Magic)`; too long: `Unparsable(Shape)`).
pub fn read(
    dir: BorrowedFd<'_>,
    run: &str,
    shared: bool,
    uid: u32,
    buf: &mut [u8],
    into: &mut JobPeaks,
) -> Result<bool, PeakIssue> {
    into.clear();
    let file = name(run).ok_or(PeakIssue::BadName)?;
    match peakfile::read_trusted(dir, file.as_str(), shared, uid, buf)? {
        None => Ok(false),
        Some(bytes) => parse(bytes, into)
            .map(|()| true)
            .map_err(|e| PeakIssue::Unparsable(e.into())),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::boxed::Box;

    fn table() -> Box<JobPeaks> {
        Box::new(JobPeaks::new())
    }

    fn parsed(bytes: &[u8]) -> Box<JobPeaks> {
        let mut t = table();
        parse(bytes, &mut t).unwrap();
        t
    }

    /// (key, peak) of every entry, by key.
    fn pairs(t: &JobPeaks) -> std::vec::Vec<(std::string::String, u32)> {
        (0..t.len())
            .map(|i| {
                let e = t.entry(i);
                (
                    std::string::String::from_utf8_lossy(&e.key).into(),
                    e.peak_mb,
                )
            })
            .collect()
    }

    fn rendered(t: &JobPeaks) -> std::string::String {
        let mut buf = std::vec![0u8; JOB_PEAKS_BUF];
        let text = render(t, &mut buf).unwrap();
        std::string::String::from_utf8(text.to_vec()).unwrap()
    }

    #[test]
    fn a_key_keeps_its_tail_on_one_line() {
        assert_eq!(key(b"src/sqlite3.o").as_slice(), b"src/sqlite3.o");
        let long: std::vec::Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        assert_eq!(key(&long).as_slice(), &long[200 - KEY_LEN..]);
        assert_eq!(key(&long[..KEY_LEN]).as_slice(), &long[..KEY_LEN]);
        assert_eq!(
            key(b"a\nb\rc\x00d\x1b[1m\x7f\\e").as_slice(),
            b"a?b?c?d?[1m??e"
        );
        // Applying it twice changes nothing; bytes above 0x7f stay.
        let k = key("α\t/β.o".as_bytes());
        assert_eq!(key(&k), k);
        assert_eq!(k.as_slice(), "α?/β.o".as_bytes());
        assert!(key(b"").is_empty());
    }

    #[test]
    fn set_replaces_down_and_up_and_get_finds() {
        let mut t = table();
        assert!(t.is_empty());
        t.set(b"sqlite-1.o", 360);
        t.set(b"light-07.o", 59);
        t.set(b"", 99); // not kept
        assert_eq!(t.len(), 2);
        assert_eq!(t.get(b"sqlite-1.o"), Some((1, 360)));
        assert_eq!(t.get(b"light-07.o"), Some((0, 59)));
        assert_eq!(t.get(b"nope.o"), None);
        t.set(b"sqlite-1.o", 200);
        assert_eq!(t.get(b"sqlite-1.o"), Some((1, 200)));
        t.set(b"sqlite-1.o", 900);
        assert_eq!(t.get(b"sqlite-1.o"), Some((1, 900)));
        // Clamped into 1..=PEAK_MAX_MB.
        t.set(b"zero.o", 0);
        t.set(b"huge.o", u64::MAX);
        assert_eq!(t.get(b"zero.o").map(|g| g.1), Some(1));
        assert_eq!(t.get(b"huge.o").map(|g| g.1), Some(PEAK_MAX_MB));
        // A raw key is made a key: the same entry.
        t.set(b"a\nb", 5);
        assert_eq!(t.get(b"a?b"), t.get(b"a\nb"));
        assert_eq!(t.entry(t.get(b"a?b").unwrap().0).key.as_slice(), b"a?b");
        assert_eq!(t.others_mb(), 0);
    }

    #[test]
    fn a_full_table_drops_its_lightest_for_a_heavier_job_only() {
        let mut t = table();
        for i in 0..KEYS_CAP as u64 {
            t.set(std::format!("k{i:03}").as_bytes(), 100 + i);
        }
        assert_eq!(t.len(), KEYS_CAP);
        // Lighter than the lightest (100): not kept, remembered as others.
        t.set(b"light", 40);
        assert_eq!(
            (t.len(), t.get(b"light"), t.others_mb()),
            (KEYS_CAP, None, 40)
        );
        // As light as the lightest: not kept either.
        t.set(b"equal", 100);
        assert_eq!((t.get(b"equal"), t.others_mb()), (None, 100));
        // Heavier: the lightest goes, its peak is the others'.
        t.set(b"heavy", 5000);
        assert_eq!(t.len(), KEYS_CAP);
        assert_eq!(t.get(b"k000"), None);
        assert_eq!(t.get(b"heavy").map(|g| g.1), Some(5000));
        assert_eq!(t.others_mb(), 100);
        // A key already there is replaced, nothing dropped.
        t.set(b"k001", 1);
        assert_eq!((t.len(), t.get(b"k001").map(|g| g.1)), (KEYS_CAP, Some(1)));
        t.set(b"next", 2);
        assert_eq!(t.get(b"k001"), None);
        assert_eq!(t.others_mb(), 100);
        // Still sorted by key: every entry found where it is.
        for i in 0..t.len() {
            let k = t.entry(i).key.clone();
            assert_eq!(t.get(&k).map(|g| g.0), Some(i));
        }
    }

    #[test]
    fn heaviest_first_ties_by_key() {
        let mut t = table();
        for (k, mb) in [("c", 50), ("a", 50), ("d", 360), ("b", 7), ("e", 356)] {
            t.set(k.as_bytes(), mb);
        }
        let mut top: heapless::Vec<&Entry, 3> = heapless::Vec::new();
        t.heaviest(&mut top);
        let got: std::vec::Vec<(&[u8], u32)> =
            top.iter().map(|e| (e.key.as_slice(), e.peak_mb)).collect();
        assert_eq!(got, [(&b"d"[..], 360), (b"e", 356), (b"a", 50)]);
        let mut all: heapless::Vec<&Entry, 8> = heapless::Vec::new();
        t.heaviest(&mut all);
        let keys: std::vec::Vec<&[u8]> = all.iter().map(|e| e.key.as_slice()).collect();
        assert_eq!(keys, [&b"d"[..], b"e", b"a", b"c", b"b"]);
    }

    #[test]
    fn merge_newer_wins_others_the_larger() {
        let mut old = table();
        parse(
            b"headroom-job-peaks 1\nothers_mb 70\n360 s.o\n59 a.o\n",
            &mut old,
        )
        .unwrap();
        let mut new = table();
        new.set(b"s.o", 300);
        new.set(b"b.o", 61);
        old.merge(&new);
        assert_eq!(
            pairs(&old),
            [("a.o".into(), 59), ("b.o".into(), 61), ("s.o".into(), 300)]
        );
        assert_eq!(old.others_mb(), 70);
    }

    #[test]
    fn the_text_round_trips_heaviest_first() {
        let t = parsed(b"headroom-job-peaks 1\nothers_mb 12\n59 light-07.o\n360 sqlite-1.o\n");
        assert_eq!(t.skipped(), 0);
        let text = rendered(&t);
        assert_eq!(
            text,
            "headroom-job-peaks 1\nothers_mb 12\n360 sqlite-1.o\n59 light-07.o\n"
        );
        let back = parsed(text.as_bytes());
        assert_eq!(pairs(&back), pairs(&t));
        assert_eq!(back.others_mb(), 12);
        // A key with spaces and bytes that are not UTF-8 is the rest of
        // its line.
        let mut t = table();
        t.set(b" lead and\xff tail ", 3);
        assert_eq!(pairs(&parsed(rendered_bytes(&t).as_slice())), pairs(&t));
        // Empty: the header only.
        assert_eq!(rendered(&table()), "headroom-job-peaks 1\nothers_mb 0\n");
    }

    fn rendered_bytes(t: &JobPeaks) -> std::vec::Vec<u8> {
        let mut buf = std::vec![0u8; JOB_PEAKS_BUF];
        render(t, &mut buf).unwrap().to_vec()
    }

    #[test]
    fn a_full_table_fits_the_cap_and_a_short_buffer_is_an_error() {
        let mut t = table();
        for i in 0..KEYS_CAP {
            let mut k = [b'x'; KEY_LEN];
            k[..4].copy_from_slice(std::format!("{i:04}").as_bytes());
            t.set(&k, PEAK_MAX_MB);
        }
        t.set(b"dropped", PEAK_MAX_MB); // not heavier: others_mb 2^24
        let bytes = rendered_bytes(&t);
        assert!(bytes.len() <= JOB_PEAKS_FILE_CAP, "{}", bytes.len());
        let back = parsed(&bytes);
        assert_eq!((back.len(), back.others_mb()), (KEYS_CAP, PEAK_MAX_MB));
        let mut short = [0u8; 100];
        assert_eq!(render(&t, &mut short), Err(JobPeaksError::TooLong));
    }

    #[test]
    fn bad_lines_are_skipped_and_counted_never_fatal() {
        let t = parsed(
            b"headroom-job-peaks 1\n\
              version_note later\n\
              others_mb 8\n\
              360 good.o\n\
              0 zero.o\n\
              16777217 over.o\n\
              35O typo.o\n\
              -3 neg.o\n\
              99999999999999999999999 wide.o\n\
              12\n\
              12 \n\
              others_mb 9\n\
              \n\
              x y z\n\
              59 also-good.o\n\
              7 torn.o",
        );
        assert_eq!(
            pairs(&t),
            [("also-good.o".into(), 59), ("good.o".into(), 360)]
        );
        assert_eq!((t.others_mb(), t.skipped()), (8, 11));
        // Bad header lines too; a key met twice keeps its last peak.
        let t = parsed(b"headroom-job-peaks 1\nothers_mb x\nno-space\n5 a\n6 a\n");
        assert_eq!(
            (pairs(&t), t.others_mb(), t.skipped()),
            (std::vec![("a".into(), 6)], 0, 2)
        );
        // A hand-edited key with a tab or a backslash is made a key.
        let t = parsed(b"headroom-job-peaks 1\n5 a\tb\\c\n");
        assert_eq!(pairs(&t), [("a?b?c".into(), 5)]);
    }

    #[test]
    fn a_torn_file_keeps_every_whole_line() {
        let mut t = table();
        for i in 0..40u64 {
            t.set(std::format!("light-{i:02}.o").as_bytes(), 50 + i);
        }
        t.set(b"sqlite-1.o", 360);
        let whole = rendered_bytes(&t);
        // Cut at every byte: every line that ends before the cut is there,
        // nothing else is.
        for cut in MAGIC.len() + 1..whole.len() {
            let part = &whole[..cut];
            let got = parsed(part);
            let lines = part.split(|&b| b == b'\n').count() - 1; // whole lines
            let entries = lines.saturating_sub(2);
            assert_eq!(got.len(), entries, "cut at {cut}");
            assert_eq!(got.skipped(), u32::from(part.last() != Some(&b'\n')));
            for i in 0..got.len() {
                let e = got.entry(i);
                assert_eq!(t.get(&e.key).map(|g| g.1), Some(u64::from(e.peak_mb)));
            }
            if entries > 0 {
                assert_eq!(
                    got.get(b"sqlite-1.o").map(|g| g.1),
                    Some(360),
                    "heaviest first"
                );
            }
        }
    }

    #[test]
    fn a_wrong_magic_or_too_long_is_an_error() {
        let mut t = table();
        t.set(b"kept", 1);
        for bytes in [
            &b""[..],
            b"headroom-job-peaks 2\n5 a\n",
            b"headroom-peak 1\npeak_mb 5\n",
            b"headroom-job-peaks 1 \n5 a\n",
            b"\nheadroom-job-peaks 1\n5 a\n",
            b"headroom-job-pe",
        ] {
            assert_eq!(parse(bytes, &mut t), Err(JobPeaksError::Magic), "{bytes:?}");
            assert!(t.is_empty());
        }
        // The magic line alone, with or without its newline: empty.
        assert!(parsed(b"headroom-job-peaks 1").is_empty());
        assert!(parsed(b"headroom-job-peaks 1\n").is_empty());
        let mut big = std::vec::Vec::from(&b"headroom-job-peaks 1\n"[..]);
        big.resize(JOB_PEAKS_FILE_CAP + 1, b'\n');
        assert_eq!(parse(&big, &mut t), Err(JobPeaksError::TooLong));
        big.truncate(JOB_PEAKS_FILE_CAP);
        assert!(parse(&big, &mut t).is_ok());
        assert_eq!(PeakError::from(JobPeaksError::TooLong), PeakError::Shape);
    }

    #[test]
    fn more_lines_than_the_cap_keep_the_heaviest() {
        let mut text = std::string::String::from("headroom-job-peaks 1\nothers_mb 0\n");
        for i in 0..KEYS_CAP + 10 {
            text.push_str(&std::format!("{} k{i}\n", 1000 - i));
        }
        let t = parsed(text.as_bytes());
        assert_eq!(t.len(), KEYS_CAP);
        assert_eq!(t.others_mb(), (1000 - KEYS_CAP) as u64);
        assert_eq!(t.get(b"k0").map(|g| g.1), Some(1000));
    }

    #[test]
    fn a_table_is_about_56_kib() {
        let size = core::mem::size_of::<JobPeaks>();
        assert!((50 * 1024..=58 * 1024).contains(&size), "{size}");
    }

    #[test]
    fn only_safe_run_ids_name_a_file() {
        assert_eq!(name("build1").as_deref(), Some("jobs-build1"));
        for bad in ["", ".x", "a/b", "a b"] {
            assert_eq!(name(bad), None, "{bad:?}");
        }
    }
}
