//! The planning commands (`jobs`, `advise`, `status`) and the advice
//! `record` and `run` print after their summary.

use std::io::Write;
use std::process::ExitCode;

use headroom::followed::rusage::Interrupt;
use headroom::kernel::root::Root;
use headroom::plan::status::Extra;
use headroom::plan::status::snapshot::Snapshot;
use headroom::report::csvread::CsvRows;
use headroom::report::summary::{Summary, TEXT_CAP, Text};
use headroom::tick::held::Held;

use super::defaults::{disk_for, disk_path, env_nonempty, no_mlock};
use super::files::{open_regular, open_root, stream};
use super::messages::{Fail, Instead, print_text, usage, warn_unknown_limits};
use super::options::{AdviseArgs, Budget, JobsArgs, StatusArgs};
use super::pool::set_budget;
use super::report_cmd::{recorded_interrupt, summary_path};
use super::status_pool::PoolStatus;

/// The advice of `advise` for the largest compiler this recording measured
/// (keeping 10 % headroom), on the host recorded: THE BUILD's when a build
/// was followed, else the host's; empty when no such compiler ran.
pub fn measured_advice(root: &Root, summary: &Summary) -> String {
    let Some((peak, whose)) = summary.sizing_peak().filter(|&(p, _)| p > 0) else {
        return String::new();
    };
    let live = root.is_live();
    let mut buf = vec![0u8; 64 * 1024];
    let mut dir = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    let cores = headroom::plan::host::cores(root, live, &mut buf);
    let Ok(mem) = headroom::plan::host::memory(root, &mut buf) else {
        return String::new();
    };
    let cap = headroom::plan::jobs::Capacity {
        cores: u64::from(cores.usable),
        cores_from: "this host",
        usable_mb: mem.usable_mb,
        usable_from: "this host",
        usable_figure: usable_figure(mem.limit),
    };
    let measured = measured_words(whose.words(), summary.partial.interrupt);
    let ask = headroom::plan::jobs::Ask {
        profile: headroom::plan::jobs::Profile::Generic,
        peak_mb: None,
        measured: Some((peak, &measured)),
        requested: None,
    };
    let plan = headroom::plan::jobs::plan(&ask, &headroom::plan::jobs::Env::default(), &cap);
    let disk = disk_path(None);
    let s = headroom::plan::advise::gather(
        root,
        live,
        mem.usable_mb,
        Some(&mem),
        &disk,
        "/tmp",
        &mut buf,
        &mut dir,
    );
    let mut text = Box::new(Text::new());
    let _ = ufmt::uwrite!(
        text,
        "\nADVICE (for {}, {} MiB, with 10 % headroom, on this host now):\n",
        whose.words(),
        peak
    );
    // Held: the renderer has no test after each piece (smaller code);
    // what fitted is shown either way.
    let mut held = Held::new(&mut *text);
    let Ok(()) = headroom::plan::advise::render(
        &plan,
        headroom::plan::jobs::Profile::Generic,
        &s,
        &mut held,
    );
    text.as_str().to_string()
}

/// What `measured:` says of a peak (`whose`, where from): with an
/// interrupted build, that it sized from one and that the peaks are
/// lower bounds (a whole build may peak higher).
fn measured_words(whose: &str, interrupt: Option<Interrupt>) -> String {
    match interrupt {
        None => whose.to_string(),
        Some(i) => format!(
            "{whose}; sized from an interrupted build ({}): its peaks are lower bounds",
            interrupt_words(i)
        ),
    }
}

/// `SIGINT after 60.012 s` ([`Interrupt::write`]).
fn interrupt_words(i: Interrupt) -> String {
    let mut s = heapless::String::<64>::new();
    let _ = i.write(&mut s);
    s.as_str().to_string()
}

/// Everything `jobs` and `advise` compute before printing.
struct Planned {
    root: Root,
    live: bool,
    profile: headroom::plan::jobs::Profile,
    cores: u64,
    cores_from: String,
    usable_mb: u64,
    usable_from: String,
    usable_figure: &'static str,
    /// The memory measured (`None` with `--avail-mb`).
    memory: Option<headroom::plan::host::Memory>,
    measured: Option<(u64, String)>,
    env: [Option<String>; 6],
}

fn prepare_plan(a: &JobsArgs) -> Result<Result<Planned, ExitCode>, Fail> {
    let Some(profile) = headroom::plan::jobs::Profile::parse(&a.profile) else {
        return usage(&format!(
            "--profile {}: expected generic, rust or heavy",
            a.profile
        ))
        .map(Err);
    };
    for (name, v) in [
        ("--peak-mb", a.peak_mb),
        ("--cores", a.cores),
        ("--requested", a.requested),
    ] {
        if v == Some(0) {
            return usage(&format!("{name} must be at least 1")).map(Err);
        }
    }
    let (root, live) = open_root(&a.root)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut cpu_unknown = None;
    let (cores, cores_from) = match a.cores {
        Some(n) => (n, "--cores".to_string()),
        None => {
            let c = headroom::plan::host::cores(&root, live, &mut buf);
            let mut from = match c.limit {
                headroom::plan::host::CoreLimit::Affinity => {
                    format!("sched_getaffinity: {} in the affinity mask", c.usable)
                }
                headroom::plan::host::CoreLimit::Online => {
                    format!("{} CPUs online ({})", c.usable, c.online_from)
                }
                headroom::plan::host::CoreLimit::Quota => format!(
                    "cgroup CPU quota {}.{:02} CPUs, rounded up",
                    c.quota_millicpus.unwrap_or(0) / 1000,
                    c.quota_millicpus.unwrap_or(0) % 1000 / 10
                ),
                headroom::plan::host::CoreLimit::Cpuset => {
                    format!("cgroup cpuset of {} CPUs", c.usable)
                }
            };
            if let Some(online) = c.online
                && online != c.usable
            {
                from.push_str(&format!("; {online} online"));
            }
            if c.cgroup_error.is_some() {
                from.push_str("; the cgroup's CPU limit is unknown");
            }
            cpu_unknown = c.cgroup_error;
            (u64::from(c.usable), from)
        }
    };
    let (usable_mb, usable_from, usable_figure, memory) = match a.avail_mb {
        Some(n) => (n, "--avail-mb".to_string(), "--avail-mb", None),
        None => {
            let m = headroom::plan::host::memory(&root, &mut buf)
                .map_err(|_| Fail("cannot read proc/meminfo: use --avail-mb to plan".into()))?;
            let mut from = usable_from(&root, &m, &mut buf);
            if m.cgroup_error.is_some() {
                from.push_str("; the cgroup's memory limit is unknown");
            }
            (m.usable_mb, from, usable_figure(m.limit), Some(m))
        }
    };
    warn_unknown_limits(
        memory.as_ref().and_then(|m| m.cgroup_error),
        cpu_unknown,
        &Instead {
            then: "this plan is from the host's figures",
            memory: Some("--avail-mb N"),
            cpu: Some("--cores N"),
        },
    );
    let measured = match &a.from {
        None => None,
        Some(path) => Some(largest_peak(path)?),
    };
    let env = headroom::plan::jobs::ENV_VARS.map(|k| std::env::var(k).ok());
    Ok(Ok(Planned {
        root,
        live,
        profile,
        cores,
        cores_from,
        usable_mb,
        usable_from,
        usable_figure,
        memory,
        measured,
        env,
    }))
}

/// The short name of the figure usable memory is, for the aggressive-mode
/// line of `jobs --explain`.
fn usable_figure(limit: headroom::plan::host::MemLimit) -> &'static str {
    match limit {
        headroom::plan::host::MemLimit::MemAvailable => "MemAvailable",
        headroom::plan::host::MemLimit::Cgroup => "cgroup available",
    }
}

/// Where usable memory came from, for `jobs --explain`: which limit binds
/// and, when a cgroup limits memory, its path, limit, usage, inactive file
/// cache and available memory (`cgroup /x binds: memory.max 1024 MiB −
/// (usage 719 MiB − inactive file 700 MiB) = available 1004 MiB;
/// MemAvailable 23000 MiB`).
fn usable_from(
    root: &headroom::kernel::root::Root,
    m: &headroom::plan::host::Memory,
    buf: &mut [u8],
) -> String {
    let avail = m.meminfo.mem_available_kib / 1024;
    let host = format!(
        "MemAvailable (proc/meminfo{})",
        if m.meminfo.mem_available_estimated {
            ", estimated"
        } else {
            ""
        }
    );
    let Some(a) = m.cgroup else {
        return host;
    };
    let mut path = heapless::String::<256>::new();
    headroom::plan::host::cgroup_path(root, b"memory", a.depth, buf, &mut path);
    let version = m
        .cgroup_version
        .unwrap_or(headroom::kernel::cgroup::Version::V2);
    let limit = format!(
        "{} {} MiB",
        headroom::kernel::cgroup::limit_file(version),
        a.limit_bytes >> 20
    );
    let figures = match a.inactive_file_bytes {
        Some(i) => format!(
            "{limit} − (usage {} MiB − inactive file {} MiB) = available {} MiB",
            a.usage_bytes >> 20,
            i >> 20,
            a.available_bytes >> 20
        ),
        None => format!(
            "{limit} − usage {} MiB = available {} MiB (no inactive_file in {}: its cache counts as used)",
            a.usage_bytes >> 20,
            a.available_bytes >> 20,
            headroom::kernel::cgroup::STAT_FILE
        ),
    };
    match m.limit {
        headroom::plan::host::MemLimit::Cgroup => format!(
            "cgroup {} binds: {figures}; MemAvailable {avail} MiB",
            path.as_str()
        ),
        headroom::plan::host::MemLimit::MemAvailable => {
            format!("{host} binds; cgroup {}: {figures}", path.as_str())
        }
    }
}

/// The peak a recorded CSV measured, and whose, by the summary's rule
/// ([`Summary::sizing_peak`]): the largest build_peak_rss_mb (THE BUILD's
/// compilers) when the CSV has any, else the largest peak_rss_mb (every
/// compiler on the host: a plain `record`, or a CSV from before the build
/// columns), said as such; of an interrupted build (its summary says so,
/// [`recorded_interrupt`]) said too, and warned on stderr. `jobs --from`,
/// `advise --from` and `run --jobserver --from` all read it here.
pub fn largest_peak(path: &str) -> Result<(u64, String), Fail> {
    let fd = open_regular(path)?;
    let mut rows = Box::new(CsvRows::new());
    let mut summary = Box::new(Summary::new(None, None));
    stream(
        &fd,
        path,
        |chunk| rows.feed(chunk, &mut |r| summary.observe(r)),
        |_| Fail(format!("{path}: not a resource CSV")),
    )?;
    let (peak, whose) = summary.sizing_peak().ok_or_else(|| {
        Fail(format!(
            "{path}: no peak_rss_mb recorded (a --compat CSV, or no compiler ran)"
        ))
    })?;
    let interrupt = recorded_interrupt(path);
    if let Some(i) = interrupt {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {path} is of an interrupted build ({}, says {}): its peak, {peak} MiB, is a lower bound",
            interrupt_words(i),
            summary_path(path).display()
        );
    }
    let whose = format!("{path}: {} ({})", whose.words(), whose.column());
    Ok((peak, measured_words(&whose, interrupt)))
}

impl Planned {
    fn env(&self) -> headroom::plan::jobs::Env<'_> {
        headroom::plan::jobs::Env {
            parallel_jobs: self.env[0].as_deref(),
            build_mem_divisor: self.env[1].as_deref(),
            aggressive: self.env[2].as_deref(),
            default_mb_per_job: self.env[3].as_deref(),
            rust_mb_per_job: self.env[4].as_deref(),
            cpp_heavy_mb_per_job: self.env[5].as_deref(),
        }
    }

    fn capacity(&self) -> headroom::plan::jobs::Capacity<'_> {
        headroom::plan::jobs::Capacity {
            cores: self.cores,
            cores_from: &self.cores_from,
            usable_mb: self.usable_mb,
            usable_from: &self.usable_from,
            usable_figure: self.usable_figure,
        }
    }

    fn ask(&self, a: &JobsArgs) -> headroom::plan::jobs::Ask<'_> {
        headroom::plan::jobs::Ask {
            profile: self.profile,
            peak_mb: a.peak_mb,
            measured: self.measured.as_ref().map(|(p, f)| (*p, f.as_str())),
            requested: a.requested,
        }
    }
}

fn warn_ignored(plan: &headroom::plan::jobs::Plan<'_>) {
    for i in &plan.ignored {
        let _ = writeln!(
            std::io::stderr(),
            "headroom: warning: {}={} ignored (expected {})",
            i.var,
            i.value,
            i.expected
        );
    }
}

/// `jobs`: the bare job count, or with `--explain` every input and its source.
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn jobs_cmd(a: JobsArgs) -> Result<ExitCode, Fail> {
    let p = match prepare_plan(&a)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let env = p.env();
    let cap = p.capacity();
    let ask = p.ask(&a);
    let plan = headroom::plan::jobs::plan(&ask, &env, &cap);
    warn_ignored(&plan);
    let mut text = Box::new(Text::new());
    if a.explain {
        let mut held = Held::new(&mut *text);
        let Ok(()) = plan.explain(&ask, &cap, &mut held);
        held.finish()
            .map_err(|_| Fail("explanation larger than its buffer".into()))?;
    } else {
        let _ = ufmt::uwrite!(text, "{}\n", plan.jobs);
    }
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `advise`: the safe -j per build tool and, when a job does not fit, the swap to add.
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn advise_cmd(a: AdviseArgs) -> Result<ExitCode, Fail> {
    let (pa, own) = a.split();
    let p = match prepare_plan(&pa)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let env = p.env();
    let cap = p.capacity();
    let ask = p.ask(&pa);
    let plan = headroom::plan::jobs::plan(&ask, &env, &cap);
    warn_ignored(&plan);
    let disk = disk_for(p.live, own.disk_path);
    let mut buf = vec![0u8; 64 * 1024];
    let mut dir = vec![std::mem::MaybeUninit::<u8>::uninit(); 8 * 1024];
    let s = headroom::plan::advise::gather(
        &p.root,
        p.live,
        p.usable_mb,
        p.memory.as_ref(),
        &disk,
        "/tmp",
        &mut buf,
        &mut dir,
    );
    let mut text = Box::new(Text::new());
    let mut held = Held::new(&mut *text);
    let Ok(()) = headroom::plan::advise::render(&plan, p.profile, &s, &mut held);
    held.finish()
        .map_err(|_| Fail("advice larger than its buffer".into()))?;
    print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `status`: the one screen before a build.
// Never inlined (see `dispatch` in main.rs).
#[inline(never)]
pub fn status_cmd(a: StatusArgs) -> Result<ExitCode, Fail> {
    let (root, live) = open_root(&a.root)?;
    let disk = disk_for(live, a.disk_path);
    let mut buf = vec![0u8; headroom::plan::status::SCRATCH_LEN];
    let opts = headroom::plan::status::StatusOpts {
        live,
        disk_path: &disk,
        tmp_path: "/tmp",
        memlock: live.then(|| headroom::tick::footprint::Outlook::of_self(no_mlock(), &mut buf)),
    };
    // Each file read once, into one value that every rendering takes.
    let snap = Box::new(Snapshot::read(&root, opts, &mut buf));
    warn_unknown_limits(
        snap.memcg.as_ref().err().copied(),
        snap.cpu_cgroup.err(),
        &Instead {
            then: "the figures shown are the host's",
            memory: None,
            cpu: None,
        },
    );
    let pool_dir = a
        .pool
        .or_else(|| live.then(|| env_nonempty("HEADROOM_POOL")).flatten());
    if let Some(Budget(mb)) = a.set_budget {
        let Some(dir) = pool_dir.as_deref() else {
            return usage(if live {
                "status --set-budget names no pool: give --pool DIR (or HEADROOM_POOL)"
            } else {
                "status --set-budget names no pool: give --pool DIR ($HEADROOM_POOL is not read with --root)"
            });
        };
        set_budget(dir, mb)?;
    }
    // A pool that cannot be read is the error, before any of the screen.
    let pool = match pool_dir {
        Some(dir) => Some(PoolStatus::read(dir, &snap)?),
        None => None,
    };
    // The pool at its place: the screen's last lines, the JSON's last member.
    let mut pool_part = |out: &mut StatusOut| {
        if let Some(p) = &pool {
            out.beside(&p.part(a.json));
        }
        Ok(())
    };
    let more: Extra<'_, StatusOut> = &mut pool_part;
    let mut out = StatusOut::default();
    let Ok(()) = if a.json {
        headroom::plan::status::render_json(&snap, &mut out, Some(more))
    } else {
        headroom::plan::status::render(&snap, &mut out, Some(more))
    };
    if out.over {
        return Err(Fail("status larger than its buffer".into()));
    }
    print_text(&out.text)?;
    Ok(ExitCode::SUCCESS)
}

/// What `status` prints: the library's screen or JSON, held to
/// [`TEXT_CAP`] bytes (past them, an error), and the pool's part beside
/// it, which is not counted against them.
#[derive(Default)]
struct StatusOut {
    /// The whole output.
    text: String,
    /// Bytes of it the library wrote.
    own: usize,
    /// A piece did not fit in [`TEXT_CAP`]: nothing more is written, and
    /// the output is the error.
    over: bool,
}

impl StatusOut {
    /// Appends the pool's part.
    fn beside(&mut self, s: &str) {
        self.text.push_str(s);
    }
}

// Never an error: one past TEXT_CAP sets `over` instead, so the renderers
// have no test after each piece (smaller code; see
// headroom::tick::held), and status_cmd checks `over` once.
impl ufmt::uWrite for StatusOut {
    type Error = std::convert::Infallible;

    // Never inlined: one call at each piece of the screen.
    #[inline(never)]
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        if self.over || self.own + s.len() > TEXT_CAP {
            self.over = true;
            return Ok(());
        }
        self.own += s.len();
        self.text.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_words_say_an_interrupted_build() {
        assert_eq!(
            measured_words("this build's largest compiler", None),
            "this build's largest compiler"
        );
        let i = Interrupt {
            signal: 15,
            after_ms: 900_000,
        };
        assert_eq!(
            measured_words("r.csv: this build's largest compiler", Some(i)),
            "r.csv: this build's largest compiler; sized from an interrupted build (SIGTERM after 900.000 s): its peaks are lower bounds"
        );
    }
}
