//! The summary's JOBSERVER block: what `run --jobserver`'s governor did
//! (its cap, the jobs at once, the time memory held it back), as
//! `Governor::report` in `govern::jobserver` states it.
//!
//! A report type of its own, below the governor, so that the summary can
//! carry it without importing the layer that governs.

/// The jobserver block of the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// Most jobs at once it would allow (cores or `--max-jobs`).
    pub cap: u32,
    /// Jobs running at once: min, average × 100, max over the ticks.
    pub min: u32,
    /// See `min`.
    pub avg_centi: u64,
    /// See `min`.
    pub max: u32,
    /// Time during which memory, not the cap, set the slots, ms.
    pub throttled_ms: u64,
    /// From the first tick to the last, ms.
    pub span_ms: u64,
    /// The peak per job it ended with, MiB.
    pub peak_mb: u64,
    /// Where the starting peak came from.
    pub peak_from: &'static str,
}

impl Report {
    /// Writes the block (after the RUN block), e.g.
    /// `JOBSERVER: up to 8 jobs at once; peak per job 160 MiB (--peak-mb)`.
    ///
    /// # Errors
    /// Those of `w`.
    pub fn render<W: ufmt::uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        ufmt::uwrite!(
            w,
            "JOBSERVER: up to {} job(s) at once; peak per job {} MiB ({})\n",
            self.cap,
            self.peak_mb,
            self.peak_from
        )?;
        ufmt::uwrite!(
            w,
            "  slots in use (jobs at once): min {}  avg {}.{}{}  max {}\n",
            self.min,
            self.avg_centi / 100,
            self.avg_centi % 100 / 10,
            self.avg_centi % 10,
            self.max
        )?;
        ufmt::uwrite!(
            w,
            "  throttled by memory: {}.{} s of {}.{} s\n",
            self.throttled_ms / 1000,
            self.throttled_ms % 1000 / 100,
            self.span_ms / 1000,
            self.span_ms % 1000 / 100
        )
    }
}
