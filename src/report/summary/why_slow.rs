//! The summary's WHY IT WAS SLOW section: thrash (of swap or of file
//! pages), a busy or stalled build disk, throttling, under-voltage and heat, each with
//! the stage and context of its worst minute and one line of advice.
//!
//! [`Slow`] folds rows as [`super::Summary`] does, once each, in fixed
//! memory whatever the length of the run (the last 60 seconds' amounts
//! and the last 60 rows' stage and context, about 33 KiB).
//!
//! # Times
//! A row covers its `elapsed_s` minus the previous row's (the first row
//! covers nothing, nor does a row whose `elapsed_s` went back). A
//! finding's time is the sum of what its rows cover, never rows ×
//! interval: `run`'s interval widens as the build goes on.
//!
//! # The worst minute
//! A row's rate holds for every second it covers, so each covered second
//! gets an amount per finding: swap-in MiB (the row's `swap_in_mibps`),
//! major faults (`majflt_ps`), refaults (`refaults_ps`), disk busy
//! hundredths of a second
//! (`disk_util_pct`), and 1 for a second throttled (or under-voltage, or
//! with the build disk stalled: `disk_stalled`). A
//! finding's worst minute is the 60 consecutive covered seconds (all of
//! them in a shorter run) with the largest sum of its amounts, the
//! earliest of equal ones; it is named by the row that gives the most of
//! that sum (the earliest of equal ones), its stage and context, and timed
//! by its first and last second as elapsed seconds, with the UTC time of
//! its end. The thrash minute is the one with the most swap-in MiB for
//! swap thrash, the most refaults for file-page thrash (falling back on
//! major faults, then swap-in, when its amount was 0 throughout). Heat
//! has no sum:
//! its row is the one with the highest `cpu_temp_c` (the first of equal
//! ones) among the readings believed: a jump of 20 °C or more from the
//! previous reading that the next one does not confirm is a bogus read
//! ([`crate::kernel::thermal::is_bogus_jump`]), never the peak nor a
//! reason for heat advice.
//!
//! # Swap thrash and file-page thrash
//! A thrashing row ([`THRASH_SWAP_IN_CENTI`], [`THRASH_MAJFLT_PS`],
//! [`THRASH_REFAULTS_PS`]) is swap thrash when it swapped in at least
//! 1 MiB/s: anonymous memory read back from swap, which zram makes cheaper
//! than an SD card. Otherwise (faults or refaults with swap-in below that,
//! or `swap_total_mb` 0: no swap at all) it is file-page thrash: the compilers' binaries, libraries and
//! headers evicted and read again because the jobs' memory left no room
//! for them. No swap device helps that; fewer jobs do. Refaults and major
//! faults alone are no proof of that: a program rewriting its own file
//! (`dd conv=notrunc`) on an idle host refaults too. So a row counts as
//! file-page thrash only when memory was short on it ([`memory_short`]):
//! the binding available memory (the cgroup's when one binds, else
//! MemAvailable) under [`SHORT_AVAIL_PCT`] % of its limit (the cgroup's
//! limit, else MemTotal), or reclaim pressure (`psi_mem_some_avg10` at
//! or above [`PRESSURE_PSI_CENTI`], or swap-out at or above 1 MiB/s) while
//! under [`PRESSURE_AVAIL_PCT`] % was available. The run's kind is
//! the one with more thrashing time (swap on a tie). The build disk's
//! busy seconds on file-thrashing rows that read at least as much as they
//! wrote are the thrash's own reads, not the disk's fault.
//!
//! # The `-j` that fits ([`Fit`])
//! From the largest compiler peak the summary sizes from (the caller's
//! [`super::Summary::sizing_peak`]: the build's, else the host's) and the
//! memory the build had: the largest over the run of each row's usable
//! memory, `mem_avail_mb` or `cg_mem_avail_mb` when smaller. The build's
//! jobs only ever take that memory away, so the row where it was largest
//! is the one with the fewest of their pages resident — the start of a
//! `run`, before its first job, or the quietest moment of a `record` —
//! and the figure is what the jobs had to share. (The rows do not carry
//! the jobs' summed resident size to add back, and a sum of resident
//! sizes counts shared pages more than once.) The jobs are
//! [`measured_jobs`]: `jobs × peak ≤ 0.9 × usable`, as `jobs --from`
//! sizes. A peak measured under thrash is low (the kernel kept evicting
//! its pages), so when that many jobs or more were the ones thrashing
//! (the most compilers on a file-thrashing row), one fewer is advised.
//!
//! # References
//! SPEC.md "CSV" (the columns) and "Summary"; the Raspberry Pi firmware's
//! `get_throttled` bits ([`Flags`]).

use ufmt::{uWrite, uwrite};

use crate::followed::figures::{duration, stage_str};
use crate::followed::text::{Context, Stage};
use crate::kernel::blockdev::Device;
use crate::kernel::thermal::JumpGuard;
use crate::kernel::throttled::{ALARM_SOURCE, Flags, WORD_SOURCE};
use crate::report::fit::measured_jobs;
use crate::tick::clock::Iso;
use crate::tick::row::{Decimal, Row, Tenths};

use super::binding::{Binding, BoundBy};
use super::slow_advice::device_line;
pub use super::slow_advice::{
    ADVICE_DISK, ADVICE_DISK_ANY, ADVICE_DISK_THRASH, ADVICE_FEWER_JOBS, ADVICE_FILE_THRASH,
    ADVICE_HEAT, ADVICE_POWER, ADVICE_STALL, ADVICE_ZRAM, DEVICE_LINE, device_in, disk_advice,
    stall_advice,
};

/// The flags' names, in bit order.
const THROTTLE_NAMES: [&str; 4] = Flags::NAMES;

/// Seconds in a worst window, and rows kept to name one (a row that
/// covers a second or more: at most 60 in 60 s).
pub const WINDOW_S: usize = 60;

/// Thrash: swap-in at or above 1 MiB/s (in hundredths) …
pub const THRASH_SWAP_IN_CENTI: u64 = 100;
/// … or at least 100 major faults per second …
pub const THRASH_MAJFLT_PS: u64 = 100;
/// … or at least 1000 refaults per second (4 MiB/s of 4 KiB pages read
/// back soon after their eviction), for two rows or more. File-page
/// thrash can stay under [`THRASH_MAJFLT_PS`]: one major fault reads the
/// pages around it too (four cc1 in a 200 MiB cgroup: 92 to 231 major
/// faults/s beside 150000 to 250000 refaults/s).
pub const THRASH_REFAULTS_PS: u64 = 1000;
/// Consecutive thrashing rows before their time counts: one row can be a
/// build step reading its binary in once.
pub const THRASH_ROWS: u32 = 2;

/// Seconds of consecutive stalled rows (`disk_stalled` 1) before the
/// stall is a finding: one request in service across a 1-second row (a
/// final flush, a large direct write on a VM's disk) is no hang; a disk
/// that completes nothing for 5 s is (SCSI's command timeout is 30 s,
/// the hung-task warning 120 s). A single row of 5 s or more counts.
pub const STALL_MIN_S: u64 = 5;
/// Memory is short when the binding available memory is under this % of
/// its limit: earlyoom's default `-m 10` (it acts at MemAvailable under
/// 10 % of MemTotal). Above it the kernel still has cache to reclaim
/// that is not the jobs' working set.
pub const SHORT_AVAIL_PCT: u64 = 10;
/// Reclaim pressure: PSI memory `some avg10` at or above 10.00 (some task
/// waited for memory a tenth of the last 10 s; Android's lmkd calls 7 %
/// partial stall pressure; an idle host reads 0.00) …
pub const PRESSURE_PSI_CENTI: u64 = 1000;
/// … or swap-out at or above 1 MiB/s ([`THRASH_SWAP_IN_CENTI`]),
/// counts only while the binding available memory is under this % of its
/// limit: both figures are host-wide, and another cgroup reclaiming under
/// its own limit raises them while the build has a quarter of its memory
/// or more to spare.
pub const PRESSURE_AVAIL_PCT: u64 = 25;
/// The build disk is busy at or above this `disk_util_pct`.
pub const DISK_BUSY_PCT: u64 = 90;
/// `throttled` bits of throttling: freq-capped, throttled, soft-temp-limit.
pub const THROTTLE_BITS: u8 = Flags::FREQ_CAPPED
    .union(Flags::THROTTLED)
    .union(Flags::SOFT_TEMP_LIMIT)
    .0;
/// The `throttled` bit of under-voltage.
pub const UNDER_VOLTAGE_BIT: u8 = Flags::UNDER_VOLTAGE.0;
/// A peak temperature worth a line without any other finding: 80.0 °C,
/// where a Pi 4's firmware starts to throttle.
pub const HOT_TENTHS: i32 = 800;

/// What a thrashing row thrashed ([module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrashKind {
    /// Swap-in at or above [`THRASH_SWAP_IN_CENTI`], with swap.
    Swap,
    /// Major faults or refaults at or above [`THRASH_MAJFLT_PS`] or
    /// [`THRASH_REFAULTS_PS`] with less swap-in, or no swap at all:
    /// evicted file pages read again.
    File,
}

impl ThrashKind {
    /// The kind of `row`'s thrash; `None` when it does not thrash.
    pub fn of(row: &Row) -> Option<ThrashKind> {
        let e = &row.ext;
        let swap_in = e.swap_in_mibps.as_ref().map_or(0, |d| d.centi);
        let swapping = swap_in >= THRASH_SWAP_IN_CENTI;
        let faulting = e.majflt_ps.unwrap_or(0) >= THRASH_MAJFLT_PS
            || e.refaults_ps.unwrap_or(0) >= THRASH_REFAULTS_PS;
        if swapping && e.swap_total_mb != Some(0) {
            Some(ThrashKind::Swap)
        } else if (swapping || faulting) && memory_short(row) {
            Some(ThrashKind::File)
        } else {
            None
        }
    }

    /// `swap` or `file` (JSON's `thrash_kind`).
    pub fn word(self) -> &'static str {
        match self {
            ThrashKind::Swap => "swap",
            ThrashKind::File => "file",
        }
    }
}

/// Whether memory was short on `row` ([module documentation](self)): the
/// binding available memory under [`SHORT_AVAIL_PCT`] % of its limit, or
/// reclaim pressure (PSI `some avg10` ≥ [`PRESSURE_PSI_CENTI`], swap-out
/// ≥ 1 MiB/s) with it under [`PRESSURE_AVAIL_PCT`] %. The limit is the
/// binding cgroup's (`cg_mem_limit_mb`), else MemTotal (`mem_used_mb` +
/// `mem_avail_mb`; also for a CSV older than `cg_mem_limit_mb`, which
/// can only make a bound cgroup look shorter). Without /proc/meminfo's
/// figures nor both cgroup columns, pressure alone decides.
pub fn memory_short(row: &Row) -> bool {
    let e = &row.ext;
    let pressure = e
        .psi_mem_some_avg10
        .as_ref()
        .is_some_and(|d| d.centi >= PRESSURE_PSI_CENTI)
        || e.swap_out_mibps
            .as_ref()
            .is_some_and(|d| d.centi >= THRASH_SWAP_IN_CENTI);
    let host_total = row.mem_used_mb.saturating_add(row.mem_avail_mb);
    let (avail, total) = if row.mem_known {
        let b = Binding::of(row);
        match b.by {
            BoundBy::Cgroup {
                limit_mb: Some(limit),
            } => (b.avail_mb, limit),
            _ => (b.avail_mb, host_total),
        }
    } else if let (Some(avail), Some(limit)) = (e.cg_mem_avail_mb, e.cg_mem_limit_mb) {
        (avail, limit)
    } else {
        return pressure;
    };
    let under = |pct: u64| avail.saturating_mul(100) < total.saturating_mul(pct);
    under(SHORT_AVAIL_PCT) || (pressure && under(PRESSURE_AVAIL_PCT))
}

/// What one thrashing row gives the findings, held while its run of
/// thrashing rows is one row long.
#[derive(Clone, Copy, Debug, Default)]
struct ThrashRow {
    /// Seconds it covers.
    s: u64,
    file: bool,
    /// Seconds the build disk was busy reading (reads at least writes).
    busy_reads_s: u64,
    compilers: u64,
    swap_in_centi: u64,
}

impl ThrashRow {
    fn new(row: &Row, kind: ThrashKind, dt: u64) -> ThrashRow {
        let e = &row.ext;
        let centi = |d: &Option<Decimal>| d.as_ref().map_or(0, |d| d.centi);
        let (rd, wr) = (centi(&e.disk_read_mibps), centi(&e.disk_write_mibps));
        let reading = e.disk_util_pct.unwrap_or(0) >= DISK_BUSY_PCT && rd > 0 && rd >= wr;
        ThrashRow {
            s: dt,
            file: kind == ThrashKind::File,
            busy_reads_s: if reading { dt } else { 0 },
            compilers: row.compilers,
            swap_in_centi: centi(&e.swap_in_mibps),
        }
    }
}

/// The `-j` that fits after file-page thrash ([module
/// documentation](self)), with its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fit {
    /// Jobs to advise: `memory_jobs`, or one fewer than `thrash_compilers`
    /// when that is less; 0 when not even one job fits.
    pub jobs: u64,
    /// Jobs the peak and the usable memory allow ([`measured_jobs`]).
    pub memory_jobs: u64,
    /// The peak per job, MiB.
    pub peak_mb: u64,
    /// The memory the build had, MiB.
    pub usable_mb: u64,
    /// The most compilers running on a file-thrashing row.
    pub thrash_compilers: u64,
}

/// One of the findings with a worst minute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finding {
    /// Swap-in MiB (hundredths): the minute of swap thrash.
    SwapIn,
    /// Major faults: the thrash minute when there were no refaults and
    /// nothing was swapped in.
    Majflt,
    /// Refaults: the minute of file-page thrash.
    Refaults,
    /// Disk busy, hundredths of a second.
    DiskBusy,
    /// Seconds throttled ([`THROTTLE_BITS`]).
    Throttled,
    /// Seconds under-voltage ([`UNDER_VOLTAGE_BIT`]).
    UnderVoltage,
    /// Seconds the build disk stalled (`disk_stalled`: requests in flight,
    /// none completed).
    DiskStalled,
}

const FINDINGS: [Finding; 7] = [
    Finding::SwapIn,
    Finding::Majflt,
    Finding::Refaults,
    Finding::DiskBusy,
    Finding::Throttled,
    Finding::UnderVoltage,
    Finding::DiskStalled,
];

impl Finding {
    /// The amount a row gives each second it covers, at most
    /// [`AMOUNT_MAX`] (a hand-edited CSV may hold any 20-digit number);
    /// `disk_util_pct` at most 100.
    fn amount(self, row: &Row) -> u64 {
        let e = &row.ext;
        let flag = |bits: u8| u64::from(e.throttled.is_some_and(|f| f & bits != 0));
        let amount = match self {
            Finding::SwapIn => e.swap_in_mibps.as_ref().map_or(0, |d| d.centi),
            Finding::Majflt => e.majflt_ps.unwrap_or(0),
            Finding::Refaults => e.refaults_ps.unwrap_or(0),
            Finding::DiskBusy => e.disk_util_pct.unwrap_or(0).min(100),
            Finding::Throttled => flag(THROTTLE_BITS),
            Finding::UnderVoltage => flag(UNDER_VOLTAGE_BIT),
            Finding::DiskStalled => u64::from(e.disk_stalled == Some(1)),
        };
        amount.min(AMOUNT_MAX)
    }
}

/// The largest amount a second gives: a window's sum of [`WINDOW_S`] of
/// them cannot overflow.
const AMOUNT_MAX: u64 = u64::MAX / WINDOW_S as u64;

/// A worst minute ([module documentation](self)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worst {
    /// The sum of the finding's amounts over it ([`Finding`] gives units).
    pub sum: u64,
    /// Seconds it spans: 60, or the whole run when shorter.
    pub seconds: u64,
    /// Elapsed seconds at its start and end.
    pub from_s: u64,
    /// See `from_s`.
    pub to_s: u64,
    /// UTC time of its end.
    pub to_iso: Iso,
    /// The stage of the row that gives most of `sum`.
    pub stage: Stage,
    /// That row's context.
    pub context: Context,
}

/// The running 60-second sum of one finding.
#[derive(Clone, Debug)]
struct Window {
    /// Amount of each of the last 60 covered seconds, by clock % 60.
    amount: [u64; WINDOW_S],
    /// The row (sequence number) that covered it.
    seq: [u64; WINDOW_S],
    sum: u64,
    worst: Option<Worst>,
}

/// A row that may still be in a window: its sequence number, stage and
/// context.
#[derive(Clone, Debug, Default)]
struct Recent {
    seq: u64,
    stage: Stage,
    context: Context,
}

/// The WHY IT WAS SLOW accumulator.
#[derive(Clone, Debug)]
pub struct Slow {
    /// Some row carried one of the ten columns.
    has_data: bool,
    prev_elapsed: Option<u64>,
    /// Covered seconds so far (the windows' clock).
    clock: u64,
    /// Rows that covered a second or more.
    seq: u64,
    recent: [Recent; WINDOW_S],
    windows: [Window; 7],
    thrash_run: u32,
    /// The current thrash run's row while it is one row long.
    thrash_pending: ThrashRow,
    thrash_s: u64,
    /// Of `thrash_s`: swap thrash, file-page thrash ([`ThrashKind`]).
    swap_thrash_s: u64,
    file_thrash_s: u64,
    /// Of `disk_busy_s`: busy reading while file pages thrashed.
    disk_thrash_s: u64,
    /// The most compilers, and swap-in (hundredths of MiB/s), on a
    /// file-thrashing row.
    file_thrash_compilers: u64,
    file_thrash_swap_in: u64,
    /// The largest usable memory of a row, MiB ([`Fit`]).
    usable_max_mb: Option<u64>,
    disk_busy_s: u64,
    throttled_s: u64,
    under_voltage_s: u64,
    /// The `throttled` flags some row's source could see
    /// ([`Row::throttled_seen`]): a time is reported only for flags seen.
    power_seen: u8,
    /// Whether any row had a `disk_util_pct` / a `disk_stalled` value:
    /// without one the disk's times are unknown, not 0.
    disk_util_seen: bool,
    disk_stalled_seen: bool,
    /// The current run of stalled rows: its seconds, and whether it has
    /// reached [`STALL_MIN_S`] (then counted).
    stall_run_s: u64,
    stall_run_counted: bool,
    disk_stalled_s: u64,
    peak_swap_in: Option<u64>,
    peak_swap_out: Option<u64>,
    peak_majflt: Option<u64>,
    peak_refaults: Option<u64>,
    peak_read: Option<u64>,
    peak_write: Option<u64>,
    peak_temp: Option<PeakTemp>,
    /// The `cpu_temp_c` readings so far ([`JumpGuard`]) and the row of the
    /// one held, until the next reading settles it.
    jumps: JumpGuard,
    held_temp: Option<PeakTemp>,
}

/// A temperature and its row's time, stage and context.
type PeakTemp = (Tenths, Iso, Stage, Context);

/// The memory `row` says the build could use, MiB: the binding figure
/// ([`Binding::of`]) when /proc/meminfo was read, else `cg_mem_avail_mb`.
fn usable_mb(row: &Row) -> Option<u64> {
    if row.mem_known {
        Some(Binding::of(row).avail_mb)
    } else {
        row.ext.cg_mem_avail_mb
    }
}

fn max_opt(slot: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *slot = Some(slot.map_or(v, |o| o.max(v)));
    }
}

impl Window {
    const EMPTY: Window = Window {
        amount: [0; WINDOW_S],
        seq: [0; WINDOW_S],
        sum: 0,
        worst: None,
    };

    /// Takes covered second `clock` (0-based) of row `seq`; whether the
    /// window ending there is the new worst.
    fn push(&mut self, clock: u64, amount: u64, seq: u64) -> bool {
        let slot = (clock % WINDOW_S as u64) as usize;
        self.sum = self.sum - self.amount[slot] + amount;
        self.amount[slot] = amount;
        self.seq[slot] = seq;
        self.sum > self.worst.as_ref().map_or(0, |w| w.sum)
    }

    /// The row giving most of the window ending at `clock`, which spans
    /// `n` seconds: the earliest of equal ones.
    fn heaviest(&self, clock: u64, n: u64) -> u64 {
        let (mut best, mut best_sum) = (0, 0);
        let (mut cur, mut cur_sum) = (0, 0);
        for back in (0..n).rev() {
            let slot = ((clock - back) % WINDOW_S as u64) as usize;
            if self.seq[slot] != cur {
                cur = self.seq[slot];
                cur_sum = 0;
            }
            cur_sum += self.amount[slot];
            if cur_sum > best_sum {
                (best, best_sum) = (cur, cur_sum);
            }
        }
        best
    }
}

impl Slow {
    /// Nothing seen yet.
    pub fn new() -> Slow {
        Slow {
            has_data: false,
            prev_elapsed: None,
            clock: 0,
            seq: 0,
            recent: core::array::from_fn(|_| Recent::default()),
            windows: [Window::EMPTY; 7],
            thrash_run: 0,
            thrash_pending: ThrashRow::default(),
            thrash_s: 0,
            swap_thrash_s: 0,
            file_thrash_s: 0,
            disk_thrash_s: 0,
            file_thrash_compilers: 0,
            file_thrash_swap_in: 0,
            usable_max_mb: None,
            disk_busy_s: 0,
            throttled_s: 0,
            under_voltage_s: 0,
            power_seen: 0,
            disk_util_seen: false,
            disk_stalled_seen: false,
            stall_run_s: 0,
            stall_run_counted: false,
            disk_stalled_s: 0,
            peak_swap_in: None,
            peak_swap_out: None,
            peak_majflt: None,
            peak_refaults: None,
            peak_read: None,
            peak_write: None,
            peak_temp: None,
            jumps: JumpGuard::new(),
            held_temp: None,
        }
    }

    /// Takes one row, in file order.
    pub fn observe(&mut self, row: &Row) {
        let e = &row.ext;
        let centi = |d: &Option<Decimal>| d.as_ref().map(|d| d.centi);
        self.has_data |= e.swap_in_mibps.is_some()
            || e.swap_out_mibps.is_some()
            || e.majflt_ps.is_some()
            || e.refaults_ps.is_some()
            || e.disk_read_mibps.is_some()
            || e.disk_write_mibps.is_some()
            || e.disk_util_pct.is_some()
            || e.disk_stalled.is_some()
            || e.cpu_temp_c.is_some()
            || e.cpu_freq_pct.is_some()
            || e.throttled.is_some();
        max_opt(&mut self.peak_swap_in, centi(&e.swap_in_mibps));
        max_opt(&mut self.peak_swap_out, centi(&e.swap_out_mibps));
        max_opt(&mut self.peak_majflt, e.majflt_ps);
        max_opt(&mut self.peak_refaults, e.refaults_ps);
        max_opt(&mut self.peak_read, centi(&e.disk_read_mibps));
        max_opt(&mut self.peak_write, centi(&e.disk_write_mibps));
        max_opt(&mut self.usable_max_mb, usable_mb(row));
        if let Some(t) = e.cpu_temp_c {
            self.temp(t, row);
        }
        let dt = self
            .prev_elapsed
            .map_or(0, |p| row.elapsed_s.saturating_sub(p));
        self.prev_elapsed = Some(row.elapsed_s);
        self.times(row, dt);
        if dt > 0 {
            self.slide(row, dt);
        }
    }

    /// Takes `row`'s temperature `t`: the peak's candidate when believed,
    /// held when it jumps; a held one the next reading confirms is a
    /// candidate then.
    fn temp(&mut self, t: Tenths, row: &Row) {
        let settled = self.jumps.push(t.0.saturating_mul(100));
        let held = self.held_temp.take();
        if let (Some(true), Some(h)) = (settled.held, held) {
            self.peak_candidate(h);
        }
        let this = || (t, row.iso, row.stage.clone(), row.context.clone());
        if !settled.this {
            self.held_temp = Some(this());
        } else if self.is_new_peak(t) {
            self.peak_temp = Some(this());
        }
    }

    /// `p` as the peak temperature when hotter than the peak so far.
    fn peak_candidate(&mut self, p: PeakTemp) {
        if self.is_new_peak(p.0) {
            self.peak_temp = Some(p);
        }
    }

    /// Whether `t` is hotter than the peak so far (the first of equal ones
    /// stays).
    fn is_new_peak(&self, t: Tenths) -> bool {
        self.peak_temp.as_ref().is_none_or(|q| t > q.0)
    }

    /// Adds the `dt` seconds `row` covers to the findings it has.
    fn times(&mut self, row: &Row, dt: u64) {
        let e = &row.ext;
        if let Some(kind) = ThrashKind::of(row) {
            let t = ThrashRow::new(row, kind, dt);
            self.thrash_run = self.thrash_run.saturating_add(1);
            match self.thrash_run {
                1 => self.thrash_pending = t,
                THRASH_ROWS => {
                    self.count_thrash(self.thrash_pending);
                    self.count_thrash(t);
                }
                _ => self.count_thrash(t),
            }
        } else {
            self.thrash_run = 0;
        }
        self.disk_util_seen |= e.disk_util_pct.is_some();
        self.disk_stalled_seen |= e.disk_stalled.is_some();
        if e.disk_util_pct.unwrap_or(0) >= DISK_BUSY_PCT {
            self.disk_busy_s = self.disk_busy_s.saturating_add(dt);
        }
        self.power_seen |= row.throttled_seen.0;
        if Finding::Throttled.amount(row) > 0 {
            self.throttled_s = self.throttled_s.saturating_add(dt);
        }
        if Finding::UnderVoltage.amount(row) > 0 {
            self.under_voltage_s = self.under_voltage_s.saturating_add(dt);
        }
        self.stall(Finding::DiskStalled.amount(row) > 0, dt);
    }

    /// Counts a stalled row of `dt` seconds once its run of stalled rows
    /// lasts [`STALL_MIN_S`] (the run's earlier rows with it).
    fn stall(&mut self, stalled: bool, dt: u64) {
        if !stalled {
            self.stall_run_s = 0;
            self.stall_run_counted = false;
            return;
        }
        self.stall_run_s = self.stall_run_s.saturating_add(dt);
        if self.stall_run_counted {
            self.disk_stalled_s = self.disk_stalled_s.saturating_add(dt);
        } else if self.stall_run_s >= STALL_MIN_S {
            self.stall_run_counted = true;
            self.disk_stalled_s = self.disk_stalled_s.saturating_add(self.stall_run_s);
        }
    }

    /// Counts a row of a run of [`THRASH_ROWS`] thrashing rows or more.
    fn count_thrash(&mut self, t: ThrashRow) {
        self.thrash_s = self.thrash_s.saturating_add(t.s);
        if !t.file {
            self.swap_thrash_s = self.swap_thrash_s.saturating_add(t.s);
            return;
        }
        self.file_thrash_s = self.file_thrash_s.saturating_add(t.s);
        self.disk_thrash_s = self.disk_thrash_s.saturating_add(t.busy_reads_s);
        self.file_thrash_compilers = self.file_thrash_compilers.max(t.compilers);
        self.file_thrash_swap_in = self.file_thrash_swap_in.max(t.swap_in_centi);
    }

    /// Moves the windows over the `dt` seconds `row` covers. After 60
    /// seconds of one row every window holds that row alone and its sum
    /// no longer changes: at most 60 steps per row.
    fn slide(&mut self, row: &Row, dt: u64) {
        self.seq += 1;
        let seq = self.seq;
        // Only a row with some finding can be a window's heaviest (it
        // counts amounts above 0): the others' texts are never named, and
        // copying them for every row was a tenth of `summarize`.
        if FINDINGS.iter().any(|f| f.amount(row) > 0) {
            self.recent[(seq % WINDOW_S as u64) as usize] = Recent {
                seq,
                stage: row.stage.clone(),
                context: row.context.clone(),
            };
        }
        let start = row.elapsed_s - dt;
        for k in 1..=dt.min(WINDOW_S as u64) {
            let clock = self.clock;
            self.clock += 1;
            let n = self.clock.min(WINDOW_S as u64);
            for (w, f) in self.windows.iter_mut().zip(FINDINGS) {
                if !w.push(clock, f.amount(row), seq) {
                    continue;
                }
                let heavy = w.heaviest(clock, n);
                let named = &self.recent[(heavy % WINDOW_S as u64) as usize];
                let (stage, context) = if named.seq == heavy {
                    (named.stage.clone(), named.context.clone())
                } else {
                    (row.stage.clone(), row.context.clone())
                };
                let to_s = start + k;
                w.worst = Some(Worst {
                    sum: w.sum,
                    seconds: n,
                    from_s: to_s.saturating_sub(n),
                    to_s,
                    to_iso: Iso::from_epoch(row.epoch.saturating_sub(dt - k)),
                    stage,
                    context,
                });
            }
        }
    }

    /// Whether some row carried one of the eleven columns (none in a 14-
    /// or 27-column CSV).
    pub fn has_data(&self) -> bool {
        self.has_data
    }

    /// Whether the section has something to say: some time thrashing, busy,
    /// stalled, throttled or under-voltage, or a peak temperature of
    /// [`HOT_TENTHS`] or more.
    pub fn has_findings(&self) -> bool {
        self.thrash_s > 0
            || self.disk_busy_s > 0
            || self.disk_stalled_s > 0
            || self.throttled_s > 0
            || self.under_voltage_s > 0
            || self.peak_temp().is_some_and(|t| t.0 >= HOT_TENTHS)
    }

    /// Seconds thrashing (rows at or above [`THRASH_SWAP_IN_CENTI`],
    /// [`THRASH_MAJFLT_PS`] or [`THRASH_REFAULTS_PS`], in runs of
    /// [`THRASH_ROWS`] rows or more).
    pub fn thrashing_s(&self) -> u64 {
        self.thrash_s
    }

    /// Seconds the build disk was at least [`DISK_BUSY_PCT`] % busy.
    pub fn disk_busy_s(&self) -> u64 {
        self.disk_busy_s
    }

    /// Seconds with a throttling flag ([`THROTTLE_BITS`]) set; `None`
    /// when no row's source could see those flags (no source, or
    /// `rpi_volt` alone: unknown, not 0).
    pub fn throttled_s(&self) -> Option<u64> {
        (self.power_seen & THROTTLE_BITS == THROTTLE_BITS).then_some(self.throttled_s)
    }

    /// Seconds under-voltage; `None` when no row had a source.
    pub fn under_voltage_s(&self) -> Option<u64> {
        (self.power_seen & UNDER_VOLTAGE_BIT != 0).then_some(self.under_voltage_s)
    }

    /// Seconds the build disk stalled (`disk_stalled` 1: requests in
    /// flight at both ends of a row's interval, none completed).
    /// `None` when no row had the column's value (unknown, not 0).
    pub fn disk_stalled_s(&self) -> Option<u64> {
        self.disk_stalled_seen.then_some(self.disk_stalled_s)
    }

    /// [`Self::disk_busy_s`], `None` when no row had a `disk_util_pct`
    /// (unknown, not 0).
    pub fn disk_busy_known_s(&self) -> Option<u64> {
        self.disk_util_seen.then_some(self.disk_busy_s)
    }

    /// The highest `cpu_temp_c`, °C in tenths; `None` without the column.
    pub fn peak_temp(&self) -> Option<Tenths> {
        self.peak_temp.as_ref().map(|p| p.0)
    }

    /// The worst minute of `f`; `None` when its amount was 0 throughout.
    pub fn worst(&self, f: Finding) -> Option<&Worst> {
        let i = FINDINGS.iter().position(|&g| g == f).unwrap_or(0);
        self.windows[i].worst.as_ref()
    }

    /// The thrash minute: by swap-in MiB for swap thrash, by refaults for
    /// file-page thrash; else by major faults, else by the other.
    pub fn thrash_worst(&self) -> Option<(Finding, &Worst)> {
        let order = match self.thrash_kind() {
            Some(ThrashKind::File) => [Finding::Refaults, Finding::Majflt, Finding::SwapIn],
            _ => [Finding::SwapIn, Finding::Majflt, Finding::Refaults],
        };
        order
            .into_iter()
            .find_map(|f| self.worst(f).map(|w| (f, w)))
    }

    /// The run's thrash kind: the one with more time (swap on a tie);
    /// `None` without thrashing time.
    pub fn thrash_kind(&self) -> Option<ThrashKind> {
        if self.thrash_s == 0 {
            None
        } else if self.file_thrash_s > self.swap_thrash_s {
            Some(ThrashKind::File)
        } else {
            Some(ThrashKind::Swap)
        }
    }

    /// Seconds thrashing of one kind (their sum is
    /// [`Slow::thrashing_s`]).
    pub fn thrashing_kind_s(&self, kind: ThrashKind) -> u64 {
        match kind {
            ThrashKind::Swap => self.swap_thrash_s,
            ThrashKind::File => self.file_thrash_s,
        }
    }

    /// Of [`Slow::disk_busy_s`]: seconds busy reading while file pages
    /// thrashed, the thrash's own reads.
    pub fn disk_busy_thrash_s(&self) -> u64 {
        self.disk_thrash_s
    }

    /// The largest usable memory of a row, MiB: `mem_avail_mb`, or
    /// `cg_mem_avail_mb` when smaller; `None` when no row had either.
    pub fn usable_max_mb(&self) -> Option<u64> {
        self.usable_max_mb
    }

    /// The `-j` that fits for jobs of `peak_mb` MiB (the summary's sizing
    /// peak); `None` without a peak above 0 or a usable memory.
    pub fn fit(&self, peak_mb: Option<u64>) -> Option<Fit> {
        let peak_mb = peak_mb.filter(|&p| p > 0)?;
        let usable_mb = self.usable_max_mb?;
        let memory_jobs = measured_jobs(usable_mb, 1, peak_mb);
        let c = self.file_thrash_compilers;
        let jobs = if c >= 2 && memory_jobs >= c {
            c - 1
        } else {
            memory_jobs
        };
        Some(Fit {
            jobs,
            memory_jobs,
            peak_mb,
            usable_mb,
            thrash_compilers: c,
        })
    }

    /// Peaks, hundredths of MiB/s: swap-in, swap-out, disk read, write.
    pub fn peak_mibps_centi(&self) -> [Option<u64>; 4] {
        [
            self.peak_swap_in,
            self.peak_swap_out,
            self.peak_read,
            self.peak_write,
        ]
    }

    /// Peaks per second: major faults, refaults.
    pub fn peak_ps(&self) -> [Option<u64>; 2] {
        [self.peak_majflt, self.peak_refaults]
    }

    /// The peak temperature's row: its time, stage and context.
    pub fn peak_temp_row(&self) -> Option<(&Iso, &Stage, &Context)> {
        self.peak_temp.as_ref().map(|p| (&p.1, &p.2, &p.3))
    }
}

impl Default for Slow {
    fn default() -> Slow {
        Slow::new()
    }
}

impl Slow {
    /// The section, when it has something to say ([`Slow::has_findings`]);
    /// `zram_swap`: the run's swap is zram (zram stored data), which
    /// changes the swap thrash advice; `peak_mb`: the summary's sizing
    /// peak (its [`super::Summary::sizing_peak`]), from which file-page
    /// thrash advises the `-j` that fits ([`Slow::fit`]); `device`: the
    /// build disk's kind, which the disk advice follows (`None`: unknown).
    pub fn render<W: uWrite>(
        &self,
        w: &mut W,
        zram_swap: bool,
        peak_mb: Option<u64>,
        device: Option<Device>,
    ) -> Result<(), W::Error> {
        if !self.has_findings() {
            return Ok(());
        }
        uwrite!(w, "\nWHY IT WAS SLOW:\n")?;
        self.render_thrash(w, zram_swap, peak_mb)?;
        self.render_disk(w, device)?;
        self.render_stall(w, device)?;
        self.render_power(w)
    }

    /// Thrashing: its time, worst minute, peaks, kinds and advice.
    fn render_thrash<W: uWrite>(
        &self,
        w: &mut W,
        zram_swap: bool,
        peak_mb: Option<u64>,
    ) -> Result<(), W::Error> {
        let Some(kind) = self.thrash_kind() else {
            return Ok(());
        };
        uwrite!(w, "  thrashing: ")?;
        duration(w, self.thrash_s)?;
        uwrite!(
            w,
            " (swap-in >= 1 MiB/s, or >= {} major faults/s or >= {} refaults/s with memory short, {} rows or more)\n",
            THRASH_MAJFLT_PS,
            THRASH_REFAULTS_PS,
            THRASH_ROWS
        )?;
        if let Some((f, worst)) = self.thrash_worst() {
            minute(w, "worst", worst)?;
            match f {
                Finding::SwapIn => mib(w, worst.sum, " swapped in")?,
                Finding::Refaults => uwrite!(w, "{} refaults", worst.sum)?,
                _ => uwrite!(w, "{} major faults", worst.sum)?,
            }
            stage_context(w, worst)?;
        }
        self.render_thrash_peaks(w)?;
        if self.swap_thrash_s > 0 && self.file_thrash_s > 0 {
            uwrite!(w, "    of which: swap ")?;
            duration(w, self.swap_thrash_s)?;
            uwrite!(w, ", file pages ")?;
            duration(w, self.file_thrash_s)?;
            uwrite!(w, "\n")?;
        }
        uwrite!(w, "    advice: ")?;
        match kind {
            ThrashKind::Swap if zram_swap => uwrite!(w, "{}\n", ADVICE_FEWER_JOBS),
            ThrashKind::Swap => uwrite!(w, "{}\n", ADVICE_ZRAM),
            ThrashKind::File => self.render_file_advice(w, peak_mb),
        }
    }

    /// `    peaks: …` of the thrash columns.
    fn render_thrash_peaks<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(w, "    peaks:")?;
        let [si, so, _, _] = self.peak_mibps_centi();
        let [mf, rf] = self.peak_ps();
        let mut sep = " ";
        for (v, what) in [(si, " swap-in"), (so, " swap-out")] {
            if let Some(v) = v {
                uwrite!(w, "{}", sep)?;
                mibps(w, v, what)?;
                sep = ", ";
            }
        }
        for (v, what) in [(mf, "major faults/s"), (rf, "refaults/s")] {
            if let Some(v) = v {
                uwrite!(w, "{}{} {}", sep, v, what)?;
                sep = ", ";
            }
        }
        uwrite!(w, "\n")
    }

    /// File-page thrash's advice, after `advice: `: the `-j` that fits
    /// ([`Slow::fit`]) and how to run it.
    fn render_file_advice<W: uWrite>(
        &self,
        w: &mut W,
        peak_mb: Option<u64>,
    ) -> Result<(), W::Error> {
        let swap_in = match self.file_thrash_swap_in {
            0 => "no swap-in",
            c if c < THRASH_SWAP_IN_CENTI => "swap-in under 1 MiB/s",
            // Above it only without swap: a swapoff reading pages back.
            _ => "no swap",
        };
        uwrite!(
            w,
            "file pages thrashed, {}: {} — ",
            swap_in,
            ADVICE_FILE_THRASH
        )?;
        let Some(f) = self.fit(peak_mb) else {
            let missing = if self.usable_max_mb.is_none() {
                "available memory"
            } else {
                "compiler peak"
            };
            return uwrite!(
                w,
                "fewer jobs (no {} recorded to size them): headroom run --jobserver\n",
                missing
            );
        };
        if f.jobs == 0 {
            return uwrite!(
                w,
                "not even -j1 fits (peak {} MiB per job, {} MiB usable): make -j1, and more memory (headroom advise)\n",
                f.peak_mb,
                f.usable_mb
            );
        }
        if f.jobs < f.memory_jobs {
            uwrite!(
                w,
                "-j{} at most: {} compilers thrashed, though peak {} MiB per job would allow {} in {} MiB usable (the thrash kept the peak low)",
                f.jobs,
                f.thrash_compilers,
                f.peak_mb,
                f.memory_jobs,
                f.usable_mb
            )?;
        } else {
            uwrite!(
                w,
                "-j{} fits (peak {} MiB per job, {} MiB usable)",
                f.jobs,
                f.peak_mb,
                f.usable_mb
            )?;
        }
        uwrite!(w, ": make -j{} or headroom run --jobserver\n", f.jobs)
    }

    /// Whether the disk was busy beyond the thrash's own reads: the busy
    /// section then gives the device's advice (and its `device:` line).
    fn busy_not_thrash(&self) -> bool {
        self.disk_busy_s > self.disk_thrash_s
    }

    /// A busy build disk of kind `device`: its time, busiest minute,
    /// peaks, kind (when its advice follows it) and advice.
    fn render_disk<W: uWrite>(&self, w: &mut W, device: Option<Device>) -> Result<(), W::Error> {
        if self.disk_busy_s == 0 {
            return Ok(());
        }
        uwrite!(w, "  build disk >= {}% busy: ", DISK_BUSY_PCT)?;
        duration(w, self.disk_busy_s)?;
        uwrite!(w, "\n")?;
        if let Some(worst) = self.worst(Finding::DiskBusy) {
            minute(w, "busiest", worst)?;
            uwrite!(w, "busy {} s of {}", worst.sum / 100, worst.seconds)?;
            stage_context(w, worst)?;
        }
        let [_, _, rd, wr] = self.peak_mibps_centi();
        if let (Some(rd), Some(wr)) = (rd, wr) {
            uwrite!(w, "    peaks: ")?;
            mibps(w, rd, " read")?;
            uwrite!(w, ", ")?;
            mibps(w, wr, " write")?;
            uwrite!(w, "\n")?;
        }
        if self.busy_not_thrash() {
            device_line(w, device)?;
        }
        let advice = disk_advice(device);
        let thrash = self.disk_thrash_s;
        if thrash == 0 {
            return uwrite!(w, "    advice: {}\n", advice);
        }
        uwrite!(w, "    ")?;
        duration(w, thrash)?;
        uwrite!(
            w,
            " of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault\n"
        )?;
        let other = self.disk_busy_s.saturating_sub(thrash);
        if other == 0 {
            return uwrite!(w, "    advice: {}\n", ADVICE_DISK_THRASH);
        }
        uwrite!(w, "    advice for the other ")?;
        duration(w, other)?;
        uwrite!(w, ": {}\n", advice)
    }

    /// A stalled build disk: its time, the worst minute with the stage that
    /// waited, and advice.
    fn render_stall<W: uWrite>(&self, w: &mut W, device: Option<Device>) -> Result<(), W::Error> {
        if self.disk_stalled_s == 0 {
            return Ok(());
        }
        w.write_str("  build disk stalled (requests in flight, none completed): ")?;
        duration(w, self.disk_stalled_s)?;
        w.write_str("\n")?;
        self.flag_minute(w, Finding::DiskStalled, "stalled")?;
        if !self.busy_not_thrash() {
            device_line(w, device)?;
        }
        w.write_str("    advice: ")?;
        w.write_str(stall_advice(device))?;
        w.write_str("\n")
    }

    /// Throttling and under-voltage, each with the file its flags come
    /// from (the sysfs word is cached), and the peak temperature.
    fn render_power<W: uWrite>(&self, w: &mut W) -> Result<(), W::Error> {
        if self.throttled_s > 0 {
            uwrite!(
                w,
                "  throttled ({}, {} or {}): ",
                THROTTLE_NAMES[1],
                THROTTLE_NAMES[2],
                THROTTLE_NAMES[3]
            )?;
            duration(w, self.throttled_s)?;
            uwrite!(w, "\n    source: {}\n", WORD_SOURCE)?;
            self.flag_minute(w, Finding::Throttled, "throttled")?;
            uwrite!(w, "    advice: {}\n", ADVICE_HEAT)?;
        }
        if self.under_voltage_s > 0 {
            uwrite!(w, "  {}: ", THROTTLE_NAMES[0])?;
            duration(w, self.under_voltage_s)?;
            uwrite!(w, "\n    source: {} or {}\n", WORD_SOURCE, ALARM_SOURCE)?;
            self.flag_minute(w, Finding::UnderVoltage, THROTTLE_NAMES[0])?;
            uwrite!(w, "    advice: {}\n", ADVICE_POWER)?;
        }
        if let Some((t, iso, stage, context)) = &self.peak_temp {
            uwrite!(w, "  peak temperature: ")?;
            t.write(w)?;
            uwrite!(w, " °C  at {}\n", iso.as_str())?;
            let stage = stage_str(stage);
            uwrite!(w, "    stage={}  context={}\n", stage, context.as_str())?;
            if t.0 >= HOT_TENTHS && self.throttled_s == 0 {
                uwrite!(w, "    advice: {}\n", ADVICE_HEAT)?;
            }
        }
        Ok(())
    }

    fn flag_minute<W: uWrite>(&self, w: &mut W, f: Finding, what: &str) -> Result<(), W::Error> {
        if let Some(worst) = self.worst(f) {
            minute(w, "worst", worst)?;
            uwrite!(w, "{} {} s of {}", what, worst.sum, worst.seconds)?;
            stage_context(w, worst)?;
        }
        Ok(())
    }
}

/// `    <which> minute: <from> to <to> after the start (to <iso>): `
fn minute<W: uWrite>(w: &mut W, which: &str, m: &Worst) -> Result<(), W::Error> {
    uwrite!(w, "    {} minute: ", which)?;
    duration(w, m.from_s)?;
    uwrite!(w, " to ")?;
    duration(w, m.to_s)?;
    uwrite!(w, " after the start (to {}): ", m.to_iso.as_str())
}

/// The end of a minute's line and its `stage=  context=` line.
fn stage_context<W: uWrite>(w: &mut W, m: &Worst) -> Result<(), W::Error> {
    let stage = stage_str(&m.stage);
    uwrite!(w, "\n    stage={}  context={}\n", stage, m.context.as_str())
}

/// Hundredths of MiB as `310.50 MiB<what>`.
fn mib<W: uWrite>(w: &mut W, centi: u64, what: &str) -> Result<(), W::Error> {
    uwrite!(
        w,
        "{} MiB{}",
        Decimal::from_centi(centi).text.as_str(),
        what
    )
}

/// Hundredths of MiB/s as `12.50 MiB/s<what>`.
fn mibps<W: uWrite>(w: &mut W, centi: u64, what: &str) -> Result<(), W::Error> {
    uwrite!(
        w,
        "{} MiB/s{}",
        Decimal::from_centi(centi).text.as_str(),
        what
    )
}

#[cfg(test)]
mod tests {
    //! Unit tests of `report::summary::why_slow` (src/report/summary/why_slow.rs).

    extern crate std;
    use std::string::String;

    use super::*;
    use crate::report::csvread::CsvRows;
    use crate::report::summary::{Summary, Text};
    use crate::tick::row::columns::HEADER_FULL;

    /// One full row at `elapsed` seconds (epoch 1796000000 + elapsed) with
    /// `stage`, `context`, 1024 MiB of swap and the ten slow columns `slow`
    /// (`si,so,mf,rf,rd,wr,util,temp,freq,thr`).
    fn line(elapsed: u64, stage: &str, context: &str, slow: &str) -> String {
        let epoch = 1_796_000_000 + elapsed;
        let iso = Iso::from_epoch(epoch);
        full_width(std::format!(
            "{epoch},{},{elapsed},0.50,50,1000,3000,25,0,50,50,1,{stage},\"{context}\",1024,,,,,51200,0,,,,,,,{slow}",
            iso.as_str()
        ))
    }

    /// Row `l` (its fields up to the slow ones, no comma inside a field)
    /// ended with empty fields up to the width of [`HEADER_FULL`], and a
    /// newline: the columns after the slow ones follow the column table.
    fn full_width(mut l: String) -> String {
        let fields = |t: &str| t.split(',').count();
        for _ in fields(&l)..fields(HEADER_FULL.trim_end()) {
            l.push(',');
        }
        l.push('\n');
        l
    }

    /// A CSV of `rows` (elapsed, stage, context, slow columns).
    fn csv(rows: &[(u64, &str, &str, &str)]) -> String {
        let mut s = String::from(HEADER_FULL);
        for (e, st, cx, sl) in rows {
            s.push_str(&line(*e, st, cx, sl));
        }
        s
    }

    /// `data` made by [`csv`] with memory short on every row: 300 MiB of
    /// 4000 available ([`memory_short`]), so that faults are file-page
    /// thrash.
    fn short(data: String) -> String {
        data.replace(",1000,3000,25,", ",3700,300,92,")
    }

    fn summary(data: &str) -> Summary {
        let mut s = Summary::new(None, None);
        let mut r = CsvRows::new();
        r.feed(data.as_bytes(), &mut |row| s.observe(row)).unwrap();
        r.feed(&[], &mut |row| s.observe(row)).unwrap();
        assert_eq!(r.skipped, 0, "{data}");
        s
    }

    fn text(s: &Summary) -> String {
        let mut t = Text::new();
        s.render(&mut t).unwrap();
        String::from(t.as_str())
    }

    /// The slow columns of a quiet row.
    const QUIET: &str = "0.00,0.00,0,0,0.00,0.00,5,45.0,60,";

    /// Issue 33: one stalled 1-second row (a request in service across
    /// a final flush) is no stall; a run of 5 s or more is, all of it.
    #[test]
    fn a_stall_counts_only_from_five_seconds_on() {
        let stalled = "0.00,0.00,0,0,0.00,0.00,,45.0,60,,,1";
        let fine = "0.00,0.00,0,0,0.00,40.00,50,45.0,60,,,0";
        let rows = |pattern: &[bool]| {
            let r: std::vec::Vec<(u64, &str, &str, &str)> = pattern
                .iter()
                .enumerate()
                .map(|(i, &st)| (i as u64, "link", "ld", if st { stalled } else { fine }))
                .collect();
            summary(&csv(&r))
        };
        let s = rows(&[false, true, false, true, true, false]);
        assert_eq!(s.slow().disk_stalled_s(), Some(0));
        assert!(!text(&s).contains("stalled"), "{}", text(&s));
        let s = rows(&[false, true, true, true, true, true, true, false]);
        assert_eq!(s.slow().disk_stalled_s(), Some(6));
        assert!(text(&s).contains("build disk stalled"), "{}", text(&s));
    }

    #[test]
    fn thrash_counts_only_runs_of_two_rows_or_more() {
        let thrash = "2.00,0.50,10,300,0.00,0.00,5,45.0,60,";
        let faults = "0.00,0.00,150,0,0.00,0.00,5,45.0,60,";
        let s = summary(&short(csv(&[
            (0, "a", "x", QUIET),
            (10, "a", "x", thrash), // alone: not counted
            (20, "a", "x", QUIET),
            (30, "b", "y", thrash), // a run of two: 10 + 10 s
            (40, "b", "y", faults),
            (50, "b", "y", QUIET),
            (55, "c", "z", faults), // a run of three: 5 + 5 + 5 s
            (60, "c", "z", faults),
            (65, "c", "z", faults),
        ])));
        assert_eq!(s.slow().thrashing_s(), 35);
        let t = text(&s);
        assert!(
        t.contains("\nWHY IT WAS SLOW:\n  thrashing: 35s (swap-in >= 1 MiB/s, or >= 100 major faults/s or >= 1000 refaults/s with memory short, 2 rows or more)\n"),
        "{t}"
    );
        // 10 s of swap thrash (the row at 30 s), 25 s of faults without
        // swap-in: file pages, the larger.
        assert!(
        t.contains("    peaks: 2.00 MiB/s swap-in, 0.50 MiB/s swap-out, 150 major faults/s, 300 refaults/s\n    of which: swap 10s, file pages 25s\n    advice: file pages thrashed, no swap-in: too many jobs for the memory — fewer jobs (no compiler peak recorded to size them): headroom run --jobserver\n"),
        "{t}"
    );
        assert!(!t.contains(ADVICE_ZRAM), "{t}");
    }

    #[test]
    fn times_come_from_elapsed_with_uneven_intervals() {
        let busy = "0.00,0.00,0,0,1.00,20.00,95,45.0,60,";
        // Intervals of 1, 2, 4, 8 and 15 s, as `run`'s widening interval
        // gives: 29 s busy, where rows × an interval would say anything else.
        let s = summary(&csv(&[
            (0, "a", "x", busy),
            (1, "a", "x", busy),
            (3, "a", "x", busy),
            (7, "a", "x", QUIET),
            (15, "a", "x", busy),
            (30, "a", "x", busy),
            (31, "a", "x", "0.00,0.00,0,0,0.00,0.00,89,45.0,60,"),
        ]));
        assert_eq!(s.slow().disk_busy_s(), 1 + 2 + 8 + 15);
        assert_eq!(s.slow().thrashing_s(), 0);
    }

    #[test]
    fn the_busiest_minute_names_its_stage_and_context() {
        // 0–60 s: 50 % busy in "configure"; 60–120 s: "link" at 100 % for
        // 45 s, then 15 s of "install" at 90 %; the busiest 60 s is 60–120 s
        // (45 + 13.5 = 58.5 busy seconds), where "link" gives the most.
        let half = "0.00,0.00,0,0,0.00,5.00,50,45.0,60,";
        let full = "0.00,0.00,0,0,0.50,30.00,100,45.0,60,";
        let ninety = "0.00,0.00,0,0,0.00,10.00,90,45.0,60,";
        let s = summary(&csv(&[
            (0, "configure", "cmake", half),
            (15, "configure", "cmake", half),
            (30, "configure", "cmake", half),
            (45, "configure", "cmake", half),
            (60, "configure", "cmake", half),
            (75, "link", "[9/10] Linking CXX executable big", full),
            (90, "link", "[9/10] Linking CXX executable big", full),
            (105, "link", "[9/10] Linking CXX executable big", full),
            (120, "install", "Installing big", ninety),
            (135, "install", "Installing big", QUIET),
        ]));
        let worst = s.slow().worst(Finding::DiskBusy).unwrap();
        assert_eq!((worst.from_s, worst.to_s, worst.sum), (60, 120, 5850));
        assert_eq!(worst.stage.as_str(), "link");
        assert_eq!(worst.context.as_str(), "[9/10] Linking CXX executable big");
        assert_eq!(
            worst.to_iso.as_str(),
            Iso::from_epoch(1_796_000_120).as_str()
        );
        assert_eq!(s.slow().disk_busy_s(), 60);
        let mut s = s.clone();
        s.disk_device = Some(Device::Card);
        let t = text(&s);
        let want = std::format!(
            "\nWHY IT WAS SLOW:\n  build disk >= 90% busy: 1m00s\n    busiest minute: 1m00s to 2m00s after the start (to {}): busy 58 s of 60\n    stage=link  context=[9/10] Linking CXX executable big\n    peaks: 0.50 MiB/s read, 30.00 MiB/s write\n    device: SD/eMMC card\n    advice: {ADVICE_DISK}\n",
            worst.to_iso.as_str()
        );
        assert!(t.contains(&want), "{t}");
        assert_eq!(device_in(&t), Some(Device::Card));
    }

    /// Issue 33: the disk advice follows the build disk's kind; the card's
    /// only for a card, and advice for any disk when the kind is unknown
    /// (`summarize` of a CSV alone), with the kind on its own line.
    #[test]
    fn disk_advice_follows_the_device_and_names_a_card_only_for_a_card() {
        let busy = "0.00,0.00,0,0,40.00,30.00,100,45.0,60,";
        // disk_stalled 1 (after throttled and cg_mem_limit_mb), not busy.
        let stalled = "0.00,0.00,0,0,0.00,0.00,0,45.0,60,,,1";
        for (slow, advice) in [
            (busy, disk_advice as fn(Option<Device>) -> &'static str),
            (stalled, stall_advice),
        ] {
            let data = csv(&[
                (0, "a", "x", QUIET),
                (15, "a", "x", slow),
                (30, "a", "x", slow),
            ]);
            let mut s = summary(&data);
            assert!(s.slow().has_findings(), "{data}");
            for device in Device::ALL.into_iter().map(Some).chain([None]) {
                s.disk_device = device;
                let t = text(&s);
                let said = std::format!("    advice: {}\n", advice(device));
                assert!(t.contains(&said), "{device:?}: {t}");
                assert_eq!(device_in(&t), device, "{t}");
                let card = t.contains("card");
                assert_eq!(card, device == Some(Device::Card), "{device:?}: {t}");
            }
            s.disk_device = Some(Device::Virtual);
            let t = text(&s);
            assert!(t.contains("    device: virtual disk (virtio/Xen)\n"), "{t}");
            assert!(!t.contains("A2") && !t.contains("mmc "), "{t}");
        }
    }

    #[test]
    fn a_window_shorter_than_a_minute_and_the_earliest_of_equals() {
        let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
        let s = summary(&csv(&[
            (0, "a", "x", QUIET),
            (10, "a", "x", busy),
            (20, "b", "y", busy),
            (30, "c", "z", "0.00,0.00,0,0,0.00,0.00,0,45.0,60,"),
        ]));
        let worst = s.slow().worst(Finding::DiskBusy).unwrap();
        // Both busy rows give 10 s: the earlier names it.
        assert_eq!((worst.from_s, worst.to_s, worst.seconds), (0, 20, 20));
        assert_eq!(worst.stage.as_str(), "a");
    }

    #[test]
    fn a_long_row_is_stepped_at_most_a_minute() {
        let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
        let s = summary(&csv(&[
            (0, "a", "x", QUIET),
            (1_000_000_000, "b", "y", busy),
            (1_000_000_030, "c", "z", QUIET),
        ]));
        assert_eq!(s.slow().disk_busy_s(), 1_000_000_000);
        let worst = s.slow().worst(Finding::DiskBusy).unwrap();
        assert_eq!(worst.sum, 6000);
        assert_eq!(worst.stage.as_str(), "b");
        assert_eq!(worst.to_s, 60);
    }

    #[test]
    fn throttling_under_voltage_and_heat() {
        let s = summary(&csv(&[
            (0, "a", "x", QUIET),
            (
                15,
                "a",
                "x",
                "0.00,0.00,0,0,0.00,0.00,5,82.3,60,throttled|soft-temp-limit",
            ),
            (
                30,
                "b",
                "y",
                "0.00,0.00,0,0,0.00,0.00,5,84.9,60,under-voltage|freq-capped",
            ),
            (
                45,
                "b",
                "y",
                "0.00,0.00,0,0,0.00,0.00,5,84.9,60,under-voltage",
            ),
            (60, "c", "z", QUIET),
        ]));
        let slow = s.slow();
        assert_eq!(slow.throttled_s(), Some(30));
        assert_eq!(slow.under_voltage_s(), Some(30));
        assert_eq!(slow.peak_temp(), Some(Tenths(849)));
        let t = text(&s);
        let end = Iso::from_epoch(1_796_000_045);
        let peak = Iso::from_epoch(1_796_000_030);
        let want = std::format!(
            "  throttled (freq-capped, throttled or soft-temp-limit): 30s
    source: {WORD_SOURCE}
    worst minute: 0s to 30s after the start (to {}): throttled 30 s of 30
    stage=a  context=x
    advice: {ADVICE_HEAT}
  under-voltage: 30s
    source: {WORD_SOURCE} or {ALARM_SOURCE}
    worst minute: 0s to 45s after the start (to {}): under-voltage 30 s of 45
    stage=b  context=y
    advice: {ADVICE_POWER}
  peak temperature: 84.9 °C  at {}
    stage=b  context=y
",
            peak.as_str(),
            end.as_str(),
            peak.as_str()
        );
        assert!(t.contains(&want), "{t}");
        // The heat advice once, under throttling.
        assert_eq!(t.matches(ADVICE_HEAT).count(), 1, "{t}");
    }

    #[test]
    fn heat_alone_is_a_finding_and_warm_is_not() {
        let warm = summary(&csv(&[
            (0, "a", "x", QUIET),
            (15, "a", "x", "0.00,0.00,0,0,0.00,0.00,5,79.9,60,"),
        ]));
        assert!(!text(&warm).contains("WHY IT WAS SLOW"));
        assert!(warm.slow().has_data());
        // 45 °C to 80 °C is a jump: the next row (79.5 °C) confirms it.
        let hot = summary(&csv(&[
            (0, "a", "x", QUIET),
            (15, "a", "hot", "0.00,0.00,0,0,0.00,0.00,5,80.0,60,"),
            (30, "a", "after", "0.00,0.00,0,0,0.00,0.00,5,79.5,60,"),
        ]));
        let t = text(&hot);
        assert!(
        t.contains(&std::format!(
            "\nWHY IT WAS SLOW:\n  peak temperature: 80.0 °C  at {}\n    stage=a  context=hot\n    advice: {ADVICE_HEAT}\n",
            Iso::from_epoch(1_796_000_015).as_str()
        )),
        "{t}"
    );
    }

    /// Case 51's bogus read (raspberrypi/firmware#133's 85 °C between sane
    /// readings) is neither the peak nor heat to advise on; the same jump
    /// confirmed by the next reading is both, and a last reading that
    /// jumps is never confirmed.
    #[test]
    fn a_bogus_spike_is_not_the_peak_temperature() {
        let row = |t: &str| std::format!("0.00,0.00,0,0,0.00,0.00,5,{t},60,");
        let (r48, r85, r483, r49) = (row("48.0"), row("85.0"), row("48.3"), row("49.0"));
        let spiked = summary(&csv(&[
            (0, "a", "x", &r48),
            (15, "a", "spike", &r85),
            (30, "b", "y", &r483),
            (45, "b", "z", &r49),
        ]));
        assert_eq!(spiked.slow().peak_temp(), Some(Tenths(490)));
        let (_, stage, context) = spiked.slow().peak_temp_row().unwrap();
        assert_eq!((stage.as_str(), context.as_str()), ("b", "z"));
        assert!(!spiked.slow().has_findings());
        let t = text(&spiked);
        assert!(!t.contains("WHY IT WAS SLOW") && !t.contains("85.0"), "{t}");
        // A failed read (empty field) between the spike and the next
        // reading does not confirm it either.
        let gap = summary(&csv(&[
            (0, "a", "x", &r48),
            (15, "a", "spike", &r85),
            (30, "a", "gap", &row("")),
            (45, "b", "z", &r49),
        ]));
        assert_eq!(gap.slow().peak_temp(), Some(Tenths(490)));
        // Confirmed: 85.0 then 84.0 is a real rise.
        let real = summary(&csv(&[
            (0, "a", "x", &r48),
            (15, "a", "rise", &r85),
            (30, "b", "y", &row("84.0")),
        ]));
        assert_eq!(real.slow().peak_temp(), Some(Tenths(850)));
        let (_, _, context) = real.slow().peak_temp_row().unwrap();
        assert_eq!(context.as_str(), "rise");
        assert!(text(&real).contains(&std::format!("    advice: {ADVICE_HEAT}\n")));
        // The last reading jumps: never confirmed.
        let last = summary(&csv(&[(0, "a", "x", &r48), (15, "a", "end", &r85)]));
        assert_eq!(last.slow().peak_temp(), Some(Tenths(480)));
        // The JSON summary's peak is the same figure.
        let j = json(&spiked);
        assert!(j.contains("\"peak_cpu_temp\":{\"cpu_temp_c\":49.0"), "{j}");
    }

    #[test]
    fn zram_swap_changes_the_thrash_advice() {
        let thrash = "5.00,5.00,500,0,0.00,0.00,5,45.0,60,";
        let mut data = csv(&[
            (0, "a", "x", thrash),
            (15, "a", "x", thrash),
            (30, "a", "x", thrash),
        ]);
        // zram_stored_mb 300 on every row (column 16).
        data = data.replace(",1024,,,,,51200,", ",1024,300,100,,,51200,");
        let t = text(&summary(&data));
        assert!(
            t.contains(&std::format!("    advice: {ADVICE_FEWER_JOBS}\n")),
            "{t}"
        );
        assert!(!t.contains(ADVICE_ZRAM), "{t}");
        assert!(t.contains("worst minute: 0s to 30s after the start"), "{t}");
        assert!(t.contains(": 150.00 MiB swapped in\n"), "{t}");
    }

    #[test]
    fn faults_alone_name_the_minute_by_faults() {
        let faults = "0.00,0.00,200,0,0.00,0.00,5,45.0,60,";
        let t = text(&summary(&short(csv(&[
            (0, "a", "x", QUIET),
            (10, "a", "x", faults),
            (20, "a", "x", faults),
        ]))));
        assert!(t.contains(": 4000 major faults\n"), "{t}");
    }

    #[test]
    fn old_csvs_and_quiet_runs_have_no_section() {
        let header = crate::tick::row::columns::header_27();
        let mut old = std::format!("{}\n", header.as_str());
        for e in [0u64, 15, 30] {
            let full = line(
                e,
                "a",
                "x",
                "9.00,9.00,900,900,9.00,9.00,100,90.0,60,throttled",
            );
            // The 27 columns: drop the ten slow ones.
            let cut: std::vec::Vec<&str> = full.trim_end().split(',').take(27).collect();
            old.push_str(&cut.join(","));
            old.push('\n');
        }
        let s = summary(&old);
        assert!(!s.slow().has_data());
        let t = text(&s);
        assert!(!t.contains("WHY IT WAS SLOW"), "{t}");
        let quiet = summary(&csv(&[(0, "a", "x", QUIET), (15, "a", "x", QUIET)]));
        assert!(quiet.slow().has_data() && !quiet.slow().has_findings());
        assert!(!text(&quiet).contains("WHY IT WAS SLOW"));
        let empty = summary(&csv(&[
            (0, "a", "x", ",,,,,,,,,"),
            (15, "a", "x", ",,,,,,,,,"),
        ]));
        assert!(!empty.slow().has_data());
    }

    #[test]
    fn the_other_sections_are_unchanged_by_the_new_one() {
        let busy = "0.00,0.00,0,0,0.00,0.00,100,45.0,60,";
        let with = text(&summary(&csv(&[(0, "a", "x", busy), (15, "a", "x", busy)])));
        let without = text(&summary(&csv(&[
            (0, "a", "x", QUIET),
            (15, "a", "x", QUIET),
        ])));
        let (head, section) = with.split_once("\nWHY IT WAS SLOW:\n").unwrap();
        assert_eq!(head, without);
        assert!(
            section.starts_with("  build disk >= 90% busy: 15s\n"),
            "{section}"
        );
    }

    fn json(s: &Summary) -> String {
        let mut t = Text::new();
        s.render_json(&mut t).unwrap();
        String::from(t.as_str())
    }

    #[test]
    fn json_carries_the_same_figures() {
        let busy = "1.50,0.25,120,7,0.50,30.00,100,81.5,60,throttled";
        let s = summary(&csv(&[
            (0, "a", "x", QUIET),
            (15, "link", "ld big", busy),
            (30, "link", "ld big", busy),
        ]));
        let j = json(&s);
        let iso = Iso::from_epoch(1_796_000_030);
        let want = std::format!(
            ",\"why_slow\":{{\"thrashing_s\":30,\"thrashing_minute\":{{\"swap_in_mib\":45.00,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_swap_in_mibps\":1.50,\"peak_swap_out_mibps\":0.25,\"peak_majflt_ps\":120,\"peak_refaults_ps\":7,\"thrash_kind\":\"swap\",\"swap_thrashing_s\":30,\"file_thrashing_s\":0,\"fitting_jobs\":null,\"fitting_peak_mb\":null,\"fitting_usable_mb\":null,\"thrash_compilers\":null,\"disk_busy_s\":30,\"disk_busy_minute\":{{\"busy_centi_s\":3000,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"peak_disk_read_mibps\":0.50,\"peak_disk_write_mibps\":30.00,\"disk_busy_thrash_s\":0,\"throttled_s\":30,\"throttled_minute\":{{\"throttled_s\":30,\"seconds\":30,\"from_s\":0,\"to_s\":30,\"to_iso\":\"{0}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"under_voltage_s\":0,\"under_voltage_minute\":null,\"disk_stalled_s\":null,\"disk_stalled_minute\":null,\"peak_cpu_temp\":{{\"cpu_temp_c\":81.5,\"iso\":\"{1}\",\"stage\":\"link\",\"context\":\"ld big\"}},\"disk_device\":null}}",
            iso.as_str(),
            Iso::from_epoch(1_796_000_015).as_str()
        );
        assert!(j.contains(&want), "{j}");
        let old = summary(&std::format!(
            "{}\n",
            crate::tick::row::columns::header_27().as_str()
        ));
        assert!(json(&old).contains(",\"why_slow\":null,"));
    }

    /// A row of four `sqlite3.c` compiles in a 1 GiB memory cgroup on a 24
    /// GiB host (22604 MiB available): `compilers` running, `swap_total` MiB
    /// of swap, `cg` MiB available under the cgroup's limit (empty: no
    /// limit), the build's largest compiler `peak` MiB (empty: none), and the
    /// ten slow columns `slow`.
    fn cg_line(
        elapsed: u64,
        compilers: u64,
        swap_total: u64,
        cg: &str,
        peak: &str,
        slow: &str,
    ) -> String {
        let epoch = 1_796_000_000 + elapsed;
        let iso = Iso::from_epoch(epoch);
        let comm = if peak.is_empty() { "" } else { "cc1" };
        full_width(std::format!(
            "{epoch},{},{elapsed},4.00,100,1400,22604,6,0,50,50,{compilers},compile,\"[1/4] CC sqlite3.c\",{swap_total},,,,,51200,0,{cg},,{peak},{comm},{peak},{comm},{slow}",
            iso.as_str()
        ))
    }

    /// The slow columns of a row thrashing file pages: 52000 major faults/s,
    /// no swap-in, the disk 40 % busy.
    const FILE_THRASH: &str = "0.00,0.00,52000,210000,40.00,1.00,40,55.0,100,";
    /// The same with the build disk 100 % busy reading the pages again.
    const FILE_THRASH_READING: &str = "0.00,0.00,52000,210000,840.00,1.00,100,55.0,100,";

    /// `make -j4` in the cgroup: 1010 MiB available before the jobs, three
    /// rows of 15 s thrashing with `thrash` (the build's compiler peaking at
    /// `peak` MiB on the first), then the jobs gone; `swap_total` MiB of swap.
    fn make_j4(swap_total: u64, cg: &str, peak: &str, thrash: &str) -> String {
        let mut s = String::from(HEADER_FULL);
        s.push_str(&cg_line(0, 0, swap_total, cg, "", QUIET));
        for (e, left) in [(15, "120"), (30, "20"), (45, "10")] {
            let left = if cg.is_empty() { "" } else { left };
            let p = if e == 15 { peak } else { "" };
            s.push_str(&cg_line(e, 4, swap_total, left, p, thrash));
        }
        s.push_str(&cg_line(60, 0, swap_total, cg, "", QUIET));
        s
    }

    /// `make_j4` with the host's memory short on the four-compiler rows
    /// (1000 of 24004 MiB available) and 22604 MiB before them.
    fn make_j4_host_short(peak: &str) -> String {
        make_j4(1024, "", peak, FILE_THRASH)
            .replace(",1400,22604,6,0,50,50,4,", ",23004,1000,95,0,50,50,4,")
    }

    /// The advice line of file-page thrash, after `— `.
    fn file_advice(fit: &str) -> String {
        std::format!(
            "    advice: file pages thrashed, no swap-in: too many jobs for the memory — {fit}\n"
        )
    }

    #[test]
    fn file_thrash_without_swap_in_advises_the_j_that_fits_not_zram() {
        let s = summary(&make_j4(1024, "1010", "350", FILE_THRASH));
        let slow = s.slow();
        assert_eq!(slow.thrash_kind(), Some(ThrashKind::File));
        assert_eq!(slow.thrashing_kind_s(ThrashKind::File), 45);
        assert_eq!(slow.thrashing_kind_s(ThrashKind::Swap), 0);
        // 1010 MiB before the jobs (22604 on the host): 0.9 × 1010 / 350 = 2.
        assert_eq!(
            slow.fit(Some(350)),
            Some(Fit {
                jobs: 2,
                memory_jobs: 2,
                peak_mb: 350,
                usable_mb: 1010,
                thrash_compilers: 4
            })
        );
        let t = text(&s);
        let want = std::format!(
            "\nWHY IT WAS SLOW:
  thrashing: 45s (swap-in >= 1 MiB/s, or >= 100 major faults/s or >= 1000 refaults/s with memory short, 2 rows or more)
    worst minute: 0s to 45s after the start (to {}): 9450000 refaults
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 0.00 MiB/s swap-in, 0.00 MiB/s swap-out, 52000 major faults/s, 210000 refaults/s
{}  peak temperature: 55.0 °C  at ",
            Iso::from_epoch(1_796_000_045).as_str(),
            file_advice(
                "-j2 fits (peak 350 MiB per job, 1010 MiB usable): make -j2 or headroom run --jobserver"
            )
        );
        assert!(t.contains(&want), "{t}");
        assert!(
            !t.contains(ADVICE_ZRAM) && !t.contains(ADVICE_DISK_ANY),
            "{t}"
        );
    }

    #[test]
    fn swap_thrash_keeps_the_zram_advice() {
        let swapping = "5.00,4.00,1500,900,6.00,4.00,40,55.0,100,";
        let s = summary(&make_j4(1024, "1010", "350", swapping));
        assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::Swap));
        let t = text(&s);
        assert!(
        t.contains(&std::format!(
            ": 225.00 MiB swapped in\n    stage=compile  context=[1/4] CC sqlite3.c\n    peaks: 5.00 MiB/s swap-in, 4.00 MiB/s swap-out, 1500 major faults/s, 900 refaults/s\n    advice: {ADVICE_ZRAM}\n"
        )),
        "{t}"
    );
        assert!(!t.contains("file pages"), "{t}");
        let j = json(&s);
        assert!(
        j.contains(",\"thrash_kind\":\"swap\",\"swap_thrashing_s\":45,\"file_thrashing_s\":0,\"fitting_jobs\":null,"),
        "{j}"
    );
    }

    #[test]
    fn a_disk_busy_reading_while_file_pages_thrash_is_not_the_cards_fault() {
        let s = summary(&make_j4(1024, "1010", "350", FILE_THRASH_READING));
        assert_eq!(s.slow().disk_busy_s(), 45);
        assert_eq!(s.slow().disk_busy_thrash_s(), 45);
        let t = text(&s);
        let want = std::format!(
        "  build disk >= 90% busy: 45s
    busiest minute: 0s to 1m00s after the start (to {}): busy 45 s of 60
    stage=compile  context=[1/4] CC sqlite3.c
    peaks: 840.00 MiB/s read, 1.00 MiB/s write
    45s of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault
    advice: {ADVICE_DISK_THRASH}
",
        Iso::from_epoch(1_796_000_060).as_str()
    );
        assert!(t.contains(&want), "{t}");
        assert!(
            t.contains("too many jobs for the memory — -j2 fits ("),
            "{t}"
        );
        assert!(!t.contains(ADVICE_DISK_ANY), "{t}");
        let j = json(&s);
        assert!(
        j.contains(",\"thrash_kind\":\"file\",\"swap_thrashing_s\":0,\"file_thrashing_s\":45,\"fitting_jobs\":2,\"fitting_peak_mb\":350,\"fitting_usable_mb\":1010,\"thrash_compilers\":4,\"disk_busy_s\":45,"),
        "{j}"
    );
        assert!(j.contains(",\"disk_busy_thrash_s\":45,"), "{j}");
    }

    #[test]
    fn a_disk_busy_outside_the_thrash_keeps_the_card_advice() {
        let mut data = make_j4(1024, "1010", "350", FILE_THRASH_READING);
        // Then 30 s of linking, writing, with nothing thrashing.
        let link = "0.00,0.00,3,0,1.00,60.00,100,55.0,100,";
        data.push_str(&cg_line(75, 1, 1024, "900", "", link));
        data.push_str(&cg_line(90, 1, 1024, "900", "", link));
        let s = summary(&data);
        assert_eq!(
            (s.slow().disk_busy_s(), s.slow().disk_busy_thrash_s()),
            (75, 45)
        );
        let t = text(&s);
        assert!(
        t.contains(&std::format!(
            "    45s of it while file pages thrashed: the thrash's own reads (evicted pages read again), not the disk's fault\n    advice for the other 30s: {ADVICE_DISK_ANY}\n"
        )),
        "{t}"
    );
        // Busy writing while thrashing is not the thrash's reading.
        let writing = "0.00,0.00,52000,210000,10.00,80.00,100,55.0,100,";
        let s = summary(&make_j4(1024, "1010", "350", writing));
        assert_eq!(s.slow().disk_busy_thrash_s(), 0);
        assert!(text(&s).contains(&std::format!("    advice: {ADVICE_DISK_ANY}\n")));
    }

    #[test]
    fn no_swap_at_all_is_file_thrash_and_the_fit_stays_below_the_jobs_that_thrashed() {
        // No swap device: even a swap-in column above 1 MiB/s (a swapoff
        // reading pages back) is not swap thrash.
        let odd = "1.50,0.00,52000,210000,40.00,1.00,40,55.0,100,";
        for thrash in [FILE_THRASH, odd] {
            let s = summary(&make_j4(0, "1010", "200", thrash));
            assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
            // 0.9 × 1010 / 200 = 4, but four compilers thrashed: 3.
            let want = "-j3 at most: 4 compilers thrashed, though peak 200 MiB per job would allow 4 in 1010 MiB usable (the thrash kept the peak low): make -j3 or headroom run --jobserver";
            let t = text(&s);
            let advice = if thrash == odd {
                file_advice(want).replace("no swap-in", "no swap")
            } else {
                file_advice(want)
            };
            assert!(t.contains(&advice), "{t}");
            assert!(!t.contains(ADVICE_ZRAM), "{t}");
        }
    }

    #[test]
    fn a_little_swap_in_beside_the_faults_is_still_file_thrash() {
        let little = "0.40,0.10,52000,210000,40.00,1.00,40,55.0,100,";
        let s = summary(&make_j4(1024, "1010", "350", little));
        assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
        let t = text(&s);
        let want = file_advice(
            "-j2 fits (peak 350 MiB per job, 1010 MiB usable): make -j2 or headroom run --jobserver",
        );
        assert!(
            t.contains(&want.replace("no swap-in", "swap-in under 1 MiB/s")),
            "{t}"
        );
        // Named by its refaults, not by the 18 MiB it swapped in.
        assert!(t.contains(": 9450000 refaults\n"), "{t}");
    }

    #[test]
    fn the_fit_without_a_cgroup_a_peak_or_room_for_one_job() {
        // No cgroup limit: the host's 22604 MiB; 0.9 × 22604 / 5000 = 4,
        // one fewer than the four compilers.
        let t = text(&summary(&make_j4_host_short("5000")));
        assert!(t.contains(&file_advice("-j3 at most: 4 compilers thrashed, though peak 5000 MiB per job would allow 4 in 22604 MiB usable (the thrash kept the peak low): make -j3 or headroom run --jobserver")), "{t}");
        let t = text(&summary(&make_j4_host_short("9000")));
        assert!(t.contains(&file_advice("-j2 fits (peak 9000 MiB per job, 22604 MiB usable): make -j2 or headroom run --jobserver")), "{t}");
        let t = text(&summary(&make_j4(1024, "1010", "950", FILE_THRASH)));
        assert!(t.contains(&file_advice("not even -j1 fits (peak 950 MiB per job, 1010 MiB usable): make -j1, and more memory (headroom advise)")), "{t}");
        let s = summary(&make_j4(1024, "1010", "", FILE_THRASH));
        let t = text(&s);
        assert!(
            t.contains(&file_advice(
                "fewer jobs (no compiler peak recorded to size them): headroom run --jobserver"
            )),
            "{t}"
        );
        assert!(json(&s).contains(",\"thrash_kind\":\"file\",\"swap_thrashing_s\":0,\"file_thrashing_s\":45,\"fitting_jobs\":null,"));
    }

    #[test]
    fn refaults_alone_are_file_thrash_when_the_faults_stay_under_100() {
        // Four workers in a 200 MiB cgroup re-reading mapped files: each major
        // fault read the pages around it, 90 faults/s beside 150000 refaults/s.
        let refaulting = "0.00,0.00,90,150000,600.00,2.00,55,50.0,100,";
        let s = summary(&make_j4(0, "181", "78", refaulting));
        assert_eq!(s.slow().thrashing_s(), 45);
        assert_eq!(s.slow().thrash_kind(), Some(ThrashKind::File));
        let t = text(&s);
        assert!(t.contains(": 6750000 refaults\n"), "{t}");
        assert!(
        t.contains(&file_advice(
            "-j2 fits (peak 78 MiB per job, 181 MiB usable): make -j2 or headroom run --jobserver"
        )),
        "{t}"
    );
        assert!(json(&s).contains(",\"thrashing_minute\":{\"refaults\":6750000,"));
        // 999 refaults/s and 99 faults/s: not thrashing.
        let below = "0.00,0.00,99,999,600.00,2.00,55,50.0,100,";
        let s = summary(&make_j4(0, "181", "78", below));
        assert_eq!(s.slow().thrashing_s(), 0);
    }

    /// Four compilers on a 24004 MiB host with no cgroup limit, `avail`
    /// MiB available, PSI memory `some avg10` `psi` (empty: no PSI), the
    /// slow columns `slow`.
    fn host_line(elapsed: u64, avail: u64, psi: &str, slow: &str) -> String {
        let mem = std::format!(
            ",{},{avail},{},0,50,50,4,",
            24004 - avail,
            (24004 - avail) * 100 / 24004
        );
        cg_line(elapsed, 4, 0, "", "", slow)
            .replace(",1400,22604,6,0,50,50,4,", &mem)
            .replacen(",51200,0,,,", &std::format!(",51200,0,,{psi},"), 1)
    }

    /// A run of three rows refaulting at `slow` with `avail` MiB available
    /// and PSI `psi`: its seconds of file-page thrash.
    fn file_thrash_s(avail: u64, psi: &str, slow: &str) -> u64 {
        let mut data = String::from(HEADER_FULL);
        for e in [0, 15, 30] {
            data.push_str(&host_line(e, avail, psi, slow));
        }
        let s = summary(&data);
        s.slow().thrashing_kind_s(ThrashKind::File)
    }

    /// Issue 33: `dd conv=notrunc` rewriting its own file on an idle 24 GiB
    /// host refaults (and faults) with GiBs available and no pressure: no
    /// thrash, no "too many jobs". The same refaults while memory was
    /// short (little available, or pressure with under a quarter
    /// available) are file-page thrash.
    #[test]
    fn refaults_are_file_thrash_only_while_memory_was_short() {
        // 1500 major faults/s, 40000 refaults/s, no swap-in or -out.
        let rewrite = "0.00,0.00,1500,40000,80.00,80.00,60,45.0,60,";
        let swapping_out = "0.00,3.00,1500,40000,80.00,80.00,60,45.0,60,";
        for (avail, psi, slow, thrash_s) in [
            (22604, "", rewrite, 0),      // idle host: a rewrite, not thrash
            (22604, "0.00", rewrite, 0),  // PSI says nothing waited
            (22604, "35.00", rewrite, 0), // host PSI of another cgroup, 94 % free
            (22604, "", swapping_out, 0), // another cgroup swapping out
            (2000, "", rewrite, 30),      // 8 % available: short
            (5000, "35.00", rewrite, 30), // pressure, 21 % available
            (5000, "9.99", rewrite, 0),   // under the PSI threshold, 21 % available
            (5000, "", swapping_out, 30), // swap-out, 21 % available
            (7000, "35.00", rewrite, 0),  // pressure, but 29 % available
        ] {
            assert_eq!(
                file_thrash_s(avail, psi, slow),
                thrash_s,
                "{avail} MiB available, PSI {psi:?}, {slow}"
            );
        }
        // The idle rewrite's summary has no thrash finding nor its advice.
        let mut data = String::from(HEADER_FULL);
        for e in [0, 15, 30] {
            data.push_str(&host_line(e, 22604, "0.00", rewrite));
        }
        let t = text(&summary(&data));
        assert!(
            !t.contains("thrash") && !t.contains(ADVICE_FILE_THRASH),
            "{t}"
        );
        // A bound cgroup's limit is the base: 90 of 1024 MiB is short,
        // though the host has 22604 MiB.
        let mut r = CsvRows::new();
        let mut rows = std::vec::Vec::new();
        let data = std::format!("{HEADER_FULL}{}", cg_line(15, 4, 0, "90", "", rewrite));
        r.feed(data.as_bytes(), &mut |row| rows.push(row.clone()))
            .unwrap();
        r.feed(&[], &mut |row| rows.push(row.clone())).unwrap();
        rows[0].ext.cg_mem_limit_mb = Some(1024);
        assert!(memory_short(&rows[0]));
        let mut roomy = rows[0].clone();
        roomy.ext.cg_mem_avail_mb = Some(900);
        assert!(!memory_short(&roomy));
        // /proc/meminfo unread: the cgroup's two columns, else pressure.
        let mut blind = rows[0].clone();
        blind.mem_known = false;
        assert!(memory_short(&blind));
        blind.ext.cg_mem_limit_mb = None;
        assert!(!memory_short(&blind));
        blind.ext.psi_mem_some_avg10 = Some(Decimal::from_centi(2000));
        assert!(memory_short(&blind));
    }
}
