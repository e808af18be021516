//! headroom: what a build did to RAM, swap, zram, /tmp, disk and CPU on a
//! small Linux host.
//!
//! This library is `#![no_std]` and uses no `alloc`: the compiler proves that
//! nothing here allocates on the heap. Each kernel file has its own module
//! with a pure `parse(&[u8])` over the caller's bytes; reading happens at the
//! edges ([`root`]) into fixed buffers whose sizes are stated where they are
//! declared.
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod parse;
pub mod root;

// Kernel files, one module each.
pub mod cgroup;
pub mod loadavg;
pub mod maps;
pub mod meminfo;
pub mod mountinfo;
pub mod oom_score_adj;
pub mod pid;
pub mod psi;
pub mod stat;
pub mod swaps;
pub mod vmstat;
pub mod zram;

// Build-side inputs.
pub mod buildcg;
pub mod compilers;
pub mod logtail;
pub mod text;

// The model, the CSV and the summary.
pub mod clock;
pub mod csvread;
pub mod fsstat;
pub mod host;
pub mod jobs;
pub mod jobserver;
pub mod plot;
pub mod row;
pub mod status;
pub mod summary;
pub mod usage;

// The recording.
pub mod actions;
pub mod advise;
pub mod footprint;
pub mod prom;
pub mod record;
pub mod replace;
pub mod sampler;
