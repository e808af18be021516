//! The architecture, checked (issues 13 and 27): `src/`'s folders are the
//! layers and imports go down them; the binary is thin; files and
//! functions stay short enough to read whole; a file's name says which
//! file it is; no two files import each other, even through others.
//!
//! The rules, each a test below:
//! - `lib.rs` is the list of the library's layers, lowest first (and, in
//!   test builds only, `testkit`, what the unit tests share); a module
//!   imports (`crate::LAYER::…`) only from its own layer or a lower one,
//!   and `crate::testkit` only from test code;
//! - each layer's `mod.rs` (and that of a module that is a folder, as
//!   `govern/jobserver/`) is only a list of its modules, a line each, and
//!   lists every file in its folder;
//! - the binary: `src/main.rs` at most 300 lines; its modules in `src/cli/`
//!   import each other only downwards ([`CLI`]) and never `main.rs`;
//! - no file under `src/` over 1,200 lines of code: a file's inline
//!   `#[cfg(test)]` module is not counted, and no `NAME_tests.rs` file
//!   splits tests off their code; no function over 100 lines, tests
//!   included;
//! - no two files under `src/` with the same name, other than `mod.rs`;
//! - no import circle between the files of `src/`: each `crate::…`,
//!   `super::…`, `self::…` and bare `child::…` path of the code (tests
//!   left out) goes to the file of its longest module prefix, and that
//!   graph has no cycle.
//!
//! Each check is a pure function over the text, and
//! `the_checks_find_what_they_look_for` and the tests after it show each
//! one catching what it is for.
//!
//! The checks read the source as rustfmt leaves it (`cargo fmt --check`
//! runs first in `ci/test`): a function, or a `#[cfg(test)]` item, ends at
//! the first `}` at its own indentation.

use std::collections::{BTreeMap, BTreeSet};
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
    ("jobs_flag", 0),
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

/// What the library's unit tests share: `src/testkit.rs`, declared in
/// `lib.rs` by these two lines (test builds only). It imports no layer,
/// so the tests of any layer may use it, and only test code may.
const TESTKIT: &str = "testkit";
const TESTKIT_DECL: [&str; 2] = ["#[cfg(test)]", "pub(crate) mod testkit;"];

/// Lines of code in a file, its `#[cfg(test)]` items left out.
const MAX_FILE_LINES: usize = 1200;
const MAX_MAIN_LINES: usize = 300;
const MAX_FN_LINES: usize = 100;

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

/// The lines (1-based) of `text` that name `crate::testkit` outside a
/// `#[cfg(test)]` item.
fn testkit_outside_tests(text: &str) -> Vec<usize> {
    let test = test_lines(text);
    paths_after(text, "crate::")
        .into_iter()
        .filter(|(n, target)| target == TESTKIT && !test[n - 1])
        .map(|(n, _)| n)
        .collect()
}

fn layer_rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == name)
}

/// The code lines of `lib` that are neither a layer's `pub mod`, nor a
/// crate attribute, nor the `remote` layer's std, nor the test kit's two
/// lines ([`TESTKIT_DECL`]); and whether it declares the test kit.
fn lib_rs_extra(lib: &str) -> (Vec<&str>, bool) {
    let lines: Vec<&str> = lib
        .lines()
        .map(code)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let kit = lines.windows(2).position(|w| w == TESTKIT_DECL);
    let other = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| kit.is_none_or(|k| *i != k && *i != k + 1))
        .map(|(_, l)| *l)
        .filter(|l| {
            !l.starts_with("#![")
                && !l.starts_with("pub mod ")
                && *l != "#[cfg(feature = \"remote-logs\")]"
                && *l != "extern crate std;"
        })
        .collect();
    (other, kit.is_some())
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
    let (other, kit) = lib_rs_extra(&lib);
    assert!(
        other.is_empty(),
        "src/lib.rs has more than the layers (and the test kit, as {TESTKIT_DECL:?}): {other:?}"
    );
    for l in LAYERS {
        assert!(src().join(l).is_dir(), "src/{l}/ is missing");
    }
    if kit {
        let text = read(&src().join(format!("{TESTKIT}.rs")));
        let up = paths_after(&text, "crate::");
        assert!(
            up.is_empty(),
            "src/{TESTKIT}.rs imports the library (it must sit below every layer): {up:?}"
        );
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
        // A module built only with a cargo feature (remote's client, which
        // `remote-logs` leaves out) says so on the line before it.
        if c.is_empty() || (c.starts_with("#[cfg(feature = \"") && c.ends_with("\")]")) {
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
                (n.ends_with(".rs") && n != "mod.rs").then(|| n.trim_end_matches(".rs").to_string())
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

#[test]
fn library_imports_only_go_down_the_layers() {
    let mut wrong = Vec::new();
    for l in LAYERS {
        let own = layer_rank(l).unwrap();
        for f in rust_files(&src().join(l)) {
            let text = read(&f);
            for n in testkit_outside_tests(&text) {
                wrong.push(format!(
                    "{}:{n}: crate::{TESTKIT} outside test code",
                    rel(&f)
                ));
            }
            for (n, target) in paths_after(&text, "crate::") {
                match layer_rank(&target) {
                    _ if target == TESTKIT => {}
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
                    None if target.is_empty() => {}
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

/// Whether `f` is a `NAME_tests.rs` file: a test module split off beside
/// its code, which [`no_tests_file_beside_its_code`] refuses.
fn is_tests_file(f: &Path) -> bool {
    f.to_string_lossy().ends_with("_tests.rs")
}

/// Issue 27: a file's unit tests are its inline `#[cfg(test)] mod tests`
/// (the size cap counts code only), never a `NAME_tests.rs` beside it,
/// which every other check here would have to trust as test code.
#[test]
fn no_tests_file_beside_its_code() {
    let split: Vec<String> = rust_files(&src())
        .iter()
        .filter(|f| is_tests_file(f))
        .map(|f| rel(f))
        .collect();
    assert!(
        split.is_empty(),
        "test files split off their code (move each inline): {split:?}"
    );
}

/// For each line of `text`, whether it belongs to a `#[cfg(test)]` (or
/// `#[cfg(all(test, …))]`) item: from the attribute to the item's `;`, or
/// to the `}` at the attribute's indentation.
fn test_lines(text: &str) -> Vec<bool> {
    let lines: Vec<&str> = text.lines().collect();
    let mut test = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if !(t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test,")) {
            i += 1;
            continue;
        }
        let indent = &lines[i][..lines[i].len() - t.len()];
        let close = format!("{indent}}}");
        let mut end = lines.len() - 1;
        let mut item = None;
        for (j, l) in lines.iter().enumerate().skip(i + 1) {
            let c = code(l).trim_end();
            let ct = c.trim_start();
            if item.is_none() {
                if ct.is_empty() || ct.starts_with("#[") {
                    continue;
                }
                item = Some(j);
                if ct.ends_with(';') || (ct.contains('{') && ct.ends_with('}')) {
                    end = j;
                    break;
                }
            } else if c == close {
                end = j;
                break;
            }
        }
        test[i..=end].iter_mut().for_each(|t| *t = true);
        i = end + 1;
    }
    test
}

/// The lines of `text` that count against [`MAX_FILE_LINES`]: all but
/// those of its `#[cfg(test)]` items.
fn code_line_count(text: &str) -> usize {
    test_lines(text).iter().filter(|t| !**t).count()
}

#[test]
fn no_source_file_over_1200_lines_of_code() {
    let long: Vec<String> = rust_files(&src())
        .iter()
        .map(|f| (rel(f), code_line_count(&read(f))))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{f}: {n} lines of code (tests left out)"))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
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
fn no_function_over_100_lines() {
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
    // A function one line over the cap is seen as such.
    let long = format!(
        "fn long() {{\n{}}}\n",
        "    x();\n".repeat(MAX_FN_LINES - 1)
    );
    assert_eq!(
        functions(&long),
        [("long".to_string(), 1, MAX_FN_LINES + 1)]
    );
}

/// lib.rs: the test kit is accepted as its two lines only; the test kit
/// is named from test code only.
#[test]
fn the_test_kit_is_test_only() {
    let lib = "#![no_std]\npub mod kernel;\n// x\n#[cfg(test)]\npub(crate) mod testkit;\n";
    assert_eq!(lib_rs_extra(lib), (Vec::new(), true));
    let bad = "pub mod kernel;\npub(crate) mod testkit;\n#[cfg(test)]\nmod other;\n";
    assert_eq!(
        lib_rs_extra(bad),
        (
            vec!["pub(crate) mod testkit;", "#[cfg(test)]", "mod other;"],
            false
        )
    );
    let text =
        "use crate::testkit::Out;\n#[cfg(test)]\nmod tests {\n    use crate::testkit::Out;\n}\n";
    assert_eq!(testkit_outside_tests(text), [1]);
}

/// A file's `#[cfg(test)]` items, and only they, are left out of its
/// count of code lines.
#[test]
fn the_code_count_leaves_out_inline_tests() {
    let f = "fn a() {}\n#[cfg(test)]\nuse std::x;\n#[cfg(test)]\n#[path = \"x\"]\nmod t;\n\
             #[cfg(test)]\nmod tests {\n    fn b() {\n    }\n}\nfn c() {\n}\n";
    let mut want = [true; 13];
    want[0] = false;
    want[11] = false;
    want[12] = false;
    assert_eq!(test_lines(f), want);
    assert_eq!(code_line_count(f), 3);
    let t = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\nfn b() {}\n";
    assert_eq!(code_line_count(t), 2);
    // An inner `#[cfg(test)]` item ends at its own `}`, not its module's.
    let g =
        "mod m {\n    #[cfg(all(test, feature = \"x\"))]\n    fn x() {\n    }\n    fn y() {}\n}\n";
    assert_eq!(test_lines(g), [false, true, true, true, false, false]);
}

#[test]
fn duplicate_names_are_found_but_mod_rs() {
    let files = [
        "a/mod.rs", "b/mod.rs", "a/x.rs", "b/c/x.rs", "a/y.rs", "mod.rs",
    ]
    .map(String::from);
    assert_eq!(duplicate_names(&files), ["x.rs: a/x.rs, b/c/x.rs"]);
}

/// Use trees, paths in expressions, `super::super`, `self`, globs and
/// aliases resolve to files; comments, tests, `$crate` and other crates do
/// not; a circle is found with its files, a one-way import is none.
#[test]
fn import_circles_are_found_with_their_files() {
    let text = "use crate::report::{actions::{self, Table as T}, plot::*};\n\
                use super::super::kernel::meminfo;\n\
                let x = self::inner::f(crate::tick::row::Row::new());\n\
                // crate::govern::x\n\
                let s = $crate::plan::y; let t = headroom::remote::z;\n\
                #[cfg(test)]\nmod tests {\n    use crate::govern::record;\n}\n";
    let got: Vec<(usize, String)> = module_paths(text, &[])
        .into_iter()
        .map(|(n, p)| (n, p.join("::")))
        .collect();
    let want = [
        (1, "crate::report::actions::self"),
        (1, "crate::report::actions::Table"),
        (1, "crate::report::plot"),
        (2, "super::super::kernel::meminfo"),
        (3, "self::inner::f"),
        (3, "crate::tick::row::Row::new"),
    ];
    assert_eq!(got, want.map(|(n, p)| (n, p.to_string())));
    let own = module_of("report/plot/svg.rs");
    let path = ["super", "super", "summary", "Summary"].map(String::from);
    assert_eq!(absolute(&own, &path), ["report", "summary", "Summary"]);
    assert_eq!(module_of("report/summary/mod.rs"), ["report", "summary"]);
    assert!(module_of("lib.rs").is_empty());
    let files = [
        ("a/mod.rs", "pub mod b;\n"),
        (
            "a/b.rs",
            "use crate::a::c::X;\nuse self::inner::Y;\nuse crate::Z;\n",
        ),
        ("a/c.rs", "use super::d::{self, Y};\n"),
        ("a/d/mod.rs", "fn f() {\n    super::b::g()\n}\n"),
        (
            "a/e.rs",
            "use crate::a::b;\n#[cfg(test)]\nmod tests {\n    use crate::a::f;\n}\n",
        ),
        ("a/f.rs", "use crate::a::e::Z;\n"),
        (
            "a/g.rs",
            "mod h;\npub use h::X;\nlet y = heapless::Vec::new();\n",
        ),
        ("a/g/h.rs", "use super::Y;\n"),
    ]
    .map(|(f, t)| (f.to_string(), t.to_string()));
    let graph = import_graph(&files);
    assert_eq!(
        graph["a/d/mod.rs"],
        BTreeMap::from([("a/b.rs".to_string(), 2)])
    );
    assert_eq!(graph["a/b.rs"].keys().collect::<Vec<_>>(), ["a/c.rs"]);
    // A parent naming its child bare (`h::X`) imports it as `self::h` does.
    assert_eq!(graph["a/g.rs"].keys().collect::<Vec<_>>(), ["a/g/h.rs"]);
    assert_eq!(
        circles(&graph),
        [
            vec!["a/b.rs", "a/c.rs", "a/d/mod.rs"],
            vec!["a/g.rs", "a/g/h.rs"]
        ]
    );
}

/// The library is `#![no_std]` without alloc; only `remote/`, built with
/// the cargo feature `remote`, may use std (the default build, which has
/// no `remote`, lets the compiler prove the rest).
#[test]
fn only_the_remote_layer_names_std_or_alloc() {
    let mut wrong = Vec::new();
    for l in LAYERS.iter().filter(|l| **l != "remote") {
        for f in rust_files(&src().join(l)) {
            let text = read(&f);
            let test = test_lines(&text);
            for (n, line) in text.lines().enumerate() {
                let c = code(line);
                let names = ["std::", "alloc::", "extern crate"]
                    .iter()
                    .any(|p| c.contains(p) && !c.contains(&format!("core::{p}")));
                // Doc tests and test modules run under std; `#[cfg(test)]`
                // code is not the library.
                if names && !c.trim_start().starts_with("///") && !test[n] {
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

/// The file names that more than one of `files` (paths under `src/`)
/// has, `mod.rs` aside: each as `NAME: PATH, PATH`.
fn duplicate_names(files: &[String]) -> Vec<String> {
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for f in files {
        let name = f.rsplit('/').next().unwrap_or(f);
        if name != "mod.rs" {
            by_name.entry(name).or_default().push(f);
        }
    }
    by_name
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(name, paths)| format!("{name}: {}", paths.join(", ")))
        .collect()
}

#[test]
fn no_two_files_share_a_name() {
    let files: Vec<String> = rust_files(&src()).iter().map(|f| rel(f)).collect();
    let twice = duplicate_names(&files);
    assert!(
        twice.is_empty(),
        "files of the same name (name each for what it holds):\n{}",
        twice.join("\n")
    );
}

/// The module path of a file under `src/`: `report/summary.rs` and
/// `report/summary/mod.rs` are `report::summary`, `lib.rs` and `main.rs`
/// the root.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.trim_end_matches(".rs");
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" || stem == "main" {
        return Vec::new();
    }
    stem.split('/').map(String::from).collect()
}

fn ident(s: &[u8], i: &mut usize) -> String {
    let start = *i;
    while s
        .get(*i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        *i += 1;
    }
    String::from_utf8_lossy(&s[start..*i]).into_owned()
}

fn skip_space(s: &[u8], i: &mut usize) {
    while s.get(*i).is_some_and(u8::is_ascii_whitespace) {
        *i += 1;
    }
}

/// Reads the path tree at `s[*i..]` (`a::b`, `a::{b, c::{self, D}}`,
/// `a::*`, `a as b`) below `path`, and pushes each leaf's segments to
/// `out`.
fn path_tree(s: &[u8], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
    loop {
        match s.get(*i) {
            Some(b'{') => {
                *i += 1;
                loop {
                    skip_space(s, i);
                    if matches!(s.get(*i), None | Some(b'}')) {
                        *i += 1;
                        return;
                    }
                    path_tree(s, i, path.clone(), out);
                    skip_space(s, i);
                    match s.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                }
            }
            Some(b'*') => {
                *i += 1;
                out.push(path);
                return;
            }
            _ => {}
        }
        let name = ident(s, i);
        if name.is_empty() {
            out.push(path);
            return;
        }
        path.push(name);
        if s[*i..].starts_with(b"::") {
            *i += 2;
            continue;
        }
        let mut j = *i;
        skip_space(s, &mut j);
        if s[j..].starts_with(b"as ") {
            j += 3;
            skip_space(s, &mut j);
            ident(s, &mut j);
            *i = j;
        }
        out.push(path);
        return;
    }
}

/// The paths in `text`'s code (comments and `#[cfg(test)]` items left
/// out) that start with `crate::`, `super::` or `self::`, or with the bare
/// name of one of the file's `children` (`child::f`, `pub use child::X`:
/// read as `self::child::…`): each leaf of each use tree or path as its
/// segments, the first one the keyword, with its 1-based line.
fn module_paths(text: &str, children: &[String]) -> Vec<(usize, Vec<String>)> {
    let test = test_lines(text);
    let code_text: String = text
        .lines()
        .zip(test)
        .map(|(l, t)| if t { "" } else { code(l) })
        .collect::<Vec<_>>()
        .join("\n");
    let s = code_text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let glued = i > 0 && (s[i - 1].is_ascii_alphanumeric() || b"_$:".contains(&s[i - 1]));
        if glued || !(s[i].is_ascii_alphabetic() || s[i] == b'_') {
            i += 1;
            continue;
        }
        let start = i;
        let head = ident(s, &mut i);
        let known = ["crate", "super", "self"].contains(&head.as_str());
        let child = children.contains(&head);
        if (known || child) && s[i..].starts_with(b"::") {
            let line = 1 + s[..start].iter().filter(|c| **c == b'\n').count();
            let mut leaves = Vec::new();
            i = start;
            let first = if child {
                vec!["self".to_string()]
            } else {
                Vec::new()
            };
            path_tree(s, &mut i, first, &mut leaves);
            out.extend(leaves.into_iter().map(|p| (line, p)));
        }
    }
    out
}

/// The module that `path` names from module `own`: `crate` is the root,
/// `self` is `own`, `super` its parent.
fn absolute(own: &[String], path: &[String]) -> Vec<String> {
    let mut m = Vec::new();
    for (k, seg) in path.iter().enumerate() {
        match (k, seg.as_str()) {
            (0, "crate") => {}
            (0, "self") => m = own.to_vec(),
            (0, "super") => {
                m = own.to_vec();
                m.pop();
            }
            (_, "super") => {
                m.pop();
            }
            (_, "self") => {}
            _ => m.push(seg.clone()),
        }
    }
    m
}

/// The import graph of `files` (path under `src/`, text): for each file,
/// the files its module paths name (the longest prefix of the module
/// named that is a file; the root and the file itself left out), each
/// with the line of its first path there.
fn import_graph(files: &[(String, String)]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let by_module: BTreeMap<Vec<String>, &str> = files
        .iter()
        .map(|(f, _)| (module_of(f), f.as_str()))
        .filter(|(m, _)| !m.is_empty())
        .collect();
    let mut graph = BTreeMap::new();
    for (f, text) in files {
        let own = module_of(f);
        // The modules whose files sit in this one's folder, one level down.
        let children: Vec<String> = by_module
            .keys()
            .filter(|m| m.len() == own.len() + 1 && m.starts_with(&own))
            .filter_map(|m| m.last().cloned())
            .collect();
        let mut to: BTreeMap<String, usize> = BTreeMap::new();
        for (line, path) in module_paths(text, &children) {
            let m = absolute(&own, &path);
            let target = (1..=m.len())
                .rev()
                .find_map(|n| by_module.get(&m[..n]).copied());
            if let Some(t) = target.filter(|t| t != f) {
                to.entry(t.to_string()).or_insert(line);
            }
        }
        graph.insert(f.clone(), to);
    }
    graph
}

/// The import circles of `graph`: each set of two or more files that
/// reach each other (a strongly connected component), sorted.
fn circles(graph: &BTreeMap<String, BTreeMap<String, usize>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for t in graph.get(&f).into_iter().flat_map(|m| m.keys()) {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|f| (f, reach(f))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (f, r) in &reached {
        if !r.contains(*f) || out.iter().any(|c| c.contains(f)) {
            continue;
        }
        let circle: Vec<String> = r
            .iter()
            .filter(|t| reached.get(t).is_some_and(|back| back.contains(*f)))
            .cloned()
            .collect();
        out.push(circle);
    }
    out
}

#[test]
fn no_import_circle_between_files() {
    let files: Vec<(String, String)> = rust_files(&src())
        .iter()
        .map(|f| (rel(f), read(f)))
        .collect();
    let graph = import_graph(&files);
    let mut text = Vec::new();
    for circle in circles(&graph) {
        text.push(format!("{}:", circle.join(" ")));
        for f in &circle {
            for (t, line) in &graph[f] {
                if circle.contains(t) {
                    text.push(format!("  {f}:{line} -> {t}"));
                }
            }
        }
    }
    assert!(
        text.is_empty(),
        "import circles (break each: move what both use into a lower file):\n{}",
        text.join("\n")
    );
}
