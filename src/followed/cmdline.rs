//! A build log's compiler and linker command lines: what `make` echoes
//! (`cc -O2 -c a.c -o a.o`), libtool's `libtool: compile:  gcc … -c foo.c`,
//! CMake's verbose `cd /b && /usr/bin/c++ … -c /src/x.cpp`, kbuild's `V=1`
//! lines; made into a short `context` such as `a.c (cc -O2)`.
//!
//! [`crate::followed::logtail::scan`] falls back on these when none of the
//! last lines has one of the toolchain's markers. Zero-copy: a
//! [`Command`] is views into the log line, and [`Command::context_into`]
//! formats it into a fixed buffer.
//!
//! # References
//! gcc(1) (`-c`, `-o`, the file suffixes of "Options Controlling the Kind
//! of Output"), ld(1), rustc(1), libtool's manual ("Compile mode", "Link
//! mode"), sh(1) (variable assignments before a command, `&&`, `;`).

use crate::followed::text::{CONTEXT_CHARS, Context, sanitize_into};

/// A compiler or linker command line: zero-copy views into the log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command<'a> {
    /// The tool's word as written (`/usr/bin/cc`, `aarch64-linux-gnu-gcc`).
    pub tool: &'a [u8],
    /// The file shown first: the first source file (the file being
    /// compiled), else the `-o` output (a link), else the first object.
    pub file: &'a [u8],
    /// The line after the tool's word, up to the end of its command (a
    /// `&&`, `||`, `;` or `|` word, or the end of the line).
    pub args: &'a [u8],
}

/// Words that end one command of a shell line and may start another.
const SEPARATORS: [&[u8]; 4] = [b"&&", b"||", b";", b"|"];

/// Compiler drivers and linkers by their base name (after a version
/// suffix such as `-12` is dropped): exact names.
const DRIVERS: [&[u8]; 8] = [
    b"cc", b"gcc", b"g++", b"c++", b"clang", b"clang++", b"rustc", b"ld",
];

/// Cross tools: a target triple, then one of these (`aarch64-linux-gnu-gcc`,
/// `riscv64-linux-gnu-ld`).
const CROSS_SUFFIXES: [&[u8]; 7] = [
    b"-gcc",
    b"-g++",
    b"-cc",
    b"-c++",
    b"-clang",
    b"-clang++",
    b"-ld",
];

/// What libtool prints before the command it runs.
const LIBTOOL_PREFIXES: [&[u8]; 2] = [b"libtool: compile:", b"libtool: link:"];

/// Words before the tool that run it: build caches and distributors.
const LAUNCHERS: [&[u8]; 5] = [b"ccache", b"sccache", b"distcc", b"icecc", b"env"];

/// Suffixes (after the last `.`) of files a compiler reads as source.
const SOURCE_SUFFIXES: [&[u8]; 15] = [
    b"c", b"cc", b"cp", b"cpp", b"cxx", b"c++", b"C", b"S", b"s", b"sx", b"m", b"mm", b"f", b"f90",
    b"rs",
];

/// Suffixes of object files, archives and shared objects (a link's inputs).
const OBJECT_SUFFIXES: [&[u8]; 6] = [b"o", b"lo", b"obj", b"a", b"la", b"so"];

/// Options never shown in the context: they name files or only tune the
/// preprocessor, warnings and dependency files (`-c` and `-o` are said by
/// the file shown). Matched as prefixes (`-DNDEBUG`, `-Wl,--as-needed`).
const HIDDEN_PREFIXES: [&[u8]; 9] = [
    b"-c", b"-o", b"-D", b"-U", b"-I", b"-M", b"-W", b"-L", b"-i",
];

/// Hidden options whose value may be the next word (`-o a.o`, `-MF x.d`,
/// `-include config.h`): that word is skipped too.
const HIDDEN_WITH_VALUE: [&[u8]; 13] = [
    b"-o",
    b"-MF",
    b"-MT",
    b"-MQ",
    b"-D",
    b"-U",
    b"-I",
    b"-L",
    b"-include",
    b"-imacros",
    b"-isystem",
    b"-iquote",
    b"-idirafter",
];

/// A file name longer than this many bytes is shown as `.../` and its last
/// path components (at most [`FILE_TAIL`] bytes of them): the file and the
/// tool must fit in the 80 characters of the context.
const FILE_SHOWN: usize = 50;

/// Most bytes of path components kept after `.../` (see [`FILE_SHOWN`]).
const FILE_TAIL: usize = FILE_SHOWN - 4;

/// The first word of `b` (words are separated by spaces and tabs) and
/// what follows it; `None` when `b` has no word.
pub(crate) fn next_word(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let start = b.iter().position(|&c| c != b' ' && c != b'\t')?;
    let b = b.get(start..)?;
    let end = b
        .iter()
        .position(|&c| c == b' ' || c == b'\t')
        .unwrap_or(b.len());
    Some((b.get(..end)?, b.get(end..)?))
}

/// The words of `b` up to the end of its command: a separator word, or a
/// word that ends in `;` (`cd /b; cc …`, `cc -c a.c; echo`), which is
/// the command's last word, given without its `;`.
pub(crate) fn command_words(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(b);
    core::iter::from_fn(move || {
        let (w, r) = next_word(rest?)?;
        rest = Some(r);
        if SEPARATORS.contains(&w) {
            return None;
        }
        match ends_command(w) {
            Some(last) => {
                rest = None;
                Some(last)
            }
            None => Some(w),
        }
    })
}

/// A word that ends its shell command with a `;` of its own (`/b;`):
/// the word without it. `None` for other words and a bare `;`.
fn ends_command(word: &[u8]) -> Option<&[u8]> {
    word.strip_suffix(b";").filter(|w| !w.is_empty())
}

/// The part of `name` after its last `/`.
pub(crate) fn base_name(name: &[u8]) -> &[u8] {
    match name.iter().rposition(|&c| c == b'/') {
        Some(i) => name.get(i + 1..).unwrap_or_default(),
        None => name,
    }
}

/// `name` without a version suffix `-<digit>[digits and dots]`
/// (`gcc-12`, `clang++-17`, `aarch64-linux-gnu-gcc-12.2`).
fn without_version(name: &[u8]) -> &[u8] {
    let Some(dash) = name.iter().rposition(|&c| c == b'-') else {
        return name;
    };
    let (head, tail) = name.split_at(dash);
    let v = tail.get(1..).unwrap_or_default();
    let is_version = v.first().is_some_and(u8::is_ascii_digit)
        && v.iter().all(|&c| c.is_ascii_digit() || c == b'.');
    if is_version && !head.is_empty() {
        head
    } else {
        name
    }
}

/// True when `word` names a compiler driver or linker: by its base name
/// without a version, one of `cc gcc g++ c++ clang clang++ rustc ld`, an
/// `ld.NAME` (`ld.lld`, `ld.gold`), or a cross tool `<triple>-gcc` (also
/// `-g++ -cc -c++ -clang -clang++ -ld`, and `-ld.NAME`).
///
/// ```
/// use headroom::followed::cmdline::is_driver;
/// assert!(is_driver(b"/usr/bin/aarch64-linux-gnu-gcc-12"));
/// assert!(is_driver(b"ld.lld"));
/// assert!(!is_driver(b"gcc-ar"));
/// assert!(!is_driver(b"gcc:"));
/// ```
pub fn is_driver(word: &[u8]) -> bool {
    let name = without_version(base_name(word));
    // `ld.lld`, `aarch64-linux-gnu-ld.bfd`: the part before the first `.`.
    let stem = match name.iter().position(|&c| c == b'.') {
        Some(i) if name.get(..i).is_some_and(|s| s.ends_with(b"ld")) => &name[..i],
        _ => name,
    };
    DRIVERS.contains(&stem)
        || CROSS_SUFFIXES
            .iter()
            .any(|s| stem.len() > s.len() && stem.ends_with(s))
}

/// The suffix of `word` after its last `.`, when it has a name before it.
fn suffix(word: &[u8]) -> Option<&[u8]> {
    let name = base_name(word);
    let dot = name.iter().rposition(|&c| c == b'.')?;
    (dot > 0).then(|| name.get(dot + 1..)).flatten()
}

/// True when `word` is a source file by its suffix.
fn is_source(word: &[u8]) -> bool {
    !word.starts_with(b"-") && suffix(word).is_some_and(|s| SOURCE_SUFFIXES.contains(&s))
}

/// True when `word` is an object file, archive or shared object.
fn is_object(word: &[u8]) -> bool {
    !word.starts_with(b"-") && suffix(word).is_some_and(|s| OBJECT_SUFFIXES.contains(&s))
}

/// The file a command line is about (see [`Command::file`]) among `args`;
/// `None` when it names no source or object file.
fn file_of(args: &[u8]) -> Option<&[u8]> {
    let (mut source, mut output, mut object) = (None, None, None);
    let mut words = command_words(args);
    while let Some(w) = words.next() {
        if w == b"-o" {
            output = output.or(words.next());
        } else if let Some(o) = w.strip_prefix(b"-o") {
            output = output.or(Some(o));
        } else if HIDDEN_WITH_VALUE.contains(&w) {
            words.next();
        } else if is_source(w) {
            source = source.or(Some(w));
        } else if is_object(w) {
            object = object.or(Some(w));
        }
    }
    let names_a_file = source.is_some()
        || object.is_some()
        || output.is_some_and(|o| is_source(o) || is_object(o));
    if !names_a_file {
        return None;
    }
    source.or(output).or(object)
}

/// True when `word` is a shell variable assignment (`CCACHE_DIR=/x`).
fn is_assignment(word: &[u8]) -> bool {
    let Some(eq) = word.iter().position(|&c| c == b'=') else {
        return false;
    };
    let name = &word[..eq];
    name.first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
        && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The compiler command of the first shell command of `b`: its tool is
/// the first word after assignments, launchers (`ccache`, `distcc`,
/// `env`…) and `set -x`'s `+`, or the word after a libtool
/// `--mode=compile` / `--mode=link`. `Err` with the line after that shell
/// command's separator word (`None`: there is no more) when it is none.
/// One pass over the words.
fn command_in(b: &[u8]) -> Result<Command<'_>, Option<&[u8]>> {
    let mut rest = b;
    let mut first = true;
    // One driver per command is looked at (its file searched for): the
    // scan stays linear in the line, however many `--mode=` words and
    // drivers a hostile line repeats.
    let mut tried = false;
    while let Some((w, r)) = next_word(rest) {
        rest = r;
        if SEPARATORS.contains(&w) {
            return Err(Some(r));
        }
        let last = ends_command(w);
        let w = last.unwrap_or(w);
        if w == b"--mode=compile" || w == b"--mode=link" {
            first = !tried;
        } else if last.is_some() {
            // `cd /b;`: this command ends here, with no file after its tool.
        } else if first
            && !(is_assignment(w) || LAUNCHERS.contains(&w) || w.iter().all(|&c| c == b'+'))
        {
            first = false;
            let driver = is_driver(w);
            tried |= driver;
            if driver && let Some(file) = file_of(r) {
                return Ok(Command {
                    tool: w,
                    file,
                    args: r,
                });
            }
        }
        if last.is_some() {
            return Err(Some(r));
        }
    }
    Err(None)
}

/// The first compiler or linker command in a log line's visible text
/// (after `\r`, a BuildKit prefix dropped): a tool that [`is_driver`]
/// with a source or object file among its words. The line may start with
/// `libtool: compile:` or `libtool: link:`, and hold several shell
/// commands joined by `&&`, `||`, `;` or `|` (CMake's `cd DIR && cc …`).
///
/// ```
/// use headroom::followed::cmdline::parse;
/// let c = parse(b"libtool: compile:  gcc -DHAVE_CONFIG_H -I. -g -O2 -c foo.c  -fPIC -o .libs/foo.o").unwrap();
/// assert_eq!((c.tool, c.file), (&b"gcc"[..], &b"foo.c"[..]));
/// assert_eq!(parse(b"gcc: error: foo.c: No such file"), None);
/// assert_eq!(parse(b"gcc --version"), None);
/// ```
pub fn parse(text: &[u8]) -> Option<Command<'_>> {
    let start = text
        .iter()
        .position(|&c| c != b' ' && c != b'\t')
        .unwrap_or(text.len());
    let text = text.get(start..).unwrap_or_default();
    let mut rest = LIBTOOL_PREFIXES
        .iter()
        .find_map(|p| text.strip_prefix(*p))
        .unwrap_or(text);
    loop {
        match command_in(rest) {
            Ok(c) => return Some(c),
            Err(Some(next)) => rest = next,
            Err(None) => return None,
        }
    }
}

/// `file`, or `.../` and its last path components when it is longer than
/// [`FILE_SHOWN`] bytes (at least its base name).
fn shortened(file: &[u8]) -> (&'static [u8], &[u8]) {
    if file.len() <= FILE_SHOWN {
        return (b"", file);
    }
    let from = file.len() - FILE_TAIL;
    let cut = file
        .iter()
        .skip(from)
        .position(|&c| c == b'/')
        .map(|i| from + i + 1)
        .filter(|&i| i < file.len())
        .unwrap_or_else(|| file.len() - base_name(file).len());
    (b".../", file.get(cut..).unwrap_or(file))
}

/// The options shown after the tool: words starting with `-` but not
/// hidden ([`HIDDEN_PREFIXES`]), each with its value when the next word is
/// neither an option nor a file (`-m elf_x86_64`, `--crate-name foo`).
fn shown_options(args: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut words = command_words(args).peekable();
    let mut showing = false;
    core::iter::from_fn(move || {
        loop {
            let w = words.next()?;
            if HIDDEN_WITH_VALUE.contains(&w) {
                words.next();
                showing = false;
            } else if w.starts_with(b"-") {
                showing = !HIDDEN_PREFIXES.iter().any(|p| w.starts_with(p));
                if showing {
                    return Some(w);
                }
            } else if core::mem::take(&mut showing) && !is_source(w) && !is_object(w) {
                return Some(w);
            }
        }
    })
}

/// Most bytes of the display form before sanitizing: the context's 80
/// characters are at most this many bytes of the line's words.
const RAW_CAP: usize = CONTEXT_CHARS * 4;

impl Command<'_> {
    /// Writes the `context` column for this command: the file (shortened
    /// to `.../` and its last components past [`FILE_SHOWN`] bytes), then
    /// in parentheses the tool's base name and its leading shown options,
    /// as many whole ones as fit in 80 characters: `a.c (cc -O2)`,
    /// `foo.c (gcc -g -O2 -fPIC)`. Options naming files or tuning the
    /// preprocessor, warnings and dependency files (`-c -o -D -U -I -M -W
    /// -L -i…`) are left out. Sanitized and cut as every context is.
    ///
    /// ```
    /// use headroom::followed::cmdline::parse;
    /// use headroom::followed::text::Context;
    /// let mut out = Context::new();
    /// parse(b"cc -O2 -Wall -c a.c -o a.o").unwrap().context_into(&mut out);
    /// assert_eq!(out.as_str(), "a.c (cc -O2)");
    /// ```
    pub fn context_into(&self, out: &mut Context) {
        let mut raw = heapless::Vec::<u8, RAW_CAP>::new();
        let (dots, file) = shortened(self.file);
        let _ = raw.extend_from_slice(dots);
        let _ = raw.extend_from_slice(file);
        let _ = raw.extend_from_slice(b" (");
        let _ = raw.extend_from_slice(base_name(self.tool));
        for w in shown_options(self.args) {
            // Whole words only, and room left for the `)`.
            if raw.len() + 1 + w.len() + 1 > CONTEXT_CHARS {
                break;
            }
            let _ = raw.push(b' ');
            let _ = raw.extend_from_slice(w);
        }
        let _ = raw.push(b')');
        sanitize_into(&raw, CONTEXT_CHARS, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The context of `line`, or `None` when it is no compiler command.
    fn shown(line: &str) -> Option<std::string::String> {
        extern crate std;
        let c = parse(line.as_bytes())?;
        let mut out = Context::new();
        c.context_into(&mut out);
        Some(out.as_str().into())
    }

    extern crate std;

    #[test]
    fn make_echo_lines() {
        assert_eq!(
            shown("cc -O2 -c a.c -o a.o").as_deref(),
            Some("a.c (cc -O2)")
        );
        assert_eq!(
            shown("g++ -std=c++17 -O2 -g -c src/x.cpp -o build/x.o").as_deref(),
            Some("src/x.cpp (g++ -std=c++17 -O2 -g)")
        );
        // A link: the -o output, joined or not.
        assert_eq!(
            shown("gcc -o app main.o util.o -lm").as_deref(),
            Some("app (gcc -lm)")
        );
        assert_eq!(shown("gcc -oapp main.o").as_deref(), Some("app (gcc)"));
        // Compile and link at once: the file being compiled.
        assert_eq!(
            shown("cc -O2 -o hello hello.c").as_deref(),
            Some("hello.c (cc -O2)")
        );
        // A plain ld without -o: its first object.
        assert_eq!(shown("ld -r a.o b.o").as_deref(), Some("a.o (ld -r)"));
        // The recipe's other commands do not matter.
        assert_eq!(
            shown("cc -O2 -c b.c -o b.o && sleep 2").as_deref(),
            Some("b.c (cc -O2)")
        );
    }

    #[test]
    fn libtool_and_autotools_lines() {
        assert_eq!(
            shown("libtool: compile:  gcc -DHAVE_CONFIG_H -I. -I.. -g -O2 -MT foo.lo -MD -MP -MF .deps/foo.Tpo -c foo.c  -fPIC -DPIC -o .libs/foo.o").as_deref(),
            Some("foo.c (gcc -g -O2 -fPIC)")
        );
        assert_eq!(
            shown("libtool: link: gcc -shared  -fPIC -DPIC  .libs/foo.o   -O2   -Wl,-soname -Wl,libfoo.so.0 -o .libs/libfoo.so.0.0.0").as_deref(),
            Some(".libs/libfoo.so.0.0.0 (gcc -shared -fPIC -O2)")
        );
        // make's echo of the libtool call itself.
        assert_eq!(
            shown("/bin/bash ../libtool  --tag=CC   --mode=compile gcc -DHAVE_CONFIG_H -I. -g -O2 -c -o bar.lo bar.c").as_deref(),
            Some("bar.c (gcc -g -O2)")
        );
        // Assignments and launchers before the tool.
        assert_eq!(
            shown("CCACHE_DIR=/tmp/cc ccache gcc -Os -c z.c").as_deref(),
            Some("z.c (gcc -Os)")
        );
        assert_eq!(shown("+ cc -c q.c").as_deref(), Some("q.c (cc)"));
    }

    #[test]
    fn cmake_verbose_and_kbuild_lines() {
        assert_eq!(
            shown("cd /b/src && /usr/bin/c++  -DFOO -I/src/include -O3 -DNDEBUG -o CMakeFiles/app.dir/main.cpp.o -c /src/main.cpp").as_deref(),
            Some("/src/main.cpp (c++ -O3)")
        );
        assert_eq!(
            shown("/usr/bin/c++ -O3 -DNDEBUG CMakeFiles/app.dir/main.cpp.o -o app").as_deref(),
            Some("app (c++ -O3)")
        );
        assert_eq!(
            shown("  aarch64-linux-gnu-gcc -Wp,-MMD,kernel/.fork.o.d -nostdinc -I./arch/arm64/include -mlittle-endian -O2 -c -o kernel/fork.o kernel/fork.c").as_deref(),
            Some("kernel/fork.c (aarch64-linux-gnu-gcc -nostdinc -mlittle-endian -O2)")
        );
        assert_eq!(
            shown(
                "  aarch64-linux-gnu-ld -EL -maarch64elf -r -o vmlinux.o --whole-archive vmlinux.a"
            )
            .as_deref(),
            Some("vmlinux.o (aarch64-linux-gnu-ld -EL -maarch64elf -r --whole-archive)")
        );
        assert_eq!(
            shown("rustc --crate-name foo --edition=2021 src/lib.rs --crate-type lib").as_deref(),
            Some("src/lib.rs (rustc --crate-name foo --edition=2021 --crate-type lib)")
        );
        assert_eq!(
            shown("gcc-12 -O1 -c v.c").as_deref(),
            Some("v.c (gcc-12 -O1)")
        );
        assert_eq!(
            shown("ld -m elf_x86_64 -o vmlinux a.o").as_deref(),
            Some("vmlinux (ld -m elf_x86_64)")
        );
    }

    #[test]
    fn long_paths_and_options_are_cut_to_whole_words() {
        let dir = "/home/builder/work/very/deep/source/tree/of/the/project/src";
        let line = std::format!("gcc -O2 -c {dir}/module/file.c");
        assert_eq!(
            shown(&line).as_deref(),
            Some(".../source/tree/of/the/project/src/module/file.c (gcc -O2)")
        );
        // A base name longer than the tail is kept whole.
        let long = std::format!("cc -c /a/{}.c", "x".repeat(60));
        let s = shown(&long).unwrap();
        assert!(s.starts_with(".../xxxx"), "{s}");
        assert!(s.chars().count() <= CONTEXT_CHARS, "{s}");
        // Options stop at the last whole one that fits, and the `)` stays.
        let many = std::format!("cc {} -c a.c", "-fno-strict-aliasing ".repeat(10));
        let s = shown(&many).unwrap();
        assert!(s.ends_with("-fno-strict-aliasing)"), "{s}");
        assert!(s.chars().count() <= CONTEXT_CHARS, "{s}");
        // Commas and quotes in options are sanitized like any context.
        assert_eq!(
            shown("cc -fsanitize=address,undefined -DX=\"1\" -c a.c").as_deref(),
            Some("a.c (cc -fsanitize=address undefined)")
        );
    }

    /// The table in README.md's "Stage and context".
    #[test]
    fn the_readme_examples() {
        for (line, want) in [
            ("cc -O2 -c a.c -o a.o", "a.c (cc -O2)"),
            (
                "libtool: compile:  gcc -DHAVE_CONFIG_H -I. -g -O2 -MT foo.lo -MD -c foo.c -fPIC -DPIC -o .libs/foo.o",
                "foo.c (gcc -g -O2 -fPIC)",
            ),
            (
                "cd /b/src && /usr/bin/c++ -DNDEBUG -O3 -o CMakeFiles/app.dir/main.cpp.o -c /src/main.cpp",
                "/src/main.cpp (c++ -O3)",
            ),
            ("cc -o demo a.o b.o -lm", "demo (cc -lm)"),
        ] {
            assert_eq!(shown(line).as_deref(), Some(want), "{line}");
        }
    }

    #[test]
    fn near_misses_are_not_commands() {
        for line in [
            "gcc: fatal error: no input files",
            "gcc --version",
            "make[1]: Entering directory '/src'",
            "echo cc -c a.c",
            "cc -c",
            "cc -o app",
            "gcc-ar rcs libx.a a.o",
            "ccc -c a.c",
            "cc.o -c a.c",
            "-gcc -c a.c",
            "",
            "   ",
            "a.c",
            "./configure CC=gcc",
            "rm -f a.o b.o",
        ] {
            assert_eq!(shown(line), None, "{line:?}");
        }
        // `--mode=link` without a tool after it is nothing.
        assert_eq!(shown("libtool --mode=link"), None);
        assert!(is_driver(b"x86_64-w64-mingw32-g++"));
        assert!(is_driver(b"clang++-17"));
        assert!(is_driver(b"riscv64-linux-gnu-ld.bfd"));
        assert!(!is_driver(b"-gcc"));
        assert!(!is_driver(b"gcc-"));
        assert!(!is_driver(b"old"));
        assert!(!is_driver(b"build"));
    }

    /// Starts of the hostile lines below: none, or a command.
    const HEADS: &[&[u8]] = &[
        b"",
        b"cc -c a.o ",
        b"libtool: link: ld x.o ",
        b"x && gcc a.c ",
    ];

    /// A `;` at the end of a word ends its command as a `;` word does.
    #[test]
    fn a_semicolon_at_a_words_end_ends_the_command() {
        assert_eq!(
            shown("cd /b; cc -O2 -c a.c").as_deref(),
            Some("a.c (cc -O2)")
        );
        assert_eq!(
            shown("cc -O2 -c a.c; echo done").as_deref(),
            Some("a.c (cc -O2)")
        );
        assert_eq!(shown("cc -O2; echo a.c"), None);
        assert_eq!(shown("cd /b; echo a.c"), None);
    }

    /// A 64 KiB line of `--mode=compile cc ` repeated: each `--mode=` no
    /// longer re-arms the driver search once a driver was tried, so the
    /// line is scanned once (it took 12 s of CPU per row before), and a
    /// driver after `--mode=` still counts the first time.
    #[test]
    fn repeated_mode_words_are_scanned_once() {
        let line = b"--mode=compile cc ".repeat(3600);
        assert_eq!(parse(&line), None);
        let mut fine = b"--mode=compile cc -c a.c ".to_vec();
        fine.extend_from_slice(&line);
        assert_eq!(parse(&fine).map(|c| c.file), Some(&b"a.c"[..]));
    }

    proptest::proptest! {
        /// Any line of driver-ish bytes, separators, quotes, commas and
        /// invalid UTF-8: no panic, and a CSV-safe context of 80 at most.
        #[test]
        fn hostile_words_never_panic_or_escape(
            head in proptest::sample::select(HEADS),
            tail in proptest::collection::vec(
                proptest::sample::select(&b"cgl+d-o. /ac&;|=\t\xe9,\"\x1bOS"[..]),
                0..120,
            )
        ) {
            let v = [head, &tail[..]].concat();
            if let Some(c) = parse(&v) {
                let mut out = Context::new();
                c.context_into(&mut out);
                proptest::prop_assert!(!out.contains(',') && !out.contains('"'));
                proptest::prop_assert!(out.chars().count() <= CONTEXT_CHARS);
            }
        }
    }
}
