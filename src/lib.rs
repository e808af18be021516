//! headroom: what a build did to RAM, swap, zram, /tmp, disk and CPU on a
//! small Linux host.
//!
//! This library is `#![no_std]` and uses no `alloc`: the compiler proves that
//! nothing here allocates on the heap. Each kernel file has its own module
//! with a pure `parse(&[u8])` over the caller's bytes; reading happens at the
//! edges ([`kernel::root`]) into fixed buffers whose sizes are stated where
//! they are declared.
//!
//! The folders are the layers, lowest first; a module imports only from its
//! own layer and those listed above it (`tests/layout.rs` checks this).
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// The layers, lowest first.

// Kernel files, one module each, and reading relative to a root.
pub mod kernel;

// The build being followed: its process tree or cgroup, its compilers, its
// log, what it used.
pub mod followed;

// One tick and its row.
pub mod tick;

// Reading rows back and reporting them.
pub mod report;

// Planning: the host as a budget, -j, advice, status.
pub mod plan;

// Governing a recording while it runs: the loop and the jobserver.
pub mod govern;

// What the unit tests share: a string sink (test builds only).
#[cfg(test)]
pub(crate) mod testkit;

// Per-action usage from a remote action cache (feature `remote`; its log
// readers alone with `remote-logs`): the one layer that uses std, built
// only with a feature (`tests/layout.rs` checks that nothing else names
// std or alloc).
#[cfg(feature = "remote-logs")]
extern crate std;
#[cfg(feature = "remote-logs")]
pub mod remote;
