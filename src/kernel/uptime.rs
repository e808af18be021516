//! `/proc/uptime`: seconds since boot, and seconds the CPUs idled, each
//! printed `%lu.%02lu` (`350735.47 234388.90`).
//!
//! headroom's rates are taken over its own monotonic clock; a board tree
//! with a second capture (`later/`, see [`crate::kernel::root`]) has no
//! clock of its own but this file in each capture, whose difference is
//! the time between them.
//!
//! # References
//! proc(5) `/proc/uptime`; `fs/proc/uptime.c` (`uptime_proc_show`).

use crate::kernel::loadavg::parse_centi;
use crate::kernel::parse::fields;

/// Path of the file, relative to the root.
pub const PATH: &str = "proc/uptime";

/// Buffer for the file: two `%lu.%02lu` values (at most 23 bytes each), a
/// space and a newline.
pub const BUF_LEN: usize = 64;

/// Seconds since boot in hundredths (the first value); `None` when the
/// first field is no `%lu.%02lu` decimal.
///
/// ```
/// use headroom::kernel::uptime::parse_centi_s;
/// assert_eq!(parse_centi_s(b"350735.47 234388.90\n"), Some(35_073_547));
/// assert_eq!(parse_centi_s(b""), None);
/// ```
pub fn parse_centi_s(b: &[u8]) -> Option<u64> {
    parse_centi(fields(b).next()?)
}
