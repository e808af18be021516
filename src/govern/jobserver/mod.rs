//! `run --jobserver`: headroom as the GNU make jobserver of the build,
//! handing out job slots only while memory allows, sharing a memory pool
//! with other builds, pausing jobs that would outgrow it: the model
//! (`room`, `estimate`), the rules over it (`handout`, `admit`,
//! `pause_rule`), the files and processes they act on (`token_fifo`,
//! `lease`, `peakfile`, `pool_open`, `pool_dir`, `pool_member`,
//! `pausing`), what it tells (`notes`), and the `driver` that runs a tick.

pub mod admit; // pool admission: the room with the others', who gets the next slot
pub mod budget_file; // a pool's budget set by its operator, in the pool directory
pub mod ceiling; // a limit above the container no file states, noticed from its reclaim
pub mod driver; // a glance in, decisions out and acted on: the governor's tick
pub mod estimate; // the peak per job: where it starts, how it rises with the jobs
pub mod handout; // token handout: how many jobs memory allows, tokens out or back
pub mod job_peaks; // the peak of each job a pool remembers for each run id, by the key of its work
pub mod job_weights; // each job its own weight: keyed at its start, its remembered peak, measured at its end
pub mod lease; // a pool lease: one governor's reservation, as its file's text
pub mod notes; // what the governor tells, as values, and the sink that words them
pub mod pause_rule; // which job to stop and which to continue (pause, do not kill)
pub mod pausing; // CMD's jobs found each tick, stopped and continued
pub mod peakfile; // the peak per job a pool remembers for each run id
pub mod pool_dir; // a pool directory on disk: its lock, this governor's lease, the others'
pub mod pool_member; // this governor's side of a pool: its lease, the others, admission
pub mod pool_open; // a pool directory opened: made, trusted, its lock file and a lease made, why not
pub mod room; // the one model of memory: usable, room, growth, the reserve
pub mod token_fifo; // the jobserver's FIFO: tokens written, counted, read back
