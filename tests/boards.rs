//! Golden tests: `--root boards/<name>` reproduces `boards/<name>/expected/`.
//!
//! Run with `BLESS=1` (see `ci/bless-boards`) to rewrite the expected files
//! after a deliberate change, then review the diff.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;

/// The binary under test (`$HEADROOM_BIN` in ci/cross-test).
use common::headroom;

/// Columns that depend on the machine running the test, not on the tree:
/// epoch, iso, elapsed_s, and statvfs of the disk path and /tmp.
const HOST_COLUMNS: [usize; 8] = [0, 1, 2, 9, 10, 17, 18, 19];

fn mask(csv: &str) -> String {
    let mut out = String::new();
    for (n, line) in csv.lines().enumerate() {
        let fields: Vec<&str> = line.split(',').collect();
        let masked: Vec<&str> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if n > 0 && HOST_COLUMNS.contains(&i) {
                    "*"
                } else {
                    f
                }
            })
            .collect();
        out.push_str(&masked.join(","));
        out.push('\n');
    }
    out
}

/// Every captured root under boards/ (a directory with a proc/ tree):
/// its name and path.
fn board_roots() -> Vec<(String, std::path::PathBuf)> {
    let boards = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards");
    fs::read_dir(&boards)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|dir| dir.join("proc").is_dir())
        .map(|dir| (dir.file_name().unwrap().to_string_lossy().into_owned(), dir))
        .collect()
}

#[test]
fn every_board_reproduces_its_expected_record() {
    let mut seen = 0;
    for (name, dir) in board_roots() {
        seen += 1;
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("board-{name}"));
        let _ = fs::remove_dir_all(&out_dir);
        let out = headroom()
            .args([
                "record",
                "--count",
                "2",
                "--interval",
                "0",
                "--label",
                "board",
                "--run-id",
                "golden",
            ])
            .arg("--root")
            .arg(&dir)
            .arg("--out-dir")
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        let got = mask(&fs::read_to_string(out_dir.join("resources-golden.csv")).unwrap());
        let want_path = dir.join("expected/record.csv");
        if std::env::var_os("BLESS").is_some() {
            fs::create_dir_all(dir.join("expected")).unwrap();
            fs::write(&want_path, &got).unwrap();
        }
        let want = fs::read_to_string(&want_path)
            .unwrap_or_else(|e| panic!("{}: {e} (run ci/bless-boards)", want_path.display()));
        assert_eq!(
            got, want,
            "board {name}: record differs from expected/record.csv"
        );
        let summary = fs::read_to_string(out_dir.join("resources-golden.summary.txt")).unwrap();
        let got = memory_lines(&summary);
        let want_path = dir.join("expected/summary-memory.txt");
        if std::env::var_os("BLESS").is_some() {
            fs::write(&want_path, &got).unwrap();
        }
        let want = fs::read_to_string(&want_path)
            .unwrap_or_else(|e| panic!("{}: {e} (run ci/bless-boards)", want_path.display()));
        assert_eq!(
            got, want,
            "board {name}: the summary's memory lines differ from expected/summary-memory.txt"
        );
    }
    assert!(seen >= 2, "expected at least two boards, found {seen}");
}

/// The lines of a summary that the board's memory decides, with every UTC
/// time masked as `*`: PEAK MEMORY USE and MIN MEMORY AVAILABLE (the host's,
/// or a binding cgroup's), PEAK SWAP USE, the near-OOM count, its
/// threshold, which limit binds, and CGROUP HEADROOM. Disk, load and the
/// rest depend on the machine running the test.
fn memory_lines(summary: &str) -> String {
    let mut out = String::new();
    let mut take = false;
    for line in summary.lines() {
        if [
            "PEAK MEMORY USE:",
            "MIN MEMORY AVAILABLE",
            "CGROUP HEADROOM:",
        ]
        .iter()
        .any(|h| line.starts_with(h))
        {
            take = true;
        } else if line.is_empty() || line.starts_with("MIN DISK FREE") {
            take = false;
        }
        let whole = take
            || line.starts_with("PEAK SWAP USE:")
            || line.starts_with("memory that binds:")
            || line.contains("MB free RAM (near-OOM)");
        let kept = if whole {
            Some(line)
        } else if let Some(t) = line.strip_prefix("thresholds: ") {
            t.split(", low-disk").next()
        } else {
            None
        };
        if let Some(l) = kept {
            out.push_str(&mask_times(l));
            out.push('\n');
        }
    }
    out
}

/// `l` with each `YYYY-MM-DDTHH:MM:SSZ` replaced by `*`.
fn mask_times(l: &str) -> String {
    let b = l.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let is_time = b.len() - i >= shape.len()
            && shape.iter().zip(&b[i..]).all(|(&p, &c)| {
                if p == b'd' {
                    c.is_ascii_digit()
                } else {
                    p == c
                }
            });
        if is_time {
            out.push('*');
            i += shape.len();
        } else {
            let ch = l[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The planning commands whose whole output each board must reproduce.
const PLANS: [(&str, &[&str]); 5] = [
    ("status.txt", &["status"]),
    ("status.json", &["status", "--json"]),
    (
        "jobs-generic.txt",
        &["jobs", "--profile", "generic", "--explain"],
    ),
    (
        "jobs-heavy.txt",
        &["jobs", "--profile", "heavy", "--explain"],
    ),
    ("advise-heavy.txt", &["advise", "--profile", "heavy"]),
];

/// The job-count variables, cleared so the host's environment cannot leak
/// into a golden output.
const JOB_VARS: [&str; 6] = headroom::plan::jobs::ENV_VARS;

#[test]
fn every_board_reproduces_its_expected_plans_byte_for_byte() {
    let mut checked = 0;
    for (name, dir) in board_roots() {
        for (file, args) in PLANS {
            let mut cmd = headroom();
            cmd.arg("--root").arg(&dir).args(args);
            for v in JOB_VARS {
                cmd.env_remove(v);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{name} {args:?}: {out:?}");
            let got = String::from_utf8(out.stdout).unwrap();
            let want_path = dir.join("expected").join(file);
            if std::env::var_os("BLESS").is_some() {
                fs::create_dir_all(dir.join("expected")).unwrap();
                fs::write(&want_path, &got).unwrap();
            }
            let want = fs::read_to_string(&want_path)
                .unwrap_or_else(|e| panic!("{}: {e} (run ci/bless-boards)", want_path.display()));
            assert_eq!(
                got,
                want,
                "board {name}: `{}` differs from expected/{file}",
                args.join(" ")
            );
            checked += 1;
        }
    }
    assert!(
        checked >= PLANS.len() * 9,
        "expected nine boards with {} plans each, checked {checked}",
        PLANS.len()
    );
}

/// `status --json` of every board parses as JSON (python3's parser), and
/// each number on the board's status screen is one of its values.
#[test]
fn every_board_status_json_parses_and_holds_every_number_of_the_screen() {
    // Numbers of the screen: each word that is a number once `%`, `(`, `)`,
    // `;`, `,` and `:` are taken off its ends. Names with digits (zram0,
    // mmcblk0p2, v2) are not numbers.
    const CHECK: &str = r#"
import json, sys
doc = json.load(open(sys.argv[1]))
values = set()
def walk(v):
    if isinstance(v, bool) or v is None: return
    if isinstance(v, (int, float)): values.add(float(v))
    elif isinstance(v, dict): [walk(x) for x in v.values()]
    elif isinstance(v, list): [walk(x) for x in v]
walk(doc)
missing = []
for word in open(sys.argv[2]).read().split():
    w = word.strip("%();,:")
    try: n = float(w)
    except ValueError: continue
    if n not in values: missing.append(word)
if missing: sys.exit("numbers of the screen not in the JSON: %s" % missing)
"#;
    let mut seen = 0;
    for (name, dir) in board_roots() {
        let run = |args: &[&str]| {
            let out = headroom()
                .arg("--root")
                .arg(&dir)
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{name} {args:?}: {out:?}");
            out.stdout
        };
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("status-json-{name}"));
        fs::create_dir_all(&tmp).unwrap();
        fs::write(tmp.join("status.json"), run(&["status", "--json"])).unwrap();
        fs::write(tmp.join("status.txt"), run(&["status"])).unwrap();
        let out = Command::new("python3")
            .args(["-c", CHECK])
            .arg(tmp.join("status.json"))
            .arg(tmp.join("status.txt"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "board {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        seen += 1;
    }
    assert!(seen >= 2, "expected at least two boards, found {seen}");
}

/// Every directory under boards/ is a root the goldens cover (none skipped
/// for want of a `proc/` tree), and the 32-bit Pi OS board is among them:
/// its HighTotal/LowTotal meminfo and 32-bit process files run on every
/// binary ci/cross-test checks.
#[test]
fn every_board_directory_is_a_covered_root() {
    if std::env::var_os("BLESS").is_some() {
        return; // the other tests are writing expected/ right now
    }
    let boards = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards");
    let roots: Vec<String> = board_roots().into_iter().map(|(name, _)| name).collect();
    for e in fs::read_dir(&boards).unwrap() {
        let dir = e.unwrap().path();
        if dir.is_dir() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                roots.contains(&name),
                "boards/{name} has no proc/: no golden covers it"
            );
            for (file, _) in PLANS {
                assert!(
                    dir.join("expected").join(file).is_file(),
                    "boards/{name}/expected/{file} missing"
                );
            }
        }
    }
    assert!(roots.iter().any(|n| n == "rpi3b-1g-armhf"), "{roots:?}");
}
