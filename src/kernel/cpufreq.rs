//! CPU frequency: `scaling_cur_freq` as a share of the maximum, from the
//! cpufreq policies (`/sys/devices/system/cpu/cpufreq/policy<N>/`, since
//! Linux 4.3), else the per-CPU directories (`/sys/devices/system/cpu/
//! cpu<N>/cpufreq/`).
//!
//! All values are kHz. `scaling_cur_freq` is, by the cpufreq core, the
//! frequency the governor last set, or on x86 the APERF/MPERF average over
//! the last tick including turbo: above `cpuinfo_max_freq` is legal there
//! (a Dell under Fedora 6.6: 3 392 691 of 2 100 000), so the share is
//! never clamped. On a Raspberry Pi it is the clock the governor
//! REQUESTED: the firmware caps and throttles behind its back (600 MHz at
//! idle is the `ondemand` floor, 1 800 MHz can be 1 200 in truth), so
//! throttling is never inferred from it; the firmware's word says that
//! ([`crate::kernel::throttled`]). The maximum is `cpuinfo_max_freq` (the
//! hardware's), else `scaling_max_freq` (the policy's limit), read once at
//! start.
//!
//! VMs, containers and boards without a cpufreq driver have neither
//! directory: the share is `None`, no error. Reading is not free: on AMD
//! EPYC in a container one `scaling_cur_freq` read is an ACPI round trip
//! of ~20 ms (libuv#5036), so [`KeptPolicies::read`] reads again at most
//! every [`REREAD_S`] seconds.
//!
//! # References
//! `Documentation/admin-guide/pm/cpufreq.rst` (policy directories,
//! `affected_cpus`, `related_cpus`, `scaling_cur_freq`).

use core::mem::MaybeUninit;

use rustix::fd::BorrowedFd;

use crate::kernel::kept::{Kept, Shape};
use crate::kernel::parse::{ParseError, ParseErrorKind, fields, parse_u64, trim};
use crate::kernel::root::{Root, read_at};
use crate::kernel::sysfs::{Path, entry_path, for_each_numbered, insert_lowest};

/// The policy directory, relative to the root.
pub const POLICY_DIR: &str = "sys/devices/system/cpu/cpufreq";

/// The CPU directory, relative to the root (fallback: `cpu<N>/cpufreq/`).
pub const CPU_DIR: &str = "sys/devices/system/cpu";

/// Most policies kept (one descriptor each, `scaling_cur_freq`): a
/// big.LITTLE SoC has two or three; on a host with more, the lowest
/// numbered four.
pub const KEPT_POLICIES: usize = 4;

/// Least seconds between two reads of `scaling_cur_freq`.
pub const REREAD_S: u64 = 5;

/// Buffer for discovery, in bytes: `affected_cpus` of a 256-CPU policy is
/// ~900 bytes, and a sysfs attribute is at most a page. A tick's read of
/// `scaling_cur_freq` needs 16.
pub const BUF_LEN: usize = 4096;

/// Parses a frequency file (`600000\n`): kHz.
///
/// # Errors
/// [`ParseErrorKind::BadNumber`] when the trimmed text is not one decimal.
pub fn parse_khz(b: &[u8]) -> Result<u64, ParseError> {
    parse_u64(trim(b)).ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))
}

/// Counts the CPUs of `affected_cpus` or `related_cpus` (`0 1 2 3\n`).
///
/// # Errors
/// [`ParseErrorKind::BadNumber`] for a field that is not a decimal.
pub fn parse_cpu_count(b: &[u8]) -> Result<u32, ParseError> {
    let mut n = 0u32;
    for f in fields(b) {
        parse_u64(f).ok_or(ParseError::at(ParseErrorKind::BadNumber, 1))?;
        n = n.saturating_add(1);
    }
    Ok(n)
}

/// One policy's reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// `scaling_cur_freq`, kHz.
    pub cur_khz: u64,
    /// The maximum, kHz.
    pub max_khz: u64,
    /// CPUs the policy governs (its weight).
    pub cpus: u32,
}

/// The mean of `cur / max` over the shares weighted by their CPUs, in
/// percent rounded half up, NOT clamped (114 on the x86 of case 43).
/// Shares with no CPU or a 0 maximum are left out; `None` when none is
/// left.
///
/// ```
/// use headroom::kernel::cpufreq::{Share, weighted_percent};
/// let big = Share { cur_khz: 1_800_000, max_khz: 1_800_000, cpus: 2 };
/// let little = Share { cur_khz: 600_000, max_khz: 1_200_000, cpus: 4 };
/// assert_eq!(weighted_percent([big, little]), Some(67));
/// assert_eq!(weighted_percent([]), None);
/// ```
pub fn weighted_percent(shares: impl IntoIterator<Item = Share>) -> Option<u32> {
    let (mut sum, mut cpus) = (0u128, 0u128);
    for s in shares {
        if s.max_khz == 0 || s.cpus == 0 {
            continue;
        }
        let w = u128::from(s.cpus);
        let share = w * u128::from(s.cur_khz) * 100_000 / u128::from(s.max_khz);
        sum = sum.saturating_add(share);
        cpus = cpus.saturating_add(w);
    }
    if cpus == 0 {
        return None;
    }
    u32::try_from((sum / cpus + 500) / 1000).ok()
}

/// A policy chosen at start.
#[derive(Debug)]
struct Policy {
    cur: Path,
    max_khz: u64,
    cpus: u32,
    kept: Kept,
}

/// The policies found at start, `scaling_cur_freq` read through one kept
/// descriptor each, at most every [`REREAD_S`] seconds.
#[derive(Debug)]
pub struct KeptPolicies {
    policies: heapless::Vec<Policy, KEPT_POLICIES>,
    last_read: Option<u64>,
    last: Option<u32>,
}

impl KeptPolicies {
    /// Finds the lowest-numbered [`KEPT_POLICIES`] policies under `root`
    /// whose maximum reads (weighted by `affected_cpus`, else
    /// `related_cpus`, else 1), else as many `cpu<N>/cpufreq/` directories
    /// (one CPU each). Kept open from the first read when `keep` (the live
    /// root). None found is not an error ([`KeptPolicies::is_empty`]).
    ///
    /// `scratch` is the getdents64(2) buffer (any size); `buf` receives
    /// each file ([`BUF_LEN`] bytes). Reads two or three small files for
    /// each entry ([`crate::kernel::sysfs::for_each_numbered`]: all of them).
    pub fn discover(
        root: &Root,
        keep: bool,
        scratch: &mut [MaybeUninit<u8>],
        buf: &mut [u8],
    ) -> KeptPolicies {
        let dir = root.fd();
        let mut found = heapless::Vec::<(u32, Policy), KEPT_POLICIES>::new();
        let _ = for_each_numbered(dir, POLICY_DIR, b"policy", scratch, |n| {
            if let Some(p) = policy(dir, (POLICY_DIR, "policy", n, ""), keep, buf) {
                insert_lowest(&mut found, n, p);
            }
        });
        if found.is_empty() {
            let _ = for_each_numbered(dir, CPU_DIR, b"cpu", scratch, |n| {
                if let Some(p) = policy(dir, (CPU_DIR, "cpu", n, "cpufreq/"), keep, buf) {
                    insert_lowest(&mut found, n, p);
                }
            });
        }
        KeptPolicies {
            policies: found.into_iter().map(|(_, p)| p).collect(),
            last_read: None,
            last: None,
        }
    }

    /// Policies kept.
    pub fn len(&self) -> usize {
        self.policies.len()
    }

    /// True when there is no cpufreq (the `cpu_freq_pct` field stays
    /// empty).
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// Descriptors held now (at most [`KEPT_POLICIES`]).
    pub fn open(&self) -> usize {
        self.policies.iter().filter(|p| p.kept.is_open()).count()
    }

    /// The weighted share of the maximum, percent ([`weighted_percent`]),
    /// at the tick of `epoch_s` (Unix seconds): read anew (one pread per
    /// policy on the live root) when [`REREAD_S`] seconds have passed since
    /// the last read or the clock went back, else the last value. A policy
    /// whose read fails is left out of that read; `None` when all fail or
    /// none was found. `buf`: 16 bytes or more.
    pub fn read(&mut self, root: &Root, epoch_s: u64, buf: &mut [u8]) -> Option<u32> {
        if let Some(t) = self.last_read
            && epoch_s >= t
            && epoch_s - t < REREAD_S
        {
            return self.last;
        }
        self.last_read = Some(epoch_s);
        let dir = root.fd();
        let shares = self.policies.iter_mut().filter_map(|p| {
            let b = p.kept.read(dir, &p.cur, buf, Shape::Whole).ok()?;
            Some(Share {
                cur_khz: parse_khz(b).ok()?,
                max_khz: p.max_khz,
                cpus: p.cpus,
            })
        });
        self.last = weighted_percent(shares);
        self.last
    }
}

/// The policy in `dir/prefix<n>/sub` when a maximum reads and is not 0
/// (`cpuinfo_max_freq`, else `scaling_max_freq`: a driver whose
/// hardware maximum reads 0 still has the policy's).
fn policy(
    dir: BorrowedFd<'_>,
    (class, prefix, n, sub): (&str, &str, u32, &str),
    keep: bool,
    buf: &mut [u8],
) -> Option<Policy> {
    let file = |name: &str| -> Option<Path> {
        let mut rel = Path::new();
        rel.push_str(sub).ok()?;
        rel.push_str(name).ok()?;
        entry_path(class, prefix, n, &rel)
    };
    let max_khz = ["cpuinfo_max_freq", "scaling_max_freq"]
        .iter()
        .find_map(|f| {
            parse_khz(read_at(dir, &file(f)?, buf).ok()?)
                .ok()
                .filter(|&m| m > 0)
        })?;
    let cpus = ["affected_cpus", "related_cpus"]
        .iter()
        .filter(|_| sub.is_empty())
        .find_map(|f| parse_cpu_count(read_at(dir, &file(f)?, buf).ok()?).ok())
        .unwrap_or(1);
    Some(Policy {
        cur: file("scaling_cur_freq")?,
        max_khz,
        cpus,
        kept: Kept::new(keep),
    })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

    fn root(case: &str) -> Root {
        Root::open(&std::format!("{FIX}{case}")).unwrap()
    }

    fn discover(r: &Root, keep: bool) -> KeptPolicies {
        let mut scratch = [MaybeUninit::uninit(); 1024];
        KeptPolicies::discover(r, keep, &mut scratch, &mut [0u8; BUF_LEN])
    }

    fn khz(path: &str) -> u64 {
        parse_khz(&std::fs::read(std::format!("{FIX}{path}")).unwrap()).unwrap()
    }

    #[test]
    fn fixture_42_rpi_cpufreq_requested_vs_measured() {
        let d = "42-rpi-cpufreq-requested-vs-measured/sys/devices/system/cpu/cpu0/cpufreq/";
        assert_eq!(khz(&std::format!("{d}scaling_cur_freq")) / 1000, 600);
        assert_eq!(khz(&std::format!("{d}scaling_max_freq")) / 1000, 1800);
        assert_eq!(khz(&std::format!("{d}scaling_min_freq")) / 1000, 600);
        let r = root("42-rpi-cpufreq-requested-vs-measured");
        let mut p = discover(&r, false);
        assert_eq!(p.len(), 1, "no policy dir: cpu0/cpufreq, scaling_max_freq");
        // 0.333: the requested clock, idle at the ondemand floor.
        assert_eq!(p.read(&r, 1000, &mut [0u8; 64]), Some(33));
    }

    #[test]
    fn fixture_43_cpufreq_absent_or_above_max() {
        let r = root("43-cpufreq-absent-or-above-max/hosts/dell-fedora-6.6");
        let mut p = discover(&r, false);
        assert_eq!(p.len(), 4);
        let d = "43-cpufreq-absent-or-above-max/hosts/dell-fedora-6.6/sys/devices/system/cpu/cpu0/cpufreq/";
        assert_eq!(khz(&std::format!("{d}scaling_cur_freq")), 3_392_691);
        assert_eq!(khz(&std::format!("{d}scaling_max_freq")), 2_100_000);
        assert_eq!(khz(&std::format!("{d}cpuinfo_cur_freq")), 1_400_000);
        // (3392691 + 3393772 + 1396711 + 1397417) / 4 / 2100000 = 114.05 %:
        // above 100, not clamped.
        assert_eq!(p.read(&r, 0, &mut [0u8; 64]), Some(114));
        let cpu0 = Share {
            cur_khz: 3_392_691,
            max_khz: 2_100_000,
            cpus: 1,
        };
        assert_eq!(weighted_percent([cpu0]), Some(162));
        let r = root("43-cpufreq-absent-or-above-max/hosts/nanopi-neo2-no-cpufreq");
        let mut p = discover(&r, true);
        assert!(p.is_empty());
        assert_eq!(p.read(&r, 0, &mut [0u8; 64]), None);
        assert_eq!(p.open(), 0);
    }

    fn write(d: &std::path::Path, rel: &str, text: &str) {
        let f = d.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    /// Policies win over cpu<N>/cpufreq, are weighted by their CPUs, at
    /// most four are kept (one descriptor each), and a read comes at most
    /// every five seconds.
    #[test]
    fn policies_weighted_bounded_and_read_every_five_seconds() {
        let d = std::env::temp_dir().join(std::format!("headroom-cpufreq-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let pol = "sys/devices/system/cpu/cpufreq/policy";
        // policy0: 4 little CPUs at half; policy4: 2 big at full; 6..9 more.
        for (n, cur, max, cpus) in [
            (0, "600000", "1200000", "0 1 2 3\n"),
            (4, "1800000", "1800000", "4 5\n"),
            (6, "1000", "1000", "6\n"),
            (7, "1000", "1000", "7\n"),
            (9, "1000", "1000", "9\n"),
        ] {
            write(&d, &std::format!("{pol}{n}/scaling_cur_freq"), cur);
            write(&d, &std::format!("{pol}{n}/cpuinfo_max_freq"), max);
            write(&d, &std::format!("{pol}{n}/affected_cpus"), cpus);
        }
        write(&d, &std::format!("{pol}8/scaling_cur_freq"), "5");
        write(
            &d,
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
            "1",
        );
        write(
            &d,
            "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
            "1",
        );
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut p = discover(&r, true);
        assert_eq!(p.len(), KEPT_POLICIES, "0, 4, 6, 7 (8 has no maximum)");
        let mut buf = [0u8; 64];
        // (4 × 50 + 2 × 100 + 100 + 100) / 8 = 75.
        assert_eq!(p.read(&r, 100, &mut buf), Some(75));
        assert_eq!(p.open(), 4);
        write(&d, &std::format!("{pol}0/scaling_cur_freq"), "1200000");
        assert_eq!(p.read(&r, 104, &mut buf), Some(75), "4 s: the last value");
        assert_eq!(p.read(&r, 105, &mut buf), Some(100), "5 s: read again");
        write(&d, &std::format!("{pol}0/scaling_cur_freq"), "garbage");
        assert_eq!(
            p.read(&r, 99, &mut buf),
            Some(100),
            "clock back: read; policy0 left out"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A `cpuinfo_max_freq` of 0 is no maximum: `scaling_max_freq` is
    /// taken, as when the file is absent.
    #[test]
    fn a_zero_hardware_maximum_falls_back_to_the_policy_maximum() {
        let d = std::env::temp_dir().join(std::format!("headroom-cpufreq0-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let pol = "sys/devices/system/cpu/cpufreq/policy0/";
        write(&d, &std::format!("{pol}scaling_cur_freq"), "900000\n");
        write(&d, &std::format!("{pol}cpuinfo_max_freq"), "0\n");
        write(&d, &std::format!("{pol}scaling_max_freq"), "1800000\n");
        write(&d, &std::format!("{pol}affected_cpus"), "0 1\n");
        let r = Root::open(d.to_str().unwrap()).unwrap();
        let mut p = discover(&r, false);
        assert_eq!(p.len(), 1);
        assert_eq!(p.read(&r, 0, &mut [0u8; 64]), Some(50));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn parsers() {
        assert_eq!(parse_khz(b"600000\n"), Ok(600_000));
        assert!(parse_khz(b"").is_err() && parse_khz(b"<unknown>\n").is_err());
        assert_eq!(parse_cpu_count(b"0 1 2 3\n"), Ok(4));
        assert_eq!(parse_cpu_count(b"\n"), Ok(0));
        assert!(parse_cpu_count(b"0-3\n").is_err());
        let zero = Share {
            cur_khz: 5,
            max_khz: 0,
            cpus: 1,
        };
        assert_eq!(weighted_percent([zero]), None);
        let huge = Share {
            cur_khz: u64::MAX,
            max_khz: 1,
            cpus: u32::MAX,
        };
        assert_eq!(weighted_percent([huge]), None, "past u32: no value");
    }
}
