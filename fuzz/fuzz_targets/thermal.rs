//! Fuzz target: thermal, throttled and cpufreq. Never panics, whatever the
//! bytes; flags text that parses formats back to itself.
#![no_main]

use headroom::kernel::{cpufreq, thermal, throttled};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for parse in [thermal::parse_temp, thermal::parse_zone_temp] {
        if let Ok(t) = parse(data) {
            assert!(t.tenths().abs() <= 1500);
        }
    }
    let _ = thermal::is_cpu_zone(data);
    let _ = thermal::is_cpu_hwmon(data);
    let _ = throttled::parse_throttled(data).map(|w| (w.live(), w.sticky()));
    let _ = throttled::parse_alarm(data);
    if let Ok(f) = throttled::parse_flags(data) {
        let mut out = [0u8; throttled::FLAGS_TEXT_LEN];
        let text = throttled::format_flags(f, &mut out).unwrap();
        assert_eq!(throttled::parse_flags(text.as_bytes()), Ok(f));
    }
    let _ = cpufreq::parse_khz(data);
    let _ = cpufreq::parse_cpu_count(data);
});
