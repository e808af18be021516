//! A pool lease: what one governor of a shared memory pool (`run
//! --jobserver --pool DIR`) has reserved, as the small text file it keeps
//! in DIR while it lives.
//!
//! ```text
//! headroom-lease 1
//! uid 1000
//! pid 4242
//! run arm64-lane
//! limits 4026 5110
//! cap 4
//! running 3
//! allowed 3
//! peak_mb 160
//! held_mb 310
//! growth_mb 170
//! wants_more 1
//! paused 4300:918273 4301:918290
//! ```
//!
//! One `key value` pair a line, in any order; keys headroom does not know
//! are skipped (a newer headroom may add some), every key above but
//! `paused` must be there. Numbers are decimal: MiB for `*_mb`, `limits`
//! the inode numbers of the memory cgroups that limit the build (its own
//! and each ancestor with a limit, so two leases are "inside" the same
//! cgroup when they name the same inode, whatever PID or cgroup namespace
//! each writer is in), `paused` the jobs its governor stopped as
//! `PID:START` (START: field 22 of `/proc/PID/stat`, clock ticks since
//! boot, so that a reused PID is never signalled). `pid` and `run` are for
//! display only: a PID means nothing outside its namespace.
//!
//! A lease is at most [`LEASE_CAP`] bytes; it is parsed from the caller's
//! bytes and written into a fixed buffer. Nothing here reads or writes a
//! file (see `jobserver::pool_dir`).

use heapless::{String, Vec};

use crate::kernel::parse::parse_u64;
use crate::tick::row::BufferFull;

/// The first line of every lease, with its format version.
pub const MAGIC: &[u8] = b"headroom-lease 1\n";

/// Longest lease file, bytes: the fields, eight limits and sixteen paused
/// jobs fit with room to spare.
pub const LEASE_CAP: usize = 1024;

/// Most limiting cgroups a lease names (the build's and its ancestors').
pub const LIMITS_CAP: usize = 8;

/// Most paused jobs a lease names.
pub const PAUSED_CAP: usize = 16;

/// Longest run id kept, bytes (longer ones are cut at a character
/// boundary).
pub const RUN_CAP: usize = 64;

/// A job its governor stopped (SIGSTOP) and must continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paused {
    /// Its PID, in the namespace of the governor that stopped it.
    pub pid: u32,
    /// Its start time, clock ticks after boot (`/proc/PID/stat` field 22).
    pub start_ticks: u64,
}

/// One governor's reservation in the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The owner's user id (a lease is trusted only from the same user or
    /// root).
    pub uid: u32,
    /// The governor's PID in its own namespace (for display).
    pub pid: u32,
    /// Its run id (for display; made with [`cut`], no control characters).
    pub run: String<RUN_CAP>,
    /// Inode numbers of the memory cgroups that limit the build.
    pub limits: Vec<u64, LIMITS_CAP>,
    /// Most jobs at once it would allow (cores or `--max-jobs`).
    pub cap: u32,
    /// Jobs running now (slots its clients hold + the implicit one).
    pub running: u32,
    /// Jobs it allows at once now.
    pub allowed: u32,
    /// Its peak per job, MiB.
    pub peak_mb: u64,
    /// What its compilers hold now (RSS), MiB.
    pub held_mb: u64,
    /// What its running jobs may still grow by (running × peak − held, at
    /// least 0), MiB: the megabytes no other build may spend.
    pub growth_mb: u64,
    /// It would start more jobs if the pool let it (its FIFO is empty and
    /// its clients hold every token).
    pub wants_more: bool,
    /// The jobs it has stopped.
    pub paused: Vec<Paused, PAUSED_CAP>,
}

/// Why bytes are not a lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// The first line is not [`MAGIC`] (another file, or another version).
    Magic,
    /// Longer than [`LEASE_CAP`], or a line without a newline at the end.
    Truncated,
    /// A required key is absent.
    Missing(&'static str),
    /// A known key with a value that does not parse, or too many entries.
    Bad(&'static str),
}

/// The keys every lease has, in the order [`Lease::write`] writes them.
const REQUIRED: [&str; 11] = [
    "uid",
    "pid",
    "run",
    "limits",
    "cap",
    "running",
    "allowed",
    "peak_mb",
    "held_mb",
    "growth_mb",
    "wants_more",
];

impl Lease {
    /// Parses a lease file's bytes.
    ///
    /// # Errors
    /// [`LeaseError`]: not a lease, cut short, a key missing or bad.
    pub fn parse(b: &[u8]) -> Result<Lease, LeaseError> {
        let body = b.strip_prefix(MAGIC).ok_or(LeaseError::Magic)?;
        if b.len() > LEASE_CAP || !body.is_empty() && !body.ends_with(b"\n") {
            return Err(LeaseError::Truncated);
        }
        let mut l = Lease::empty();
        let mut seen = [false; REQUIRED.len()];
        for line in body.split(|&c| c == b'\n').filter(|l| !l.is_empty()) {
            let (key, value) = match line.iter().position(|&c| c == b' ') {
                Some(i) => (&line[..i], &line[i + 1..]),
                None => (line, &b""[..]),
            };
            if key == b"paused" {
                l.paused = paused(value)?;
                continue;
            }
            let Some(k) = REQUIRED.iter().position(|r| r.as_bytes() == key) else {
                continue; // a key of a newer headroom
            };
            l.set(REQUIRED[k], value)?;
            seen[k] = true;
        }
        match seen.iter().position(|s| !s) {
            Some(k) => Err(LeaseError::Missing(REQUIRED[k])),
            None => Ok(l),
        }
    }

    /// A lease with every figure 0 and no limits, paused jobs or run id.
    pub fn empty() -> Lease {
        Lease {
            uid: 0,
            pid: 0,
            run: String::new(),
            limits: Vec::new(),
            cap: 0,
            running: 0,
            allowed: 0,
            peak_mb: 0,
            held_mb: 0,
            growth_mb: 0,
            wants_more: false,
            paused: Vec::new(),
        }
    }

    /// Sets the field `key` from its text.
    fn set(&mut self, key: &'static str, v: &[u8]) -> Result<(), LeaseError> {
        let bad = LeaseError::Bad(key);
        let n = || parse_u64(v).ok_or(bad);
        let n32 = || n().and_then(|x| u32::try_from(x).map_err(|_| bad));
        match key {
            "uid" => self.uid = n32()?,
            "pid" => self.pid = n32()?,
            "run" => {
                let text = core::str::from_utf8(v).map_err(|_| bad)?;
                self.run = cut(text);
            }
            "limits" => {
                self.limits.clear();
                for word in v.split(|&c| c == b' ').filter(|w| !w.is_empty()) {
                    let ino = parse_u64(word).ok_or(bad)?;
                    self.limits.push(ino).map_err(|_| bad)?;
                }
            }
            "cap" => self.cap = n32()?,
            "running" => self.running = n32()?,
            "allowed" => self.allowed = n32()?,
            "peak_mb" => self.peak_mb = n()?,
            "held_mb" => self.held_mb = n()?,
            "growth_mb" => self.growth_mb = n()?,
            "wants_more" => {
                self.wants_more = match v {
                    b"0" => false,
                    b"1" => true,
                    _ => return Err(bad),
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Writes the lease as its file's bytes (see the module's example).
    ///
    /// # Errors
    /// [`BufferFull`] when the text does not fit [`LEASE_CAP`] bytes (it
    /// always does for the caps above: at most ~900 bytes).
    pub fn write(&self, out: &mut Vec<u8, LEASE_CAP>) -> Result<(), BufferFull> {
        out.clear();
        out.extend_from_slice(MAGIC).map_err(|_| BufferFull)?;
        let mut w = LineWriter(out);
        let run = self.run.as_str();
        ufmt::uwrite!(w, "uid {}\npid {}\nrun ", self.uid, self.pid)?;
        // A run id cannot break the format: `cut` made every control
        // character a space.
        ufmt::uwrite!(w, "{}", run)?;
        ufmt::uwrite!(w, "\nlimits")?;
        for ino in &self.limits {
            ufmt::uwrite!(w, " {}", *ino)?;
        }
        ufmt::uwrite!(
            w,
            "\ncap {}\nrunning {}\nallowed {}\npeak_mb {}\nheld_mb {}\ngrowth_mb {}\nwants_more {}\n",
            self.cap,
            self.running,
            self.allowed,
            self.peak_mb,
            self.held_mb,
            self.growth_mb,
            u8::from(self.wants_more)
        )?;
        if !self.paused.is_empty() {
            ufmt::uwrite!(w, "paused")?;
            for p in &self.paused {
                ufmt::uwrite!(w, " {}:{}", p.pid, p.start_ticks)?;
            }
            ufmt::uwrite!(w, "\n")?;
        }
        Ok(())
    }
}

/// The `paused` value: `PID:START` words.
fn paused(v: &[u8]) -> Result<Vec<Paused, PAUSED_CAP>, LeaseError> {
    let bad = LeaseError::Bad("paused");
    let mut out = Vec::new();
    for word in v.split(|&c| c == b' ').filter(|w| !w.is_empty()) {
        let colon = word.iter().position(|&c| c == b':').ok_or(bad)?;
        let pid = parse_u64(&word[..colon]).and_then(|p| u32::try_from(p).ok());
        let start = parse_u64(&word[colon + 1..]);
        let (Some(pid), Some(start_ticks)) = (pid, start) else {
            return Err(bad);
        };
        if pid == 0 {
            return Err(bad);
        }
        out.push(Paused { pid, start_ticks }).map_err(|_| bad)?;
    }
    Ok(out)
}

/// The growth `leases` reserve together (the sum of their `growth_mb`),
/// MiB, saturated at `u64::MAX`: what pool admission, the pool's row
/// figures and `status`'s pool block count as held for other builds.
pub fn reserved_mb<'a>(leases: impl IntoIterator<Item = &'a Lease>) -> u64 {
    leases
        .into_iter()
        .fold(0u64, |a, l| a.saturating_add(l.growth_mb))
}

/// What `leases` hold and reserve together (the sum of their `held_mb`
/// and `growth_mb`), MiB, saturated: what other builds take of a limit
/// whose usage the kernel does not show this one (a limit above the
/// mount, or a budget), where [`reserved_mb`] alone would count their
/// growth but not what they already hold.
pub fn taken_mb<'a>(leases: impl IntoIterator<Item = &'a Lease>) -> u64 {
    leases.into_iter().fold(0u64, |a, l| {
        a.saturating_add(l.held_mb).saturating_add(l.growth_mb)
    })
}

/// `s` cut to `N` bytes ([`RUN_CAP`] for a run id) at a character
/// boundary, each control character (a newline would end the line) made a
/// space.
pub fn cut<const N: usize>(s: &str) -> String<N> {
    let mut out = String::new();
    for c in s.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if out.push(c).is_err() {
            break;
        }
    }
    out
}

/// A [`ufmt::uWrite`] over the lease buffer.
struct LineWriter<'a>(&'a mut Vec<u8, LEASE_CAP>);

impl ufmt::uWrite for LineWriter<'_> {
    type Error = BufferFull;

    fn write_str(&mut self, s: &str) -> Result<(), BufferFull> {
        self.0
            .extend_from_slice(s.as_bytes())
            .map_err(|_| BufferFull)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    const EXAMPLE: &[u8] = b"headroom-lease 1\nuid 1000\npid 4242\nrun arm64-lane\nlimits 4026 5110\ncap 4\nrunning 3\nallowed 3\npeak_mb 160\nheld_mb 310\ngrowth_mb 170\nwants_more 1\npaused 4300:918273 4301:918290\n";

    fn example() -> Lease {
        let mut l = Lease::empty();
        l.uid = 1000;
        l.pid = 4242;
        l.run = cut("arm64-lane");
        l.limits.extend_from_slice(&[4026, 5110]).unwrap();
        l.cap = 4;
        l.running = 3;
        l.allowed = 3;
        l.peak_mb = 160;
        l.held_mb = 310;
        l.growth_mb = 170;
        l.wants_more = true;
        l.paused
            .extend_from_slice(&[
                Paused {
                    pid: 4300,
                    start_ticks: 918273,
                },
                Paused {
                    pid: 4301,
                    start_ticks: 918290,
                },
            ])
            .unwrap();
        l
    }

    #[test]
    fn the_documented_example_parses_and_writes_back_the_same() {
        assert_eq!(Lease::parse(EXAMPLE), Ok(example()));
        let mut out = Vec::new();
        example().write(&mut out).unwrap();
        assert_eq!(out.as_slice(), EXAMPLE);
    }

    #[test]
    fn order_is_free_unknown_keys_are_skipped_paused_is_optional() {
        let b = b"headroom-lease 1\nwants_more 0\ngrowth_mb 0\nheld_mb 0\npeak_mb 2000\nallowed 1\nrunning 1\ncap 2\nlimits\nrun r\npid 1\nuid 0\nfuture_key 7 8 9\n";
        let l = Lease::parse(b).unwrap();
        assert_eq!((l.cap, l.peak_mb, l.limits.len()), (2, 2000, 0));
        assert!(l.paused.is_empty() && !l.wants_more);
    }

    #[test]
    fn what_is_not_a_lease_says_why() {
        assert_eq!(Lease::parse(b""), Err(LeaseError::Magic));
        assert_eq!(Lease::parse(b"headroom-lease 2\n"), Err(LeaseError::Magic));
        assert_eq!(
            Lease::parse(b"headroom-lease 1\n"),
            Err(LeaseError::Missing("uid"))
        );
        // Cut mid-line (a reader that raced a writer would see this).
        let cut_short = &EXAMPLE[..EXAMPLE.len() - 3];
        assert_eq!(Lease::parse(cut_short), Err(LeaseError::Truncated));
        let mut big = std::vec::Vec::from(EXAMPLE);
        big.resize(LEASE_CAP + 1, b'\n');
        assert_eq!(Lease::parse(&big), Err(LeaseError::Truncated));
        let swap = |from: &str, to: &str| {
            let text = core::str::from_utf8(EXAMPLE).unwrap().replace(from, to);
            Lease::parse(text.as_bytes())
        };
        assert_eq!(swap("cap 4", "cap -4"), Err(LeaseError::Bad("cap")));
        assert_eq!(
            swap("uid 1000", "uid 99999999999"),
            Err(LeaseError::Bad("uid"))
        );
        assert_eq!(
            swap("wants_more 1", "wants_more yes"),
            Err(LeaseError::Bad("wants_more"))
        );
        assert_eq!(swap("4300:918273", "4300"), Err(LeaseError::Bad("paused")));
        assert_eq!(swap("4300:918273", "0:1"), Err(LeaseError::Bad("paused")));
        assert_eq!(
            swap("growth_mb 170\n", ""),
            Err(LeaseError::Missing("growth_mb"))
        );
        assert_eq!(
            swap("limits 4026 5110", "limits 1 2 3 4 5 6 7 8 9"),
            Err(LeaseError::Bad("limits"))
        );
    }

    #[test]
    fn a_run_id_cannot_break_the_format() {
        let mut l = example();
        l.run = cut("a\nuid 0\rb");
        assert_eq!(l.run.as_str(), "a uid 0 b");
        let mut out = Vec::new();
        l.write(&mut out).unwrap();
        let back = Lease::parse(&out).unwrap();
        assert_eq!((back.uid, back.run.as_str()), (1000, "a uid 0 b"));
        // A long one is cut at a character boundary.
        let long = "é".repeat(40);
        assert_eq!(cut::<RUN_CAP>(&long).len(), 64);
    }

    #[test]
    fn the_fullest_lease_fits() {
        let mut l = example();
        l.run = cut(&"r".repeat(200));
        l.limits.clear();
        l.paused.clear();
        for _ in 0..LIMITS_CAP {
            l.limits.push(u64::MAX).unwrap();
        }
        for _ in 0..PAUSED_CAP {
            l.paused
                .push(Paused {
                    pid: u32::MAX,
                    start_ticks: u64::MAX,
                })
                .unwrap();
        }
        (l.uid, l.pid, l.cap, l.running, l.allowed) = (u32::MAX, u32::MAX, u32::MAX, u32::MAX, 0);
        (l.peak_mb, l.held_mb, l.growth_mb) = (u64::MAX, u64::MAX, u64::MAX);
        let mut out = Vec::new();
        l.write(&mut out).unwrap();
        assert!(out.len() < 1000, "{}", out.len());
        assert_eq!(Lease::parse(&out), Ok(l));
    }

    #[test]
    fn the_growth_reserved_is_the_leases_sum_saturated() {
        let with = |mb| Lease {
            growth_mb: mb,
            ..Lease::empty()
        };
        assert_eq!(reserved_mb(&[]), 0);
        assert_eq!(reserved_mb(&[with(170), with(30)]), 200);
        assert_eq!(reserved_mb(&[with(u64::MAX), with(1)]), u64::MAX);
    }
}
