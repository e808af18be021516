//! One remote action: what a log (or `--digest`) names, and what the
//! cluster's action cache stored for it.
//!
//! The shapes every other module of `remote/` shares: the log readers make
//! [`Named`] actions, the client turns each digest into a [`Lookup`], the
//! worker decoders fill [`Usage`], the report reads them all.
//!
//! # References
//! REAPI v2 `remote_execution.proto` (`Digest`, `ActionResult`,
//! `ExecutedActionMetadata`); SPEC.md "Per-action usage from a remote action
//! cache".

use std::collections::HashSet;
use std::string::{String, ToString};
use std::vec::Vec;

/// An action digest (REAPI `Digest`): the hash of the serialized `Action`
/// as lowercase hex (SHA-256: 64 digits) and its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    /// Lowercase hexadecimal hash.
    pub hash: String,
    /// Size of the serialized `Action`, bytes.
    pub size_bytes: i64,
}

/// Which kind of input named an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A Buck2 event log, `*_events.pb.zst`.
    Buck2Log,
    /// `buck2 log show` JSON lines.
    Buck2Json,
    /// Bazel `--execution_log_json_file`.
    BazelJson,
    /// Bazel `--execution_log_compact_file`.
    BazelCompact,
    /// Bazel `--execution_log_binary_file`.
    BazelBinary,
    /// `--digest HASH/SIZE` on the command line.
    Hand,
}

/// An action a log names. Local actions are counted by the log readers,
/// never made into a `Named`: only actions that ran or were looked up
/// remotely carry a digest worth asking the cache for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// What it built: Buck2's `name.identifier` (with the target when the
    /// log gives it), Bazel's target label; the digest for `--digest`.
    pub id: String,
    /// Its kind: Buck2's `name.category` (`cxx_compile`), Bazel's
    /// mnemonic (`CppCompile`); empty when unknown.
    pub category: String,
    /// The action digest the client looks up.
    pub digest: Digest,
    /// Where it was named.
    pub origin: Origin,
}

/// An action a Buck2 log says failed with a kill: its text contains
/// `Killed signal terminated program` (gcc's words when its cc1plus is
/// SIGKILLed). Failed actions are never cached, so only the log shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Killed {
    /// As [`Named::id`].
    pub id: String,
    /// As [`Named::category`].
    pub category: String,
    /// The line of the action's output that says it, trimmed.
    pub line: String,
}

/// What the logs and `--digest` name, together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Remote actions in the order first seen, each digest once.
    pub actions: Vec<Named>,
    /// Failed actions whose text says they were killed.
    pub killed: Vec<Killed>,
    /// Actions the logs show ran locally (not looked up).
    pub local: u64,
    /// Remote spawns a Bazel log gives no action digest (Bazel before 7
    /// writes none): counted, not looked up.
    pub no_digest: u64,
    /// Logs that ended inside a record or a zstd frame (a build still
    /// running, or its writer killed, e.g. by the OOM killer): the actions
    /// before the cut are in `actions`, the rest are unknown. Each name once.
    pub truncated: Vec<String>,
    /// For the logs of `truncated` whose reader counts them: the log, and
    /// the complete records (`buck2 log show`: lines) read before the cut,
    /// its header among them. A log not here has no count (unknown).
    pub records_before_cut: Vec<(String, u64)>,
}

impl Found {
    /// The logs cut short, joined by `, `, each with its count when known:
    /// `a_events.pb.zst (117 records read), b.json`.
    pub fn cut_logs(&self) -> String {
        let named: Vec<String> = self
            .truncated
            .iter()
            .map(
                |t| match self.records_before_cut.iter().find(|(f, _)| f == t) {
                    Some((_, 1)) => std::format!("{t} (1 record read)"),
                    Some((_, n)) => std::format!("{t} ({n} records read)"),
                    None => t.clone(),
                },
            )
            .collect();
        named.join(", ")
    }
}

/// Gathers what the readers name into a [`Found`], each digest once (the
/// first name wins), in order.
#[derive(Debug, Default)]
pub struct Collector {
    found: Found,
    seen: HashSet<Digest>,
}

impl Collector {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A remote action; ignored when its digest was named before.
    pub fn remote(&mut self, n: Named) {
        if self.seen.insert(n.digest.clone()) {
            self.found.actions.push(n);
        }
    }

    /// An action that ran locally.
    pub fn local(&mut self) {
        self.found.local += 1;
    }

    /// A remote spawn with no action digest to look up (Bazel before 7).
    pub fn remote_no_digest(&mut self) {
        self.found.no_digest += 1;
    }

    /// A failed action whose text says it was killed.
    pub fn killed(&mut self, k: Killed) {
        self.found.killed.push(k);
    }

    /// `file` ended inside a record or frame.
    pub fn truncated(&mut self, file: &str) {
        if !self.found.truncated.iter().any(|t| t == file) {
            self.found.truncated.push(file.to_string());
        }
    }

    /// `file`, noted as cut short, had `records` complete records before
    /// the cut (ignored when `file` was not cut, or was counted before).
    pub fn records_before_cut(&mut self, file: &str, records: u64) {
        let found = &mut self.found;
        if found.truncated.iter().any(|t| t == file)
            && !found.records_before_cut.iter().any(|(f, _)| f == file)
        {
            found.records_before_cut.push((file.to_string(), records));
        }
    }

    /// What was gathered.
    pub fn finish(self) -> Found {
        self.found
    }
}

/// Whose memory a peak figure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RssScope {
    /// The largest single process (wait4 rusage `ru_maxrss`): Buildbarn.
    LargestProcess,
    /// Every process of the action together (its cgroup): BuildBuddy.
    WholeAction,
}

/// Which worker message a usage came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `buildbarn.resourceusage.POSIXResourceUsage` in an `Any`.
    Buildbarn,
    /// BuildBuddy's `UsageStats`, field 1002 of `ExecutedActionMetadata`.
    BuildBuddy,
    /// `build.buildfarm.v1test.WorkerExecutedMetadata` in an `Any`.
    Buildfarm,
}

/// What a worker measured of one action. `None` where its message has no
/// such figure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The message it came from; `None` when no known message was there.
    pub source: Option<Source>,
    /// User CPU time, nanoseconds.
    pub user_ns: Option<u64>,
    /// System CPU time, nanoseconds.
    pub sys_ns: Option<u64>,
    /// CPU time when the worker gives no user/system split (BuildBuddy
    /// `cpu_nanos`, Buildfarm `cpu.usage_usec`), nanoseconds.
    pub cpu_total_ns: Option<u64>,
    /// Peak memory, bytes, of [`Usage::rss_scope`].
    pub max_rss_bytes: Option<u64>,
    /// Whose memory [`Usage::max_rss_bytes`] is.
    pub rss_scope: Option<RssScope>,
    /// The signal that ended it, without `SIG` (`KILL`).
    pub termination_signal: Option<String>,
    /// Major page faults (Buildbarn `page_faults`).
    pub major_faults: Option<u64>,
    /// Minor page faults (Buildbarn `page_reclaims`).
    pub minor_faults: Option<u64>,
    /// Block input operations.
    pub block_in: Option<u64>,
    /// Block output operations.
    pub block_out: Option<u64>,
    /// Voluntary context switches.
    pub voluntary_switches: Option<u64>,
    /// Involuntary context switches.
    pub involuntary_switches: Option<u64>,
    /// Buildbarn `FilePoolResourceUsage.files_size_bytes_peak`, bytes.
    pub file_pool_peak_bytes: Option<u64>,
    /// CPU pressure stall (BuildBuddy `UsageStats.cpu_pressure`; Buildfarm
    /// `cpu.pressure.total`).
    pub cpu_stall: Option<Stall>,
    /// Memory pressure stall (BuildBuddy `UsageStats.memory_pressure`):
    /// time the action's tasks waited for memory (reclaim, swap-in).
    pub memory_stall: Option<Stall>,
    /// I/O pressure stall (BuildBuddy `UsageStats.io_pressure`).
    pub io_stall: Option<Stall>,
}

/// Pressure stall totals of one resource over an action (Linux PSI, the
/// `total=` of a cgroup's `*.pressure` file), microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stall {
    /// `some`: time at least one task of the action was stalled, µs.
    pub some_us: Option<u64>,
    /// `full`: time every task of the action was stalled, µs.
    pub full_us: Option<u64>,
}

impl Usage {
    /// CPU time, nanoseconds: user + system when both are known, else the
    /// worker's total.
    pub fn cpu_ns(&self) -> Option<u64> {
        match (self.user_ns, self.sys_ns) {
            (Some(u), Some(s)) => Some(u.saturating_add(s)),
            _ => self.cpu_total_ns,
        }
    }
}

/// The `ExecutedActionMetadata` timestamps, nanoseconds since the Unix
/// epoch (`None` when unset), and `virtual_execution_duration`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// `queued_timestamp` (2).
    pub queued: Option<i128>,
    /// `worker_start_timestamp` (3).
    pub worker_start: Option<i128>,
    /// `worker_completed_timestamp` (4).
    pub worker_completed: Option<i128>,
    /// `input_fetch_start_timestamp` (5).
    pub input_fetch_start: Option<i128>,
    /// `input_fetch_completed_timestamp` (6).
    pub input_fetch_completed: Option<i128>,
    /// `execution_start_timestamp` (7).
    pub execution_start: Option<i128>,
    /// `execution_completed_timestamp` (8).
    pub execution_completed: Option<i128>,
    /// `output_upload_start_timestamp` (9).
    pub output_upload_start: Option<i128>,
    /// `output_upload_completed_timestamp` (10).
    pub output_upload_completed: Option<i128>,
    /// `virtual_execution_duration` (12), nanoseconds.
    pub virtual_execution: Option<i128>,
}

/// `later − earlier` when both are known and it is not negative, ns.
fn span(earlier: Option<i128>, later: Option<i128>) -> Option<u64> {
    let d = later?.checked_sub(earlier?)?;
    u64::try_from(d).ok()
}

impl Times {
    /// Wall time of the execution, ns: `virtual_execution_duration`, else
    /// execution completed − execution started.
    pub fn wall_ns(&self) -> Option<u64> {
        match self.virtual_execution {
            Some(v) => u64::try_from(v).ok(),
            None => span(self.execution_start, self.execution_completed),
        }
    }

    /// Time in the queue, ns: worker start − queued.
    pub fn queued_ns(&self) -> Option<u64> {
        span(self.queued, self.worker_start)
    }

    /// Time fetching inputs, ns.
    pub fn input_fetch_ns(&self) -> Option<u64> {
        span(self.input_fetch_start, self.input_fetch_completed)
    }

    /// Time uploading outputs, ns.
    pub fn upload_ns(&self) -> Option<u64> {
        span(self.output_upload_start, self.output_upload_completed)
    }
}

/// What the action cache holds for one action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// `ActionResult.exit_code` (4); a signalled action may carry -1.
    pub exit_code: i32,
    /// `ExecutedActionMetadata.worker` (1); empty when unset.
    pub worker: String,
    /// The timestamps.
    pub times: Times,
    /// What the worker measured; `None` when no known worker message is
    /// there: a result with no metadata (uploaded by a client that ran it
    /// locally), or a worker that stores none (BuildGrid, NativeLink,
    /// bazel-remote): "stored, no usage". When `Some`, `source` is set.
    pub usage: Option<Usage>,
    /// `auxiliary_metadata` entries of types not read (RequestMetadata,
    /// auth, vendor messages), counted.
    pub skipped_any: u32,
}

/// The answer for one digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// `NOT_FOUND`: no stored result (evicted, or the action failed).
    NotFound,
    /// A stored result (boxed: it is large beside `NotFound`).
    Stored(std::boxed::Box<Stored>),
}
