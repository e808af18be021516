//! Property test of the CSV reader against the recorder's columns: a
//! recorded file with the full or the compatible header, its columns in
//! any order, a column a newer writer added, log lines with commas,
//! quotes and control characters, and the final newline or not, fed in
//! chunks of any size, reads back as what `summarize` must keep of each
//! row (`report::csvread`, `tick::row`'s `CORE_COLUMNS` and `EXT_COLUMNS`).
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use std::collections::HashMap;

use headroom::report::csvread::CsvRows;
use headroom::tick::row::Row;
use headroom::tick::row::columns::{CORE_COLUMNS, EXT_COLUMNS};
use proptest::prelude::*;
use proptest::sample::select;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ----------------------------------------------------------------- csvread

/// The core columns holding a plain number.
const CSV_NUMBERS: [&str; 10] = [
    "epoch",
    "elapsed_s",
    "cpu_pct",
    "mem_used_mb",
    "mem_avail_mb",
    "mem_pct",
    "swap_used_mb",
    "disk_avail_gb",
    "disk_pct",
    "compilers",
];

/// The extension columns holding a number or nothing.
const CSV_EXT_NUMBERS: [&str; 15] = [
    "swap_total_mb",
    "zram_stored_mb",
    "zram_ram_mb",
    "tmp_avail_mb",
    "tmp_pct",
    "disk_avail_mb",
    "oom_kills",
    "cg_mem_avail_mb",
    "peak_rss_mb",
    "build_peak_rss_mb",
    "majflt_ps",
    "refaults_ps",
    "disk_util_pct",
    "cpu_freq_pct",
    "cg_mem_limit_mb",
];

/// The slow columns that are decimals or text, and a value of each that
/// the reader must keep (checked in [`row_values`]).
const CSV_EXT_TEXTS: [(&str, &str); 6] = [
    ("swap_in_mibps", "1.50"),
    ("swap_out_mibps", "0.00"),
    ("disk_read_mibps", "12.05"),
    ("disk_write_mibps", ""),
    ("cpu_temp_c", "-3.5"),
    ("throttled", "under-voltage|throttled"),
];

/// Characters of a build-log line: commas, quotes, tabs, runs of spaces,
/// non-ASCII letters and blocks, Unicode spaces and controls.
const CONTEXT_CHARS: &[char] = &[
    'a', 'B', 'z', '0', '9', ' ', ' ', ',', '"', '\t', '-', ':', '[', ']', '%', 'é', '█', '€', '‘',
    '\u{a0}', '\u{85}', '\u{3000}',
];

#[derive(Clone, Debug)]
struct CsvRow {
    fields: HashMap<&'static str, String>,
    context: String,
}

fn csv_row() -> BoxedStrategy<CsvRow> {
    (
        (
            prop::collection::vec(num(), 10),
            prop::collection::vec(0u32..10, 14),
            prop_oneof![
                4 => (0u64..100, 0u64..100).prop_map(|(w, f)| format!("{w}.{f:02}")),
                1 => (0u64..100, 0u64..10).prop_map(|(w, f)| format!("{w}.{f}")),
                1 => Just("0".to_string()),
                1 => any::<u64>().prop_map(|w| format!("{w}.00")),
            ],
            prop_oneof![
                3 => text_from(&['a', 'z', '0', '_', '-'], 1..20),
                1 => Just("?".to_string()),
            ],
            text_from(CONTEXT_CHARS, 0..100),
        ),
        (
            prop::collection::vec(prop::option::weighted(0.7, num()), CSV_EXT_NUMBERS.len()),
            prop::option::weighted(0.7, (0u64..100, 0u64..100)),
            text_from(&['c', 'l', '1', '+', '.', '_', '-'], 0..20),
            prop::option::weighted(0.1, (select(&CSV_NUMBERS[..]), junk())),
        ),
    )
        .prop_map(
            |((nums, iso, load1, stage, context), (ext, psi, comm, spoil))| {
                let mut f: HashMap<&'static str, String> = HashMap::new();
                for (k, v) in CSV_NUMBERS.iter().zip(&nums) {
                    f.insert(k, v.to_string());
                }
                let d: Vec<String> = iso.iter().map(u32::to_string).collect();
                let iso = format!(
                    "{}{}{}{}-{}{}-{}{}T{}{}:{}{}:{}{}Z",
                    d[0],
                    d[1],
                    d[2],
                    d[3],
                    d[4],
                    d[5],
                    d[6],
                    d[7],
                    d[8],
                    d[9],
                    d[10],
                    d[11],
                    d[12],
                    d[13]
                );
                f.insert("iso", iso);
                f.insert("load1", load1);
                f.insert("stage", stage);
                for (k, v) in CSV_EXT_NUMBERS.iter().zip(&ext) {
                    f.insert(k, v.map(|v| v.to_string()).unwrap_or_default());
                }
                f.insert(
                    "psi_mem_some_avg10",
                    psi.map(|(w, c)| format!("{w}.{c:02}")).unwrap_or_default(),
                );
                f.insert("build_peak_rss_comm", comm.chars().rev().collect());
                f.insert("peak_rss_comm", comm);
                for (k, v) in CSV_EXT_TEXTS {
                    f.insert(k, v.to_string());
                }
                f.insert("future_a", "7".to_string());
                f.insert("future_b", "\"x,\"\"y\"\"\"".to_string());
                if let Some((k, j)) = spoil {
                    f.insert(k, j);
                }
                CsvRow { fields: f, context }
            },
        )
        .boxed()
}

/// A recorded CSV: the full or compatible header, columns in any order, a
/// column a newer writer may have added, some rows, the final newline or
/// not; and the chunk size to feed it in.
#[derive(Clone, Debug)]
struct CsvFile {
    columns: Vec<&'static str>,
    rows: Vec<CsvRow>,
    newline: bool,
    chunk: usize,
}

/// Columns a generated file may have: all known ones and two a newer
/// writer added.
const MAX_COLUMNS: usize = CORE_COLUMNS.len() + EXT_COLUMNS.len() + 2;

fn csv_file() -> BoxedStrategy<CsvFile> {
    (
        any::<bool>(),
        prop::collection::vec(select(&["future_a", "future_b"][..]), 0..3),
        // One key per column (a shorter list would drop the last ones).
        prop::option::of(prop::collection::vec(any::<u16>(), MAX_COLUMNS)),
        prop::collection::vec(csv_row(), 0..8),
        any::<bool>(),
        1usize..100,
    )
        .prop_map(|(full, extra, order, rows, newline, chunk)| {
            let mut columns: Vec<&'static str> = CORE_COLUMNS.to_vec();
            if full {
                columns.extend(EXT_COLUMNS);
            }
            for e in extra {
                if !columns.contains(&e) {
                    columns.push(e);
                }
            }
            if let Some(keys) = order {
                let mut keyed: Vec<_> = keys.into_iter().zip(columns).collect();
                keyed.sort_by_key(|(k, _)| *k);
                columns = keyed.into_iter().map(|(_, c)| c).collect();
            }
            CsvFile {
                columns,
                rows,
                newline,
                chunk,
            }
        })
        .boxed()
}

impl CsvFile {
    /// The file as the recorder writes it: `context` always quoted, a quote
    /// inside doubled, every other field bare.
    fn text(&self) -> String {
        let mut lines = vec![self.columns.join(",")];
        for r in &self.rows {
            let fields: Vec<String> = self
                .columns
                .iter()
                .map(|&c| match c {
                    "context" => format!("\"{}\"", r.context.replace('"', "\"\"")),
                    c => r.fields[c].clone(),
                })
                .collect();
            lines.push(fields.join(","));
        }
        let mut s = lines.join("\n");
        if self.newline {
            s.push('\n');
        }
        s
    }
}

/// What `summarize` keeps of a row, field by field.
#[derive(Debug, PartialEq, Eq)]
struct RowValues {
    numbers: Vec<u64>,
    iso: String,
    load1: (String, u64),
    stage: String,
    context: String,
    ext: Vec<Option<u64>>,
    /// The slow columns of [`CSV_EXT_TEXTS`]: MiB/s in hundredths, °C in
    /// tenths, the throttle flag bits.
    slow: Vec<Option<i64>>,
    psi: Option<(String, u64)>,
    comm: String,
    build_comm: String,
    mem_known: bool,
    disk_known: bool,
}

fn row_values(r: &Row) -> RowValues {
    let e = &r.ext;
    RowValues {
        numbers: vec![
            r.epoch,
            r.elapsed_s,
            r.cpu_pct,
            r.mem_used_mb,
            r.mem_avail_mb,
            r.mem_pct,
            r.swap_used_mb,
            r.disk_avail_gb,
            r.disk_pct,
            r.compilers,
        ],
        iso: r.iso.as_str().to_string(),
        load1: (r.load1.text.to_string(), r.load1.centi),
        stage: r.stage.to_string(),
        context: r.context.to_string(),
        ext: vec![
            e.swap_total_mb,
            e.zram_stored_mb,
            e.zram_ram_mb,
            e.tmp_avail_mb,
            e.tmp_pct,
            e.disk_avail_mb,
            e.oom_kills,
            e.cg_mem_avail_mb,
            e.peak_rss_mb,
            e.build_peak_rss_mb,
            e.majflt_ps,
            e.refaults_ps,
            e.disk_util_pct,
            e.cpu_freq_pct,
            e.cg_mem_limit_mb,
        ],
        slow: vec![
            e.swap_in_mibps.as_ref().map(|d| d.centi as i64),
            e.swap_out_mibps.as_ref().map(|d| d.centi as i64),
            e.disk_read_mibps.as_ref().map(|d| d.centi as i64),
            e.disk_write_mibps.as_ref().map(|d| d.centi as i64),
            e.cpu_temp_c.map(|t| i64::from(t.0)),
            e.throttled.map(i64::from),
        ],
        psi: e
            .psi_mem_some_avg10
            .as_ref()
            .map(|p| (p.text.to_string(), p.centi)),
        comm: e.peak_rss_comm.to_string(),
        build_comm: e.build_peak_rss_comm.to_string(),
        mem_known: r.mem_known,
        disk_known: r.disk_known,
    }
}

/// The display form of a log line, as documented in `text::sanitize_into`
/// (for text without escape sequences): control characters, white space,
/// `,` and `"` separate words joined by one space, one leading space kept,
/// at most `max_chars` characters and no trailing space.
fn naive_display(raw: &str, max_chars: usize) -> String {
    let sep = |c: char| c.is_control() || c.is_whitespace() || c == ',' || c == '"';
    let words: Vec<&str> = raw.split(sep).filter(|w| !w.is_empty()).collect();
    let lead = if raw.starts_with(sep) && !words.is_empty() {
        " "
    } else {
        ""
    };
    let full = format!("{lead}{}", words.join(" "));
    let cut: String = full.chars().take(max_chars).collect();
    cut.trim_end_matches(' ').to_string()
}

/// A `load1` or PSI decimal: `<digits>[.<1-2 digits>]`, at most 12 bytes.
fn naive_decimal(s: &str) -> Option<(String, u64)> {
    if s.len() > 12 {
        return None;
    }
    let centi = match s.split_once('.') {
        None => naive_u64(s)?.checked_mul(100)?,
        Some((w, f)) if f.len() == 1 || f.len() == 2 => {
            let f = naive_u64(f)? * if f.len() == 1 { 10 } else { 1 };
            naive_u64(w)?.checked_mul(100)?.checked_add(f)?
        }
        Some(_) => return None,
    };
    Some((s.to_string(), centi))
}

/// The row `summarize` should get from a generated one; `None` when it
/// must be skipped as malformed.
fn naive_row(r: &CsvRow, full: bool) -> Option<RowValues> {
    let f = |k: &str| r.fields[k].as_str();
    let numbers = CSV_NUMBERS
        .iter()
        .map(|k| naive_u64(f(k)))
        .collect::<Option<Vec<u64>>>()?;
    let ext = if full {
        CSV_EXT_NUMBERS
            .iter()
            .map(|k| match f(k) {
                "" => Some(None),
                v => naive_u64(v).map(Some),
            })
            .collect::<Option<Vec<Option<u64>>>>()?
    } else {
        vec![None; CSV_EXT_NUMBERS.len()]
    };
    let psi = match f("psi_mem_some_avg10") {
        _ if !full => None,
        "" => None,
        v => Some(naive_decimal(v)?),
    };
    Some(RowValues {
        numbers,
        iso: f("iso").to_string(),
        load1: naive_decimal(f("load1"))?,
        stage: naive_display(f("stage"), 64),
        context: naive_display(&r.context, 80),
        mem_known: !full || ext[0].is_some(),
        disk_known: !full || ext[5].is_some(),
        ext,
        slow: if full {
            vec![
                Some(150),
                Some(0),
                Some(1205),
                None,
                Some(-35),
                Some(0b0101),
            ]
        } else {
            vec![None; CSV_EXT_TEXTS.len()]
        },
        psi,
        comm: if full {
            naive_display(f("peak_rss_comm"), 15)
        } else {
            String::new()
        },
        build_comm: if full {
            naive_display(f("build_peak_rss_comm"), 15)
        } else {
            String::new()
        },
    })
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn csvread_reads_back_what_the_recorder_wrote(file in csv_file()) {
        let text = file.text();
        let mut rdr = CsvRows::new();
        let mut got = Vec::new();
        for chunk in text.as_bytes().chunks(file.chunk) {
            prop_assert_eq!(rdr.feed(chunk, &mut |r| got.push(row_values(r))), Ok(()));
        }
        prop_assert_eq!(rdr.feed(&[], &mut |r| got.push(row_values(r))), Ok(()));

        let full = file.columns.contains(&"swap_total_mb");
        let mut want = Vec::new();
        let mut skipped = 0u64;
        for (i, r) in file.rows.iter().enumerate() {
            // The writer ends every row with a newline: a last one without
            // is a row cut short.
            let cut = i + 1 == file.rows.len() && !file.newline;
            match naive_row(r, full) {
                Some(v) if !cut => want.push(v),
                _ => skipped += 1,
            }
        }
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(rdr.rows, want.len() as u64);
        prop_assert_eq!(rdr.skipped, skipped);
    }
}
