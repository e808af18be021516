//! A `-j` of CMD's own under `run --jobserver`, found as make's or
//! ninja's own option parser finds it (GNU getopt: options anywhere before
//! `--`, short options bundled, an option's argument attached or in the
//! next word), so that it can be taken out of the command line (the
//! jobserver then hands out the slots, and its N is the cap), or, inside a
//! shell's `-c` script where it cannot be taken out, warned about.
//!
//! Pure functions over the argument words; nothing is read or run.
//!
//! # References
//! GNU make manual, "Options Summary" (`-j [N]`, `--jobs[=N]`: a number in
//! the next word is its argument; no number is no limit); ninja's `-j N`
//! (`0`: no limit; `-t TOOL` ends ninja's own options); getopt(3).

/// The build tool CMD names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// GNU make: `make`, `gmake`.
    Make,
    /// ninja, or samurai (`samu`), which reads the same options.
    Ninja,
}

impl Tool {
    /// The tool `prog` (a name or a path ending in one) runs, if one.
    pub fn of(prog: &str) -> Option<Tool> {
        match prog.rsplit('/').next().unwrap_or(prog) {
            "make" | "gmake" => Some(Tool::Make),
            "ninja" | "samu" => Some(Tool::Ninja),
            _ => None,
        }
    }

    /// Its name as said on stderr: `make`, `ninja`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Make => "make",
            Tool::Ninja => "ninja",
        }
    }

    /// Its short options that take an argument (attached, or the next
    /// word); `j` is handled apart.
    fn takes_arg(self, c: u8) -> bool {
        match self {
            Tool::Make => b"CfIoWE".contains(&c),
            Tool::Ninja => b"dfklwC".contains(&c),
        }
    }

    /// Its long options that take an argument in the next word when none
    /// is attached with `=`.
    fn long_takes_arg(self, name: &str) -> bool {
        self == Tool::Make
            && matches!(
                name,
                "directory"
                    | "file"
                    | "makefile"
                    | "include-dir"
                    | "old-file"
                    | "assume-old"
                    | "what-if"
                    | "new-file"
                    | "assume-new"
                    | "eval"
            )
    }
}

/// How many jobs a `-j` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jobs {
    /// `-jN`: at most N at once (N ≥ 1).
    Count(u32),
    /// make's bare `-j`, ninja's `-j0`: no limit.
    Unlimited,
}

/// One `-j` in CMD's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobsFlag {
    /// Index in argv of its (first) word.
    pub at: usize,
    /// Words it spans: 1 (`-j4`, `--jobs=4`, `-kj4`, a bare `-j`) or 2
    /// (`-j 4`, `--jobs 4`).
    pub words: usize,
    /// What stays of its first word: `-k` of `-kj4`; `None` when the word
    /// goes whole.
    pub keep: Option<String>,
    /// What it asks for.
    pub jobs: Jobs,
}

/// Every well-formed `-j` of `argv` (CMD and its arguments) when CMD is
/// make or ninja, in order (the tool obeys the last); `None` when CMD is
/// neither. A `-j` the tool itself would refuse (`-jx`, make's `-j0`) is
/// not found: the tool says so. Words after `--`, and after ninja's `-t
/// TOOL`, are not options; the argument of another option (`-C -j4`) is
/// not one either.
pub fn find(argv: &[String]) -> Option<(Tool, Vec<JobsFlag>)> {
    let tool = Tool::of(argv.first()?)?;
    let mut found = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        let next = argv.get(i + 1).map(String::as_str);
        let step = if a == "--" {
            break;
        } else if let Some(long) = a.strip_prefix("--") {
            long_option(tool, long, next, i, &mut found)
        } else if a.len() > 1 && a.starts_with('-') {
            match short_options(tool, a, next, i, &mut found) {
                Some(step) => step,
                None => break, // ninja's -t: the rest is the tool's
            }
        } else {
            1
        };
        i += step;
    }
    Some((tool, found))
}

/// A long option `--NAME[=VALUE]` at `argv[at]` (`next` the word after
/// it): a make `--jobs` pushed to `found`. Returns the words it spans.
fn long_option(
    tool: Tool,
    long: &str,
    next: Option<&str>,
    at: usize,
    found: &mut Vec<JobsFlag>,
) -> usize {
    let (name, value) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    if tool == Tool::Make && name == "jobs" {
        let (jobs, words) = match value {
            Some(v) => (make_count(v), 1),
            None => make_optional(next),
        };
        if let Some(jobs) = jobs {
            found.push(JobsFlag {
                at,
                words,
                keep: None,
                jobs,
            });
        }
        return words;
    }
    if value.is_none() && tool.long_takes_arg(name) {
        return 2;
    }
    if value.is_none() && tool == Tool::Make && matches!(name, "load-average" | "max-load") {
        return 1 + usize::from(next.is_some_and(starts_numeric));
    }
    1
}

/// A word of bundled short options at `argv[at]` (`next` the word after
/// it): a `-j` pushed to `found`. Returns the words it spans; `None` at
/// ninja's `-t`, after which nothing is ninja's option.
fn short_options(
    tool: Tool,
    word: &str,
    next: Option<&str>,
    at: usize,
    found: &mut Vec<JobsFlag>,
) -> Option<usize> {
    for (k, c) in word.bytes().enumerate().skip(1) {
        let rest = &word[k + 1..];
        if c == b'j' {
            let (jobs, words) = match (tool, rest.is_empty()) {
                (Tool::Make, false) => (make_count(rest), 1),
                (Tool::Make, true) => make_optional(next),
                (Tool::Ninja, false) => (ninja_count(rest), 1),
                (Tool::Ninja, true) => (next.and_then(ninja_count), 2),
            };
            if let Some(jobs) = jobs {
                found.push(JobsFlag {
                    at,
                    words,
                    keep: (k > 1).then(|| word[..k].to_string()),
                    jobs,
                });
            }
            return Some(words);
        }
        if tool == Tool::Ninja && c == b't' {
            return None;
        }
        if tool.takes_arg(c) {
            return Some(1 + usize::from(rest.is_empty()));
        }
        if matches!((tool, c), (Tool::Make, b'O')) {
            return Some(1);
        }
        if matches!((tool, c), (Tool::Make, b'l')) {
            return Some(1 + usize::from(rest.is_empty() && next.is_some_and(starts_numeric)));
        }
    }
    Some(1)
}

/// make's `-j` with no number attached: the next word is its number when
/// it starts with a digit (make's own rule), else no limit. Returns what
/// it asks for (`None`: make refuses it) and the words it spans.
fn make_optional(next: Option<&str>) -> (Option<Jobs>, usize) {
    match next {
        Some(n) if n.starts_with(|c: char| c.is_ascii_digit()) => (make_count(n), 2),
        _ => (Some(Jobs::Unlimited), 1),
    }
}

/// make's number of jobs: a positive integer.
fn make_count(v: &str) -> Option<Jobs> {
    match digits(v)? {
        0 => None,
        n => Some(Jobs::Count(n)),
    }
}

/// ninja's number of jobs: 0 is no limit.
fn ninja_count(v: &str) -> Option<Jobs> {
    match digits(v)? {
        0 => Some(Jobs::Unlimited),
        n => Some(Jobs::Count(n)),
    }
}

/// `v` as a whole decimal number (saturated at `u32::MAX`), if it is one.
fn digits(v: &str) -> Option<u32> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        v.parse::<u64>()
            .map_or(u32::MAX, |n| u32::try_from(n).unwrap_or(u32::MAX)),
    )
}

/// A load average's word: a digit or `.` first.
fn starts_numeric(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

/// `argv` with `flags` taken out (what is kept of a bundle stays in its
/// place). `T`: the words as text or as the OS gave them.
pub fn take_out<T: Clone + From<String>>(argv: &[T], flags: &[JobsFlag]) -> Vec<T> {
    let mut out = Vec::with_capacity(argv.len());
    let mut i = 0;
    while i < argv.len() {
        match flags.iter().find(|f| f.at == i) {
            Some(f) => {
                out.extend(f.keep.clone().map(T::from));
                i += f.words.max(1);
            }
            None => {
                out.push(argv[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// `flag` as written in `argv`: `-j4`, `-j 4`, `-kj4`, `--jobs=4`.
pub fn said(argv: &[String], flag: &JobsFlag) -> String {
    let end = (flag.at + flag.words).min(argv.len());
    argv.get(flag.at..end).unwrap_or_default().join(" ")
}

/// Commands that run the command after their own options and arguments
/// (`nice -n 5 make -j4`, `env CC=clang make -j4`, `time make`).
const WRAPPERS: [&str; 11] = [
    "env", "nice", "ionice", "time", "nohup", "setsid", "stdbuf", "chrt", "taskset", "timeout",
    "sudo",
];

/// [`find`] through wrappers: when CMD is one of [`WRAPPERS`] (a chain
/// of them too), the first later word that names make or ninja is the
/// tool, and its `-j` is found there; `at` counts from CMD's start, so
/// [`take_out`] cuts `argv` itself. `None` when CMD is no wrapper or no
/// make or ninja follows it.
pub fn find_wrapped(argv: &[String]) -> Option<(Tool, Vec<JobsFlag>)> {
    let prog = argv.first()?;
    if !WRAPPERS.contains(&prog.rsplit('/').next().unwrap_or(prog)) {
        return None;
    }
    let start = argv.iter().position(|w| Tool::of(w).is_some())?;
    let (tool, mut found) = find(&argv[start..])?;
    for f in &mut found {
        f.at += start;
    }
    Some((tool, found))
}

/// Shells whose `-c SCRIPT` is looked into.
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "busybox"];

/// A make or ninja with a `-j` of its own inside CMD's shell script (`sh
/// -c '… make -j4 …'`), where it cannot be taken out: the tool and its
/// `-j` as written (`make -j4`), if any. The script is split into simple
/// commands at `;` `&` `|` `(` `)` backquotes and line ends, and each
/// command's words read as [`find`] reads CMD (quotes dropped, no
/// expansion: a look, not a shell).
pub fn in_script(argv: &[String]) -> Option<String> {
    let (prog, args) = argv.split_first()?;
    if !SHELLS.contains(&prog.rsplit('/').next().unwrap_or(prog)) {
        return None;
    }
    let script = shell_script(args)?;
    script
        .split([';', '&', '|', '(', ')', '`', '\n'])
        .find_map(|command| {
            let words: Vec<String> = command
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_string())
                .collect();
            let start = words.iter().position(|w| Tool::of(w).is_some())?;
            let words = &words[start..];
            let (tool, found) = find(words)?;
            let last = found.last()?;
            Some(format!("{} {}", tool.name(), said(words, last)))
        })
}

/// The script of a shell's arguments `args`: the word after its options
/// when one of them holds `c` (`-c`, `-ec`, `-o pipefail -c`).
fn shell_script(args: &[String]) -> Option<&str> {
    let args = match args.first().map(String::as_str) {
        Some("sh" | "ash" | "bash") => &args[1..], // busybox sh -c
        _ => args,
    };
    let mut with_c = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "-o" || a == "+o" {
            i += 2;
            continue;
        }
        if a == "--" || !(a.starts_with('-') || a.starts_with('+')) || a.len() < 2 {
            break;
        }
        with_c |= !a.starts_with("--") && a.contains('c');
        i += 1;
    }
    let i = i + usize::from(args.get(i).is_some_and(|a| a == "--"));
    with_c.then(|| args.get(i).map(String::as_str)).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// What is taken out of `argv` and what it asks for (the last), and
    /// the command line left.
    fn taken(argv: &[&str]) -> (Option<Jobs>, Vec<String>, Vec<String>) {
        let argv = v(argv);
        let Some((_, found)) = find(&argv) else {
            return (None, Vec::new(), argv);
        };
        let said = found.iter().map(|f| said(&argv, f)).collect();
        let left = take_out(&argv, &found);
        (found.last().map(|f| f.jobs), said, left)
    }

    #[test]
    fn every_form_of_make_s_j_is_taken_out() {
        use Jobs::{Count, Unlimited};
        for (argv, jobs, said, left) in [
            (&["make", "-j4"][..], Count(4), &["-j4"][..], &["make"][..]),
            (
                &["make", "-j", "4", "all"],
                Count(4),
                &["-j 4"],
                &["make", "all"],
            ),
            (&["make", "--jobs=4"], Count(4), &["--jobs=4"], &["make"]),
            (&["make", "--jobs", "4"], Count(4), &["--jobs 4"], &["make"]),
            (
                &["/usr/bin/gmake", "-kj4", "x"],
                Count(4),
                &["-kj4"],
                &["/usr/bin/gmake", "-k", "x"],
            ),
            (&["make", "-j", "all"], Unlimited, &["-j"], &["make", "all"]),
            (&["make", "--jobs"], Unlimited, &["--jobs"], &["make"]),
            (&["make", "-k", "-j"], Unlimited, &["-j"], &["make", "-k"]),
            // Targets and variables before it: getopt permutes.
            (
                &["make", "all", "CC=gcc", "-j2"],
                Count(2),
                &["-j2"],
                &["make", "all", "CC=gcc"],
            ),
            // Two: both go, make obeys the last.
            (
                &["make", "-j8", "-j2"],
                Count(2),
                &["-j8", "-j2"],
                &["make"],
            ),
        ] {
            let (j, s, l) = taken(argv);
            assert_eq!(j, Some(jobs), "{argv:?}");
            assert_eq!(s, said, "{argv:?}");
            assert_eq!(l, left, "{argv:?}");
        }
    }

    #[test]
    fn a_j_that_is_no_option_of_make_stays() {
        for argv in [
            &["make", "-C", "-j4"][..],
            &["make", "-C-j4"],
            &["make", "--directory", "-j4"],
            &["make", "-f", "-j4"],
            &["make", "-Cj4"],
            &["make", "--", "-j4"],
            &["make", "-O", "-jx"],
            &["make", "-jx"],
            &["make", "-j0"],
            &["make", "-j4k"],
            &["make", "-jobs-file"],
            &["make", "--jobs=x"],
            &["make", "--directory=d", "all"],
            // A variable on the command line is no option: MAKEFLAGS as the
            // user wrote it stays (headroom composes its own in the environment).
            &["make", "MAKEFLAGS=-j4", "V=-j2"],
        ] {
            let (j, _, left) = taken(argv);
            assert_eq!(j, None, "{argv:?}");
            assert_eq!(left, v(argv), "{argv:?}");
        }
        // A load average's number is -l's, not a target; -j after it is.
        assert_eq!(taken(&["make", "-l", "2.5", "-j3"]).0, Some(Jobs::Count(3)));
        assert_eq!(
            taken(&["make", "--load-average", "2", "-j"]).0,
            Some(Jobs::Unlimited)
        );
        // A -j word that is no number is a target, and -j has none.
        assert_eq!(
            taken(&["make", "-j", "x4"]),
            (Some(Jobs::Unlimited), v(&["-j"]), v(&["make", "x4"]))
        );
    }

    #[test]
    fn ninja_s_j_needs_its_number_and_0_is_no_limit() {
        assert_eq!(
            taken(&["ninja", "-C", "out", "-j", "3"]),
            (
                Some(Jobs::Count(3)),
                v(&["-j 3"]),
                v(&["ninja", "-C", "out"])
            )
        );
        assert_eq!(taken(&["samu", "-j0"]).0, Some(Jobs::Unlimited));
        assert_eq!(taken(&["ninja", "-nj2"]).2, v(&["ninja", "-n"]));
        // -t: the rest is the tool's; -k takes a number; no long --jobs.
        assert_eq!(taken(&["ninja", "-t", "targets", "-j4"]).0, None);
        assert_eq!(taken(&["ninja", "-k", "-j4"]).0, None);
        assert_eq!(taken(&["ninja", "--jobs=4"]).0, None);
        assert_eq!(taken(&["ninja", "-j"]).0, None);
    }

    #[test]
    fn only_make_and_ninja_are_read() {
        assert_eq!(find(&v(&["cargo", "build", "-j8"])), None);
        assert_eq!(find(&v(&["sh", "-c", "make -j4"])), None);
        assert_eq!(find(&v(&[])), None);
        assert_eq!(find(&v(&["make"])), Some((Tool::Make, Vec::new())));
    }

    #[test]
    fn a_j_behind_a_wrapper_is_found_where_it_is() {
        let argv = v(&["nice", "-n", "5", "make", "-f", "M", "-j3", "all"]);
        let (tool, found) = find_wrapped(&argv).unwrap();
        assert_eq!(tool, Tool::Make);
        assert_eq!(found.len(), 1);
        assert_eq!(said(&argv, &found[0]), "-j3");
        assert_eq!(
            take_out(&argv, &found),
            v(&["nice", "-n", "5", "make", "-f", "M", "all"])
        );
        let argv = v(&["env", "CC=clang", "/usr/bin/ninja", "-j", "2"]);
        let (tool, found) = find_wrapped(&argv).unwrap();
        assert_eq!((tool, found[0].jobs), (Tool::Ninja, Jobs::Count(2)));
        assert_eq!(
            take_out(&argv, &found),
            v(&["env", "CC=clang", "/usr/bin/ninja"])
        );
        // A chain of wrappers; no tool behind one; no wrapper at all.
        let argv = v(&["time", "nice", "make", "-j4"]);
        assert_eq!(find_wrapped(&argv).unwrap().1[0].at, 3);
        assert_eq!(find_wrapped(&v(&["nice", "cargo", "build", "-j4"])), None);
        assert_eq!(find_wrapped(&v(&["make", "-j4"])), None);
        assert_eq!(find_wrapped(&v(&["cmake", "--build", ".", "-j4"])), None);
    }

    #[test]
    fn the_os_s_words_are_cut_at_the_same_places() {
        use std::ffi::OsString;
        let argv = v(&["make", "-kj4", "-j", "2", "all"]);
        let (_, found) = find(&argv).unwrap();
        let raw: Vec<OsString> = argv.iter().map(OsString::from).collect();
        assert_eq!(take_out(&raw, &found), ["make", "-k", "all"]);
    }

    #[test]
    fn a_j_inside_a_shell_script_is_found() {
        let s = |a: &[&str]| in_script(&v(a));
        assert_eq!(s(&["sh", "-c", "make -j3"]), Some("make -j3".into()));
        assert_eq!(
            s(&[
                "bash",
                "-o",
                "pipefail",
                "-ec",
                "cd x && make -C sub -j 2 2>&1 | tee l"
            ]),
            Some("make -j 2".into())
        );
        assert_eq!(
            s(&[
                "/bin/sh",
                "-c",
                "echo hi; MAKEFLAGS= /usr/bin/ninja -C out -j8"
            ]),
            Some("ninja -j8".into())
        );
        assert_eq!(
            s(&["busybox", "sh", "-c", "(make -kj4)"]),
            Some("make -kj4".into())
        );
        assert_eq!(s(&["sh", "-c", "make"]), None);
        assert_eq!(s(&["sh", "-c", "make -C -j4"]), None);
        assert_eq!(s(&["sh", "script.sh", "make -j4"]), None);
        assert_eq!(s(&["sh", "-c"]), None);
        assert_eq!(s(&["make", "-j4"]), None);
    }
}
