//! Fuzz target: diskstats and the build disk's pure parsers. Never panics,
//! whatever the bytes.
#![no_main]

use headroom::kernel::arch::{self, LongWidth};
use headroom::kernel::{blockdev, diskstats};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let zero = diskstats::DiskCounters::default();
    if let Ok(c) = diskstats::parse_stat(data) {
        for width in [LongWidth::Bits32, LongWidth::Bits64] {
            let _ = diskstats::delta(&zero, &c, 1000, width).map(|d| d.util_permille());
            let _ = diskstats::delta(&c, &zero, 1, width).map(|d| d.util_permille());
            let _ = diskstats::delta(&c, &c, u64::MAX, width).map(|d| d.util_permille());
        }
    }
    for line in data.split(|&c| c == b'\n') {
        let _ = diskstats::parse_line(line);
    }
    let _ = diskstats::find(data, b"mmcblk0");
    let _ = diskstats::find_dev(data, 179, 0);
    let _ = arch::long_width(data);
    let _ = blockdev::parse_dev(data);
    let _ = blockdev::parse_source(data);
    let mut out = blockdev::SysPath::new();
    let _ = blockdev::resolve_link("sys/dev/block/179:2", data, &mut out);
});
