//! Property tests of the per-process files: /proc/PID/stat (a comm with
//! hostile parentheses and spaces, fields cut short or spoiled),
//! /proc/PID/status (the `Vm*` lines absent for kernel threads and
//! zombies, near-miss keys) and /proc/PID/mountinfo (escaped paths,
//! optional fields).
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use std::collections::HashMap;

use headroom::kernel::mountinfo::{self, Mount};
use headroom::kernel::parse::ParseError;
use headroom::kernel::pid::{self, PidStat, Status};
use proptest::prelude::*;
use proptest::sample::{Index, select};

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// --------------------------------------------------------------------- pid

/// Bytes of a process name, parentheses and spaces included.
const COMM_CHARS: &[char] = &['a', 'b', 'c', '1', ' ', '(', ')', ':', '-', '/'];

fn comm() -> BoxedStrategy<String> {
    prop_oneof![
        3 => text_from(COMM_CHARS, 0..17),
        1 => select(
            &[
                "Plex Media Serv",
                "myexec (tb) xyz",
                ":-) 1 2 3 4 5 6",
                "executable-(nam",
                "x) R 9 9 9 0 (",
                "sle ep",
                "()()())))",
                ": - )",
                ") ",
                ") S 1 (",
                "cc1plus",
            ][..]
        )
        .prop_map(String::from),
    ]
    .boxed()
}

/// One field of /proc/PID/stat that headroom does not read.
fn stat_field() -> BoxedStrategy<String> {
    prop_oneof![
        6 => (0u64..100_000).prop_map(|v| v.to_string()),
        2 => num_s(),
        1 => (-100i64..0).prop_map(|v| v.to_string()),
    ]
    .boxed()
}

/// /proc/PID/stat: `pid (comm) state` and 21 to 49 more fields (52 on 6.x),
/// sometimes cut short, spoiled in one field, or spaced oddly.
fn pid_stat_text() -> BoxedStrategy<String> {
    (
        (
            prop_oneof![8 => any::<u32>().prop_map(u64::from), 1 => num()],
            comm(),
            select(&["R", "S", "D", "Z", "I", "T", "X", "x", "SS", ""][..]),
            prop::collection::vec(stat_field(), 49),
            21usize..=49,
        ),
        (
            prop_oneof![8 => any::<u32>().prop_map(u64::from), 1 => num()],
            prop_oneof![
                4 => Just(0x0040_0100u64),
                1 => Just(0x0020_8040),
                2 => any::<u32>().prop_map(u64::from),
                1 => num(),
            ],
            num(),
            num(),
            num(),
        ),
        prop::option::weighted(0.2, (any::<Index>(), junk())),
        prop::option::weighted(0.1, any::<Index>()),
        prop_oneof![3 => Just(" ".to_string()), 1 => text_from(WS, 1..3)],
        any::<bool>(),
    )
        .prop_map(
            |(
                (pid, comm, state, mut f, n),
                (ppid, flags, utime, stime, rss),
                spoil,
                cut,
                sep,
                nl,
            )| {
                for (i, v) in [(0, ppid), (5, flags), (10, utime), (11, stime), (20, rss)] {
                    f[i] = v.to_string();
                }
                f.truncate(n);
                if let Some((i, j)) = spoil {
                    let i = i.index(f.len());
                    f[i] = j;
                }
                let mut s = format!("{pid} ({comm}) {state}{sep}{}", f.join(&sep));
                if nl {
                    s.push('\n');
                }
                if let Some(c) = cut {
                    let mut i = c.index(s.len() + 1);
                    while !s.is_char_boundary(i) {
                        i -= 1;
                    }
                    s.truncate(i);
                }
                s
            },
        )
        .boxed()
}

fn naive_u32(s: &str) -> Option<u32> {
    naive_u64(s).and_then(|v| u32::try_from(v).ok())
}

/// The fields after `)` that headroom reads, by 0-based position there.
const PID_STAT_USED: [(usize, &str); 7] = [
    (0, "state"),
    (1, "ppid"),
    (6, "flags"),
    (11, "utime"),
    (12, "stime"),
    (19, "starttime"),
    (21, "rss"),
];

/// /proc/PID/stat the obvious way: the comm runs from the first `(` to the
/// last `)` (`rfind`).
fn naive_pid_stat(s: &str) -> Result<PidStat<'_>, Vec<ParseError>> {
    let (Some(open), Some(close)) = (s.find('('), s.rfind(')')) else {
        return Err(vec![at(MALFORMED, 1)]);
    };
    if close < open {
        return Err(vec![at(MALFORMED, 1)]);
    }
    let head = &s[..open];
    let pid = naive_u32(head.strip_suffix(' ').unwrap_or(head));
    let comm = &s[open + 1..close];
    let f: Vec<&str> = s[close + 1..].split_whitespace().collect();
    let mut errors = Vec::new();
    if pid.is_none() {
        errors.push(at(BAD, 1));
    }
    if let Some(&(_, name)) = PID_STAT_USED.iter().find(|(i, _)| *i >= f.len()) {
        errors.push(missing(name));
        return Err(errors);
    }
    if f[0].len() != 1 {
        errors.push(at(MALFORMED, 1));
    }
    let (ppid, flags) = (naive_u32(f[1]), naive_u32(f[6]));
    let (utime, stime, rss) = (naive_u64(f[11]), naive_u64(f[12]), naive_u64(f[21]));
    let start = naive_u64(f[19]);
    if ppid.is_none()
        || flags.is_none()
        || utime.is_none()
        || stime.is_none()
        || start.is_none()
        || rss.is_none()
    {
        errors.push(at(BAD, 1));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(PidStat {
        pid: pid.unwrap(),
        comm: comm.as_bytes(),
        state: f[0].as_bytes()[0],
        ppid: ppid.unwrap(),
        flags: flags.unwrap(),
        utime: utime.unwrap(),
        stime: stime.unwrap(),
        start_ticks: start.unwrap(),
        rss_pages: rss.unwrap(),
    })
}

/// /proc/PID/status: the kernel's lines, the `Vm*` ones absent for kernel
/// threads and zombies, near-miss keys, and odd values.
fn pid_status_text() -> BoxedStrategy<String> {
    let value = prop_oneof![8 => num_s(), 1 => junk(), 1 => Just(String::new())].boxed();
    (
        comm(),
        any::<bool>(),
        prop::collection::vec(num_s(), 8),
        prop::option::weighted(0.9, value.clone()),
        prop::option::weighted(0.9, value.clone()),
        prop::collection::vec(
            (
                select(&["xVmRSS", "VmRSSx", "VmHWM_", "vmrss", "RssAnon"][..]),
                value,
            ),
            0..3,
        ),
        layout("\t", true, false, junk()),
    )
        .prop_map(|(comm, has_vm, n, rss, hwm, near, lay)| {
            let mut lines = vec![
                vec!["Name:".to_string(), comm.replace(['\t', ' '], "_")],
                strings(&["Umask:", "0022"]),
                strings(&["State:", "S", "(sleeping)"]),
                vec!["Tgid:".to_string(), n[0].clone()],
                vec!["PPid:".to_string(), n[1].clone()],
                strings(&["Uid:", "1000", "1000", "1000", "1000"]),
                strings(&["Groups:"]),
            ];
            let kb = |k: &str, v: &str| vec![format!("{k}:"), v.to_string(), "kB".to_string()];
            if has_vm {
                lines.push(kb("VmPeak", &n[2]));
                lines.push(kb("VmSize", &n[3]));
                if let Some(v) = &hwm {
                    lines.push(kb("VmHWM", v));
                }
                if let Some(v) = &rss {
                    lines.push(kb("VmRSS", v));
                }
                lines.push(kb("RssFile", &n[4]));
                lines.push(kb("VmSwap", &n[5]));
            }
            for (k, v) in &near {
                lines.push(kb(k, v));
            }
            lines.push(vec!["Threads:".to_string(), n[6].clone()]);
            lines.push(strings(&["SigQ:", "0/15208"]));
            lay.render(lines)
        })
        .boxed()
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn pid_stat_matches_naive(text in pid_stat_text()) {
        agree(pid::parse_stat(text.as_bytes()), naive_pid_stat(&text))?;
    }

    #[test]
    fn pid_status_matches_naive(text in pid_status_text()) {
        let found = colon_values(&text);
        let kib = |k: &str| found.get(k).and_then(|&(_, v)| naive_u64(v));
        let state = found.get("State").and_then(|&(_, v)| v.bytes().next());
        let want = Status { vm_rss_kib: kib("VmRSS"), vm_hwm_kib: kib("VmHWM"), state };
        prop_assert_eq!(pid::parse_status(text.as_bytes()), want);
    }
}

// --------------------------------------------------------------- mountinfo

/// Escaped paths of a generated file, each with the path it came from.
type Paths = Vec<(String, String)>;

/// One mountinfo line as tokens, and its escaped paths.
fn mount_line() -> BoxedStrategy<(Vec<String>, Paths)> {
    (
        (0u32..5000, 0u32..5000, 0u32..300, 0u32..300),
        prop_oneof![Just("/".to_string()), raw_path()],
        raw_path(),
        select(&["rw,relatime", "ro,nosuid,nodev,noexec,relatime", "rw"][..]),
        prop::collection::vec(
            (
                select(&["shared:", "master:", "propagate_from:", "unbindable"][..]),
                1u32..400,
            ),
            0..4,
        ),
        select(
            &[
                "ext4",
                "tmpfs",
                "cgroup",
                "cgroup2",
                "overlay",
                "vfat",
                "fuse.sshfs",
            ][..],
        ),
        prop_oneof![
            select(&["/dev/mmcblk0p2", "tmpfs", "none", "", "overlay", "-"][..])
                .prop_map(String::from),
            raw_path(),
        ],
        select(
            &[
                "rw",
                "rw,memory",
                "rw,nr_inodes=485674,inode64",
                "ro,nsdelegate",
            ][..],
        ),
    )
        .prop_map(
            |((id, parent, major, minor), root, mp, opts, optional, fs, source, sup)| {
                let mut line = vec![
                    id.to_string(),
                    parent.to_string(),
                    format!("{major}:{minor}"),
                    kernel_escape(&root),
                    kernel_escape(&mp),
                    opts.to_string(),
                ];
                for (tag, n) in optional {
                    line.push(if tag == "unbindable" {
                        tag.to_string()
                    } else {
                        format!("{tag}{n}")
                    });
                }
                line.push("-".to_string());
                line.push(fs.to_string());
                line.push(kernel_escape(&source));
                line.push(sup.to_string());
                let paths = vec![(kernel_escape(&root), root), (kernel_escape(&mp), mp)];
                (line, paths)
            },
        )
        .boxed()
}

fn mountinfo_junk() -> BoxedStrategy<String> {
    prop_oneof![
        junk(),
        select(&["-", "", "shared:1", "/x"][..]).prop_map(String::from)
    ]
    .boxed()
}

/// /proc/PID/mountinfo with single spaces between fields, as the kernel
/// writes it; and each escaped path with the path it came from.
fn mountinfo_text() -> BoxedStrategy<(String, HashMap<String, String>)> {
    (
        prop::collection::vec(mount_line(), 0..8),
        layout(" ", false, false, mountinfo_junk()),
    )
        .prop_map(|(mounts, lay)| {
            let mut lines = Vec::new();
            let mut paths = HashMap::new();
            for (line, p) in mounts {
                lines.push(line);
                paths.extend(p);
            }
            (lay.render(lines), paths)
        })
        .boxed()
}

fn naive_mountinfo(s: &str) -> Vec<Result<Mount<'_>, ParseError>> {
    if s.is_empty() {
        return Vec::new();
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    let mut out = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let mount = (|| {
            let fixed = f.get(..6)?;
            if fixed.iter().any(|x| x.is_empty()) {
                return None;
            }
            let sep = 6 + f[6..].iter().position(|x| *x == "-")?;
            let &[fs_type, source, super_options] = &f[sep + 1..] else {
                return None;
            };
            if fs_type.is_empty() || super_options.is_empty() {
                return None;
            }
            Some(Mount {
                dev: f[2].as_bytes(),
                root: f[3].as_bytes(),
                mount_point: f[4].as_bytes(),
                fs_type: fs_type.as_bytes(),
                source: source.as_bytes(),
                super_options: super_options.as_bytes(),
            })
        })();
        out.push(mount.ok_or(at(MALFORMED, i + 1)));
    }
    out
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn mountinfo_entries_match_naive((text, paths) in mountinfo_text()) {
        let got: Vec<_> = mountinfo::entries(text.as_bytes()).collect();
        prop_assert_eq!(&got, &naive_mountinfo(&text));
        let mut buf = [0u8; mountinfo::PATH_MAX];
        for m in got.iter().flatten() {
            for raw in [m.root, m.mount_point] {
                let decoded = mountinfo::unescape(raw, &mut buf).map(<[u8]>::to_vec);
                prop_assert_eq!(decoded.as_deref(), Some(&naive_unescape(raw)[..]));
                if let Some(path) = std::str::from_utf8(raw).ok().and_then(|r| paths.get(r)) {
                    prop_assert_eq!(decoded.as_deref(), Some(path.as_bytes()));
                }
            }
        }
    }
}
