//! The protobuf messages `actions --remote` reads and writes, hand-written
//! with `prost`'s derive (no protoc, no build.rs). Only the fields headroom
//! uses are declared; prost skips the others when decoding.
//!
//! # References (field numbers checked against each project's own file)
//! - REAPI v2: bazelbuild/remote-apis
//!   `build/bazel/remote/execution/v2/remote_execution.proto` (commit
//!   becdd8f9): `Digest`, `GetActionResultRequest`,
//!   `UpdateActionResultRequest`, `ActionResult`, `ExecutedActionMetadata`.
//! - BuildBuddy: buildbuddy-io/buildbuddy `proto/remote_execution.proto`
//!   (commit 004488dd): `ExecutedActionMetadata.usage_stats = 1002`,
//!   `UsageStats`, `PSI`.
//! - Buildbarn: buildbarn/bb-remote-execution
//!   `pkg/proto/resourceusage/resourceusage.proto` (commit 13313e6a):
//!   `POSIXResourceUsage`, `FilePoolResourceUsage`.
//! - Buildfarm: buildfarm/buildfarm
//!   `src/main/protobuf/build/buildfarm/v1test/buildfarm.proto` (commit
//!   85ad8a00): `WorkerExecutedMetadata`.
//! - `google.protobuf.Any`, `Timestamp`, `Duration`: the well-known types,
//!   from `prost-types`.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

pub use prost_types::{Any, Duration, Timestamp};

/// gRPC path of `ActionCache.GetActionResult` (REAPI v2).
pub const GET_ACTION_RESULT: &str = "/build.bazel.remote.execution.v2.ActionCache/GetActionResult";

/// gRPC path of `ActionCache.UpdateActionResult` (REAPI v2).
pub const UPDATE_ACTION_RESULT: &str =
    "/build.bazel.remote.execution.v2.ActionCache/UpdateActionResult";

/// `Any.type_url` of Buildbarn's [`PosixResourceUsage`].
pub const POSIX_RESOURCE_USAGE_URL: &str =
    "type.googleapis.com/buildbarn.resourceusage.POSIXResourceUsage";

/// `Any.type_url` of Buildbarn's [`FilePoolResourceUsage`].
pub const FILE_POOL_RESOURCE_USAGE_URL: &str =
    "type.googleapis.com/buildbarn.resourceusage.FilePoolResourceUsage";

/// `Any.type_url` of Buildfarm's [`WorkerExecutedMetadata`].
pub const WORKER_EXECUTED_METADATA_URL: &str =
    "type.googleapis.com/build.buildfarm.v1test.WorkerExecutedMetadata";

/// REAPI `Digest`: a blob's hash (lowercase hex) and size.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Digest {
    /// `hash` (1): lowercase hexadecimal.
    #[prost(string, tag = "1")]
    pub hash: String,
    /// `size_bytes` (2): the blob's size, bytes.
    #[prost(int64, tag = "2")]
    pub size_bytes: i64,
}

/// REAPI `GetActionResultRequest`. headroom asks for nothing inlined: the
/// usage is in the metadata, outputs are never read.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct GetActionResultRequest {
    /// `instance_name` (1): which of the server's caches.
    #[prost(string, tag = "1")]
    pub instance_name: String,
    /// `action_digest` (2): the digest of the `Action`.
    #[prost(message, optional, tag = "2")]
    pub action_digest: Option<Digest>,
    /// `inline_stdout` (3).
    #[prost(bool, tag = "3")]
    pub inline_stdout: bool,
    /// `inline_stderr` (4).
    #[prost(bool, tag = "4")]
    pub inline_stderr: bool,
    /// `inline_output_files` (5): output paths to inline.
    #[prost(string, repeated, tag = "5")]
    pub inline_output_files: Vec<String>,
}

/// REAPI `UpdateActionResultRequest` (tests and `ci/bench` write with it).
#[derive(Clone, PartialEq, prost::Message)]
pub struct UpdateActionResultRequest {
    /// `instance_name` (1).
    #[prost(string, tag = "1")]
    pub instance_name: String,
    /// `action_digest` (2).
    #[prost(message, optional, tag = "2")]
    pub action_digest: Option<Digest>,
    /// `action_result` (3).
    #[prost(message, optional, tag = "3")]
    pub action_result: Option<ActionResult>,
}

/// [`UpdateActionResultRequest`] with `action_result` (3) already encoded:
/// a length-delimited message and `bytes` are the same on the wire, so a
/// result with fields this file does not declare (unknown fields, vendor
/// extensions) is sent exactly as given.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct UpdateActionResultEncoded {
    /// `instance_name` (1).
    #[prost(string, tag = "1")]
    pub instance_name: String,
    /// `action_digest` (2).
    #[prost(message, optional, tag = "2")]
    pub action_digest: Option<Digest>,
    /// `action_result` (3): an encoded `ActionResult`.
    #[prost(bytes = "vec", tag = "3")]
    pub action_result: Vec<u8>,
}

/// REAPI `ActionResult`: only the exit code and the metadata (outputs,
/// stdout and stderr digests are skipped when decoding).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ActionResult {
    /// `exit_code` (4).
    #[prost(int32, tag = "4")]
    pub exit_code: i32,
    /// `execution_metadata` (9).
    #[prost(message, optional, tag = "9")]
    pub execution_metadata: Option<ExecutedActionMetadata>,
}

/// REAPI `ExecutedActionMetadata`, plus BuildBuddy's `usage_stats` (1002).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExecutedActionMetadata {
    /// `worker` (1): the worker's name.
    #[prost(string, tag = "1")]
    pub worker: String,
    /// `queued_timestamp` (2).
    #[prost(message, optional, tag = "2")]
    pub queued_timestamp: Option<Timestamp>,
    /// `worker_start_timestamp` (3).
    #[prost(message, optional, tag = "3")]
    pub worker_start_timestamp: Option<Timestamp>,
    /// `worker_completed_timestamp` (4).
    #[prost(message, optional, tag = "4")]
    pub worker_completed_timestamp: Option<Timestamp>,
    /// `input_fetch_start_timestamp` (5).
    #[prost(message, optional, tag = "5")]
    pub input_fetch_start_timestamp: Option<Timestamp>,
    /// `input_fetch_completed_timestamp` (6).
    #[prost(message, optional, tag = "6")]
    pub input_fetch_completed_timestamp: Option<Timestamp>,
    /// `execution_start_timestamp` (7).
    #[prost(message, optional, tag = "7")]
    pub execution_start_timestamp: Option<Timestamp>,
    /// `execution_completed_timestamp` (8).
    #[prost(message, optional, tag = "8")]
    pub execution_completed_timestamp: Option<Timestamp>,
    /// `output_upload_start_timestamp` (9).
    #[prost(message, optional, tag = "9")]
    pub output_upload_start_timestamp: Option<Timestamp>,
    /// `output_upload_completed_timestamp` (10).
    #[prost(message, optional, tag = "10")]
    pub output_upload_completed_timestamp: Option<Timestamp>,
    /// `auxiliary_metadata` (11): worker-specific messages.
    #[prost(message, repeated, tag = "11")]
    pub auxiliary_metadata: Vec<Any>,
    /// `virtual_execution_duration` (12, REAPI v2.3).
    #[prost(message, optional, tag = "12")]
    pub virtual_execution_duration: Option<Duration>,
    /// BuildBuddy's `usage_stats` (1002), not an `Any`.
    #[prost(message, optional, tag = "1002")]
    pub usage_stats: Option<UsageStats>,
}

/// Buildbarn `buildbarn.resourceusage.POSIXResourceUsage`: the wait4
/// rusage of the action's process (the largest one for the peak).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct PosixResourceUsage {
    /// `user_time` (1): `ru_utime`.
    #[prost(message, optional, tag = "1")]
    pub user_time: Option<Duration>,
    /// `system_time` (2): `ru_stime`.
    #[prost(message, optional, tag = "2")]
    pub system_time: Option<Duration>,
    /// `maximum_resident_set_size` (3): `ru_maxrss`, bytes.
    #[prost(int64, tag = "3")]
    pub maximum_resident_set_size: i64,
    /// `page_reclaims` (7): minor faults.
    #[prost(int64, tag = "7")]
    pub page_reclaims: i64,
    /// `page_faults` (8): major faults.
    #[prost(int64, tag = "8")]
    pub page_faults: i64,
    /// `swaps` (9).
    #[prost(int64, tag = "9")]
    pub swaps: i64,
    /// `block_input_operations` (10).
    #[prost(int64, tag = "10")]
    pub block_input_operations: i64,
    /// `block_output_operations` (11).
    #[prost(int64, tag = "11")]
    pub block_output_operations: i64,
    /// `messages_sent` (12).
    #[prost(int64, tag = "12")]
    pub messages_sent: i64,
    /// `messages_received` (13).
    #[prost(int64, tag = "13")]
    pub messages_received: i64,
    /// `signals_received` (14).
    #[prost(int64, tag = "14")]
    pub signals_received: i64,
    /// `voluntary_context_switches` (15).
    #[prost(int64, tag = "15")]
    pub voluntary_context_switches: i64,
    /// `involuntary_context_switches` (16).
    #[prost(int64, tag = "16")]
    pub involuntary_context_switches: i64,
    /// `termination_signal` (17): the signal's name without `SIG`
    /// (`KILL`); empty when the process exited.
    #[prost(string, tag = "17")]
    pub termination_signal: String,
}

/// Buildbarn `buildbarn.resourceusage.FilePoolResourceUsage`: the action's
/// scratch files.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct FilePoolResourceUsage {
    /// `files_created` (1).
    #[prost(uint64, tag = "1")]
    pub files_created: u64,
    /// `files_count_peak` (2).
    #[prost(uint64, tag = "2")]
    pub files_count_peak: u64,
    /// `files_size_bytes_peak` (3), bytes.
    #[prost(uint64, tag = "3")]
    pub files_size_bytes_peak: u64,
    /// `reads_count` (4).
    #[prost(uint64, tag = "4")]
    pub reads_count: u64,
    /// `reads_size_bytes` (5).
    #[prost(uint64, tag = "5")]
    pub reads_size_bytes: u64,
    /// `writes_count` (6).
    #[prost(uint64, tag = "6")]
    pub writes_count: u64,
    /// `writes_size_bytes` (7).
    #[prost(uint64, tag = "7")]
    pub writes_size_bytes: u64,
    /// `truncates_count` (8).
    #[prost(uint64, tag = "8")]
    pub truncates_count: u64,
}

/// BuildBuddy `UsageStats`: sampled from the action's cgroup (every
/// process of the action together).
#[derive(Clone, PartialEq, prost::Message)]
pub struct UsageStats {
    /// `peak_memory_bytes` (1), bytes.
    #[prost(int64, tag = "1")]
    pub peak_memory_bytes: i64,
    /// `cpu_nanos` (2): CPU time, nanoseconds.
    #[prost(int64, tag = "2")]
    pub cpu_nanos: i64,
    /// `memory_bytes` (3): the last sample, bytes (not a summary).
    #[prost(int64, tag = "3")]
    pub memory_bytes: i64,
    /// `cpu_pressure` (5).
    #[prost(message, optional, tag = "5")]
    pub cpu_pressure: Option<Psi>,
    /// `memory_pressure` (6).
    #[prost(message, optional, tag = "6")]
    pub memory_pressure: Option<Psi>,
    /// `io_pressure` (7).
    #[prost(message, optional, tag = "7")]
    pub io_pressure: Option<Psi>,
}

/// BuildBuddy `PSI`: a cgroup's pressure file (`some` and `full` lines).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Psi {
    /// `some` (1): at least one task stalled.
    #[prost(message, optional, tag = "1")]
    pub some: Option<PsiMetrics>,
    /// `full` (2): every task stalled.
    #[prost(message, optional, tag = "2")]
    pub full: Option<PsiMetrics>,
}

/// BuildBuddy `PSI.Metrics`: one line of a pressure file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PsiMetrics {
    /// `avg10` (1), percent.
    #[prost(float, tag = "1")]
    pub avg10: f32,
    /// `avg60` (2), percent.
    #[prost(float, tag = "2")]
    pub avg60: f32,
    /// `avg300` (3), percent.
    #[prost(float, tag = "3")]
    pub avg300: f32,
    /// `total` (4): stalled time, microseconds.
    #[prost(int64, tag = "4")]
    pub total: i64,
}

/// Buildfarm `build.buildfarm.v1test.WorkerExecutedMetadata`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct WorkerExecutedMetadata {
    /// `fetched_bytes` (1): inputs fetched, bytes.
    #[prost(int64, tag = "1")]
    pub fetched_bytes: i64,
    /// `linked_input_directories` (2).
    #[prost(string, repeated, tag = "2")]
    pub linked_input_directories: Vec<String>,
    /// `usage` (3): the action's cgroup samples by key (`cpu.usage_usec`,
    /// `cpu.user_usec`, ... from `cpu.stat`; `cpu.pressure.*`).
    #[prost(btree_map = "string, int64", tag = "3")]
    pub usage: BTreeMap<String, i64>,
}
