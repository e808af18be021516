//! The buffers one tick reads into, and their sizes: the sampler, its
//! glance and its slow figures all read through them.

use core::mem::MaybeUninit;

/// Size of the shared scratch buffer: the log tail (SPEC: at most 64 KiB
/// per tick) and /proc/stat (about 150 bytes per CPU plus an `intr` line
/// of a few KiB: 64 KiB holds ~300 CPUs) both fit.
pub const SCRATCH_LEN: usize = 64 * 1024;

/// Size of the getdents64(2) buffer. Any size works (a directory is read in
/// several calls); 8 KiB lists ~200 /proc entries per syscall.
pub const DIR_SCRATCH_LEN: usize = 8 * 1024;

/// Size of the buffer for one small file (/proc/PID/status is ~1.5 KiB on
/// 6.x with ~60 lines; meminfo ~1.5 KiB; vmstat ~4–5 KiB): 16 KiB.
pub const FILE_LEN: usize = 16 * 1024;

/// The buffers one tick reads into, kept together so the caller decides
/// where they live (they total ~90 KiB: too much for some thread stacks).
pub struct Buffers {
    pub(super) scratch: [u8; SCRATCH_LEN],
    pub(super) file: [u8; FILE_LEN],
    pub(super) dir: [MaybeUninit<u8>; DIR_SCRATCH_LEN],
}

impl Buffers {
    /// Zeroed buffers.
    pub const fn new() -> Buffers {
        Buffers {
            scratch: [0; SCRATCH_LEN],
            file: [0; FILE_LEN],
            dir: [MaybeUninit::uninit(); DIR_SCRATCH_LEN],
        }
    }
}

impl Buffers {
    /// Writes every byte once, so that every page of the buffers is
    /// resident from start-up: a zeroed heap allocation may be mapped
    /// lazily, and a buffer first filled deep into a long run (a /proc
    /// listing that grows past 4 KiB when processes multiply) would raise
    /// the RSS then. With this, the footprint is fixed at start.
    pub fn commit(&mut self) {
        self.scratch.fill(0xA5);
        self.file.fill(0xA5);
        self.dir.fill(MaybeUninit::new(0xA5));
    }
}

impl Buffers {
    /// The small-file buffer ([`FILE_LEN`] bytes), for a start-up read
    /// outside a tick: [`crate::tick::footprint::commit_mappings`] reads
    /// /proc/self/maps into it, so committing needs no buffer of its own.
    pub fn file_buf(&mut self) -> &mut [u8] {
        &mut self.file
    }
}

impl Default for Buffers {
    fn default() -> Self {
        Self::new()
    }
}
