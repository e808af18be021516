//! How many jobs of a measured peak fit in memory: one rule for `jobs
//! --from` and ADVICE ([`crate::plan::jobs`]) and for WHY IT WAS SLOW's
//! file-page thrash ([`crate::report::summary::why_slow`]).
//!
//! A measured peak is one compiler's largest resident size; the jobs that
//! fit are those whose peaks together stay within 90 % of the usable
//! memory (after the divisor), so that the next build, whose largest
//! compiler may be a little larger than this one's, still fits:
//! `jobs × peak ≤ 0.9 × usable / divisor`. It lives here, below planning,
//! because the summary (a report) needs it too.
//!
//! # References
//! SPEC.md "Job-count model (`jobs`)": `--from`.

/// The share of usable memory a measured peak may fill, %.
pub const MEASURED_SHARE_PCT: u64 = 90;

/// Jobs of `peak_mb` MiB each that fit in `usable_mb` MiB divided by
/// `divisor`, keeping [`MEASURED_SHARE_PCT`]: may be 0 (not even one
/// fits; the caller chooses the floor). A `divisor` or `peak_mb` of 0
/// counts as 1.
///
/// ```
/// use headroom::report::fit::measured_jobs;
/// // 0.9 × 1010 = 909 MiB: two jobs of 350 MiB, not three.
/// assert_eq!(measured_jobs(1010, 1, 350), 2);
/// assert_eq!(measured_jobs(10000, 1, 1000), 9);
/// assert_eq!(measured_jobs(1000, 1, 950), 0);
/// ```
pub fn measured_jobs(usable_mb: u64, divisor: u64, peak_mb: u64) -> u64 {
    usable_mb.saturating_mul(MEASURED_SHARE_PCT) / 100 / divisor.max(1) / peak_mb.max(1)
}
