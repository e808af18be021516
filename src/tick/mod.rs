//! One tick and its row: the clock, the sampler, the row, and headroom's own
//! footprint, fixed before the first tick.
//!
//! Above the followed build; below the reports.

pub mod clock; // Unix seconds and ISO 8601 UTC as the CSV writes them
pub mod footprint; // headroom's own pages made resident and locked
pub mod held; // a writer that holds its first error: no test at every piece
pub mod logwatch; // a build log that gives nothing: one warning each for missing and quiet
pub mod rates; // counters between two ticks as per-second rates
pub mod row; // one CSV row: the model shared by writer, reader and summary
pub mod sampler; // one tick: every source read once into a row
