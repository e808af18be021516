//! Issue 42, item 2: a budget the operator gives a pool, off any cache
//! key (`status --pool DIR --set-budget MIB` writes `DIR/budget`), for a
//! limit none of its builds can see. Without root, on a host with GiBs
//! free: two lanes of six ~150 MiB jobs each, `--max-jobs 6`, in a pool
//! whose budget is 400 MiB, run at most two jobs at once between them
//! (planned from the host, they ran twelve); each says the budget once;
//! `status --pool` shows it; `none` removes it; a bad value is a usage
//! error.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{BIN, HOG, makefile, output_within, overlap, scratch};

fn status(pool: &Path, more: &[&str]) -> std::process::Output {
    output_within(
        Command::new(BIN)
            .args(["status", "--pool"])
            .arg(pool)
            .args(more)
            .env_remove("HEADROOM_POOL"),
        60,
    )
}

#[test]
fn two_lanes_share_the_budget_the_operator_set() {
    let d = scratch("budget");
    let pool = d.join("pool");
    let out = status(&pool, &["--set-budget", "400"]);
    assert!(out.status.success(), "{out:?}");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains(&format!(
            "  budget 400 MiB (set in {}/budget): its builds share it, whatever else they see\n",
            pool.display()
        )),
        "{screen}"
    );
    let lanes: Vec<_> = (0..2).map(|i| d.join(format!("lane{i}"))).collect();
    let mut script = String::new();
    for (i, lane) in lanes.iter().enumerate() {
        fs::create_dir_all(lane).unwrap();
        makefile(lane, 6, HOG);
        script.push_str(&format!(
            "(cd {} && {BIN} run --jobserver --max-jobs 6 --peak-mb 160 --pool {} --run-id lane{i} --out-dir out -- make) &\n",
            lane.display(),
            pool.display()
        ));
    }
    script.push_str("wait\n");
    let out = output_within(Command::new("sh").args(["-c", &script]), 240);
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!(
        "headroom: --pool {}: budget 400 MiB ({}/budget): the pool's builds share it, whatever else they see\n",
        pool.display(),
        pool.display()
    );
    assert_eq!(err.matches(&said).count(), 2, "once per lane:\n{err}");
    let (max, ended) = overlap(&lanes);
    assert_eq!(ended, 12, "{err}");
    // (400 − 32) / 160: two jobs in all, each lane at least its own one.
    assert_eq!(max, 2, "{err}");

    let out = status(&pool, &["--set-budget", "none", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let json = String::from_utf8_lossy(&out.stdout);
    assert!(json.contains("\"budget_mib\":null"), "{json}");
    assert!(!pool.join("budget").exists());
}

#[test]
fn a_bad_budget_or_no_pool_is_a_usage_error() {
    let d = scratch("budget-bad");
    for bad in ["0", "-1", "2560M", "lots"] {
        let out = status(&d.join("pool"), &["--set-budget", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
    }
    let out = output_within(
        Command::new(BIN)
            .args(["status", "--set-budget", "100"])
            .env_remove("HEADROOM_POOL"),
        60,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--set-budget names no pool"), "{err}");
    assert!(!d.join("pool").exists());
}

#[test]
fn a_fifo_at_the_temporary_name_does_not_hang_set_budget() {
    // Anyone may make files in a 1777 pool: a FIFO planted at the
    // temporary name a writer's pid gives (`.budget.PID.tmp`) must not
    // hold `status --set-budget` (nor the end of a run, which writes its
    // peak files the same way) in open(2) for ever.
    let d = scratch("budget-fifo");
    let pool = d.join("pool");
    fs::create_dir(&pool).unwrap();
    let script = format!(
        "mkfifo {p}/.budget.$$.tmp && exec {BIN} status --pool {p} --set-budget 300",
        p = pool.display()
    );
    let out = output_within(
        Command::new("sh")
            .args(["-c", &script])
            .env_remove("HEADROOM_POOL"),
        20,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    assert!(err.lines().count() <= 1, "{err}");
    if out.status.success() {
        let budget = fs::read_to_string(pool.join("budget")).unwrap();
        assert_eq!(budget, "headroom-budget 1\nbudget_mb 300\n");
    }
}

#[test]
fn removing_a_budget_that_cannot_be_removed_says_remove() {
    let d = scratch("budget-rm");
    let pool = d.join("pool");
    fs::create_dir_all(pool.join("budget")).unwrap();
    let out = status(&pool, &["--set-budget", "none"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        format!(
            "headroom: --pool {}: cannot remove its budget file: Is a directory\n",
            pool.display()
        )
    );
}

#[test]
fn with_root_headroom_pool_is_not_read_and_set_budget_says_so() {
    let d = scratch("budget-root");
    let board = concat!(env!("CARGO_MANIFEST_DIR"), "/boards/x86_64-vm-2c-24g");
    let out = output_within(
        Command::new(BIN)
            .args(["--root", board, "status", "--set-budget", "100"])
            .env("HEADROOM_POOL", d.join("pool")),
        60,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "headroom: status --set-budget names no pool: give --pool DIR ($HEADROOM_POOL is not read with --root)\n"
    );
    assert!(!d.join("pool").exists());
}
