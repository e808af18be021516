//! SQLite's amalgamation, `sqlite3.c`, as the root-only compile tests
//! build it (tests/container.rs, tests/job_weights.rs): crates.io's
//! `libsqlite3-sys` 0.30.1 (SQLite 3.46.0), fetched with cargo into
//! `$HEADROOM_CACHE` (default `~/.cache/headroom`) and checked by its
//! SHA-256. A cc1 of it at `-O2 -g` peaks at ~350-360 MiB and takes
//! ~42-47 s alone on this machine.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The crate whose bundled source is built, and where the file is in it.
const SQLITE_CRATE: &str = "libsqlite3-sys";
const SQLITE_CRATE_VERSION: &str = "0.30.1";
const SQLITE_C_IN_CRATE: &str = "libsqlite3-sys-0.30.1/sqlite3/sqlite3.c";
/// `sqlite3.c` of SQLite 3.46.0 as that crate ships it.
const SQLITE_C_SHA256: &str = "c01235302fe80da901fb70c7622c39147e29d9f29b7f6eb746b23517f320c90d";

/// `sqlite3.c` from crates.io's `libsqlite3-sys` 0.30.1, in the cache
/// directory (`$HEADROOM_CACHE`, else `~/.cache/headroom`), checked by its
/// SHA-256. When missing, `cargo fetch` of a one-dependency manifest
/// brings the crate into cargo's own download cache (three tries, a pause
/// between), and tar takes the file out of it.
pub fn sqlite_source() -> PathBuf {
    let cache = std::env::var_os("HEADROOM_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cache/headroom"));
    let dest = cache.join(format!(
        "sqlite-{SQLITE_CRATE}-{SQLITE_CRATE_VERSION}/sqlite3.c"
    ));
    if sha256(&dest).as_deref() == Some(SQLITE_C_SHA256) {
        return dest;
    }
    let crate_file = fetch_crate(&cache.join("sqlite-fetch"));
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let part = dest.with_extension("c.part");
    let taken = Command::new("tar")
        .arg("-xzOf")
        .arg(&crate_file)
        .arg(SQLITE_C_IN_CRATE)
        .stdout(fs::File::create(&part).unwrap())
        .status()
        .unwrap();
    assert!(
        taken.success(),
        "tar -xzOf {}: {taken}",
        crate_file.display()
    );
    let got = sha256(&part);
    assert_eq!(
        got.as_deref(),
        Some(SQLITE_C_SHA256),
        "{} from {} is not the expected file",
        SQLITE_C_IN_CRATE,
        crate_file.display()
    );
    fs::rename(&part, &dest).unwrap();
    dest
}

/// The `.crate` file of [`SQLITE_CRATE`] in cargo's download cache,
/// fetched with `cargo fetch` from a manifest in `dir` when not there.
fn fetch_crate(dir: &Path) -> PathBuf {
    let name = format!("{SQLITE_CRATE}-{SQLITE_CRATE_VERSION}.crate");
    let find = || -> Option<PathBuf> {
        fs::read_dir(cargo_home().join("registry/cache"))
            .ok()?
            .flatten()
            .map(|d| d.path().join(&name))
            .find(|p| p.exists())
    };
    if let Some(p) = find() {
        return p;
    }
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"headroom-sqlite-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\
             [lib]\npath = \"lib.rs\"\n[dependencies]\n{SQLITE_CRATE} = \"={SQLITE_CRATE_VERSION}\"\n"
        ),
    )
    .unwrap();
    fs::write(dir.join("lib.rs"), "").unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for attempt in 1..=3u64 {
        let fetched = Command::new(&cargo)
            .args(["fetch", "--manifest-path"])
            .arg(dir.join("Cargo.toml"))
            .status();
        if fetched.is_ok_and(|s| s.success())
            && let Some(p) = find()
        {
            return p;
        }
        eprintln!("cargo fetch of {name}: try {attempt} failed");
        std::thread::sleep(Duration::from_secs(5 * attempt));
    }
    panic!("cannot fetch {name} with cargo");
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()))
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

/// The SHA-256 of `path` in hex (sha256sum(1)), or `None` when it cannot
/// be read.
fn sha256(path: &Path) -> Option<String> {
    let out = Command::new("sha256sum").arg(path).output().ok()?;
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    })
}
