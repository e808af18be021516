//! Governing a recording while it runs: the loop that ticks, writes rows and
//! feeds the summary, and the jobserver that hands out job slots.
//!
//! The top layer of the library.

pub mod admit; // admission in a shared pool: the room, and who gets the next slot
pub mod estimate; // the estimate per job: where it starts, how it follows the jobs
pub mod jobserver; // `run --jobserver`: the FIFO and the memory-aware governor
pub mod lease; // a pool lease: one governor's reservation, as its file's text
pub mod pause; // pause, do not kill: which job to stop and which to continue
pub mod peakfile; // the peak per job a pool remembers for each run id
pub mod pool; // a shared pool on disk: its lock, this governor's lease, the others'
pub mod record; // the recording loop: tick, row, summary, wait
