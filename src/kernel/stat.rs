//! `/proc/stat`: cumulative CPU time per state, and a few task counters.
//!
//! ```text
//! cpu  113613 21 2406 5547556 641 0 144 0 0 0
//! cpu0 26133 18 1309 2725972 370 0 134 0 0 0
//! ...
//! intr 2211934 0 0 ...
//! procs_blocked 0
//! ```
//!
//! CPU times are in clock ticks (`USER_HZ`, sysconf(`_SC_CLK_TCK`), 100 on
//! every mainstream architecture); headroom only ever uses their ratios over
//! an interval, so the tick length cancels out. The number of columns grew
//! with the kernel: `iowait`, `irq`, `softirq` (2.6), `steal` (2.6.11),
//! `guest` (2.6.24), `guest_nice` (2.6.33); OpenVZ still prints 8 (fixture
//! 16). Missing columns read as 0.
//!
//! `cpuN` lines exist only for online CPUs, so their number is not the CPU
//! count and their position is not the CPU id (hotplug, fixture 15): per-CPU
//! data is keyed by the number in the line name.
//!
//! # References
//! proc(5) `/proc/stat`; `fs/proc/stat.c`.

use crate::kernel::parse::{ParseError, ParseErrorKind, fields, lines, parse_u64, space_value};
use crate::kernel::root::{ReadError, Root};

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/stat";

/// Buffer size for [`read`], in bytes.
///
/// Measured: 1.1 KB on a 2-CPU 6.18 host, of which the `intr` line (one
/// count per IRQ number, 875 bytes there) is most. Each `cpuN` line is at
/// most about 120 bytes, and the `intr` line grows with `nr_irqs`, to a few
/// tens of KB on many-core servers. 64 KiB holds 256 CPUs plus a 30 KB `intr`
/// line — far more than any small build host; a larger file is reported as
/// truncated.
pub const BUF_LEN: usize = 64 * 1024;

/// Cumulative time one CPU (or all of them, for the `cpu` line) spent in
/// each state since boot, in clock ticks (`USER_HZ`).
///
/// Columns the kernel did not print are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Normal processes in user mode, ticks (includes `guest`).
    pub user: u64,
    /// Niced processes in user mode, ticks (includes `guest_nice`).
    pub nice: u64,
    /// Kernel mode, ticks.
    pub system: u64,
    /// Idle, ticks.
    pub idle: u64,
    /// Idle while I/O was outstanding, ticks (since Linux 2.5.41; not
    /// reliable per CPU, see proc(5)).
    pub iowait: u64,
    /// Servicing hardware interrupts, ticks (since Linux 2.6.0).
    pub irq: u64,
    /// Servicing softirqs, ticks (since Linux 2.6.0).
    pub softirq: u64,
    /// Stolen by the hypervisor, ticks (since Linux 2.6.11).
    pub steal: u64,
    /// Running a guest, ticks; already counted in `user` (since Linux 2.6.24).
    pub guest: u64,
    /// Running a niced guest, ticks; already counted in `nice` (since Linux
    /// 2.6.33).
    pub guest_nice: u64,
    /// How many numeric columns the line had (4 to 10 on known kernels;
    /// columns past the 10th are counted, saturating at 255, but ignored).
    pub columns: u8,
}

impl CpuTimes {
    /// All time, ticks: the sum of `user` through `steal` (the first 8
    /// columns). `guest` and `guest_nice` are not added: they are already
    /// inside `user` and `nice`. Saturates instead of overflowing.
    pub fn total(&self) -> u64 {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
        .iter()
        .fold(0u64, |a, &v| a.saturating_add(v))
    }

    /// Busy time, ticks: [`CpuTimes::total`] − `idle` − `iowait`.
    pub fn busy(&self) -> u64 {
        self.total()
            .saturating_sub(self.idle)
            .saturating_sub(self.iowait)
    }
}

/// Parses the numbers after a `cpu`/`cpuN` name.
fn cpu_times<'a>(nums: impl Iterator<Item = &'a [u8]>) -> Result<CpuTimes, ParseErrorKind> {
    let mut v = [0u64; 10];
    let mut columns: u8 = 0;
    for (i, f) in nums.enumerate() {
        let n = parse_u64(f).ok_or(ParseErrorKind::BadNumber)?;
        if let Some(slot) = v.get_mut(i) {
            *slot = n;
        }
        columns = columns.saturating_add(1);
    }
    if columns < 4 {
        return Err(ParseErrorKind::Malformed);
    }
    let [
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
        guest,
        guest_nice,
    ] = v;
    Ok(CpuTimes {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
        guest,
        guest_nice,
        columns,
    })
}

/// Parses the aggregate `cpu ` line (the sum over online CPUs).
///
/// # Errors
/// - `Missing("cpu")` when no line's first field is exactly `cpu` (also for
///   empty input);
/// - `Malformed` at that line when it has fewer than 4 numbers;
/// - `BadNumber` at that line for a field that is not a decimal `u64`.
pub fn aggregate(b: &[u8]) -> Result<CpuTimes, ParseError> {
    for (i, line) in lines(b).enumerate() {
        let mut f = fields(line);
        if f.next() == Some(b"cpu") {
            return cpu_times(f).map_err(|k| ParseError::at(k, i + 1));
        }
    }
    Err(ParseError::missing("cpu"))
}

/// The per-CPU lines, as `(id, times)` where `id` is the number in the name
/// (`cpu3` → 3), in file order.
///
/// Only lines whose first field is `cpu` followed by decimal digits are
/// taken (never `intr`, `ctxt`, `softirq`, `swap`, nor the aggregate `cpu`);
/// blank lines are skipped. A `cpuN` line that does not parse (fewer than 4
/// numbers, a non-number, an id above `u32::MAX`) is skipped too, so ids may
/// have holes: offline CPUs have no line at all.
pub fn per_cpu(b: &[u8]) -> impl Iterator<Item = (u32, CpuTimes)> + '_ {
    lines(b).filter_map(|line| {
        let mut f = fields(line);
        let digits = f.next()?.strip_prefix(b"cpu")?;
        let id = u32::try_from(parse_u64(digits)?).ok()?;
        Some((id, cpu_times(f).ok()?))
    })
}

/// `procs_blocked`: tasks currently blocked waiting for I/O (since Linux
/// 2.5.45); `None` when the line is absent or its value is not a decimal.
pub fn procs_blocked(b: &[u8]) -> Option<u64> {
    parse_u64(space_value(b, b"procs_blocked")?)
}

/// CPU time between two samples, ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuDelta {
    /// Busy ticks in the interval (all − idle − iowait).
    pub busy: u64,
    /// All ticks in the interval (user through steal).
    pub total: u64,
    /// Ticks idle with I/O outstanding in the interval.
    pub iowait: u64,
}

/// The interval from `prev` to `cur`.
///
/// Each field's delta is taken separately and saturates at 0 when the counter
/// went backwards (a CPU went offline and its ticks left the aggregate, a
/// counter reset), so `busy` and `total` are never negative and
/// `busy ≤ total`.
pub fn delta(prev: &CpuTimes, cur: &CpuTimes) -> CpuDelta {
    let d = CpuTimes {
        user: cur.user.saturating_sub(prev.user),
        nice: cur.nice.saturating_sub(prev.nice),
        system: cur.system.saturating_sub(prev.system),
        idle: cur.idle.saturating_sub(prev.idle),
        iowait: cur.iowait.saturating_sub(prev.iowait),
        irq: cur.irq.saturating_sub(prev.irq),
        softirq: cur.softirq.saturating_sub(prev.softirq),
        steal: cur.steal.saturating_sub(prev.steal),
        guest: 0,
        guest_nice: 0,
        columns: cur.columns,
    };
    CpuDelta {
        busy: d.busy(),
        total: d.total(),
        iowait: d.iowait,
    }
}

impl CpuDelta {
    /// Busy share of the interval as an integer percent, rounded down; 0
    /// when no time passed (`total == 0`: first tick, counters frozen).
    pub fn busy_pct(&self) -> u64 {
        pct(self.busy, self.total)
    }

    /// iowait share of the interval as an integer percent, rounded down; 0
    /// when `total == 0`.
    pub fn iowait_pct(&self) -> u64 {
        pct(self.iowait, self.total)
    }

    /// Field-wise saturating sum, to add up per-CPU intervals (e.g. over the
    /// CPUs present in both samples).
    pub fn saturating_add(self, other: CpuDelta) -> CpuDelta {
        CpuDelta {
            busy: self.busy.saturating_add(other.busy),
            total: self.total.saturating_add(other.total),
            iowait: self.iowait.saturating_add(other.iowait),
        }
    }
}

/// `100 × part / whole` rounded down, 0 for an empty whole, at most 100.
fn pct(part: u64, whole: u64) -> u64 {
    if whole == 0 {
        return 0;
    }
    let p = u128::from(part.min(whole)) * 100 / u128::from(whole);
    u64::try_from(p).unwrap_or(100)
}

/// Reads [`PATH`] under `root` into `buf` (give it [`BUF_LEN`] bytes) and
/// returns the bytes read, for [`aggregate`], [`per_cpu`] and
/// [`procs_blocked`].
///
/// # Errors
/// See [`ReadError`].
pub fn read<'b>(root: &Root, buf: &'b mut [u8]) -> Result<&'b [u8], ReadError> {
    root.read(PATH, buf)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    macro_rules! fixture {
        ($p:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $p))
        };
    }

    /// Per-CPU interval summed over the CPUs present in both samples.
    fn matched(prev: &[u8], cur: &[u8]) -> CpuDelta {
        per_cpu(cur)
            .filter_map(|(id, c)| {
                let (_, p) = per_cpu(prev).find(|(pid, _)| *pid == id)?;
                Some(delta(&p, &c))
            })
            .fold(CpuDelta::default(), CpuDelta::saturating_add)
    }

    /// Tenths of a percent, rounded half up, as CASE.md prints them.
    fn tenths(part: u64, whole: u64) -> u64 {
        (part * 1000 + whole / 2) / whole
    }

    #[test]
    fn fixture_15_a_4core_cpu2_goes_offline() {
        let t0 = fixture!("15-proc-stat-cpu-hotplug/a-4core-cpu2-goes-offline/t0/proc/stat");
        let t1 = fixture!("15-proc-stat-cpu-hotplug/a-4core-cpu2-goes-offline/t1/proc/stat");
        let ids0: Vec<u32> = per_cpu(t0).map(|(id, _)| id).collect();
        let ids1: Vec<u32> = per_cpu(t1).map(|(id, _)| id).collect();
        assert_eq!(ids0, [0, 1, 2, 3]);
        assert_eq!(ids1, [0, 1, 3]);
        // cpu3's numbers stay cpu3's, not "cpu2".
        let (_, cpu3) = per_cpu(t1).find(|(id, _)| *id == 3).unwrap();
        assert_eq!((cpu3.user, cpu3.system, cpu3.idle), (26460, 87, 119161));

        let d = matched(t0, t1);
        assert_eq!((d.busy, d.total), (11, 22890));
        assert_eq!(d.iowait, 4);
        assert_eq!(tenths(d.busy * 10, d.total), 5); // 0.05 %, in hundredths
        assert_eq!(d.busy_pct(), 0);
        let per: Vec<(u32, u64, u64)> = per_cpu(t1)
            .filter_map(|(id, c)| {
                let (_, p) = per_cpu(t0).find(|(i, _)| *i == id)?;
                let d = delta(&p, &c);
                Some((id, d.busy, d.total))
            })
            .collect();
        assert_eq!(per, [(0, 7, 7629), (1, 3, 7630), (3, 1, 7631)]);
        // Hundredths of a percent: 0.09, 0.04, 0.01.
        let hundredths: Vec<u64> = per.iter().map(|&(_, b, t)| tenths(b * 10, t)).collect();
        assert_eq!(hundredths, [9, 4, 1]);

        // The trap: the aggregate line jumps; no panic, nothing negative.
        let a = delta(&aggregate(t0).unwrap(), &aggregate(t1).unwrap());
        assert_eq!(a.busy, 12);
        assert_eq!(a.total, 2660385);
        assert_eq!(a.iowait, 45);
        assert_eq!(a.busy_pct(), 0);
        // Backwards (t1 → t0): every field saturates at 0.
        let back = delta(&aggregate(t1).unwrap(), &aggregate(t0).unwrap());
        assert_eq!(back, CpuDelta::default());
        assert_eq!(back.busy_pct(), 0);
        assert_eq!(procs_blocked(t1), Some(0));
    }

    #[test]
    fn fixture_15_b_pi_zero_single_core() {
        let t0 = fixture!("15-proc-stat-cpu-hotplug/b-pi-zero-single-core/t0/proc/stat");
        let t1 = fixture!("15-proc-stat-cpu-hotplug/b-pi-zero-single-core/t1/proc/stat");
        assert_eq!(per_cpu(t1).count(), 1);
        assert_eq!(per_cpu(t1).next().map(|(id, _)| id), Some(0));
        let d = delta(&aggregate(t0).unwrap(), &aggregate(t1).unwrap());
        assert_eq!((d.busy, d.total), (97, 190));
        assert_eq!(tenths(d.busy, d.total), 511);
        assert_eq!(d.busy_pct(), 51);
        assert_eq!(matched(t0, t1), d);
    }

    #[test]
    fn fixture_16_proc_stat_openvz_short_lines() {
        let root0 = Root::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/16-proc-stat-openvz-short-lines/t0"
        ))
        .unwrap();
        let mut buf0 = std::vec![0u8; BUF_LEN];
        let t0 = read(&root0, &mut buf0).unwrap();
        let t1 = fixture!("16-proc-stat-openvz-short-lines/t1/proc/stat");
        let a0 = aggregate(t0).unwrap();
        assert_eq!(a0.columns, 8);
        assert_eq!((a0.guest, a0.guest_nice), (0, 0));
        assert_eq!(per_cpu(t1).count(), 6);
        assert!(per_cpu(t1).all(|(_, c)| c.columns == 8));
        let d = delta(&a0, &aggregate(t1).unwrap());
        assert_eq!((d.busy, d.total, d.iowait), (102, 6000, 5));
        assert_eq!(tenths(d.busy, d.total), 17);
        assert_eq!(tenths(d.iowait, d.total), 1);
        assert_eq!((d.busy_pct(), d.iowait_pct()), (1, 0));
        let per: Vec<(u32, u64)> = per_cpu(t1)
            .filter_map(|(id, c)| {
                let (_, p) = per_cpu(t0).find(|(i, _)| *i == id)?;
                let d = delta(&p, &c);
                assert_eq!(d.total, 1000);
                Some((id, tenths(d.busy, d.total)))
            })
            .collect();
        assert_eq!(per, [(0, 60), (1, 15), (2, 10), (3, 8), (4, 4), (5, 5)]);
        let (_, c0) = per_cpu(t0).next().unwrap();
        let (_, c1) = per_cpu(t1).next().unwrap();
        assert_eq!(tenths(delta(&c0, &c1).iowait, 1000), 5);
        assert_eq!(procs_blocked(t1), Some(0));
    }

    #[test]
    fn fixture_18_loadavg_high_while_cpu_idle() {
        let t0 = fixture!("18-loadavg-high-while-cpu-idle/t0/proc/stat");
        let t1 = fixture!("18-loadavg-high-while-cpu-idle/t1/proc/stat");
        assert_eq!(per_cpu(t1).count(), 1);
        let d = delta(&aggregate(t0).unwrap(), &aggregate(t1).unwrap());
        assert_eq!((d.busy, d.total, d.iowait), (13, 1000, 0));
        assert_eq!(tenths(d.busy, d.total), 13);
        assert_eq!(d.busy_pct(), 1);
        assert_eq!(procs_blocked(t1), Some(8));
    }

    #[test]
    fn fixture_06_cgroupv2_container_cpu_max_unlimited() {
        let b = fixture!("06-cgroupv2-container-cpu-max-unlimited/proc/stat");
        let ids: Vec<u32> = per_cpu(b).map(|(id, _)| id).collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        let a = aggregate(b).unwrap();
        assert_eq!((a.user, a.idle, a.columns), (1822311, 38812233, 10));
        assert_eq!(procs_blocked(b), Some(0));
    }

    #[test]
    fn totals_exclude_guest() {
        let a = aggregate(b"cpu  10 20 30 40 50 60 70 80 5 15\n").unwrap();
        assert_eq!(a.columns, 10);
        assert_eq!((a.guest, a.guest_nice), (5, 15));
        assert_eq!(a.total(), 360);
        assert_eq!(a.busy(), 270);
        // 7 columns (2.6.0–2.6.10): steal and guests 0.
        let a = aggregate(b"cpu 1 2 3 4 5 6 7").unwrap();
        assert_eq!((a.columns, a.steal, a.total()), (7, 0, 28));
        // 4 columns (2.4).
        assert_eq!(aggregate(b"cpu 1 2 3 4").unwrap().total(), 10);
        // Future extra columns: counted, ignored.
        let a = aggregate(b"cpu 1 2 3 4 5 6 7 8 9 10 11 12").unwrap();
        assert_eq!((a.columns, a.guest_nice, a.total()), (12, 10, 36));
    }

    #[test]
    fn lines_that_are_not_cpus() {
        let b = b"intr 5 1 2 3 4\nctxt 1 2 3 4\nsoftirq 1 2 3 4 5\nswap 0 0\n\n\
                  cpux 1 2 3 4\ncpu-1 1 2 3 4\ncpu3a 1 2 3 4\ncpu 1 2 3 4\n\
                  cpu7 1 2 3 4\ncpu9 1 2 3\ncpu10 1 x 3 4\ncpu4294967296 1 2 3 4\n\
                  cpu4294967295 1 2 3 4\n";
        let ids: Vec<u32> = per_cpu(b).map(|(id, _)| id).collect();
        assert_eq!(ids, [7, u32::MAX]);
        assert_eq!(aggregate(b).unwrap().total(), 10);
        assert_eq!(procs_blocked(b), None);
        assert_eq!(procs_blocked(b"procs_blockedx 3\nprocs_blocked 4"), Some(4));
        assert_eq!(procs_blocked(b"procs_blocked x"), None);
    }

    #[test]
    fn empty_garbage_and_overflow() {
        assert_eq!(aggregate(b""), Err(ParseError::missing("cpu")));
        assert_eq!(per_cpu(b"").count(), 0);
        assert_eq!(
            aggregate(b"cpu0 1 2 3 4\n"),
            Err(ParseError::missing("cpu"))
        );
        assert_eq!(aggregate(b"\xff\xfe\n\0"), Err(ParseError::missing("cpu")));
        assert_eq!(
            aggregate(b"\ncpu 1 2 3\n"),
            Err(ParseError::at(ParseErrorKind::Malformed, 2))
        );
        assert_eq!(
            aggregate(b"cpu 1 2 3 -4\n"),
            Err(ParseError::at(ParseErrorKind::BadNumber, 1))
        );
        assert_eq!(
            aggregate(b"cpu 1 2 3 18446744073709551616\n"),
            Err(ParseError::at(ParseErrorKind::BadNumber, 1))
        );
        let m = u64::MAX;
        let big = std::format!("cpu {m} {m} {m} {m} {m} {m} {m} {m}\n");
        let a = aggregate(big.as_bytes()).unwrap();
        assert_eq!(a.total(), m);
        assert_eq!(a.busy(), 0);
        let d = delta(&CpuTimes::default(), &a);
        assert_eq!(d.total, m);
        assert!(d.busy <= d.total);
        assert_eq!(d.busy_pct(), 0);
        let huge = CpuDelta {
            busy: m,
            total: m,
            iowait: m,
        };
        assert_eq!((huge.busy_pct(), huge.iowait_pct()), (100, 100));
        assert_eq!(huge.saturating_add(huge), huge);
        assert_eq!(CpuDelta::default().busy_pct(), 0);
    }
}
