//! Property test of the jobserver governor: whatever memory does and
//! whatever clients take from the FIFO and give back, it hands out between
//! 1 and the cap of jobs, never reads back more tokens than the FIFO holds,
//! and its peak per job only rises with the compilers it sees
//! (`govern::jobserver::handout`, `govern::jobserver::estimate`).
//!
//! The proptest settings are in `properties/kit.rs`.

use proptest::prelude::*;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ------------------------------------------------------------ jobserver

/// One tick as the FIFO sees it: clients took `grab` of the bytes in it,
/// gave back `give` of those they held, and memory stood at `usable`.
#[derive(Clone, Debug)]
struct JobTick {
    usable: Option<u64>,
    rss: u64,
    peak: Option<u64>,
    grab: u32,
    give: u32,
}

fn job_tick() -> impl Strategy<Value = JobTick> {
    (
        prop_oneof![
            Just(None),
            (0u64..20_000).prop_map(Some),
            any::<u64>().prop_map(Some)
        ],
        prop_oneof![0u64..5_000, any::<u64>()],
        proptest::option::of(0u64..8_000),
        0u32..6,
        0u32..6,
    )
        .prop_map(|(usable, rss, peak, grab, give)| JobTick {
            usable,
            rss,
            peak,
            grab,
            give,
        })
}

proptest! {
    #![proptest_config(config(2048))]

    /// Whatever memory does and whatever clients take and give back, the
    /// governor allows 1..=cap jobs, never reads back more than sits in
    /// the FIFO, never puts more than cap − 1 tokens into circulation, its
    /// peak per job is never below the largest compiler seen plus the
    /// margin (a stated start stays until a compiler is seen), and the FIFO
    /// never holds more tokens than were given out.
    #[test]
    fn the_governor_keeps_its_bounds(
        cap in 1u32..16,
        start_peak in 1u64..5_000,
        ticks in proptest::collection::vec(job_tick(), 1..60),
    ) {
        use headroom::govern::jobserver::estimate::{Seen, with_margin};
        use headroom::govern::jobserver::handout::{CapFrom, Handout as Governor, Inputs};
        use headroom::report::jobserver_block::Source;
        let mut g = Governor::new(cap, CapFrom::Cores, start_peak, Source::PeakMb);
        // The FIFO and the clients, simulated.
        let (mut in_pipe, mut held, mut issued) = (0u32, 0u32, 0u32);
        let mut seen_max = 0u64;
        for (i, t) in ticks.iter().enumerate() {
            let grab = t.grab.min(in_pipe);
            in_pipe -= grab;
            held += grab;
            let give = t.give.min(held);
            held -= give;
            in_pipe += give;
            g.measure(&Seen {
                usable_mb: t.usable,
                held_mb: t.rss,
                compiler_peak_mb: t.peak,
                job_mb: None,
            });
            seen_max = seen_max.max(t.peak.unwrap_or(0));
            let d = g.decide(&Inputs {
                usable_mb: t.usable,
                compiler_rss_mb: t.rss,
                in_pipe,
                now_ms: i as u64 * 250,
                pool_allowed: None,
                seen: None,
                weight: None,
            });
            prop_assert!(d.allowed >= 1 && d.allowed <= cap);
            prop_assert!(d.take <= in_pipe);
            prop_assert!(d.put == 0 || d.take == 0);
            prop_assert_eq!(d.running, held + 1);
            in_pipe = in_pipe + d.put - d.take;
            issued = issued + d.put - d.take;
            g.settled(d.put, d.take);
            prop_assert!(issued < cap || d.put == 0);
            prop_assert_eq!(issued, in_pipe + held);
            prop_assert!(g.peak_mb() >= with_margin(seen_max).max(1));
            if seen_max == 0 {
                prop_assert_eq!(g.peak_mb(), start_peak);
            }
        }
        let r = g.report().unwrap();
        prop_assert!(r.min >= 1 && r.min <= r.max);
        prop_assert!(r.throttled_ms <= r.span_ms);
    }
}
