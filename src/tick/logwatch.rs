//! When the build log gives nothing: one warning when `--stage-log FILE`
//! does not exist (at the second row, or at the end of a recording of one
//! row), and one when the log has given no context for a minute
//! of rows. A user who typed the wrong name, or whose build writes its
//! output elsewhere, would otherwise get `?,""` on every row and no word
//! why.
//!
//! Pure: [`LogWatch::row`] is fed what each row's read of the log gave and
//! says which warning is due; the sampler prints it.

/// Seconds of rows (by their epochs) without a context after which a log
/// that is there is said to give none.
pub const QUIET_S: u64 = 60;

/// What reading the build log gave at one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogRead {
    /// `--stage-log FILE` does not exist (ENOENT).
    Missing,
    /// The log was read; `context`: it gave the row a context.
    Read {
        /// The row got a context from it.
        context: bool,
    },
    /// Nothing to read this time that is worth a word here: no `*.log` in
    /// `--stage-log-dir`, or an error that has its own warning.
    Unread,
}

/// A warning [`LogWatch::row`] finds due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogWarning {
    /// `--stage-log FILE` is missing at a row after the first, or at the
    /// last row of a recording that never warned.
    Missing,
    /// The log has given no context for [`QUIET_S`] seconds of rows.
    Quiet,
}

impl LogWarning {
    /// The warning's text, to follow the option and path.
    pub fn text(self) -> &'static str {
        match self {
            LogWarning::Missing => {
                "does not exist (yet); stage and context stay empty until it does"
            }
            LogWarning::Quiet => {
                "no context for a minute: none of its last 40 lines is a progress line or a compiler command"
            }
        }
    }
}

/// The state behind the two warnings: each is given at most once per
/// recording.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogWatch {
    /// Rows seen so far.
    rows: u64,
    missing_warned: bool,
    /// The file was missing at the latest row.
    missing_now: bool,
    /// Epoch of the first row of the current run of rows whose read log
    /// gave no context.
    quiet_since: Option<u64>,
    quiet_warned: bool,
}

impl LogWatch {
    /// No row seen yet.
    pub const fn new() -> LogWatch {
        LogWatch {
            rows: 0,
            missing_warned: false,
            missing_now: false,
            quiet_since: None,
            quiet_warned: false,
        }
    }

    /// Takes what the log gave at the row sampled at `epoch` (Unix
    /// seconds) and returns the warning now due, if any:
    /// - [`LogWarning::Missing`] at the first row after the first at which
    ///   the file is missing (the first row is taken as CMD starts, before
    ///   a `| tee build.log` in it has made the file);
    /// - [`LogWarning::Quiet`] at the first row [`QUIET_S`] seconds or more
    ///   after the first of an unbroken run of rows at which the log was
    ///   read and gave no context. A missing or unread log breaks the run.
    ///
    /// ```
    /// use headroom::tick::logwatch::{LogRead, LogWarning, LogWatch};
    /// let mut w = LogWatch::new();
    /// assert_eq!(w.row(100, LogRead::Missing), None);
    /// assert_eq!(w.row(101, LogRead::Missing), Some(LogWarning::Missing));
    /// assert_eq!(w.row(102, LogRead::Missing), None);
    /// ```
    pub fn row(&mut self, epoch: u64, read: LogRead) -> Option<LogWarning> {
        let first = self.rows == 0;
        self.rows = self.rows.saturating_add(1);
        self.missing_now = read == LogRead::Missing;
        match read {
            LogRead::Missing => {
                self.quiet_since = None;
                let due = !first && !self.missing_warned;
                self.missing_warned |= due;
                due.then_some(LogWarning::Missing)
            }
            LogRead::Read { context: false } => {
                let since = *self.quiet_since.get_or_insert(epoch);
                let due = !self.quiet_warned && epoch.saturating_sub(since) >= QUIET_S;
                self.quiet_warned |= due;
                due.then_some(LogWarning::Quiet)
            }
            LogRead::Read { context: true } | LogRead::Unread => {
                self.quiet_since = None;
                None
            }
        }
    }

    /// The recording has ended: [`LogWarning::Missing`] when the file was
    /// missing at its last row and the warning was never given (a
    /// recording of one row, `record --count 1`, has no second row to give
    /// it at), so a short run warns as a long one does.
    ///
    /// ```
    /// use headroom::tick::logwatch::{LogRead, LogWarning, LogWatch};
    /// let mut w = LogWatch::new();
    /// assert_eq!(w.row(100, LogRead::Missing), None);
    /// assert_eq!(w.end(), Some(LogWarning::Missing));
    /// assert_eq!(w.end(), None);
    /// ```
    pub fn end(&mut self) -> Option<LogWarning> {
        let due = self.missing_now && !self.missing_warned;
        self.missing_warned |= due;
        due.then_some(LogWarning::Missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUIET: LogRead = LogRead::Read { context: false };
    const SAID: LogRead = LogRead::Read { context: true };

    #[test]
    fn a_missing_log_warns_once_and_not_on_the_first_row() {
        let mut w = LogWatch::new();
        // Made by CMD's `| tee` after the first row: no word.
        assert_eq!(w.row(0, LogRead::Missing), None);
        assert_eq!(w.row(1, SAID), None);
        // Gone later (a rotation): one warning, then never again.
        assert_eq!(w.row(2, LogRead::Missing), Some(LogWarning::Missing));
        for t in 3..200 {
            assert_eq!(w.row(t, LogRead::Missing), None);
        }
        // Only missing at the first row: never a warning.
        let mut w = LogWatch::new();
        assert_eq!(w.row(0, LogRead::Missing), None);
        assert_eq!(w.row(15, SAID), None);
    }

    #[test]
    fn a_log_still_missing_at_the_end_warns_once_there() {
        // `record --count 1`: the only row is also the last.
        let mut w = LogWatch::new();
        assert_eq!(w.row(0, LogRead::Missing), None);
        assert_eq!(w.end(), Some(LogWarning::Missing));
        // Warned at the second row already: not again at the end.
        let mut w = LogWatch::new();
        assert_eq!(w.row(0, LogRead::Missing), None);
        assert_eq!(w.row(1, LogRead::Missing), Some(LogWarning::Missing));
        assert_eq!(w.end(), None);
        // Made by CMD after the first row: nothing to say at the end.
        let mut w = LogWatch::new();
        assert_eq!(w.row(0, LogRead::Missing), None);
        assert_eq!(w.row(1, SAID), None);
        assert_eq!(w.end(), None);
        // No row at all: nothing was looked for.
        assert_eq!(LogWatch::new().end(), None);
    }

    #[test]
    fn a_minute_of_rows_without_context_warns_once() {
        let mut w = LogWatch::new();
        assert_eq!(w.row(1000, QUIET), None);
        assert_eq!(w.row(1030, QUIET), None);
        assert_eq!(w.row(1059, QUIET), None);
        assert_eq!(w.row(1060, QUIET), Some(LogWarning::Quiet));
        assert_eq!(w.row(1200, QUIET), None);
        assert_eq!(w.row(1300, SAID), None);
        assert_eq!(w.row(1400, QUIET), None);
        // A context, a missing or an unread log starts the minute again.
        let mut w = LogWatch::new();
        assert_eq!(w.row(0, QUIET), None);
        assert_eq!(w.row(50, SAID), None);
        assert_eq!(w.row(70, QUIET), None);
        assert_eq!(w.row(100, LogRead::Unread), None);
        assert_eq!(w.row(110, QUIET), None);
        assert_eq!(w.row(169, QUIET), None);
        assert_eq!(w.row(170, QUIET), Some(LogWarning::Quiet));
        // A clock stepped back never underflows.
        let mut w = LogWatch::new();
        assert_eq!(w.row(500, QUIET), None);
        assert_eq!(w.row(10, QUIET), None);
    }
}
