//! What one command used, as `/usr/bin/time -v` reports it: wall time, user
//! and system CPU, average cores, ru_maxrss, page faults, context switches,
//! file system inputs and outputs, and how it ended.
//!
//! ru_maxrss is the peak resident size of the largest single process among
//! the command and its waited-for descendants (not a sum): for `make -j4`
//! it is the biggest compiler, the figure that decides whether one more job
//! fits.
//!
//! # References
//! getrusage(2), wait4(2), wait(2) status macros, signal(7).

use ufmt::{uWrite, uwrite};

use crate::followed::figures::{write_centi, write_milli};

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// exit(2) with this code.
    Exited(i32),
    /// Killed by this signal number.
    Signaled(i32),
}

impl End {
    /// Decodes a wait(2) status word (WIFEXITED / WIFSIGNALED).
    ///
    /// ```
    /// use headroom::followed::rusage::End;
    /// assert_eq!(End::from_wait_status(3 << 8), End::Exited(3));
    /// assert_eq!(End::from_wait_status(9), End::Signaled(9));
    /// assert_eq!(End::from_wait_status(9 | 0x80), End::Signaled(9)); // core dumped
    /// ```
    pub fn from_wait_status(status: i32) -> End {
        let sig = status & 0x7f;
        if sig == 0 {
            End::Exited((status >> 8) & 0xff)
        } else {
            End::Signaled(sig)
        }
    }

    /// The status a shell reports: the exit code, or 128 + signal.
    pub fn shell_status(self) -> u8 {
        match self {
            End::Exited(c) => (c & 0xff) as u8,
            End::Signaled(s) => 128u8.wrapping_add((s & 0x7f) as u8),
        }
    }
}

/// The name of a Linux signal without `SIG` (generic numbering, shared by
/// x86_64, aarch64 and riscv64); `None` for real-time and unknown numbers.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    let i = usize::try_from(sig.checked_sub(1)?).ok()?;
    SIGNAL_NAMES.get(i).copied()
}

/// The number of the signal named `name` without `SIG` ([`signal_name`]
/// read back).
///
/// ```
/// use headroom::followed::rusage::signal_number;
/// assert_eq!(signal_number("INT"), Some(2));
/// assert_eq!(signal_number("NOPE"), None);
/// ```
pub fn signal_number(name: &str) -> Option<i32> {
    let i = SIGNAL_NAMES.iter().position(|n| *n == name)?;
    i32::try_from(i + 1).ok()
}

/// Signals 1 to 31 by name, without `SIG`.
const SIGNAL_NAMES: [&str; 31] = [
    "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
    "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
    "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];

/// A stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that reached headroom
/// while the command ran, passed on to it or sent to it by the terminal
/// too: the command did not end by itself, so the build is not whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupt {
    /// The signal's number.
    pub signal: i32,
    /// When it came, milliseconds after the command started.
    pub after_ms: u64,
}

impl Interrupt {
    /// Writes `SIGINT after 60.012 s` (`signal 40 after …` for a signal
    /// without a name): the words of the RUN block's `interrupted:` line,
    /// of ADVICE and of `jobs --from`.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write<W: uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        match signal_name(self.signal) {
            Some(n) => uwrite!(w, "SIG{} after ", n)?,
            None => uwrite!(w, "signal {} after ", self.signal)?,
        }
        write_milli(w, self.after_ms)?;
        uwrite!(w, " s")
    }

    /// Reads [`Interrupt::write`]'s words back from the start of `text`
    /// (what follows them is ignored); `None` when they are not there.
    ///
    /// ```
    /// use headroom::followed::rusage::Interrupt;
    /// let i = Interrupt::parse("SIGTERM after 3.250 s: wall is to the interrupt").unwrap();
    /// assert_eq!((i.signal, i.after_ms), (15, 3250));
    /// assert_eq!(Interrupt::parse("SIGTERM soon"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Interrupt> {
        let (sig, rest) = text.split_once(" after ")?;
        let signal = match sig.strip_prefix("SIG") {
            Some(name) => signal_number(name)?,
            None => sig.strip_prefix("signal ")?.parse().ok()?,
        };
        let (secs, _) = rest.split_once(" s")?;
        let (whole, milli) = secs.split_once('.')?;
        if milli.len() != 3 {
            return None;
        }
        let after_ms = whole
            .parse::<u64>()
            .ok()?
            .checked_mul(1000)?
            .checked_add(milli.parse::<u64>().ok()?)?;
        Some(Interrupt { signal, after_ms })
    }
}

/// Why the RUN block's rusage figures do not cover the whole build: the
/// command was interrupted, or processes of the build were never reaped
/// by it. wait4(2) counts only the descendants that were waited for, so
/// user, sys, average cores and max RSS are then lower bounds; a compiler
/// orphaned by a killed driver (gcc dies on SIGINT without waiting for
/// cc1) is counted by no one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Partial {
    /// The stop signal that reached headroom while the command ran.
    pub interrupt: Option<Interrupt>,
    /// Processes of the build the command had not reaped when it exited:
    /// still in its cgroup then, running on or exiting on the same
    /// signal. 0 when none, or when there is no cgroup to look in.
    pub unreaped: u32,
}

impl Partial {
    /// How the RUN block's `interrupted:` line starts: the one place an
    /// interruption is kept with a recording (in its summary file).
    pub const INTERRUPTED: &'static str = "  interrupted: ";

    /// True when the figures are not the whole build's.
    pub fn is_partial(&self) -> bool {
        self.interrupt.is_some() || self.unreaped > 0
    }

    /// Writes the RUN block's line that says which figures are partial;
    /// nothing when they are whole:
    ///
    /// ```text
    ///   interrupted: SIGINT after 60.012 s: wall is to the interrupt; CPU and max RSS cover only the processes that were reaped (2 were not): lower bounds
    ///   not all reaped: 1 process(es) of the build were not waited for by the command; CPU and max RSS cover only the processes that were reaped: lower bounds
    /// ```
    ///
    /// # Errors
    /// The writer's error.
    pub fn render<W: uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        match self.interrupt {
            Some(i) => {
                uwrite!(w, "{}", Self::INTERRUPTED)?;
                i.write(w)?;
                uwrite!(w, ": wall is to the interrupt")?;
            }
            None if self.unreaped > 0 => uwrite!(
                w,
                "  not all reaped: {} process(es) of the build were not waited for by the command",
                self.unreaped
            )?,
            None => return Ok(()),
        }
        uwrite!(
            w,
            "; CPU and max RSS cover only the processes that were reaped"
        )?;
        if self.interrupt.is_some() && self.unreaped > 0 {
            uwrite!(w, " ({} were not)", self.unreaped)?;
        }
        uwrite!(w, ": lower bounds\n")
    }

    /// The interruption a summary's text records: its RUN block's
    /// `interrupted:` line read back ([`Partial::render`]).
    pub fn interrupt_in(summary: &str) -> Option<Interrupt> {
        summary
            .lines()
            .find_map(|l| l.strip_prefix(Self::INTERRUPTED))
            .and_then(Interrupt::parse)
    }
}

/// The counters of getrusage(2) that `/usr/bin/time -v` prints beside the
/// times, for the command and its waited-for descendants together (sums,
/// unlike ru_maxrss).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Major page faults, the ones that needed I/O (ru_majflt; time -v's
    /// "Major (requiring I/O) page faults"): a rising count in a build
    /// that does not read much is the first sign of swap thrash.
    pub majflt: u64,
    /// Minor page faults, served without I/O (ru_minflt; time -v's "Minor
    /// (reclaiming a frame) page faults").
    pub minflt: u64,
    /// Voluntary context switches: the process waited, e.g. for I/O
    /// (ru_nvcsw).
    pub nvcsw: u64,
    /// Involuntary context switches: the scheduler took the CPU away
    /// (ru_nivcsw).
    pub nivcsw: u64,
    /// File system inputs, 512-byte blocks read from storage, not from the
    /// page cache (ru_inblock; time -v's "File system inputs").
    pub inblock: u64,
    /// File system outputs, 512-byte blocks written (ru_oublock).
    pub oublock: u64,
}

impl Counts {
    /// The counters' names, in the order of [`Counts::values`]: the
    /// getrusage(2) field names without `ru_`, as the `--actions` columns
    /// and the JSON keys spell them.
    pub const NAMES: [&'static str; 6] =
        ["majflt", "minflt", "nvcsw", "nivcsw", "inblock", "oublock"];

    /// The counters in the order of [`Counts::NAMES`].
    pub fn values(&self) -> [u64; 6] {
        [
            self.majflt,
            self.minflt,
            self.nvcsw,
            self.nivcsw,
            self.inblock,
            self.oublock,
        ]
    }

    /// The counters from values in the order of [`Counts::NAMES`].
    ///
    /// ```
    /// use headroom::followed::rusage::Counts;
    /// let c = Counts::from_values([1, 2, 3, 4, 5, 6]);
    /// assert_eq!((c.majflt, c.oublock), (1, 6));
    /// assert_eq!(c.values(), [1, 2, 3, 4, 5, 6]);
    /// ```
    pub fn from_values(v: [u64; 6]) -> Counts {
        let [majflt, minflt, nvcsw, nivcsw, inblock, oublock] = v;
        Counts {
            majflt,
            minflt,
            nvcsw,
            nivcsw,
            inblock,
            oublock,
        }
    }

    /// Writes the counters as JSON members, each with a leading comma:
    /// `,"majflt":N,"minflt":N,"nvcsw":N,"nivcsw":N,"inblock":N,"oublock":N`.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_json<W: uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        for (name, v) in Self::NAMES.iter().zip(self.values()) {
            uwrite!(w, ",\"{}\":{}", *name, v)?;
        }
        Ok(())
    }

    /// Writes the RUN block's lines for the counters, named so that a
    /// `/usr/bin/time -v` user finds each:
    ///
    /// ```text
    ///   page faults: major 3 (requiring I/O)  minor 12034
    ///   context switches: voluntary 41  involuntary 7
    ///   file system inputs 0  outputs 16 (512-byte blocks)
    /// ```
    ///
    /// # Errors
    /// The writer's error.
    pub fn render<W: uWrite + ?Sized>(&self, w: &mut W) -> Result<(), W::Error> {
        uwrite!(
            w,
            "  page faults: major {} (requiring I/O)  minor {}\n",
            self.majflt,
            self.minflt
        )?;
        uwrite!(
            w,
            "  context switches: voluntary {}  involuntary {}\n",
            self.nvcsw,
            self.nivcsw
        )?;
        uwrite!(
            w,
            "  file system inputs {}  outputs {} (512-byte blocks)\n",
            self.inblock,
            self.oublock
        )
    }
}

/// One command's resource use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// Wall time from start to exit, milliseconds.
    pub wall_ms: u64,
    /// User CPU of the command and its waited-for descendants (ru_utime), ms.
    pub user_ms: u64,
    /// System CPU (ru_stime), ms.
    pub sys_ms: u64,
    /// ru_maxrss: peak RSS of the largest single process, KiB.
    pub max_rss_kib: u64,
    /// Page faults, context switches and file system blocks.
    pub counts: Counts,
    /// How it ended.
    pub end: End,
}

impl Usage {
    /// Average cores busy: (user + sys) / wall, in hundredths, rounded half
    /// up; 0 for a zero wall time.
    pub fn cores_centi(&self) -> u64 {
        let cpu = u128::from(self.user_ms) + u128::from(self.sys_ms);
        let wall = u128::from(self.wall_ms);
        if wall == 0 {
            return 0;
        }
        u64::try_from((cpu * 100 * 2 + wall) / (wall * 2)).unwrap_or(u64::MAX)
    }

    /// Renders the `RUN:` block of the summary for the command `label`.
    ///
    /// # Errors
    /// The writer's error.
    pub fn render<W: uWrite + ?Sized>(&self, label: &str, w: &mut W) -> Result<(), W::Error> {
        uwrite!(w, "\nRUN: {}\n  wall ", label)?;
        write_milli(w, self.wall_ms)?;
        uwrite!(w, " s  user ")?;
        write_milli(w, self.user_ms)?;
        uwrite!(w, " s  sys ")?;
        write_milli(w, self.sys_ms)?;
        uwrite!(w, " s  average cores ")?;
        write_centi(w, self.cores_centi())?;
        uwrite!(
            w,
            "\n  max RSS {} MiB (largest single process, ru_maxrss)\n",
            self.max_rss_kib / 1024
        )?;
        self.counts.render(w)?;
        match self.end {
            End::Exited(c) => uwrite!(w, "  exit {}\n", c),
            End::Signaled(s) => match signal_name(s) {
                Some(n) => uwrite!(
                    w,
                    "  killed by signal {} ({}), exit status {}\n",
                    n,
                    s,
                    self.end.shell_status()
                ),
                None => uwrite!(
                    w,
                    "  killed by signal {}, exit status {}\n",
                    s,
                    self.end.shell_status()
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_status_and_names() {
        assert_eq!(End::Exited(3).shell_status(), 3);
        assert_eq!(End::Signaled(9).shell_status(), 137);
        assert_eq!(signal_name(9), Some("KILL"));
        assert_eq!(signal_name(15), Some("TERM"));
        assert_eq!(signal_name(31), Some("SYS"));
        assert_eq!(signal_name(0), None);
        assert_eq!(signal_name(34), None);
        assert_eq!(signal_name(-1), None);
    }

    #[test]
    fn cores_and_block() {
        let u = Usage {
            wall_ms: 2000,
            user_ms: 3000,
            sys_ms: 445,
            max_rss_kib: 300 * 1024 + 5,
            counts: Counts::from_values([3, 12034, 41, 7, 0, 16]),
            end: End::Signaled(9),
        };
        assert_eq!(u.cores_centi(), 172);
        let mut s = heapless::String::<512>::new();
        u.render("make -j2", &mut s).unwrap();
        assert_eq!(
            s.as_str(),
            "\nRUN: make -j2\n  wall 2.000 s  user 3.000 s  sys 0.445 s  average cores 1.72\n  max RSS 300 MiB (largest single process, ru_maxrss)\n  page faults: major 3 (requiring I/O)  minor 12034\n  context switches: voluntary 41  involuntary 7\n  file system inputs 0  outputs 16 (512-byte blocks)\n  killed by signal KILL (9), exit status 137\n"
        );
        let mut j = heapless::String::<128>::new();
        u.counts.write_json(&mut j).unwrap();
        assert_eq!(
            j.as_str(),
            ",\"majflt\":3,\"minflt\":12034,\"nvcsw\":41,\"nivcsw\":7,\"inblock\":0,\"oublock\":16"
        );
        let z = Usage { wall_ms: 0, ..u };
        assert_eq!(z.cores_centi(), 0);
    }

    fn partial_line(p: Partial) -> heapless::String<256> {
        let mut s = heapless::String::<256>::new();
        p.render(&mut s).unwrap();
        s
    }

    #[test]
    fn the_partial_line_says_why_and_reads_back() {
        assert_eq!(partial_line(Partial::default()).as_str(), "");
        let int = Interrupt {
            signal: 2,
            after_ms: 60_012,
        };
        let both = Partial {
            interrupt: Some(int),
            unreaped: 2,
        };
        let line = partial_line(both);
        assert_eq!(
            line.as_str(),
            "  interrupted: SIGINT after 60.012 s: wall is to the interrupt; CPU and max RSS cover only the processes that were reaped (2 were not): lower bounds\n"
        );
        // Read back from a whole summary, wherever the line is.
        let mut summary = heapless::String::<512>::new();
        summary.push_str("RUN: make\n  exit 0\n").unwrap();
        summary.push_str(&line).unwrap();
        summary.push_str("  build cgroup peak 3 MiB\n").unwrap();
        assert_eq!(Partial::interrupt_in(&summary), Some(int));
        assert_eq!(Partial::interrupt_in("RUN: make\n  exit 0\n"), None);
        let only = partial_line(Partial {
            interrupt: None,
            unreaped: 1,
        });
        assert_eq!(
            only.as_str(),
            "  not all reaped: 1 process(es) of the build were not waited for by the command; CPU and max RSS cover only the processes that were reaped: lower bounds\n"
        );
        assert_eq!(Partial::interrupt_in(&only), None);
        // A signal without a name, and hand-edited or cut lines.
        let odd = Interrupt {
            signal: 40,
            after_ms: 5,
        };
        let mut s = heapless::String::<64>::new();
        odd.write(&mut s).unwrap();
        assert_eq!(s.as_str(), "signal 40 after 0.005 s");
        assert_eq!(Interrupt::parse(&s), Some(odd));
        for bad in [
            "SIGNOPE after 1.000 s",
            "SIGINT after 1.5 s",
            "SIGINT after x.000 s",
            "SIGINT after 1.000",
            "SIGINT",
        ] {
            assert_eq!(Interrupt::parse(bad), None, "{bad}");
        }
    }
}
