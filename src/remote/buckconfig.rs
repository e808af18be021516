//! Where a Buck2 project's remote cluster is: the `[buck2_re_client]`
//! section of its `.buckconfig` files, read as Buck2's open-source RE
//! client reads it, so `headroom actions` inside the project needs no
//! `--remote`/`--instance`.
//!
//! Files, lowest precedence first (later values win): `~/.buckconfig.d/*`,
//! `~/.buckconfig.local`, then in the project root `.buckconfig.d/*`,
//! `.buckconfig`, `.buckconfig.local`, each with the files it includes
//! (`<file:PATH>`, `<?file:PATH>` optional; relative to the including
//! file). The project root is the furthest directory up from here holding
//! a `.buckconfig`, not past one holding `.buckroot`, never `$HOME`.
//! `/etc/buckconfig*` are not read.
//!
//! Syntax (Buck2's): lines trimmed; a line ending in `\` joined to the
//! next; blank lines and lines starting `#` or `;` skipped; `[section]`
//! (a ` #` comment after it allowed); `key = value`; include lines. Other
//! lines are refused, as Buck2 refuses them. `$(config a.b)` references
//! are not expanded.
//!
//! Values: the address is `action_cache_address`, else `address`, else
//! `engine_address`; `tls` is `true` or `false` (Buck2's default when
//! unset: true); `http_headers` is a comma-separated list of `name:value`;
//! `$VAR` in headers, the address and the TLS paths is replaced by the
//! environment's value (a missing variable is an error, as in Buck2).
//! `tls_client_cert` is ONE PEM file holding the certificate and its key
//! (Buck2 passes it as both to `Identity::from_pem`): give it as both
//! `--tls-cert` and `--tls-key`.
//!
//! # References
//! Buck2 `app/buck2_common/src/legacy_configs/parser.rs` (the syntax),
//! `path.rs` (which files, in which order), `access.rs` (`parse_list`
//! splits on `,`), `app/buck2_common/src/invocation_roots.rs` (the project
//! root), `app/buck2_re_configuration/src/lib.rs`
//! (`Buck2OssReConfiguration::from_legacy_config`, `HttpHeader`),
//! `remote_execution/oss/re_grpc/src/pool.rs` (TLS files, `$VAR`),
//! `client.rs` (`InjectHeadersInterceptor`, `substitute_env_vars`).

use core::fmt;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

/// The section read.
pub const SECTION: &str = "buck2_re_client";

/// Includes nested deeper than this are refused (a cycle).
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// What `[buck2_re_client]` says, `None` where it says nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuckRe {
    /// `action_cache_address`, else `address`, else `engine_address`,
    /// `$VAR`s replaced (`grpc://host:port`, `host:port`, ...).
    pub address: Option<String>,
    /// `instance_name`.
    pub instance: Option<String>,
    /// `tls` (Buck2 takes unset as true).
    pub tls: Option<bool>,
    /// `tls_ca_certs`: a PEM file of CA certificates.
    pub tls_ca: Option<PathBuf>,
    /// `tls_client_cert`: one PEM file, certificate and key.
    pub tls_client_cert: Option<PathBuf>,
    /// `http_headers`, `(name, value)`, `$VAR`s replaced.
    pub headers: Vec<(String, String)>,
    /// The project's `.buckconfig`.
    pub file: PathBuf,
}

/// What is wrong with a line or a file.
#[derive(Debug)]
pub enum BuckconfigErrorKind {
    /// The file could not be read.
    Read(io::Error),
    /// `[section` without its `]`.
    SectionBracket,
    /// `= value` with no key.
    EmptyKey,
    /// Not a section, an assignment or an include.
    InvalidLine,
    /// A non-optional include that does not exist.
    MissingInclude(String),
    /// Includes nested over [`MAX_INCLUDE_DEPTH`].
    IncludeDepth,
    /// `tls` not `true` or `false`.
    Bool(String),
    /// An `http_headers` item with no `:`.
    Header(String),
    /// `$VAR` not in the environment.
    EnvVar(String),
}

impl fmt::Display for BuckconfigErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read(e) => write!(f, "cannot read: {e}"),
            Self::SectionBracket => f.write_str("a [section] without its ]"),
            Self::EmptyKey => f.write_str("key = value with an empty key"),
            Self::InvalidLine => f.write_str("not [section], key = value or <file:PATH>"),
            Self::MissingInclude(p) => write!(f, "included file {p} does not exist"),
            Self::IncludeDepth => write!(f, "includes nested over {MAX_INCLUDE_DEPTH} deep"),
            Self::Bool(v) => write!(f, "{SECTION}.tls = {v:?}: expected true or false"),
            Self::Header(h) => write!(f, "{SECTION}.http_headers item {h:?}: expected name:value"),
            Self::EnvVar(v) => write!(f, "${v} is not set in the environment"),
        }
    }
}

/// A `.buckconfig` that cannot be used, one line: `FILE:LINE: what`.
#[derive(Debug)]
pub struct BuckconfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when it is one line's fault.
    pub line: Option<usize>,
    /// What.
    pub kind: BuckconfigErrorKind,
}

impl fmt::Display for BuckconfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.kind),
            None => write!(f, "{}: {}", self.file.display(), self.kind),
        }
    }
}

impl std::error::Error for BuckconfigError {}

/// One meaningful line of a buckconfig.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// `[name]`.
    Section(String),
    /// `key = value`, both trimmed.
    Assign(String, String),
    /// `<file:PATH>` (`optional` for `<?file:PATH>`).
    Include {
        /// The path as written.
        path: String,
        /// `<?file:...>`.
        optional: bool,
    },
}

/// Parse one file's text into its lines, each with its 1-based number
/// (a joined line has its first line's number).
///
/// # Errors
/// The first line Buck2 would refuse, with its number.
pub fn parse_lines(text: &str) -> Result<Vec<(usize, Line)>, (usize, BuckconfigErrorKind)> {
    let mut joined: Vec<(usize, String)> = Vec::new();
    let mut continues = false;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        match joined.last_mut() {
            Some((_, prev)) if continues => prev.push_str(l),
            _ => joined.push((i + 1, l.to_string())),
        }
        continues = false;
        if let Some((_, last)) = joined.last_mut()
            && last.ends_with('\\')
        {
            last.pop();
            continues = true;
        }
    }
    let mut out = Vec::new();
    for (n, l) in joined {
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        out.push((n, parse_line(&l).map_err(|k| (n, k))?));
    }
    Ok(out)
}

fn parse_line(l: &str) -> Result<Line, BuckconfigErrorKind> {
    if let Some(rest) = l.strip_prefix('[') {
        let rest = rest.split_once(" #").map_or(rest, |(before, _)| before);
        return match rest.strip_suffix(']') {
            Some(s) => Ok(Line::Section(s.to_string())),
            None => Err(BuckconfigErrorKind::SectionBracket),
        };
    }
    if let Some((k, v)) = l.split_once('=') {
        let k = k.trim();
        if k.is_empty() {
            return Err(BuckconfigErrorKind::EmptyKey);
        }
        return Ok(Line::Assign(k.to_string(), v.trim().to_string()));
    }
    for (marker, optional) in [("<?file:", true), ("<file:", false)] {
        if let Some(start) = l.find(marker) {
            let rest = &l[start + marker.len()..];
            if let Some(end) = rest.rfind('>')
                && end > 0
            {
                let path = rest[..end].to_string();
                return Ok(Line::Include { path, optional });
            }
        }
    }
    Err(BuckconfigErrorKind::InvalidLine)
}

/// A value and where it was set.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Set {
    value: String,
    file: PathBuf,
    line: usize,
}

/// The reading state shared by a file and the files it includes (as in
/// Buck2: an include continues the includer's section).
struct Reader<'a> {
    section: String,
    values: HashMap<String, Set>,
    read: &'a dyn Fn(&Path) -> io::Result<Option<String>>,
}

impl Reader<'_> {
    fn file(&mut self, path: &Path, depth: usize) -> Result<bool, BuckconfigError> {
        let err = |line, kind| BuckconfigError {
            file: path.to_path_buf(),
            line,
            kind,
        };
        if depth > MAX_INCLUDE_DEPTH {
            return Err(err(None, BuckconfigErrorKind::IncludeDepth));
        }
        let Some(text) = (self.read)(path).map_err(|e| err(None, BuckconfigErrorKind::Read(e)))?
        else {
            return Ok(false);
        };
        let lines = parse_lines(&text).map_err(|(n, k)| err(Some(n), k))?;
        for (n, line) in lines {
            match line {
                Line::Section(s) => self.section = s,
                Line::Assign(k, v) => {
                    if self.section == SECTION {
                        let set = Set {
                            value: v,
                            file: path.to_path_buf(),
                            line: n,
                        };
                        self.values.insert(k, set);
                    }
                }
                Line::Include {
                    path: inc,
                    optional,
                } => {
                    let target = path.parent().unwrap_or(Path::new("")).join(&inc);
                    if !self.file(&target, depth + 1)? && !optional {
                        return Err(err(Some(n), BuckconfigErrorKind::MissingInclude(inc)));
                    }
                }
            }
        }
        Ok(true)
    }

    /// A top-level file: it starts outside any section.
    fn top(&mut self, path: &Path) -> Result<(), BuckconfigError> {
        self.section.clear();
        self.file(path, 0).map(|_| ())
    }
}

/// Replace each `$NAME` (`[A-Za-z_][A-Za-z0-9_]*`) by `env(NAME)`; a `$`
/// not followed by a name stays.
///
/// # Errors
/// The first name `env` does not know.
pub fn substitute_env(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let len = after
            .char_indices()
            .take_while(|&(j, c)| {
                c == '_' || c.is_ascii_alphabetic() || (j > 0 && c.is_ascii_digit())
            })
            .count();
        if len == 0 {
            out.push('$');
            rest = after;
            continue;
        }
        let name = &after[..len];
        out.push_str(&env(name).ok_or_else(|| name.to_string())?);
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Turn the section's values into a [`BuckRe`] (`root`: the project root,
/// against which relative TLS paths are taken; `file`: its `.buckconfig`).
fn resolve(
    values: &HashMap<String, Set>,
    root: &Path,
    file: PathBuf,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<BuckRe, BuckconfigError> {
    let at = |s: &Set, kind| BuckconfigError {
        file: s.file.clone(),
        line: Some(s.line),
        kind,
    };
    let expand = |s: &Set, text: &str| {
        substitute_env(text, env).map_err(|v| at(s, BuckconfigErrorKind::EnvVar(v)))
    };
    let get = |k: &str| values.get(k).filter(|s| !s.value.is_empty());
    let mut re = BuckRe {
        file,
        ..BuckRe::default()
    };
    if let Some(s) = ["action_cache_address", "address", "engine_address"]
        .iter()
        .find_map(|k| get(k))
    {
        re.address = Some(expand(s, &s.value)?);
    }
    re.instance = get("instance_name").map(|s| s.value.clone());
    if let Some(s) = get("tls") {
        re.tls = Some(match s.value.as_str() {
            "true" => true,
            "false" => false,
            other => return Err(at(s, BuckconfigErrorKind::Bool(other.to_string()))),
        });
    }
    if let Some(s) = get("tls_ca_certs") {
        re.tls_ca = Some(root.join(expand(s, &s.value)?));
    }
    if let Some(s) = get("tls_client_cert") {
        re.tls_client_cert = Some(root.join(expand(s, &s.value)?));
    }
    if let Some(s) = get("http_headers") {
        for item in s.value.split(',').filter(|i| !i.trim().is_empty()) {
            let (k, v) = item
                .split_once(':')
                .ok_or_else(|| at(s, BuckconfigErrorKind::Header(item.trim().to_string())))?;
            re.headers
                .push((expand(s, k.trim())?, expand(s, v.trim())?));
        }
    }
    Ok(re)
}

/// The project root seen from `cwd`: the furthest ancestor holding a
/// `.buckconfig`, not above one holding `.buckroot`, never `home`.
pub fn project_root(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut root = None;
    for dir in cwd.ancestors() {
        if dir.join(".buckconfig").is_file() {
            if home == Some(dir) {
                break;
            }
            root = Some(dir.to_path_buf());
        }
        if dir.join(".buckroot").exists() {
            break;
        }
    }
    root
}

/// The files of a `.buckconfig.d` folder, sorted by name.
fn folder(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn read_if_exists(p: &Path) -> io::Result<Option<String>> {
    match std::fs::read_to_string(p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Read `[buck2_re_client]` of the project seen from `cwd` (user files
/// from `home`, `$VAR`s from `env`). `Ok(None)` outside a Buck2 project.
///
/// # Errors
/// A file Buck2 would refuse, a bad `tls` or header, a missing `$VAR`:
/// the file and line.
pub fn load(
    cwd: &Path,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<BuckRe>, BuckconfigError> {
    let Some(root) = project_root(cwd, home) else {
        return Ok(None);
    };
    let mut files = Vec::new();
    if let Some(h) = home {
        files.extend(folder(&h.join(".buckconfig.d")));
        files.push(h.join(".buckconfig.local"));
    }
    files.extend(folder(&root.join(".buckconfig.d")));
    files.push(root.join(".buckconfig"));
    files.push(root.join(".buckconfig.local"));
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    load_from(&files, &root, &read_if_exists, env).map(Some)
}

/// [`load`] from the current directory, `$HOME` and the process
/// environment.
///
/// # Errors
/// As [`load`]; the current directory unreadable.
pub fn load_here() -> Result<Option<BuckRe>, BuckconfigError> {
    let cwd = std::env::current_dir().map_err(|e| BuckconfigError {
        file: PathBuf::from("."),
        line: None,
        kind: BuckconfigErrorKind::Read(e),
    })?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    load(&cwd, home.as_deref(), &|v| std::env::var(v).ok())
}

/// Read `[buck2_re_client]` from texts given by name (`files` in
/// precedence order, `read` returning a file's text or `None`): the pure
/// core of [`load`], for tests and fuzzing.
///
/// # Errors
/// As [`load`].
pub fn load_from(
    files: &[&Path],
    root: &Path,
    read: &dyn Fn(&Path) -> io::Result<Option<String>>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<BuckRe, BuckconfigError> {
    let mut r = Reader {
        section: String::new(),
        values: HashMap::new(),
        read,
    };
    for f in files {
        r.top(f)?;
    }
    resolve(&r.values, root, root.join(".buckconfig"), env)
}

#[cfg(test)]
mod tests {
    //! Tests of `buckconfig.rs`. The syntax facts are Buck2's
    //! `app/buck2_common/src/legacy_configs/parser.rs`; the keys and their
    //! meaning `app/buck2_re_configuration/src/lib.rs`; `$VAR` and the one-PEM
    //! client certificate `remote_execution/oss/re_grpc/src/pool.rs`.

    use super::*;
    use std::collections::HashMap;
    use std::string::ToString;
    use std::vec;

    fn env(v: &str) -> Option<String> {
        match v {
            "BB_KEY" => Some("s3cret".to_string()),
            "CERTS" => Some("/etc/certs".to_string()),
            _ => None,
        }
    }

    /// Files in memory: name → text.
    fn load_mem(files: &[(&str, &str)], order: &[&str]) -> Result<BuckRe, BuckconfigError> {
        let map: HashMap<PathBuf, String> = files
            .iter()
            .map(|(n, t)| (PathBuf::from(n), t.to_string()))
            .collect();
        let read = move |p: &Path| -> io::Result<Option<String>> { Ok(map.get(p).cloned()) };
        let order: Vec<&Path> = order.iter().map(Path::new).collect();
        load_from(&order, Path::new("/p"), &read, &env)
    }

    #[test]
    fn lines_sections_assignments_includes_comments_continuations() {
        let text = "# comment\n; also\n\n  [buck2_re_client]  \nkey = a \\\n  b\n\
                <?file:opt.bcfg>\n<file:../x>\n[cells] # trailing\n";
        let lines = parse_lines(text).unwrap();
        assert_eq!(
            lines,
            vec![
                (4, Line::Section("buck2_re_client".to_string())),
                (5, Line::Assign("key".to_string(), "a b".to_string())),
                (
                    7,
                    Line::Include {
                        path: "opt.bcfg".to_string(),
                        optional: true
                    }
                ),
                (
                    8,
                    Line::Include {
                        path: "../x".to_string(),
                        optional: false
                    }
                ),
                (9, Line::Section("cells".to_string())),
            ]
        );
    }

    #[test]
    fn near_misses_are_refused_with_their_line() {
        for (text, line, want) in [
            ("[buck2_re_client\n", 1, "a [section] without its ]"),
            ("ok = 1\n = 2\n", 2, "key = value with an empty key"),
            ("ok = 1\n\njust words\n", 3, "not [section]"),
            ("<file:>\n", 1, "not [section]"),
        ] {
            let (n, kind) = parse_lines(text).unwrap_err();
            assert_eq!(n, line, "{text:?}");
            assert!(kind.to_string().starts_with(want), "{text:?}: {kind}");
        }
    }

    #[test]
    fn the_re_client_values_as_buck2_reads_them() {
        let bc = "[buck2_re_client]\n\
              engine_address = grpc://engine:8980\n\
              action_cache_address = grpcs://cache.example:443\n\
              instance_name = main\n\
              tls = true\n\
              tls_ca_certs = $CERTS/ca.pem\n\
              tls_client_cert = certs/client.pem\n\
              http_headers = x-buildbuddy-api-key:$BB_KEY, x-other: a:b ,\n\
              [other]\n\
              instance_name = not this\n";
        let re = load_mem(&[("/p/.buckconfig", bc)], &["/p/.buckconfig"]).unwrap();
        assert_eq!(re.address.as_deref(), Some("grpcs://cache.example:443"));
        assert_eq!(re.instance.as_deref(), Some("main"));
        assert_eq!(re.tls, Some(true));
        assert_eq!(re.tls_ca, Some(PathBuf::from("/etc/certs/ca.pem")));
        assert_eq!(
            re.tls_client_cert,
            Some(PathBuf::from("/p/certs/client.pem"))
        );
        assert_eq!(
            re.headers,
            vec![
                ("x-buildbuddy-api-key".to_string(), "s3cret".to_string()),
                ("x-other".to_string(), "a:b".to_string()),
            ]
        );
        assert_eq!(re.file, PathBuf::from("/p/.buckconfig"));
    }

    #[test]
    fn address_falls_back_to_address_then_engine() {
        let a = "[buck2_re_client]\naddress = one\nengine_address = two\n";
        let re = load_mem(&[("/p/.buckconfig", a)], &["/p/.buckconfig"]).unwrap();
        assert_eq!(re.address.as_deref(), Some("one"));
        let e = "[buck2_re_client]\nengine_address = two\n";
        let re = load_mem(&[("/p/.buckconfig", e)], &["/p/.buckconfig"]).unwrap();
        assert_eq!(re.address.as_deref(), Some("two"));
        assert_eq!(re.tls, None);
    }

    // path.rs: .buckconfig.local after .buckconfig; parser.rs: an include
    // continues the includer's section, relative to the includer.
    #[test]
    fn local_overrides_and_includes_share_the_section() {
        let files = [
            (
                "/p/.buckconfig",
                "[buck2_re_client]\ninstance_name = a\n<file:conf/re.bcfg>\n",
            ),
            ("/p/conf/re.bcfg", "tls = false\n<?file:absent.bcfg>\n"),
            (
                "/p/.buckconfig.local",
                "[buck2_re_client]\ninstance_name = b\n",
            ),
        ];
        let re = load_mem(&files, &["/p/.buckconfig", "/p/.buckconfig.local"]).unwrap();
        assert_eq!(re.instance.as_deref(), Some("b"));
        assert_eq!(re.tls, Some(false));
    }

    #[test]
    fn each_top_file_starts_outside_any_section() {
        let files = [
            ("/p/.buckconfig", "[buck2_re_client]\n"),
            ("/p/.buckconfig.local", "instance_name = stray\n"),
        ];
        let re = load_mem(&files, &["/p/.buckconfig", "/p/.buckconfig.local"]).unwrap();
        assert_eq!(re.instance, None);
    }

    #[test]
    fn errors_name_file_and_line() {
        let cases = [
            (
                "[buck2_re_client]\ntls = yes\n",
                "/p/.buckconfig:2: buck2_re_client.tls = \"yes\"",
            ),
            (
                "[buck2_re_client]\n\nhttp_headers = nocolon\n",
                "/p/.buckconfig:3: buck2_re_client.http_headers item \"nocolon\"",
            ),
            (
                "[buck2_re_client]\nhttp_headers = k:$NOPE\n",
                "/p/.buckconfig:2: $NOPE is not set",
            ),
            (
                "<file:gone.bcfg>\n",
                "/p/.buckconfig:1: included file gone.bcfg does not exist",
            ),
        ];
        for (text, want) in cases {
            let e = load_mem(&[("/p/.buckconfig", text)], &["/p/.buckconfig"]).unwrap_err();
            assert!(e.to_string().starts_with(want), "{text:?}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn an_include_cycle_is_refused_not_followed_forever() {
        let files = [("/p/.buckconfig", "<file:.buckconfig>\n")];
        let e = load_mem(&files, &["/p/.buckconfig"]).unwrap_err();
        assert!(matches!(e.kind, BuckconfigErrorKind::IncludeDepth), "{e}");
    }

    #[test]
    fn env_substitution_like_buck2() {
        let s = |t| substitute_env(t, &env);
        assert_eq!(s("$BB_KEY"), Ok("s3cret".to_string()));
        assert_eq!(s("a$BB_KEY.b$CERTS"), Ok("as3cret.b/etc/certs".to_string()));
        assert_eq!(s("cost $5 and $"), Ok("cost $5 and $".to_string()));
        assert_eq!(s("$MISSING_1x"), Err("MISSING_1x".to_string()));
    }

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(std::format!("headroom-bc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    // invocation_roots.rs: the furthest .buckconfig up, stopping at .buckroot.
    #[test]
    fn project_root_is_the_furthest_buckconfig_below_a_buckroot() {
        let d = tmp("root");
        let cell = d.join("repo/cell/sub");
        std::fs::create_dir_all(&cell).unwrap();
        std::fs::write(
            d.join("repo/.buckconfig"),
            "[buck2_re_client]\ninstance_name = top\n",
        )
        .unwrap();
        std::fs::write(d.join("repo/cell/.buckconfig"), "").unwrap();
        std::fs::write(d.join(".buckconfig"), "").unwrap();
        assert_eq!(project_root(&cell, None), Some(d.clone()));
        std::fs::write(d.join("repo/.buckroot"), "").unwrap();
        assert_eq!(project_root(&cell, None), Some(d.join("repo")));
        assert_eq!(project_root(&d.join("repo"), Some(&d.join("repo"))), None);
        let re = load(&cell, None, &env).unwrap().unwrap();
        assert_eq!(re.instance.as_deref(), Some("top"));
        assert_eq!(re.file, d.join("repo/.buckconfig"));
        std::fs::create_dir_all(d.join("repo/.buckconfig.d")).unwrap();
        std::fs::write(
            d.join("repo/.buckconfig.d/re"),
            "[buck2_re_client]\ntls = false\n",
        )
        .unwrap();
        let re = load(&cell, None, &env).unwrap().unwrap();
        assert_eq!(re.tls, Some(false));
        assert_eq!(load(Path::new("/"), None, &env).unwrap(), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
