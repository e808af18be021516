//! Small-host advice: the safe `-j` with a command per build tool, and when
//! one job does not fit, the swap to add and how, with every command written
//! out (SPEC.md "Small-host advice").
//!
//! [`Situation`] holds the measured facts; [`render`] is pure, so a board
//! tree and a live host give advice through the same code.
//!
//! # References
//! swapon(8), mkswap(8), zramctl(8), dphys-swapfile(8),
//! `Documentation/admin-guide/blockdev/zram.rst`, tmpfs(5).

use ufmt::{uWrite, uwrite};

use crate::followed::figures::write_centi;
use crate::plan::jobs::{Plan, Profile};

/// Swap is added in whole steps of this many MiB.
pub const SWAP_STEP_MB: u64 = 512;

/// Compression ratio (orig_data_size / compr_data_size, hundredths) assumed
/// for zram when no device shows its own: 2:1.
pub const ZRAM_COMPRESSION_CENTI: u64 = 200;

/// /tmp smaller than this (MiB free) is "small" for a build's temporaries.
pub const TMP_SMALL_MB: u64 = 2048;

/// What advice is computed from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Situation {
    /// Usable memory, MiB (min of MemAvailable and the tightest cgroup's
    /// available memory).
    pub usable_mb: u64,
    /// Swap configured, MiB.
    pub swap_total_mb: u64,
    /// Swap free, MiB.
    pub swap_free_mb: u64,
    /// zram devices that exist (initialised or not).
    pub zram_devices: u32,
    /// The compression ratio the zram devices show (orig_data_size /
    /// compr_data_size × 100), when they hold 1 MiB or more
    /// ([`crate::kernel::zram::MIN_STORED_FOR_RATIO`]).
    pub zram_compression_centi: Option<u64>,
    /// The build disk (and so a swapfile) is SD or eMMC flash: an SD/eMMC
    /// card by sysfs ([`crate::kernel::blockdev::Device::Card`]), else a
    /// mount source naming `mmcblk`.
    pub on_flash: bool,
    /// The device of the build disk (`/dev/mmcblk0p2`), for the message.
    pub disk_device: heapless::String<128>,
    /// `/etc/dphys-swapfile` exists (Raspberry Pi OS), with its
    /// `CONF_SWAPSIZE` in MiB when set.
    pub dphys: Option<Option<u64>>,
    /// /tmp is a tmpfs (its files are RAM).
    pub tmp_tmpfs: bool,
    /// /tmp free, MiB, when known.
    pub tmp_avail_mb: Option<u64>,
    /// Free space on the build disk, MiB, when known.
    pub disk_avail_mb: Option<u64>,
    /// The memory cgroup whose limit binds usable memory, when one does
    /// ([`cgroup_limit`]): host swap helps a job there only as far as the
    /// cgroup may swap.
    pub cgroup: Option<CgroupLimit>,
    /// Inside a container whose memory cgroup could not be read (no
    /// /sys; also when the memory figure was given by hand there): swap
    /// is still the host's to add, though how much the container may use
    /// of it is unknown.
    pub container_unseen: bool,
}

/// The memory cgroup that binds usable memory, as advice needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupLimit {
    /// Its memory limit, MiB.
    pub limit_mb: u64,
    /// The swap its processes may use, MiB
    /// ([`crate::kernel::cgroup::MemCgroup::swap_allowance_bytes`]);
    /// `None` when the cgroup does not limit swap.
    pub swap_allowance_mb: Option<u64>,
    /// Its hierarchy: which file limits its swap (v2 `memory.swap.max`,
    /// v1 `memory.memsw.limit_in_bytes`).
    pub version: crate::kernel::cgroup::Version,
    /// Its path (from /proc/self/cgroup), for the message; empty when
    /// unknown.
    pub path: heapless::String<128>,
}

/// The binding cgroup of `mem` ([`crate::plan::host::Memory::binding_cgroup`])
/// for [`Situation::cgroup`]: `None` when MemAvailable binds or no cgroup
/// limits memory. `buf`: scratch for `/proc/self/cgroup`.
pub fn cgroup_limit(
    root: &crate::kernel::root::Root,
    mem: &crate::plan::host::Memory,
    buf: &mut [u8],
) -> Option<CgroupLimit> {
    let a = mem.binding_cgroup()?;
    let version = mem.cgroup_version?;
    let mut full = heapless::String::<256>::new();
    crate::plan::host::cgroup_path(root, b"memory", a.depth, buf, &mut full);
    let mut path = heapless::String::new();
    // A path longer than 127 bytes keeps its end, the informative part.
    let start = full.len().saturating_sub(127);
    let start = (start..=full.len())
        .find(|&i| full.is_char_boundary(i))
        .unwrap_or(full.len());
    let _ = path.push_str(full.get(start..).unwrap_or(""));
    Some(CgroupLimit {
        limit_mb: a.limit_bytes >> 20,
        swap_allowance_mb: mem.cgroup_swap_allowance_bytes.map(|b| b >> 20),
        version,
        path,
    })
}

impl Situation {
    /// The free swap a job can use: all of it, or as much as the binding
    /// cgroup allows, MiB.
    fn usable_swap_mb(&self) -> u64 {
        match self.cgroup.as_ref().and_then(|c| c.swap_allowance_mb) {
            Some(a) => self.swap_free_mb.min(a),
            None => self.swap_free_mb,
        }
    }

    /// The binding cgroup when swap cannot cover a job needing `need`
    /// MiB with `usable` MiB of RAM: it may swap less than `need −
    /// usable` (none at all when its allowance is 0).
    fn cgroup_cannot_swap(&self, need: u64, usable: u64) -> Option<&CgroupLimit> {
        self.cgroup.as_ref().filter(|c| {
            c.swap_allowance_mb
                .is_some_and(|a| usable.saturating_add(a) < need)
        })
    }
}

/// `etc/dphys-swapfile` under the root (Raspberry Pi OS swap manager).
pub const DPHYS_CONF: &str = "etc/dphys-swapfile";

/// Measures the [`Situation`] of the host under `root` (`live`: the real
/// machine, so statvfs is the syscall; else a board tree's capture).
/// `usable_mb` comes from [`crate::plan::host::memory`], and the binding
/// cgroup ([`cgroup_limit`]) from `memory` when it was read (`None`: a
/// memory figure given by hand). Missing sources leave their fields at
/// "unknown" defaults. `buf`: 64 KiB scratch.
#[allow(clippy::too_many_arguments)]
pub fn gather(
    root: &crate::kernel::root::Root,
    live: bool,
    usable_mb: u64,
    memory: Option<&crate::plan::host::Memory>,
    disk_path: &str,
    tmp_path: &str,
    buf: &mut [u8],
    dir_scratch: &mut [core::mem::MaybeUninit<u8>],
) -> Situation {
    let mut s = Situation {
        usable_mb,
        ..Situation::default()
    };
    if let Ok(b) = crate::kernel::meminfo::read(root, buf)
        && let Ok(m) = crate::kernel::meminfo::parse(b)
    {
        s.swap_total_mb = m.swap_total_kib / 1024;
        s.swap_free_mb = m.swap_free_kib / 1024;
    }
    if let Ok(sb) = root.open_dir(crate::kernel::zram::SYS_BLOCK)
        && let Ok(t) = crate::kernel::zram::totals(rustix::fd::AsFd::as_fd(&sb), dir_scratch, buf)
    {
        s.zram_devices = t.devices;
        // None below 1 MiB stored: an idle device's few pages are no ratio.
        s.zram_compression_centi =
            crate::kernel::zram::compression_centi(t.orig_data_size, t.compr_data_size);
    }
    if let Ok(b) = root.read(DPHYS_CONF, buf) {
        s.dphys = Some(dphys_swapsize(b));
    }
    // An SD/eMMC card by sysfs (as the disk advice tells it: a Pi's root
    // is `/dev/root` in some mount tables), else by the mount's source.
    let card = crate::kernel::blockdev::resolve(root, disk_path.as_bytes(), buf)
        .map(|d| d.device == crate::kernel::blockdev::Device::Card);
    let (_, source) = crate::plan::host::fs_type_and_source(root, disk_path, buf);
    s.on_flash = card.unwrap_or_else(|_| source.contains("mmcblk"));
    s.disk_device = source;
    let (tmp_type, _) = crate::plan::host::fs_type_and_source(root, tmp_path, buf);
    s.tmp_tmpfs = tmp_type.is_some_and(|t| t == "tmpfs");
    s.tmp_avail_mb = crate::plan::host::fs_stat(root, live, tmp_path, buf).map(|f| f.avail_mib());
    s.disk_avail_mb = crate::plan::host::fs_stat(root, live, disk_path, buf).map(|f| f.avail_mib());
    s.cgroup = memory.and_then(|m| cgroup_limit(root, m, buf));
    // The memory figures already say whether the cgroup could be read;
    // only a figure given by hand (`memory` None) needs a look of its own.
    s.container_unseen = s.cgroup.is_none()
        && memory.map_or_else(
            || crate::kernel::cgroup::open_memory(root, buf).is_err(),
            |m| m.cgroup_error.is_some(),
        );
    s
}

/// Parses `CONF_SWAPSIZE=N` (MiB) from /etc/dphys-swapfile; `None` when the
/// line is absent or commented out.
pub fn dphys_swapsize(b: &[u8]) -> Option<u64> {
    crate::kernel::parse::lines(b).find_map(|l| {
        let v = crate::kernel::parse::trim(l).strip_prefix(b"CONF_SWAPSIZE=")?;
        crate::kernel::parse::parse_u64(crate::kernel::parse::trim(v))
    })
}

/// `n` rounded up to a whole [`SWAP_STEP_MB`].
pub fn round_up_step(n: u64) -> u64 {
    n.div_ceil(SWAP_STEP_MB).saturating_mul(SWAP_STEP_MB)
}

/// Writes a size in MiB as the tools take it: `2G` when whole GiB, else `1536M`.
fn size_arg<W: uWrite + ?Sized>(w: &mut W, mb: u64) -> Result<(), W::Error> {
    if mb.is_multiple_of(1024) {
        uwrite!(w, "{}G", mb / 1024)
    } else {
        uwrite!(w, "{}M", mb)
    }
}

/// Whether one job's peak (with its margin) fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fit {
    /// In usable RAM.
    Ram,
    /// Only with the free swap too.
    WithSwap,
    /// Not even in RAM and free swap together.
    No,
}

/// Renders the advice for `plan` (computed for `profile`) on `s`: the safe
/// `-j` with a command per build tool, then whether one job fits in memory.
/// When one job does not fit even in RAM and free swap together, that
/// comes first, no `-j` is called safe, and the swap to add follows. A
/// peak that is the profile's default, not measured nor given, is said to
/// be a guess, with the commands to measure it
/// ([`crate::plan::jobs::MEASURE_RUN`]). Sizes are MiB.
///
/// # Errors
/// The writer's error.
pub fn render<W: uWrite + ?Sized>(
    plan: &Plan<'_>,
    profile: Profile,
    s: &Situation,
    w: &mut W,
) -> Result<(), W::Error> {
    let peak = plan.peak_mb.0;
    let j = plan.jobs;
    let margin = (peak / 10).max(128);
    let need = peak.saturating_add(margin);
    // With BUILD_MEM_DIVISOR builds sharing the host, one build has its share.
    let usable = s.usable_mb / plan.divisor.0.max(1);
    // A binding cgroup uses no more swap than it is allowed.
    let with_swap = usable.saturating_add(s.usable_swap_mb());
    let fit = if need <= usable {
        Fit::Ram
    } else if need <= with_swap {
        Fit::WithSwap
    } else {
        Fit::No
    };
    // One job does not fit, and the cgroup that binds may not swap enough
    // for it: host swap cannot help, a larger limit can.
    let stuck = if fit == Fit::No {
        s.cgroup_cannot_swap(need, usable)
    } else {
        None
    };
    headline(w, plan, profile, s.usable_mb, with_swap, fit)?;
    let guess = plan.peak_mb.1 == crate::plan::jobs::From::Default;
    match (fit, stuck) {
        // A guess is no reason to call -j1 unsafe: measure first.
        (Fit::No, _) if guess => uwrite!(
            w,
            "  until measured, -j1: compiles often peak far below the guess (one job under run measures it);\n  add what is below only if the measured job does not fit either\n"
        )?,
        (Fit::No, Some(_)) => uwrite!(
            w,
            "  no -j is safe, not even -j1 or taskset -c 0: the cgroup needs a larger memory limit first (below)\n"
        )?,
        (Fit::No, None) => uwrite!(
            w,
            "  no -j is safe, not even -j1 or taskset -c 0: add swap first (below), then build with -j1\n"
        )?,
        _ => tool_commands(w, j, "  ")?,
    }

    let s = &Situation {
        usable_mb: usable,
        ..s.clone()
    };
    memory_lines(w, plan, s, margin)?;
    fit_lines(w, plan, s, fit, stuck, need)?;
    tmp_note(w, s)
}

/// The `memory:` paragraph: what one job needs against the RAM usable
/// (`s.usable_mb`, this build's share) and the free swap, and what a
/// forced `PARALLEL_JOBS` means.
fn memory_lines<W: uWrite + ?Sized>(
    w: &mut W,
    plan: &Plan<'_>,
    s: &Situation,
    margin: u64,
) -> Result<(), W::Error> {
    let (peak, j, usable) = (plan.peak_mb.0, plan.jobs, s.usable_mb);
    uwrite!(
        w,
        "\nmemory: one job needs ~{} MiB (+{} MiB margin); ",
        peak,
        margin
    )?;
    uwrite!(w, "{} MiB usable RAM", usable)?;
    if plan.divisor.0 > 1 {
        uwrite!(w, " (a 1/{} share)", plan.divisor.0)?;
    }
    uwrite!(w, " + {} MiB free swap", s.swap_free_mb)?;
    match s.usable_swap_mb() {
        n if n == s.swap_free_mb => {}
        0 => uwrite!(w, " (the cgroup may use none)")?,
        n => uwrite!(w, " (the cgroup may use {} MiB of it)", n)?,
    }
    uwrite!(w, "\n")?;
    if plan.binding == crate::plan::jobs::Binding::Override {
        uwrite!(
            w,
            "  note: PARALLEL_JOBS forces -j{}; {} jobs at once need ~{} MiB, this checks one\n",
            j,
            j,
            peak.saturating_mul(j)
        )?;
    }
    Ok(())
}

/// Whether one job fits (in RAM, only with swap, or not at all), and
/// what to do about it: `stuck` is the binding cgroup that may not swap
/// enough, `need` one job's MiB with its margin.
fn fit_lines<W: uWrite + ?Sized>(
    w: &mut W,
    plan: &Plan<'_>,
    s: &Situation,
    fit: Fit,
    stuck: Option<&CgroupLimit>,
    need: u64,
) -> Result<(), W::Error> {
    let (j, usable) = (plan.jobs, s.usable_mb);
    let with_swap = usable.saturating_add(s.usable_swap_mb());
    match fit {
        Fit::Ram => {
            uwrite!(w, "  fits in RAM: no swap needed for -j{}\n", j)?;
            if let Some(c) = &s.cgroup
                && plan.binding == crate::plan::jobs::Binding::Memory
            {
                uwrite!(
                    w,
                    "  the cgroup's limit ({} MiB) allows -j{}: more jobs need a larger limit (docker run -m, systemd MemoryMax=)\n",
                    c.limit_mb,
                    j
                )?;
            }
        }
        Fit::WithSwap => uwrite!(
            w,
            "  fits only with swap: -j1 works but pages to swap (slow on SD cards); more RAM or zram helps\n"
        )?,
        Fit::No => {
            let guess = plan.peak_mb.1 == crate::plan::jobs::From::Default;
            does_not_fit(w, guess)?;
            match stuck {
                Some(c) => larger_limit(w, c, need - usable)?,
                None => {
                    uwrite!(w, "RAM + swap hold {} MiB; add swap:\n", with_swap)?;
                    if let Some(c) = &s.cgroup {
                        hosts_swap(w, c)?;
                    } else if s.container_unseen {
                        uwrite!(
                            w,
                            "  swap is the host's to add (a container cannot): run these on the host;\n  how much of it this container may use is unknown (its memory cgroup could not be read)\n"
                        )?;
                    }
                    advise_swap(w, s, need - with_swap)?;
                }
            }
            uwrite!(w, "  then, one job at a time:\n")?;
            tool_commands(w, 1, "    ")?;
        }
    }

    Ok(())
}

/// `  does NOT fit: `, or for a peak that is the profile's guess `  does
/// NOT fit if the guess is right: `.
fn does_not_fit<W: uWrite + ?Sized>(w: &mut W, guess: bool) -> Result<(), W::Error> {
    let condition = if guess { " if the guess is right" } else { "" };
    uwrite!(w, "  does NOT fit{}: ", condition)
}

/// Inside a binding memory cgroup (a container), before the swap
/// commands: swap is the host's to add (swapon(2) needs CAP_SYS_ADMIN in
/// the host's namespace, which a container does not have), and how much
/// of it the cgroup's swap limit lets its processes use.
fn hosts_swap<W: uWrite + ?Sized>(w: &mut W, c: &CgroupLimit) -> Result<(), W::Error> {
    uwrite!(
        w,
        "  swap is the host's to add (a container cannot): run these on the host;\n  of it, the cgroup "
    )?;
    if c.path.is_empty() {
        uwrite!(w, "that binds")?;
    } else {
        uwrite!(w, "{}", c.path.as_str())?;
    }
    uwrite!(w, " may use ")?;
    swap_allowance(w, c)?;
    uwrite!(w, "\n")
}

/// The swap the cgroup `c` lets its processes use, in words: `N MiB
/// (memory.swap.max)`, v1 `N MiB (memory.memsw.limit_in_bytes -
/// memory.limit_in_bytes)`, `none (…)` when capped at the memory limit,
/// `any amount: unlimited (…)` when no level limits swap.
fn swap_allowance<W: uWrite + ?Sized>(w: &mut W, c: &CgroupLimit) -> Result<(), W::Error> {
    use crate::kernel::cgroup::Version;
    let file = crate::kernel::cgroup::swap_limit_file(c.version);
    match (c.swap_allowance_mb, c.version) {
        (None, _) => uwrite!(w, "any amount: unlimited (no {} limit on its path)", file),
        (Some(0), Version::V1) => uwrite!(w, "none ({} = memory.limit_in_bytes)", file),
        (Some(0), Version::V2) => uwrite!(w, "none ({} 0)", file),
        (Some(n), Version::V1) => {
            uwrite!(w, "{} MiB ({} - memory.limit_in_bytes)", n, file)
        }
        (Some(n), Version::V2) => uwrite!(w, "{} MiB ({})", n, file),
    }
}

/// When the binding cgroup `c` may not swap the `short` MiB one job needs
/// beyond its RAM: says that swap cannot help, and the larger limit that
/// can, as `docker run` and systemd take it (the limit plus the
/// shortfall, in whole [`SWAP_STEP_MB`]). After [`does_not_fit`].
fn larger_limit<W: uWrite + ?Sized>(
    w: &mut W,
    c: &CgroupLimit,
    short: u64,
) -> Result<(), W::Error> {
    uwrite!(w, "the cgroup ")?;
    if c.path.is_empty() {
        uwrite!(w, "that binds")?;
    } else {
        uwrite!(w, "{}", c.path.as_str())?;
    }
    let file = crate::kernel::cgroup::swap_limit_file(c.version);
    match (c.swap_allowance_mb.unwrap_or(0), c.version) {
        (0, crate::kernel::cgroup::Version::V1) => {
            uwrite!(w, " may not swap ({} = its memory limit)", file)?
        }
        (0, crate::kernel::cgroup::Version::V2) => uwrite!(w, " may not swap ({} 0)", file)?,
        (n, _) => uwrite!(
            w,
            " may swap {} MiB ({}), and this job needs {} MiB of swap",
            n,
            file,
            short
        )?,
    }
    uwrite!(
        w,
        ":\n  swap added to the host cannot save this job. A larger memory limit can: "
    )?;
    let size = round_up_step(c.limit_mb.saturating_add(short));
    size_arg(w, size)?;
    uwrite!(w, " (the limit is {} MiB)\n    docker run -m ", c.limit_mb)?;
    size_arg(w, size)?;
    uwrite!(w, " --memory-swap ")?;
    size_arg(w, size)?;
    uwrite!(
        w,
        " …   (a container; a --memory-swap above -m lets it swap)\n    sudo systemctl set-property UNIT MemoryMax="
    )?;
    size_arg(w, size)?;
    uwrite!(
        w,
        "   (a systemd unit or slice)\n  fewer jobs cannot help: one job alone does not fit.\n"
    )
}

/// The advice's first lines: the safe `-j`, or that one job does not
/// fit, with the peak and usable memory (MiB), then whose peak it is, or
/// that it is a guess and how to measure it.
fn headline<W: uWrite + ?Sized>(
    w: &mut W,
    plan: &Plan<'_>,
    profile: Profile,
    usable_mb: u64,
    with_swap: u64,
    fit: Fit,
) -> Result<(), W::Error> {
    let (peak, j) = (plan.peak_mb.0, plan.jobs);
    if fit == Fit::No && plan.peak_mb.1 == crate::plan::jobs::From::Default {
        uwrite!(w, "one job may NOT fit, by a guess: ")?;
    } else if fit == Fit::No {
        uwrite!(w, "one job does NOT fit: ")?;
    } else {
        uwrite!(w, "safe parallel jobs: {}  (", j)?;
    }
    uwrite!(w, "one ")?;
    if matches!(plan.peak_mb.1, crate::plan::jobs::From::Measured(_)) {
        uwrite!(w, "measured job")?;
    } else {
        uwrite!(w, "{} job", profile.name())?;
    }
    uwrite!(w, " peaks at ~{} MiB; {} MiB usable", peak, usable_mb)?;
    if plan.divisor.0 > 1 {
        uwrite!(w, ", divided by {} builds", plan.divisor.0)?;
    }
    if fit == Fit::No {
        uwrite!(w, ", {} MiB with free swap\n", with_swap)?;
    } else {
        uwrite!(w, ")\n")?;
    }
    // Whose peak it is (the build's, or the host's from a CSV without
    // build figures): never left for the reader to assume.
    match plan.peak_mb.1 {
        crate::plan::jobs::From::Measured(whose) => uwrite!(w, "  measured: {}\n", whose)?,
        crate::plan::jobs::From::Default => {
            uwrite!(
                w,
                "  a guess: the {} profile's default peak, not measured. Measure your build's:\n    {}   (your build command)\n    {}\n",
                profile.name(),
                crate::plan::jobs::MEASURE_RUN,
                crate::plan::jobs::MEASURE_FROM
            )?;
        }
        _ => {}
    }
    Ok(())
}

/// The /tmp note: a tmpfs /tmp is RAM, a small one can fill.
fn tmp_note<W: uWrite + ?Sized>(w: &mut W, s: &Situation) -> Result<(), W::Error> {
    if s.tmp_tmpfs {
        uwrite!(
            w,
            "\n/tmp is tmpfs: what compilers leave there is RAM. Keep temporaries on the build disk:\n  export TMPDIR=\"$HOME/tmp\" && mkdir -p \"$TMPDIR\"\n"
        )?;
    } else if let Some(t) = s.tmp_avail_mb
        && t < TMP_SMALL_MB
    {
        uwrite!(
            w,
            "\n/tmp has only {} MiB available: a build's temporaries can fill it. Use the build disk:\n  export TMPDIR=\"$HOME/tmp\" && mkdir -p \"$TMPDIR\"\n",
            t
        )?;
    }
    Ok(())
}

/// The `-j` of each build tool, one a line after `indent`, and for one
/// job the `taskset` of a tool with no job flag.
fn tool_commands<W: uWrite + ?Sized>(w: &mut W, j: u64, indent: &str) -> Result<(), W::Error> {
    for tool in [
        "make",
        "ninja",
        "meson compile",
        "cmake --build build",
        "cargo build",
    ] {
        uwrite!(w, "{}{} -j{}\n", indent, tool, j)?;
    }
    if j == 1 {
        uwrite!(
            w,
            "{}taskset -c 0 ./build.sh   (tools with no job flag: one core, one job)\n",
            indent
        )?;
    }
    Ok(())
}

/// The dphys-swapfile commands that grow its swap by `shortfall` MiB from
/// `current` (`CONF_SWAPSIZE`, when set), in whole steps.
fn dphys_commands<W: uWrite + ?Sized>(
    w: &mut W,
    current: Option<u64>,
    shortfall: u64,
) -> Result<(), W::Error> {
    let size = round_up_step(current.unwrap_or(0).saturating_add(shortfall));
    uwrite!(
        w,
        "  dphys-swapfile (Raspberry Pi OS): CONF_SWAPSIZE={}",
        size
    )?;
    uwrite!(w, " and CONF_MAXSWAP={} (the cap, 2048 by default)\n", size)?;
    uwrite!(w, "    sudo dphys-swapfile swapoff\n")?;
    // Drop any CONF_SWAPSIZE/CONF_MAXSWAP line, set or commented,
    // then append both: works whether or not the file has them.
    uwrite!(
        w,
        "    sudo sed -i '/^#\\?CONF_SWAPSIZE=/d; /^#\\?CONF_MAXSWAP=/d' /etc/dphys-swapfile\n"
    )?;
    uwrite!(
        w,
        "    printf 'CONF_SWAPSIZE={}\\nCONF_MAXSWAP={}\\n' | sudo tee -a /etc/dphys-swapfile\n",
        size,
        size
    )?;
    uwrite!(
        w,
        "    sudo dphys-swapfile setup\n    sudo dphys-swapfile swapon\n"
    )?;
    Ok(())
}

/// How to add swap for a `shortfall` of MiB on this host.
fn advise_swap<W: uWrite + ?Sized>(
    w: &mut W,
    s: &Situation,
    shortfall: u64,
) -> Result<(), W::Error> {
    let add = round_up_step(shortfall);
    let compression = s
        .zram_compression_centi
        .filter(|&r| r > 100)
        .unwrap_or(ZRAM_COMPRESSION_CENTI);
    // zram keeps its compressed pages in RAM: with usable RAM U it can hold
    // at most about U × (compression − 1) of extra data. Count on half of that.
    let zram_reach = s.usable_mb.saturating_mul(compression.saturating_sub(100)) / 100 / 2;
    let zram_enough = add <= zram_reach;
    if s.on_flash {
        uwrite!(
            w,
            "  the build disk {} is SD/eMMC flash: swap there wears it out; zram first.\n",
            s.disk_device.as_str()
        )?;
    }
    if zram_enough {
        zram_commands(w, compression, add)?;
        if s.on_flash {
            return Ok(());
        }
        uwrite!(w, "  or, on a disk that does not mind the writes:\n")?;
    } else {
        uwrite!(
            w,
            "  zram cannot cover it: its compressed pages stay in RAM, and {} MiB usable RAM holds\n  ~{} MiB more at most. Disk swap is needed",
            s.usable_mb,
            zram_reach
        )?;
        if s.on_flash {
            uwrite!(w, " (it wears the card: remove it after the build)")?;
        }
        uwrite!(w, ":\n")?;
    }
    match s.dphys {
        Some(current) => dphys_commands(w, current, shortfall)?,
        None => swapfile_commands(w, add, s.on_flash)?,
    }
    swap_limits(w, s, add)
}

/// The commands that make a new zram swap device gaining `add` MiB at a
/// `compression` ratio (hundredths).
fn zram_commands<W: uWrite + ?Sized>(
    w: &mut W,
    compression: u64,
    add: u64,
) -> Result<(), W::Error> {
    let zram_disksize =
        round_up_step(add.saturating_mul(compression) / compression.saturating_sub(100).max(1));
    uwrite!(
        w,
        "  zram (compressed RAM swap, assuming a compression ratio of "
    )?;
    write_centi(w, compression)?;
    uwrite!(
        w,
        ":1): a {} MiB device gains ~{} MiB\n",
        zram_disksize,
        add
    )?;
    // A new device: an existing zram (swap in use, or not swap at all)
    // is never reset under a running system.
    uwrite!(
        w,
        "    sudo modprobe zram\n    dev=$(sudo zramctl --find --size "
    )?;
    size_arg(w, zram_disksize)?;
    uwrite!(
        w,
        " --algorithm zstd)\n    sudo mkswap \"$dev\"\n    sudo swapon -p 100 \"$dev\"\n"
    )
}

/// The commands that make a swapfile of `add` MiB: kept in fstab, or on
/// flash removed after the build.
fn swapfile_commands<W: uWrite + ?Sized>(
    w: &mut W,
    add: u64,
    on_flash: bool,
) -> Result<(), W::Error> {
    uwrite!(w, "  a swapfile of ")?;
    size_arg(w, add)?;
    uwrite!(w, ":\n    sudo fallocate -l ")?;
    size_arg(w, add)?;
    uwrite!(
        w,
        " /swapfile\n    sudo chmod 600 /swapfile\n    sudo mkswap /swapfile\n    sudo swapon /swapfile\n"
    )?;
    if on_flash {
        uwrite!(
            w,
            "    # after the build: sudo swapoff /swapfile && sudo rm /swapfile\n"
        )
    } else {
        uwrite!(
            w,
            "    echo '/swapfile none swap sw 0 0' | sudo tee -a /etc/fstab\n"
        )
    }
}

/// What limits the `add` MiB of new swap: the cgroup's swap allowance and
/// the build disk's free space.
fn swap_limits<W: uWrite + ?Sized>(w: &mut W, s: &Situation, add: u64) -> Result<(), W::Error> {
    if let Some(c) = &s.cgroup
        && let Some(a) = c.swap_allowance_mb
        && a < s.swap_free_mb.saturating_add(add)
    {
        uwrite!(
            w,
            "  the cgroup may use at most {} MiB of swap ({}): enough for this job, no more\n",
            a,
            crate::kernel::cgroup::swap_limit_file(c.version)
        )?;
    }
    if let Some(free) = s.disk_avail_mb
        && free < add.saturating_add(1024)
    {
        uwrite!(
            w,
            "  warning: the build disk has only {} MiB available: not enough for {} MiB of swap and the build\n",
            free,
            add
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::plan::jobs::{Ask, Capacity, Env, plan};

    /// A host of `cores` and `usable_mb`, as `--cores` and `--avail-mb` give it.
    fn capacity(cores: u64, usable_mb: u64) -> Capacity<'static> {
        Capacity {
            cores,
            cores_from: "--cores",
            usable_mb,
            usable_from: "--avail-mb",
            usable_figure: "--avail-mb",
        }
    }

    fn advice(profile: Profile, s: &Situation, cores: u64) -> std::string::String {
        advice_peak(profile, s, cores, None)
    }

    /// [`advice`] with `--peak-mb` `peak_mb` (a given peak, no guess).
    fn advice_peak(
        profile: Profile,
        s: &Situation,
        cores: u64,
        peak_mb: Option<u64>,
    ) -> std::string::String {
        let cap = capacity(cores, s.usable_mb);
        let ask = Ask {
            profile,
            peak_mb,
            measured: None,
            requested: None,
        };
        let p = plan(&ask, &Env::default(), &cap);
        let mut out = heapless::String::<4096>::new();
        render(&p, profile, s, &mut out).unwrap();
        std::string::String::from(out.as_str())
    }

    /// A 1 GiB cgroup (1004 MiB available) binds, with `allowance` MiB of
    /// swap allowed, on a host with 4 GiB of free swap.
    fn in_cgroup(allowance: Option<u64>, version: crate::kernel::cgroup::Version) -> Situation {
        let mut path = heapless::String::new();
        path.push_str("/docker/x").unwrap();
        Situation {
            usable_mb: 1004,
            swap_total_mb: 4095,
            swap_free_mb: 4095,
            dphys: Some(Some(100)),
            zram_devices: 1,
            cgroup: Some(CgroupLimit {
                limit_mb: 1024,
                swap_allowance_mb: allowance,
                version,
                path,
            }),
            ..Situation::default()
        }
    }

    /// Issue 25: a binding cgroup that may not swap gets no swap, zram or
    /// dphys advice for a job that does not fit, but the larger limit
    /// that can help; a job that fits gets its -j as anywhere.
    #[test]
    fn a_cgroup_that_may_not_swap_is_never_told_to_add_swap() {
        use crate::kernel::cgroup::Version;
        for (version, why) in [
            (
                Version::V2,
                "the cgroup /docker/x may not swap (memory.swap.max 0):\n",
            ),
            (
                Version::V1,
                "the cgroup /docker/x may not swap (memory.memsw.limit_in_bytes = its memory limit):\n",
            ),
        ] {
            let s = in_cgroup(Some(0), version);
            let a = advice_peak(Profile::Heavy, &s, 2, Some(4096));
            assert!(a.starts_with("one job does NOT fit: one heavy job peaks at ~4096 MiB; 1004 MiB usable, 1004 MiB with free swap\n"), "{a}");
            assert!(a.contains("  no -j is safe, not even -j1 or taskset -c 0: the cgroup needs a larger memory limit first (below)\n"), "{a}");
            assert!(a.contains(why), "{a}");
            assert!(
                a.contains("1004 MiB usable RAM + 4095 MiB free swap (the cgroup may use none)\n"),
                "{a}"
            );
            // 4096 + 409 − 1004 = 3501 more; 1024 + 3501 → 4608 MiB.
            assert!(a.contains("  swap added to the host cannot save this job. A larger memory limit can: 4608M (the limit is 1024 MiB)\n    docker run -m 4608M --memory-swap 4608M …"), "{a}");
            assert!(
                a.contains("    sudo systemctl set-property UNIT MemoryMax=4608M"),
                "{a}"
            );
            for never in ["add swap", "zram", "dphys", "swapfile", "swapon"] {
                assert!(!a.contains(never), "{never}: {a}");
            }
            assert!(
                a.contains("  then, one job at a time:\n    make -j1\n"),
                "{a}"
            );
            // A job that fits: its -j, no word of swap.
            let cap = capacity(2, 1004);
            let ask = Ask {
                profile: Profile::Generic,
                peak_mb: Some(300),
                measured: None,
                requested: None,
            };
            let p = plan(&ask, &Env::default(), &cap);
            let mut out = heapless::String::<4096>::new();
            render(&p, Profile::Generic, &s, &mut out).unwrap();
            assert!(
                out.starts_with(
                    "safe parallel jobs: 2  (one generic job peaks at ~300 MiB; 1004 MiB usable)\n"
                ),
                "{out}"
            );
            assert!(
                out.contains("  fits in RAM: no swap needed for -j2\n"),
                "{out}"
            );
            assert!(!out.contains("add swap"), "{out}");
        }
    }

    /// An allowance smaller than the swap one job needs beyond RAM: the
    /// larger limit, not swap. One that covers the job but not all the
    /// swap advised: the swap commands, and what the cgroup may use of it.
    #[test]
    fn a_swap_allowance_smaller_than_the_swap_advised_is_said() {
        use crate::kernel::cgroup::Version;
        let s = in_cgroup(Some(1024), Version::V2);
        let a = advice_peak(Profile::Heavy, &s, 2, Some(4096));
        assert!(a.contains("the cgroup /docker/x may swap 1024 MiB (memory.swap.max), and this job needs 3501 MiB of swap:\n"), "{a}");
        assert!(!a.contains("zramctl") && !a.contains("dphys"), "{a}");
        // 1004 + 3520 allowed ≥ 4505: swap can help (the host has none
        // free), but not all of the 3584 MiB advised.
        let mut s = in_cgroup(Some(3520), Version::V2);
        s.swap_free_mb = 0;
        s.dphys = None;
        let a = advice_peak(Profile::Heavy, &s, 2, Some(4096));
        assert!(
            a.contains("does NOT fit: RAM + swap hold 1004 MiB; add swap:\n"),
            "{a}"
        );
        // The host's to add, with what the cgroup may use of it.
        assert!(a.contains("  swap is the host's to add (a container cannot): run these on the host;\n  of it, the cgroup /docker/x may use 3520 MiB (memory.swap.max)\n"), "{a}");
        assert!(a.contains("sudo fallocate -l 3584M /swapfile"), "{a}");
        assert!(a.contains("  the cgroup may use at most 3520 MiB of swap (memory.swap.max): enough for this job, no more\n"), "{a}");
        // The host binds (no cgroup in the situation): swap as before.
        let mut s = in_cgroup(Some(0), Version::V2);
        s.cgroup = None;
        s.swap_free_mb = 0;
        let a = advice_peak(Profile::Heavy, &s, 2, Some(4096));
        assert!(a.contains("; add swap:\n"), "{a}");
        assert!(!a.contains("the host's"), "{a}");
    }

    /// Issue 33: in a container whose swap limit allows swap, on a host
    /// with none, the swap commands are said to be the host's, with the
    /// allowance in the cgroup's own terms: N MiB (v1: memsw less the
    /// limit), or unlimited when no swap limit is set.
    #[test]
    fn swap_in_a_cgroup_is_the_hosts_to_add_with_the_allowance() {
        use crate::kernel::cgroup::Version;
        for (allowance, version, says) in [
            (
                Some(1024),
                Version::V1,
                "may use 1024 MiB (memory.memsw.limit_in_bytes - memory.limit_in_bytes)\n",
            ),
            (
                Some(2048),
                Version::V2,
                "may use 2048 MiB (memory.swap.max)\n",
            ),
            (
                None,
                Version::V1,
                "may use any amount: unlimited (no memory.memsw.limit_in_bytes limit on its path)\n",
            ),
        ] {
            let mut s = in_cgroup(allowance, version);
            (s.swap_total_mb, s.swap_free_mb, s.dphys) = (0, 0, None);
            let a = advice_peak(Profile::Generic, &s, 4, Some(1500));
            assert!(a.starts_with("one job does NOT fit: one generic job peaks at ~1500 MiB; 1004 MiB usable, 1004 MiB with free swap\n"), "{a}");
            let host = a
                .find("  swap is the host's to add (a container cannot): run these on the host;\n  of it, the cgroup /docker/x ")
                .unwrap_or_else(|| panic!("{a}"));
            assert!(a[host..].contains(says), "{says}: {a}");
            assert!(host < a.find("sudo fallocate").unwrap(), "{a}");
        }
        // A cgroup capped at its limit says none, as the larger limit's reason.
        let mut w = heapless::String::<256>::new();
        swap_allowance(&mut w, &in_cgroup(Some(0), Version::V1).cgroup.unwrap()).unwrap();
        assert_eq!(
            w,
            "none (memory.memsw.limit_in_bytes = memory.limit_in_bytes)"
        );
    }

    /// Issue 33: the profile's guess that does not fit (a 1 GiB container,
    /// the generic 2000 MiB) is said to be a guess, with how to measure,
    /// and -j1 until then: never "no -j is safe, not even -j1".
    #[test]
    fn a_guess_that_does_not_fit_says_measure_not_unsafe() {
        use crate::kernel::cgroup::Version;
        let pi = Situation {
            usable_mb: 300,
            swap_total_mb: 99,
            swap_free_mb: 99,
            dphys: Some(Some(100)),
            ..Situation::default()
        };
        for (profile, s) in [
            (Profile::Generic, in_cgroup(Some(0), Version::V1)),
            (Profile::Generic, in_cgroup(Some(1024), Version::V2)),
            (Profile::Heavy, pi),
        ] {
            let a = advice(profile, &s, 4);
            assert!(
                a.starts_with("one job may NOT fit, by a guess: one "),
                "{a}"
            );
            assert!(
                !a.contains("no -j is safe") && !a.contains("not even -j1"),
                "{a}"
            );
            assert!(a.contains(&std::format!("  a guess: the {} profile's default peak, not measured. Measure your build's:\n    headroom run -- make …   (your build command)\n    headroom jobs --from resources-run.csv\n", profile.name())), "{a}");
            assert!(a.contains("  until measured, -j1: compiles often peak far below the guess (one job under run measures it);\n  add what is below only if the measured job does not fit either\n"), "{a}");
            assert!(a.contains("  does NOT fit if the guess is right: "), "{a}");
        }
    }

    #[test]
    fn dphys_conf_and_rounding() {
        let conf = b"# comment\n#CONF_SWAPSIZE=\nCONF_SWAPSIZE=100\n#CONF_MAXSWAP=2048\n";
        assert_eq!(dphys_swapsize(conf), Some(100));
        assert_eq!(dphys_swapsize(b"#CONF_SWAPSIZE=100\n"), None);
        assert_eq!(round_up_step(1), 512);
        assert_eq!(round_up_step(512), 512);
        assert_eq!(round_up_step(513), 1024);
    }

    #[test]
    fn pi_zero_heavy_says_j1_and_the_swap_to_add() {
        let mut s = Situation {
            usable_mb: 300,
            swap_total_mb: 99,
            swap_free_mb: 99,
            on_flash: true,
            dphys: Some(Some(100)),
            ..Situation::default()
        };
        s.disk_device.push_str("/dev/mmcblk0p2").unwrap();
        let a = advice_peak(Profile::Heavy, &s, 4, Some(4096));
        // That one job does not fit comes first; no -j is called safe.
        assert!(a.starts_with("one job does NOT fit: one heavy job peaks at ~4096 MiB; 300 MiB usable, 399 MiB with free swap\n"), "{a}");
        assert!(!a.contains("safe parallel jobs"), "{a}");
        let not_safe = a.find("  no -j is safe, not even -j1 or taskset -c 0: add swap first (below), then build with -j1\n");
        let first_j1 = a.find("make -j1");
        assert!(not_safe.is_some() && not_safe < first_j1, "{a}");
        assert!(
            a.contains("does NOT fit: RAM + swap hold 399 MiB; add swap:\n"),
            "{a}"
        );
        // -j1 only after the swap, as what to run once it is on.
        let then = a
            .find("  then, one job at a time:\n    make -j1\n")
            .unwrap();
        assert!(a.find("sudo dphys-swapfile swapon").unwrap() < then, "{a}");
        assert!(a.contains("  taskset -c 0 ./build.sh"), "{a}");
        // 4096 + 409 − 399 = 4106 → 4608 MB.
        assert!(a.contains("zram cannot cover it"), "{a}");
        assert!(!a.contains("zramctl"), "{a}");
        assert!(
            a.contains("CONF_SWAPSIZE=4608 and CONF_MAXSWAP=4608"),
            "{a}"
        );
        assert!(a.contains("    printf 'CONF_SWAPSIZE=4608\\nCONF_MAXSWAP=4608\\n' | sudo tee -a /etc/dphys-swapfile\n"), "{a}");
        assert!(a.contains("    sudo dphys-swapfile setup\n"), "{a}");
    }

    #[test]
    fn the_divisor_shares_ram_between_builds() {
        let s = Situation {
            usable_mb: 7449,
            ..Situation::default()
        };
        let cap = capacity(4, 7449);
        let ask = Ask {
            profile: Profile::Heavy,
            peak_mb: None,
            measured: None,
            requested: None,
        };
        let env = Env {
            build_mem_divisor: Some("2"),
            ..Env::default()
        };
        let p = plan(&ask, &env, &cap);
        let mut out = heapless::String::<4096>::new();
        render(&p, Profile::Heavy, &s, &mut out).unwrap();
        assert!(out.contains("3724 MiB usable RAM (a 1/2 share)"), "{out}");
        assert!(out.contains("does NOT fit"), "{out}");
    }

    #[test]
    fn generic_host_with_room_needs_nothing() {
        let s = Situation {
            usable_mb: 16000,
            tmp_avail_mb: Some(50_000),
            ..Situation::default()
        };
        let a = advice(Profile::Generic, &s, 4);
        assert!(a.starts_with("safe parallel jobs: 4 "), "{a}");
        assert!(a.contains("fits in RAM: no swap needed for -j4"), "{a}");
        assert!(!a.contains("taskset"), "{a}");
        assert!(!a.contains("TMPDIR"), "{a}");
        assert!(
            a.contains("  a guess: the generic profile's default peak"),
            "{a}"
        );
    }

    /// A peak given (--peak-mb) or measured (--from) is no guess; one
    /// that fits only with swap still has a safe -j1.
    #[test]
    fn a_given_or_measured_peak_is_not_called_a_guess() {
        let s = Situation {
            usable_mb: 1000,
            swap_free_mb: 2000,
            ..Situation::default()
        };
        let cap = capacity(4, 1000);
        for (peak_mb, measured) in [(Some(1500), None), (None, Some((1500, "the build")))] {
            let ask = Ask {
                profile: Profile::Generic,
                peak_mb,
                measured,
                requested: None,
            };
            let p = plan(&ask, &Env::default(), &cap);
            let mut out = heapless::String::<4096>::new();
            render(&p, Profile::Generic, &s, &mut out).unwrap();
            assert!(!out.contains("guess"), "{out}");
            assert!(out.starts_with("safe parallel jobs: 1  ("), "{out}");
            assert!(out.contains("  fits only with swap: -j1 works"), "{out}");
        }
    }

    /// Fixture 09 f: an idle zram device's one page (4096 / 74 = 55.35)
    /// gives no ratio to size zram by; the 2:1 assumption stands.
    #[test]
    fn fixture_09_f_idle_device_gives_no_ratio_to_size_by() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/09-zram-mm-stat-field-counts/f-idle-one-page"
        );
        let root = crate::kernel::root::Root::open(dir).unwrap();
        let mut buf = std::vec![0u8; 65536];
        let mut scratch = std::vec![core::mem::MaybeUninit::uninit(); 4096];
        let s = gather(
            &root,
            false,
            1000,
            None,
            "/",
            "/tmp",
            &mut buf,
            &mut scratch,
        );
        assert_eq!(s.zram_devices, 1);
        assert_eq!(s.zram_compression_centi, None);
    }

    #[test]
    fn zram_on_flash_when_it_can_cover_and_a_swapfile_elsewhere() {
        let mut s = Situation {
            usable_mb: 3000,
            on_flash: true,
            zram_devices: 1,
            zram_compression_centi: Some(300),
            tmp_tmpfs: true,
            ..Situation::default()
        };
        s.disk_device.push_str("/dev/mmcblk0p2").unwrap();
        let a = advice(Profile::Heavy, &s, 4);
        // need 4096 + 409 − 3000 = 1505 → 1536 MB; zram 3:1 → 2304 → 2560 MB device.
        assert!(
            a.contains(
                "zram (compressed RAM swap, assuming a compression ratio of 3.00:1): a 2560 MiB device gains ~1536 MiB"
            ),
            "{a}"
        );
        // A new device, never a reset of the one in use.
        assert!(
            a.contains("dev=$(sudo zramctl --find --size 2560M --algorithm zstd)"),
            "{a}"
        );
        assert!(!a.contains("reset") && !a.contains("swapoff"), "{a}");
        assert!(!a.contains("fallocate"), "{a}");
        assert!(a.contains("/tmp is tmpfs"), "{a}");
        let s = Situation {
            usable_mb: 3000,
            disk_avail_mb: Some(1000),
            ..Situation::default()
        };
        let a = advice(Profile::Heavy, &s, 4);
        assert!(a.contains("sudo fallocate -l 1536M /swapfile"), "{a}");
        assert!(
            a.contains("echo '/swapfile none swap sw 0 0' | sudo tee -a /etc/fstab"),
            "{a}"
        );
        assert!(
            a.contains("warning: the build disk has only 1000 MiB available"),
            "{a}"
        );
    }
}
