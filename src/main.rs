//! `headroom`: the command line over the `headroom` library.
//!
//! std is used here only for what the library cannot do without it:
//! arguments, environment, stdout/stderr. Sampling, formatting and the
//! summary live in the `#![no_std]` library and allocate nothing.
//!
//! This file parses the command line and dispatches; each command and
//! concern is a module of [`cli`].
//!
//! Exit codes: 0 success; 1 runtime failure (one line on stderr); 2 usage.

mod cli;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use argh::{ArgsInfo, FromArgs};

use cli::argv::Prepared;
use cli::messages::{Fail, shown};
use cli::options::{Cli, Cmd};

fn main() -> ExitCode {
    cli::files::guard_std_fds();
    cli::signals::catch_xfsz();
    // Arguments as the OS gave them: a Latin-1 file name must not panic.
    // argh sees a lossy UTF-8 copy; `run` passes CMD's raw bytes on.
    let raw: Vec<OsString> = std::env::args_os().collect();
    let (cli, cmd_at) = match parse(&raw) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // CMD's own bytes, untouched (argh had a lossy copy): from where
    // cli::argv found it to start.
    let raw_cmd = cmd_at.and_then(|i| raw.get(1 + i..)).unwrap_or_default();
    match dispatch(cli, raw_cmd) {
        Ok(code) => code,
        Err(Fail(msg)) => {
            // One line whatever the message carries (a server's words, a
            // file or instance name with a newline or an escape sequence).
            let _ = writeln!(std::io::stderr(), "headroom: {}", shown(&msg));
            ExitCode::from(1)
        }
    }
}

/// The command line parsed, with where CMD starts among the arguments
/// after the program name ([`Prepared::Args`]), or the exit code when
/// there is nothing to run: 0 after `--help` or `--version`, 2 (one line
/// on stderr) for a usage error. [`cli::argv`] reads the arguments first.
fn parse(raw: &[OsString]) -> Result<(Cli, Option<usize>), ExitCode> {
    let args: Vec<String> = raw
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let name = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("headroom")
        .to_string();
    let (rest, cmd_at) = match cli::argv::prepare(&args[1.min(args.len())..], &Cli::get_args_info())
    {
        Ok(Prepared::Args(rest, cmd_at)) => (rest, cmd_at),
        Ok(Prepared::Version) => {
            let _ = writeln!(std::io::stdout(), "{}", cli::argv::version_line());
            return Err(ExitCode::SUCCESS);
        }
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "headroom: {msg}");
            return Err(ExitCode::from(2));
        }
    };
    // Paths and options must be UTF-8 (a lossy copy would point at another
    // file); only CMD may be any bytes.
    let ours = raw.iter().skip(1).take(cmd_at.unwrap_or(usize::MAX));
    if let Some((i, bad)) = ours.enumerate().find(|(_, a)| a.to_str().is_none()) {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: argument {} ('{}') is not valid UTF-8: options and paths must be (see {name} --help)",
            i + 1,
            shown(&bad.to_string_lossy())
        );
        return Err(ExitCode::from(2));
    }
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let cli = Cli::from_args(&[&name], &rest).map_err(|early| match early.status {
        Ok(()) => {
            let _ = writeln!(std::io::stdout(), "{}", early.output);
            ExitCode::SUCCESS
        }
        Err(()) => {
            // One line: argh's message, then where the usage is.
            let line = cli::argv::usage_line(&early.output, &name, &rest, &Cli::get_args_info());
            let _ = writeln!(std::io::stderr(), "headroom: {line}");
            ExitCode::from(2)
        }
    })?;
    Ok((cli, cmd_at))
}

/// Runs the command; `--root` before the subcommand applies to those that
/// read a root when they have none of their own.
///
/// Every command function is `#[inline(never)]`: stack probes make a
/// frame resident whole, so commands inlined here would give this frame
/// the largest of their buffers (168 KiB) for every command. Kept apart,
/// a recording's anonymous memory is 268 KiB instead of 408 KiB
/// (`RssAnon` of `record` on a board root, x86_64).
fn dispatch(cli: Cli, raw_cmd: &[OsString]) -> Result<ExitCode, Fail> {
    if cli.version {
        // `cli::argv` answers `--version` before argh; this is its twin.
        let _ = writeln!(std::io::stdout(), "{}", cli::argv::version_line());
        return Ok(ExitCode::SUCCESS);
    }
    match cli.cmd {
        Cmd::Record(mut a) => {
            a.root = a.root.or(cli.root);
            cli::record::record_cmd(a)
        }
        Cmd::Run(mut a) => {
            a.root = a.root.or(cli.root);
            // CMD's own bytes, as long as argh's CMD is the same words.
            let raw_cmd = Some(raw_cmd)
                .filter(|c| c.len() == a.cmd.len())
                .map_or_else(|| a.cmd.iter().map(OsString::from).collect(), <[_]>::to_vec);
            cli::record::run_cmd(a, raw_cmd)
        }
        Cmd::Summarize(a) => cli::report_cmd::summarize_cmd(a),
        Cmd::Actions(a) => cli::report_cmd::actions_cmd(a),
        Cmd::Jobs(mut a) => {
            a.root = a.root.or(cli.root);
            cli::plan::jobs_cmd(a)
        }
        Cmd::Advise(mut a) => {
            a.root = a.root.or(cli.root);
            cli::plan::advise_cmd(a)
        }
        Cmd::Status(mut a) => {
            a.root = a.root.or(cli.root);
            cli::plan::status_cmd(a)
        }
        Cmd::Plot(a) => cli::report_cmd::plot_cmd(a),
    }
}
