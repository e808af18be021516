//! `status` reads each file once (issue 27): under strace(1), `headroom
//! status` and `status --json` open every regular file of `/proc` and
//! `/sys` (or of a board tree) at most once, on this host and on every
//! board of `boards/`. Skipped when strace is not installed.
//!
//! Counted: opens of regular files (not `O_DIRECTORY`), failed ones too,
//! from the opening of the root on (what the C library reads before
//! `main` is not headroom's), each resolved to a whole path with `-y`.
//! That includes the Pi's power flags (`get_throttled`, `rpi_volt`'s
//! `in0_lcrit_alarm`: discovery's read is the figure) and each hwmon
//! device's `name` (listed once for the temperature and the power
//! discoveries, `kernel::hwmon`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Whether strace runs here. Without it the tests say "skipped", unless
/// `HEADROOM_REQUIRE_STRACE` is set (ci/test installs strace and sets it):
/// then a missing strace fails them.
fn have_strace() -> bool {
    let here = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        here || std::env::var_os("HEADROOM_REQUIRE_STRACE").is_none(),
        "HEADROOM_REQUIRE_STRACE is set but strace(1) does not run"
    );
    here
}

/// The regular files `headroom ARGS` opened more than once, with the count.
fn opened_twice(args: &[&str]) -> Vec<(String, usize)> {
    let log = std::env::temp_dir().join(format!(
        "headroom-status-once-{}-{}.strace",
        std::process::id(),
        args.join("_").replace('/', "_")
    ));
    let out = Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", "trace=open,openat", "-o"])
        .arg(&log)
        .arg(common::BIN)
        .args(args)
        .output()
        .expect("strace runs");
    assert!(out.status.success(), "headroom {args:?}: {out:?}");
    let text = std::fs::read_to_string(&log).expect("the strace log");
    let _ = std::fs::remove_file(&log);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut rooted = false;
    for line in text.lines() {
        let Some((path, dir)) = opened(line) else {
            continue;
        };
        // The root is headroom's first directory opened.
        if !rooted {
            rooted = dir;
            continue;
        }
        if !dir {
            *seen.entry(path).or_default() += 1;
        }
    }
    seen.into_iter().filter(|(_, n)| *n > 1).collect()
}

/// The whole path an `open`/`openat` line of `strace -y` opened, and
/// whether it was a directory (`O_DIRECTORY`).
fn opened(line: &str) -> Option<(String, bool)> {
    let at = line.find("open")?;
    let call = &line[at..];
    let args = call
        .strip_prefix("openat(")
        .or(call.strip_prefix("open("))?;
    let q = args.find('"')?;
    let name_end = q + 1 + args[q + 1..].find('"')?;
    let name = &args[q + 1..name_end];
    // `openat(3</some/dir>, "name", …)`: the directory's path in <>.
    let base = args[..q]
        .find('<')
        .and_then(|l| args[l + 1..q].find('>').map(|r| &args[l + 1..l + 1 + r]));
    let path = match base {
        Some(b) if !name.starts_with('/') => format!("{b}/{name}"),
        _ => name.to_string(),
    };
    Some((path, args[name_end..].contains("O_DIRECTORY")))
}

/// The paths of `twice` under `/proc`, `/sys` or a board tree.
fn status_own(twice: Vec<(String, usize)>, under: &str) -> Vec<(String, usize)> {
    twice
        .into_iter()
        .filter(|(p, _)| p.starts_with(under) || p.starts_with("/proc/") || p.starts_with("/sys/"))
        .collect()
}

#[test]
fn status_opens_each_file_of_this_host_once() {
    if !have_strace() {
        eprintln!("skipped: no strace");
        return;
    }
    for args in [&["status"][..], &["status", "--json"][..]] {
        let twice = status_own(opened_twice(args), "/proc/");
        assert!(
            twice.is_empty(),
            "headroom {args:?} opened twice: {twice:#?}"
        );
    }
}

#[test]
fn status_opens_each_file_of_every_board_once() {
    if !have_strace() {
        eprintln!("skipped: no strace");
        return;
    }
    let boards = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards");
    let mut wrong = Vec::new();
    for e in std::fs::read_dir(&boards).unwrap() {
        let dir = e.unwrap().path();
        if !dir.join("proc").is_dir() {
            continue;
        }
        let root = dir.to_str().unwrap();
        for json in [false, true] {
            let mut args = vec!["--root", root, "status"];
            if json {
                args.push("--json");
            }
            for (p, n) in status_own(opened_twice(&args), root) {
                wrong.push(format!("{args:?}: {p} ({n} times)"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "opened more than once:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn strace_lines_are_read() {
    let l =
        r#"123 openat(3</work/b>, "proc/meminfo", O_RDONLY|O_CLOEXEC) = 4</work/b/proc/meminfo>"#;
    assert_eq!(opened(l), Some(("/work/b/proc/meminfo".into(), false)));
    let l = r#"123 open("/", O_RDONLY|O_LARGEFILE|O_CLOEXEC|O_DIRECTORY) = 3</>"#;
    assert_eq!(opened(l), Some(("/".into(), true)));
    let l = r#"123 openat(AT_FDCWD</tmp>, "/proc/self/maps", O_RDONLY) = 3</proc/1/maps>"#;
    assert_eq!(opened(l), Some(("/proc/self/maps".into(), false)));
    assert_eq!(opened("123 +++ exited with 0 +++"), None);
}
