//! Per-action usage from a remote action cache (`actions --remote`, cargo
//! feature `remote`): the only part of the library that uses std, the heap
//! and a runtime. Without the feature none of it is built.
//!
//! The top layer: it reads what `report` reads.

pub mod action; // one remote action: what names it, what the cache stored for it
pub mod client; // the action-cache client: GetActionResult for many digests on one HTTP/2 connection
pub mod client_error; // why talking to the cache failed, one line each, from tonic's errors and gRPC codes
pub mod endpoint; // a --remote address, its TLS files and headers, parsed
pub mod proto; // the REAPI and worker protobuf messages, hand-written for prost
pub mod usage; // an ActionResult's metadata → what the worker measured (Buildbarn, BuildBuddy, Buildfarm)
