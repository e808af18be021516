//! Faults on purpose: SIGKILL at random moments, a disk that fills (the
//! latter needs root to mount a tiny tmpfs: `#[ignore]`d in a plain
//! `cargo test`, run by `ci/test` as root, reported skipped otherwise).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_headroom");

fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faults-{name}"));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Every line is a whole row: 25 fields, context quoted, newline-terminated.
fn assert_whole_rows(csv: &str) {
    assert!(
        csv.is_empty() || csv.ends_with('\n'),
        "partial last row: {csv:?}"
    );
    for (i, l) in csv.lines().enumerate() {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 25, "line {i}: {l:?}");
        if i > 0 {
            assert!(
                f[13].starts_with('"') && f[13].ends_with('"'),
                "line {i}: {l:?}"
            );
        }
    }
}

#[test]
fn sigkill_at_random_moments_never_leaves_half_a_row() {
    let d = scratch("kill");
    // A small deterministic spread of kill times, 0–40 ms after start.
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for round in 0..40 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut child = Command::new(BIN)
            .args(["record", "--interval", "0", "--run-id", "k"])
            .arg("--out-dir")
            .arg(&d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(x % 40));
        child.kill().unwrap();
        child.wait().unwrap();
        let csv = fs::read_to_string(d.join("resources-k.csv")).unwrap_or_default();
        assert_whole_rows(&csv);
        if round == 39 {
            assert!(csv.lines().count() > 1, "no row was ever written");
        }
    }
}

/// Runs `sh -c SCRIPT`, true when it succeeded.
fn sh(script: &str) -> bool {
    Command::new("sh")
        .args(["-c", script])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
#[ignore = "needs root to mount a 64 KiB tmpfs; ci/test runs it"]
fn a_full_disk_loses_rows_not_the_sampler_and_writes_again_later() {
    let d = scratch("full");
    let mnt = d.join("tiny");
    fs::create_dir_all(&mnt).unwrap();
    let m = mnt.display().to_string();
    assert!(
        sh(&format!("mount -t tmpfs -o size=64k tmpfs {m}")),
        "cannot mount a tmpfs (needs root)"
    );
    let child = Command::new(BIN)
        .args(["record", "--interval", "0.05", "--run-id", "f"])
        .arg("--out-dir")
        .arg(&mnt)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Fill the filesystem, hold it full, then free it.
    std::thread::sleep(Duration::from_millis(300));
    sh(&format!(
        "dd if=/dev/zero of={m}/filler bs=4k 2>/dev/null; true"
    ));
    // Rows first fill the CSV's last 4 KiB page; 2 s of rows overflow it.
    std::thread::sleep(Duration::from_millis(2000));
    sh(&format!("rm -f {m}/filler"));
    std::thread::sleep(Duration::from_millis(600));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let csv = fs::read_to_string(mnt.join("resources-f.csv")).unwrap_or_default();
    let summary = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    sh(&format!("umount {m}"));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_whole_rows(&csv);
    assert_eq!(
        err.matches("cannot write a row").count(),
        1,
        "warned once:\n{err}"
    );
    assert!(err.contains("writing resources-f.csv again"), "{err}");
    assert!(
        summary.contains("rows lost (the CSV could not be written): "),
        "{summary}"
    );
    let rows = csv.lines().count() - 1;
    let samples: usize = summary
        .split("samples=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(samples > rows, "{samples} samples, {rows} rows written");
}
