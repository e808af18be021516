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
#[path = "worker_usage_tests.rs"]
mod tests;
