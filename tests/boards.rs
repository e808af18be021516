//! Golden tests: `--root boards/<name>` reproduces `boards/<name>/expected/`.
//!
//! Run with `BLESS=1` (see `ci/bless-boards`) to rewrite the expected files
//! after a deliberate change, then review the diff.

use std::fs;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

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

#[test]
fn every_board_reproduces_its_expected_record() {
    let boards = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards");
    let mut seen = 0;
    for entry in fs::read_dir(&boards).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("proc").is_dir() {
            continue;
        }
        seen += 1;
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("board-{name}"));
        let _ = fs::remove_dir_all(&out_dir);
        let out = Command::new(BIN)
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
    }
    assert!(seen >= 2, "expected at least two boards, found {seen}");
}
