//! Reading rows back and reporting them: the summary, the actions table, the
//! Prometheus file, the SVG plot, and writing a report file whole.
//!
//! Above the tick; below planning.

pub mod actions; // `run --actions` rows and the `actions` table
pub mod actions_json; // an action as JSON, and `actions --json-rows` streamed
pub mod csvread; // streaming reader of recorded CSVs, by header name
pub mod fit; // the jobs a measured peak allows: one rule for jobs --from and the summary
pub mod jobserver_block; // the JOBSERVER block: what the governor did
pub mod json_write; // JSON string literals and optional numbers, written without allocation
pub mod plot; // `plot`: the SVG timeline of a recorded run
pub mod prom; // the Prometheus text file of the latest row
pub mod replace; // replacing a file whole: temporary file, then rename(2)
pub mod summary; // the run summary: text and JSON
