//! What CMD used, as `run` reports it, from the binary under test: this
//! build's, or `$HEADROOM_BIN` (ci/cross-test runs it for every static
//! binary under qemu-user: a 32-bit one reads the kernel's struct rusage
//! of 32-bit longs, where a layout read wrong gives 0 or a time as a size).

use std::fs;

mod common;

/// One `--actions` row of a command holding ~200 MiB: its max RSS is near
/// that (not 0, not a time read as a size) and its CPU is not nothing.
#[test]
fn actions_row_has_the_commands_max_rss_and_cpu() {
    let d = common::scratch("rss");
    let actions = d.join("a.csv");
    let out = common::headroom()
        .args(["run", "--actions"])
        .arg(&actions)
        .args(["--", "sh", "-c", "head -c 200M /dev/zero | tail >/dev/null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = fs::read_to_string(&actions).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap_or("").split(',').collect();
    let row: Vec<&str> = text.lines().nth(1).unwrap_or("").split(',').collect();
    let col = |name: &str| -> f64 {
        let i = header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no {name}: {text}"));
        row.get(i)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {text}"))
    };
    // tail keeps the newline-free stream whole (see tests/run.rs).
    let mib = col("max_rss_mb");
    assert!(
        (180.0..=260.0).contains(&mib),
        "max RSS {mib} MiB, expected ~200: {text}"
    );
    // Writing 200 MiB of pages costs the kernel milliseconds at least.
    assert!(col("user_s") + col("sys_s") > 0.0, "no CPU time: {text}");
}
