//! Action results as a worker stores them, for the tests that write them
//! to BuildGrid (`tests/remote.rs`, `tests/remote_cli.rs`): the REAPI
//! `ExecutedActionMetadata` with every timestamp, and `Any` entries.

use headroom::remote::proto::{Any, ExecutedActionMetadata, Timestamp};

/// A protobuf `Timestamp`, set.
pub fn ts(seconds: i64, nanos: i32) -> Option<Timestamp> {
    Some(Timestamp { seconds, nanos })
}

/// Metadata with every timestamp: queued 2 s, input fetch 0.9999999 s,
/// execution 60.5 s, upload 0.5 s; `aux` as `auxiliary_metadata`.
pub fn meta(worker: &str, aux: Vec<Any>) -> ExecutedActionMetadata {
    ExecutedActionMetadata {
        worker: worker.into(),
        queued_timestamp: ts(1_700_000_000, 0),
        worker_start_timestamp: ts(1_700_000_002, 0),
        input_fetch_start_timestamp: ts(1_700_000_002, 100),
        input_fetch_completed_timestamp: ts(1_700_000_003, 0),
        execution_start_timestamp: ts(1_700_000_003, 0),
        execution_completed_timestamp: ts(1_700_000_063, 500_000_000),
        output_upload_start_timestamp: ts(1_700_000_063, 500_000_000),
        output_upload_completed_timestamp: ts(1_700_000_064, 0),
        auxiliary_metadata: aux,
        ..Default::default()
    }
}

/// An `Any` of type `type_url` holding `value`.
pub fn any(type_url: &str, value: Vec<u8>) -> Any {
    Any {
        type_url: type_url.into(),
        value,
    }
}
