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

use core::mem::MaybeUninit;

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags};

use crate::cgroup::{self, MemCgroup};
use crate::compilers::{CompilerList, ProcDir, Scan};
use crate::fsstat::FsStat;
use crate::logtail;
use crate::root::{ReadError, Root};
use crate::row::{Decimal, Row};
use crate::stat::{self, CpuTimes};
use crate::text::{STAGE_CAP, sanitize_into};
use crate::{loadavg, meminfo, psi, vmstat, zram};

/// Size of the shared scratch buffer: the log tail (SPEC: at most 64 KiB
/// per tick) and /proc/stat (about 150 bytes per CPU plus an `intr` line
/// of a few KiB: 64 KiB holds ~300 CPUs) both fit.
pub const SCRATCH_LEN: usize = 64 * 1024;

/// Size of the getdents64(2) buffer. Any size works (a directory is read in
/// several calls); 8 KiB lists ~200 /proc entries per syscall.
pub const DIR_SCRATCH_LEN: usize = 8 * 1024;

/// Size of the buffer for one small file (/proc/PID/status is ~1.5 KiB on
/// 6.x with ~60 lines; meminfo ~1.5 KiB; vmstat ~4–5 KiB): 16 KiB.
pub const FILE_LEN: usize = 16 * 1024;

/// How a build log is opened: O_NONBLOCK so that a FIFO given as the log
/// cannot block the sampler (and its signal handling) in open(2); O_NOCTTY
/// so a terminal device never becomes ours. `read_tail` then refuses
/// anything that is not a regular file.
const LOG_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY);

/// A source that may warn once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Source {
    /// /proc/meminfo
    MemInfo = 0,
    /// /proc/stat
    Stat,
    /// /proc/loadavg
    LoadAvg,
    /// /proc/vmstat (oom_kill)
    VmStat,
    /// /proc/pressure/memory
    Psi,
    /// /sys/block zram devices
    Zram,
    /// the memory cgroup files
    Cgroup,
    /// statvfs of the disk path
    Disk,
    /// statvfs of /tmp
    Tmp,
    /// the process list under /proc
    Procs,
    /// the build log
    Log,
}

impl Source {
    /// The file or directory behind the source, for messages.
    pub fn path(self) -> &'static str {
        match self {
            Source::MemInfo => meminfo::PATH,
            Source::Stat => stat::PATH,
            Source::LoadAvg => loadavg::PATH,
            Source::VmStat => vmstat::PATH,
            Source::Psi => psi::PATH_MEMORY,
            Source::Zram => zram::SYS_BLOCK,
            Source::Cgroup => "sys/fs/cgroup (memory)",
            Source::Disk => "--disk-path",
            Source::Tmp => "/tmp",
            Source::Procs => "proc/<pid>",
            Source::Log => "build log",
        }
    }
}

/// Receives the sampler's one-time warnings (at most one per source).
pub trait Warn {
    /// `source` could not be read (`why`); its field stays empty.
    fn warn(&mut self, source: Source, why: &'static str);
    /// `source` was read, but a value in it had to be derived (`what`);
    /// its field is filled with that.
    fn note(&mut self, source: Source, what: &'static str);
}

/// Where stage and context come from.
#[derive(Clone, Copy, Debug)]
pub enum StageLog<'a> {
    /// No log: stage is `--label` or `?`, context empty.
    None,
    /// `--stage-log FILE` (a host path, re-opened every tick since build
    /// logs are rotated and replaced).
    File(&'a str),
    /// `--stage-log-dir DIR`: the newest `*.log` in it, re-chosen every tick.
    Dir(&'a str),
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
    /// Which process names count as compilers.
    pub compilers: &'a CompilerList,
}

/// The buffers one tick reads into, kept together so the caller decides
/// where they live (they total ~90 KiB: too much for some thread stacks).
pub struct Buffers {
    scratch: [u8; SCRATCH_LEN],
    file: [u8; FILE_LEN],
    dir: [MaybeUninit<u8>; DIR_SCRATCH_LEN],
}

impl Buffers {
    /// Zeroed buffers.
    pub const fn new() -> Buffers {
        Buffers {
            scratch: [0; SCRATCH_LEN],
            file: [0; FILE_LEN],
            dir: [MaybeUninit::uninit(); DIR_SCRATCH_LEN],
        }
    }
}

impl Buffers {
    /// Writes every byte once, so that every page of the buffers is
    /// resident from start-up: a zeroed heap allocation may be mapped
    /// lazily, and a buffer first filled deep into a long run (a /proc
    /// listing that grows past 4 KiB when processes multiply) would raise
    /// the RSS then. With this, the footprint is fixed at start.
    pub fn commit(&mut self) {
        self.scratch.fill(0xA5);
        self.file.fill(0xA5);
        self.dir.fill(MaybeUninit::new(0xA5));
    }
}

impl Buffers {
    /// The small-file buffer ([`FILE_LEN`] bytes), for a start-up read
    /// outside a tick: [`crate::footprint::commit_mappings`] reads
    /// /proc/self/maps into it, so committing needs no buffer of its own.
    pub fn file_buf(&mut self) -> &mut [u8] {
        &mut self.file
    }
}

impl Default for Buffers {
    fn default() -> Self {
        Self::new()
    }
}

/// The sampler's state between ticks.
pub struct Sampler<'a> {
    root: &'a Root,
    opts: Options<'a>,
    proc_dir: Option<OwnedFd>,
    sys_block: Option<OwnedFd>,
    mem_cg: Option<MemCgroup>,
    disk: Option<OwnedFd>,
    tmp: Option<OwnedFd>,
    log_dir: Option<OwnedFd>,
    page_size_kib: u64,
    prev_cpu: Option<CpuTimes>,
    first_oom: Option<u64>,
    first_epoch: Option<u64>,
    psi_off: bool,
    warned: u32,
    /// MemAvailable was estimated on some tick (kernel < 3.14).
    pub mem_estimated: bool,
    /// `run`'s CMD: the compilers descending from it are also totalled
    /// apart ([`crate::row::Row::build_rss_mb`]), for the jobserver.
    pub build_pid: Option<u32>,
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
        let mem_cg = cgroup::open_memory(root, &mut bufs.scratch).ok().flatten();
        let tmp_is_tmpfs = root
            .read(crate::mountinfo::PATH, &mut bufs.scratch)
            .ok()
            .map(|b| crate::mountinfo::fs_type_of(b, opts.tmp_path.as_bytes()) == Some(b"tmpfs"));
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
            disk: open_host_path(opts.disk_path),
            tmp: open_host_path(opts.tmp_path),
            log_dir,
            page_size_kib: (rustix::param::page_size() / 1024).max(1) as u64,
            prev_cpu: None,
            first_oom: None,
            first_epoch: None,
            psi_off: false,
            warned: 0,
            mem_estimated: false,
            build_pid: None,
            tmp_is_tmpfs,
        }
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

        // /proc/loadavg: load1 verbatim.
        match loadavg::read(self.root, &mut bufs.file) {
            Ok(b) => match loadavg::parse(b) {
                Ok(l) => row.load1 = Decimal::parse(l.load1_text).unwrap_or_default(),
                Err(_) => self.warn_once(w, Source::LoadAvg, "unexpected format"),
            },
            Err(e) => self.warn_once(w, Source::LoadAvg, e.describe()),
        }

        // /proc/stat: busy % since the previous tick.
        match stat::read(self.root, &mut bufs.scratch) {
            Ok(b) => match stat::aggregate(b) {
                Ok(cur) => {
                    if let Some(prev) = &self.prev_cpu {
                        row.cpu_pct = stat::delta(prev, &cur).busy_pct();
                    }
                    self.prev_cpu = Some(cur);
                }
                Err(_) => self.warn_once(w, Source::Stat, "unexpected format"),
            },
            Err(e) => self.warn_once(w, Source::Stat, e.describe()),
        }

        // /proc/meminfo.
        let mut mem_total_kib = None;
        match meminfo::read(self.root, &mut bufs.file) {
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

        // /proc/vmstat oom_kill (Linux >= 4.13): delta since the first tick.
        match vmstat::read(self.root, &mut bufs.file) {
            Ok(b) => {
                if let Ok(vmstat::VmStat {
                    oom_kill: Some(k), ..
                }) = vmstat::parse(b)
                {
                    let base = *self.first_oom.get_or_insert(k);
                    row.ext.oom_kills = Some(k.saturating_sub(base));
                }
            }
            Err(e) => self.warn_once(w, Source::VmStat, e.describe()),
        }

        // /proc/pressure/memory: absent or EOPNOTSUPP turns it off for good.
        if !self.psi_off {
            match psi::read(self.root, &mut bufs.file) {
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

        // zram devices.
        if let Some(sb) = &self.sys_block {
            match zram::totals(sb.as_fd(), &mut bufs.dir, &mut bufs.file) {
                Ok(t) if t.devices > 0 => {
                    row.ext.zram_stored_mb = Some(t.orig_data_size >> 20);
                    row.ext.zram_ram_mb = Some(t.mem_used_total >> 20);
                }
                Ok(_) => {}
                Err(_) => self.warn_once(w, Source::Zram, "cannot list"),
            }
        }

        // The tightest cgroup memory limit on our path.
        if let (Some(cg), Some(total)) = (&self.mem_cg, mem_total_kib)
            && let Some(r) = cg.remaining(total, &mut bufs.file)
        {
            row.ext.cg_mem_avail_mb = Some(r.remaining_bytes >> 20);
        }

        // statvfs of the build disk and /tmp.
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

        // Compilers: one pass over /proc.
        if let Some(pd) = &self.proc_dir {
            let mut scan =
                Scan::new(self.opts.compilers, self.page_size_kib).within(self.build_pid);
            let mut files = ProcDir(pd.as_fd());
            let file = &mut bufs.file;
            let listed = crate::root::for_each_entry(pd.as_fd(), &mut bufs.dir, |name, _| {
                if let Some(pid) = crate::parse::parse_u64(name).and_then(|p| u32::try_from(p).ok())
                {
                    scan.visit(pid, &mut files, file);
                }
                true
            });
            if listed.is_err() {
                self.warn_once(w, Source::Procs, "cannot list");
            }
            let s = scan.finish();
            row.compilers = u64::from(s.compilers);
            row.build_rss_mb = s.build_rss_sum_kib / 1024;
            row.build_peak_mb = (s.build_compilers > 0).then_some(s.build_peak_kib / 1024);
            if s.compilers > 0 {
                row.ext.peak_rss_mb = Some(s.peak_kib / 1024);
                sanitize_into(s.peak_comm(), 15, &mut row.ext.peak_rss_comm);
            }
        } else {
            self.warn_once(w, Source::Procs, "cannot open proc/");
        }

        // Stage and context from the active log.
        self.log(&mut row, bufs, w);
        if row.stage.is_empty() {
            let label = self.opts.label.unwrap_or("?");
            sanitize_into(label.as_bytes(), STAGE_CAP, &mut row.stage);
        }
        row
    }

    fn log(&mut self, row: &mut Row, bufs: &mut Buffers, w: &mut impl Warn) {
        let fd = match self.opts.stage_log {
            StageLog::None => return,
            StageLog::File(p) => rustix::fs::open(p, LOG_FLAGS, Mode::empty()),
            StageLog::Dir(_) => {
                let Some(dir) = &self.log_dir else {
                    self.warn_once(w, Source::Log, "cannot open the log directory");
                    return;
                };
                let mut name = heapless::String::<256>::new();
                match logtail::newest_log(dir.as_fd(), &mut bufs.dir, &mut name) {
                    Ok(true) => {
                        rustix::fs::openat(dir.as_fd(), name.as_str(), LOG_FLAGS, Mode::empty())
                    }
                    Ok(false) => return,
                    Err(e) => Err(e),
                }
            }
        };
        let fd = match fd {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return, // not created yet
            Err(e) => {
                self.warn_once(w, Source::Log, ReadError::Open(e).describe());
                return;
            }
        };
        match logtail::read_tail(fd.as_fd(), &mut bufs.scratch) {
            Ok((tail, from_start)) => {
                let found = logtail::scan(tail, from_start);
                if let Some(c) = found.context {
                    logtail::context_into(c, &mut row.context);
                }
                if let Some(s) = found.stage {
                    sanitize_into(s, STAGE_CAP, &mut row.stage);
                }
            }
            Err(e) => self.warn_once(w, Source::Log, e.describe()),
        }
    }
}
