//! Property test of the CSV reader against the recorder's columns: a
//! recorded file with the full or the compatible header, its columns in
//! any order, a column a newer writer added, log lines with commas,
//! quotes and control characters, and the final newline or not, fed in
//! chunks of any size, reads back as what `summarize` must keep of each
//! row (`report::csvread`). Each column's values are generated from the
//! column table (`tick::row::columns::COLUMNS`) by its unit and set, so a
//! new column is generated and checked with no edit here.
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use std::collections::HashMap;

use headroom::kernel::throttled::Flags;
use headroom::report::csvread::CsvRows;
use headroom::tick::row::columns::{COLUMNS, CORE_COLUMNS, Cell, Column, EXT_COLUMNS, Set, Unit};
use headroom::tick::row::{Decimal, Row};
use proptest::prelude::*;
use proptest::sample::select;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ----------------------------------------------------------------- csvread

/// How a column's field is generated and what the reader must keep of
/// it, told from the column table by its unit, set and name suffix (the
/// table's own test ties each name to its unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gen {
    /// A core number: always there, a non-number spoils the row.
    Int,
    /// A core reading ([`KNOWN_CORE`]): a number, or empty when its source
    /// was not read; a non-number spoils the row.
    KnownInt,
    /// An extension number or nothing.
    OptInt,
    /// The ISO time.
    Iso,
    /// The load: a kernel decimal, always there.
    Load,
    /// An extension decimal (MiB/s, PSI's avg10) or nothing.
    OptDecimal,
    /// Tenths (°C) or nothing.
    OptTenths,
    /// The stage word.
    Stage,
    /// The quoted build-log line.
    Context,
    /// A process name.
    Comm,
    /// Throttle flags or nothing.
    Flags,
}

/// The core columns written empty when their source was not read (issue
/// 33), by the flag of the row that says so: `/proc/meminfo`'s, statvfs's,
/// `/proc/stat`'s. An empty one reads back as that source unread, and the
/// writer then leaves its group empty.
const KNOWN_CORE: [(&str, &[&str]); 3] = [
    (
        "mem",
        &["mem_used_mb", "mem_avail_mb", "mem_pct", "swap_used_mb"],
    ),
    ("disk", &["disk_avail_gb", "disk_pct"]),
    ("cpu", &["cpu_pct"]),
];

/// The generator of column `c`; a column no rule covers fails here, by
/// name, until this table learns its kind.
fn gen_of(c: &Column) -> Gen {
    match (c.set, c.unit) {
        (_, Unit::Time) => Gen::Iso,
        (Set::Core, _) if KNOWN_CORE.iter().any(|(_, g)| g.contains(&c.name)) => Gen::KnownInt,
        (Set::Core, Unit::Load) => Gen::Load,
        (Set::Core, Unit::Text) if c.name == "stage" => Gen::Stage,
        (Set::Core, Unit::Text) if c.name == "context" => Gen::Context,
        (Set::Core, Unit::Seconds | Unit::Pct | Unit::MiB | Unit::GiB | Unit::Count) => Gen::Int,
        (Set::Ext, Unit::MiBps) => Gen::OptDecimal,
        (Set::Ext, Unit::Pct) if !c.name.ends_with("_pct") => Gen::OptDecimal,
        (Set::Ext, Unit::Celsius) => Gen::OptTenths,
        (Set::Ext, Unit::Text) if c.name.ends_with("_comm") => Gen::Comm,
        (Set::Ext, Unit::Text) if c.name == "throttled" => Gen::Flags,
        (
            Set::Ext,
            Unit::Seconds | Unit::Pct | Unit::MiB | Unit::GiB | Unit::Count | Unit::PerSecond,
        ) => Gen::OptInt,
        _ => panic!(
            "column {} ({:?}, {:?}): no generator in tests/properties_csvread.rs gen_of",
            c.name, c.unit, c.set
        ),
    }
}

/// The columns a recorded file may hold (the core and the extension; the
/// jobserver's are `run`'s own), in table order.
fn file_columns() -> Vec<&'static Column> {
    COLUMNS.iter().filter(|c| c.set != Set::Jobs).collect()
}

/// A field of `g`'s kind.
fn gen_value(g: Gen) -> BoxedStrategy<String> {
    let decimal = || {
        prop_oneof![
            4 => (0u64..100, 0u64..100).prop_map(|(w, f)| format!("{w}.{f:02}")),
            1 => (0u64..100, 0u64..10).prop_map(|(w, f)| format!("{w}.{f}")),
            1 => Just("0".to_string()),
            1 => any::<u64>().prop_map(|w| format!("{w}.00")),
        ]
    };
    let opt = |s: BoxedStrategy<String>| {
        prop::option::weighted(0.7, s)
            .prop_map(Option::unwrap_or_default)
            .boxed()
    };
    match g {
        Gen::Int => num_s(),
        Gen::KnownInt => prop::option::weighted(0.9, num_s())
            .prop_map(Option::unwrap_or_default)
            .boxed(),
        Gen::OptInt => opt(num_s()),
        Gen::Iso => prop::collection::vec(0u32..10, 14)
            .prop_map(|d| {
                let d: Vec<String> = d.iter().map(u32::to_string).collect();
                format!(
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
                )
            })
            .boxed(),
        Gen::Load => decimal().boxed(),
        Gen::OptDecimal => opt(decimal().boxed()),
        Gen::OptTenths => opt((-999i32..1000)
            .prop_map(|t| {
                let sign = if t < 0 { "-" } else { "" };
                format!("{sign}{}.{}", t.unsigned_abs() / 10, t.unsigned_abs() % 10)
            })
            .boxed()),
        Gen::Stage => prop_oneof![
            3 => text_from(&['a', 'z', '0', '_', '-'], 1..20),
            1 => Just("?".to_string()),
        ]
        .boxed(),
        Gen::Context => text_from(CONTEXT_CHARS, 0..100),
        Gen::Comm => text_from(&['c', 'l', '1', '+', '.', '_', '-'], 0..20),
        Gen::Flags => opt((1u8..16)
            .prop_map(|b| {
                let names = Flags::NAMES.iter().enumerate();
                let on: Vec<&str> = names
                    .filter(|(i, _)| b >> i & 1 == 1)
                    .map(|(_, n)| *n)
                    .collect();
                on.join("|")
            })
            .boxed()),
    }
}

/// The text the writer gives back for a field `v` of `g`'s kind read in
/// (`Some("")` for an empty field); `None` when the row must be skipped.
fn naive_field(g: Gen, v: &str) -> Option<String> {
    Some(match g {
        Gen::Int => naive_u64(v)?.to_string(),
        Gen::Load | Gen::KnownInt if v.is_empty() => String::new(),
        Gen::KnownInt => naive_u64(v)?.to_string(),
        Gen::Load => naive_decimal(v)?.0,
        Gen::OptInt | Gen::OptDecimal | Gen::OptTenths | Gen::Flags if v.is_empty() => {
            String::new()
        }
        Gen::OptInt => naive_u64(v)?.to_string(),
        Gen::OptDecimal => naive_decimal(v)?.0,
        Gen::OptTenths | Gen::Flags | Gen::Iso => v.to_string(),
        Gen::Stage => naive_display(v, 64),
        Gen::Context => naive_display(v, 80),
        Gen::Comm => naive_display(v, 15),
    })
}

/// Characters of a build-log line: commas, quotes, tabs, runs of spaces,
/// non-ASCII letters and blocks, Unicode spaces and controls.
const CONTEXT_CHARS: &[char] = &[
    'a', 'B', 'z', '0', '9', ' ', ' ', ',', '"', '\t', '-', ':', '[', ']', '%', 'é', '█', '€', '‘',
    '\u{a0}', '\u{85}', '\u{3000}',
];

#[derive(Clone, Debug)]
struct CsvRow {
    fields: HashMap<&'static str, String>,
}

fn csv_row() -> BoxedStrategy<CsvRow> {
    let cols = file_columns();
    let core_ints: Vec<&'static str> = cols
        .iter()
        .filter(|c| matches!(gen_of(c), Gen::Int | Gen::KnownInt))
        .map(|c| c.name)
        .collect();
    let values: Vec<BoxedStrategy<String>> = cols.iter().map(|c| gen_value(gen_of(c))).collect();
    (
        values,
        prop::option::weighted(0.1, (select(core_ints), junk())),
    )
        .prop_map(move |(values, spoil)| {
            let mut f: HashMap<&'static str, String> = HashMap::new();
            for (c, v) in file_columns().iter().zip(values) {
                f.insert(c.name, v);
            }
            f.insert("future_a", "7".to_string());
            f.insert("future_b", "\"x,\"\"y\"\"\"".to_string());
            if let Some((k, j)) = spoil {
                f.insert(k, j);
            }
            CsvRow { fields: f }
        })
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
                    "context" => format!("\"{}\"", r.fields[c].replace('"', "\"\"")),
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

/// A cell as text (a quoted one without its quotes).
fn cell_text(cell: Cell<'_>) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(v) => v.to_string(),
        Cell::Text(t) | Cell::Quoted(t) => t.to_string(),
        Cell::Tenths(t) => {
            let a = t.0.unsigned_abs();
            let sign = if t.0 < 0 { "-" } else { "" };
            format!("{sign}{}.{}", a / 10, a % 10)
        }
        Cell::Flags(b) => {
            let names = Flags::NAMES.iter().enumerate();
            let on: Vec<&str> = names
                .filter(|(i, _)| b >> i & 1 == 1)
                .map(|(_, n)| *n)
                .collect();
            on.join("|")
        }
    }
}

/// A column whose reader keeps its field (most), rather than only checking
/// it (a figure computed from other columns): a field of its kind read
/// into an empty row is written back.
fn keeps_its_field(c: &Column) -> bool {
    let probe = match gen_of(c) {
        Gen::OptInt => "7",
        Gen::OptDecimal => "1.50",
        Gen::OptTenths => "-3.5",
        Gen::Flags => "under-voltage",
        Gen::Comm => "cc1",
        _ => return true,
    };
    let mut r = Row::empty(0);
    (c.read)(&mut r, Some(probe.as_bytes())) == Some(()) && cell_text((c.write)(&r)) == probe
}

/// What `summarize` keeps of a row: each column as the writer gives it
/// back, the flags the memory and disk columns set, and the hundredths of
/// the decimals the summary computes with.
#[derive(Debug, PartialEq, Eq)]
struct RowValues {
    fields: Vec<(&'static str, String)>,
    centi: Vec<(&'static str, Option<u64>)>,
    mem_known: bool,
    disk_known: bool,
    cpu_known: bool,
}

/// The decimals of a row, each with its hundredths.
fn decimals(r: &Row) -> Vec<(&'static str, Option<u64>)> {
    let e = &r.ext;
    let c = |d: &Option<Decimal>| d.as_ref().map(|d| d.centi);
    vec![
        ("load1", Some(r.load1.centi)),
        ("psi_mem_some_avg10", c(&e.psi_mem_some_avg10)),
        ("swap_in_mibps", c(&e.swap_in_mibps)),
        ("swap_out_mibps", c(&e.swap_out_mibps)),
        ("disk_read_mibps", c(&e.disk_read_mibps)),
        ("disk_write_mibps", c(&e.disk_write_mibps)),
    ]
}

fn row_values(r: &Row) -> RowValues {
    RowValues {
        fields: file_columns()
            .into_iter()
            .filter(|c| keeps_its_field(c))
            .map(|c| (c.name, cell_text((c.write)(r))))
            .collect(),
        centi: decimals(r),
        mem_known: r.mem_known,
        disk_known: r.disk_known,
        cpu_known: r.cpu_known,
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
    let mut fields = Vec::new();
    for c in file_columns() {
        let v = &r.fields[c.name];
        // A column outside the file reads as an empty row's.
        let in_file = full || c.set == Set::Core;
        let want = if in_file {
            naive_field(gen_of(c), v)?
        } else {
            cell_text((c.write)(&Row::empty(0)))
        };
        if keeps_its_field(c) {
            fields.push((c.name, want));
        }
    }
    let centi = decimals(&Row::empty(0))
        .into_iter()
        .map(|(k, none)| {
            let v = &r.fields[k];
            let in_file = full || k == "load1";
            let centi = match naive_decimal(v) {
                Some((_, c)) if in_file => Some(c),
                _ => none,
            };
            (k, centi)
        })
        .collect();
    let present = |k: &str| r.fields[k].as_str() != "";
    // A group is read when all its core fields are there (and, in a full
    // file, its extension field); else the writer leaves it empty.
    let read = |group: &str| {
        let (_, names) = KNOWN_CORE.iter().find(|(g, _)| *g == group)?;
        Some(names.iter().all(|n| present(n)))
    };
    let mem_known = read("mem")? && (!full || present("swap_total_mb"));
    let disk_known = read("disk")? && (!full || present("disk_avail_mb"));
    let cpu_known = read("cpu")?;
    for (group, known) in [("mem", mem_known), ("disk", disk_known), ("cpu", cpu_known)] {
        let (_, names) = KNOWN_CORE.iter().find(|(g, _)| *g == group)?;
        for (name, text) in fields.iter_mut() {
            if !known && names.contains(name) {
                text.clear();
            }
        }
    }
    Some(RowValues {
        fields,
        centi,
        mem_known,
        disk_known,
        cpu_known,
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
