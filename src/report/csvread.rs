//! Streaming reader of recorded CSVs: the toolchain's 14 columns or
//! headroom's full set (with the jobserver's), found by header name; what
//! each field means is [`crate::tick::row::columns`]' table.
//!
//! Input is fed in chunks of any size; memory use is fixed whatever the file
//! size. A record that does not parse (or a final one cut short with no
//! newline) as a row (wrong field count, a
//! non-number in a numeric column, a bad time, a 10 MB line) is counted in
//! [`CsvRows::skipped`] and never stops the reading.
//!
//! # References
//! RFC 4180 via `csv-core`; SPEC.md "CSV".

use csv_core::{ReadRecordResult, Reader};

use crate::tick::row::Row;
use crate::tick::row::columns::{COLUMNS, Set};

/// Bytes of unquoted field data one record may hold. A headroom row is
/// under 1 KiB ([`crate::tick::row::columns::ROW_CAP`]); 4 KiB leaves room for hand-edited
/// files. A longer record is skipped as malformed.
pub const FIELD_BUF: usize = 4096;

/// Fields one record may have: the known columns (41) plus room for
/// extras that a newer writer may append.
pub const MAX_FIELDS: usize = 64;

const ALL_COLUMNS: usize = COLUMNS.len();

/// Why a CSV cannot be summarized at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsvError {
    /// The header lacks this compatible column: not a resource CSV.
    MissingColumn(&'static str),
    /// The first record is longer than [`FIELD_BUF`] or has more than
    /// [`MAX_FIELDS`] fields: not a resource CSV (binary data, /dev/zero).
    HeaderTooLong,
}

/// Position of each known column in the file's records.
#[derive(Clone, Copy, Debug)]
struct Columns {
    /// Index in the record of each of [`COLUMNS`].
    at: [Option<u8>; ALL_COLUMNS],
    /// Number of fields a well-formed record has.
    width: usize,
}

/// A streaming CSV-to-[`Row`] reader with fixed buffers.
pub struct CsvRows {
    rdr: Reader,
    out: [u8; FIELD_BUF],
    out_len: usize,
    last_byte: u8,
    ends: [usize; MAX_FIELDS],
    ends_len: usize,
    overflow: bool,
    cols: Option<Columns>,
    /// `csv-core` holds no part of a record: the next byte starts one, so
    /// whole lines may be split here without it ([`split_line`]).
    at_record_start: bool,
    /// The row each record is read into, kept from one to the next.
    row: Row,
    /// Well-formed rows delivered so far.
    pub rows: u64,
    /// Records skipped as malformed.
    pub skipped: u64,
}

impl Default for CsvRows {
    fn default() -> Self {
        Self::new()
    }
}

impl CsvRows {
    /// A reader expecting a header line first.
    pub fn new() -> CsvRows {
        CsvRows {
            rdr: Reader::new(),
            out: [0; FIELD_BUF],
            out_len: 0,
            last_byte: b'\n',
            ends: [0; MAX_FIELDS],
            ends_len: 0,
            overflow: false,
            cols: None,
            at_record_start: true,
            row: Row::empty(0),
            rows: 0,
            skipped: 0,
        }
    }

    /// Feeds the next chunk of the file; `on_row` is called for every
    /// complete, well-formed row. Feed an empty chunk at end of file to
    /// flush a final row that has no newline.
    ///
    /// # Errors
    /// [`CsvError::MissingColumn`] when the header is not a resource CSV's.
    pub fn feed(
        &mut self,
        mut input: &[u8],
        on_row: &mut impl FnMut(&Row),
    ) -> Result<(), CsvError> {
        let at_eof = input.is_empty();
        if let Some(&b) = input.last() {
            self.last_byte = b;
        }
        loop {
            // The header goes through `csv-core` (it strips a UTF-8 BOM).
            if self.at_record_start && self.cols.is_some() {
                input = self.whole_lines(input, on_row);
                if input.is_empty() && !at_eof {
                    return Ok(());
                }
            }
            let (res, nin, nout, nend) = self.rdr.read_record(
                input,
                &mut self.out[self.out_len..],
                &mut self.ends[self.ends_len..],
            );
            input = &input[nin..];
            self.out_len += nout;
            self.ends_len += nend;
            if nin > 0 {
                self.at_record_start = false;
            }
            match res {
                ReadRecordResult::InputEmpty => {
                    if input.is_empty() && !at_eof {
                        return Ok(());
                    }
                }
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {
                    if self.cols.is_none() {
                        return Err(CsvError::HeaderTooLong);
                    }
                    // Keep consuming the record, discarding its data.
                    self.overflow = true;
                    self.ends_len = 0;
                    self.out_len = 0;
                }
                ReadRecordResult::Record => {
                    // A last record with no newline is a row cut short (the
                    // writer always ends rows with one): malformed.
                    if at_eof && self.last_byte != b'\n' && self.cols.is_some() {
                        self.overflow = true;
                    }
                    let r = self.record(on_row);
                    self.ends_len = 0;
                    self.out_len = 0;
                    self.overflow = false;
                    self.at_record_start = true;
                    r?;
                }
                ReadRecordResult::End => return Ok(()),
            }
        }
    }

    /// Reads the plain lines at the start of `input` ([`split_line`]) as
    /// rows, their fields in place; returns the rest, from the first line
    /// `csv-core` must read (or the last, unfinished one).
    fn whole_lines<'i>(&mut self, mut input: &'i [u8], on_row: &mut impl FnMut(&Row)) -> &'i [u8] {
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        while let Some((n, used)) = split_line(input, &mut fields) {
            input = &input[used..];
            // An empty line is no record, as for `csv-core`.
            if let (true, Some(cols)) = (n > 0, &self.cols) {
                let counts = (&mut self.rows, &mut self.skipped);
                deliver(&mut self.row, cols, &fields[..n], counts, on_row);
            }
        }
        input
    }

    /// Handles one complete record held in `out`/`ends`.
    fn record(&mut self, on_row: &mut impl FnMut(&Row)) -> Result<(), CsvError> {
        if self.overflow {
            self.skipped += 1;
            return Ok(());
        }
        let n = self.ends_len;
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        let mut start = 0;
        for (i, &end) in self.ends[..n].iter().enumerate() {
            let Some(f) = self.out.get(start..end) else {
                self.skipped += 1;
                return Ok(());
            };
            fields[i] = f;
            start = end;
        }
        let fields = &fields[..n];
        match self.cols {
            None => {
                let cols = header(fields)?;
                self.cols = Some(cols);
            }
            Some(cols) => {
                let counts = (&mut self.rows, &mut self.skipped);
                deliver(&mut self.row, &cols, fields, counts, on_row);
            }
        }
        Ok(())
    }
}

/// Maps header names to positions; all compatible columns are required.
fn header(fields: &[&[u8]]) -> Result<Columns, CsvError> {
    let mut at = [None; ALL_COLUMNS];
    for (slot, c) in at.iter_mut().zip(COLUMNS) {
        *slot = fields
            .iter()
            .position(|f| crate::kernel::parse::trim(f) == c.name.as_bytes())
            .and_then(|i| u8::try_from(i).ok());
        if slot.is_none() && c.set == Set::Core {
            return Err(CsvError::MissingColumn(c.name));
        }
    }
    Ok(Columns {
        at,
        width: fields.len(),
    })
}

/// Reads a record's fields into `row` and hands it to `on_row`, counting it
/// in `counts` (rows, skipped): skipped when malformed.
fn deliver(
    row: &mut Row,
    cols: &Columns,
    fields: &[&[u8]],
    counts: (&mut u64, &mut u64),
    on_row: &mut impl FnMut(&Row),
) {
    if read_row(row, cols, fields).is_some() {
        *counts.0 += 1;
        on_row(row);
    } else {
        *counts.1 += 1;
    }
}

/// Reads a record into `row`; `None` when it is malformed. An absent
/// extension column or an empty field is `None` in the row; garbage makes
/// the row malformed.
fn read_row(row: &mut Row, cols: &Columns, fields: &[&[u8]]) -> Option<()> {
    if fields.len() != cols.width {
        return None;
    }
    row.read_into(|i| fields.get(usize::from(cols.at[i]?)).copied())
}

/// Splits the line at the start of `input` into `fields` when it is
/// plain, as the recorder writes every line: ended by `\n` within
/// [`FIELD_BUF`] bytes, no `\r`, a `"` only around a whole field (which
/// then holds no `"` or line end), at most [`MAX_FIELDS`] fields. Returns
/// (fields, bytes used with the `\n`); an empty line has no field. `None`
/// for any other line, left to `csv-core`: for a plain line both read the
/// same fields (tested below), and this reads them in place, at a fraction
/// of the cost.
fn split_line<'i>(input: &'i [u8], fields: &mut [&'i [u8]; MAX_FIELDS]) -> Option<(usize, usize)> {
    let line = &input[..input.len().min(FIELD_BUF)];
    if line.first() == Some(&b'\n') {
        return Some((0, 1));
    }
    let mut n = 0;
    let mut i = 0;
    loop {
        let (start, end, next) = if line.get(i) == Some(&b'"') {
            let mut close = i + 1;
            while !ENDS_QUOTED[usize::from(*line.get(close)?)] {
                close += 1;
            }
            if line[close] != b'"' {
                return None;
            }
            (i + 1, close, close + 1)
        } else {
            let mut end = i;
            while !ENDS_PLAIN[usize::from(*line.get(end)?)] {
                end += 1;
            }
            (i, end, end)
        };
        *fields.get_mut(n)? = line.get(start..end)?;
        n += 1;
        match line.get(next) {
            Some(b',') => i = next + 1,
            Some(b'\n') => return Some((n, next + 1)),
            _ => return None,
        }
    }
}

/// The bytes that end an unquoted field in [`split_line`]: `,` and `\n`,
/// or `\r` and `"`, which leave the line to `csv-core`.
const ENDS_PLAIN: [bool; 256] = byte_set(b",\n\r\"");

/// The bytes that end a quoted field's text in [`split_line`]: its closing
/// `"`, or a `\n` inside it, which leaves the line to `csv-core`.
const ENDS_QUOTED: [bool; 256] = byte_set(b"\"\n");

/// A table of the bytes in `bytes`.
const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::tick::row::{Decimal, Tenths};
    use std::vec::Vec;

    fn read_all(data: &[u8], chunk: usize) -> (Result<(), CsvError>, Vec<Row>, u64) {
        let mut r = CsvRows::new();
        let mut rows = Vec::new();
        let mut res = Ok(());
        for c in data.chunks(chunk.max(1)) {
            res = r.feed(c, &mut |row| rows.push(row.clone()));
            if res.is_err() {
                return (res, rows, r.skipped);
            }
        }
        if res.is_ok() {
            res = r.feed(&[], &mut |row| rows.push(row.clone()));
        }
        (res, rows, r.skipped)
    }

    const SAMPLE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/toolchain-cargo-build.csv"
    ));

    /// Every line of up to 7 bytes of `a,"` CR LF, and a few longer
    /// ones: where [`split_line`] reads a line, `csv-core` reads the same
    /// fields and uses the same bytes.
    #[test]
    fn plain_lines_split_as_csv_core_splits_them() {
        let alphabet = b"a,\"\r\n";
        let mut read = 0;
        let mut check = |line: &[u8]| {
            let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
            let Some((n, used)) = split_line(line, &mut fields) else {
                return;
            };
            read += 1;
            if n == 0 {
                assert_eq!((line[0], used), (b'\n', 1), "{line:?}");
                return;
            }
            let (mut out, mut ends) = ([0u8; FIELD_BUF], [0usize; MAX_FIELDS]);
            let (res, nin, _, nend) = Reader::new().read_record(line, &mut out, &mut ends);
            assert_eq!(
                (res, nin, nend),
                (ReadRecordResult::Record, used, n),
                "{line:?}"
            );
            let mut start = 0;
            for (f, &end) in fields[..n].iter().zip(&ends[..n]) {
                assert_eq!(*f, &out[start..end], "{line:?}");
                start = end;
            }
        };
        for len in 1..=7u32 {
            for mut k in 0..5usize.pow(len) {
                let mut line = Vec::new();
                for _ in 0..len {
                    line.push(alphabet[k % 5]);
                    k /= 5;
                }
                check(&line);
            }
        }
        check(b"1,\"a, b\",,\"\",x\n");
        check(&[b','; 63].iter().chain(b"\n").copied().collect::<Vec<u8>>());
        check(&[b','; 64].iter().chain(b"\n").copied().collect::<Vec<u8>>());
        assert!(read > 1000, "{read}");
        // Longer than a record may be, or more fields: csv-core's.
        let mut fields: [&[u8]; MAX_FIELDS] = [&[]; MAX_FIELDS];
        let long: Vec<u8> = [b'x'; FIELD_BUF].iter().chain(b"\n").copied().collect();
        assert_eq!(split_line(&long, &mut fields), None);
        let wide: Vec<u8> = [b','; 64].iter().chain(b"\n").copied().collect();
        assert_eq!(split_line(&wide, &mut fields), None);
    }

    /// Fed one byte at a time no whole line is ever in hand, and
    /// `csv-core` reads every record: lines of every kind read the same
    /// in larger chunks, where plain lines are split in place.
    #[test]
    fn plain_and_other_lines_read_as_csv_core_reads_them() {
        let ok = "1796000604,2026-11-30T01:03:24Z,19,0.77,5,456,23649,1,0,76,69,0,build,";
        let mut data = Vec::from(SAMPLE);
        for tail in [
            "\" Compiling x\"\r\n",
            "\"a \"\"quoted\"\" word\"\n",
            "\"two\nlines\"\n\n\r\n",
            "\"trailing\"junk\n",
            "unquoted \"mid\" field\r",
            "\"cr\rinside\"\n",
            "\" Compiling y\",extra\n",
            "\" Compiling z\"\n",
        ] {
            data.extend_from_slice(ok.as_bytes());
            data.extend_from_slice(tail.as_bytes());
        }
        data.extend_from_slice(&[b','; 70]);
        data.extend_from_slice(b"\n");
        data.extend_from_slice(&[b'y'; FIELD_BUF + 10]);
        data.extend_from_slice(b"\n");
        data.extend_from_slice(ok.as_bytes());
        data.extend_from_slice(b"\" Compiling last\"");
        let (res, want, skipped) = read_all(&data, 1);
        assert_eq!(res, Ok(()));
        assert!(want.len() > 20, "{}", want.len());
        for chunk in [2, 7, 64, 100, 4096, 100_000] {
            let (res, rows, s) = read_all(&data, chunk);
            assert_eq!((res, s), (Ok(()), skipped), "{chunk}");
            assert_eq!(rows, want, "{chunk}");
        }
    }

    #[test]
    fn reads_the_toolchains_own_csv_in_any_chunking() {
        for chunk in [1, 7, 64, 100_000] {
            let (res, rows, skipped) = read_all(SAMPLE, chunk);
            assert_eq!(res, Ok(()));
            assert_eq!(skipped, 0);
            assert_eq!(rows.len(), 18);
            assert_eq!(rows[1].context.as_str(), " Compiling argh_shared v0.1.19");
            assert_eq!(rows[1].stage.as_str(), "build");
            assert_eq!(rows[3].load1.centi, 72);
            assert_eq!(rows[17].mem_avail_mb, 23649);
            assert_eq!(rows[17].ext.swap_total_mb, None);
        }
    }

    #[test]
    fn garbage_lines_are_skipped_and_counted() {
        let mut data = Vec::from(SAMPLE);
        data.extend_from_slice(b"garbage line\n\x00\xff,,,\n");
        data.extend_from_slice(&[b'x'; 20_000]);
        data.extend_from_slice(
            b"\n1796000604,2026-11-30T01:03:24Z,19,0.77,5,456,23649,1,0,76,69,0,build,\"\"\n",
        );
        data.extend_from_slice(
            b"1796000605,2026-11-30T01:03:25Z,20,0.77,5,4x6,23649,1,0,76,69,0,build,\"\"\n",
        );
        let (res, rows, skipped) = read_all(&data, 4096);
        assert_eq!(res, Ok(()));
        assert_eq!(rows.len(), 19);
        assert_eq!(skipped, 4);
    }

    #[test]
    fn file_cut_mid_row_and_header_only_and_empty() {
        let cut = &SAMPLE[..SAMPLE.len() - 30];
        let (res, rows, skipped) = read_all(cut, 512);
        assert_eq!(res, Ok(()));
        assert_eq!(rows.len(), 17);
        assert_eq!(skipped, 1);

        let header_only = crate::tick::row::columns::HEADER_FULL.as_bytes();
        let (res, rows, skipped) = read_all(header_only, 512);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
        let (res, rows, skipped) = read_all(b"", 512);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
    }

    #[test]
    fn a_file_that_is_not_a_resource_csv_is_an_error() {
        let (res, _, _) = read_all(b"a,b,c\n1,2,3\n", 512);
        assert_eq!(res, Err(CsvError::MissingColumn("epoch")));
        // One line and no newline: still judged as a header.
        let (res, _, _) = read_all(b"x", 512);
        assert_eq!(res, Err(CsvError::MissingColumn("epoch")));
        // A first "line" longer than any header (binary data, /dev/zero).
        let zeros = std::vec![0u8; 3 * FIELD_BUF];
        let (res, _, _) = read_all(&zeros, 1000);
        assert_eq!(res, Err(CsvError::HeaderTooLong));
    }

    #[test]
    fn header_only_without_final_newline_is_zero_rows_not_malformed() {
        let h = crate::tick::row::columns::HEADER_FULL.trim_end().as_bytes();
        let (res, rows, skipped) = read_all(h, 17);
        assert_eq!((res, rows.len(), skipped), (Ok(()), 0, 0));
    }

    #[test]
    fn empty_memory_and_disk_extension_fields_mark_the_sources_unknown() {
        let mut data =
            Vec::from(std::format!("{}\n", crate::tick::row::columns::header_27()).as_bytes());
        data.extend_from_slice(b"1,2026-11-30T01:03:06Z,1,0,0,0,0,0,0,0,0,0,?,\"\",,,,,,,,,,,,,\n");
        data.extend_from_slice(
            b"2,2026-11-30T01:03:07Z,2,0,0,10,20,33,0,5,50,0,?,\"\",0,,,,,5120,,,,,,,\n",
        );
        let (res, rows, _) = read_all(&data, 64);
        assert_eq!(res, Ok(()));
        assert!(!rows[0].mem_known && !rows[0].disk_known);
        assert!(rows[1].mem_known && rows[1].disk_known);
        // A 14-column CSV has no such columns: its figures are taken as read.
        let (_, rows, _) = read_all(SAMPLE, 4096);
        assert!(rows.iter().all(|r| r.mem_known && r.disk_known));
    }

    #[test]
    fn full_width_rows_keep_extension_columns() {
        let mut data =
            Vec::from(std::format!("{}\n", crate::tick::row::columns::header_27()).as_bytes());
        data.extend_from_slice(b"1796000586,2026-11-30T01:03:06Z,1,0.61,89,476,23628,1,0,76,69,2,build,\" Compiling x\",2048,10,3,900,12,77900,,512,1.21,773,cc1plus,52,cc1\n");
        let (res, rows, skipped) = read_all(&data, 9);
        assert_eq!((res, skipped), (Ok(()), 0));
        let e = &rows[0].ext;
        assert_eq!(e.swap_total_mb, Some(2048));
        assert_eq!(e.oom_kills, None);
        assert_eq!(e.cg_mem_avail_mb, Some(512));
        assert_eq!(e.psi_mem_some_avg10.as_ref().map(|p| p.centi), Some(121));
        assert_eq!(e.peak_rss_comm.as_str(), "cc1plus");
        assert_eq!(e.build_peak_rss_mb, Some(52));
        assert_eq!(e.build_peak_rss_comm.as_str(), "cc1");
    }

    #[test]
    fn the_slow_columns_read_back_what_the_row_writes() {
        let mut r = Row::empty(1_796_000_586);
        r.ext.swap_total_mb = Some(100);
        r.ext.disk_avail_mb = Some(1000);
        r.ext.swap_in_mibps = Some(Decimal::from_centi(150));
        r.ext.majflt_ps = Some(120);
        r.ext.disk_write_mibps = Some(Decimal::from_centi(2250));
        r.ext.disk_util_pct = Some(97);
        r.ext.cpu_temp_c = Some(Tenths(823));
        r.ext.cpu_freq_pct = Some(33);
        r.ext.throttled = Some(0b0101);
        let mut line = heapless::Vec::new();
        r.format(false, &mut line).unwrap();
        let mut data = Vec::from(crate::tick::row::columns::HEADER_FULL.as_bytes());
        data.extend_from_slice(&line);
        let (res, rows, skipped) = read_all(&data, 7);
        assert_eq!((res, skipped), (Ok(()), 0));
        assert_eq!(rows[0].ext, r.ext);
        // Garbage in a slow column makes the row malformed, not a zero.
        let bad = std::string::String::from_utf8(line.to_vec())
            .unwrap()
            .replace("82.3", "hot");
        data.truncate(crate::tick::row::columns::HEADER_FULL.len());
        data.extend_from_slice(bad.as_bytes());
        let (_, rows, skipped) = read_all(&data, 7);
        assert_eq!((rows.len(), skipped), (0, 1));
    }

    #[test]
    fn the_jobserver_columns_are_read_with_or_without_jobs_paused() {
        let row = "2,2026-11-30T01:03:07Z,2,0,0,10,20,33,0,5,50,0,?,\"\",0,,,,,5120,,,,,,,";
        let mut data = Vec::from(
            std::format!(
                "{},jobs_running,jobs_allowed,jobs_paused\n",
                crate::tick::row::columns::header_27()
            )
            .as_bytes(),
        );
        data.extend_from_slice(std::format!("{row},3,4,1\n{row},,,\n").as_bytes());
        let (res, rows, skipped) = read_all(&data, 64);
        assert_eq!((res, skipped), (Ok(()), 0));
        assert_eq!((rows[0].jobs, rows[1].jobs), (Some((3, 4, 1)), None));
        // A CSV of before jobs_paused: 0 paused.
        let old = std::format!(
            "{},jobs_running,jobs_allowed\n",
            crate::tick::row::columns::header_27()
        );
        let mut data = Vec::from(old.as_bytes());
        data.extend_from_slice(std::format!("{row},2,2\n{row},x,2\n").as_bytes());
        let (_, rows, skipped) = read_all(&data, 64);
        assert_eq!((rows.len(), skipped), (1, 1));
        assert_eq!(rows[0].jobs, Some((2, 2, 0)));
    }
}
