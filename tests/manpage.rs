//! The man page, `src/headroom.1`, kept in step with the binary:
//!
//! - every command of `headroom --help` has a `.SS` subsection under
//!   COMMANDS and a line in SYNOPSIS;
//! - every option of `headroom --help` is a `.TP` tag under OPTIONS, and
//!   every option of `headroom CMD --help` a `.TP` tag in CMD's subsection,
//!   spelled as roff wants it (`\-\-out\-dir`, `\-o`);
//! - every option tagged in a subsection exists in that command's `--help`
//!   (except those listed in [`AHEAD`]);
//! - every environment variable that `src/**/*.rs` reads is a `.TP` tag under
//!   ENVIRONMENT;
//! - every `CMD --help` ends with two or three examples, and the examples
//!   there, in the page's EXAMPLES and in README.md's shell blocks name
//!   real commands and options.
//!
//! `renders_without_warnings` runs groff, `mandoc -Tlint` and man-db's
//! `man`, which a bare machine may lack: it is `#[ignore]`d in a plain
//! `cargo test` and run by `ci/test`, which installs them (it fails, never
//! skips, when one is missing).

use std::collections::BTreeSet;
use std::process::Command;

mod common;
use common::BIN;

const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/headroom.1");
const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Documented ahead of the binary: (command, option) pairs being merged
/// from parallel branches. Remove an entry once `--help` shows it (the
/// test passes either way; the forward checks then cover it).
const AHEAD: &[(&str, &str)] = &[];

/// Commands documented ahead of the binary, likewise.
const AHEAD_COMMANDS: &[&str] = &[];

fn page() -> String {
    std::fs::read_to_string(PAGE).expect("src/headroom.1")
}

/// `headroom ARGS... --help`, which must succeed.
fn help(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .output()
        .expect("run headroom");
    assert!(out.status.success(), "headroom {args:?} --help: {out:?}");
    String::from_utf8(out.stdout).expect("--help is UTF-8")
}

/// The lines of a `--help` section ("Options:", "Commands:") up to the next
/// blank line.
fn help_section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// The commands listed by `headroom --help`: entry lines are indented by
/// two spaces, their wrapped descriptions by more.
fn commands() -> Vec<String> {
    let top = help(&[]);
    let cmds: Vec<String> = help_section(&top, "Commands:")
        .iter()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect();
    assert!(
        cmds.len() >= 7 && cmds.iter().any(|c| c == "record"),
        "no commands found in --help:\n{top}"
    );
    cmds
}

/// The options of one `--help` text: `--long` and `-s` names of the
/// "Options:" entries (`  -o, --output   where...`), without `--help`.
fn help_options(text: &str) -> BTreeSet<String> {
    let opts: BTreeSet<String> = help_section(text, "Options:")
        .iter()
        .filter(|l| l.starts_with("  -"))
        .flat_map(|l| {
            // `-o, --out  text` or, when the name fills argh's column,
            // `--jobserver-style text`: the leading words that are names.
            l.split_whitespace()
                .take_while(|w| w.starts_with('-'))
                .map(|w| w.trim_end_matches(',').to_string())
                .collect::<Vec<_>>()
        })
        .filter(|n| n != "--help")
        .collect();
    opts
}

/// A man page split at one macro (`.SH` or `.SS`): (heading, body lines).
fn split_at<'a>(lines: &[&'a str], mac: &str) -> Vec<(String, Vec<&'a str>)> {
    let mut parts: Vec<(String, Vec<&str>)> = Vec::new();
    for &l in lines {
        match l.strip_prefix(mac) {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => {
                parts.push((rest.trim().trim_matches('"').to_string(), Vec::new()));
            }
            _ => {
                if let Some(p) = parts.last_mut() {
                    p.1.push(l);
                }
            }
        }
    }
    parts
}

/// The body of the `.SH NAME` section.
fn section<'a>(page: &'a str, name: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = page.lines().collect();
    split_at(&lines, ".SH")
        .into_iter()
        .find(|(h, _)| h == name)
        .unwrap_or_else(|| panic!("src/headroom.1 has no .SH {name}"))
        .1
}

/// The `.TP` tags of some lines: the line after each `.TP`.
fn tags<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines
        .windows(2)
        .filter(|w| w[0] == ".TP" || w[0].starts_with(".TP "))
        .map(|w| w[1])
        .collect()
}

/// The words of a roff line with its macro, font escapes, quotes and `\-`
/// undone (`.BR \-\-x " Y"` -> `--x`, `Y`).
fn words(line: &str) -> Vec<String> {
    let body = match line.strip_prefix('.') {
        Some(rest) => rest.split_once(' ').map_or("", |(_, b)| b),
        None => line,
    };
    let mut t = body.replace(r"\-", "-").replace('"', " ");
    for f in [r"\fB", r"\fI", r"\fR", r"\fP"] {
        t = t.replace(f, " ");
    }
    t.split(|c: char| c.is_whitespace() || c == ',' || c == '|')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// The options written the roff way in a line: `\-\-name\-part` gives
/// `--name-part`, `\-x` (one letter) gives `-x`. A plain `-` does not count:
/// an option must be escaped to print as a hyphen-minus.
fn roff_options(line: &str) -> Vec<String> {
    let b = line.as_bytes();
    let dash = |i: usize| b.get(i..i + 2) == Some(br"\-");
    let alnum = |i: usize| b.get(i).is_some_and(u8::is_ascii_alphanumeric);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !dash(i) {
            i += 1;
            continue;
        }
        let mut dashes = 0;
        while dash(i) {
            dashes += 1;
            i += 2;
        }
        let mut name = String::new();
        loop {
            let start = i;
            while alnum(i) {
                i += 1;
            }
            name.push_str(&line[start..i]);
            if i > start && dash(i) && alnum(i + 2) {
                name.push('-');
                i += 2;
            } else {
                break;
            }
        }
        let first = name.bytes().next();
        match dashes {
            2 if first.is_some_and(|c| c.is_ascii_lowercase()) => out.push(format!("--{name}")),
            1 if name.len() == 1 && first.is_some_and(|c| c.is_ascii_alphabetic()) => {
                out.push(format!("-{name}"))
            }
            _ => {}
        }
    }
    out
}

/// The options tagged (`.TP`) in some lines.
fn tagged_options(lines: &[&str]) -> BTreeSet<String> {
    tags(lines).iter().flat_map(|t| roff_options(t)).collect()
}

/// The subsection of COMMANDS for `cmd`: the `.SS` whose heading has it as
/// a word (`.SS "headroom record"`).
fn subsection<'a>(page: &'a str, cmd: &str) -> Option<Vec<&'a str>> {
    split_at(&section(page, "COMMANDS"), ".SS")
        .into_iter()
        .find(|(h, _)| h.split_whitespace().any(|w| w == cmd))
        .map(|(_, body)| body)
}

#[test]
fn roff_option_tokens() {
    assert_eq!(
        roff_options(r#".BI \-\-stage\-log\-dir " DIR""#),
        ["--stage-log-dir"]
    );
    assert_eq!(
        roff_options(r"\fB\-o\fR \fIFILE.svg\fR, \fB\-\-output\fR \fIFILE.svg\fR"),
        ["-o", "--output"]
    );
    assert_eq!(roff_options(r#".BR \-\-help ", " help"#), ["--help"]);
    // Not options: `--` alone, `-j1`, a plain hyphen.
    assert!(roff_options(r#".BI \-\- " CMD ARGS...""#).is_empty());
    assert!(roff_options(r"make \-j1 --out-dir").is_empty());
    assert_eq!(
        words(r".BR \-\-profile generic | rust"),
        ["--profile", "generic", "rust"]
    );
}

#[test]
fn every_command_has_a_subsection_and_a_synopsis() {
    let page = page();
    let synopsis: BTreeSet<String> = section(&page, "SYNOPSIS")
        .iter()
        .flat_map(|l| words(l))
        .collect();
    let mut missing = Vec::new();
    for cmd in commands() {
        if subsection(&page, &cmd).is_none() {
            missing.push(format!(".SS for `{cmd}` under .SH COMMANDS"));
        }
        if !synopsis.contains(&cmd) {
            missing.push(format!("`{cmd}` in SYNOPSIS"));
        }
    }
    assert!(
        missing.is_empty(),
        "src/headroom.1 lacks: {}",
        missing.join("; ")
    );
}

#[test]
fn every_option_of_every_help_is_tagged_in_its_section() {
    let page = page();
    let mut missing = Vec::new();
    let global = tagged_options(&section(&page, "OPTIONS"));
    for opt in help_options(&help(&[])) {
        if !global.contains(&opt) {
            missing.push(format!("{opt} (global) under .SH OPTIONS"));
        }
    }
    for cmd in commands() {
        let Some(body) = subsection(&page, &cmd) else {
            missing.push(format!("the subsection of {cmd}"));
            continue;
        };
        let tagged = tagged_options(&body);
        for opt in help_options(&help(&[&cmd])) {
            if !tagged.contains(&opt) {
                missing.push(format!("{cmd} {opt}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options in --help but not a .TP tag of src/headroom.1 \
         (write them as \\-\\-name\\-part): {}",
        missing.join(", ")
    );
}

#[test]
fn every_option_tagged_in_the_page_exists() {
    let page = page();
    let cmds = commands();
    let mut stale = Vec::new();
    for (heading, body) in split_at(&section(&page, "COMMANDS"), ".SS") {
        let Some(cmd) = heading
            .split_whitespace()
            .find(|w| cmds.iter().any(|c| c == w) || AHEAD_COMMANDS.contains(w))
        else {
            stale.push(format!("the subsection \"{heading}\" names no command"));
            continue;
        };
        let real = if cmds.iter().any(|c| c == cmd) {
            help_options(&help(&[cmd]))
        } else {
            BTreeSet::new()
        };
        for opt in tagged_options(&body) {
            if !real.contains(&opt) && !AHEAD.contains(&(cmd, opt.as_str())) {
                stale.push(format!("{cmd} {opt}"));
            }
        }
    }
    let global = help_options(&help(&[]));
    for opt in tagged_options(&section(&page, "OPTIONS")) {
        if opt != "--help" && !global.contains(&opt) {
            stale.push(format!("{opt} (global)"));
        }
    }
    assert!(
        stale.is_empty(),
        "src/headroom.1 documents what --help does not have: {}",
        stale.join(", ")
    );
}

/// Every `.rs` file under `dir` (the layer folders and `src/cli/` too),
/// sorted.
fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/")
        .map(|e| e.expect("src/ entry").path())
        .collect();
    entries.sort();
    let mut files = Vec::new();
    for p in entries {
        if p.is_dir() {
            files.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
    files
}

/// The environment variables `src/**/*.rs` reads (outside unit tests): the
/// literals of `env_nonempty("X")`, `env::var("X")`, `env::var_os("X")`,
/// and the `ENV_VARS` table.
fn env_vars_read() -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    for path in rust_files(std::path::Path::new(SRC)) {
        let text = std::fs::read_to_string(&path).expect("read a source file");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for call in ["env_nonempty(\"", "env::var(\"", "env::var_os(\""] {
            for (at, _) in code.match_indices(call) {
                let rest = &code[at + call.len()..];
                if let Some(end) = rest.find('"') {
                    vars.insert(rest[..end].to_string());
                }
            }
        }
        for (at, _) in code.match_indices("ENV_VARS: [") {
            let rest = &code[at..];
            let table = rest
                .find("= [")
                .and_then(|s| rest[s..].find("];").map(|e| &rest[s..s + e]))
                .unwrap_or("");
            for lit in table.split('"').skip(1).step_by(2) {
                vars.insert(lit.to_string());
            }
        }
    }
    vars
}

#[test]
fn every_environment_variable_read_is_documented() {
    let vars = env_vars_read();
    // The scanner itself works: one of each kind of read is found.
    for v in [
        "LOG_DIR",
        "BUILDKIT_CACHE_DIR",
        "PARALLEL_JOBS",
        "CPP_HEAVY_MB_PER_JOB",
    ] {
        assert!(vars.contains(v), "the scan of src/ missed {v}: {vars:?}");
    }
    let page = page();
    let documented: BTreeSet<String> = tags(&section(&page, "ENVIRONMENT"))
        .iter()
        .flat_map(|t| words(t))
        .collect();
    let missing: Vec<&String> = vars.iter().filter(|v| !documented.contains(*v)).collect();
    assert!(
        missing.is_empty(),
        "read in src/ but not a .TP tag under ENVIRONMENT in src/headroom.1: {missing:?}"
    );
}

#[test]
#[ignore = "needs groff, mandoc and man-db; ci/test installs them and runs it"]
fn renders_without_warnings() {
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z", PAGE])
        .output()
        .expect("groff is not installed (Debian: groff-base)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.is_empty(),
        "groff -man -ww: {}\n{err}",
        out.status
    );

    // mandoc's linter: stricter about man(7) usage, and portable to the
    // BSDs and Alpine, whose `man` is mandoc. Any message fails, style too.
    let out = Command::new("mandoc")
        .args(["-Tlint", PAGE])
        .output()
        .expect("mandoc is not installed (Debian: mandoc)");
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.is_empty(),
        "mandoc -Tlint: {}\n{said}",
        out.status
    );

    // As a user reads it: man-db's preprocessors, then groff with warnings.
    let out = Command::new("man")
        .args(["--warnings", "-l", PAGE])
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C.UTF-8")
        .env_remove("MANPAGER")
        .env_remove("PAGER")
        .output()
        .expect("man is not installed (Debian: man-db)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.is_empty(),
        "man --warnings -l: {}\n{err}",
        out.status
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "HEADROOM(1)",
        "SYNOPSIS",
        "ENVIRONMENT",
        "EXIT STATUS",
        "SIGNALS",
    ] {
        assert!(text.contains(want), "rendered page lacks {want}:\n{text}");
    }
    // Every option prints as typed (`--out-dir`: ASCII hyphen-minus, not
    // U+2212 or a hyphenation break), so it can be copied.
    for cmd in commands() {
        assert!(text.contains(&format!("headroom {cmd}")), "{cmd}");
        for opt in help_options(&help(&[&cmd])) {
            assert!(
                text.contains(&format!("{opt} ")) || text.contains(&format!("{opt}\n")),
                "rendered page lacks {opt} of {cmd}"
            );
        }
    }
    let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
    assert!(wide.is_empty(), "lines wider than 80 columns: {wide:#?}");
}

/// Problems with the `headroom` command lines in `text` (shell lines, `\`
/// continuations joined): each `headroom [--root DIR] CMD` must name a
/// command, and each option up to the end of its own arguments (` -- `,
/// `|`, `)`, `"`, `&`, `;`, `#`) must be one of CMD's (or be in [`AHEAD`]).
fn example_problems(text: &str, cmds: &[String], where_: &str) -> Vec<String> {
    let joined = text.replace("\\\n", " ");
    let mut problems = Vec::new();
    let mut helps = std::collections::BTreeMap::new();
    for line in joined.lines() {
        for (at, _) in line.match_indices("headroom ") {
            // Only where a command starts: not `.../release/headroom` or
            // `install -m 755 headroom /usr/local/bin/`.
            let before = line[..at].trim_end();
            if !(before.is_empty()
                || before.ends_with(['(', '"', '\'', '&', ';', '|', '`'])
                || before.ends_with("sudo")
                || before.ends_with("exec"))
            {
                continue;
            }
            let rest = &line[at + "headroom ".len()..];
            let end = [" -- ", "|", ")", "\"", "&", ";", "#"]
                .iter()
                .filter_map(|t| rest.find(t))
                .min()
                .unwrap_or(rest.len());
            let mut words = rest[..end].split_whitespace().peekable();
            if words.peek() == Some(&"--root") {
                words.next();
                words.next();
            }
            let Some(cmd) = words.next() else { continue };
            let known = cmds.iter().any(|c| c == cmd);
            if !known && !AHEAD_COMMANDS.contains(&cmd) {
                problems.push(format!("{where_}: `{line}`: no command `{cmd}`"));
                continue;
            }
            let opts = helps
                .entry(cmd.to_string())
                .or_insert_with(|| {
                    if known {
                        help_options(&help(&[cmd]))
                    } else {
                        BTreeSet::new()
                    }
                })
                .clone();
            for w in words {
                let name = w.split('=').next().unwrap_or(w);
                let is_opt = name.starts_with("--") && name.len() > 2
                    || name.len() == 2 && name.starts_with('-');
                if is_opt
                    && name != "--help"
                    && !opts.contains(name)
                    && !AHEAD.contains(&(cmd, name))
                {
                    problems.push(format!("{where_}: `{line}`: {cmd} has no {name}"));
                }
            }
        }
    }
    problems
}

/// The `.EX`/`.EE` blocks of roff lines as printed: `\-` `\e` `\(dq` undone.
fn unroff(lines: &[&str]) -> String {
    let mut inside = false;
    lines
        .iter()
        .filter(|l| {
            match **l {
                ".EX" => inside = true,
                ".EE" => inside = false,
                _ => {}
            }
            inside && !l.starts_with('.')
        })
        .map(|l| {
            l.replace(r"\-", "-")
                .replace(r"\e", "\\")
                .replace(r"\(dq", "\"")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_help_ends_with_examples_of_real_options() {
    let cmds = commands();
    let mut problems = Vec::new();
    for cmd in &cmds {
        let text = help(&[cmd]);
        let examples = help_section(&text, "Examples:");
        if !(2..=3).contains(&examples.len()) {
            problems.push(format!("{cmd} --help: {} examples", examples.len()));
        }
        if !text
            .trim_end()
            .ends_with(examples.last().map_or("?", |l| l.trim_end()))
        {
            problems.push(format!("{cmd} --help does not end with its examples"));
        }
        let lines: Vec<&str> = examples.iter().map(|l| l.trim()).collect();
        if !lines.iter().all(|l| l.contains(&format!("headroom {cmd}"))) {
            problems.push(format!("{cmd} --help: an example without `headroom {cmd}`"));
        }
        problems.extend(example_problems(
            &lines.join("\n"),
            &cmds,
            &format!("{cmd} --help"),
        ));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_examples_of_the_page_and_readme_use_real_options() {
    let cmds = commands();
    let page = page();
    let shown = unroff(&section(&page, "EXAMPLES"));
    assert!(
        shown.contains("headroom run"),
        "no .EX blocks read:\n{shown}"
    );
    let mut problems = example_problems(&shown, &cmds, "src/headroom.1 EXAMPLES");
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    // The shell blocks only: prose may say "headroom record" loosely.
    let blocks: Vec<&str> = readme
        .split("```")
        .skip(1)
        .step_by(2)
        .filter(|b| b.starts_with("sh\n") || b.starts_with("console\n"))
        .collect();
    assert!(!blocks.is_empty(), "README.md has no ```sh blocks");
    problems.extend(example_problems(&blocks.join("\n"), &cmds, "README.md"));
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The README's first screen leads with the command most people want
/// (issue 15): `headroom run -- make -j"$(headroom jobs)"` in a shell block
/// within its first 30 lines, followed by the summary it printed.
#[test]
fn the_readme_leads_with_run_make_and_its_summary() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let head: Vec<&str> = readme.lines().take(30).collect();
    let at = head
        .iter()
        .position(|l| *l == r#"headroom run -- make -j"$(headroom jobs)""#)
        .expect("the run -- make line within README's first 30 lines");
    assert_eq!(head.get(at.wrapping_sub(1)), Some(&"```sh"), "{head:#?}");
    assert!(
        head[at..].contains(&"=== resource-monitor summary ==="),
        "the summary it printed follows the command: {head:#?}"
    );
}

/// Issue 42: the man page's BuildKit example is the Dockerfile the lanes
/// test builds (tests/lanes/Dockerfile, ci/lanes), word for word.
#[test]
fn the_buildkit_example_is_the_dockerfile_the_lanes_test_builds() {
    let page = page();
    let lines: Vec<&str> = page.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "FROM headroom\\-base")
        .expect("the BuildKit example");
    let end = at + lines[at..].iter().position(|l| *l == ".EE").unwrap();
    let mut shown = unroff(&[&[".EX"], &lines[at..end]].concat());
    shown.push('\n');
    let built = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lanes/Dockerfile"),
    )
    .unwrap();
    assert_eq!(shown, built);
}
