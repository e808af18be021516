//! Planning: the host as a budget, how many jobs it takes, what to change,
//! and the screen to read before a build.
//!
//! Above the reports; below governing.

pub mod advise; // the safe -j per build tool and the swap to add
pub mod host; // usable cores and memory, each with where it came from
pub mod jobs; // the job-count model
pub mod status; // `status`: one screen before a build
