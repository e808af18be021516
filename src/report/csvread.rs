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
            let (res, nin, nout, nend) = self.rdr.read_record(
                input,
                &mut self.out[self.out_len..],
                &mut self.ends[self.ends_len..],
            );
            input = &input[nin..];
            self.out_len += nout;
            self.ends_len += nend;
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
                    r?;
                }
                ReadRecordResult::End => return Ok(()),
            }
        }
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
            Some(cols) => match row_from(&cols, fields) {
                Some(row) => {
                    self.rows += 1;
                    on_row(&row);
                }
                None => self.skipped += 1,
            },
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

/// Builds a row from a record; `None` when it is malformed. An absent
/// extension column or an empty field is `None` in the row; garbage makes
/// the row malformed.
fn row_from(cols: &Columns, fields: &[&[u8]]) -> Option<Row> {
    if fields.len() != cols.width {
        return None;
    }
    Row::read(|i| fields.get(usize::from(cols.at[i]?)).copied())
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
