//! Governing a recording while it runs: the loop that ticks, writes rows and
//! feeds the summary, and the jobserver's governor that hands out job slots.
//!
//! The top layer of the library.

pub mod jobserver; // `run --jobserver`: the governor — room, peak, tokens, pool, pausing, its driver
pub mod recording; // the recording loop: tick, row, summary, wait
