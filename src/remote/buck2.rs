//! One finished Buck2 action (`ActionExecutionEnd`), as both of its
//! encodings (the binary event log and `buck2 log show` JSON) give it, and
//! what it names: a remote action to look up, a local one to count, or a
//! failed one that was killed.
//!
//! # References
//! Buck2 `app/buck2_data/data.proto` (`ActionExecutionEnd`, `ActionKey`,
//! `ActionName`, `CommandExecution`, `CommandExecutionDetails`,
//! `CommandExecutionKind`, `RemoteCommand`, `CacheHitType`);
//! `app/buck2_execute/src/execute/kind.rs` (`to_proto`: an executed remote
//! command, an action-cache hit and a remote dep-file-cache hit are all a
//! `RemoteCommand` with `action_digest`; only the dep-file hit sets
//! `remote_dep_file_key`, the key its result is stored under).

use std::string::{String, ToString};
use std::vec::Vec;

use crate::remote::action::{Collector, Killed, Named, Origin};
use crate::remote::digest::{DigestError, parse_digest};

/// gcc's words when its compiler proper (cc1, cc1plus) is SIGKILLed, as
/// the OOM killer does: `... Killed signal terminated program cc1plus`.
pub const KILLED_TEXT: &str = "Killed signal terminated program";

/// `CacheHitType.REMOTE_DEP_FILE_CACHE` (data.proto).
pub const REMOTE_DEP_FILE_CACHE: i32 = 1;

/// How the command shown for an action ran (the last of `commands`:
/// "the one that should be shown to the user will always be last").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `RemoteCommand`: ran remotely, or a remote cache hit.
    Remote {
        /// `action_digest`, `HASH:SIZE`.
        action_digest: String,
        /// `remote_dep_file_key` (a dep-file-cache hit), `HASH:SIZE`.
        remote_dep_file_key: Option<String>,
        /// `cache_hit_type` (`CacheHitType`: 0 action cache, 1 remote dep
        /// file cache, 2 executed).
        cache_hit_type: i32,
    },
    /// `LocalCommand`, `OmittedLocalCommand`, `WorkerCommand` or
    /// `WorkerInitCommand`: ran on the build host.
    Local,
}

/// The fields of one `ActionExecutionEnd` on the way to a [`Named`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionEnd {
    /// `key.owner`'s target, `package:name` (`root//foo:bar`).
    pub target: Option<String>,
    /// `name.category` (`cxx_compile`).
    pub category: String,
    /// `name.identifier` (`foo.cpp`).
    pub identifier: String,
    /// `failed`.
    pub failed: bool,
    /// The last command's kind; `None` for an action with no command
    /// (write, symlink, copy: done inside Buck2).
    pub command: Option<Command>,
    /// Every text of a failed action that may say why: each command's
    /// `stdout`, `stderr`, `additional_message`, `status.error.error`, and
    /// the action's `error.unknown`.
    pub texts: Vec<String>,
}

impl ActionEnd {
    /// What the action is called: `target (identifier)`, or either alone.
    pub fn id(&self) -> String {
        match (&self.target, self.identifier.is_empty()) {
            (Some(t), false) => std::format!("{t} ({})", self.identifier),
            (Some(t), true) => t.clone(),
            (None, _) => self.identifier.clone(),
        }
    }

    /// The line of its text that says it was killed, trimmed.
    pub fn killed_line(&self) -> Option<String> {
        self.texts
            .iter()
            .flat_map(|t| t.lines())
            .find(|l| l.contains(KILLED_TEXT))
            .map(|l| l.trim().to_string())
    }
}

/// Gather `a` into `out`: a remote action's digest (a dep-file-cache hit's
/// `remote_dep_file_key`, else `action_digest`), a local one counted, a
/// failed one that was killed kept. An action with no command is neither.
///
/// # Errors
/// The digest text and why it is not a digest.
pub fn gather(
    a: &ActionEnd,
    origin: Origin,
    out: &mut Collector,
) -> Result<(), (String, DigestError)> {
    if a.failed
        && let Some(line) = a.killed_line()
    {
        out.killed(Killed {
            id: a.id(),
            category: a.category.clone(),
            line,
        });
    }
    match &a.command {
        None => {}
        Some(Command::Local) => out.local(),
        Some(Command::Remote {
            action_digest,
            remote_dep_file_key,
            cache_hit_type,
        }) => {
            let text = match remote_dep_file_key {
                Some(k) if *cache_hit_type == REMOTE_DEP_FILE_CACHE && !k.is_empty() => k,
                _ => action_digest,
            };
            let digest = parse_digest(text).map_err(|e| (text.clone(), e))?;
            out.remote(Named {
                id: a.id(),
                category: a.category.clone(),
                digest,
                origin,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::vec;

    const H: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn remote(digest: &str) -> ActionEnd {
        ActionEnd {
            target: Some("root//app:main".to_string()),
            category: "cxx_compile".to_string(),
            identifier: "main.cpp".to_string(),
            command: Some(Command::Remote {
                action_digest: digest.to_string(),
                remote_dep_file_key: None,
                cache_hit_type: 2,
            }),
            ..ActionEnd::default()
        }
    }

    #[test]
    fn remote_local_and_commandless() {
        let mut out = Collector::new();
        gather(&remote(&format!("{H}:42")), Origin::Buck2Log, &mut out).unwrap();
        let local = ActionEnd {
            command: Some(Command::Local),
            ..remote("")
        };
        gather(&local, Origin::Buck2Log, &mut out).unwrap();
        let write = ActionEnd {
            command: None,
            ..remote("")
        };
        gather(&write, Origin::Buck2Log, &mut out).unwrap();
        let found = out.finish();
        assert_eq!(found.local, 1);
        assert_eq!(found.actions.len(), 1);
        let n = &found.actions[0];
        assert_eq!(n.id, "root//app:main (main.cpp)");
        assert_eq!(n.category, "cxx_compile");
        assert_eq!(n.digest.size_bytes, 42);
    }

    // kind.rs: a dep-file-cache hit is stored under remote_dep_file_key.
    #[test]
    fn dep_file_hit_uses_its_key() {
        let other = "f".repeat(64);
        let mut a = remote(&format!("{H}:42"));
        a.command = Some(Command::Remote {
            action_digest: format!("{H}:42"),
            remote_dep_file_key: Some(format!("{other}:7")),
            cache_hit_type: REMOTE_DEP_FILE_CACHE,
        });
        let mut out = Collector::new();
        gather(&a, Origin::Buck2Json, &mut out).unwrap();
        assert_eq!(out.finish().actions[0].digest.hash, other);
    }

    #[test]
    fn killed_only_when_failed() {
        let mut a = remote(&format!("{H}:42"));
        a.texts = vec![
            "In file included from x.h\ng++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.".to_string(),
        ];
        let mut out = Collector::new();
        gather(&a, Origin::Buck2Log, &mut out).unwrap();
        a.failed = true;
        gather(&a, Origin::Buck2Log, &mut out).unwrap();
        let found = out.finish();
        assert_eq!(found.killed.len(), 1);
        assert_eq!(
            found.killed[0].line,
            "g++: fatal error: Killed signal terminated program cc1plus"
        );
        // The same digest twice: once.
        assert_eq!(found.actions.len(), 1);
    }

    #[test]
    fn a_bad_digest_is_an_error_with_its_text() {
        let mut out = Collector::new();
        let e = gather(&remote("nope"), Origin::Buck2Log, &mut out).unwrap_err();
        assert_eq!(e, ("nope".to_string(), DigestError::NoSeparator));
    }

    #[test]
    fn ids() {
        let mut a = remote("");
        assert_eq!(a.id(), "root//app:main (main.cpp)");
        a.identifier.clear();
        assert_eq!(a.id(), "root//app:main");
        a.target = None;
        a.identifier = "x".to_string();
        assert_eq!(a.id(), "x");
    }
}
