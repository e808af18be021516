//! Every pure parser, fed mutated real kernel files and random bytes, returns
//! (a value or an error) and never panics. A deterministic PRNG keeps the
//! run reproducible; `cargo fuzz` (issue 6) goes further.

use headroom::followed::text::{Context, Stage};
use headroom::followed::{logtail, text};
use headroom::kernel::arch::{self, LongWidth};
use headroom::kernel::{
    blockdev, cgroup, cpufreq, diskstats, loadavg, meminfo, mountinfo, pid, psi, stat, swaps,
    thermal, throttled, vmstat, zram,
};
use headroom::report::csvread;

/// xorshift64*: small, deterministic, good enough to mutate inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that matter to the parsers: separators, digits, signs, brackets.
const INTERESTING: &[u8] = b" \t\n\r:()[]/,\"\\-+.0123456789kBmaxZ\x00\xff\x1b";

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            1 => v.insert(at, INTERESTING[rng.below(INTERESTING.len())]),
            2 => v.truncate(at),
            3 if at < v.len() => {
                let end = (at + rng.below(64)).min(v.len());
                v.drain(at..end);
            }
            4 => {
                for _ in 0..rng.below(30) {
                    v.insert(at, b'9');
                }
            }
            _ => {
                let n = rng.below(40);
                for _ in 0..n {
                    v.push(rng.next() as u8);
                }
            }
        }
    }
    v
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn run_all(input: &[u8]) {
    let _ = meminfo::parse(input)
        .map(|m| (m.mem_used_kib(), m.mem_used_pct(), m.hugepages_in_use_kib()));
    let _ = vmstat::parse(input);
    let _ = loadavg::parse(input);
    let _ = loadavg::parse_centi(input);
    let _ = psi::parse(input);
    if let Ok(a) = stat::aggregate(input) {
        let _ = stat::delta(&a, &stat::CpuTimes::default()).busy_pct();
        let _ = stat::delta(&stat::CpuTimes::default(), &a).busy_pct();
    }
    let _ = stat::per_cpu(input).count();
    let _ = stat::procs_blocked(input);
    let mut name = [0u8; 4096];
    for s in swaps::entries(input).flatten() {
        let _ = s.unescape(&mut name).len();
        let _ = s.is_zram();
    }
    let _ = swaps::totals(input);
    let _ = zram::parse_mm_stat(input);
    let _ = zram::parse_disksize(input);
    let _ = zram::parse_comp_algorithm(input);
    heat_and_power(input);
    let _ = pid::parse_stat(input).map(|p| (p.is_zombie(), p.is_kernel_thread()));
    let _ = pid::parse_status(input);
    let _ = pid::parse_comm(input);
    for m in mountinfo::entries(input).flatten() {
        let _ = mountinfo::unescape(m.mount_point, &mut name);
    }
    let _ = mountinfo::fs_type_of(input, b"/tmp");
    disks(input);
    let _ = cgroup::path_for(input, b"memory");
    let _ = cgroup::parse_limit(input).map(|l| l.effective(1 << 32));
    let _ = cgroup::parse_cpu_max(input).map(|c| c.millicpus());
    let _ = cgroup::parse_cfs_quota(input);
    let _ = cgroup::parse_cpu_list_count(input);
    let _ = cgroup::parse_oom_kill(input);
    let _ = headroom::kernel::proc_cgroups::controller(input, b"memory").map(|c| c.can_limit());
    let _ =
        headroom::kernel::kmsg::parse_record(input).map(|r| headroom::kernel::kmsg::oom_victim(&r));
    for v in [cgroup::Version::V1, cgroup::Version::V2] {
        let _ = cgroup::parse_stat_value(input, cgroup::inactive_file_key(v));
    }
    let _ = headroom::followed::buildcg::parse_anon(input, cgroup::Version::V1);
    let _ = headroom::followed::buildcg::parse_anon(input, cgroup::Version::V2);
    let _ = headroom::followed::buildcg::pid_of_name(input);
    let (a, b) = input.split_at(input.len() / 2);
    let _ = cgroup::is_within(a, b);
    for start in [true, false] {
        let f = logtail::scan(input, start);
        let mut c = Context::new();
        if let Some(raw) = f.context {
            logtail::context_into(raw, &mut c);
        }
        logtail::context_into(input, &mut c);
        assert!(c.chars().count() <= text::CONTEXT_CHARS);
        assert!(!c.contains(',') && !c.contains('"') && !c.contains('\n') && !c.contains('\r'));
    }
    let mut s = Stage::new();
    text::sanitize_into(input, text::STAGE_CAP, &mut s);
    assert!(!s.contains(',') && !s.contains('"'));
    let mut rows = csvread::CsvRows::new();
    let _ = rows.feed(input, &mut |_| {});
    let _ = rows.feed(&[], &mut |_| {});
}

/// diskstats, arch and blockdev: every line, the lookups, the delta both ways
/// and the link and source parsers.
fn disks(input: &[u8]) {
    let zero = diskstats::DiskCounters::default();
    if let Ok(c) = diskstats::parse_stat(input) {
        let _ = (c.read_bytes(), c.write_bytes());
        for w in [LongWidth::Bits32, LongWidth::Bits64] {
            let _ = diskstats::delta(&zero, &c, 1000, w).map(|d| d.util_permille());
            let _ = diskstats::delta(&c, &zero, 1, w).map(|d| d.util_permille());
        }
    }
    let _ = arch::long_width(input);
    for line in input.split(|&c| c == b'\n') {
        if let Ok(diskstats::Line {
            stats: diskstats::Stats::Full(c),
            ..
        }) = diskstats::parse_line(line)
        {
            let _ =
                diskstats::delta(&c, &c, u64::MAX, LongWidth::Bits32).map(|d| d.util_permille());
        }
    }
    let _ = diskstats::find(input, b"sda");
    let _ = diskstats::find_dev(input, 259, 1);
    let _ = blockdev::parse_dev(input);
    let _ = blockdev::parse_source(input);
    let _ = blockdev::no_disk_for_type(input);
    let mut out = blockdev::SysPath::new();
    let _ = blockdev::resolve_link("sys/dev/block/8:0", input, &mut out);
}

/// Temperature, throttle word and flags text, cpufreq: and the flags
/// text that parses formats back to itself.
fn heat_and_power(input: &[u8]) {
    for parse in [thermal::parse_temp, thermal::parse_zone_temp] {
        if let Ok(t) = parse(input) {
            assert!(t.tenths().abs() <= 1500);
        }
    }
    let _ = thermal::sample(thermal::Kind::Zone, Ok(input));
    let _ = (thermal::is_cpu_zone(input), thermal::is_cpu_hwmon(input));
    if let Ok(w) = throttled::parse_throttled(input) {
        let _ = throttled::sticky_turned_on(throttled::Throttled(0), w);
    }
    let _ = throttled::parse_alarm(input);
    if let Ok(f) = throttled::parse_flags(input) {
        let mut out = [0u8; throttled::FLAGS_TEXT_LEN];
        let text = throttled::format_flags(f, &mut out).unwrap();
        assert_eq!(throttled::parse_flags(text.as_bytes()), Ok(f));
    }
    let _ = cpufreq::parse_khz(input);
    let _ = cpufreq::parse_cpu_count(input);
}

#[test]
fn mutated_fixtures_and_random_bytes_never_panic() {
    let seeds: Vec<Vec<u8>> = [
        "01-meminfo-no-memavailable/proc/meminfo",
        "02-lxcfs-swapfree-underflow/proc/meminfo",
        "25-hugepages-reserved-pool/proc/meminfo",
        "16-proc-stat-openvz-short-lines/t0/proc/stat",
        "15-proc-stat-cpu-hotplug/a-4core-cpu2-goes-offline/t1/proc/stat",
        "18-loadavg-high-while-cpu-idle/t1/proc/loadavg",
        "19-psi-unavailable/c-psi-enabled/proc/pressure/memory",
        "20-vmstat-no-oom-kill/b-rpi3-kernel-6.1-with-oom_kill/proc/vmstat",
        "11-proc-swaps-layouts-and-escapes/b-escaped-space-and-long-path/proc/swaps",
        "09-zram-mm-stat-field-counts/b-rpi3-kernel-5.4-8fields/sys/block/zram0/mm_stat",
        "09-zram-mm-stat-field-counts/b-rpi3-kernel-5.4-8fields/sys/block/zram0/comp_algorithm",
        "09-zram-mm-stat-field-counts/f-idle-one-page/sys/block/zram0/mm_stat",
        "53-proc-cgroups-no-memory-line-6.12/proc/cgroups",
        "54-kmsg-oom-kill-records/records",
        "12-pid-stat-comm-spaces-parens/proc/6666/stat",
        "12-pid-stat-comm-spaces-parens/proc/4242/status",
        "04-cgroupv1-unlimited-sentinels/proc/self/mountinfo",
        "07-cgroup-hybrid-memory-on-v1-line/a-ubuntu2004-hybrid/proc/self/cgroup",
        "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/cpu.max",
        "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/cpuset.cpus.effective",
        "06-cgroupv2-container-cpu-max-unlimited/sys/fs/cgroup/memory.events",
        "46-cgroup-page-cache-is-available/a-v1-docker-memsw-equal/sys/fs/cgroup/memory/memory.stat",
        "46-cgroup-page-cache-is-available/b-v2-docker-swap-max-0/sys/fs/cgroup/memory.stat",
        "23-build-log-hostile-bytes/build.log",
        "31-diskstats-pre-4.18-layouts/proc/diskstats",
        "31-diskstats-pre-4.18-layouts/hosts/kernel-pre-2.6.25/proc/diskstats",
        "31-diskstats-pre-4.18-layouts/hosts/kernel-pre-2.6.25/sys/block/sda/stat",
        "32-diskstats-18-fields-nvme-hidden-paths/proc/diskstats",
        "33-diskstats-20-fields-partition-double-count/proc/diskstats",
        "35-mount-to-diskstats-pi-root/sys/dev/block/179:2",
        "35-mount-to-diskstats-pi-root/sys/devices/platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:59b4/block/mmcblk0/stat",
        "35-mount-to-diskstats-pi-root/hosts/btrfs-on-lvm/proc/self/mountinfo",
        "36-rpi-get-throttled-50005/sys/devices/platform/soc/soc:firmware/get_throttled",
        "36-rpi-get-throttled-50005/cmd/vcgencmd.txt",
        "38-rpi4-hwmon-rpi_volt-cpu_thermal/sys/class/hwmon/hwmon0/temp1_input",
        "40-riscv-starfive-thermal/hosts/beaglev-vendor-sfc_temp_sensor/sys/bus/platform/drivers/sfc_temp_sensor/124a0000.tmpsensor/temp1_input",
        "43-cpufreq-absent-or-above-max/hosts/dell-fedora-6.6/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
    ]
    .iter()
    .map(|p| fixture(p))
    .chain(std::iter::once(
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/toolchain-cargo-build.csv"
        ))
        .unwrap(),
    ))
    .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for seed in &seeds {
        run_all(seed);
        for _ in 0..300 {
            run_all(&mutate(&mut rng, seed));
        }
    }
    for _ in 0..2000 {
        let n = rng.below(256);
        let v: Vec<u8> = (0..n)
            .map(|_| INTERESTING[rng.below(INTERESTING.len())])
            .collect();
        run_all(&v);
    }
}

/// The pool's peak file (`govern::jobserver::peakfile`): its own text mutated, and
/// random bytes, give a peak in range or an error, never a panic.
#[test]
fn mutated_peak_files_never_panic() {
    use headroom::govern::jobserver::peakfile::{PEAK_MAX_MB, parse, render};
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let seeds = [
        render(350).as_bytes().to_vec(),
        b"headroom-peak 1\nat 17\npeak_mb 90\ncomm cc1\n".to_vec(),
    ];
    for seed in &seeds {
        for _ in 0..3000 {
            if let Ok(mb) = parse(&mutate(&mut rng, seed)) {
                assert!((1..=PEAK_MAX_MB).contains(&mb));
            }
        }
    }
    for _ in 0..2000 {
        let n = rng.below(96);
        let v: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        assert!(parse(&v).is_err() || v.starts_with(b"headroom-peak 1"));
    }
}

/// The pool's per-job peak file (`govern::jobserver::job_peaks`): its own
/// text mutated, and random bytes, give a table whose every peak is in
/// range and which renders back to the same jobs, or an error; never a
/// panic.
#[test]
fn mutated_job_peak_files_never_panic() {
    use headroom::govern::jobserver::job_peaks::{JOB_PEAKS_BUF, JobPeaks, parse, render};
    use headroom::govern::jobserver::peakfile::PEAK_MAX_MB;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let seeds = [
        &b"headroom-job-peaks 1\nothers_mb 0\n360 sqlite-1.o\n59 light-07.o\n"[..],
        b"headroom-job-peaks 1\nlater 3\nothers_mb 41\n4096 aten/Activation.cpp.o\n35O x\n7 torn",
    ];
    let (mut t, mut back) = (Box::new(JobPeaks::new()), Box::new(JobPeaks::new()));
    let mut buf = vec![0u8; JOB_PEAKS_BUF];
    for seed in seeds {
        for _ in 0..3000 {
            if parse(&mutate(&mut rng, seed), &mut t).is_err() {
                continue;
            }
            for i in 0..t.len() {
                let e = t.entry(i);
                assert!((1..=PEAK_MAX_MB).contains(&u64::from(e.peak_mb)));
                assert!(!e.key.is_empty() && !e.key.contains(&b'\n'));
            }
            parse(render(&t, &mut buf).unwrap(), &mut back).unwrap();
            assert_eq!((back.len(), back.others_mb()), (t.len(), t.others_mb()));
        }
    }
}
