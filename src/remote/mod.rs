//! Per-action usage from a remote action cache (`actions --remote`, cargo
//! feature `remote`): the only part of the library that uses std, the heap
//! and a runtime. Without the feature none of it is built; with
//! `remote-logs` alone, only the log readers and what they need (no
//! client: no tonic, tokio or rustls), for the fuzz crate.
//!
//! The top layer: it reads what `report` reads.

pub mod action; // one remote action: what names it, what the cache stored for it
pub mod bazel; // Bazel execution logs: --execution_log_json_file, the binary one and the compact one
pub mod buck2; // one finished Buck2 action, from either encoding: remote, local or killed
pub mod buck2_json; // `buck2 log show` JSON lines
pub mod buck2_log; // Buck2's binary event log (*_events.pb.zst), decoded without buck2
pub mod buckconfig; // [buck2_re_client] from .buckconfig: where Buck2's cluster is
#[cfg(feature = "remote")]
pub mod client; // the action-cache client: GetActionResult for many digests on one HTTP/2 connection
#[cfg(feature = "remote")]
pub mod client_error; // why talking to the cache failed, one line each, from tonic's errors and gRPC codes
pub mod delimited; // zstd streams and the varint-length-delimited records in them
pub mod digest; // an action digest as text: HASH/SIZE or HASH:SIZE
pub mod endpoint; // a --remote address, its TLS files and headers, parsed
pub mod log_error; // a log that cannot be read: where and why; the cap on a JSON line
pub mod logs; // which actions to look up: every --log (format from its bytes) and --digest
#[cfg(feature = "remote")]
pub mod prom_http; // the Prometheus HTTP API client: GET /api/v1/query over HTTP/1.1, plaintext or TLS
#[cfg(feature = "remote")]
pub mod prometheus; // per worker container from the cluster's Prometheus: the build's window, the queries, their answers
#[cfg(feature = "remote")]
pub mod proto; // the REAPI and worker protobuf messages, hand-written for prost
#[cfg(feature = "remote")]
pub mod report; // the report: the local table's layout, remote time, killed actions; text and --json
#[cfg(feature = "remote")]
pub mod report_rows; // one action's figures, and --json-rows
#[cfg(feature = "remote")]
pub mod sizing; // how many actions a worker of a given size runs at once
#[cfg(feature = "remote")]
pub mod worker_usage; // an ActionResult's metadata → what the worker measured (Buildbarn, BuildBuddy, Buildfarm)
#[cfg(feature = "remote")]
pub mod workers; // the WORKERS block and --json workers: per pod, joined with the results
