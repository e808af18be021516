//! One tick: every source read once into fixed buffers and turned into a
//! [`Row`].
//!
//! Everything that needs a path lookup or an allocation-sized decision
//! (opening `proc/`, `sys/block`, the cgroup path, the disk and /tmp, the
//! log directory) happens in [`Sampler::new`]. [`Sampler::tick`] then reads
//! with openat/read/getdents/fstatvfs only: no fork, no exec, no heap.
//!
//! A source that cannot be read gives an empty field (or the compatible
//! core's 0) and one warning through [`Warn`], never an error.
//!
//! The children hold what they share with this file, so that imports run
//! one way (this file and its children into [`buffers`] and [`source`],
//! never back): the read buffers, the warning sources, the slow figures'
//! hwmon discovery. Their public items are re-exported here under the
//! paths callers already use.

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};

use crate::followed::buildcg::BuildCgroup;
use crate::followed::compilers::kept_status::{KEPT_COMPILERS, KeptCompilers};
use crate::followed::compilers::{Classes, CompilerList, ProcDir, Scan, ScanResult, Scope};
use crate::followed::logtail;
use crate::followed::oom_victims::Victims;
use crate::followed::text::{STAGE_CAP, sanitize_into};
use crate::kernel::cgroup::{self, MemCgroup, Version};
use crate::kernel::container;
use crate::kernel::fsstat::FsStat;
use crate::kernel::kept::{Kept, Shape};
use crate::kernel::root::{ReadError, Root};
use crate::kernel::stat::{self, CpuTimes};
use crate::kernel::{loadavg, meminfo, psi, vmstat, zram};
use crate::tick::logwatch::{LogRead, LogWarning, LogWatch};
use crate::tick::row::{Decimal, Row};

pub mod buffers;
pub mod glance;
mod slow_figures;
pub mod source;

pub use buffers::{Buffers, DIR_SCRATCH_LEN, FILE_LEN, SCRATCH_LEN};
pub use slow_figures::discovery_hwmons;
pub use source::Source;

/// How a build log is opened: O_NONBLOCK so that a FIFO given as the log
/// cannot block the sampler (and its signal handling) in open(2); O_NOCTTY
/// so a terminal device never becomes ours. `read_tail` then refuses
/// anything that is not a regular file.
const LOG_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

/// Most descriptors a recording keeps open between ticks, all readers
/// together ([`crate::kernel::kept`]): loadavg, stat, meminfo, vmstat and
/// psi, [`zram::KEPT_DEVICES`] zram devices, two files (limit, usage) at
/// each of [`cgroup::KEPT_LEVELS`] cgroup levels (their `memory.stat` is
/// read by name: see [`cgroup::KeptLevels`]), the build cgroup's two,
/// [`KEPT_COMPILERS`] compilers' `status`, and the build disk's `stat`, two
/// CPU sensors, the throttle word and four cpufreq policies
/// ([`slow_figures::MAX_KEPT`]). Each holds a seq_file buffer in the kernel, a page
/// at least: at 4 KiB pages this bounds that memory to 124 KiB whatever the
/// host runs (496 KiB at 16 KiB pages).
pub const MAX_KEPT: usize =
    5 + zram::KEPT_DEVICES + 2 * cgroup::KEPT_LEVELS + 2 + KEPT_COMPILERS + slow_figures::MAX_KEPT;

const _: () = assert!(
    MAX_KEPT * 4 <= 128,
    "kept descriptors: at most 128 KiB at 4 KiB pages"
);

/// The files every tick reads, through descriptors kept open on the live
/// root and opened by name under any other `--root`.
struct KeptFiles {
    loadavg: Kept,
    stat: Kept,
    meminfo: Kept,
    vmstat: Kept,
    psi: Kept,
    zram: zram::KeptDevices,
    cgroup: cgroup::KeptLevels,
    build_oom: Kept,
    build_anon: Kept,
    compilers: KeptCompilers,
}

impl KeptFiles {
    const fn new(keep: bool) -> KeptFiles {
        KeptFiles {
            loadavg: Kept::new(keep),
            stat: Kept::new(keep),
            meminfo: Kept::new(keep),
            vmstat: Kept::new(keep),
            psi: Kept::new(keep),
            zram: zram::KeptDevices::new(keep),
            cgroup: cgroup::KeptLevels::new(keep),
            build_oom: Kept::new(keep),
            build_anon: Kept::new(keep),
            compilers: KeptCompilers::new(keep),
        }
    }

    fn open(&self) -> usize {
        [
            &self.loadavg,
            &self.stat,
            &self.meminfo,
            &self.vmstat,
            &self.psi,
            &self.build_oom,
            &self.build_anon,
        ]
        .iter()
        .filter(|k| k.is_open())
        .count()
            + self.zram.open()
            + self.cgroup.open()
            + self.compilers.open()
    }
}

/// Receives the sampler's one-time warnings (at most one per source).
pub trait Warn {
    /// `source` could not be read (`why`); its field stays empty.
    fn warn(&mut self, source: Source, why: &'static str);
    /// `source` was read, but a value in it had to be derived (`what`);
    /// its field is filled with that.
    fn note(&mut self, source: Source, what: &'static str);
    /// The build log of `option` (`--stage-log` or `--stage-log-dir`) at
    /// `path`, as given, gives nothing, for the reason `what`
    /// ([`crate::tick::logwatch::LogWarning::text`]); once per reason and
    /// recording. By default a [`Warn::note`] about [`Source::Log`].
    fn log(&mut self, option: &'static str, path: &str, what: &'static str) {
        let _ = (option, path);
        self.note(Source::Log, what);
    }
}

/// Where stage and context come from.
#[derive(Clone, Copy, Debug)]
pub enum StageLog<'a> {
    /// No log: stage is `--label` or `?`, context empty.
    None,
    /// `--stage-log FILE` (a host path, re-opened every tick since build
    /// logs are rotated and replaced).
    File(&'a str),
    /// `--stage-log-dir DIR`: its active log ([`logtail::active_log`]: the
    /// newest `*.log` with a `.log.run` marker, else the newest `*.log`),
    /// re-chosen every tick.
    Dir(&'a str),
}

/// THE BUILD whose figures are told apart from the host's (SPEC.md "The
/// build and the host").
#[derive(Clone, Copy, Debug)]
pub enum Build<'a> {
    /// Plain `record`: no build; the `build_*` columns stay empty.
    None,
    /// `record --watch-pid PID`, or `run` without a cgroup of its own: the
    /// process and its descendants (parent chain).
    Tree(u32),
    /// `run` with the build in a memory cgroup of its own: its members.
    Cgroup(&'a BuildCgroup),
}

impl<'a> Build<'a> {
    /// Whether a build is followed at all.
    pub fn is_some(&self) -> bool {
        !matches!(self, Build::None)
    }

    /// The processes [`Scan`] totals as the build's.
    fn scope(self) -> Scope<'a> {
        match self {
            Build::None => Scope::None,
            Build::Tree(pid) => Scope::Tree(pid),
            Build::Cgroup(cg) => Scope::Cgroup(cg.path()),
        }
    }
}

/// What the sampler needs to know at start-up.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Directory whose filesystem is the build disk (a host path).
    pub disk_path: &'a str,
    /// Directory for the /tmp columns (a host path, normally `/tmp`).
    pub tmp_path: &'a str,
    /// The build log to follow.
    pub stage_log: StageLog<'a>,
    /// Stage when the log names none (`--label`).
    pub label: Option<&'a str>,
    /// `run`: when CMD starts, Unix seconds; a log not modified since then
    /// is an earlier build's and gives no stage or context
    /// ([`logtail::read_tail_since`]). `None` for `record`, which follows a
    /// build already running, as the toolchain does.
    pub log_since: Option<u64>,
    /// Which process names count as compilers.
    pub compilers: &'a CompilerList,
}

/// The sampler's state between ticks.
pub struct Sampler<'a> {
    root: &'a Root,
    opts: Options<'a>,
    proc_dir: Option<OwnedFd>,
    sys_block: Option<OwnedFd>,
    mem_cg: Option<MemCgroup>,
    /// Whether and why headroom runs in a container, judged once at
    /// start-up ([`container::judge`]); `None` outside one.
    pub container: Option<container::Why>,
    /// The level of the memory cgroup path whose `oom_kill` is the
    /// container's (`cg_oom_kills`), chosen at the first tick, and the
    /// first count read there (the base the column counts from).
    cg_oom: Option<(usize, Option<u64>)>,
    /// `/proc/self/cgroup` names a memory cgroup that cannot be read
    /// ([`cgroup::Resolution`]): its limit is unknown, the `cg_mem_*`
    /// columns stay empty, and the caller says so once.
    pub mem_cgroup_unknown: Option<cgroup::CgroupError>,
    disk: Option<OwnedFd>,
    tmp: Option<OwnedFd>,
    log_dir: Option<OwnedFd>,
    kept: KeptFiles,
    /// The previous tick's counters, for the rates of "why it was slow".
    slow: slow_figures::Slow,
    /// The kernel threads of the last listing, skipped (live root only).
    classes: Classes,
    /// The page size of the kernel read, KiB ([`crate::kernel::root::page_kib`]).
    page_size_kib: u64,
    prev_cpu: Option<CpuTimes>,
    first_oom: Option<u64>,
    /// /proc/vmstat `oom_kill` as the last tick read it.
    last_oom: Option<u64>,
    /// /proc/vmstat `pgscan_direct` as the last tick read it.
    last_pgscan_direct: Option<u64>,
    first_epoch: Option<u64>,
    psi_off: bool,
    warned: u32,
    /// When the build log gives nothing: its two warnings.
    log_watch: LogWatch,
    /// MemAvailable was estimated on some tick (kernel < 3.14).
    pub mem_estimated: bool,
    /// THE BUILD: its compilers are totalled apart (the `build_*` columns,
    /// [`crate::tick::row::Row::build_rss_mb`] for the jobserver), and its OOM
    /// kills counted ([`crate::tick::row::Row::build_oom_kills`]). Set
    /// with [`Sampler::follow`].
    pub build: Build<'a>,
    /// A process tree's build: the victims of the OOM kills the kernel
    /// names, placed in its tree ([`Victims`]); `None` otherwise.
    victims: Option<Victims>,
    /// /tmp is a tmpfs, by the root's proc/self/mountinfo (read once at
    /// start-up); `None` when mountinfo is unreadable.
    pub tmp_is_tmpfs: Option<bool>,
}

/// Opens a host directory (not under the root) for listing.
fn open_host_dir(path: &str) -> Option<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

/// Opens a host directory for fstatvfs only: O_PATH needs no read
/// permission on it (statvfs of a mode-700 `$HOME` works for anyone who
/// can reach it, as df does).
fn open_host_path(path: &str) -> Option<OwnedFd> {
    rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

impl<'a> Sampler<'a> {
    /// Opens every source once. Sources that are absent are remembered as
    /// such and warned about on the first tick, not here.
    pub fn new(root: &'a Root, opts: Options<'a>, bufs: &mut Buffers) -> Sampler<'a> {
        bufs.commit();
        let live = root.is_live();
        let mem_cg = cgroup::open_memory(root, &mut bufs.scratch);
        let confined = container::confinement(root, &mem_cg, &mut bufs.scratch);
        let container = container::judge(confined, root);
        let (mem_cg, mem_cgroup_unknown) = match mem_cg {
            Ok(cg) => (cg, None),
            Err(e) => (None, Some(e)),
        };
        let tmp_is_tmpfs = root
            .read(crate::kernel::mountinfo::PATH, &mut bufs.scratch)
            .ok()
            .map(|b| {
                crate::kernel::mountinfo::fs_type_of(b, opts.tmp_path.as_bytes()) == Some(b"tmpfs")
            });
        let log_dir = match opts.stage_log {
            StageLog::Dir(d) => open_host_dir(d),
            _ => None,
        };
        Sampler {
            root,
            opts,
            proc_dir: root.open_dir("proc").ok(),
            sys_block: root.open_dir(zram::SYS_BLOCK).ok(),
            mem_cg,
            container,
            cg_oom: None,
            mem_cgroup_unknown,
            disk: open_host_path(opts.disk_path),
            tmp: open_host_path(opts.tmp_path),
            log_dir,
            kept: KeptFiles::new(live),
            slow: slow_figures::Slow::new(root, opts.disk_path, bufs),
            classes: Classes::new(live),
            page_size_kib: crate::kernel::root::page_kib(root, live),
            prev_cpu: None,
            first_oom: None,
            last_oom: None,
            last_pgscan_direct: None,
            first_epoch: None,
            psi_off: false,
            warned: 0,
            log_watch: LogWatch::new(),
            mem_estimated: false,
            build: Build::None,
            victims: None,
            tmp_is_tmpfs,
        }
    }

    /// Follows `build` from the next tick on; a process tree's opens
    /// `/dev/kmsg` now ([`crate::kernel::kmsg::open`]), to name the victims
    /// of the OOM kills from here on. Returns why the log names none,
    /// `None` when it does (or the build has a cgroup, or there is none).
    pub fn follow(&mut self, build: Build<'a>) -> Option<crate::kernel::kmsg::Unusable> {
        self.build = build;
        // Who is the build's is learnt as each process is first listed.
        self.classes.forget();
        self.victims = match build {
            Build::Tree(_) => Some(Victims::new(crate::kernel::kmsg::open(self.root))),
            _ => None,
        };
        self.victims.as_ref().and_then(Victims::unusable)
    }

    /// The kind of the build disk under the disk path, found at start-up
    /// ([`crate::kernel::blockdev::Device`]); `None` when it has none.
    pub fn disk_device(&self) -> Option<crate::kernel::blockdev::Device> {
        self.slow.device()
    }

    /// Descriptors kept open between ticks now (at most [`MAX_KEPT`]).
    pub fn kept_open(&self) -> usize {
        self.kept.open() + self.slow.open()
    }

    /// True the first time it is asked for `s`.
    fn first_for(&mut self, s: Source) -> bool {
        let bit = 1u32 << (s as u8);
        let first = self.warned & bit == 0;
        self.warned |= bit;
        first
    }

    fn warn_once(&mut self, w: &mut impl Warn, s: Source, why: &'static str) {
        if self.first_for(s) {
            w.warn(s, why);
        }
    }

    /// Takes one sample at wall-clock `epoch` (Unix seconds).
    pub fn tick(&mut self, epoch: u64, bufs: &mut Buffers, w: &mut impl Warn) -> Row {
        let first = *self.first_epoch.get_or_insert(epoch);
        let mut row = Row::empty(epoch);
        row.elapsed_s = epoch.saturating_sub(first);
        self.read_load(&mut row, bufs, w);
        self.read_cpu(&mut row, bufs, w);
        let mem_total_kib = self.read_memory(&mut row, bufs, w);
        self.read_vmstat(&mut row, bufs, w);
        self.read_pressure(&mut row, bufs, w);
        self.read_zram(&mut row, bufs, w);
        let limit_depth = self.read_cgroup(&mut row, bufs, mem_total_kib);
        self.stat_filesystems(&mut row, w);
        for said in self.slow.read(&mut row, self.root, epoch, bufs) {
            match said.note {
                true if self.first_for(said.source) => w.note(said.source, said.what),
                true => {}
                false => self.warn_once(w, said.source, said.what),
            }
        }
        self.scan_compilers(&mut row, bufs, w);
        self.build_figures(&mut row, bufs);
        self.container_oom(&mut row, bufs, limit_depth);
        self.log(&mut row, bufs, w);
        self.label_if_no_stage(&mut row);
        // A tree's second capture, if it has one, is the next tick's.
        self.root.advance();
        row
    }

    /// /proc/loadavg: load1 verbatim.
    fn read_load(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        match self.kept.loadavg.read(
            self.root.at(loadavg::PATH),
            loadavg::PATH,
            &mut bufs.file,
            Shape::Whole,
        ) {
            Ok(b) => match loadavg::parse(b) {
                Ok(l) => row.load1 = Decimal::parse(l.load1_text).unwrap_or_default(),
                Err(_) => self.warn_once(w, Source::LoadAvg, "unexpected format"),
            },
            Err(e) => self.warn_once(w, Source::LoadAvg, e.describe()),
        }
    }

    /// /proc/stat: busy % since the previous tick.
    fn read_cpu(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        match self.kept.stat.read(
            self.root.at(stat::PATH),
            stat::PATH,
            &mut bufs.scratch,
            Shape::Whole,
        ) {
            Ok(b) => match stat::aggregate(b) {
                Ok(cur) => {
                    if let Some(prev) = &self.prev_cpu {
                        row.cpu_pct = stat::delta(prev, &cur).busy_pct();
                    }
                    self.prev_cpu = Some(cur);
                }
                Err(_) => {
                    row.cpu_known = false;
                    self.warn_once(w, Source::Stat, "unexpected format");
                }
            },
            Err(e) => {
                row.cpu_known = false;
                self.warn_once(w, Source::Stat, e.describe());
            }
        }
    }

    /// /proc/meminfo; MemTotal (KiB) for the cgroup step.
    fn read_memory(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) -> Option<u64> {
        let mut mem_total_kib = None;
        match self.kept.meminfo.read(
            self.root.at(meminfo::PATH),
            meminfo::PATH,
            &mut bufs.file,
            Shape::Whole,
        ) {
            Ok(b) => match meminfo::parse(b) {
                Ok(m) => {
                    mem_total_kib = Some(m.mem_total_kib);
                    row.mem_used_mb = m.mem_used_kib() / 1024;
                    row.mem_avail_mb = m.mem_available_kib / 1024;
                    row.mem_pct = m.mem_used_pct();
                    row.swap_used_mb = m.swap_used_kib() / 1024;
                    row.ext.swap_total_mb = Some(m.swap_total_kib / 1024);
                    if m.mem_available_estimated && !self.mem_estimated {
                        self.mem_estimated = true;
                        if self.first_for(Source::MemInfo) {
                            w.note(
                                Source::MemInfo,
                                "no MemAvailable (kernel < 3.14?): estimated as MemFree + Buffers + Cached - Shmem",
                            );
                        }
                    }
                }
                Err(_) => {
                    row.mem_known = false;
                    self.warn_once(w, Source::MemInfo, "unexpected format");
                }
            },
            Err(e) => {
                row.mem_known = false;
                self.warn_once(w, Source::MemInfo, e.describe());
            }
        }
        mem_total_kib
    }

    /// /proc/vmstat, read through its kept descriptor and parsed; else
    /// why not, as its warning says it.
    fn vmstat(&mut self, bufs: &mut Buffers) -> Result<vmstat::VmStat, &'static str> {
        let b = self
            .kept
            .vmstat
            .read(
                self.root.at(vmstat::PATH),
                vmstat::PATH,
                &mut bufs.file,
                Shape::Records,
            )
            .map_err(|e| e.describe())?;
        vmstat::parse(b).map_err(|_| "unexpected format")
    }

    /// /proc/vmstat: oom_kill (Linux >= 4.13) as the delta since the first
    /// tick, and the swap and fault rates.
    fn read_vmstat(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        match self.vmstat(bufs) {
            Ok(vm) => {
                self.last_pgscan_direct = vm.pgscan_direct;
                if let Some(k) = vm.oom_kill {
                    self.last_oom = Some(k);
                    let base = *self.first_oom.get_or_insert(k);
                    row.ext.oom_kills = Some(k.saturating_sub(base));
                }
                let now = slow_figures::clock_ns(self.root);
                self.slow
                    .thrash
                    .thrash(row, &vm, now, self.page_size_kib.saturating_mul(1024));
            }
            Err(why) => {
                self.last_pgscan_direct = None;
                self.warn_once(w, Source::VmStat, why);
            }
        }
    }

    /// Whether /proc/vmstat `oom_kill` (host-wide: every OOM kill, a
    /// cgroup's too) has risen since the last tick read it: a kill the
    /// last row does not show. `run` then takes its final row although it
    /// must wait for the next second. False when the counter cannot be
    /// read. One read of a kept descriptor; no warning (the tick warns).
    pub fn oom_since_tick(&mut self, bufs: &mut Buffers) -> bool {
        let Some(last) = self.last_oom else {
            return false;
        };
        let now = self.vmstat(bufs).ok().and_then(|vm| vm.oom_kill);
        now.is_some_and(|k| k > last)
    }

    /// /proc/pressure/memory: absent or EOPNOTSUPP turns it off for good.
    fn read_pressure(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        if !self.psi_off {
            match self.kept.psi.read(
                self.root.at(psi::PATH_MEMORY),
                psi::PATH_MEMORY,
                &mut bufs.file,
                Shape::Whole,
            ) {
                Ok(b) => match psi::parse(b) {
                    Ok(p) => row.ext.psi_mem_some_avg10 = Decimal::parse(p.some.avg10_text),
                    Err(_) => self.warn_once(w, Source::Psi, "unexpected format"),
                },
                Err(e) => {
                    if matches!(e, ReadError::Open(_))
                        || e.errno() == Some(rustix::io::Errno::OPNOTSUPP)
                    {
                        self.psi_off = true;
                    }
                    if !matches!(e, ReadError::Open(rustix::io::Errno::NOENT)) {
                        self.warn_once(w, Source::Psi, e.describe());
                    }
                }
            }
        }
    }

    /// zram devices.
    fn read_zram(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        if let Some(sb) = &self.sys_block {
            match self
                .kept
                .zram
                .totals(sb.as_fd(), &mut bufs.dir, &mut bufs.file, false)
            {
                Ok(t) if t.devices > 0 => {
                    row.ext.zram_stored_mb = Some(t.orig_data_size >> 20);
                    row.ext.zram_ram_mb = Some(t.mem_used_total >> 20);
                }
                Ok(_) => {}
                Err(_) => self.warn_once(w, Source::Zram, "cannot list"),
            }
        }
    }

    /// The available memory of the tightest cgroup memory limit on our
    /// path: limit − (usage − inactive file cache), MiB; returns the
    /// level of that limit (0 = the leaf), `None` when none binds.
    fn read_cgroup(
        &mut self,
        row: &mut Row,
        bufs: &mut Buffers,
        mem_total_kib: Option<u64>,
    ) -> Option<usize> {
        if let (Some(cg), Some(total)) = (&self.mem_cg, mem_total_kib)
            && let Some(a) = cg.available_kept(&mut self.kept.cgroup, total, &mut bufs.file)
        {
            row.ext.cg_mem_avail_mb = Some(a.available_bytes >> 20);
            row.ext.cg_mem_limit_mb = Some(a.limit_bytes >> 20);
            return Some(usize::from(a.depth));
        }
        None
    }

    /// In a container, its OOM kills since the first sample
    /// (`cg_oom_kills`). Which cgroup is the container's is chosen at the
    /// first tick: v2 counts a cgroup's descendants, so the level of the
    /// tightest memory limit (else headroom's own cgroup, its parent when
    /// `run` moved headroom into a `.self` leaf of its own); v1 counts only
    /// the processes of the very cgroup, so headroom's own, plus the
    /// build cgroup's kills (a child of it).
    fn container_oom(&mut self, row: &mut Row, bufs: &mut Buffers, limit_depth: Option<usize>) {
        let (Some(_), Some(cg)) = (self.container, &self.mem_cg) else {
            return;
        };
        let own_cg = matches!(self.build, Build::Cgroup(_));
        let buf = &mut bufs.file[..cgroup::TICK_BUF_LEN];
        let (depth, base) = *self.cg_oom.get_or_insert_with(|| {
            let depth = match cg.version {
                Version::V1 => 0,
                Version::V2 => limit_depth.unwrap_or(0).max(usize::from(own_cg)),
            };
            (depth, None)
        });
        // One read a tick: the first that answers is the base.
        let Some(now) = cg.oom_kills_at(depth, buf) else {
            return;
        };
        let base = base.unwrap_or(now);
        self.cg_oom = Some((depth, Some(base)));
        let build = match (cg.version, own_cg) {
            (Version::V1, true) => row.build_oom_kills.unwrap_or(0),
            _ => 0,
        };
        row.ext.cg_oom_kills = Some(now.saturating_sub(base).saturating_add(build));
    }

    /// statvfs of the build disk and /tmp.
    fn stat_filesystems(&mut self, row: &mut Row, w: &mut impl Warn) {
        match self.disk.as_ref().map(|d| FsStat::of_fd(d.as_fd())) {
            Some(Ok(s)) => {
                row.disk_avail_gb = s.avail_gib();
                row.disk_pct = s.used_pct();
                row.ext.disk_avail_mb = Some(s.avail_mib());
            }
            Some(Err(_)) => {
                row.disk_known = false;
                self.warn_once(w, Source::Disk, "statvfs failed");
            }
            None => {
                row.disk_known = false;
                self.warn_once(w, Source::Disk, "cannot open");
            }
        }
        match self.tmp.as_ref().map(|d| FsStat::of_fd(d.as_fd())) {
            Some(Ok(s)) => {
                row.ext.tmp_avail_mb = Some(s.avail_mib());
                row.ext.tmp_pct = Some(s.used_pct());
            }
            Some(Err(_)) => self.warn_once(w, Source::Tmp, "statvfs failed"),
            None => self.warn_once(w, Source::Tmp, "cannot open"),
        }
    }

    /// Compilers: one pass over /proc (after the OOM kills the kernel
    /// named since the last, for a process tree's build).
    fn scan_compilers(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        if let Some((s, listed)) = self.list_compilers(bufs) {
            if listed.is_err() {
                self.warn_once(w, Source::Procs, "cannot list");
            }
            row.compilers = u64::from(s.compilers);
            // A listing that failed before it found anything counted
            // nothing: unknown, not 0.
            row.compilers_known = listed.is_ok() || s.compilers > 0;
            row.build_rss_mb = s.build_rss_sum_kib / 1024;
            row.build_compilers = self.build.is_some().then_some(u64::from(s.build_compilers));
            if s.build_compilers > 0 {
                row.ext.build_peak_rss_mb = Some(s.build_peak_kib / 1024);
                sanitize_into(s.build_peak_comm(), 15, &mut row.ext.build_peak_rss_comm);
            }
            if s.compilers > 0 {
                row.ext.peak_rss_mb = Some(s.peak_kib / 1024);
                sanitize_into(s.peak_comm(), 15, &mut row.ext.peak_rss_comm);
            }
        } else {
            row.compilers_known = false;
            self.warn_once(w, Source::Procs, "cannot open proc/");
        }
    }

    /// The compilers of one pass over /proc (the build's told apart; kernel
    /// threads known from the last pass skipped, the build's kept ones
    /// re-read), and how listing it went; `None` without `proc/`. First,
    /// a process tree's build places the victims of the OOM kills the
    /// kernel named since the last pass, while the last two passes'
    /// tables still hold them ([`Victims::drain`]).
    fn list_compilers(
        &mut self,
        bufs: &mut Buffers,
    ) -> Option<(ScanResult, Result<(), rustix::io::Errno>)> {
        let pd = self.proc_dir.as_ref()?;
        let mut scan =
            Scan::new(self.opts.compilers, self.page_size_kib).within(self.build.scope());
        let mut files = ProcDir(pd.as_fd());
        let file = &mut bufs.file;
        let classes = &mut self.classes;
        if let Some(v) = self.victims.as_mut() {
            v.drain(&mut bufs.scratch, (&scan, classes), &mut files, file);
        }
        let kept = &mut self.kept.compilers;
        classes.begin();
        let listed =
            crate::kernel::root::for_each_entry_ino(pd.as_fd(), &mut bufs.dir, |name, _, ino| {
                if let Some(pid) =
                    crate::kernel::parse::parse_u64(name).and_then(|p| u32::try_from(p).ok())
                {
                    kept.visit(&mut scan, (pid, ino), classes, &mut files, file);
                }
                true
            });
        classes.end();
        kept.sweep();
        Some((scan.finish(), listed))
    }

    /// The `--label` stage (else `?`) when the log named none.
    fn label_if_no_stage(&self, row: &mut Row) {
        if row.stage.is_empty() {
            let label = self.opts.label.unwrap_or("?");
            sanitize_into(label.as_bytes(), STAGE_CAP, &mut row.stage);
        }
    }

    /// The build's own OOM kills and, with a cgroup, its anonymous memory.
    /// A process tree's: the kills whose victims were its processes, and
    /// apart those the host counted since the first row that could not be
    /// placed ([`Victims::unplaced_of`]); unknown without the host's
    /// counter (kernels before 4.13).
    fn build_figures(&mut self, row: &mut Row, bufs: &mut Buffers) {
        match self.build {
            Build::None => {}
            Build::Tree(_) => {
                if let Some(rise) = row.ext.oom_kills {
                    let v = self.victims.as_ref();
                    row.build_oom_kills = Some(v.map_or(0, |v| v.build));
                    row.build_oom_unplaced = v.map_or(rise, |v| v.unplaced_of(rise));
                }
            }
            Build::Cgroup(cg) => {
                let buf = &mut bufs.file[..crate::followed::buildcg::BUF_LEN];
                row.build_oom_kills = cg.oom_kills(&mut self.kept.build_oom, buf);
                row.build_anon_mb = cg
                    .anon_bytes(&mut self.kept.build_anon, buf)
                    .map(|b| b >> 20);
            }
        }
    }

    /// Stage and context from the active log, and the warnings of
    /// [`LogWatch`] when it gives nothing.
    fn log(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        if matches!(self.opts.stage_log, StageLog::None) {
            return;
        }
        let read = self.read_log(row, bufs, w);
        let due = self.log_watch.row(row.epoch, read);
        self.say_log(due, w);
    }

    /// The recording has ended (after its last row): the warning about the
    /// build log that no row gave and is due all the same
    /// ([`LogWatch::end`]: `record --count 1` with a missing log).
    pub fn end(&mut self, w: &mut impl Warn) {
        let due = self.log_watch.end();
        self.say_log(due, w);
    }

    /// Gives the build log's warning `due`, if any, naming the option and
    /// path.
    fn say_log(&self, due: Option<LogWarning>, w: &mut impl Warn) {
        let (option, path) = match self.opts.stage_log {
            StageLog::None => return,
            StageLog::File(p) => ("--stage-log", p),
            StageLog::Dir(d) => ("--stage-log-dir", d),
        };
        if let Some(warning) = due {
            w.log(option, path, warning.text());
        }
    }

    /// Reads the active log into the row's stage and context.
    fn read_log(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) -> LogRead {
        let fd = match self.opts.stage_log {
            StageLog::None => return LogRead::Unread,
            StageLog::File(p) => match rustix::fs::open(p, LOG_FLAGS, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) => return LogRead::Missing,
                other => other,
            },
            StageLog::Dir(_) => {
                let Some(dir) = &self.log_dir else {
                    self.warn_once(w, Source::Log, "cannot open the log directory");
                    return LogRead::Unread;
                };
                let mut name = heapless::String::<256>::new();
                match logtail::active_log(dir.as_fd(), &mut bufs.dir, &mut name) {
                    Ok(true) => {
                        rustix::fs::openat(dir.as_fd(), name.as_str(), LOG_FLAGS, Mode::empty())
                    }
                    Ok(false) => return LogRead::Unread,
                    Err(e) => Err(e),
                }
            }
        };
        let fd = match fd {
            Ok(fd) => fd,
            // Gone between listing and opening.
            Err(rustix::io::Errno::NOENT) => return LogRead::Unread,
            Err(e) => {
                self.warn_once(w, Source::Log, ReadError::Open(e).describe());
                return LogRead::Unread;
            }
        };
        match logtail::read_tail_since(fd.as_fd(), &mut bufs.scratch, self.opts.log_since) {
            Ok((tail, from_start)) => {
                let found = logtail::scan(tail, from_start);
                let context = found.context_into(&mut row.context);
                if let Some(s) = found.stage {
                    sanitize_into(s, STAGE_CAP, &mut row.stage);
                }
                LogRead::Read { context }
            }
            Err(e) => {
                self.warn_once(w, Source::Log, e.describe());
                LogRead::Unread
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::fs;
    use std::path::{Path, PathBuf};

    struct Quiet;
    impl Warn for Quiet {
        fn warn(&mut self, _: Source, _: &'static str) {}
        fn note(&mut self, _: Source, _: &'static str) {}
    }

    /// A fresh directory of this test process's own.
    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(std::format!(
            "headroom-sampler-{tag}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("proc")).unwrap();
        d
    }

    fn process(root: &Path, pid: u32, comm: &str, ppid: u32, rss_mib: u64) {
        let d = root.join(std::format!("proc/{pid}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("comm"), std::format!("{comm}\n")).unwrap();
        fs::write(
            d.join("stat"),
            std::format!("{pid} ({comm}) S {ppid} 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9 0 0\n"),
        )
        .unwrap();
        let kib = rss_mib * 1024;
        fs::write(
            d.join("status"),
            std::format!("VmHWM:\t{kib} kB\nVmRSS:\t{kib} kB\n"),
        )
        .unwrap();
    }

    /// Options with no log, the live / and /tmp, the default compilers.
    fn plain(list: &CompilerList) -> Options<'_> {
        Options {
            disk_path: "/",
            tmp_path: "/tmp",
            stage_log: StageLog::None,
            label: None,
            compilers: list,
            log_since: None,
        }
    }

    fn oom_kill(root: &Path, n: u64) {
        fs::write(
            root.join("proc/vmstat"),
            std::format!("pgfault 1\noom_kill {n}\n"),
        )
        .unwrap();
    }

    /// A v2 tree: headroom in `/c/leaf`, the memory limit at `/c` (the
    /// container's level); `events` writes each level's `oom_kill`.
    fn v2_container(tag: &str) -> (PathBuf, impl Fn(u64, u64)) {
        let d = tmp(tag);
        fs::create_dir_all(d.join("proc/self")).unwrap();
        fs::write(d.join("proc/self/cgroup"), "0::/c/leaf\n").unwrap();
        fs::write(
            d.join("proc/self/mountinfo"),
            "30 20 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        )
        .unwrap();
        fs::write(
            d.join("proc/meminfo"),
            "MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n",
        )
        .unwrap();
        let c = d.join("sys/fs/cgroup/c");
        fs::create_dir_all(c.join("leaf")).unwrap();
        fs::write(c.join("memory.max"), "1073741824\n").unwrap();
        fs::write(c.join("memory.current"), "104857600\n").unwrap();
        fs::write(c.join("leaf/memory.max"), "max\n").unwrap();
        fs::write(c.join("leaf/memory.current"), "1048576\n").unwrap();
        let events = move |container: u64, leaf: u64| {
            let line = |n| std::format!("low 0\nhigh 0\nmax 3\noom 1\noom_kill {n}\n");
            fs::write(c.join("memory.events"), line(container)).unwrap();
            fs::write(c.join("leaf/memory.events"), line(leaf)).unwrap();
        };
        events(5, 1);
        (d, events)
    }

    /// `cg_oom_kills` counts from the first row at the container's level:
    /// on v2 the level of the memory limit (its count takes in the
    /// descendants), not headroom's own leaf; outside a container, none.
    #[test]
    fn container_oom_kills_count_at_the_limits_level_since_the_first_row() {
        let (d, events) = v2_container("cg-oom");
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        assert_eq!(s.container, Some(container::Why::MemoryLimit));
        let r = s.tick(1, &mut bufs, &mut Quiet);
        assert_eq!(
            (r.ext.cg_mem_limit_mb, r.ext.cg_oom_kills),
            (Some(1024), Some(0))
        );
        // Two kills in a sibling of headroom's leaf, one more in the leaf.
        events(8, 2);
        assert_eq!(s.tick(2, &mut bufs, &mut Quiet).ext.cg_oom_kills, Some(3));
        // No limit and no marker: not a container, no column.
        fs::write(d.join("sys/fs/cgroup/c/memory.max"), "max\n").unwrap();
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        assert_eq!(s.container, None);
        assert_eq!(s.tick(3, &mut bufs, &mut Quiet).ext.cg_oom_kills, None);
        // A marker makes it one: headroom's own leaf is then counted.
        fs::write(d.join(".dockerenv"), "").unwrap();
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        assert_eq!(s.container, Some(container::Why::Marker(".dockerenv")));
        assert_eq!(s.tick(4, &mut bufs, &mut Quiet).ext.cg_oom_kills, Some(0));
        events(9, 4);
        assert_eq!(s.tick(5, &mut bufs, &mut Quiet).ext.cg_oom_kills, Some(2));
        let _ = fs::remove_dir_all(&d);
    }

    /// A build without a cgroup under a `--root` tree, whose /dev/kmsg is
    /// not this host's: no victim is named, so no kill is counted as the
    /// build's, and every kill the host counts during it may be its (said
    /// as unplaced). A compiler of the build that vanishes is no kill
    /// (the estimate that took it for one counted 0 for a killed test
    /// program, and another's kill for the build's).
    #[test]
    fn tree_build_oom_kills_unnamed_are_unplaced_not_guessed() {
        let d = tmp("unnamed");
        process(&d, 10, "make", 1, 1);
        process(&d, 12, "cc1", 10, 50);
        process(&d, 13, "cc1", 10, 40);
        process(&d, 20, "cc1plus", 1, 300);
        oom_kill(&d, 5);
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        assert_eq!(
            s.follow(Build::Tree(10)),
            Some(crate::kernel::kmsg::Unusable::NotLive)
        );
        let mut tick = |s: &mut Sampler<'_>, e| s.tick(e, &mut bufs, &mut Quiet);

        let r = tick(&mut s, 100);
        assert_eq!((r.build_oom_kills, r.build_oom_unplaced), (Some(0), 0));
        assert_eq!(r.ext.build_peak_rss_mb, Some(50));
        assert_eq!(r.ext.build_peak_rss_comm.as_str(), "cc1");
        assert_eq!(
            (r.ext.peak_rss_mb, r.ext.peak_rss_comm.as_str()),
            (Some(300), "cc1plus")
        );
        assert_eq!(r.build_rss_mb, 90);
        // cc1 12 vanishes and the host counts two kills: not named, so
        // both may be the build's.
        fs::remove_dir_all(d.join("proc/12")).unwrap();
        oom_kill(&d, 7);
        let r = tick(&mut s, 101);
        assert_eq!((r.build_oom_kills, r.build_oom_unplaced), (Some(0), 2));
        // A compiler ends on a quiet host: nothing changes.
        fs::remove_dir_all(d.join("proc/13")).unwrap();
        let r = tick(&mut s, 102);
        assert_eq!((r.build_oom_kills, r.build_oom_unplaced), (Some(0), 2));
        // Without a build nothing is the build's.
        assert_eq!(s.follow(Build::None), None);
        let r = tick(&mut s, 103);
        assert_eq!(
            (r.build_oom_kills, r.build_oom_unplaced, r.build_rss_mb),
            (None, 0, 0)
        );
        let _ = fs::remove_dir_all(&d);
    }

    /// No host counter (kernel < 4.13): nothing to count from.
    #[test]
    fn tree_build_without_a_host_counter_has_unknown_oom_kills() {
        let d = tmp("no-counter");
        process(&d, 10, "sh", 1, 1);
        fs::write(d.join("proc/vmstat"), "pgfault 1\n").unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        s.build = Build::Tree(10);
        assert_eq!(s.tick(1, &mut bufs, &mut Quiet).build_oom_kills, None);
        let _ = fs::remove_dir_all(&d);
    }

    /// Issue 16: on the live root the fixed files are kept open (and no
    /// more than [`MAX_KEPT`]); under a `--root` tree nothing is kept, so a
    /// file replaced by rename is read anew at the next tick.
    #[test]
    fn the_live_root_keeps_its_files_open_and_a_tree_follows_names() {
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let live = Root::open("/").unwrap();
        let mut s = Sampler::new(&live, plain(&list), &mut bufs);
        s.tick(1, &mut bufs, &mut Quiet);
        let open = s.kept_open();
        assert!((3..=MAX_KEPT).contains(&open), "{open} kept");
        s.tick(2, &mut bufs, &mut Quiet);
        assert_eq!(s.kept_open(), open);
        // kthreadd (PID 2) is listed unless /proc is a PID namespace's: the
        // kernel threads are known, and skipped at the next tick.
        if fs::read_to_string("/proc/2/comm").is_ok_and(|c| c == "kthreadd\n") {
            assert!(s.classes.kernel_threads() > 0);
        }

        let d = tmp("follow");
        fs::write(d.join("proc/loadavg"), "1.00 0.50 0.25 1/100 42\n").unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        assert_eq!(s.tick(1, &mut bufs, &mut Quiet).load1.centi, 100);
        fs::write(d.join("proc/new"), "2.50 0.50 0.25 1/100 42\n").unwrap();
        fs::rename(d.join("proc/new"), d.join("proc/loadavg")).unwrap();
        assert_eq!(s.tick(2, &mut bufs, &mut Quiet).load1.centi, 250);
        assert_eq!(s.kept_open(), 0);
        let _ = fs::remove_dir_all(&d);
    }

    /// Issue 33: a tree with no proc/meminfo, proc/loadavg or proc/stat
    /// (a `--root` without them): the row says unknown for memory, load
    /// and CPU, never 0, and its CSV fields are empty.
    #[test]
    fn unreadable_meminfo_loadavg_and_stat_are_unknown_not_zero() {
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let d = tmp("no-meminfo");
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        for epoch in [1, 2] {
            let row = s.tick(epoch, &mut bufs, &mut Quiet);
            assert!(!row.mem_known && !row.cpu_known, "{row:?}");
            assert!(row.load1.text.is_empty());
            assert_eq!(row.ext.swap_total_mb, None);
            let mut out = heapless::Vec::new();
            row.format(true, &mut out).unwrap();
            let line = std::str::from_utf8(&out).unwrap();
            let f: std::vec::Vec<&str> = line.trim_end().split(',').collect();
            assert_eq!(f.len(), 14, "{line}");
            assert_eq!(&f[3..9], ["", "", "", "", "", ""], "{line}");
        }
        // With /proc/stat back, CPU is read (0 on its first tick).
        fs::write(d.join("proc/stat"), "cpu  1 0 1 10 0 0 0 0 0 0\n").unwrap();
        let row = s.tick(3, &mut bufs, &mut Quiet);
        assert!(row.cpu_known && !row.mem_known);
        let _ = fs::remove_dir_all(&d);
    }

    /// Issue 33: without `proc/` no process was counted: `compilers` is
    /// unknown (an empty field), never 0.
    #[test]
    fn without_proc_the_compilers_are_unknown_not_zero() {
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let d = tmp("no-proc");
        fs::remove_dir_all(d.join("proc")).unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let mut s = Sampler::new(&root, plain(&list), &mut bufs);
        let row = s.tick(1, &mut bufs, &mut Quiet);
        assert!(!row.compilers_known, "{row:?}");
        let mut out = heapless::Vec::new();
        row.format(true, &mut out).unwrap();
        let line = std::str::from_utf8(&out).unwrap();
        let f: std::vec::Vec<&str> = line.trim_end().split(',').collect();
        assert_eq!(f[11], "", "{line}");
        let _ = fs::remove_dir_all(&d);
    }

    /// Keeps what [`Warn::log`] is told.
    #[derive(Default)]
    struct LogWarns(std::vec::Vec<std::string::String>);
    impl Warn for LogWarns {
        fn warn(&mut self, _: Source, _: &'static str) {}
        fn note(&mut self, _: Source, _: &'static str) {}
        fn log(&mut self, option: &'static str, path: &str, what: &'static str) {
            self.0.push(std::format!("{option} {path}: {what}"));
        }
    }

    /// Issue 15: a `--stage-log` that does not exist, or that gives no
    /// context for a minute of rows, gets one warning each, not one per
    /// row; a make log's echo lines give the context.
    #[test]
    fn a_missing_or_quiet_stage_log_warns_once() {
        let d = tmp("log-warns");
        let log = d.join("build.log");
        let log_s = log.to_str().unwrap();
        let root = Root::open(d.to_str().unwrap()).unwrap();
        let list = CompilerList::default_list();
        let mut bufs = std::boxed::Box::new(Buffers::new());
        let opts = Options {
            stage_log: StageLog::File(log_s),
            ..plain(&list)
        };
        let mut s = Sampler::new(&root, opts, &mut bufs);
        let mut w = LogWarns::default();
        for t in 0..5 {
            assert_eq!(s.tick(t, &mut bufs, &mut w).context.as_str(), "");
        }
        let missing = std::format!(
            "--stage-log {log_s}: does not exist (yet); stage and context stay empty until it does"
        );
        assert_eq!(w.0, core::slice::from_ref(&missing));
        // Warned: nothing more at the end.
        s.end(&mut w);
        assert_eq!(w.0.len(), 1);
        // A recording of one row (`record --count 1`) warns at its end.
        let mut one = Sampler::new(&root, opts, &mut bufs);
        let mut w1 = LogWarns::default();
        one.tick(0, &mut bufs, &mut w1);
        assert!(w1.0.is_empty());
        one.end(&mut w1);
        assert_eq!(w1.0, [missing]);
        // There now, with make's echo lines: the file being compiled.
        fs::write(&log, "cc -O2 -c a.c -o a.o\n").unwrap();
        assert_eq!(
            s.tick(5, &mut bufs, &mut w).context.as_str(),
            "a.c (cc -O2)"
        );
        // Then a minute of lines that say nothing.
        fs::write(&log, "make: Nothing to be done\n").unwrap();
        for t in [6, 30, 65] {
            s.tick(t, &mut bufs, &mut w);
        }
        assert_eq!(w.0.len(), 1);
        s.tick(66, &mut bufs, &mut w);
        for t in 67..200 {
            s.tick(t, &mut bufs, &mut w);
        }
        assert_eq!(w.0.len(), 2, "{:?}", w.0);
        assert!(w.0[1].ends_with(": no context for a minute: none of its last 40 lines is a progress line or a compiler command"));
        let _ = fs::remove_dir_all(&d);
    }
}
