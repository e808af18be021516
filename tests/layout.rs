//! The architecture, checked (issue 13): `src/`'s folders are the layers and
//! imports go down them; the binary is thin; files and functions stay short
//! enough to read whole.
//!
//! The rules, each a test below:
//! - `lib.rs` is the list of the library's layers, lowest first; a module
//!   imports (`crate::LAYER::…`) only from its own layer or a lower one;
//! - each layer's `mod.rs` (and that of a module that is a folder, as
//!   `govern/jobserver/`) is only a list of its modules, a line each, and
//!   lists every file in its folder;
//! - no two files under `src/` share a name, other than `mod.rs`;
//! - the binary: `src/main.rs` at most 300 lines; its modules in `src/cli/`
//!   import each other only downwards ([`CLI`]) and never `main.rs`;
//! - no file under `src/` over 1,200 lines; no function over 120 lines.
//!
//! The checks read the source as rustfmt leaves it (`cargo fmt --check`
//! runs first in `ci/test`): a function ends at the first `}` at its own
//! indentation.

use std::path::{Path, PathBuf};

/// The library's layers, lowest first: the folders of `src/`.
const LAYERS: [&str; 7] = [
    "kernel", "followed", "tick", "report", "plan", "govern", "remote",
];

/// The binary's modules in `src/cli/`, lowest first: `(module, rank)`. A
/// module may use those of a lower rank only.
const CLI: &[(&str, u8)] = &[
    ("messages", 0),
    ("options", 0),
    ("shell", 0),
    ("suggest", 0),
    ("argv", 1),
    ("defaults", 1),
    ("files", 1),
    ("signals", 1),
    ("child", 2),
    ("pool", 2),
    ("remote", 2),
    ("status_line", 2),
    ("action_row", 3),
    ("jobserver_notes", 3),
    ("report_cmd", 3),
    ("status_pool", 3),
    ("jobserver_setup", 4),
    ("plan", 4),
    ("record", 5),
    ("mod", 6),
];

const MAX_FILE_LINES: usize = 1200;
const MAX_MAIN_LINES: usize = 300;
const MAX_FN_LINES: usize = 120;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src()).unwrap().display().to_string()
}

/// The code of a line: empty for a comment line, else the part before a
/// trailing `//` comment (a `//` inside a string literal would cut the
/// line short, which can only hide an import, never invent one).
fn code(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with("//") {
        return "";
    }
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// The names that follow `prefix` on the code lines of `text`
/// (`crate::` → `kernel`, `tick`, …), with their line numbers.
fn paths_after(text: &str, prefix: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = code(line);
        let mut rest = line;
        while let Some(i) = rest.find(prefix) {
            let before = &rest[..i];
            let after = &rest[i + prefix.len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `$crate::` in a macro, or `xcrate::`: not this path.
            if !before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                out.push((n + 1, name));
            }
            rest = after;
        }
    }
    out
}

fn layer_rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

#[test]
fn lib_rs_is_the_list_of_layers_lowest_first() {
    let lib = read(&src().join("lib.rs"));
    let mods: Vec<&str> = lib
        .lines()
        .map(code)
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert_eq!(mods, LAYERS, "src/lib.rs must declare the layers in order");
    let other: Vec<&str> = lib
        .lines()
        .map(code)
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("#![")
                && !l.starts_with("pub mod ")
                && *l != "#[cfg(feature = \"remote\")]"
                && *l != "extern crate std;"
        })
        .collect();
    assert!(
        other.is_empty(),
        "src/lib.rs has more than the layers: {other:?}"
    );
    for l in LAYERS {
        assert!(src().join(l).is_dir(), "src/{l}/ is missing");
    }
}

#[test]
fn each_layer_mod_rs_lists_its_modules_a_line_each() {
    for l in LAYERS.into_iter().chain(["cli"]) {
        for dir in folders_with_mod_rs(&src().join(l)) {
            check_mod_list(&dir);
        }
    }
}

/// `dir` and every folder below it that has a `mod.rs` (a module that is a
/// folder, as `govern/jobserver/`), sorted.
fn folders_with_mod_rs(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for p in entries {
        if p.join("mod.rs").is_file() {
            out.extend(folders_with_mod_rs(&p));
        }
    }
    out
}

/// `dir/mod.rs` is only a list of modules, a line each with its
/// description, and lists every file of `dir` and every folder of it with
/// a `mod.rs` of its own.
fn check_mod_list(dir: &Path) {
    let l = rel(dir);
    let text = read(&dir.join("mod.rs"));
    let mut listed = Vec::new();
    for line in text.lines() {
        let c = code(line).trim();
        if c.is_empty() {
            continue;
        }
        let m = c
            .strip_prefix("pub mod ")
            .and_then(|m| m.strip_suffix(';'))
            .unwrap_or_else(|| panic!("src/{l}/mod.rs: not a module line: {line}"));
        assert!(
            line.contains("; // "),
            "src/{l}/mod.rs: `{m}` needs its line of description"
        );
        listed.push(m.to_string());
    }
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let n = p.file_name()?.to_string_lossy().into_owned();
            if p.is_dir() {
                p.join("mod.rs").is_file().then_some(n)
            } else {
                (n.ends_with(".rs") && n != "mod.rs" && !n.ends_with("_tests.rs"))
                    .then(|| n.trim_end_matches(".rs").to_string())
            }
        })
        .collect();
    files.sort();
    listed.sort();
    assert_eq!(
        listed, files,
        "src/{l}/mod.rs must list every file in src/{l}/"
    );
}

/// Issue 27: a file's name says what it holds, once: no two files under
/// `src/` share a name (other than `mod.rs`), whatever their folders.
#[test]
fn no_two_source_files_share_a_name() {
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in rust_files(&src()) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name != "mod.rs" {
            seen.entry(name).or_default().push(rel(&f));
        }
    }
    let twice: Vec<String> = seen
        .into_iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "file names used twice:\n{}",
        twice.join("\n")
    );
}

#[test]
fn library_imports_only_go_down_the_layers() {
    let mut wrong = Vec::new();
    for l in LAYERS {
        let own = layer_rank(l).unwrap();
        for f in rust_files(&src().join(l)) {
            let text = read(&f);
            for (n, target) in paths_after(&text, "crate::") {
                match layer_rank(&target) {
                    Some(r) if r <= own => {}
                    Some(_) => wrong.push(format!("{}:{n}: {l} imports {target}", rel(&f))),
                    None if target.is_empty() => wrong.push(format!(
                        "{}:{n}: crate::{{…}}: name the layer (crate::LAYER::{{…}})",
                        rel(&f)
                    )),
                    None => wrong.push(format!("{}:{n}: crate::{target} is not a layer", rel(&f))),
                }
            }
            for (n, _) in paths_after(&text, "super::super::") {
                wrong.push(format!("{}:{n}: super::super:: (name the layer)", rel(&f)));
            }
        }
    }
    wrong.sort();
    assert!(
        wrong.is_empty(),
        "imports that point up:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_binary_is_thin_and_its_modules_import_downwards() {
    let main = read(&src().join("main.rs"));
    let n = main.lines().count();
    assert!(
        n <= MAX_MAIN_LINES,
        "src/main.rs has {n} lines (at most {MAX_MAIN_LINES})"
    );
    let rank = |m: &str| CLI.iter().find(|(name, _)| *name == m).map(|(_, r)| *r);
    let mut wrong = Vec::new();
    for f in rust_files(&src().join("cli")) {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let own = rank(&stem).unwrap_or_else(|| {
            panic!(
                "src/cli/{stem}.rs has no rank: add (\"{stem}\", RANK) to CLI in tests/layout.rs, \
                 a rank above every module it uses"
            )
        });
        let text = read(&f);
        for (n, target) in paths_after(&text, "crate::") {
            if target != "cli" {
                wrong.push(format!(
                    "{}:{n}: imports crate::{target} (main.rs)",
                    rel(&f)
                ));
            }
        }
        for prefix in ["crate::cli::", "super::"] {
            for (n, target) in paths_after(&text, prefix) {
                match rank(&target) {
                    Some(r) if r < own || (target == stem) => {}
                    // `super::*` in a test module, `super::x` of its parent.
                    None if target.is_empty() || stem.ends_with("_tests") => {}
                    Some(r) => wrong.push(format!(
                        "{}:{n}: {stem} (rank {own}) uses {target} (rank {r}): only lower ranks",
                        rel(&f)
                    )),
                    None => {
                        wrong.push(format!("{}:{n}: {stem} uses {target}, not in CLI", rel(&f)))
                    }
                }
            }
        }
    }
    wrong.sort();
    assert!(
        wrong.is_empty(),
        "binary modules out of order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_cli_module_has_a_rank_and_every_rank_a_module() {
    let mut files: Vec<String> = rust_files(&src().join("cli"))
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut ranked: Vec<String> = CLI.iter().map(|(m, _)| m.to_string()).collect();
    files.sort();
    ranked.sort();
    assert_eq!(
        ranked, files,
        "CLI in tests/layout.rs must name every file of src/cli/"
    );
}

#[test]
fn no_source_file_over_1200_lines() {
    let long: Vec<String> = rust_files(&src())
        .iter()
        .map(|f| (rel(f), non_test_lines(&read(f))))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// Lines of `text` outside its inline test modules: a top-level
/// `#[cfg(test)]` followed by `mod NAME {` counts not, up to its closing
/// `}` (the size cap is for code; a module's tests stay beside it).
fn non_test_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (mut n, mut i) = (0, 0);
    while i < lines.len() {
        let opens_tests = lines[i] == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|l| l.starts_with("mod ") && l.ends_with('{'));
        if opens_tests {
            while i < lines.len() && lines[i] != "}" {
                i += 1;
            }
        } else {
            n += 1;
        }
        i += 1;
    }
    n
}

/// `fn` items of `text` as (name, first line, line count): from the `fn`
/// line to the `}` at its indentation. Declarations without a body are
/// left out.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let c = code(line);
        let t = c.trim_start();
        let Some(at) = fn_keyword(t) else { continue };
        let name: String = t[at + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let indent = &c[..c.len() - t.len()];
        let mut end = None;
        for (j, l) in lines.iter().enumerate().skip(i) {
            let lc = code(l).trim_end();
            if j == i && lc.contains('{') && lc.ends_with('}') {
                end = Some(j);
                break;
            }
            if lc.ends_with(';') && !lines[i..=j].iter().any(|l| code(l).contains('{')) {
                break; // a declaration
            }
            if j > i && lc.len() == indent.len() + 1 && lc.starts_with(indent) && lc.ends_with('}')
            {
                end = Some(j);
                break;
            }
        }
        if let Some(e) = end {
            out.push((name, i + 1, e - i + 1));
        }
    }
    out
}

/// Where `fn ` starts in an item line (after `pub`, `const`, `unsafe`,
/// `extern "C"`), or `None`.
fn fn_keyword(t: &str) -> Option<usize> {
    let mut rest = t;
    let mut at = 0;
    loop {
        if rest.starts_with("fn ") {
            return Some(at);
        }
        let word = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "unsafe ",
            "extern \"C\" ",
        ]
        .into_iter()
        .find(|w| rest.starts_with(w))?;
        rest = &rest[word.len()..];
        at += word.len();
    }
}

#[test]
fn no_function_over_120_lines() {
    let mut long = Vec::new();
    for f in rust_files(&src()) {
        for (name, line, n) in functions(&read(&f)) {
            if n > MAX_FN_LINES {
                long.push(format!("{}:{line}: fn {name}: {n} lines", rel(&f)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The checks themselves: each finds what it is for.
#[test]
fn the_checks_find_what_they_look_for() {
    let f = "fn a() {\n    x();\n}\n\n    pub fn b(\n        y: u8,\n    ) -> u8 {\n        y\n    }\nfn c();\nfn d() { 1 }\n";
    let got: Vec<(String, usize, usize)> = functions(f);
    let want = [("a", 1, 3), ("b", 5, 5), ("d", 11, 1)];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((name, line, n), (wn, wl, wc)) in got.iter().zip(want) {
        assert_eq!((name.as_str(), *line, *n), (wn, wl, wc));
    }
    let p = paths_after(
        "use crate::tick::row;\n// crate::govern\nlet x = $crate::kernel; crate::plan::x(); // crate::report\n",
        "crate::",
    );
    let names: Vec<&str> = p.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["tick", "plan"]);
    let t = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\nfn b() {}\n";
    assert_eq!(non_test_lines(t), 2);
}

/// The library is `#![no_std]` without alloc; only `remote/`, built with
/// the cargo feature `remote`, may use std (the default build, which has
/// no `remote`, lets the compiler prove the rest).
#[test]
fn only_the_remote_layer_names_std_or_alloc() {
    let mut wrong = Vec::new();
    for l in LAYERS.iter().filter(|l| **l != "remote") {
        for f in rust_files(&src().join(l)) {
            for (n, line) in read(&f).lines().enumerate() {
                let c = code(line);
                let names = ["std::", "alloc::", "extern crate"]
                    .iter()
                    .any(|p| c.contains(p) && !c.contains(&format!("core::{p}")));
                // Doc tests and test modules run under std; `#[cfg(test)]`
                // code is not the library.
                if names && !c.trim_start().starts_with("///") && !in_test_module(&f, n) {
                    wrong.push(format!("{}:{}: {}", rel(&f), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "std or alloc outside src/remote/: {wrong:#?}"
    );
}

/// Whether line `n` (0-based) of `f` is inside a `#[cfg(test)]` module,
/// or `f` is a `_tests.rs` file.
fn in_test_module(f: &Path, n: usize) -> bool {
    if f.to_string_lossy().ends_with("_tests.rs") {
        return true;
    }
    read(f).lines().take(n).any(|l| l.trim() == "#[cfg(test)]")
}
