//! The governor's notes (`govern::jobserver::notes`) worded on stderr:
//! `--explain`'s lines and the pool's warnings. Whether a note is told is
//! the library's rule; this is only its text.

use std::io::Write;

use headroom::govern::jobserver::budget_file;
use headroom::govern::jobserver::estimate::MARGIN_PCT;
use headroom::govern::jobserver::notes::{Note, SlotsWhy, Tell};
use headroom::govern::jobserver::pause_rule::STALL_MS;
use headroom::govern::jobserver::peakfile::PeakIssue;
use headroom::govern::jobserver::pool_dir::Issue;
use headroom::report::jobserver_block::PeakReport;

use super::messages::{StderrWarn, errtext};
use super::pool::{peak_what, what};

impl Tell for StderrWarn {
    fn tell(&mut self, note: &Note<'_>) {
        // One write(2) a line: builds sharing a terminal or a pipe (lanes
        // of one pool) never cut each other's lines.
        let mut line = text(note);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// ` KEY` for a job's key (`followed::jobkey`), shown as text; nothing
/// when it has none.
fn named(key: &[u8]) -> String {
    if key.is_empty() {
        return String::new();
    }
    format!(" {}", String::from_utf8_lossy(key))
}

/// The line for `note`, without its newline.
fn text(note: &Note<'_>) -> String {
    match *note {
        Note::PeakMoved { was_mb, now } => {
            let moved = if was_mb == now.now_mb {
                format!("still {was_mb} MiB")
            } else {
                format!("{was_mb} MiB → {} MiB", now.now_mb)
            };
            format!(
                "headroom: jobserver: peak per job {moved} {}",
                basis_text(&now)
            )
        }
        Note::Slots { allowed, why } => format!(
            "headroom: jobserver: {allowed} job(s) at once ({})",
            slots_why(&why)
        ),
        Note::JobStarted { .. } | Note::Paused { .. } | Note::Continued { .. } => job_text(note),
        Note::ContinuedAll { jobs } => format!(
            "headroom: jobserver: the running jobs made no progress for {} s: continued the {jobs} paused job(s) (one may hold what they wait for); none is paused for {} s",
            STALL_MS / 1000,
            STALL_MS / 1000
        ),
        Note::PoolFile {
            dir,
            name,
            issue,
            continued,
        } => pool_file(dir, name, issue, continued),
        Note::PoolBudget { dir, now } => budget_text(dir, now),
        Note::Ceiling(n) => format!(
            "headroom: jobserver: memory stops at ~{} MiB although the host has {} MiB available: a limit above this container binds; taken as the budget (no more jobs until room returns, the newest paused)",
            n.ceiling_mb, n.host_avail_mb
        ),
        Note::LeaseUnwritable { dir, errno } => format!(
            "headroom: warning: --pool {dir}: cannot rewrite its lease: {}; the others count its last figures",
            errtext(errno)
        ),
        Note::Remembered { .. } | Note::RememberedJobs { .. } => remembered_text(note),
    }
}

/// The line for a change of a pool's budget (`budget_file`).
fn budget_text(dir: &str, now: Result<Option<u64>, PeakIssue>) -> String {
    let file = budget_file::BUDGET_NAME;
    match now {
        Ok(Some(mb)) => format!(
            "headroom: --pool {dir}: budget {mb} MiB ({dir}/{file}): the pool's builds share it, whatever else they see"
        ),
        Ok(None) => format!("headroom: --pool {dir}: its budget was removed"),
        Err(issue) => format!(
            "headroom: warning: --pool {dir}: {file} is not used: {}",
            peak_what(issue, "a budget")
        ),
    }
}

/// The line for a job's note: started, paused, continued.
fn job_text(note: &Note<'_>) -> String {
    match *note {
        Note::JobStarted {
            pid,
            key,
            expected_mb,
            remembered_mb,
        } => {
            let why = match remembered_mb {
                Some(mb) => format!("remembered {mb} MiB + {MARGIN_PCT} %"),
                None => "the build's peak per job".to_string(),
            };
            format!(
                "headroom: jobserver: job {pid}{} started, expected peak {expected_mb} MiB ({why})",
                named(key)
            )
        }
        Note::Paused {
            pid,
            key,
            expected_mb,
            rss_mb,
            room_mb,
        } => format!(
            "headroom: jobserver: paused job {pid}{} ({rss_mb} MiB, started last, expected peak {expected_mb} MiB): the running jobs may grow by more than the {room_mb} MiB left",
            named(key)
        ),
        Note::Continued {
            pid,
            key,
            expected_mb,
            held_ms,
            room_mb,
        } => format!(
            "headroom: jobserver: continued job {pid}{} after {}.{} s paused: the {room_mb} MiB left hold its growth (expected peak {expected_mb} MiB), or none runs",
            named(key),
            held_ms / 1000,
            held_ms % 1000 / 100
        ),
        _ => String::new(),
    }
}

/// The line for what the pool remembers at the end of a run.
fn remembered_text(note: &Note<'_>) -> String {
    match *note {
        Note::Remembered {
            dir,
            run_id,
            mb,
            written: Ok(()),
        } => format!(
            "headroom: jobserver: --pool {dir} remembers {mb} MiB, the largest peak of run {run_id}'s jobs, for its next run"
        ),
        Note::Remembered {
            dir,
            run_id,
            mb,
            written: Err(e),
        } => {
            let why = match e {
                rustix::io::Errno::INVAL => "the run id is not a safe file name".to_string(),
                e => errtext(e),
            };
            format!(
                "headroom: warning: --pool {dir}: cannot remember run {run_id}'s peak per job ({mb} MiB): {why}"
            )
        }
        Note::RememberedJobs {
            dir,
            run_id,
            jobs,
            written: Ok(()),
        } => format!(
            "headroom: jobserver: --pool {dir} remembers the peaks of run {run_id}'s {jobs} job(s), each by its key, for its next run"
        ),
        Note::RememberedJobs {
            dir,
            run_id,
            jobs,
            written: Err(e),
        } => {
            let why = match e {
                rustix::io::Errno::INVAL => "the run id is not a safe file name".to_string(),
                rustix::io::Errno::WOULDBLOCK => "its lock stayed taken".to_string(),
                e => errtext(e),
            };
            format!(
                "headroom: warning: --pool {dir}: cannot remember the peaks of run {run_id}'s {jobs} job(s): {why}"
            )
        }
        _ => String::new(),
    }
}

/// Why the slots are what they are, for `--explain`.
fn slots_why(why: &SlotsWhy<'_>) -> String {
    match *why {
        SlotsWhy::Pool {
            dir,
            room_mb,
            peak_mb,
            others,
            yielded,
        } => format!(
            "pool {dir}: room {room_mb} MiB for {peak_mb} MiB per job with {others} other build(s)' growth reserved{}",
            if yielded > 0 {
                format!("; {yielded} slot(s) left to builds running fewer")
            } else {
                String::new()
            }
        ),
        SlotsWhy::Memory {
            room_mb,
            peak_mb,
            usable_mb,
            running,
        } => format!(
            "memory: room {room_mb} MiB for {peak_mb} MiB per job (usable {usable_mb} MiB, {running} running)"
        ),
        SlotsWhy::Cap(cap) => format!("the cap, {cap}"),
        SlotsWhy::Handed { cap, paused } => {
            format!(
                "the cap, {cap} (the usable cores), and {paused} for the paused job(s): their cores are idle (a -j or --max-jobs is never exceeded)"
            )
        }
    }
}

/// A file pool `dir` did not count: a dead lease removed (with the jobs
/// it had paused continued), or another file ignored.
fn pool_file(dir: &str, name: &str, issue: &Issue, continued: u32) -> String {
    if let Issue::Dead(_) = issue {
        let continued = match continued {
            0 => String::new(),
            n => format!(", and the {n} job(s) it had paused continued"),
        };
        return format!(
            "headroom: --pool {dir}: {name} ({}); removed{continued}",
            what(issue)
        );
    }
    format!(
        "headroom: warning: --pool {dir}: {name}: {}; ignored",
        what(issue)
    )
}

/// Why the peak per job is what `p` says, as the report layer writes it.
pub fn basis_text(p: &PeakReport) -> String {
    let mut t: heapless::String<256> = heapless::String::new();
    let _ = p.write_basis(&mut t);
    t.as_str().to_string()
}
