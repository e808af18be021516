//! The Prometheus text exposition of the latest sample, for node_exporter's
//! textfile collector (`--collector.textfile.directory`): `--prom FILE` on
//! `record` and `run`.
//!
//! [`render`] is pure: the row, the summary so far and the labels in, text
//! out, into a fixed buffer. [`PromFile`] replaces FILE with it after every
//! tick ([`crate::report::replace`]), so the collector never reads half a file.
//!
//! Base units as Prometheus asks: bytes (the CSV's MiB × 1048576, so a
//! multiple of 1 MiB), seconds, ratios 0–1; counters end in `_total` and
//! only go up while one recording lasts (they start again at the next: the
//! `headroom_start_time_seconds` gauge tells the recordings apart). A figure
//! whose source could not be read this tick is left out, never given as 0.
//! Every series carries `run_id`, so two recordings on one host exposed by
//! one node_exporter do not collide.
//!
//! # References
//! Prometheus "Exposition formats" (text format 0.0.4): HELP and TYPE
//! lines, label value escaping (`\\`, `\"`, `\n`), metric and label naming;
//! node_exporter's README, "Textfile Collector"; rename(2).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use ufmt::{uWrite, uwrite};

use crate::kernel::throttled::Flags;
use crate::report::replace;
use crate::report::summary::Summary;
use crate::report::summary::why_slow::Slow;
use crate::tick::held::Held;
use crate::tick::row::columns::{
    Family, Kind, Label, Metric, Prom, counter, gauge, int, mib, prom_families,
};
use crate::tick::row::{BufferFull, Row};

/// Byte capacity of one exposition. Fixed text (HELP, TYPE, names) is
/// about 9 KiB; each series carries `run_id` (at most 255 bytes, 510
/// escaped), the disk path label is at most 4095 bytes (PATH_MAX less its
/// NUL, 8 KiB escaped), the stage 64 bytes: 43.8 KB with the largest of
/// every label and value (`the_largest_labels_fit`). 56 KiB leaves room.
pub const PROM_CAP: usize = 56 * 1024;

/// The exposition text of one tick.
pub type PromText = heapless::String<PROM_CAP>;

/// The values every series or some series are labelled with.
#[derive(Clone, Copy, Debug)]
pub struct Labels<'a> {
    /// The run id (`resources-<run_id>.csv`), on every series.
    pub run_id: &'a str,
    /// The build disk's path (`--disk-path`), on the disk series.
    pub disk_path: &'a str,
}

/// The exposition's own families (the rest are the columns' own,
/// [`crate::tick::row::columns::Prom`]), each with its place: families are
/// written by rising place, the columns' among these.
struct Own {
    /// Place in the exposition, as [`Prom::at`].
    at: u16,
    /// Name, type and HELP.
    family: Family,
    /// The value from the latest row, the summary (which has seen it) and
    /// whether the recording goes on.
    value: fn(&Row, &Summary, bool) -> Option<Metric>,
}

/// The exposition's own families, by rising place. Names follow the
/// Prometheus naming guide: `headroom_` prefix, base unit, `_total` on
/// counters.
const OWN: [Own; 20] = [
    Own {
        at: 0,
        family: gauge(
            "headroom_recording",
            "1 while headroom records; 0 once the recording has ended (the file then keeps the last sample).",
        ),
        value: |_, _, recording| int(u64::from(recording)),
    },
    Own {
        at: 10,
        family: gauge(
            "headroom_start_time_seconds",
            "Unix time of the recording's first sample.",
        ),
        value: |r, _, _| int(r.epoch.saturating_sub(r.elapsed_s)),
    },
    Own {
        at: 30,
        family: counter(
            "headroom_samples_total",
            "Samples taken since the recording started.",
        ),
        value: |_, s, _| int(s.samples()),
    },
    Own {
        at: 40,
        family: counter(
            "headroom_csv_rows_lost_total",
            "Samples whose CSV row could not be written (disk full).",
        ),
        value: |_, s, _| int(s.lost),
    },
    // Once a row had memory figures the summary has set the threshold from
    // them (scaled on a small host), so it is never the bare default here.
    Own {
        at: 70,
        family: gauge(
            "headroom_near_oom_threshold_bytes",
            "The summary's near-OOM threshold: MemAvailable below it counts as near OOM.",
        ),
        value: |r, s, _| mib(s.near_oom().value()).filter(|_| r.mem_known),
    },
    Own {
        at: 210,
        family: gauge(
            "headroom_compiler_rss_peak_bytes",
            "Largest single compiler resident size seen on the host since the recording started.",
        ),
        value: |_, s, _| mib(s.peak_rss_mb()?),
    },
    Own {
        at: 220,
        family: counter(
            "headroom_oom_kills_total",
            "Kernel OOM kills on the host since the recording started (/proc/vmstat oom_kill, Linux 4.13+).",
        ),
        value: |_, s, _| int(s.oom_kills()?),
    },
    Own {
        at: 225,
        family: counter(
            "headroom_container_oom_kills_total",
            "In a container: OOM kills in its memory cgroup since the recording started (memory.events or memory.oom_control oom_kill); absent outside one.",
        ),
        value: |_, s, _| int(s.container_oom_kills()?),
    },
    Own {
        at: 240,
        family: gauge(
            "headroom_build_compiler_rss_peak_bytes",
            "Largest single compiler resident size of the build seen since the recording started.",
        ),
        value: |_, s, _| mib(s.build_peak_rss_mb()?),
    },
    Own {
        at: 250,
        family: counter(
            "headroom_build_oom_kills_total",
            "OOM kills in the build: its cgroup's oom_kill, or the victims named by the kernel's OOM reports in /dev/kmsg among its processes; absent while a kill on the host may be its but could not be placed.",
        ),
        value: |_, s, _| int(s.build_oom_kills()?),
    },
    Own {
        at: 290,
        family: counter(
            "headroom_job_pauses_total",
            "run --jobserver: jobs paused since the build started.",
        ),
        value: |r, _, _| int(r.pauses?.0.into()),
    },
    Own {
        at: 300,
        family: counter(
            "headroom_jobs_paused_seconds_total",
            "run --jobserver: time jobs spent paused, summed over jobs.",
        ),
        value: |r, _, _| Some(Metric::Fixed(r.pauses?.1, 3)),
    },
    // WHY IT WAS SLOW's times, once a row had one of their columns.
    Own {
        at: 410,
        family: counter(
            "headroom_thrashing_seconds_total",
            "Time thrashing since the recording started: swap-in at least 1 MiB/s, 100 major faults/s or 1000 refaults/s while memory was short, held two samples or more.",
        ),
        value: |_, s, _| slow_time(s, |s| Some(s.thrashing_s())),
    },
    Own {
        at: 420,
        family: counter(
            "headroom_disk_busy_seconds_total",
            "Time the build disk was at least 90 % busy since the recording started.",
        ),
        value: |_, s, _| slow_time(s, |s| Some(s.disk_busy_s())),
    },
    Own {
        at: 430,
        family: counter(
            "headroom_throttled_seconds_total",
            "Time freq-capped, throttled or at the soft temperature limit since the recording started.",
        ),
        value: |_, s, _| slow_time(s, |s| s.throttled_s()),
    },
    Own {
        at: 440,
        family: counter(
            "headroom_under_voltage_seconds_total",
            "Time under-voltage since the recording started.",
        ),
        value: |_, s, _| slow_time(s, |s| s.under_voltage_s()),
    },
    Own {
        at: 450,
        family: gauge(
            "headroom_cpu_temperature_peak_celsius",
            "The highest CPU temperature seen since the recording started.",
        ),
        value: |_, s, _| s.slow().peak_temp().map(Metric::Tenths),
    },
    Own {
        at: 460,
        family: gauge(
            "headroom_pool_builds",
            "run --jobserver --pool: the other builds whose leases this governor counted.",
        ),
        value: |r, _, _| int(r.pool?.others.into()),
    },
    Own {
        at: 470,
        family: gauge(
            "headroom_pool_reserved_bytes",
            "run --jobserver --pool: the growth the other builds in the pool reserve.",
        ),
        value: |r, _, _| mib(r.pool?.others_growth_mb),
    },
    Own {
        at: 480,
        family: gauge(
            "headroom_pool_own_reserved_bytes",
            "run --jobserver --pool: the growth this build reserves in the pool.",
        ),
        value: |r, _, _| mib(r.pool?.own_growth_mb),
    },
];

/// Writes `s` as a label value: `\` → `\\`, `"` → `\"`, LF → `\n`
/// (the text format's escapes; every other byte as is).
fn escape_label(w: &mut Held<'_, PromText>, s: &str) {
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            b'\n' => "\\n",
            _ => continue,
        };
        let Ok(()) = w.write_str(&s[from..i]);
        let Ok(()) = w.write_str(esc);
        from = i + 1;
    }
    let Ok(()) = w.write_str(&s[from..]);
}

/// A WHY IT WAS SLOW time, once a row had one of its columns.
fn slow_time(s: &Summary, time: fn(&Slow) -> Option<u64>) -> Option<Metric> {
    let slow = s.slow();
    if slow.has_data() {
        int(time(slow)?)
    } else {
        None
    }
}

/// The exposition being written: a family's HELP/TYPE comes once, before
/// its first sample. Through [`Held`]: no test after each piece (smaller
/// code); the first piece that does not fit ends the writing, and
/// [`render`] reports it.
struct Out<'w, 'h, 'l> {
    w: &'w mut Held<'h, PromText>,
    labels: Labels<'l>,
}

impl Out<'_, '_, '_> {
    fn head(&mut self, f: &Family) {
        let kind = match f.kind {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
        };
        let Ok(()) = uwrite!(
            self.w,
            "# HELP {} {}\n# TYPE {} {}\n",
            f.name,
            f.help,
            f.name,
            kind
        );
    }

    /// Writes family `f` with its sample of value `v` and the extra label
    /// `extra` (name, value), or nothing when `v` is `None`; throttle flags
    /// are one sample per flag, labelled `flag`.
    fn one(&mut self, f: &Family, extra: Option<(&str, &str)>, v: Option<Metric>) {
        let Some(v) = v else { return };
        self.head(f);
        let Metric::Flags(flags, seen) = v else {
            return self.sample(f, extra, v);
        };
        for (bit, &name) in Flags::NAMES.iter().enumerate() {
            if (seen >> bit) & 1 == 0 {
                continue;
            }
            let on = Metric::Int(u128::from((flags >> bit) & 1));
            self.sample(f, Some(("flag", name)), on);
        }
    }

    /// A column's family: its value and label from `row`.
    fn column(&mut self, p: &Prom, row: &Row) {
        let extra = match p.label {
            Label::None => None,
            Label::Row(name, value) => Some((name, value(row))),
            Label::DiskPath => Some(("path", self.labels.disk_path)),
        };
        self.one(&p.family, extra, (p.value)(row));
    }

    /// One sample line of family `f`.
    fn sample(&mut self, f: &Family, extra: Option<(&str, &str)>, v: Metric) {
        let Ok(()) = uwrite!(self.w, "{}{{run_id=\"", f.name);
        escape_label(self.w, self.labels.run_id);
        if let Some((name, value)) = extra {
            let Ok(()) = uwrite!(self.w, "\",{}=\"", name);
            escape_label(self.w, value);
        }
        let Ok(()) = self.w.write_str("\"} ");
        let Ok(()) = match v {
            Metric::Int(n) => uwrite!(self.w, "{}\n", n),
            Metric::Fixed(n, digits) => {
                let scale = 10u64.pow(digits);
                let Ok(()) = uwrite!(self.w, "{}.", n / scale);
                let frac = n % scale;
                // Leading zeros of the fraction, then its digits.
                let mut pad = scale / 10;
                while pad > 1 && frac < pad {
                    let Ok(()) = self.w.write_str("0");
                    pad /= 10;
                }
                uwrite!(self.w, "{}\n", frac)
            }
            Metric::Tenths(t) => {
                let Ok(()) = t.write(self.w);
                self.w.write_str("\n")
            }
            // Written flag by flag by `one`.
            Metric::Flags(..) => Ok(()),
        };
    }
}

/// Renders the exposition of `row` into `out` (cleared first): the latest
/// sample's figures (the columns' families), `summary`'s counters and
/// peaks (the summary has seen `row`), and `recording` as
/// `headroom_recording`, families by rising place.
///
/// # Errors
/// [`BufferFull`] only when `out` is too small, which [`PROM_CAP`] rules
/// out for a run id of at most 255 bytes and a disk path of at most 4095.
pub fn render(
    row: &Row,
    summary: &Summary,
    labels: Labels<'_>,
    recording: bool,
    out: &mut PromText,
) -> Result<(), BufferFull> {
    out.clear();
    let mut held = Held::new(out);
    let mut o = Out {
        w: &mut held,
        labels,
    };
    let mut columns = prom_families().peekable();
    for own in &OWN {
        while let Some(p) = columns.next_if(|p| p.at < own.at) {
            o.column(p, row);
        }
        o.one(&own.family, None, (own.value)(row, summary, recording));
    }
    for p in columns {
        o.column(p, row);
    }
    held.finish().map_err(|_| BufferFull)
}

/// Why `--prom FILE` cannot be written at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromError {
    /// The name is not usable: empty, `.` or `..`, containing `/` (the
    /// caller splits it from its directory), or longer than 240 bytes.
    Name,
    /// FILE is a symlink: refused, as for the CSV.
    Symlink,
    /// FILE is a directory, device node, FIFO or socket: refused.
    NotRegular,
    /// The first write, or the rename, failed with this errno.
    Io(Errno),
}

/// `--prom FILE`: rewritten after every tick through a temporary file and
/// rename(2) ([`crate::report::replace`]), so node_exporter reads the old or the
/// new exposition, never half of one.
pub struct PromFile {
    dir: OwnedFd,
    name: heapless::String<240>,
    tmp: heapless::String<{ replace::TMP_CAP }>,
    text: PromText,
    /// The latest row, for [`PromFile::finish`].
    last: Option<Row>,
    /// Set while writes fail (the caller warns once, then when they resume).
    pub failing: bool,
}

impl PromFile {
    /// Checks that `name` in `dir` can be written by writing it now, empty
    /// (an empty exposition is valid: no metrics yet), the way every tick
    /// will.
    ///
    /// # Errors
    /// [`PromError`]: a bad name, a symlink at FILE, or the errno of the
    /// first write or rename.
    pub fn create(dir: BorrowedFd<'_>, name: &str) -> Result<PromFile, PromError> {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return Err(PromError::Name);
        }
        let name = heapless::String::try_from(name).map_err(|_| PromError::Name)?;
        let tmp = replace::tmp_name(&name).map_err(|_| PromError::Name)?;
        match replace::target(dir, &name) {
            replace::Target::Symlink => return Err(PromError::Symlink),
            replace::Target::Other => return Err(PromError::NotRegular),
            replace::Target::Absent | replace::Target::Regular { .. } => {}
        }
        let dir = rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(PromError::Io)?;
        let f = PromFile {
            dir,
            name,
            tmp,
            text: PromText::new(),
            last: None,
            failing: false,
        };
        f.write().map_err(PromError::Io)?;
        Ok(f)
    }

    /// Renders `row` (see [`render`]) and replaces FILE with it.
    ///
    /// # Errors
    /// The errno of openat(2), write(2) or rename(2) (ENOSPC on a full
    /// disk); FILE then keeps the previous exposition. NOBUFS if the text
    /// did not fit [`PROM_CAP`].
    pub fn update(
        &mut self,
        row: &Row,
        summary: &Summary,
        labels: Labels<'_>,
        recording: bool,
    ) -> Result<(), Errno> {
        render(row, summary, labels, recording, &mut self.text).map_err(|_| Errno::NOBUFS)?;
        self.last = Some(row.clone());
        self.write()
    }

    /// Rewrites FILE once more when the recording ends, with the last row
    /// and `headroom_recording 0`; nothing when no row was taken.
    ///
    /// # Errors
    /// As [`PromFile::update`].
    pub fn finish(&mut self, summary: &Summary, labels: Labels<'_>) -> Result<(), Errno> {
        let Some(row) = self.last.take() else {
            return Ok(());
        };
        self.update(&row, summary, labels, false)
    }

    fn write(&self) -> Result<(), Errno> {
        replace::write(
            self.dir.as_fd(),
            &self.name,
            &self.tmp,
            self.text.as_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::tick::row::Decimal;

    fn row() -> Row {
        let mut r = Row::empty(1_796_000_600);
        r.elapsed_s = 15;
        r.load1 = Decimal::parse(b"1.07").unwrap();
        r.cpu_pct = 57;
        r.mem_used_mb = 3000;
        r.mem_avail_mb = 900;
        r.swap_used_mb = 12;
        r.disk_avail_gb = 20;
        r.compilers = 3;
        r.stage.push_str("builder").unwrap();
        r.ext.swap_total_mb = Some(2048);
        r.ext.zram_stored_mb = Some(300);
        r.ext.zram_ram_mb = Some(100);
        r.ext.tmp_avail_mb = Some(400);
        r.ext.disk_avail_mb = Some(20_500);
        r.ext.oom_kills = Some(2);
        r.ext.psi_mem_some_avg10 = Decimal::parse(b"4.05");
        r.ext.peak_rss_mb = Some(700);
        r.ext.peak_rss_comm.push_str("cc1plus").unwrap();
        r
    }

    const LABELS: Labels<'static> = Labels {
        run_id: "pi",
        disk_path: "/home/pi",
    };

    fn text(r: &Row, s: &Summary, labels: Labels<'_>) -> PromText {
        let mut t = PromText::new();
        render(r, s, labels, true, &mut t).unwrap();
        t
    }

    /// The value of the one sample of `name`.
    fn value<'t>(t: &'t str, name: &str) -> Option<&'t str> {
        t.lines()
            .find(|l| l.starts_with(name) && l.as_bytes().get(name.len()) == Some(&b'{'))
            .and_then(|l| l.rsplit(' ').next())
    }

    #[test]
    fn figures_are_in_base_units() {
        let r = row();
        let mut s = Summary::new(None, None);
        s.observe(&r);
        let t = text(&r, &s, LABELS);
        let t = t.as_str();
        assert_eq!(
            value(t, "headroom_memory_available_bytes"),
            Some("943718400")
        );
        assert_eq!(value(t, "headroom_memory_used_bytes"), Some("3145728000"));
        assert_eq!(value(t, "headroom_swap_total_bytes"), Some("2147483648"));
        assert_eq!(
            value(t, "headroom_disk_available_bytes"),
            Some("21495808000")
        );
        assert_eq!(value(t, "headroom_cpu_busy_ratio"), Some("0.57"));
        assert_eq!(value(t, "headroom_load1"), Some("1.07"));
        assert_eq!(
            value(t, "headroom_memory_pressure_some_avg10_ratio"),
            Some("0.0405")
        );
        assert_eq!(value(t, "headroom_oom_kills_total"), Some("2"));
        assert_eq!(value(t, "headroom_samples_total"), Some("1"));
        assert_eq!(value(t, "headroom_start_time_seconds"), Some("1796000585"));
        // A 3900 MiB host: the near-OOM threshold is scaled to RAM / 8 = 487 MiB.
        assert_eq!(
            value(t, "headroom_near_oom_threshold_bytes"),
            Some("510656512")
        );
        assert!(
            t.contains("headroom_compiler_rss_bytes{run_id=\"pi\",comm=\"cc1plus\"} 734003200\n")
        );
        assert!(t.contains("headroom_stage_info{run_id=\"pi\",stage=\"builder\"} 1\n"));
        assert!(t.contains("headroom_disk_available_bytes{run_id=\"pi\",path=\"/home/pi\"} "));
    }

    #[test]
    fn every_family_has_help_and_type_before_its_sample() {
        let r = slow_row();
        let mut s = Summary::new(None, None);
        s.observe(&r);
        let t = text(&r, &s, LABELS);
        let mut declared: heapless::Vec<&str, 48> = heapless::Vec::new();
        let mut samples = 0;
        for l in t.lines() {
            if let Some(rest) = l.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(kind == "gauge" || kind == "counter", "{l}");
                assert_eq!(name.ends_with("_total"), kind == "counter", "{l}");
                declared.push(name).unwrap();
            } else if !l.starts_with("# HELP ") {
                let name = l.split('{').next().unwrap();
                assert_eq!(declared.last(), Some(&name), "{l}");
                samples += 1;
            }
        }
        // 22 families of one sample each, 14 of the slow columns and
        // times, and headroom_throttled's 4 flags.
        assert_eq!(samples, 22 + 14 + 4);
        assert_eq!(declared.len(), 22 + 15);
    }

    #[test]
    fn every_family_has_its_own_place() {
        let mut at: std::vec::Vec<u16> = OWN.iter().map(|o| o.at).collect();
        assert!(at.is_sorted(), "OWN is by rising place");
        at.extend(prom_families().map(|p| p.at));
        let n = at.len();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), n, "two families share a place");
    }

    #[test]
    fn label_values_are_escaped() {
        let mut r = row();
        r.stage.clear();
        r.stage.push_str("a\"b\\c").unwrap();
        let mut s = Summary::new(None, None);
        s.observe(&r);
        let labels = Labels {
            run_id: "x\ny",
            disk_path: "/mnt/\"q\"\\\n",
        };
        let t = text(&r, &s, labels);
        assert!(t.contains("stage=\"a\\\"b\\\\c\"} 1\n"), "{t}");
        assert!(t.contains("path=\"/mnt/\\\"q\\\"\\\\\\n\"}"), "{t}");
        assert!(t.contains("{run_id=\"x\\ny\"}"), "{t}");
        // No raw newline inside any sample line: every line is whole.
        for l in t.lines() {
            assert!(l.starts_with('#') || l.starts_with("headroom_"), "{l:?}");
        }
    }

    #[test]
    fn unread_sources_are_left_out_not_zero() {
        let mut r = Row::empty(1_796_000_600);
        r.mem_known = false;
        r.disk_known = false;
        let mut s = Summary::new(None, None);
        s.observe(&r);
        let t = text(&r, &s, LABELS);
        for absent in [
            "headroom_memory_available_bytes",
            "headroom_swap_used_bytes",
            "headroom_disk_available_bytes",
            "headroom_zram_stored_bytes",
            "headroom_cgroup_memory_available_bytes",
            "headroom_load1",
            "headroom_oom_kills_total",
            "headroom_compiler_rss_bytes",
            "headroom_near_oom_threshold_bytes",
        ] {
            assert!(!t.contains(absent), "{absent} in {t}");
        }
        assert_eq!(value(&t, "headroom_cpu_busy_ratio"), Some("0.00"));
        assert!(t.contains("stage=\"?\"} 1"));
    }

    #[test]
    fn the_oom_counter_never_goes_down() {
        let mut s = Summary::new(None, None);
        let mut last = 0u64;
        // The row's figure can be missing or lower (vmstat unreadable, a
        // malformed read); the counter is the summary's running maximum.
        for k in [Some(0), Some(3), None, Some(1), Some(5), None] {
            let mut r = row();
            r.ext.oom_kills = k;
            s.observe(&r);
            let t = text(&r, &s, LABELS);
            let v: u64 = value(&t, "headroom_oom_kills_total")
                .unwrap()
                .parse()
                .unwrap();
            assert!(v >= last);
            last = v;
        }
        assert_eq!(last, 5);
    }

    /// [`row`] with every slow column set.
    fn slow_row() -> Row {
        let mut r = row();
        r.ext.swap_in_mibps = Some(Decimal::from_centi(150));
        r.ext.swap_out_mibps = Some(Decimal::from_centi(1));
        r.ext.majflt_ps = Some(120);
        r.ext.refaults_ps = Some(30);
        r.ext.disk_read_mibps = Some(Decimal::from_centi(0));
        r.ext.disk_write_mibps = Some(Decimal::from_centi(2250));
        r.ext.disk_util_pct = Some(97);
        r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(-35));
        r.ext.cpu_freq_pct = Some(100);
        r.ext.throttled = Some(0b0101);
        r.throttled_seen = Flags::ALL;
        r
    }

    #[test]
    fn slow_columns_and_times_are_exposed_in_base_units() {
        let mut s = Summary::new(None, None);
        let mut r = slow_row();
        // 81.5 °C, then 82.3: no jump to wait on (a jump of 20 °C or more
        // is no peak until the next row confirms it).
        r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(815));
        s.observe(&r);
        r.elapsed_s += 15;
        r.epoch += 15;
        r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(823));
        s.observe(&r);
        let t = text(&r, &s, LABELS);
        let t = t.as_str();
        for (name, want) in [
            ("headroom_swap_in_bytes_per_second", "1572864.00"),
            ("headroom_swap_out_bytes_per_second", "10485.76"),
            ("headroom_major_page_faults_per_second", "120"),
            ("headroom_refaults_per_second", "30"),
            ("headroom_disk_read_bytes_per_second", "0.00"),
            ("headroom_disk_write_bytes_per_second", "23592960.00"),
            ("headroom_disk_busy_ratio", "0.97"),
            ("headroom_cpu_temperature_celsius", "82.3"),
            ("headroom_cpu_frequency_ratio", "1.00"),
            ("headroom_thrashing_seconds_total", "15"),
            ("headroom_disk_busy_seconds_total", "15"),
            ("headroom_throttled_seconds_total", "15"),
            ("headroom_under_voltage_seconds_total", "15"),
            ("headroom_cpu_temperature_peak_celsius", "82.3"),
        ] {
            assert_eq!(value(t, name), Some(want), "{name} in {t}");
        }
        for (flag, v) in [
            ("under-voltage", 1),
            ("freq-capped", 0),
            ("throttled", 1),
            ("soft-temp-limit", 0),
        ] {
            let line = std::format!("headroom_throttled{{run_id=\"pi\",flag=\"{flag}\"}} {v}\n");
            assert!(t.contains(&line), "{line} in {t}");
        }
        assert_eq!(t.matches("# TYPE headroom_throttled gauge").count(), 1);
        // rpi_volt alone: under-voltage only; the three flags it cannot
        // see and the time throttled are absent, not 0.
        let mut volt = slow_row();
        volt.ext.throttled = Some(0);
        volt.throttled_seen = Flags::UNDER_VOLTAGE;
        let mut s = Summary::new(None, None);
        s.observe(&volt);
        let t = text(&volt, &s, LABELS);
        assert!(
            t.contains("headroom_throttled{run_id=\"pi\",flag=\"under-voltage\"} 0\n"),
            "{t}"
        );
        assert_eq!(t.matches("headroom_throttled{").count(), 1, "{t}");
        assert_eq!(value(&t, "headroom_under_voltage_seconds_total"), Some("0"));
        assert!(!t.contains("headroom_throttled_seconds_total"), "{t}");
        let mut cold = slow_row();
        cold.ext.throttled = None;
        let t = text(&cold, &Summary::new(None, None), LABELS);
        assert_eq!(value(&t, "headroom_cpu_temperature_celsius"), Some("-3.5"));
        assert!(!t.contains("headroom_throttled"), "{t}");
        // A row without the columns (a 27-column recording's): none of them.
        let mut s = Summary::new(None, None);
        s.observe(&row());
        let t = text(&row(), &s, LABELS);
        for absent in [
            "_per_second",
            "headroom_disk_busy",
            "celsius",
            "headroom_throttled",
            "thrashing",
        ] {
            assert!(!t.contains(absent), "{absent} in {t}");
        }
    }

    #[test]
    fn the_largest_labels_fit() {
        let mut r = slow_row();
        let big = Some(Decimal::from_centi(u64::MAX));
        r.ext.swap_in_mibps = big.clone();
        r.ext.swap_out_mibps = big.clone();
        r.ext.disk_read_mibps = big.clone();
        r.ext.disk_write_mibps = big;
        r.ext.majflt_ps = Some(u64::MAX);
        r.ext.cpu_temp_c = Some(crate::tick::row::Tenths(i32::MIN));
        r.stage.clear();
        while r.stage.push('"').is_ok() {}
        r.jobs = Some((u32::MAX, u32::MAX, u32::MAX));
        r.pauses = Some((u32::MAX, u64::MAX));
        r.pool = Some(crate::tick::row::PoolFigures {
            others: u32::MAX,
            others_growth_mb: u64::MAX,
            own_growth_mb: u64::MAX,
        });
        r.ext.build_peak_rss_mb = Some(u64::MAX);
        r.ext.build_peak_rss_comm =
            heapless::String::try_from("\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"").unwrap();
        let mut s = Summary::new(None, None);
        s.observe(&r);
        let run_id: heapless::String<255> = (0..255).map(|_| '"').collect();
        let path: heapless::String<4095> = (0..4095).map(|_| '\\').collect();
        let labels = Labels {
            run_id: &run_id,
            disk_path: &path,
        };
        let mut t = PromText::new();
        assert_eq!(render(&r, &s, labels, false, &mut t), Ok(()));
        assert!(t.contains("headroom_recording{"));
        assert!(t.ends_with(" 1\n"));
    }

    #[test]
    fn fixed_point_values_keep_their_zeros() {
        let mut r = row();
        r.cpu_pct = 5;
        r.ext.psi_mem_some_avg10 = Decimal::parse(b"0.07");
        r.load1 = Decimal::parse(b"12").unwrap();
        let s = Summary::new(None, None);
        let t = text(&r, &s, LABELS);
        assert_eq!(value(&t, "headroom_cpu_busy_ratio"), Some("0.05"));
        assert_eq!(
            value(&t, "headroom_memory_pressure_some_avg10_ratio"),
            Some("0.0007")
        );
        assert_eq!(value(&t, "headroom_load1"), Some("12.00"));
        r.cpu_pct = 100;
        let t = text(&r, &s, LABELS);
        assert_eq!(value(&t, "headroom_cpu_busy_ratio"), Some("1.00"));
    }
}
