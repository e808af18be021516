//! Property tests of what headroom reads about swap devices: /proc/swaps
//! (entries with escaped names, and the totals) and zram's sysfs files
//! (`mm_stat` with the 7 to 9 columns of kernels 4.1 to 6.x, `disksize`).
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use std::collections::HashMap;

use headroom::kernel::parse::ParseError;
use headroom::kernel::swaps::{self, Swap};
use headroom::kernel::zram::{self, MmStat};
use proptest::prelude::*;
use proptest::sample::select;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ------------------------------------------------------------------- swaps

fn swap_prio() -> BoxedStrategy<String> {
    prop_oneof![
        (-5i64..0).prop_map(|p| p.to_string()),
        (0i64..=32767).prop_map(|p| p.to_string()),
        any::<i64>().prop_map(|p| p.to_string()),
    ]
    .boxed()
}

/// /proc/swaps, and each escaped name with the path it came from.
fn swaps_text() -> BoxedStrategy<(String, HashMap<String, String>)> {
    (
        any::<bool>(),
        prop::collection::vec(
            (
                raw_path(),
                select(&["partition", "file"][..]),
                num(),
                num(),
                swap_prio(),
            ),
            0..6,
        ),
        layout("\t\t", true, true, junk()),
    )
        .prop_map(|(header, rows, lay)| {
            let mut lines = Vec::new();
            if header || rows.is_empty() {
                lines.push(strings(&["Filename", "Type", "Size", "Used", "Priority"]));
            }
            let mut names = HashMap::new();
            for (path, kind, size, used, prio) in rows {
                let esc = kernel_escape(&path);
                lines.push(vec![
                    esc.clone(),
                    kind.to_string(),
                    size.to_string(),
                    used.to_string(),
                    prio,
                ]);
                names.insert(esc, path);
            }
            (lay.render(lines), names)
        })
        .boxed()
}

fn naive_swaps(s: &str) -> Vec<Result<Swap<'_>, ParseError>> {
    let mut out = Vec::new();
    for (i, line) in s.lines().enumerate() {
        if i == 0 && line.starts_with("Filename") {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let &[name, kind, size, used, prio, ..] = f.as_slice() else {
            out.push(Err(at(MALFORMED, i + 1)));
            continue;
        };
        out.push(match (naive_u64(size), naive_u64(used), naive_i64(prio)) {
            (Some(size_kib), Some(used_kib), Some(priority)) => Ok(Swap {
                name_raw: name.as_bytes(),
                kind: kind.as_bytes(),
                size_kib,
                used_kib,
                priority,
            }),
            _ => Err(at(BAD, i + 1)),
        });
    }
    out
}

fn naive_swap_totals(s: &str) -> Result<(u64, u64), ParseError> {
    let rows = naive_swaps(s).into_iter().collect::<Result<Vec<_>, _>>()?;
    let sum = |f: fn(&Swap<'_>) -> u64| {
        let total: u128 = rows.iter().map(|r| u128::from(f(r))).sum();
        u64::try_from(total).unwrap_or(u64::MAX)
    };
    Ok((sum(|r| r.size_kib), sum(|r| r.used_kib)))
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn swaps_entries_and_totals_match_naive((text, names) in swaps_text()) {
        let b = text.as_bytes();
        let got: Vec<_> = swaps::entries(b).collect();
        prop_assert_eq!(&got, &naive_swaps(&text));
        prop_assert_eq!(swaps::totals(b), naive_swap_totals(&text));
        let mut buf = [0u8; swaps::NAME_MAX_LEN];
        for s in got.iter().flatten() {
            let name = s.unescape(&mut buf).to_vec();
            prop_assert_eq!(&name, &naive_unescape(s.name_raw));
            // A name the kernel escaped comes back as the path it was.
            if let Some(path) = std::str::from_utf8(s.name_raw).ok().and_then(|n| names.get(n)) {
                prop_assert_eq!(&name, path.as_bytes());
            }
        }
    }
}

// -------------------------------------------------------------------- zram

/// `mm_stat`: 7 to 9 columns as kernels 4.1 to 6.x print, sometimes fewer
/// or more, right-aligned with `%8llu`.
fn mm_stat_text() -> BoxedStrategy<String> {
    let n = prop_oneof![6 => 7usize..=9, 1 => 0usize..7, 1 => 10usize..=12];
    (
        n,
        prop::collection::vec(num(), 12),
        prop::option::weighted(0.2, select(&["x", "-1", "", "1.5"][..])),
        layout(" ", true, true, junk()),
    )
        .prop_map(|(n, values, extra_junk, lay)| {
            // The kernel's own layout right-aligns; random separators do not.
            let kernel = lay.seps == [" "];
            let mut cols: Vec<String> = values[..n]
                .iter()
                .map(|v| {
                    if kernel {
                        format!("{v:>8}")
                    } else {
                        v.to_string()
                    }
                })
                .collect();
            // Columns after the ninth are not parsed: junk there is fine.
            if let (Some(j), true) = (extra_junk, n >= 9) {
                cols.push(j.to_string());
            }
            lay.render(vec![cols])
        })
        .boxed()
}

const MM_STAT_REQUIRED: [&str; 3] = ["orig_data_size", "compr_data_size", "mem_used_total"];

fn naive_mm_stat(s: &str) -> Result<MmStat, Vec<ParseError>> {
    let f: Vec<&str> = s.split_whitespace().collect();
    let cols: Vec<Option<u64>> = f.iter().take(9).map(|t| naive_u64(t)).collect();
    if cols.contains(&None) {
        return Err(vec![at(BAD, 1)]);
    }
    let col = |i: usize| cols.get(i).copied().flatten();
    if f.len() < 3 {
        return Err(vec![missing(MM_STAT_REQUIRED[f.len()])]);
    }
    Ok(MmStat {
        orig_data_size: col(0).unwrap(),
        compr_data_size: col(1).unwrap(),
        mem_used_total: col(2).unwrap(),
        mem_limit: col(3),
        mem_used_max: col(4),
        same_pages: col(5),
        pages_compacted: col(6),
        huge_pages: col(7),
        huge_pages_since: col(8),
    })
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn zram_mm_stat_matches_naive(text in mm_stat_text()) {
        agree(zram::parse_mm_stat(text.as_bytes()), naive_mm_stat(&text))?;
    }

    #[test]
    fn zram_disksize_matches_naive(
        text in one_value_file(prop_oneof![4 => num_s(), 1 => junk(), 1 => Just(String::new())].boxed())
    ) {
        let want = naive_u64(text.trim()).ok_or_else(|| vec![at(BAD, 1)]);
        agree(zram::parse_disksize(text.as_bytes()), want)?;
    }
}
