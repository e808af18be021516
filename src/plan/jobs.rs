//! The job-count model: how many parallel compile jobs fit.
//!
//! ```text
//! jobs = max(1, min(cores, usable_mb / divisor / peak_mb_per_job))
//! ```
//!
//! with the toolchain's `parallelism.sh` environment variables and profiles
//! (SPEC.md "Job-count model"). Every input keeps where it came from, for
//! `--explain`. Pure: the caller measures cores and memory ([`crate::plan::host`])
//! and passes the environment in.

use ufmt::{uWrite, uwrite};

/// Which peak-per-job estimate to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// C/C++ in general: 2000 MB per job (800 when aggressive).
    Generic,
    /// Cargo: 2500 MB per job (1200 when aggressive).
    Rust,
    /// PyTorch-class TUs, LTO: 4096 MB per job always.
    Heavy,
}

impl Profile {
    /// `generic`, `rust` or `heavy`.
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "generic" => Some(Profile::Generic),
            "rust" => Some(Profile::Rust),
            "heavy" => Some(Profile::Heavy),
            _ => None,
        }
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Generic => "generic",
            Profile::Rust => "rust",
            Profile::Heavy => "heavy",
        }
    }

    /// The environment variable that overrides its peak.
    pub fn env_var(self) -> &'static str {
        match self {
            Profile::Generic => "DEFAULT_MB_PER_JOB",
            Profile::Rust => "RUST_MB_PER_JOB",
            Profile::Heavy => "CPP_HEAVY_MB_PER_JOB",
        }
    }

    /// The default peak per job in MB, normal or aggressive.
    pub fn default_mb(self, aggressive: bool) -> u64 {
        match (self, aggressive) {
            (Profile::Generic, false) => 2000,
            (Profile::Generic, true) => 800,
            (Profile::Rust, false) => 2500,
            (Profile::Rust, true) => 1200,
            (Profile::Heavy, _) => 4096,
        }
    }
}

/// Usable memory (MB: MemAvailable, or the tightest cgroup's available
/// memory when smaller; before the divisor) from which aggressive mode turns itself on.
/// A 3 GiB container on a 64 GiB host is therefore not aggressive.
pub const AGGRESSIVE_FROM_MB: u64 = 16384;

/// The variables of the model, in the order of the fields of [`Env`].
pub const ENV_VARS: [&str; 6] = [
    "PARALLEL_JOBS",
    "BUILD_MEM_DIVISOR",
    "AGGRESSIVE_PARALLELISM",
    "DEFAULT_MB_PER_JOB",
    "RUST_MB_PER_JOB",
    "CPP_HEAVY_MB_PER_JOB",
];

/// The raw environment (`None` = unset), as `parallelism.sh` reads it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Env<'a> {
    /// PARALLEL_JOBS: a positive integer overrides everything.
    pub parallel_jobs: Option<&'a str>,
    /// BUILD_MEM_DIVISOR: integer ≥ 1.
    pub build_mem_divisor: Option<&'a str>,
    /// AGGRESSIVE_PARALLELISM: `true` or `false`.
    pub aggressive: Option<&'a str>,
    /// DEFAULT_MB_PER_JOB (generic profile).
    pub default_mb_per_job: Option<&'a str>,
    /// RUST_MB_PER_JOB (rust profile).
    pub rust_mb_per_job: Option<&'a str>,
    /// CPP_HEAVY_MB_PER_JOB (heavy profile).
    pub cpp_heavy_mb_per_job: Option<&'a str>,
}

/// A variable whose value was not usable: warned about on stderr, ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ignored<'a> {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub value: &'a str,
    /// What it should have been.
    pub expected: &'static str,
}

/// Where a figure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum From<'a> {
    /// A command-line option (its name).
    Option(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// The toolchain's default.
    Default,
    /// Decided automatically (aggressive mode from usable memory).
    Auto,
    /// Measured: a recorded CSV's largest compiler (its path, and whose:
    /// the build's, build_peak_rss_mb, or the host's, peak_rss_mb).
    Measured(&'a str),
}

/// The measured host (or the host being planned for).
#[derive(Clone, Copy, Debug)]
pub struct Capacity<'a> {
    /// Usable cores.
    pub cores: u64,
    /// What gave `cores` (e.g. `sched_getaffinity`, `cgroup cpu.max`,
    /// `--cores`).
    pub cores_from: &'a str,
    /// Usable memory in MB: min(MemAvailable, the tightest cgroup's
    /// available memory).
    pub usable_mb: u64,
    /// What gave `usable_mb` (e.g. `MemAvailable (proc/meminfo)`,
    /// `cgroup memory.max on /docker`, `--avail-mb`).
    pub usable_from: &'a str,
    /// The short name of the figure `usable_mb` is (`MemAvailable`,
    /// `cgroup available`, `--avail-mb`): the aggressive-mode rule compares
    /// `usable_mb` with [`AGGRESSIVE_FROM_MB`], and `--explain` says which.
    pub usable_figure: &'a str,
}

/// What is asked.
#[derive(Clone, Copy, Debug)]
pub struct Ask<'a> {
    /// The profile.
    pub profile: Profile,
    /// `--peak-mb N`.
    pub peak_mb: Option<u64>,
    /// `--from FILE.csv`: the largest measured peak_rss_mb and the file.
    pub measured: Option<(u64, &'a str)>,
    /// `--requested N`.
    pub requested: Option<u64>,
}

/// What bound the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// PARALLEL_JOBS.
    Override,
    /// The cores.
    Cores,
    /// Memory: usable / divisor / peak.
    Memory,
    /// `--requested`.
    Requested,
    /// Not even one job fits: 1 is the floor.
    Floor,
}

/// The answer and every input.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    /// Jobs to run in parallel.
    pub jobs: u64,
    /// What bound `jobs`.
    pub binding: Binding,
    /// Memory divisor and its source.
    pub divisor: (u64, From<'a>),
    /// Aggressive mode and its source.
    pub aggressive: (bool, From<'a>),
    /// Peak MB per job and its source.
    pub peak_mb: (u64, From<'a>),
    /// Jobs memory allows: usable × (90 % when measured) / divisor / peak.
    pub memory_jobs: u64,
    /// 10 % headroom kept (a measured peak, `--from`).
    pub headroom: bool,
    /// Variables ignored for bad values (at most 6).
    pub ignored: heapless::Vec<Ignored<'a>, 6>,
}

/// A positive integer, else `None`.
fn positive(s: &str) -> Option<u64> {
    s.trim().parse::<u64>().ok().filter(|&v| v > 0)
}

/// Computes the plan.
///
/// ```
/// use headroom::plan::jobs::{plan, Ask, Capacity, Env, Profile};
/// let cap = Capacity { cores: 8, cores_from: "--cores", usable_mb: 16000,
///                      usable_from: "--avail-mb", usable_figure: "--avail-mb" };
/// let ask = Ask { profile: Profile::Heavy, peak_mb: None, measured: None, requested: None };
/// assert_eq!(plan(&ask, &Env::default(), &cap).jobs, 3);
/// ```
pub fn plan<'a>(ask: &Ask<'a>, env: &Env<'a>, cap: &Capacity<'_>) -> Plan<'a> {
    let mut ignored = heapless::Vec::new();
    let mut ignore = |var: &'static str, value: &'a str, expected: &'static str| {
        let _ = ignored.push(Ignored {
            var,
            value,
            expected,
        });
    };

    let override_jobs = match env.parallel_jobs {
        Some(v) => {
            let p = positive(v);
            if p.is_none() {
                ignore("PARALLEL_JOBS", v, "a positive integer");
            }
            p
        }
        None => None,
    };
    let divisor = match env.build_mem_divisor {
        Some(v) => match positive(v) {
            Some(d) => (d, From::Env("BUILD_MEM_DIVISOR")),
            None => {
                ignore("BUILD_MEM_DIVISOR", v, "an integer >= 1");
                (1, From::Default)
            }
        },
        None => (1, From::Default),
    };
    // Usable memory, not the host's MemAvailable: inside a small cgroup on
    // a big host the toolchain's full peak per job applies.
    let auto = || (cap.usable_mb >= AGGRESSIVE_FROM_MB, From::Auto);
    let aggressive = match env.aggressive {
        Some("true") => (true, From::Env("AGGRESSIVE_PARALLELISM")),
        Some("false") => (false, From::Env("AGGRESSIVE_PARALLELISM")),
        Some(v) => {
            ignore("AGGRESSIVE_PARALLELISM", v, "true or false");
            auto()
        }
        None => auto(),
    };
    let profile_env = match ask.profile {
        Profile::Generic => env.default_mb_per_job,
        Profile::Rust => env.rust_mb_per_job,
        Profile::Heavy => env.cpp_heavy_mb_per_job,
    };
    let peak_mb = if let Some((m, file)) = ask.measured
        && ask.peak_mb.is_none_or(|p| m > p)
    {
        // Never size below a measured peak, even when --peak-mb says less.
        (m.max(1), From::Measured(file))
    } else if let Some(p) = ask.peak_mb {
        (p, From::Option("--peak-mb"))
    } else {
        match profile_env {
            Some(v) => match positive(v) {
                Some(p) => (p, From::Env(ask.profile.env_var())),
                None => {
                    ignore(ask.profile.env_var(), v, "a positive integer");
                    (ask.profile.default_mb(aggressive.0), From::Default)
                }
            },
            None => (ask.profile.default_mb(aggressive.0), From::Default),
        }
    };
    let headroom = matches!(peak_mb.1, From::Measured(_));
    let memory_jobs = if headroom {
        crate::report::fit::measured_jobs(cap.usable_mb, divisor.0, peak_mb.0)
    } else {
        cap.usable_mb / divisor.0 / peak_mb.0.max(1)
    };
    let cores = cap.cores.max(1);

    let (jobs, binding) = match override_jobs {
        Some(n) => (n, Binding::Override),
        None => fewest_jobs(cores, memory_jobs, ask.requested),
    };
    Plan {
        jobs,
        binding,
        divisor,
        aggressive,
        peak_mb,
        memory_jobs,
        headroom,
        ignored,
    }
}

/// The fewest of the jobs the `cores`, the memory (`memory_jobs`) and the
/// request allow, and which of them binds (the first on a tie); at least
/// one job ([`Binding::Floor`]).
fn fewest_jobs(cores: u64, memory_jobs: u64, requested: Option<u64>) -> (u64, Binding) {
    let mut best = (cores, Binding::Cores);
    if memory_jobs < best.0 {
        best = (memory_jobs, Binding::Memory);
    }
    if let Some(r) = requested
        && r < best.0
    {
        best = (r, Binding::Requested);
    }
    if best.0 == 0 {
        best = (1, Binding::Floor);
    }
    best
}

fn write_from<W: uWrite + ?Sized>(w: &mut W, f: From<'_>) -> Result<(), W::Error> {
    match f {
        From::Option(o) => uwrite!(w, "{}", o),
        From::Env(v) => uwrite!(w, "${}", v),
        From::Default => uwrite!(w, "default"),
        From::Auto => uwrite!(w, "auto"),
        From::Measured(file) => uwrite!(w, "measured: {}", file),
    }
}

/// How to measure the peak per job a profile only guesses: record the
/// build (`run` writes `resources-run.csv` under the default run id)…
pub const MEASURE_RUN: &str = "headroom run -- make …";

/// …then plan from its largest measured compiler.
pub const MEASURE_FROM: &str = "headroom jobs --from resources-run.csv";

impl Plan<'_> {
    /// `--explain`: each input, its value and where it came from, then the
    /// formula with the numbers and what bound the result.
    ///
    /// # Errors
    /// The writer's error.
    pub fn explain<W: uWrite + ?Sized>(
        &self,
        ask: &Ask<'_>,
        cap: &Capacity<'_>,
        w: &mut W,
    ) -> Result<(), W::Error> {
        self.explain_inputs(ask, cap, w)?;
        self.explain_formula(cap, w)
    }

    /// The inputs of `--explain`, a line each with where it came from, and
    /// the environment values ignored.
    fn explain_inputs<W: uWrite + ?Sized>(
        &self,
        ask: &Ask<'_>,
        cap: &Capacity<'_>,
        w: &mut W,
    ) -> Result<(), W::Error> {
        uwrite!(w, "profile:        {}\n", ask.profile.name())?;
        uwrite!(w, "cores:          {}  ({})\n", cap.cores, cap.cores_from)?;
        uwrite!(
            w,
            "usable memory:  {} MiB  ({})\n",
            cap.usable_mb,
            cap.usable_from
        )?;
        uwrite!(w, "divisor:        {}  (", self.divisor.0)?;
        write_from(w, self.divisor.1)?;
        uwrite!(
            w,
            ")\naggressive:     {}  (",
            if self.aggressive.0 { "on" } else { "off" }
        )?;
        write_from(w, self.aggressive.1)?;
        if self.aggressive.1 == From::Auto {
            uwrite!(
                w,
                ": {} {} MiB {} {} MiB",
                cap.usable_figure,
                cap.usable_mb,
                if self.aggressive.0 { ">=" } else { "<" },
                AGGRESSIVE_FROM_MB
            )?;
        }
        uwrite!(w, ")\npeak per job:   {} MiB  (", self.peak_mb.0)?;
        write_from(w, self.peak_mb.1)?;
        if self.peak_mb.1 == From::Default {
            uwrite!(w, " for {}", ask.profile.name())?;
            if ask.profile != Profile::Heavy {
                uwrite!(
                    w,
                    ", {}",
                    if self.aggressive.0 {
                        "aggressive"
                    } else {
                        "normal"
                    }
                )?;
            }
        }
        uwrite!(w, ")\n")?;
        if self.peak_mb.1 == From::Default {
            uwrite!(
                w,
                "guess:          the default is not measured: {}, then {}\n",
                MEASURE_RUN,
                MEASURE_FROM
            )?;
        }
        if let Some(r) = ask.requested {
            uwrite!(w, "requested:      {}  (--requested)\n", r)?;
        }
        for i in &self.ignored {
            uwrite!(
                w,
                "ignored:        {}={} (expected {})\n",
                i.var,
                i.value,
                i.expected
            )?;
        }
        Ok(())
    }

    /// The formula of `--explain` with its numbers, and what bound the
    /// result.
    fn explain_formula<W: uWrite + ?Sized>(
        &self,
        cap: &Capacity<'_>,
        w: &mut W,
    ) -> Result<(), W::Error> {
        if self.binding == Binding::Override {
            uwrite!(
                w,
                "jobs = {}  (PARALLEL_JOBS overrides everything)\n",
                self.jobs
            )?;
            return Ok(());
        }
        let pct = if self.headroom { " x 0.9" } else { "" };
        uwrite!(
            w,
            "jobs = max(1, min(cores {}, {}{} / {} / {} = {})) = {}\n",
            cap.cores,
            cap.usable_mb,
            pct,
            self.divisor.0,
            self.peak_mb.0,
            self.memory_jobs,
            self.jobs
        )?;
        let by = match self.binding {
            Binding::Override => "PARALLEL_JOBS",
            Binding::Cores => "cores",
            Binding::Memory => "memory",
            Binding::Requested => "--requested",
            Binding::Floor => {
                "the floor of 1 (not even one job fits in memory: see headroom advise)"
            }
        };
        uwrite!(w, "bound by:       {}", by)?;
        if self.binding == Binding::Cores {
            uwrite!(w, " ({})", cap.cores_from)?;
        } else if self.binding == Binding::Memory {
            uwrite!(w, " ({})", cap.usable_from)?;
        }
        uwrite!(w, "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(cores: u64, mb: u64) -> Capacity<'static> {
        Capacity {
            cores,
            cores_from: "--cores",
            usable_mb: mb,
            usable_from: "--avail-mb",
            usable_figure: "--avail-mb",
        }
    }

    fn ask(p: Profile, peak: Option<u64>) -> Ask<'static> {
        Ask {
            profile: p,
            peak_mb: peak,
            measured: None,
            requested: None,
        }
    }

    fn jobs(a: &Ask<'static>, env: &Env<'static>, c: &Capacity<'static>) -> u64 {
        plan(a, env, c).jobs
    }

    #[test]
    fn spec_reference_cases() {
        let e = Env::default();
        let c = cap(8, 16000);
        assert_eq!(jobs(&ask(Profile::Generic, Some(4096)), &e, &c), 3);
        assert_eq!(jobs(&ask(Profile::Generic, Some(2000)), &e, &c), 8);
        assert_eq!(jobs(&ask(Profile::Generic, Some(99999)), &e, &c), 1);
        let heavy = ask(Profile::Heavy, None);
        let pj = |v| Env {
            parallel_jobs: Some(v),
            ..Env::default()
        };
        assert_eq!(jobs(&heavy, &pj("5"), &c), 5);
        assert_eq!(jobs(&heavy, &pj("0"), &c), 3);
        assert_eq!(jobs(&heavy, &pj("bogus"), &c), 3);
        assert_eq!(jobs(&heavy, &pj("-2"), &c), 3);
        let c = cap(64, 24000);
        let div = |v| Env {
            build_mem_divisor: Some(v),
            ..Env::default()
        };
        let p1000 = ask(Profile::Generic, Some(1000));
        assert_eq!(jobs(&p1000, &div("1"), &c), 24);
        assert_eq!(jobs(&p1000, &div("3"), &c), 8);
        assert_eq!(jobs(&p1000, &div("bogus"), &c), 24);
        assert_eq!(jobs(&p1000, &div("0"), &c), 24);
    }

    #[test]
    fn profiles_aggressive_and_env_overrides() {
        let big = cap(64, 20000);
        let g = ask(Profile::Generic, None);
        let p = plan(&g, &Env::default(), &big);
        assert_eq!((p.aggressive.0, p.peak_mb.0, p.jobs), (true, 800, 25));
        let off = Env {
            aggressive: Some("false"),
            ..Env::default()
        };
        assert_eq!(plan(&g, &off, &big).peak_mb.0, 2000);
        let r = plan(&ask(Profile::Rust, None), &Env::default(), &cap(8, 8000));
        assert_eq!(
            (r.aggressive.0, r.peak_mb.0, r.jobs, r.binding),
            (false, 2500, 3, Binding::Memory)
        );
        let h = plan(&ask(Profile::Heavy, None), &Env::default(), &big);
        assert_eq!(h.peak_mb.0, 4096);
        let env = Env {
            default_mb_per_job: Some("500"),
            cpp_heavy_mb_per_job: Some("x"),
            aggressive: Some("yes"),
            ..Env::default()
        };
        let p = plan(&g, &env, &cap(4, 1800));
        assert_eq!(
            (p.peak_mb, p.jobs),
            ((500, From::Env("DEFAULT_MB_PER_JOB")), 3)
        );
        assert_eq!(p.ignored.len(), 1);
        assert_eq!(p.ignored[0].var, "AGGRESSIVE_PARALLELISM");
        let p = plan(&ask(Profile::Heavy, None), &env, &cap(4, 10000));
        assert_eq!((p.peak_mb, p.ignored.len()), ((4096, From::Default), 2));
    }

    #[test]
    fn measured_peak_keeps_ten_percent_and_requested_caps() {
        let a = Ask {
            profile: Profile::Generic,
            peak_mb: None,
            measured: Some((1000, "run.csv")),
            requested: None,
        };
        // 0.9 × 10000 / 1000 = 9, not 10.
        let p = plan(&a, &Env::default(), &cap(16, 10000));
        assert_eq!((p.jobs, p.binding, p.headroom), (9, Binding::Memory, true));
        let a = Ask {
            requested: Some(4),
            ..a
        };
        let p = plan(&a, &Env::default(), &cap(16, 10000));
        assert_eq!((p.jobs, p.binding), (4, Binding::Requested));
        let a = Ask {
            requested: Some(40),
            ..a
        };
        assert_eq!(plan(&a, &Env::default(), &cap(2, 100_000)).jobs, 2);
        // --peak-mb below the measured peak does not win.
        let both = Ask {
            peak_mb: Some(100),
            measured: Some((1700, "run.csv")),
            requested: None,
            profile: Profile::Generic,
        };
        let p = plan(&both, &Env::default(), &cap(16, 10000));
        assert_eq!(p.peak_mb, (1700, From::Measured("run.csv")));
        let both = Ask {
            peak_mb: Some(3000),
            ..both
        };
        assert_eq!(
            plan(&both, &Env::default(), &cap(16, 10000)).peak_mb.0,
            3000
        );
        let floor = plan(&ask(Profile::Heavy, None), &Env::default(), &cap(4, 300));
        assert_eq!(
            (floor.jobs, floor.binding, floor.memory_jobs),
            (1, Binding::Floor, 0)
        );
    }

    /// Issue 12: a 3 GiB memory cgroup on a 24 GiB host planned 800 MB per
    /// job (aggressive, from the host's MemAvailable); the rule applies to
    /// usable memory, before the divisor.
    #[test]
    fn aggressive_judged_from_usable_memory_not_host_memavailable() {
        let container = Capacity {
            cores: 2,
            cores_from: "sched_getaffinity",
            usable_mb: 3000,
            usable_from: "cgroup memory.limit_in_bytes on /ci : limit 3072 MiB, usage 72 MiB; MemAvailable 22000 MiB",
            usable_figure: "cgroup available",
        };
        for (profile, mb) in [(Profile::Generic, 2000), (Profile::Rust, 2500)] {
            let a = ask(profile, None);
            let p = plan(&a, &Env::default(), &container);
            assert_eq!((p.aggressive, p.peak_mb.0), ((false, From::Auto), mb));
        }
        let a = ask(Profile::Generic, None);
        let p = plan(&a, &Env::default(), &container);
        let mut s = heapless::String::<2048>::new();
        p.explain(&a, &container, &mut s).unwrap();
        assert!(
            s.contains("aggressive:     off  (auto: cgroup available 3000 MiB < 16384 MiB)\n"),
            "{s}"
        );
        // The threshold is inclusive, and the divisor does not enter it.
        let div = Env {
            build_mem_divisor: Some("4"),
            ..Env::default()
        };
        assert!(plan(&a, &div, &cap(8, AGGRESSIVE_FROM_MB)).aggressive.0);
        assert!(!plan(&a, &div, &cap(8, AGGRESSIVE_FROM_MB - 1)).aggressive.0);
    }

    #[test]
    fn explain_names_every_input() {
        let c = Capacity {
            cores: 1,
            cores_from: "sched_getaffinity (taskset): 1 of 2 online",
            usable_mb: 20000,
            usable_from: "MemAvailable (proc/meminfo)",
            usable_figure: "MemAvailable",
        };
        let a = ask(Profile::Generic, None);
        let p = plan(&a, &Env::default(), &c);
        let mut s = heapless::String::<2048>::new();
        p.explain(&a, &c, &mut s).unwrap();
        assert_eq!(
            s.as_str(),
            "profile:        generic
cores:          1  (sched_getaffinity (taskset): 1 of 2 online)
usable memory:  20000 MiB  (MemAvailable (proc/meminfo))
divisor:        1  (default)
aggressive:     on  (auto: MemAvailable 20000 MiB >= 16384 MiB)
peak per job:   800 MiB  (default for generic, aggressive)
guess:          the default is not measured: headroom run -- make …, then headroom jobs --from resources-run.csv
jobs = max(1, min(cores 1, 20000 / 1 / 800 = 25)) = 1
bound by:       cores (sched_getaffinity (taskset): 1 of 2 online)
"
        );
    }
}
