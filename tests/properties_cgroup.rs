//! Property tests of the cgroup files: one-line limits (v1 and v2, `max`
//! and the unlimited sentinels), `cpu.max`, CPU lists (`cpuset.cpus`), and
//! the path of a controller in /proc/self/cgroup on v1, v2 and hybrid
//! hosts, with garbage lines.
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use headroom::kernel::cgroup::{self, CpuMax, Limit, Version};
use headroom::kernel::parse::{ParseError, ParseErrorKind};
use proptest::prelude::*;
use proptest::sample::select;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ------------------------------------------------------------------ cgroup

/// A one-line control file the naive way: `Missing("value")` when blank,
/// `Malformed` when it has two lines, else the trimmed text.
fn naive_single_line(s: &str) -> Result<&str, Vec<ParseError>> {
    let t = s.trim();
    if t.is_empty() {
        return Err(vec![missing("value")]);
    }
    if t.contains('\n') {
        return Err(vec![at(MALFORMED, 1)]);
    }
    Ok(t)
}

fn naive_limit(s: &str) -> Result<Limit, Vec<ParseError>> {
    match naive_single_line(s)? {
        "max" => Ok(Limit::Max),
        t => naive_u64(t)
            .map(Limit::Bytes)
            .ok_or_else(|| vec![at(BAD, 1)]),
    }
}

fn naive_cpu_max(s: &str) -> Result<CpuMax, Vec<ParseError>> {
    let f: Vec<&str> = naive_single_line(s)?.split_whitespace().collect();
    match f[..] {
        [_] => Err(vec![ParseError {
            kind: ParseErrorKind::Missing("period"),
            line: 1,
        }]),
        [quota, period] => {
            let quota_us = if quota == "max" {
                Some(None)
            } else {
                naive_u64(quota).map(Some)
            };
            match (quota_us, naive_u64(period).filter(|&p| p > 0)) {
                (Some(quota_us), Some(period_us)) => Ok(CpuMax {
                    quota_us,
                    period_us,
                }),
                _ => Err(vec![at(BAD, 1)]),
            }
        }
        _ => Err(vec![at(MALFORMED, 1)]),
    }
}

fn naive_cpu_list_count(s: &str) -> Result<u32, Vec<ParseError>> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(0);
    }
    let mut count: u128 = 0;
    for item in t.split(',') {
        if item.is_empty() {
            return Err(vec![at(MALFORMED, 1)]);
        }
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let (Some(lo), Some(hi)) = (naive_u64(lo), naive_u64(hi)) else {
            return Err(vec![at(BAD, 1)]);
        };
        if hi < lo {
            return Err(vec![at(MALFORMED, 1)]);
        }
        count += u128::from(hi - lo) + 1;
    }
    Ok(u32::try_from(count).unwrap_or(u32::MAX))
}

fn cpu_list_item() -> BoxedStrategy<String> {
    prop_oneof![
        6 => (0u64..300).prop_map(|n| n.to_string()),
        6 => (0u64..300, 0u64..64).prop_map(|(lo, n)| format!("{lo}-{}", lo + n)),
        1 => (0u64..300, 1u64..64).prop_map(|(lo, n)| format!("{}-{lo}", lo + n)),
        1 => (num(), num()).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        1 => junk(),
        1 => select(&["", "-", "1-", "-3", "1-2-3"][..]).prop_map(String::from),
    ]
    .boxed()
}

const CONTROLLERS: &[&str] = &[
    "cpu",
    "cpuacct",
    "cpuset",
    "memory",
    "blkio",
    "devices",
    "freezer",
    "net_cls",
    "net_prio",
    "perf_event",
    "hugetlb",
    "pids",
    "rdma",
    "misc",
    "name=systemd",
];

fn cgroup_path() -> BoxedStrategy<String> {
    prop_oneof![
        select(
            &[
                "/",
                "/init.scope",
                "/user.slice/user-1000.slice/session-3.scope",
                "/docker/7c2f9e4b1a0d",
                "/a:b",
                "/system.slice/docker-abc.scope",
            ][..]
        )
        .prop_map(String::from),
        prop::collection::vec(text_from(&['a', 'b', '.', '-', ':', ' '], 1..6), 1..4)
            .prop_map(|segs| format!("/{}", segs.join("/"))),
    ]
    .boxed()
}

/// /proc/self/cgroup of a v1, v2 or hybrid host, with garbage lines.
fn proc_cgroup_text() -> BoxedStrategy<String> {
    let line = prop_oneof![
        4 => (1u32..14, prop::collection::vec(select(CONTROLLERS), 1..3), cgroup_path())
            .prop_map(|(id, c, p)| format!("{id}:{}:{p}", c.join(","))),
        2 => cgroup_path().prop_map(|p| format!("0::{p}")),
        1 => select(
            &[
                "garbage",
                ":memory:/x",
                "9:memory:",
                "1::/x",
                "x:memory:/y",
                "0::",
                "00::/z",
                "0:memory:/w",
                "-1:memory:/v",
                "",
                "12:cpu,,memory:/u",
                "18446744073709551616:memory:/o",
            ][..]
        )
        .prop_map(String::from),
    ];
    (prop::collection::vec(line, 0..14), any::<bool>())
        .prop_map(|(lines, nl)| {
            let mut s = lines.join("\n");
            if nl {
                s.push('\n');
            }
            s
        })
        .boxed()
}

/// `path_for` the naive way: keep the well-formed lines, then the first v1
/// line listing the controller, else the first `0::` line.
fn naive_path_for<'a>(s: &'a str, controller: &str) -> Option<(Version, &'a [u8])> {
    let lines: Vec<(&str, Vec<&str>, &str)> = s
        .lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(':')?;
            let (list, path) = rest.split_once(':')?;
            let list = if list.is_empty() {
                Vec::new()
            } else {
                list.split(',').collect()
            };
            (naive_u64(id).is_some() && !path.is_empty()).then_some((id, list, path))
        })
        .collect();
    if let Some((_, _, p)) = lines.iter().find(|(_, list, _)| list.contains(&controller)) {
        return Some((Version::V1, p.as_bytes()));
    }
    lines
        .iter()
        .find(|(id, list, _)| *id == "0" && list.is_empty())
        .map(|(_, _, p)| (Version::V2, p.as_bytes()))
}

proptest! {
    #![proptest_config(config(4096))]

    #[test]
    fn cgroup_parse_limit_matches_naive(
        text in one_value_file(
            prop_oneof![
                2 => Just("max".to_string()),
                4 => num_s(),
                2 => junk(),
                1 => select(&["", "max max", "1 2", "Max", "maxx"][..]).prop_map(String::from),
            ]
            .boxed()
        )
    ) {
        agree(cgroup::parse_limit(text.as_bytes()), naive_limit(&text))?;
    }

    #[test]
    fn cgroup_parse_cpu_max_matches_naive(
        text in one_value_file(
            (
                prop_oneof![2 => Just("max".to_string()), 4 => (1000u64..1_000_000).prop_map(|v| v.to_string()), 1 => num_s(), 1 => junk()],
                prop_oneof![4 => (1u64..1_000_000).prop_map(|v| v.to_string()), 1 => Just("0".to_string()), 1 => num_s(), 1 => junk()],
                prop_oneof![8 => Just(2usize), 1 => Just(1), 1 => Just(3)],
                text_from(WS, 1..4),
            )
                .prop_map(|(q, p, n, sep)| [q, p, "x".to_string()][..n].join(&sep))
                .boxed()
        )
    ) {
        agree(cgroup::parse_cpu_max(text.as_bytes()), naive_cpu_max(&text))?;
    }

    #[test]
    fn cgroup_parse_cpu_list_count_matches_naive(
        text in one_value_file(
            prop::collection::vec(cpu_list_item(), 0..6).prop_map(|items| items.join(",")).boxed()
        )
    ) {
        agree(cgroup::parse_cpu_list_count(text.as_bytes()), naive_cpu_list_count(&text))?;
    }

    #[test]
    fn cgroup_path_for_matches_naive(
        text in proc_cgroup_text(),
        controller in select(&["cpu", "cpuacct", "cpuset", "memory", "pids", "io", "systemd", "name=systemd"][..]),
    ) {
        prop_assert_eq!(
            cgroup::path_for(text.as_bytes(), controller.as_bytes()),
            naive_path_for(&text, controller)
        );
    }
}
