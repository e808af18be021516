//! The arguments before argh sees them: `--version`, `--opt=value` split
//! into `--opt value`, and an unknown command or option named with the
//! nearest known one. argh has none of these.
//!
//! The known commands and options are argh's own ([`argh::ArgsInfo`],
//! derived beside `FromArgs` on every struct of [`super::options`]), so this
//! pass cannot drift from what argh accepts. Nothing from the first `--`
//! on is looked at, nor anything from the first word of a greedy
//! positional (`run`'s CMD without `--`), nor an option's value.

use argh::{CommandInfoWithArgs, FlagInfo, FlagInfoKind, Optionality};

use super::suggest::nearest;

/// What the command line asks for before argh parses it. (`Cli`'s
/// `version` switch is there for `--help` and this table: argh itself
/// would want a subcommand after it.)
#[derive(Debug, PartialEq, Eq)]
pub enum Prepared {
    /// `--version` or `-V` before the subcommand: print [`version_line`].
    Version,
    /// The arguments for argh, each `--opt=value` as `--opt`, `value`;
    /// and where CMD (`run`'s words after `--`, or from its first
    /// positional word) starts among the arguments given to [`prepare`],
    /// so that its raw bytes can be passed on untouched.
    Args(Vec<String>, Option<usize>),
}

/// Rewrites `args` (without the program name) for argh, as [`Prepared`].
///
/// # Errors
/// A usage message (exit 2): an unknown command or long option, with the
/// nearest known one when one is near (`unknown command `stauts`; did you
/// mean `status`?`).
pub fn prepare(args: &[String], top: &CommandInfoWithArgs) -> Result<Prepared, String> {
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut cmd: Option<&CommandInfoWithArgs> = None;
    let mut it = args.iter();
    let mut cmd_at = None;
    while let Some(a) = it.next() {
        let here = cmd.unwrap_or(top);
        if a == "--" {
            out.push(a.clone());
            cmd_at = Some(args.len() - it.len());
            break;
        }
        if cmd.is_none() && (a == "--version" || a == "-V") {
            return Ok(Prepared::Version);
        }
        if a.len() > 2
            && let Some(long) = a.strip_prefix("--")
        {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some(flag) = here
                .flags
                .iter()
                .find(|f| f.long.strip_prefix("--") == Some(name))
            else {
                return Err(unknown_option(
                    &format!("--{name}"),
                    cmd.map(|c| c.name),
                    here,
                ));
            };
            match (takes_value(flag), value) {
                // `--out-dir=$UNSET`: an empty value is a mistake, not a path.
                (true, Some("")) => return Err(format!("option `--{name}=` has an empty value")),
                (true, Some(v)) => out.extend([format!("--{name}"), v.to_string()]),
                (true, None) => out.extend([a.clone()].into_iter().chain(it.next().cloned())),
                (false, Some(_)) => return Err(format!("option `--{name}` takes no value")),
                (false, None) => out.push(a.clone()),
            }
        } else if a.len() > 1 && a.starts_with('-') {
            // A short option (`-o FILE`, `-h`): argh judges it; its value is not ours.
            let short = a.chars().nth(1);
            let flag = here
                .flags
                .iter()
                .find(|f| f.short.is_some() && f.short == short);
            out.push(a.clone());
            if flag.is_some_and(takes_value) && a.chars().count() == 2 {
                out.extend(it.next().cloned());
            }
        } else if cmd.is_none() {
            if a == "help" {
                out.push(a.clone());
                break;
            }
            let Some(sub) = top.commands.iter().find(|s| s.name == a.as_str()) else {
                return Err(unknown_command(a, top));
            };
            cmd = Some(&sub.command);
            out.push(a.clone());
        } else {
            out.push(a.clone());
            if here
                .positionals
                .iter()
                .any(|p| p.optionality == Optionality::Greedy)
            {
                cmd_at = Some(args.len() - it.len() - 1);
                break;
            }
        }
    }
    out.extend(it.cloned());
    Ok(Prepared::Args(out, cmd_at))
}

fn takes_value(f: &FlagInfo) -> bool {
    matches!(f.kind, FlagInfoKind::Option { .. })
}

fn unknown_command(typed: &str, top: &CommandInfoWithArgs) -> String {
    let names = top.commands.iter().map(|s| s.name);
    match nearest(typed, names) {
        Some(near) => format!("unknown command `{typed}`; did you mean `{near}`?"),
        None => {
            let all: Vec<&str> = top.commands.iter().map(|s| s.name).collect();
            format!("unknown command `{typed}` (commands: {})", all.join(", "))
        }
    }
}

fn unknown_option(typed: &str, cmd: Option<&str>, here: &CommandInfoWithArgs) -> String {
    let of = match cmd {
        Some(c) => format!(" for `{c}`"),
        None => String::new(),
    };
    let longs = here.flags.iter().map(|f| f.long).filter(|l| !l.is_empty());
    match nearest(typed, longs) {
        Some(near) => format!("unknown option `{typed}`{of}; did you mean `{near}`?"),
        None => format!("unknown option `{typed}`{of}"),
    }
}

/// `headroom VERSION (TARGET)`: the crate's version and the target this
/// binary was built for, e.g. `headroom 0.1.0 (aarch64-unknown-linux-musl)`;
/// a build with the feature `remote` (the remote reader, `headroom-remote`)
/// adds `, with actions --remote`.
pub fn version_line() -> String {
    let remote = if cfg!(feature = "remote") {
        ", with actions --remote"
    } else {
        ""
    };
    format!(
        "headroom {} ({}){remote}",
        env!("CARGO_PKG_VERSION"),
        target()
    )
}

/// argh's usage error as one line: its words joined, its first letter
/// lower-case and no full stop, as the other messages, and the help to read: the
/// command's own (`headroom summarize --help`) when `args` (as argh got
/// them) name one of `top`'s commands, else the top-level one.
pub fn usage_line(
    argh_output: &str,
    name: &str,
    args: &[&str],
    top: &CommandInfoWithArgs,
) -> String {
    let words: Vec<&str> = argh_output.split_whitespace().collect();
    let text = words.join(" ");
    let text = text.strip_suffix('.').unwrap_or(&text);
    // argh's messages are ASCII (char::to_lowercase would bring the
    // Unicode case tables into the binary).
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(..1) {
        first.make_ascii_lowercase();
    }
    let sub = args
        .iter()
        .find(|a| top.commands.iter().any(|c| c.name == **a));
    match sub {
        Some(sub) => format!("{text} (see {name} {sub} --help)"),
        None => format!("{text} (see {name} --help)"),
    }
}

/// The target triple, from the compiler's `cfg`s (no build script): the
/// architecture as rustc's target names spell it (`armv7` for ARMv7 code,
/// `arm` for ARMv6; `riscv64gc`, the only riscv64 Linux target), vendor
/// `unknown`, `linux`, then the C library and ABI (`musl`, `gnu`,
/// `musleabihf`).
pub fn target() -> String {
    let arch = match std::env::consts::ARCH {
        "arm" if cfg!(target_feature = "v7") => "armv7",
        "riscv64" => "riscv64gc",
        a => a,
    };
    let env = if cfg!(target_env = "musl") {
        "musl"
    } else if cfg!(target_env = "gnu") {
        "gnu"
    } else {
        ""
    };
    let abi = if cfg!(target_abi = "eabihf") {
        "eabihf"
    } else if cfg!(target_abi = "eabi") {
        "eabi"
    } else {
        ""
    };
    format!("{arch}-unknown-{}-{env}{abi}", std::env::consts::OS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::options::Cli;
    use argh::ArgsInfo;

    fn prep(args: &[&str]) -> Result<Prepared, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        prepare(&args, &Cli::get_args_info())
    }

    fn ok(args: &[&str]) -> Vec<String> {
        match prep(args) {
            Ok(Prepared::Args(a, _)) => a,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn opt_equals_value_becomes_two_words() {
        assert_eq!(
            ok(&["jobs", "--profile=heavy"]),
            ["jobs", "--profile", "heavy"]
        );
        assert_eq!(ok(&["--root=b/x", "status"]), ["--root", "b/x", "status"]);
        // An empty value (`--out-dir=$UNSET`) and a value for a switch are
        // usage errors, said plainly (argh would say "Unrecognized").
        assert_eq!(
            prep(&["jobs", "--profile="]),
            Err("option `--profile=` has an empty value".into())
        );
        assert_eq!(
            prep(&["jobs", "--explain=yes"]),
            Err("option `--explain` takes no value".into())
        );
        // Only the first `=` splits.
        assert_eq!(ok(&["run", "--label=a=b"]), ["run", "--label", "a=b"]);
    }

    #[test]
    fn nothing_after_dashdash_or_a_greedy_positional_or_in_a_value_is_touched() {
        let cmd = ["run", "--interval=1", "--", "echo", "--x=y", "--stauts"];
        assert_eq!(
            ok(&cmd),
            ["run", "--interval", "1", "--", "echo", "--x=y", "--stauts"]
        );
        assert_eq!(ok(&["run", "make", "--x=y"]), ["run", "make", "--x=y"]);
        assert_eq!(
            ok(&["run", "--label", "--x=y"]),
            ["run", "--label", "--x=y"]
        );
        assert_eq!(
            ok(&["plot", "-o", "--x=y", "a.csv"]),
            ["plot", "-o", "--x=y", "a.csv"]
        );
    }

    #[test]
    fn unknown_command_and_option_name_the_nearest() {
        assert_eq!(
            prep(&["stauts"]),
            Err("unknown command `stauts`; did you mean `status`?".into())
        );
        assert_eq!(
            prep(&["run", "--intervl", "1", "--", "true"]),
            Err("unknown option `--intervl` for `run`; did you mean `--interval`?".into())
        );
        assert_eq!(
            prep(&["--rot=x", "status"]),
            Err("unknown option `--rot`; did you mean `--root`?".into())
        );
        let far = prep(&["frobnicate"]).unwrap_err();
        assert!(
            far.starts_with("unknown command `frobnicate` (commands: record, run, "),
            "{far}"
        );
        assert_eq!(
            prep(&["status", "--frobnicate"]),
            Err("unknown option `--frobnicate` for `status`".into())
        );
    }

    #[test]
    fn help_and_version_pass() {
        assert_eq!(prep(&["--version"]), Ok(Prepared::Version));
        assert_eq!(prep(&["-V"]), Ok(Prepared::Version));
        assert_eq!(ok(&["status", "--help"]), ["status", "--help"]);
        assert_eq!(ok(&["help", "status"]), ["help", "status"]);
        assert_eq!(ok(&["--help"]), ["--help"]);
    }

    #[test]
    fn version_names_this_build() {
        let v = version_line();
        assert!(
            v.starts_with(&format!("headroom {} (", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
        let t = target();
        assert!(t.starts_with(std::env::consts::ARCH), "{t}");
        assert!(t.contains("-unknown-linux-"), "{t}");
    }

    #[test]
    fn a_usage_error_is_one_line_pointing_at_the_commands_help() {
        let top = Cli::get_args_info();
        let line = |out: &str, args: &[&str]| usage_line(out, "headroom", args, &top);
        assert_eq!(
            line(
                "Required positional arguments not provided:\n    file\n",
                &["summarize"]
            ),
            "required positional arguments not provided: file (see headroom summarize --help)"
        );
        assert_eq!(
            line(
                "No value provided for option '--from'.\n",
                &["--root", "r", "jobs", "--from"]
            ),
            "no value provided for option '--from' (see headroom jobs --help)"
        );
        assert_eq!(line("Oops.", &["--root"]), "oops (see headroom --help)");
        assert_eq!(line("", &[]), " (see headroom --help)");
        let v = version_line();
        assert_eq!(
            v.ends_with(", with actions --remote"),
            cfg!(feature = "remote"),
            "{v}"
        );
    }
}
