//! Defaults from the environment: non-empty variables, the build-disk
//! path, `HEADROOM_NO_MLOCK`.

use std::io::Write;

use super::messages::{io_text, shown};

/// `$key` when set, non-empty and UTF-8 (not UTF-8: one warning, then as unset).
pub fn env_nonempty(key: &str) -> Option<String> {
    match std::env::var(key) {
        Ok(v) => Some(v).filter(|v| !v.is_empty()),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(v)) => {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: warning: ${key} ('{}') is not valid UTF-8: ignored",
                shown(&v.to_string_lossy())
            );
            None
        }
    }
}

/// `--disk-path`, else $BUILDKIT_CACHE_DIR, else $HOME, else `/`; `/` when
/// the path is not a directory (as the toolchain does), said in one
/// warning on stderr.
pub fn disk_path(arg: Option<String>) -> String {
    let p = arg
        .or_else(|| env_nonempty("BUILDKIT_CACHE_DIR"))
        .or_else(|| env_nonempty("HOME"))
        .unwrap_or_else(|| "/".into());
    let why = match std::fs::metadata(&p) {
        Ok(m) if m.is_dir() => return p,
        Ok(_) => "is not a directory".to_string(),
        Err(e) => io_text(&e),
    };
    let _ = writeln!(
        std::io::stderr(),
        "headroom: warning: disk path '{}': {why}: using / instead",
        shown(&p)
    );
    "/".into()
}

/// The build-disk path for the planning commands: [`disk_path`] on the live
/// host; in a `--root` tree, `--disk-path` or the tree's `/` (this
/// machine's $HOME means nothing there).
pub fn disk_for(live: bool, arg: Option<String>) -> String {
    if live {
        disk_path(arg)
    } else {
        arg.unwrap_or_else(|| "/".into())
    }
}

/// `HEADROOM_NO_MLOCK` is set (to anything but `0`): record and run do not
/// lock their memory (for measuring what the lock is worth).
pub fn no_mlock() -> bool {
    env_nonempty("HEADROOM_NO_MLOCK").is_some_and(|v| v != "0")
}
