//! The live status line: one line on a terminal's stderr, rewritten in
//! place each row; never written to a pipe or file.

use std::io::Write;

use rustix::fd::BorrowedFd;

/// The text of the live status line with its `\r\x1b[K` prefix: the
/// clock at `elapsed_s` seconds, then `figures` ([`figures`]).
fn line_at(elapsed_s: u64, figures: &str) -> heapless::String<256> {
    let mut line = heapless::String::<256>::new();
    let _ = ufmt::uwrite!(line, "\r\x1b[Kheadroom {}m", elapsed_s / 60);
    if elapsed_s % 60 < 10 {
        let _ = line.push('0');
    }
    let _ = ufmt::uwrite!(line, "{}s", elapsed_s % 60);
    let _ = line.push_str(figures);
    line
}

/// The line after its clock for `row`: the memory a build can use (the
/// smaller of MemAvailable and the tightest cgroup's available memory,
/// `cg` after it when the cgroup binds), swap used, the zram RAM saving
/// (stored / RAM used, the row's only zram figures), compilers, stage.
fn figures(row: &headroom::tick::row::Row) -> heapless::String<256> {
    let mut line = heapless::String::<256>::new();
    let _ = match row.ext.cg_mem_avail_mb.filter(|&cg| cg < row.mem_avail_mb) {
        Some(cg) => ufmt::uwrite!(line, "  avail {} MiB cg", cg),
        // /proc/meminfo unread: unknown, never 0.
        None if !row.mem_known => ufmt::uwrite!(line, "  avail -  swap -"),
        None => ufmt::uwrite!(line, "  avail {} MiB", row.mem_avail_mb),
    };
    if row.mem_known {
        let _ = ufmt::uwrite!(line, "  swap {} MiB", row.swap_used_mb);
    }
    // The RAM saving (stored / RAM used): the row has no compressed size.
    if let (Some(stored), Some(ram)) = (row.ext.zram_stored_mb, row.ext.zram_ram_mb)
        && let Some(saving) = headroom::kernel::zram::ram_saving_centi(stored, ram)
    {
        let _ = ufmt::uwrite!(line, "  zram saving ");
        let _ = headroom::followed::figures::write_centi(&mut line, saving);
        let _ = ufmt::uwrite!(line, ":1");
    }
    // The build's compilers first when there is a build: the host's count
    // is anyone's.
    // An uncounted host figure is `-`, never 0.
    let _ = match (row.build_compilers, row.compilers_known) {
        (Some(n), true) => ufmt::uwrite!(line, "  compilers {} (host {})", n, row.compilers),
        (Some(n), false) => ufmt::uwrite!(line, "  compilers {} (host -)", n),
        (None, true) => ufmt::uwrite!(line, "  compilers {}", row.compilers),
        (None, false) => ufmt::uwrite!(line, "  compilers -"),
    };
    let _ = ufmt::uwrite!(line, "  stage {}", row.stage.as_str());
    line
}

/// The live status line: rewritten in place on a terminal, never written
/// to a pipe or file. Its clock ticks each second between rows
/// ([`StatusLine::tick`]) with the last row's figures.
pub struct StatusLine {
    on: bool,
    shown: bool,
    /// Terminal columns: a longer line would wrap, and `\r` would then
    /// rewrite only its last row.
    width: usize,
    /// The last row's figures (empty before the first row).
    figures: heapless::String<256>,
    /// The last row's `elapsed_s`.
    row_elapsed_s: u64,
    /// The seconds the line shows now.
    shown_s: u64,
}

impl StatusLine {
    /// On when stderr is a terminal, as wide as it is (80 when unknown).
    pub fn new() -> StatusLine {
        // SAFETY: fd 2 stays open for the life of the process (guard_std_fds).
        let err = unsafe { BorrowedFd::borrow_raw(2) };
        let width = rustix::termios::tcgetwinsize(err)
            .map(|w| usize::from(w.ws_col))
            .unwrap_or(80);
        StatusLine {
            on: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            shown: false,
            width: if width == 0 { 80 } else { width },
            figures: heapless::String::new(),
            row_elapsed_s: 0,
            shown_s: 0,
        }
    }

    /// True when the line is drawn at all (stderr is a terminal).
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Shows the line for `row`, cut to the terminal's width.
    pub fn show(&mut self, row: &headroom::tick::row::Row) {
        if !self.on {
            return;
        }
        self.figures = figures(row);
        self.row_elapsed_s = row.elapsed_s;
        self.draw(row.elapsed_s);
    }

    /// `since_row_s` whole seconds after the last row: the line again with
    /// its clock moved on, when that changes what it shows. Nothing is
    /// read: the figures are the last row's.
    pub fn tick(&mut self, since_row_s: u64) {
        let at = self.row_elapsed_s.saturating_add(since_row_s);
        if self.on && !self.figures.is_empty() && (at != self.shown_s || !self.shown) {
            self.draw(at);
        }
    }

    /// Draws the line at `elapsed_s`, cut to the terminal's width.
    fn draw(&mut self, elapsed_s: u64) {
        let line = line_at(elapsed_s, &self.figures);
        // Keep one column free so the cursor never wraps.
        let keep = line
            .char_indices()
            .nth(self.width.saturating_sub(1) + 4) // +4: the "\r\x1b[K" prefix
            .map_or(line.len(), |(i, _)| i);
        let _ = std::io::stderr().write_all(&line.as_bytes()[..keep]);
        self.shown = true;
        self.shown_s = elapsed_s;
    }

    /// Clears the line, if shown, before other text goes to stderr.
    pub fn clear(&mut self) {
        if self.shown {
            let _ = std::io::stderr().write_all(b"\r\x1b[K");
            self.shown = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_text(row: &headroom::tick::row::Row) -> heapless::String<256> {
        line_at(row.elapsed_s, &figures(row))
    }

    #[test]
    fn status_line_names_the_zram_ram_saving() {
        let mut row = headroom::tick::row::Row::empty(100);
        row.elapsed_s = 65;
        row.mem_avail_mb = 900;
        row.ext.zram_stored_mb = Some(768);
        row.ext.zram_ram_mb = Some(316);
        let _ = row.stage.push_str("build");
        assert_eq!(
            status_text(&row).as_str(),
            "\r\x1b[Kheadroom 1m05s  avail 900 MiB  swap 0 MiB  zram saving 2.43:1  compilers 0  stage build"
        );
        row.ext.zram_ram_mb = Some(0);
        assert!(!status_text(&row).contains("zram"));
        // A cgroup whose available memory is below MemAvailable binds:
        // its figure, said as the cgroup's; one above it does not.
        row.ext.cg_mem_avail_mb = Some(1004);
        row.mem_avail_mb = 23000;
        assert!(
            status_text(&row).contains("  avail 1004 MiB cg  swap 0 MiB  "),
            "{}",
            status_text(&row)
        );
        row.mem_avail_mb = 900;
        assert!(
            status_text(&row).contains("  avail 900 MiB  swap 0 MiB  "),
            "{}",
            status_text(&row)
        );
        row.ext.cg_mem_avail_mb = None;
        // /proc/meminfo not read: unknown, not 0 MiB available.
        row.mem_known = false;
        row.mem_avail_mb = 0;
        assert!(
            status_text(&row).contains("  avail -  swap -  compilers"),
            "{}",
            status_text(&row)
        );
        row.mem_known = true;
        // With a build, its compilers are told apart from the host's.
        row.compilers = 5;
        row.build_compilers = Some(2);
        assert!(
            status_text(&row).ends_with("  compilers 2 (host 5)  stage build"),
            "{}",
            status_text(&row)
        );
    }
}
