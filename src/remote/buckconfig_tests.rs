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
    let d = std::env::temp_dir().join(std::format!("headroom-bc-{}-{name}", std::process::id()));
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
