//! What a worker measured of one action: an `ActionResult` from the cache
//! turned into a [`Stored`], from whichever worker's shape is there.
//!
//! - Buildbarn: `POSIXResourceUsage` and `FilePoolResourceUsage`, each an
//!   `Any` in `auxiliary_metadata` (bb-remote-execution
//!   `pkg/runner/local_runner_unix.go` fills it from wait4's rusage, so the
//!   peak is the largest single process).
//! - BuildBuddy: `UsageStats`, field 1002 of `ExecutedActionMetadata`,
//!   sampled from the action's cgroup (every process).
//! - Buildfarm: `WorkerExecutedMetadata` in an `Any`, its `usage` map
//!   filled from the action's cgroup v2 `cpu.stat` (`cpu.usage_usec`,
//!   `cpu.user_usec`, `cpu.system_usec`) and `cpu.pressure`
//!   (buildfarm `src/main/java/build/buildfarm/worker/cgroup/Cpu.java`);
//!   its memory controller samples nothing (`cgroup/Mem.java`), so no peak.
//!
//! When a result carries more than one known shape, BuildBuddy's comes
//! first, then Buildbarn's, then Buildfarm's. Any `Any` not read (unknown
//! type, a second copy, or a value that does not decode) is counted in
//! [`Stored::skipped_any`]; nothing here panics on bad input.

use super::action::{RssScope, Source, Stall, Stored, Times, Usage};
use super::proto;
use prost::Message;
use std::string::{String, ToString};

/// `ActionResult` → [`Stored`]: exit code, worker, timestamps and the
/// usage of the first known worker shape (`usage: None` when none is).
pub fn stored(result: &proto::ActionResult) -> Stored {
    let Some(meta) = result.execution_metadata.as_ref() else {
        return Stored {
            exit_code: result.exit_code,
            worker: String::new(),
            times: Times::default(),
            usage: None,
            skipped_any: 0,
        };
    };
    let found = read_anys(&meta.auxiliary_metadata);
    let usage = match &meta.usage_stats {
        Some(stats) => Some(buildbuddy(stats)),
        None => found.buildbarn().or(found.buildfarm),
    };
    Stored {
        exit_code: result.exit_code,
        worker: meta.worker.clone(),
        times: times(meta),
        usage,
        skipped_any: found.skipped,
    }
}

/// The `auxiliary_metadata` messages headroom reads, decoded.
#[derive(Default)]
struct Anys {
    posix: Option<proto::PosixResourceUsage>,
    file_pool: Option<proto::FilePoolResourceUsage>,
    buildfarm: Option<Usage>,
    skipped: u32,
}

impl Anys {
    /// Buildbarn's usage when either of its messages is there.
    fn buildbarn(&self) -> Option<Usage> {
        if self.posix.is_none() && self.file_pool.is_none() {
            return None;
        }
        let mut u = self.posix.as_ref().map(buildbarn).unwrap_or_default();
        u.source = Some(Source::Buildbarn);
        u.file_pool_peak_bytes = self.file_pool.as_ref().map(|f| f.files_size_bytes_peak);
        Some(u)
    }
}

/// The last path segment of a type URL: `type.googleapis.com/a.B` → `a.B`
/// (the host part is not fixed by protobuf).
fn type_name(type_url: &str) -> &str {
    type_url.rsplit('/').next().unwrap_or(type_url)
}

/// Sorts `auxiliary_metadata` into the messages read and a count of the
/// others.
fn read_anys(anys: &[proto::Any]) -> Anys {
    let posix_name = type_name(proto::POSIX_RESOURCE_USAGE_URL);
    let pool_name = type_name(proto::FILE_POOL_RESOURCE_USAGE_URL);
    let farm_name = type_name(proto::WORKER_EXECUTED_METADATA_URL);
    let mut out = Anys::default();
    for any in anys {
        let name = type_name(&any.type_url);
        let read = if name == posix_name && out.posix.is_none() {
            out.posix = proto::PosixResourceUsage::decode(any.value.as_slice()).ok();
            out.posix.is_some()
        } else if name == pool_name && out.file_pool.is_none() {
            out.file_pool = proto::FilePoolResourceUsage::decode(any.value.as_slice()).ok();
            out.file_pool.is_some()
        } else if name == farm_name && out.buildfarm.is_none() {
            out.buildfarm = proto::WorkerExecutedMetadata::decode(any.value.as_slice())
                .ok()
                .map(|m| buildfarm(&m));
            out.buildfarm.is_some()
        } else {
            false
        };
        if !read {
            out.skipped = out.skipped.saturating_add(1);
        }
    }
    out
}

/// A count or size that must not be negative; `None` when it is.
fn count(v: i64) -> Option<u64> {
    u64::try_from(v).ok()
}

/// A `Duration` in nanoseconds; `None` when negative or out of range.
fn duration_ns(d: &proto::Duration) -> Option<u64> {
    let ns = i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos);
    u64::try_from(ns).ok()
}

/// A `Timestamp` in nanoseconds since the Unix epoch.
fn timestamp_ns(t: &Option<proto::Timestamp>) -> Option<i128> {
    t.as_ref()
        .map(|t| i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanos))
}

/// The `ExecutedActionMetadata` timestamps.
fn times(m: &proto::ExecutedActionMetadata) -> Times {
    Times {
        queued: timestamp_ns(&m.queued_timestamp),
        worker_start: timestamp_ns(&m.worker_start_timestamp),
        worker_completed: timestamp_ns(&m.worker_completed_timestamp),
        input_fetch_start: timestamp_ns(&m.input_fetch_start_timestamp),
        input_fetch_completed: timestamp_ns(&m.input_fetch_completed_timestamp),
        execution_start: timestamp_ns(&m.execution_start_timestamp),
        execution_completed: timestamp_ns(&m.execution_completed_timestamp),
        output_upload_start: timestamp_ns(&m.output_upload_start_timestamp),
        output_upload_completed: timestamp_ns(&m.output_upload_completed_timestamp),
        virtual_execution: m
            .virtual_execution_duration
            .as_ref()
            .map(|d| i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos)),
    }
}

/// Buildbarn `POSIXResourceUsage` → [`Usage`] (largest process).
fn buildbarn(p: &proto::PosixResourceUsage) -> Usage {
    let signal = p.termination_signal.trim();
    Usage {
        source: Some(Source::Buildbarn),
        user_ns: p.user_time.as_ref().and_then(duration_ns),
        sys_ns: p.system_time.as_ref().and_then(duration_ns),
        max_rss_bytes: count(p.maximum_resident_set_size),
        rss_scope: Some(RssScope::LargestProcess),
        termination_signal: (!signal.is_empty()).then(|| signal.to_string()),
        major_faults: count(p.page_faults),
        minor_faults: count(p.page_reclaims),
        block_in: count(p.block_input_operations),
        block_out: count(p.block_output_operations),
        voluntary_switches: count(p.voluntary_context_switches),
        involuntary_switches: count(p.involuntary_context_switches),
        ..Usage::default()
    }
}

/// A BuildBuddy `PSI` → [`Stall`] (the `total` of `some` and `full`).
fn stall(psi: &Option<proto::Psi>) -> Option<Stall> {
    let psi = psi.as_ref()?;
    Some(Stall {
        some_us: psi.some.as_ref().and_then(|m| count(m.total)),
        full_us: psi.full.as_ref().and_then(|m| count(m.total)),
    })
}

/// BuildBuddy `UsageStats` → [`Usage`] (whole action).
fn buildbuddy(s: &proto::UsageStats) -> Usage {
    Usage {
        source: Some(Source::BuildBuddy),
        cpu_total_ns: count(s.cpu_nanos),
        max_rss_bytes: count(s.peak_memory_bytes),
        rss_scope: Some(RssScope::WholeAction),
        cpu_stall: stall(&s.cpu_pressure),
        memory_stall: stall(&s.memory_pressure),
        io_stall: stall(&s.io_pressure),
        ..Usage::default()
    }
}

/// One Buildfarm `usage` key in microseconds → nanoseconds.
fn usec_key(m: &proto::WorkerExecutedMetadata, key: &str) -> Option<u64> {
    count(*m.usage.get(key)?)?.checked_mul(1_000)
}

/// Buildfarm `WorkerExecutedMetadata` → [`Usage`]. Its `cpu.pressure.total`
/// holds the `some` total × 100 (`Cpu.java` keeps pressure values in
/// hundredths, and `total` has no decimal point).
fn buildfarm(m: &proto::WorkerExecutedMetadata) -> Usage {
    let pressure = m.usage.get("cpu.pressure.total").and_then(|v| count(*v));
    Usage {
        source: Some(Source::Buildfarm),
        user_ns: usec_key(m, "cpu.user_usec"),
        sys_ns: usec_key(m, "cpu.system_usec"),
        cpu_total_ns: usec_key(m, "cpu.usage_usec"),
        cpu_stall: pressure.map(|p| Stall {
            some_us: Some(p / 100),
            full_us: None,
        }),
        ..Usage::default()
    }
}

#[cfg(test)]
mod tests {
    //! Each worker's shape built as its project's .proto declares it (field
    //! numbers: see `proto.rs`), encoded, decoded as the client decodes a
    //! `GetActionResult` answer, and read back.

    use super::*;
    use crate::remote::proto::{
        ActionResult, Any, Duration, ExecutedActionMetadata, FilePoolResourceUsage,
        PosixResourceUsage, Psi, PsiMetrics, Timestamp, UsageStats, WorkerExecutedMetadata,
    };
    use std::vec;
    use std::vec::Vec;

    /// Encodes and decodes, as the wire does.
    fn round_trip(r: &ActionResult) -> Stored {
        let bytes = r.encode_to_vec();
        let back = ActionResult::decode(bytes.as_slice()).expect("own encoding decodes");
        stored(&back)
    }

    fn any(url: &str, value: Vec<u8>) -> Any {
        Any {
            type_url: url.into(),
            value,
        }
    }

    fn ts(seconds: i64, nanos: i32) -> Option<Timestamp> {
        Some(Timestamp { seconds, nanos })
    }

    fn meta(aux: Vec<Any>) -> ExecutedActionMetadata {
        ExecutedActionMetadata {
            worker: "w1".into(),
            queued_timestamp: ts(100, 0),
            worker_start_timestamp: ts(102, 500_000_000),
            execution_start_timestamp: ts(110, 0),
            execution_completed_timestamp: ts(130, 250_000_000),
            auxiliary_metadata: aux,
            ..Default::default()
        }
    }

    fn result(exit_code: i32, m: Option<ExecutedActionMetadata>) -> ActionResult {
        ActionResult {
            exit_code,
            execution_metadata: m,
        }
    }

    fn posix() -> PosixResourceUsage {
        PosixResourceUsage {
            user_time: Some(Duration {
                seconds: 12,
                nanos: 5,
            }),
            system_time: Some(Duration {
                seconds: 1,
                nanos: 0,
            }),
            maximum_resident_set_size: 3 << 30,
            page_reclaims: 7,
            page_faults: 8,
            block_input_operations: 10,
            block_output_operations: 11,
            voluntary_context_switches: 15,
            involuntary_context_switches: 16,
            termination_signal: "KILL".into(),
            ..Default::default()
        }
    }

    #[test]
    fn buildbarn_posix_and_file_pool() {
        // bb-remote-execution resourceusage.proto: ru_maxrss in bytes, the
        // signal without "SIG".
        let pool = FilePoolResourceUsage {
            files_size_bytes_peak: 4096,
            ..Default::default()
        };
        let r = result(
            -1,
            Some(meta(vec![
                any(proto::POSIX_RESOURCE_USAGE_URL, posix().encode_to_vec()),
                any(proto::FILE_POOL_RESOURCE_USAGE_URL, pool.encode_to_vec()),
            ])),
        );
        let s = round_trip(&r);
        assert_eq!(s.exit_code, -1);
        assert_eq!(s.worker, "w1");
        assert_eq!(s.skipped_any, 0);
        let u = s.usage.expect("usage");
        assert_eq!(u.source, Some(Source::Buildbarn));
        assert_eq!(u.user_ns, Some(12_000_000_005));
        assert_eq!(u.sys_ns, Some(1_000_000_000));
        assert_eq!(u.cpu_ns(), Some(13_000_000_005));
        assert_eq!(u.max_rss_bytes, Some(3 << 30));
        assert_eq!(u.rss_scope, Some(RssScope::LargestProcess));
        assert_eq!(u.termination_signal.as_deref(), Some("KILL"));
        assert_eq!(u.minor_faults, Some(7));
        assert_eq!(u.major_faults, Some(8));
        assert_eq!(u.block_in, Some(10));
        assert_eq!(u.block_out, Some(11));
        assert_eq!(u.voluntary_switches, Some(15));
        assert_eq!(u.involuntary_switches, Some(16));
        assert_eq!(u.file_pool_peak_bytes, Some(4096));
    }

    #[test]
    fn buildbarn_without_signal_has_none() {
        let mut p = posix();
        p.termination_signal.clear();
        let r = result(
            0,
            Some(meta(vec![any(
                proto::POSIX_RESOURCE_USAGE_URL,
                p.encode_to_vec(),
            )])),
        );
        let u = round_trip(&r).usage.expect("usage");
        assert_eq!(u.termination_signal, None);
        assert_eq!(u.file_pool_peak_bytes, None);
    }

    #[test]
    fn times_from_metadata() {
        // REAPI ExecutedActionMetadata: wall = execution completed − started
        // when virtual_execution_duration (12) is unset.
        let s = round_trip(&result(0, Some(meta(vec![]))));
        assert_eq!(s.times.queued, Some(100_000_000_000));
        assert_eq!(s.times.queued_ns(), Some(2_500_000_000));
        assert_eq!(s.times.wall_ns(), Some(20_250_000_000));
        let mut m = meta(vec![]);
        m.virtual_execution_duration = Some(Duration {
            seconds: 3,
            nanos: 0,
        });
        let s = round_trip(&result(0, Some(m)));
        assert_eq!(s.times.wall_ns(), Some(3_000_000_000));
    }

    #[test]
    fn buildbuddy_usage_stats_1002() {
        // buildbuddy proto/remote_execution.proto: UsageStats usage_stats =
        // 1002; PSI { Metrics some = 1; Metrics full = 2 }, Metrics.total = 4.
        let psi = |some, full| {
            Some(Psi {
                some: Some(PsiMetrics {
                    avg10: 1.5,
                    total: some,
                    ..Default::default()
                }),
                full: Some(PsiMetrics {
                    total: full,
                    ..Default::default()
                }),
            })
        };
        let mut m = meta(vec![]);
        m.usage_stats = Some(UsageStats {
            peak_memory_bytes: 5 << 30,
            cpu_nanos: 42_000_000_000,
            memory_bytes: 1,
            cpu_pressure: psi(10, 0),
            memory_pressure: psi(2_000, 900),
            io_pressure: None,
        });
        let u = round_trip(&result(0, Some(m))).usage.expect("usage");
        assert_eq!(u.source, Some(Source::BuildBuddy));
        assert_eq!(u.cpu_total_ns, Some(42_000_000_000));
        assert_eq!(u.cpu_ns(), Some(42_000_000_000));
        assert_eq!(u.user_ns, None);
        assert_eq!(u.max_rss_bytes, Some(5 << 30));
        assert_eq!(u.rss_scope, Some(RssScope::WholeAction));
        assert_eq!(
            u.memory_stall,
            Some(Stall {
                some_us: Some(2_000),
                full_us: Some(900)
            })
        );
        assert_eq!(u.cpu_stall.and_then(|s| s.some_us), Some(10));
        assert_eq!(u.io_stall, None);
    }

    #[test]
    fn buildfarm_usage_map() {
        // buildfarm.proto WorkerExecutedMetadata.usage (3); keys from
        // worker/cgroup/Cpu.java ("cpu." + cpu.stat names; pressure × 100).
        let mut w = WorkerExecutedMetadata {
            fetched_bytes: 1,
            linked_input_directories: vec!["d".into()],
            ..Default::default()
        };
        w.usage.insert("cpu.usage_usec".into(), 7_000_000);
        w.usage.insert("cpu.nr_periods".into(), 3);
        w.usage.insert("cpu.pressure.total".into(), 123_400);
        let r = result(
            0,
            Some(meta(vec![any(
                proto::WORKER_EXECUTED_METADATA_URL,
                w.encode_to_vec(),
            )])),
        );
        let u = round_trip(&r).usage.expect("usage");
        assert_eq!(u.source, Some(Source::Buildfarm));
        assert_eq!(u.cpu_total_ns, Some(7_000_000_000));
        assert_eq!(u.cpu_ns(), Some(7_000_000_000));
        assert_eq!(u.max_rss_bytes, None);
        assert_eq!(u.rss_scope, None);
        assert_eq!(u.cpu_stall.and_then(|s| s.some_us), Some(1_234));
        w.usage.insert("cpu.user_usec".into(), 5_000_000);
        w.usage.insert("cpu.system_usec".into(), 1_000_000);
        let u = buildfarm(&w);
        assert_eq!(u.user_ns, Some(5_000_000_000));
        assert_eq!(u.cpu_ns(), Some(6_000_000_000));
    }

    #[test]
    fn no_metadata_is_stored_without_usage() {
        // Bazel uploads results of local runs without execution_metadata.
        let s = round_trip(&result(0, None));
        assert_eq!(s.usage, None);
        assert_eq!(s.worker, "");
        assert_eq!(s.times, Times::default());
    }

    #[test]
    fn unknown_any_skipped_and_counted() {
        let r = result(
            0,
            Some(meta(vec![
                any(
                    "type.googleapis.com/build.bazel.remote.execution.v2.RequestMetadata",
                    vec![0x0a, 0x00],
                ),
                any("type.example.com/vendor.Thing", vec![1, 2, 3]),
            ])),
        );
        let s = round_trip(&r);
        assert_eq!(s.usage, None);
        assert_eq!(s.skipped_any, 2);
    }

    #[test]
    fn undecodable_known_any_is_skipped() {
        // A truncated varint: not a POSIXResourceUsage.
        let r = result(
            0,
            Some(meta(vec![any(
                proto::POSIX_RESOURCE_USAGE_URL,
                vec![0x18, 0xff],
            )])),
        );
        let s = round_trip(&r);
        assert_eq!(s.usage, None);
        assert_eq!(s.skipped_any, 1);
    }

    #[test]
    fn buildbuddy_first_then_buildbarn() {
        let mut m = meta(vec![any(
            proto::POSIX_RESOURCE_USAGE_URL,
            posix().encode_to_vec(),
        )]);
        m.usage_stats = Some(UsageStats {
            peak_memory_bytes: 9,
            ..Default::default()
        });
        let u = round_trip(&result(0, Some(m))).usage.expect("usage");
        assert_eq!(u.source, Some(Source::BuildBuddy));
        assert_eq!(u.max_rss_bytes, Some(9));
    }

    #[test]
    fn unknown_fields_are_skipped() {
        // An ActionResult with a field this reader does not declare (stdout
        // digest 6) and a BuildBuddy-only field (executor_id 1000) in the
        // metadata decodes to the same figures.
        let mut m = meta(vec![]).encode_to_vec();
        m.extend_from_slice(&[0xc2, 0x3e, 0x02, b'e', b'x']); // field 1000, "ex"
        let mut bytes = vec![0x32, 0x02, 0x0a, 0x00]; // field 6: Digest{hash ""}
        bytes.extend_from_slice(&[0x20, 0x03]); // exit_code 3
        bytes.push(0x4a); // field 9
        bytes.push(u8::try_from(m.len()).expect("short"));
        bytes.extend_from_slice(&m);
        let back = ActionResult::decode(bytes.as_slice()).expect("decodes");
        let s = stored(&back);
        assert_eq!(s.exit_code, 3);
        assert_eq!(s.worker, "w1");
        assert_eq!(s.times.wall_ns(), Some(20_250_000_000));
    }

    #[test]
    fn negative_figures_are_unknown() {
        let p = PosixResourceUsage {
            maximum_resident_set_size: -1,
            user_time: Some(Duration {
                seconds: -5,
                nanos: 0,
            }),
            ..Default::default()
        };
        let u = buildbarn(&p);
        assert_eq!(u.max_rss_bytes, None);
        assert_eq!(u.user_ns, None);
    }

    #[test]
    fn type_url_host_is_not_fixed() {
        assert_eq!(
            type_name("example.org/x/buildbarn.resourceusage.POSIXResourceUsage"),
            "buildbarn.resourceusage.POSIXResourceUsage"
        );
        assert_eq!(type_name("bare"), "bare");
    }
}
