//! `actions --remote` against a real REAPI server: BuildGrid 0.4.4 from
//! PyPI, started by the harness in `remote/bgd.rs`. Results are written
//! with `UpdateActionResult` in every worker's shape (messages built as
//! each project's .proto declares them: see `src/remote/proto.rs`), read
//! back with `look_up`, and each figure compared with what was written.
//!
//! BuildGrid facts (TOOLCHAIN.md "The remote stack"): an instance it does
//! not list answers INVALID_ARGUMENT; a result whose output digests are
//! missing from its CAS answers NOT_FOUND, so results here have no outputs;
//! unknown fields and `Any` types are kept as sent.

#[path = "remote/bgd.rs"]
mod bgd;
#[path = "remote/results.rs"]
mod results;

use headroom::remote::action::{Digest, Lookup, RssScope, Source, Stored};
use headroom::remote::client::{self, Options, RemoteError};
use headroom::remote::endpoint::{Endpoint, parse_header, parse_url};
use headroom::remote::proto::{self, ActionResult, Duration};
use headroom::remote::worker_usage;
use prost::Message;
use results::{any, meta};

fn digest(n: u64) -> Digest {
    Digest {
        hash: format!("{n:064x}"),
        size_bytes: 140 + n as i64,
    }
}

/// Buildbarn: POSIXResourceUsage + FilePoolResourceUsage, killed.
fn buildbarn() -> ActionResult {
    let posix = proto::PosixResourceUsage {
        user_time: Some(Duration {
            seconds: 50,
            nanos: 0,
        }),
        system_time: Some(Duration {
            seconds: 4,
            nanos: 500_000_000,
        }),
        maximum_resident_set_size: 3_221_225_472,
        page_faults: 12,
        page_reclaims: 34_000,
        termination_signal: "KILL".into(),
        ..Default::default()
    };
    let pool = proto::FilePoolResourceUsage {
        files_size_bytes_peak: 65_536,
        ..Default::default()
    };
    ActionResult {
        exit_code: 137,
        execution_metadata: Some(meta(
            "bb-worker-1",
            vec![
                any(proto::POSIX_RESOURCE_USAGE_URL, posix.encode_to_vec()),
                any(proto::FILE_POOL_RESOURCE_USAGE_URL, pool.encode_to_vec()),
            ],
        )),
    }
}

/// BuildBuddy: UsageStats at field 1002, with memory PSI.
fn buildbuddy() -> ActionResult {
    let mut m = meta("executor-7", vec![]);
    m.virtual_execution_duration = Some(Duration {
        seconds: 42,
        nanos: 0,
    });
    m.usage_stats = Some(proto::UsageStats {
        peak_memory_bytes: 5_368_709_120,
        cpu_nanos: 168_000_000_000,
        memory_pressure: Some(proto::Psi {
            some: Some(proto::PsiMetrics {
                total: 1_500_000,
                ..Default::default()
            }),
            full: Some(proto::PsiMetrics {
                total: 700_000,
                ..Default::default()
            }),
        }),
        ..Default::default()
    });
    ActionResult {
        exit_code: 0,
        execution_metadata: Some(m),
    }
}

/// Buildfarm: WorkerExecutedMetadata with its cgroup `usage` map.
fn buildfarm() -> ActionResult {
    let mut w = proto::WorkerExecutedMetadata {
        fetched_bytes: 1_024,
        ..Default::default()
    };
    w.usage.insert("cpu.usage_usec".into(), 90_000_000);
    w.usage.insert("cpu.nr_periods".into(), 600);
    ActionResult {
        exit_code: 0,
        execution_metadata: Some(meta(
            "farm-3",
            vec![any(proto::WORKER_EXECUTED_METADATA_URL, w.encode_to_vec())],
        )),
    }
}

/// A vendor message only: stored, no usage, one skipped Any.
fn unknown_any() -> ActionResult {
    let vendor = any("type.googleapis.com/example.vendor.Cost", vec![0x08, 0x2a]);
    ActionResult {
        exit_code: 1,
        execution_metadata: Some(meta("w", vec![vendor])),
    }
}

/// Buildbarn's shape with fields no REAPI proto declares: field 99 of
/// ActionResult and BuildBuddy's `executor_id` (1000) in the metadata.
fn unknown_fields() -> (ActionResult, Vec<u8>) {
    let r = buildbarn();
    let mut m = r.execution_metadata.clone().expect("meta").encode_to_vec();
    m.extend_from_slice(&[0xc2, 0x3e, 0x03, b'e', b'-', b'1']); // 1000: "e-1"
    let mut bytes = vec![0x98, 0x06, 0x07]; // field 99, varint 7
    bytes.extend_from_slice(&[0x20, 0x89, 0x01]); // exit_code 137
    bytes.push(0x4a); // field 9, length-delimited
    prost::encoding::encode_varint(m.len() as u64, &mut bytes);
    bytes.extend_from_slice(&m);
    (r, bytes)
}

fn endpoint(port: u16, instance: &str) -> Endpoint {
    let mut ep = parse_url(&format!("grpc://127.0.0.1:{port}"), None).expect("url");
    ep.instance = instance.into();
    ep
}

fn stored(l: &Lookup) -> &Stored {
    match l {
        Lookup::Stored(s) => s,
        Lookup::NotFound => panic!("expected a stored result"),
    }
}

/// Every shape written, then read back; NOT_FOUND; the wrong instance.
#[test]
fn every_shape_round_trips_through_buildgrid() {
    let dir = bgd::temp_dir("bgd-plain");
    let server = bgd::Bgd::start(&dir, None);
    let mut ep = endpoint(server.port, "main");
    ep.headers
        .push(parse_header("x-buildbuddy-api-key: not-checked").expect("header"));
    let opts = Options::default();
    let shapes = [
        buildbarn(),
        buildbuddy(),
        buildfarm(),
        ActionResult {
            exit_code: 0,
            execution_metadata: None,
        },
        unknown_any(),
    ];
    let written: Vec<(Digest, ActionResult)> = shapes
        .iter()
        .enumerate()
        .map(|(i, r)| (digest(i as u64 + 1), r.clone()))
        .collect();
    client::update(&ep, &written, &opts).expect("update");
    let (raw_as, raw) = unknown_fields();
    client::update_encoded(&ep, &[(digest(6), raw)], &opts).expect("update raw");

    let mut asked: Vec<Digest> = written.iter().map(|(d, _)| d.clone()).collect();
    asked.push(digest(6));
    asked.push(digest(999)); // never written
    let got = client::look_up(&ep, &asked, &opts).expect("look up");
    assert_eq!(got.len(), 7);
    for (i, (_, r)) in written.iter().enumerate() {
        assert_eq!(stored(&got[i]), &worker_usage::stored(r), "shape {i}");
    }
    assert_eq!(
        stored(&got[5]),
        &worker_usage::stored(&raw_as),
        "unknown fields"
    );
    assert_eq!(got[6], Lookup::NotFound);

    // Figures, one by one, as written above.
    let bb = stored(&got[0]);
    let u = bb.usage.as_ref().expect("buildbarn usage");
    assert_eq!((bb.exit_code, bb.worker.as_str()), (137, "bb-worker-1"));
    assert_eq!(u.source, Some(Source::Buildbarn));
    assert_eq!(
        (u.user_ns, u.sys_ns),
        (Some(50_000_000_000), Some(4_500_000_000))
    );
    assert_eq!(
        (u.max_rss_bytes, u.rss_scope),
        (Some(3_221_225_472), Some(RssScope::LargestProcess))
    );
    assert_eq!(u.termination_signal.as_deref(), Some("KILL"));
    assert_eq!(u.file_pool_peak_bytes, Some(65_536));
    assert_eq!(bb.times.wall_ns(), Some(60_500_000_000));
    assert_eq!(bb.times.queued_ns(), Some(2_000_000_000));
    let bu = stored(&got[1]).usage.as_ref().expect("buildbuddy usage");
    assert_eq!(
        (bu.cpu_ns(), bu.max_rss_bytes),
        (Some(168_000_000_000), Some(5_368_709_120))
    );
    assert_eq!(bu.rss_scope, Some(RssScope::WholeAction));
    assert_eq!(bu.memory_stall.and_then(|s| s.full_us), Some(700_000));
    assert_eq!(stored(&got[1]).times.wall_ns(), Some(42_000_000_000));
    let bf = stored(&got[2]).usage.as_ref().expect("buildfarm usage");
    assert_eq!(
        (bf.source, bf.cpu_ns()),
        (Some(Source::Buildfarm), Some(90_000_000_000))
    );
    assert_eq!(stored(&got[3]).usage, None);
    assert_eq!(
        (stored(&got[4]).usage.as_ref(), stored(&got[4]).skipped_any),
        (None, 1)
    );
    assert_eq!(stored(&got[5]).exit_code, 137);

    many_in_flight_keep_their_order(&ep);
    wrong_instance(server.port);
    instances_are_separate(server.port, &asked[0]);
}

/// 300 lookups, 32 at a time, half of them found: answers in order.
fn many_in_flight_keep_their_order(ep: &Endpoint) {
    let results: Vec<(Digest, ActionResult)> = (0..150)
        .map(|i| {
            let mut r = buildbuddy();
            r.exit_code = i as i32;
            (digest(10_000 + 2 * i), r)
        })
        .collect();
    client::update(ep, &results, &Options::default()).expect("update 150");
    let asked: Vec<Digest> = (0..300).map(|i| digest(10_000 + i)).collect();
    let got = client::look_up(
        ep,
        &asked,
        &Options {
            in_flight: 32,
            ..Options::default()
        },
    )
    .expect("look up 300");
    for (i, l) in got.iter().enumerate() {
        match l {
            Lookup::Stored(s) => assert_eq!((i % 2, s.exit_code), (0, (i / 2) as i32)),
            Lookup::NotFound => assert_eq!(i % 2, 1, "{i}"),
        }
    }
}

fn wrong_instance(port: u16) {
    let e = client::look_up(&endpoint(port, "nope"), &[digest(1)], &Options::default())
        .expect_err("unknown instance");
    assert!(
        matches!(&e, RemoteError::UnknownInstance { instance, .. } if instance == "nope"),
        "{e}"
    );
    assert!(e.to_string().contains("check --instance"), "{e}");
}

fn instances_are_separate(port: u16, written: &Digest) {
    let got = client::look_up(
        &endpoint(port, "other"),
        std::slice::from_ref(written),
        &Options::default(),
    )
    .expect("other");
    assert_eq!(got, vec![Lookup::NotFound]);
}

/// A closed port: Unreachable, naming the address.
#[test]
fn server_down_is_unreachable_with_the_address() {
    let closed = bgd::closed_port();
    let port = closed.port;
    let ep = endpoint(port, "main");
    let opts = Options {
        deadline: std::time::Duration::from_secs(5),
        ..Options::default()
    };
    let e = client::look_up(&ep, &[digest(1)], &opts).expect_err("nothing listens");
    assert!(matches!(e, RemoteError::Unreachable { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(text.to_ascii_lowercase().contains("refused"), "{text}");
    assert!(
        !text.contains('\n') && !text.contains("transport error"),
        "{text}"
    );
}

/// grpcs:// with the CA that signed the server's certificate; without it,
/// rustls's UnknownIssuer in the one line.
#[test]
fn tls_with_a_ca_and_without() {
    let dir = bgd::temp_dir("bgd-tls");
    let (ca, server_tls) = bgd::make_certificates(&dir);
    let server = bgd::Bgd::start(&dir, Some(&server_tls));
    let url = format!("grpcs://127.0.0.1:{}", server.port);
    let mut ep = parse_url(&url, None).expect("url");
    ep.instance = "main".into();
    ep.tls_ca = Some(ca);
    let opts = Options::default();
    client::update(&ep, &[(digest(1), buildbarn())], &opts).expect("update over TLS");
    let got = client::look_up(&ep, &[digest(1), digest(2)], &opts).expect("look up over TLS");
    assert_eq!(stored(&got[0]), &worker_usage::stored(&buildbarn()));
    assert_eq!(got[1], Lookup::NotFound);

    ep.tls_ca = None; // webpki roots: the test CA is not among them
    let e = client::look_up(&ep, &[digest(1)], &opts).expect_err("unknown issuer");
    assert!(matches!(e, RemoteError::Tls { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("UnknownIssuer") && text.contains("--tls-ca"),
        "{text}"
    );
    assert!(
        !text.contains('\n') && !text.contains("transport error"),
        "{text}"
    );
}
