//! The figures of "why it was slow": swap and page-fault rates from
//! /proc/vmstat (the file the OOM count comes from: no other read), the
//! build disk's I/O, CPU heat and the Raspberry Pi's throttle flags.
//!
//! Each rate is the growth of a kernel counter since the previous tick
//! over the monotonic time between the two reads ([`crate::tick::rates`]);
//! the first tick has none (empty fields), and a counter that is absent
//! gives an empty field, never 0.
//!
//! # References
//! proc(5) `/proc/vmstat`; SPEC.md "CSV" (`swap_in_mibps` … `throttled`).

use crate::kernel::vmstat::VmStat;
use crate::tick::rates::{growth, mibps, per_second};
use crate::tick::row::Row;

/// What the rates of the next tick are taken from.
#[derive(Debug, Default)]
pub(super) struct Slow {
    /// /proc/vmstat at the previous tick, and when it was read (monotonic
    /// ns).
    prev_vm: Option<(u64, VmStat)>,
}

impl Slow {
    /// Nothing seen yet.
    pub(super) const fn new() -> Slow {
        Slow { prev_vm: None }
    }

    /// `swap_in_mibps`, `swap_out_mibps`, `majflt_ps` and `refaults_ps`
    /// from `vm`, read at `now_ns`, against the previous tick's; pages are
    /// `page_bytes` long (the running kernel's).
    pub(super) fn thrash(&mut self, row: &mut Row, vm: &VmStat, now_ns: u64, page_bytes: u64) {
        if let Some((then, prev)) = self.prev_vm.replace((now_ns, *vm)) {
            let dt = now_ns.saturating_sub(then);
            let grew = |p: Option<u64>, c: Option<u64>| p.zip(c).map(|(p, c)| growth(p, c));
            let e = &mut row.ext;
            e.swap_in_mibps =
                grew(prev.pswpin, vm.pswpin).and_then(|p| mibps(p.saturating_mul(page_bytes), dt));
            e.swap_out_mibps = grew(prev.pswpout, vm.pswpout)
                .and_then(|p| mibps(p.saturating_mul(page_bytes), dt));
            e.majflt_ps = grew(prev.pgmajfault, vm.pgmajfault).and_then(|n| per_second(n, dt));
            e.refaults_ps = grew(prev.refaults(), vm.refaults()).and_then(|n| per_second(n, dt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(pswpin: u64, pswpout: u64, majflt: Option<u64>, refaults: u64) -> VmStat {
        VmStat {
            pswpin: Some(pswpin),
            pswpout: Some(pswpout),
            pgmajfault: majflt,
            refault_total: Some(refaults),
            ..VmStat::default()
        }
    }

    #[test]
    fn thrash_rates_are_per_second_between_ticks() {
        let mut s = Slow::new();
        let mut row = Row::empty(0);
        s.thrash(&mut row, &vm(100, 100, Some(10), 5), 1_000_000_000, 4096);
        assert_eq!(row.ext.swap_in_mibps, None, "no rate on the first tick");
        // 2 s later: 512 pages in (2 MiB), 1024 out (4 MiB), 300 faults.
        s.thrash(&mut row, &vm(612, 1124, Some(310), 5), 3_000_000_000, 4096);
        let e = &row.ext;
        assert_eq!(e.swap_in_mibps.as_ref().map(|d| d.centi), Some(100));
        assert_eq!(e.swap_out_mibps.as_ref().map(|d| d.centi), Some(200));
        assert_eq!((e.majflt_ps, e.refaults_ps), (Some(150), Some(0)));
        // A 16 KiB-page kernel: the same pages are 4× the bytes.
        let mut s16 = Slow::new();
        s16.thrash(&mut row, &vm(0, 0, None, 0), 0, 16384);
        s16.thrash(&mut row, &vm(64, 0, None, 0), 1_000_000_000, 16384);
        assert_eq!(row.ext.swap_in_mibps.as_ref().map(|d| d.centi), Some(100));
        assert_eq!(row.ext.majflt_ps, None, "absent counter: empty, not 0");
    }

    #[test]
    fn counters_that_go_backwards_clamp_to_zero() {
        let mut s = Slow::new();
        let mut row = Row::empty(0);
        s.thrash(&mut row, &vm(1000, 1000, Some(1000), 1000), 0, 4096);
        s.thrash(&mut row, &vm(1, 1, Some(1), 1), 1_000_000_000, 4096);
        let e = &row.ext;
        assert_eq!(e.swap_in_mibps.as_ref().map(|d| d.centi), Some(0));
        assert_eq!((e.majflt_ps, e.refaults_ps), (Some(0), Some(0)));
    }
}
