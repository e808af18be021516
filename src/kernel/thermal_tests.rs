//! Tests of `thermal.rs`: the fixture cases 38–40 and discovery over
//! trees with real symlinks.

extern crate std;
use super::*;
use rustix::io::Errno;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

fn root(case: &str) -> Root {
    Root::open(&std::format!("{FIX}{case}")).unwrap()
}

fn discover(r: &Root, keep: bool) -> KeptSensors {
    let mut scratch = [MaybeUninit::uninit(); 1024];
    KeptSensors::discover(r, keep, &mut scratch, &mut [0u8; BUF_LEN])
}

fn fixture(path: &str) -> std::vec::Vec<u8> {
    std::fs::read(std::format!("{FIX}{path}")).unwrap()
}

/// `ERRORS.tsv` of a host: (path, the errno its read fails with).
fn errors(host: &str) -> std::vec::Vec<(std::string::String, Errno)> {
    let text = std::string::String::from_utf8(fixture(&std::format!("{host}/ERRORS.tsv"))).unwrap();
    text.lines()
        .map(|l| {
            let (path, name) = l.split_once('\t').unwrap();
            let errno = match name {
                "EINVAL" => Errno::INVAL,
                "ENODATA" => Errno::NODATA,
                "EAGAIN" => Errno::AGAIN,
                "ETIMEDOUT" => Errno::TIMEDOUT,
                other => panic!("errno {other}"),
            };
            (path.into(), errno)
        })
        .collect()
}

fn tree(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(std::format!(
        "headroom-thermal-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &std::path::Path, rel: &str, text: &[u8]) {
    let f = d.join(rel);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

fn link(d: &std::path::Path, rel: &str, target: &str) {
    let f = d.join(rel);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    symlink(target, f).unwrap();
}

fn tenths(t: &[u8]) -> i32 {
    parse_temp(t).unwrap().tenths()
}

#[test]
fn fixture_38_rpi4_hwmon_rpi_volt_cpu_thermal() {
    let r = root("38-rpi4-hwmon-rpi_volt-cpu_thermal");
    let mut s = discover(&r, false);
    let kept: std::vec::Vec<_> = s.sensors().cloned().collect();
    assert_eq!(
        kept.len(),
        1,
        "the cpu_thermal hwmon is the zone's twin: {kept:?}"
    );
    assert_eq!(
        (kept[0].kind, kept[0].name.as_str()),
        (Kind::Zone, "cpu-thermal")
    );
    assert_eq!(
        kept[0].path.as_str(),
        "sys/class/thermal/thermal_zone0/temp"
    );
    let t = s.read(&r, &mut [0u8; BUF_LEN]).unwrap();
    assert_eq!(
        (t.milli_c, t.tenths(), t.non_standard),
        (54_500, 545, false)
    );
    let d = "38-rpi4-hwmon-rpi_volt-cpu_thermal/sys/class/hwmon/hwmon0/";
    assert_eq!(tenths(&fixture(&std::format!("{d}temp1_input"))), 545);
    assert_eq!(tenths(&fixture(&std::format!("{d}temp1_crit"))), 1100);
    assert!(is_zone_twin(b"cpu_thermal", b"cpu-thermal"));
    assert!(!is_cpu_hwmon(b"rpi_volt"));
}

#[test]
fn fixture_39_rpi_thermal_zone_einval_bogus_trips() {
    let host = "39-rpi-thermal-zone-einval-bogus-trips/hosts/";
    // Pi 5: trip points (fan steps and the critical trip), not throttling.
    let trips = std::format!("{host}pi5-dietpi/sys/devices/virtual/thermal/thermal_zone0/");
    let got: std::vec::Vec<i32> = (0..5)
        .map(|i| tenths(&fixture(&std::format!("{trips}trip_point_{i}_temp"))))
        .collect();
    assert_eq!(got, [1100, 500, 600, 675, 750]);
    // Pi 3B+ on 5.10.5-v8+: the zone's read fails with EINVAL: no sample,
    // never 0 °C; and so for the other errnos of the case.
    let errs = errors(&std::format!("{host}pi3bplus-5.10.5-arm64"));
    assert_eq!(errs[0].0, "sys/class/thermal/thermal_zone0/temp");
    assert_eq!(errs[0].1, Errno::INVAL);
    for e in [errs[0].1, Errno::NODATA, Errno::AGAIN, Errno::TIMEDOUT] {
        let failed = sample(Err(ReadError::Read(e)));
        assert_eq!(failed, Err(SampleError::Read(ReadError::Read(e))));
        assert_eq!(hottest([failed]), None);
    }
    // 2013 firmware: the huge negative value is dropped; 85 °C is in range.
    let bogus = fixture(&std::format!(
        "{host}pi-2013-bogus/samples/thermal_zone0_temp.txt"
    ));
    let values: std::vec::Vec<_> = bogus
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .map(parse_temp)
        .collect();
    assert_eq!(
        values,
        [
            Err(TempError::OutOfRange {
                milli_c: -650_788_984
            }),
            Ok(Temp {
                milli_c: 85_000,
                non_standard: false
            }),
        ]
    );
    // Pi 1/2 (2015): 35.78 °C; its tree has no `type`, so no zone is
    // taken by number.
    let t = parse_temp(&fixture(&std::format!(
        "{host}pi1-pi2-2015/sys/class/thermal/thermal_zone0/temp"
    )))
    .unwrap();
    assert_eq!((t.milli_c, t.tenths()), (35_780, 358));
    assert!(discover(&root(&std::format!("{host}pi1-pi2-2015")), false).is_empty());
}

/// The Pi 5 tree of case 39 with its symlinks real (the fixture stores
/// them as text): the class entries are links into
/// `devices/virtual/thermal`, and the hwmon twin lives inside the zone.
/// `type`, `name` and the temperatures are not in the source: made up.
#[test]
fn fixture_39_pi5_symlinked_tree_reads_the_zone_once() {
    let d = tree("pi5");
    let zone = "sys/devices/virtual/thermal/thermal_zone0";
    write(&d, &std::format!("{zone}/type"), b"cpu-thermal\n");
    write(&d, &std::format!("{zone}/temp"), b"61250\n");
    write(&d, &std::format!("{zone}/trip_point_0_temp"), b"110000\n");
    write(&d, &std::format!("{zone}/hwmon0/name"), b"cpu_thermal\n");
    write(&d, &std::format!("{zone}/hwmon0/temp1_input"), b"61250\n");
    link(
        &d,
        &std::format!("{zone}/hwmon0/device"),
        "../../thermal_zone0",
    );
    link(
        &d,
        "sys/class/thermal/thermal_zone0",
        "../../devices/virtual/thermal/thermal_zone0",
    );
    link(
        &d,
        "sys/class/hwmon/hwmon0",
        "../../devices/virtual/thermal/thermal_zone0/hwmon0",
    );
    write(&d, "sys/class/thermal/cooling_device0/type", b"pwm-fan\n");
    let r = Root::open(d.to_str().unwrap()).unwrap();
    let mut s = discover(&r, true);
    let kept: std::vec::Vec<_> = s.sensors().map(|s| s.kind).collect();
    assert_eq!(kept, [Kind::Zone]);
    assert_eq!(s.read(&r, &mut [0u8; BUF_LEN]).map(Temp::tenths), Some(613));
    assert_eq!(s.open(), 1, "one descriptor, not two for one sensor");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn fixture_40_riscv_starfive_thermal() {
    let host = "40-riscv-starfive-thermal/hosts/";
    // BeagleV, work-in-progress DT: the zone fails with EINVAL (ERRORS.tsv),
    // the hwmon it is built on reads 33.12 °C: the fallback.
    let wip = std::format!("{host}beaglev-jh7100-mainline-wip");
    let errs = errors(&wip);
    assert_eq!(
        errs,
        [(
            "sys/devices/virtual/thermal/thermal_zone0/temp".into(),
            Errno::INVAL
        )]
    );
    let hwmon = fixture(&std::format!(
        "{wip}/sys/devices/platform/soc/124a0000.thermal-sensor/hwmon/hwmon0/temp1_input"
    ));
    let t = hottest([sample(Err(ReadError::Read(errs[0].1))), sample(Ok(&hwmon))]).unwrap();
    assert_eq!((t.milli_c, t.tenths()), (33_120, 331));
    // Vendor driver: decimal degrees, flagged, never 0.04 °C.
    let r = root(&std::format!("{host}beaglev-vendor-sfc_temp_sensor"));
    let mut s = discover(&r, false);
    let kept: std::vec::Vec<_> = s.sensors().cloned().collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].kind, kept[0].name.as_str()),
        (Kind::Vendor, "sfc_temp_sensor")
    );
    let t = s.read(&r, &mut [0u8; BUF_LEN]).unwrap();
    assert_eq!((t.milli_c, t.tenths(), t.non_standard), (40_840, 408, true));
    // VisionFive 2: ETIMEDOUT (-110) now and then drops that sample only.
    let ticks = [
        sample(Ok(b"45000\n")),
        sample(Err(ReadError::Read(Errno::TIMEDOUT))),
        sample(Ok(b"45500\n")),
    ];
    assert_eq!(
        ticks.map(|r| r.ok().map(Temp::tenths)),
        [Some(450), None, Some(455)]
    );
    // The WIP tree has no class links nor names: nothing taken by path.
    assert!(discover(&root(&wip), false).is_empty());
    assert!(is_cpu_hwmon(b"sfctemp") && is_cpu_zone(b"cpu-thermal"));
}

/// BeagleV's layout made whole: zone `cpu-thermal` whose read fails (its
/// `temp` is a directory here: EISDIR), hwmon `sfctemp` that works. Both
/// are kept and the hwmon's value is the reading.
#[test]
fn fixture_40_beaglev_zone_fails_hwmon_works() {
    let d = tree("beaglev");
    let hw = "sys/devices/platform/soc/124a0000.thermal-sensor/hwmon/hwmon0";
    write(&d, &std::format!("{hw}/name"), b"sfctemp\n");
    let value = fixture(&std::format!(
        "40-riscv-starfive-thermal/hosts/beaglev-jh7100-mainline-wip/{hw}/temp1_input"
    ));
    write(&d, &std::format!("{hw}/temp1_input"), &value);
    let zone = "sys/devices/virtual/thermal/thermal_zone0";
    write(&d, &std::format!("{zone}/type"), b"cpu-thermal\n");
    std::fs::create_dir_all(d.join(std::format!("{zone}/temp"))).unwrap();
    link(
        &d,
        "sys/class/thermal/thermal_zone0",
        &std::format!("../../../{zone}"),
    );
    link(&d, "sys/class/hwmon/hwmon0", &std::format!("../../../{hw}"));
    let r = Root::open(d.to_str().unwrap()).unwrap();
    let mut s = discover(&r, false);
    let kinds: std::vec::Vec<_> = s.sensors().map(|s| s.kind).collect();
    assert_eq!(kinds, [Kind::Zone, Kind::Hwmon]);
    assert_eq!(s.read(&r, &mut [0u8; BUF_LEN]).map(Temp::tenths), Some(331));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Chosen by type or name, never by number: `acpitz` and the GPU are not
/// the CPU; at most two kept, lowest-numbered first; the hottest wins;
/// a sensor out of range gives nothing (not 0) after its second read.
#[test]
fn chosen_by_name_bounded_and_hottest() {
    let d = tree("names");
    let zones = [
        ("acpitz", "99000"),
        ("gpu-thermal", "98000"),
        ("cpu0-thermal", "50000"),
        ("cpu1-thermal", "52500"),
        ("cpu2-thermal", "90000"),
    ];
    for (i, (kind, temp)) in zones.iter().enumerate() {
        write(
            &d,
            &std::format!("sys/class/thermal/thermal_zone{i}/type"),
            kind.as_bytes(),
        );
        write(
            &d,
            &std::format!("sys/class/thermal/thermal_zone{i}/temp"),
            temp.as_bytes(),
        );
    }
    write(&d, "sys/class/hwmon/hwmon3/name", b"k10temp\n");
    write(&d, "sys/class/hwmon/hwmon3/temp1_input", b"70000\n");
    let r = Root::open(d.to_str().unwrap()).unwrap();
    let mut s = discover(&r, true);
    let names: std::vec::Vec<_> = s
        .sensors()
        .map(|s| std::string::String::from(s.name.as_str()))
        .collect();
    assert_eq!(names, ["cpu0-thermal", "cpu1-thermal"]);
    let mut buf = [0u8; BUF_LEN];
    assert_eq!(s.read(&r, &mut buf).map(Temp::tenths), Some(525));
    assert_eq!(s.open(), KEPT_SENSORS);
    write(&d, "sys/class/thermal/thermal_zone3/temp", b"-650788984\n");
    assert_eq!(s.read(&r, &mut buf).map(Temp::tenths), Some(500));
    write(&d, "sys/class/thermal/thermal_zone2/temp", b"-273000\n");
    assert_eq!(s.read(&r, &mut buf), None);
    // Without zones, the AMD hwmon.
    let d2 = tree("amd");
    write(&d2, "sys/class/thermal/thermal_zone0/type", b"acpitz\n");
    write(&d2, "sys/class/thermal/thermal_zone0/temp", b"27800\n");
    write(&d2, "sys/class/hwmon/hwmon1/name", b"k10temp\n");
    write(&d2, "sys/class/hwmon/hwmon1/temp1_input", b"70125\n");
    let r2 = Root::open(d2.to_str().unwrap()).unwrap();
    assert_eq!(
        discover(&r2, false).read(&r2, &mut buf).map(Temp::tenths),
        Some(701)
    );
    std::fs::remove_dir_all(&d).unwrap();
    std::fs::remove_dir_all(&d2).unwrap();
}

/// Only a value out of range is read a second time, and the second
/// read's result stands.
#[test]
fn an_out_of_range_value_is_read_once_more() {
    let sane = Ok(Temp {
        milli_c: 48_000,
        non_standard: false,
    });
    let bogus = sample(Ok(b"-650788984\n"));
    assert_eq!(retry_out_of_range(bogus, || sane), sane);
    assert_eq!(retry_out_of_range(bogus, || bogus), bogus);
    let failed = sample(Err(ReadError::Read(Errno::INVAL)));
    assert_eq!(retry_out_of_range(failed, || unreachable!()), failed);
    assert_eq!(retry_out_of_range(sane, || unreachable!()), sane);
}

#[test]
fn names() {
    for cpu in [
        &b"cpu-thermal"[..],
        b"cpu_thermal",
        b"cpu0-thermal",
        b"cpu7_thermal",
        b"soc-thermal",
        b"soc_thermal",
        b"bcm2835_thermal",
        b"x86_pkg_temp",
    ] {
        assert!(is_cpu_zone(cpu), "{cpu:?}");
    }
    for other in [
        &b"acpitz"[..],
        b"gpu-thermal",
        b"cpu-thermal2",
        b"cpux-thermal",
        b"thermal",
        b"-thermal",
        b"iwlwifi_1",
        b"pch_cannonlake",
        b"",
    ] {
        assert!(!is_cpu_zone(other), "{other:?}");
    }
    assert!(is_cpu_hwmon(b"coretemp") && is_cpu_hwmon(b"k10temp") && is_cpu_hwmon(b"cpu_thermal"));
    assert!(!is_cpu_hwmon(b"nvme") && !is_cpu_hwmon(b"acpitz") && !is_cpu_hwmon(b"rpi_volt"));
    assert!(is_zone_twin(b"cpu0_thermal", b"cpu0-thermal"));
    assert!(!is_zone_twin(b"cpu_thermal", b"cpu0-thermal"));
    assert!(!is_zone_twin(b"cpu-thermal", b"cpu_thermal"));
}

#[test]
fn temperature_text() {
    assert_eq!(tenths(b"54500\n"), 545);
    assert_eq!(tenths(b"54550"), 546, "half away from zero");
    assert_eq!(tenths(b"54549"), 545);
    assert_eq!(tenths(b"-1250"), -13);
    assert_eq!(tenths(b"-1249"), -12);
    assert_eq!(tenths(b"0"), 0);
    assert_eq!(tenths(b"40.84"), 408);
    assert_eq!(tenths(b"40.85"), 409);
    assert_eq!(tenths(b"40.8499"), 408, "digits past the third cut");
    assert_eq!(tenths(b"-5.5"), -55);
    assert_eq!(tenths(b"-40000"), -400);
    assert_eq!(tenths(b"150000"), 1500);
    assert_eq!(
        parse_temp(b"150001"),
        Err(TempError::OutOfRange { milli_c: 150_001 })
    );
    assert_eq!(
        parse_temp(b"-40001"),
        Err(TempError::OutOfRange { milli_c: -40_001 })
    );
    assert_eq!(
        parse_temp(b"18446744073709551615"),
        Err(TempError::OutOfRange { milli_c: i64::MAX })
    );
    assert!(parse_temp(b"150.5").is_err());
    for bad in [
        &b""[..],
        b"-",
        b"+5",
        b"1e3",
        b"40.",
        b".5",
        b"4.0.1",
        b"40,84",
        b"18446744073709551616",
        b"99999999999999999.9",
        b"\xff",
    ] {
        assert_eq!(parse_temp(bad), Err(TempError::Malformed), "{bad:?}");
    }
}

/// The live root (this VM: no thermal zone, no hwmon, no cpufreq, no Pi
/// firmware): discovery of all three readers returns without error and
/// keeps within its bounds; found nothing reads as nothing, never 0.
#[test]
fn the_live_root_discovers_within_bounds() {
    use crate::kernel::{cpufreq::KeptPolicies, throttled::KeptPower};
    let r = Root::open("/").unwrap();
    let mut scratch = [MaybeUninit::uninit(); 4096];
    let mut buf = [0u8; 4096];
    let mut t = KeptSensors::discover(&r, true, &mut scratch, &mut buf);
    let mut f = KeptPolicies::discover(&r, true, &mut scratch, &mut buf);
    let mut p = KeptPower::discover(&r, true, &mut scratch, &mut buf);
    let (temp, pct, power) = (
        t.read(&r, &mut buf),
        f.read(&r, 0, &mut buf),
        p.read(&r, &mut buf),
    );
    std::eprintln!(
        "live: sensors {:?} -> {temp:?}; policies {} -> {pct:?}; power {:?} -> {power:?}",
        t.sensors().collect::<std::vec::Vec<_>>(),
        f.len(),
        p.source()
    );
    assert!(!t.is_empty() || temp.is_none());
    assert!(!f.is_empty() || pct.is_none());
    assert!(t.open() <= KEPT_SENSORS && f.open() <= crate::kernel::cpufreq::KEPT_POLICIES);
    assert!(t.open() + f.open() + p.open() <= 7);
}
