//! Per-action usage from a remote action cache (`actions --remote`, cargo
//! feature `remote`): the only part of the library that uses std, the heap
//! and a runtime. Without the feature none of it is built.
//!
//! The top layer: it reads what `report` reads.

pub mod action; // one remote action: what names it, what the cache stored for it
pub mod buckconfig; // STUB until merge: `[buck2_re_client]` of .buckconfig
pub mod client; // STUB until merge: ActionCache.GetActionResult for many digests
pub mod endpoint; // STUB until merge: the URL, TLS, instance and headers of the cache
pub mod logs; // STUB until merge: the actions Buck2 and Bazel logs and --digest name
pub mod report; // the report: the local table's layout, remote time, killed actions; text and --json
pub mod report_rows; // one action's figures, and --json-rows
pub mod sizing; // how many actions a worker of a given size runs at once
