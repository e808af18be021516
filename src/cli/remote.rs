//! `actions --remote`: the glue between the command line and
//! `headroom::remote` (cargo feature `remote`): the endpoint from the
//! options or `.buckconfig`, the logs read, the lookups, the report
//! printed. A build without the feature hands the command to the remote
//! reader, `headroom` built with it (`headroom-remote`), or says how to get one.
//!
//! The options are checked (usage errors, exit 2) in
//! [`super::report_cmd::actions_cmd`] before this is called, in every build.

use std::process::ExitCode;

use super::messages::Fail;
use super::options::ActionsArgs;

/// The remote reader's file name: `headroom` built with the feature, an
/// executable of its own so that the `headroom` people record with stays
/// plain (the reader's code, faulted in and locked at start with the rest,
/// would hold 1.7 MiB more in every recording). ci/build-release builds
/// it; the amd64 and arm64 packages install it as
/// `/usr/libexec/headroom/headroom-remote`.
#[cfg(not(feature = "remote"))]
pub const READER: &str = "headroom-remote";

/// Set in the reader's environment by the `headroom` that hands it the
/// command (its path as the value): a reader that is itself a plain build
/// says so instead of handing it on again.
#[cfg(not(feature = "remote"))]
const HANDED: &str = "HEADROOM_REMOTE_READER";

/// `actions` with no FILE: the action cache's report, by the remote reader.
///
/// The command line, as given, goes to the first [`READER`] of
/// [`reader_places`] (`exec`: its output and exit code are the command's).
/// None there: one line naming where it looked and how to get it, exit 1.
/// Not 2: the command line is right (the options exist in every build and
/// were checked); it is this install that cannot do it, and exit 2 would
/// tell a script its arguments were wrong.
#[cfg(not(feature = "remote"))]
pub fn remote_cmd(a: ActionsArgs) -> Result<ExitCode, Fail> {
    use std::os::unix::process::CommandExt;

    let _ = a;
    let exe = std::env::current_exe().map_err(|e| Fail(format!("/proc/self/exe: {e}")))?;
    // Handed the command by a headroom that took this file for the
    // reader (a value naming another file was set by someone else, and
    // means nothing here).
    if std::env::var_os(HANDED).is_some_and(|from| std::path::Path::new(&from) == exe) {
        return Err(Fail(format!(
            "the remote reader {} is a plain headroom too: put there a headroom built with `--features remote` (ci/build-release builds it as headroom-remote)",
            exe.display()
        )));
    }
    let places = reader_places(&exe);
    let Some(reader) = places.iter().find(|p| p.is_file()) else {
        return Err(Fail(no_reader(&places)));
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| "headroom".into());
    // Its real path, as the reader's own /proc/self/exe will read: a
    // symlink to this very headroom is then caught there, not looped.
    let real = std::fs::canonicalize(reader).unwrap_or_else(|_| reader.clone());
    let err = std::process::Command::new(reader)
        .arg0(arg0)
        .args(args)
        .env(HANDED, real)
        .exec();
    Err(Fail(format!("{}: {err}", reader.display())))
}

/// Where the remote reader is looked for, in order: beside the running
/// executable (a cargo target dir, an unpacked tarball), then
/// `../libexec/headroom/` from it (the packages' `/usr/bin/headroom` and
/// `/usr/libexec/headroom/`, or under `/usr/local`), as git finds its
/// subcommands in its exec path. Not `$PATH`: a reader of another version
/// found there would answer for this one.
#[cfg(not(feature = "remote"))]
pub fn reader_places(exe: &std::path::Path) -> [std::path::PathBuf; 2] {
    let dir = exe.parent().unwrap_or(std::path::Path::new("/"));
    // `/proc/self/exe` is the real path (no symlink in it), so its
    // parent's parent is what `..` would reach.
    let up = dir.parent().unwrap_or(dir);
    [dir.join(READER), up.join("libexec/headroom").join(READER)]
}

/// The line when no reader is found: where it was looked for and how to
/// get one.
#[cfg(not(feature = "remote"))]
fn no_reader([beside, libexec]: &[std::path::PathBuf; 2]) -> String {
    format!(
        "this headroom has no `actions --remote`: its reader {READER} is not at {} or {}; install the amd64 or arm64 package, which has it, or put ci/build-release's {READER} beside this headroom",
        beside.display(),
        libexec.display()
    )
}

/// `actions` with no FILE: the action cache's report.
///
/// The endpoint ([`endpoint`]), then the logs, then one lookup per
/// digest, then the report as text, `--json` or `--json-rows`. Exit 1 with
/// one line for what the remote layer reports (a log that is not one of
/// the formats, the server unreachable, TLS, credentials), for logs that
/// name no remote action, and when no action has a stored result (then
/// `--json` and `--json-rows` still print JSON: [`no_table`]).
#[cfg(feature = "remote")]
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn remote_cmd(a: ActionsArgs) -> Result<ExitCode, Fail> {
    use headroom::remote::action::{Lookup, Named};
    use headroom::remote::report::Report;
    use std::io::Write;

    if let Some(msg) = bad_digest(&a.digest) {
        return super::messages::usage(&msg);
    }
    let prom = match prometheus_plan(&a) {
        Ok(p) => p,
        Err(msg) => return super::messages::usage(&msg),
    };
    let endpoint = match endpoint(&a) {
        Ok(e) => e,
        Err(Stop::Usage(msg)) => return super::messages::usage(&msg),
        Err(Stop::Fail(f)) => return Err(f),
    };
    let found =
        headroom::remote::logs::read_logs(&a.log, &a.digest).map_err(|e| Fail(e.to_string()))?;
    if found.actions.is_empty() {
        // A log cut in its first record is noted, not refused: say so, or
        // a zstd file that is no log at all reads as an empty build.
        let cut = match found.truncated.as_slice() {
            [] => String::new(),
            _ => format!(
                "; cut short mid-record, or not a log at all: {}",
                found.cut_logs()
            ),
        };
        if found.no_digest > 0 {
            let line = format!(
                "the logs name no remote action with a digest to look up: {} no action digest (Bazel before 7 writes none), {} ran locally{cut}",
                headroom::remote::report::no_digest_text(found.no_digest),
                found.local
            );
            return no_table(&a, &Report::new(&[], &found, options(&a)), line);
        }
        let line = format!(
            "the logs name no remote action ({} ran locally): nothing to look up{cut}",
            found.local
        );
        return no_table(&a, &Report::new(&[], &found, options(&a)), line);
    }
    let lookups = look_up(&endpoint, &found.actions)?;
    let pairs: Vec<(Named, Lookup)> = found.actions.iter().cloned().zip(lookups).collect();
    if pairs.iter().all(|(_, l)| matches!(l, Lookup::NotFound)) {
        let report = Report::new(&pairs, &found, options(&a));
        return no_table(&a, &report, none_stored(&endpoint, &found.actions));
    }
    // Asked before anything is printed: one line and exit 1 when the
    // Prometheus fails, never a report without the block asked for.
    let workers = prom.map(|p| workers(&p, &pairs)).transpose()?;
    let mut report = Report::new(&pairs, &found, options(&a));
    if let Some(w) = &workers {
        report = report.with_workers(w);
    }
    let text = if a.json_rows {
        // The rows have no room to say it; the text and --json do.
        for log in &found.truncated {
            let _ = writeln!(
                std::io::stderr(),
                "headroom: {log}: cut short mid-record: only the actions before the cut are in the rows"
            );
        }
        report.rows()
    } else if a.json {
        report.json()
    } else {
        report.text()
    };
    super::messages::print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `--prometheus` asks, checked before any lookup.
#[cfg(feature = "remote")]
struct PromPlan {
    target: headroom::remote::prom_http::Target,
    selector: String,
    since: Option<i64>,
    until: Option<i64>,
    now_s: i64,
}

/// `--prometheus` and its options as a [`PromPlan`] (`None` without
/// it); a bad value is a usage line. `--tls-ca`, `--tls-cert` and
/// `--tls-key` apply to an https:// Prometheus too (a cluster's own CA,
/// a client certificate only sent when asked for); `--header` does not
/// (the cache's credentials are not the Prometheus's to see):
/// `--prometheus-header` is its own.
#[cfg(feature = "remote")]
fn prometheus_plan(a: &ActionsArgs) -> Result<Option<PromPlan>, String> {
    use headroom::remote::prometheus::{DEFAULT_SELECTOR, parse_instant, selector};
    use std::path::PathBuf;

    let Some(url) = &a.prometheus else {
        return Ok(None);
    };
    let mut target = headroom::remote::prom_http::parse_target(url).map_err(|e| e.to_string())?;
    target.tls_ca = a.tls_ca.as_ref().map(PathBuf::from);
    target.identity = a
        .tls_cert
        .as_ref()
        .zip(a.tls_key.as_ref())
        .map(|(c, k)| (PathBuf::from(c), PathBuf::from(k)));
    for h in &a.prometheus_header {
        let h = headroom::remote::endpoint::parse_header(h)
            .map_err(|e| format!("--prometheus-header: {e}"))?;
        target.headers.push(h);
    }
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let instant = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|s| {
                parse_instant(s, now_s)
                    .map_err(|e| format!("{flag} '{}': {e}", super::messages::shown(s)))
            })
            .transpose()
    };
    Ok(Some(PromPlan {
        target,
        selector: selector(a.prometheus_selector.as_deref().unwrap_or(DEFAULT_SELECTOR)),
        since: instant("--since", &a.since)?,
        until: instant("--until", &a.until)?,
        now_s,
    }))
}

/// The worker containers over the build's window: the window from the
/// stored results (or `--since`/`--until`), the three queries, their
/// answers read. Any failure is one line (exit 1).
#[cfg(feature = "remote")]
fn workers(
    p: &PromPlan,
    pairs: &[(
        headroom::remote::action::Named,
        headroom::remote::action::Lookup,
    )],
) -> Result<headroom::remote::workers::Workers, Fail> {
    use headroom::remote::action::Lookup;
    use headroom::remote::prom_http::{get_all, query_path};
    use headroom::remote::prometheus::{Figure, containers, read_answer, results_span, window};

    let fail = |e: &dyn std::fmt::Display| Fail(e.to_string());
    let times = pairs.iter().filter_map(|(_, l)| match l {
        Lookup::Stored(s) => Some(&s.times),
        Lookup::NotFound => None,
    });
    let w = window(results_span(times), p.since, p.until, p.now_s).map_err(|e| fail(&e))?;
    let paths: Vec<String> = Figure::ALL
        .iter()
        .map(|f| query_path(&p.target, &f.query(&p.selector, &w), w.end_s))
        .collect();
    let answers = get_all(&p.target, &paths).map_err(|e| fail(&e))?;
    let mut read = Vec::with_capacity(3);
    for (f, answer) in Figure::ALL.into_iter().zip(&answers) {
        read.push(
            read_answer(&p.target.url, f, answer.status, &answer.body).map_err(|e| fail(&e))?,
        );
    }
    let [mem, cpu, oom]: [_; 3] = read.try_into().map_err(|_| {
        Fail(format!(
            "the Prometheus at {}: an answer is missing",
            p.target.url
        ))
    })?;
    Ok(headroom::remote::workers::Workers {
        url: p.target.url.clone(),
        selector: p.selector.clone(),
        window: w,
        containers: containers([mem, cpu, oom]),
    })
}

/// The report's options from the command line.
#[cfg(feature = "remote")]
fn options(a: &ActionsArgs) -> headroom::remote::report::Options {
    use headroom::remote::sizing::Worker;
    let worker = a
        .worker_cores
        .zip(a.worker_mem)
        .map(|(cores, mem_bytes)| Worker { cores, mem_bytes });
    headroom::remote::report::Options {
        top: a.top,
        min_wall_ms: a.min_wall.unwrap_or(0),
        worker,
    }
}

/// No table to show (the logs name no remote action, or none has a
/// stored result): `line` on standard error and exit 1, as the text
/// report; with `--json` the report object with its counts and `line` as
/// its `reason` first, with `--json-rows` the rows of the actions looked
/// up (`[]` when none was), so that a script always has JSON to parse.
#[cfg(feature = "remote")]
fn no_table(
    a: &ActionsArgs,
    report: &headroom::remote::report::Report<'_>,
    line: String,
) -> Result<ExitCode, Fail> {
    if a.json_rows {
        super::messages::print_text(&report.rows())?;
    } else if a.json {
        super::messages::print_text(&report.json_with_reason(&line))?;
    }
    Err(Fail(line))
}

/// The lookups, one per action, checked whole: never a partial table.
#[cfg(feature = "remote")]
fn look_up(
    endpoint: &headroom::remote::endpoint::Endpoint,
    actions: &[headroom::remote::action::Named],
) -> Result<Vec<headroom::remote::action::Lookup>, Fail> {
    use headroom::remote::client::Options;
    use std::io::IsTerminal;

    let digests: Vec<_> = actions.iter().map(|n| n.digest.clone()).collect();
    let options = Options {
        in_flight: 32,
        deadline: std::time::Duration::from_secs(30),
        retries: 4,
        progress: std::io::stderr().is_terminal(),
    };
    let lookups = headroom::remote::client::look_up(endpoint, &digests, &options)
        .map_err(|e| Fail(e.to_string()))?;
    if lookups.len() != digests.len() {
        return Err(Fail(format!(
            "{} answers for {} actions from {}: not reporting a partial table",
            lookups.len(),
            digests.len(),
            endpoint.authority
        )));
    }
    Ok(lookups)
}

/// The line when no action has a stored result: the address as given
/// (`HOST:PORT`, as the remote layer's errors name it), the instance or
/// that none was given, and that the logs' cluster may be gone only when
/// some action came from a log (not only `--digest`).
#[cfg(feature = "remote")]
fn none_stored(
    endpoint: &headroom::remote::endpoint::Endpoint,
    actions: &[headroom::remote::action::Named],
) -> String {
    use headroom::remote::action::Origin;

    let what = match actions.len() {
        1 => "the 1 action".to_string(),
        n => format!("any of the {n} actions"),
    };
    let mut line = format!("no stored result for {what} at {}", endpoint.authority);
    if endpoint.instance.is_empty() {
        line.push_str(": no instance name was given (--instance, or instance_name in .buckconfig): most clusters store results under one");
    } else {
        line.push_str(&format!(
            " (instance '{}'): check --instance (results are stored per instance)",
            super::messages::shown(&endpoint.instance)
        ));
    }
    if actions.iter().any(|n| n.origin != Origin::Hand) {
        line.push_str("; the log's cluster may be gone or have evicted them");
    } else {
        line.push_str(
            "; or the cache evicted them, or they failed (failed actions are not cached)",
        );
    }
    line
}

/// The first `--digest` that is not `HASH/SIZE` or `HASH:SIZE`, as a
/// usage line (exit 2): a malformed option value, as a bad `--remote` or
/// `--header` is.
#[cfg(feature = "remote")]
fn bad_digest(digests: &[String]) -> Option<String> {
    digests.iter().find_map(|d| {
        headroom::remote::digest::parse_digest(d)
            .err()
            .map(|e| format!("--digest '{}': {e}", super::messages::shown(d)))
    })
}

/// Why no endpoint: a usage error (exit 2) or a failure (exit 1).
#[cfg(feature = "remote")]
enum Stop {
    Usage(String),
    Fail(Fail),
}

/// The endpoint: `--remote` and the TLS and header options when given;
/// otherwise `[buck2_re_client]` of the `.buckconfig` here or in a
/// parent, each option given on the command line taking precedence over
/// it. Buck2's `tls_client_cert` is one PEM file holding the certificate
/// and its key.
#[cfg(feature = "remote")]
fn endpoint(a: &ActionsArgs) -> Result<headroom::remote::endpoint::Endpoint, Stop> {
    use headroom::remote::endpoint::parse_url;
    use std::path::PathBuf;

    let mut headers = Vec::new();
    let mut ep = match &a.remote {
        Some(url) => {
            parse_url(url, None).map_err(|e| Stop::Usage(format!("--remote {url}: {e}")))?
        }
        None => {
            let re = headroom::remote::buckconfig::load_here()
                .map_err(|e| Stop::Fail(Fail(e.to_string())))?
                .ok_or_else(|| {
                    Stop::Usage(
                        "actions: no --remote URL, and no .buckconfig with [buck2_re_client] here or in a parent: give --remote grpcs://HOST:PORT".into(),
                    )
                })?;
            buck_endpoint(re, &mut headers)?
        }
    };
    if let Some(i) = &a.instance {
        ep.instance = i.clone();
    }
    ep.tls_ca = a.tls_ca.as_ref().map(PathBuf::from).or(ep.tls_ca);
    if a.tls_cert.is_some() {
        ep.tls_cert = a.tls_cert.as_ref().map(PathBuf::from);
        ep.tls_key = a.tls_key.as_ref().map(PathBuf::from);
    }
    for h in &a.header {
        headers.push(header_arg(h).map_err(Stop::Usage)?);
    }
    ep.headers.extend(headers);
    Ok(ep)
}

/// `--header NAME: VALUE` parsed; the error names the header, never its
/// value (an API key, a token).
#[cfg(feature = "remote")]
fn header_arg(h: &str) -> Result<(String, String), String> {
    headroom::remote::endpoint::parse_header(h).map_err(|e| format!("--header: {e}"))
}

/// The endpoint `[buck2_re_client]` names (its headers go to `headers`).
#[cfg(feature = "remote")]
fn buck_endpoint(
    re: headroom::remote::buckconfig::BuckRe,
    headers: &mut Vec<(String, String)>,
) -> Result<headroom::remote::endpoint::Endpoint, Stop> {
    let address = re.address.ok_or_else(|| {
        Stop::Fail(Fail(format!(
            "{}: [buck2_re_client] names no action_cache_address or engine_address: give --remote",
            re.file.display()
        )))
    })?;
    let mut ep = headroom::remote::endpoint::parse_url(&address, re.tls)
        .map_err(|e| Stop::Fail(Fail(format!("{}: {address}: {e}", re.file.display()))))?;
    ep.instance = re.instance.unwrap_or_default();
    ep.tls_ca = re.tls_ca;
    ep.tls_cert = re.tls_client_cert.clone();
    ep.tls_key = re.tls_client_cert;
    headers.extend(re.headers);
    Ok(ep)
}

#[cfg(all(test, feature = "remote"))]
mod tests {
    //! The option values this module checks itself.
    use super::*;
    use std::string::ToString;

    #[test]
    fn a_bad_digest_is_one_usage_line_naming_it() {
        let h = "ab".repeat(32);
        let good = [format!("{h}/140"), format!("{h}:7")];
        assert_eq!(bad_digest(&good), None);
        let bad = [good[0].clone(), "nonsense".to_string(), "x\ny".to_string()];
        assert_eq!(
            bad_digest(&bad).as_deref(),
            Some("--digest 'nonsense': expected HASH/SIZE or HASH:SIZE")
        );
        let newline = bad_digest(&bad[2..]).expect("bad");
        assert!(!newline.contains('\n'), "{newline}");
    }

    /// A Named of `origin` (the shapes of `headroom::remote::action`).
    fn named(origin: headroom::remote::action::Origin) -> headroom::remote::action::Named {
        headroom::remote::action::Named {
            id: "x".to_string(),
            category: String::new(),
            digest: headroom::remote::action::Digest {
                hash: "ab".repeat(32),
                size_bytes: 7,
            },
            origin,
        }
    }

    #[test]
    fn no_stored_result_names_the_address_as_given_and_what_to_check() {
        use headroom::remote::action::Origin;
        let mut ep =
            headroom::remote::endpoint::parse_url("grpc://127.0.0.1:48267", None).expect("url");
        ep.instance = "main".to_string();
        let one = [named(Origin::Hand)];
        let line = none_stored(&ep, &one);
        assert_eq!(
            line,
            "no stored result for the 1 action at 127.0.0.1:48267 (instance 'main'): check --instance (results are stored per instance); or the cache evicted them, or they failed (failed actions are not cached)"
        );
        assert!(!line.contains("http"), "{line}");
        let two = [named(Origin::Hand), named(Origin::Buck2Log)];
        let line = none_stored(&ep, &two);
        assert!(
            line.starts_with(
                "no stored result for any of the 2 actions at 127.0.0.1:48267 (instance 'main')"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("; the log's cluster may be gone or have evicted them"),
            "{line}"
        );
        ep.instance = String::new();
        let line = none_stored(&ep, &two);
        assert!(
            line.contains("at 127.0.0.1:48267: no instance name was given (--instance, or instance_name in .buckconfig): most clusters store results under one;"),
            "{line}"
        );
        assert!(!line.contains("instance ''"), "{line}");
    }

    #[test]
    fn a_bad_header_names_it_once_and_never_its_value() {
        let e = header_arg("x-api-key: s3cret\u{7}").expect_err("control byte");
        assert!(
            e.starts_with("--header: ") && e.contains("x-api-key"),
            "{e}"
        );
        assert!(
            !e.contains("s3cret") && e.matches("--header").count() == 1,
            "{e}"
        );
        let e = header_arg("x-api-key s3cret").expect_err("no colon");
        assert!(!e.contains("s3cret"), "{e}");
        assert_eq!(
            header_arg("X-Team: build"),
            Ok(("x-team".to_string(), "build".to_string()))
        );
    }
}
