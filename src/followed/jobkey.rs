//! The work a job of the build does, named from its command line: the key
//! under which the governor remembers what the job peaked at
//! (`govern::jobserver::job_peaks`), so that the next run weighs it by its
//! own peak before it grows.
//!
//! A job's first process is what the build tool forked
//! (`followed::jobtree`): the compiler itself (make runs a recipe without
//! shell syntax directly: `cc -O2 -c a.c -o a.o`), a shell running the
//! recipe (ninja always, make for a recipe with `&&`, `>`…:
//! `/bin/sh -c 'cd b && cc … -o a.o'`), or rustc (cargo's jobs). Its
//! `/proc/PID/cmdline` (proc(5): each argument ended by a NUL) names:
//!
//! - a C or C++ compile or link (`cmdline::parse`: `cc`, `gcc`, `clang++`,
//!   cross tools, behind `ccache` or `distcc`): its source file, else its
//!   output;
//! - rustc: its crate and the crate's kind, `NAME (KIND)` from
//!   `--crate-name` and `--crate-type` (`serde (lib)`); a build script
//!   (every crate's is `build_script_build`) by its source file;
//! - anything else: its output (`-o FILE`), else the last word of its
//!   command (`python3 gen.py > out.h`: `out.h`).
//!
//! A relative file is joined to the directory the job started in,
//! relative to the build tool's (`dir`, given by the caller: a
//! sub-make's `-C sub` is `sub`), and to the directory of a leading
//! `cd DIR &&` (or `cd DIR;`) of its command, so that `util.o` of two
//! subdirectories are two keys, and a key does not depend on the
//! directory make was started from. A key longer than [`WORK_LEN`]
//! bytes keeps its end (the file name). Pure, over bytes; never panics.
//!
//! # References
//! proc(5) (`/proc/PID/cmdline`), sh(1) (`-c`), rustc(1) (`--crate-name`,
//! `--crate-type`), gcc(1) (`-o`).

use heapless::Vec;

use crate::followed::cmdline::{self, base_name, command_words, next_word};

/// Most bytes of a key made here.
pub const WORK_LEN: usize = 256;

/// A key naming a job's work (see the module documentation).
pub type Work = Vec<u8, WORK_LEN>;

/// Shells whose `-c` argument is the command a job runs.
const SHELLS: [&[u8]; 5] = [b"sh", b"bash", b"dash", b"ash", b"zsh"];

/// Writes into `out` the key of the job whose first process has the
/// command line `cmdline` (`/proc/PID/cmdline`'s bytes; its NULs are
/// turned into spaces in place); `dir`: the job's directory relative to
/// the build tool's (empty when the same), joined before a relative
/// file, as is the directory of a leading `cd DIR &&`. Returns false,
/// `out` empty, when the command line names nothing (empty, or only
/// options).
pub fn work_of(cmdline: &mut [u8], dir: &[u8], out: &mut Work) -> bool {
    out.clear();
    let text = command_text(cmdline);
    let cd = leading_cd(text);
    let (file, crate_kind) = match cmdline::parse(text) {
        Some(c) if base_name(c.tool) == b"rustc" => match rust_crate(c.args) {
            Some((name, _)) if name == b"build_script_build" => (c.file, None),
            Some(named) => (b"".as_slice(), Some(named)),
            None => (c.file, None),
        },
        Some(c) => (c.file, None),
        None => match target(text) {
            Some(t) => (t, None),
            None => return false,
        },
    };
    let (dir, cd): (&[u8], &[u8]) = match cd {
        Some(c) if c.starts_with(b"/") => (b"", c),
        Some(c) => (dir, c),
        None => (dir, b""),
    };
    match crate_kind {
        Some((name, kind)) => put_tail(out, &[name, b" (", kind, b")"]),
        None if file.starts_with(b"/") => put_tail(out, &[file]),
        None => {
            let slash = |p: &[u8]| if p.is_empty() { &b""[..] } else { b"/" };
            put_tail(out, &[dir, slash(dir), cd, slash(cd), file]);
        }
    }
    !out.is_empty()
}

/// The directory of a leading `cd DIR &&` or `cd DIR;` of `text` (a
/// shell's command): where what follows runs. `None` without one, or
/// for `cd` alone, `cd -` or a `cd` whose next word is no `&&`/`;`.
fn leading_cd(text: &[u8]) -> Option<&[u8]> {
    let (w, rest) = next_word(text)?;
    if w != b"cd" {
        return None;
    }
    let (d, rest) = next_word(rest)?;
    let d = match d.strip_suffix(b";") {
        Some(d) => d,
        None => match next_word(rest)? {
            (b"&&" | b";", _) => d,
            _ => return None,
        },
    };
    let d = d.strip_suffix(b"/").filter(|d| !d.is_empty()).unwrap_or(d);
    (!d.is_empty() && d != b"-" && d != b".").then_some(d)
}

/// The command a job runs: a shell's `-c` argument (`sh -c CMD`, also
/// `-ec`, `-xc`), else the whole command line, its NULs made spaces.
fn command_text(cmdline: &mut [u8]) -> &[u8] {
    let mut args = cmdline.split(|&b| b == 0);
    let shell = args.next().is_some_and(|a| SHELLS.contains(&base_name(a)));
    let flag = args
        .next()
        .is_some_and(|f| f.len() >= 2 && f.starts_with(b"-") && f.ends_with(b"c"));
    if shell && flag {
        let skip = cmdline
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == 0)
            .nth(1)
            .map_or(cmdline.len(), |(i, _)| i + 1);
        let rest = cmdline.get(skip..).unwrap_or_default();
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        return rest.get(..end).unwrap_or_default();
    }
    for b in cmdline.iter_mut().filter(|b| **b == 0) {
        *b = b' ';
    }
    cmdline
}

/// rustc's `--crate-name` and `--crate-type` (`lib` when not given, as
/// rustc defaults) among `args`; `None` without a crate name.
fn rust_crate(args: &[u8]) -> Option<(&[u8], &[u8])> {
    let (mut name, mut kind) = (None, None);
    let mut words = command_words(args);
    while let Some(w) = words.next() {
        match w {
            b"--crate-name" => name = words.next(),
            b"--crate-type" => kind = words.next(),
            _ => {
                name = name.or_else(|| w.strip_prefix(b"--crate-name="));
                kind = kind.or_else(|| w.strip_prefix(b"--crate-type="));
            }
        }
    }
    Some((name?, kind.unwrap_or(b"lib")))
}

/// The target of a command that is no compile: the value of its first
/// `-o` (`-o FILE`, `-oFILE`), else its last word.
fn target(text: &[u8]) -> Option<&[u8]> {
    let mut rest = text;
    let mut last = None;
    while let Some((w, r)) = next_word(rest) {
        if w == b"-o" {
            return next_word(r).map(|(v, _)| v);
        }
        if let Some(v) = w.strip_prefix(b"-o").filter(|v| !v.is_empty()) {
            return Some(v);
        }
        last = Some(w);
        rest = r;
    }
    last.filter(|w| !w.starts_with(b"-"))
}

/// `parts` joined into `out`; when longer than it holds, their last
/// [`WORK_LEN`] bytes.
fn put_tail(out: &mut Work, parts: &[&[u8]]) {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut skip = total.saturating_sub(WORK_LEN);
    for p in parts {
        let from = skip.min(p.len());
        skip -= from;
        let _ = out.extend_from_slice(p.get(from..).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::String;
    use std::vec::Vec as StdVec;

    /// The key of argv `args` (joined by NULs, ended by one, as the
    /// kernel writes it) in `dir`.
    fn key_in(dir: &str, args: &[&str]) -> Option<String> {
        let mut line: StdVec<u8> = StdVec::new();
        for a in args {
            line.extend_from_slice(a.as_bytes());
            line.push(0);
        }
        let mut out = Work::new();
        work_of(&mut line, dir.as_bytes(), &mut out)
            .then(|| String::from_utf8_lossy(&out).into_owned())
    }

    fn key(args: &[&str]) -> Option<String> {
        key_in("", args)
    }

    #[test]
    fn make_runs_a_plain_recipe_directly_and_its_source_names_it() {
        let k = key(&["cc", "-O2", "-g", "-c", "sqlite3.c", "-o", "sqlite3.o"]);
        assert_eq!(k.as_deref(), Some("sqlite3.c"));
        // Output only (a link): the output.
        let k = key(&["/usr/bin/g++", "-o", "app", "a.o", "b.o", "-lm"]);
        assert_eq!(k.as_deref(), Some("app"));
    }

    #[test]
    fn ninja_and_make_run_a_shell_whose_command_is_read() {
        let k = key(&[
            "/bin/sh",
            "-c",
            "ccache /usr/bin/c++ -DX -O2 -o obj/a.o -c ../src/a.cpp",
        ]);
        assert_eq!(k.as_deref(), Some("../src/a.cpp"));
        // CMake's `cd DIR && compiler`, under make's `-ec`.
        let k = key(&[
            "/bin/bash",
            "-ec",
            "cd /b/x && /usr/bin/cc -O2 -o CMakeFiles/x.dir/y.c.o -c /src/y.c",
        ]);
        assert_eq!(k.as_deref(), Some("/src/y.c"));
    }

    #[test]
    fn rustc_is_named_by_its_crate_and_kind() {
        let k = key(&[
            "/home/u/.rustup/toolchains/stable/bin/rustc",
            "--crate-name",
            "serde",
            "--edition=2018",
            "/home/u/.cargo/registry/src/serde-1.0.210/src/lib.rs",
            "--crate-type",
            "lib",
        ]);
        assert_eq!(k.as_deref(), Some("serde (lib)"));
        let k = key(&[
            "rustc",
            "--crate-name=headroom",
            "src/main.rs",
            "--crate-type=bin",
        ]);
        assert_eq!(k.as_deref(), Some("headroom (bin)"));
        // Every build script has the same crate name: its source names it.
        let k = key(&[
            "rustc",
            "--crate-name",
            "build_script_build",
            "/r/libc-0.2.158/build.rs",
            "--crate-type",
            "bin",
        ]);
        assert_eq!(k.as_deref(), Some("/r/libc-0.2.158/build.rs"));
    }

    #[test]
    fn other_commands_are_named_by_their_output_or_last_word() {
        let k = key(&["/bin/sh", "-c", "python3 gen.py --x 1 > include/out.h"]);
        assert_eq!(k.as_deref(), Some("include/out.h"));
        let k = key(&["protoc", "-ogen/a.pb", "a.proto"]);
        assert_eq!(k.as_deref(), Some("gen/a.pb"));
        let k = key(&["/bin/sh", "-c", "ar rcs -o libx.a a.o"]);
        assert_eq!(k.as_deref(), Some("libx.a"));
    }

    #[test]
    fn a_relative_file_is_joined_to_the_job_s_directory() {
        let k = key_in("sub/dir", &["cc", "-c", "util.c", "-o", "util.o"]);
        assert_eq!(k.as_deref(), Some("sub/dir/util.c"));
        let k = key_in("sub", &["cc", "-c", "/abs/util.c"]);
        assert_eq!(k.as_deref(), Some("/abs/util.c"));
        let k = key_in("sub", &["rustc", "--crate-name", "x", "src/lib.rs"]);
        assert_eq!(k.as_deref(), Some("x (lib)"));
    }

    /// Issue 42: where the job runs, not where make was started, names
    /// its directory: a `cd DIR &&` of its own is joined (whenever the
    /// job is looked at, before or after its shell ran the `cd`).
    #[test]
    fn a_leading_cd_is_joined_and_two_subdirectories_stay_two_keys() {
        let a = key(&["/bin/sh", "-c", "cd a && cc -c util.c -o util.o"]);
        let b = key(&["/bin/sh", "-c", "cd b && cc -c util.c -o util.o"]);
        assert_eq!(
            (a.as_deref(), b.as_deref()),
            (Some("a/util.c"), Some("b/util.c"))
        );
        let k = key_in("lib", &["sh", "-c", "cd x/; cc -c u.c"]);
        assert_eq!(k.as_deref(), Some("lib/x/u.c"));
        let k = key_in("lib", &["sh", "-c", "cd x ; python3 gen.py > out.h"]);
        assert_eq!(k.as_deref(), Some("lib/x/out.h"));
        // An absolute cd: the key no longer depends on `dir`.
        let k = key_in("lib", &["sh", "-c", "cd /b/x && python3 g.py > libx.h"]);
        assert_eq!(k.as_deref(), Some("/b/x/libx.h"));
        // Absolute files, crates, and cd that is no prefix: unchanged.
        let k = key(&["sh", "-c", "cd /b/x && /usr/bin/cc -o y.o -c /src/y.c"]);
        assert_eq!(k.as_deref(), Some("/src/y.c"));
        let k = key(&["sh", "-c", "cd sub && rustc --crate-name z src/lib.rs"]);
        assert_eq!(k.as_deref(), Some("z (lib)"));
        for not_cd in [
            "cd - && cc -c a.c",
            "cd . && cc -c a.c",
            "cd x || cc -c a.c",
        ] {
            let k = key_in("d", &["sh", "-c", not_cd]);
            assert_eq!(k.as_deref(), Some("d/a.c"), "{not_cd}");
        }
        assert_eq!(key(&["sh", "-c", "cd"]).as_deref(), Some("cd"));
    }

    #[test]
    fn a_long_key_keeps_its_end() {
        let long = format!("/{}/tu.cpp", "d".repeat(400));
        let k = key(&["c++", "-c", &long]).unwrap();
        assert_eq!(k.len(), WORK_LEN);
        assert!(k.ends_with("/tu.cpp"), "{k}");
        // The directory joined in front is what is cut.
        let k = key_in(&"p".repeat(300), &["cc", "-c", "a.c"]).unwrap();
        assert_eq!(k.len(), WORK_LEN);
        assert!(k.ends_with("p/a.c"));
    }

    #[test]
    fn nothing_to_name_is_no_key_and_bad_bytes_do_not_panic() {
        assert_eq!(key(&[]), None);
        assert_eq!(key(&["/bin/sh", "-c", ""]), None);
        assert_eq!(key(&["-x", "--y"]), None);
        assert_eq!(key(&["sh", "-c"]), None);
        let mut junk = *b"\0\0\xff\0-c\0\0\0-o";
        let mut out = Work::new();
        let _ = work_of(&mut junk, b"", &mut out);
        let mut cut = *b"cc\0-c\0a.c\0-o";
        assert!(work_of(&mut cut, b"", &mut out));
        assert_eq!(&out[..], b"a.c");
    }
}
