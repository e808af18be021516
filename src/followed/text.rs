//! Turning hostile build-log bytes into a short, CSV-safe display form.
//!
//! Build logs are not text in any reliable sense: a French locale writes
//! ISO-8859-1 (`\xe9`), gcc colours its diagnostics with ANSI escapes, pip
//! and tqdm redraw progress bars with `\r`, and a writer caught mid-flush
//! leaves half a UTF-8 character at the end. The CSV's `stage` and `context`
//! columns must nevertheless never contain `,` `"` CR or LF (the compatible
//! consumer splits rows on every comma), so everything shown goes through
//! [`sanitize_into`] first.
//!
//! # References
//! SPEC.md, "CSV" and "stage and context"; ECMA-48 (control functions, CSI
//! and OSC syntax); The Unicode Standard, section 3.9 (U+FFFD substitution of
//! maximal subparts, which `<[u8]>::utf8_chunks` follows).

/// Maximum number of characters (Unicode scalar values) in the CSV
/// `context` column (SPEC.md, "stage and context").
pub const CONTEXT_CHARS: usize = 80;

/// Byte capacity of a [`Context`]: [`CONTEXT_CHARS`] characters of at most
/// 4 UTF-8 bytes each, so the character limit is always the one that cuts.
pub const CONTEXT_CAP: usize = CONTEXT_CHARS * 4;

/// A sanitized `context` value: at most [`CONTEXT_CHARS`] characters, no
/// `,` `"` or control characters.
pub type Context = heapless::String<CONTEXT_CAP>;

/// Byte capacity of a [`Stage`]. Stage names are short labels
/// (`builder`, `configure`, a `--label`); 64 bytes leaves room for a long
/// hyphenated Dockerfile stage name.
pub const STAGE_CAP: usize = 64;

/// A sanitized `stage` value of at most [`STAGE_CAP`] bytes.
pub type Stage = heapless::String<STAGE_CAP>;

/// Where the escape-sequence scanner is inside the input.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Esc {
    /// Plain text.
    None,
    /// Just after ESC.
    Start,
    /// After ESC and one or more intermediate bytes (0x20–0x2F), e.g. the
    /// `(` of `ESC ( B`.
    Intermediate,
    /// Inside a CSI sequence (`ESC [` parameters and intermediates).
    Csi,
    /// Inside an OSC string (`ESC ]` …), ended by BEL or `ESC \`.
    Osc,
}

/// Accumulates the display form into `out`, collapsing white space and
/// enforcing the character and byte limits.
struct Writer<'o, const N: usize> {
    out: &'o mut heapless::String<N>,
    max_chars: usize,
    chars: usize,
    pending_space: bool,
    full: bool,
}

impl<const N: usize> Writer<'_, N> {
    /// Records white space; it is written only if visible text follows, so
    /// runs collapse to one space and trailing white space disappears.
    fn space(&mut self) {
        self.pending_space = true;
    }

    /// Writes one visible character (preceded by the pending space, if any),
    /// or marks the writer full when either limit would be exceeded.
    fn visible(&mut self, c: char) {
        if self.full {
            return;
        }
        let extra = usize::from(self.pending_space);
        let need_chars = self.chars.saturating_add(extra).saturating_add(1);
        let need_bytes = self
            .out
            .len()
            .saturating_add(extra)
            .saturating_add(c.len_utf8());
        if need_chars > self.max_chars || need_bytes > N {
            self.full = true;
            return;
        }
        if self.pending_space {
            // Capacity was checked above; a failure is impossible, but if it
            // happened the only safe reaction is to stop writing.
            if self.out.push(' ').is_err() {
                self.full = true;
                return;
            }
            self.chars += 1;
            self.pending_space = false;
        }
        if self.out.push(c).is_err() {
            self.full = true;
            return;
        }
        self.chars += 1;
    }
}

/// Whether `src` is already its own display form: printable ASCII but `,`
/// and `"`, no run of spaces, no trailing space. One pass over the bytes,
/// each looked up in [`DISPLAY_AS_IS`].
fn is_display_form(src: &[u8]) -> bool {
    let mut prev = 0u8;
    for &b in src {
        if !DISPLAY_AS_IS[usize::from(b)] || (b == b' ' && prev == b' ') {
            return false;
        }
        prev = b;
    }
    prev != b' '
}

/// The bytes shown as they are: printable ASCII but `,` and `"`.
const DISPLAY_AS_IS: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        t[b] = b != b',' as usize && b != b'"' as usize;
        b += 1;
    }
    t
};

/// Writes the CSV-safe display form of `src` into `out` (cleared first).
///
/// The display form is:
/// - each maximal invalid UTF-8 sequence becomes one `?` (the places where a
///   lossy decoder would put U+FFFD);
/// - ANSI escape sequences are removed: CSI (`ESC [` … final byte
///   0x40–0x7E, e.g. `ESC[01;35m`, `ESC[K`), OSC (`ESC ]` … BEL or `ESC \`,
///   e.g. gcc's hyperlinks) and other `ESC` [intermediates] final sequences;
/// - every other control character (C0 including TAB, CR and LF, DEL, C1),
///   `,` `"` and Unicode white space become a space;
/// - runs of spaces collapse to one; one leading space is kept (the
///   toolchain's CSVs have `" Compiling syn v2.0.119"`), trailing ones are
///   dropped;
/// - at most `max_chars` characters and at most `N` bytes, cut on a
///   character boundary.
///
/// Never fails and never panics; a truncated escape sequence at the end of
/// `src` is simply dropped.
///
/// ```
/// use headroom::followed::text::{sanitize_into, Context, CONTEXT_CHARS};
/// let mut out = Context::new();
/// sanitize_into(b"\x1b[01;35mwarning:\x1b[m a,b \"c\"\t\xe9\r\n", CONTEXT_CHARS, &mut out);
/// assert_eq!(out.as_str(), "warning: a b c ?");
/// // Capacity-limited: a 4-byte buffer holds one 3-byte character, not two.
/// let mut small = heapless::String::<4>::new();
/// sanitize_into("██".as_bytes(), 80, &mut small);
/// assert_eq!(small.as_str(), "█");
/// ```
pub fn sanitize_into<const N: usize>(src: &[u8], max_chars: usize, out: &mut heapless::String<N>) {
    out.clear();
    // Fast path: text that is already its own display form (printable
    // ASCII, no `,` or `"`, no run of spaces, no trailing space, short
    // enough) is copied as is. Recorded CSVs are all like this, and
    // `summarize` reads millions of rows.
    if src.len() <= max_chars.min(N) && is_display_form(src) {
        // SAFETY: `is_display_form` accepts bytes 0x20..0x7e alone: ASCII,
        // so valid UTF-8 (checking it again cost `summarize` 3 %).
        let text = unsafe { core::str::from_utf8_unchecked(src) };
        if out.push_str(text).is_ok() {
            return;
        }
    }
    out.clear();
    let mut w = Writer {
        out,
        max_chars,
        chars: 0,
        pending_space: false,
        full: false,
    };
    let mut esc = Esc::None;
    for chunk in src.utf8_chunks() {
        for c in chunk.valid().chars() {
            esc = step(esc, c, &mut w);
            if w.full {
                return;
            }
        }
        if !chunk.invalid().is_empty() {
            esc = match esc {
                // Invalid bytes are part of the OSC payload.
                Esc::Osc => Esc::Osc,
                // Anything else: the sequence (if any) is malformed and ends
                // here; the bytes are shown as one `?`.
                _ => {
                    w.visible('?');
                    Esc::None
                }
            };
            if w.full {
                return;
            }
        }
    }
}

/// Feeds one character through the escape-sequence state machine, writing
/// whatever is visible; returns the next state.
fn step<const N: usize>(state: Esc, c: char, w: &mut Writer<'_, N>) -> Esc {
    const ESC: char = '\u{1b}';
    const BEL: char = '\u{7}';
    match state {
        Esc::None => {
            if c == ESC {
                Esc::Start
            } else if c.is_control() || c.is_whitespace() || c == ',' || c == '"' {
                w.space();
                Esc::None
            } else {
                w.visible(c);
                Esc::None
            }
        }
        Esc::Start => match c {
            '[' => Esc::Csi,
            ']' => Esc::Osc,
            '\u{20}'..='\u{2f}' => Esc::Intermediate,
            '\u{30}'..='\u{7e}' => Esc::None,
            // Not an escape after all: show the character normally.
            _ => step(Esc::None, c, w),
        },
        Esc::Intermediate => match c {
            '\u{20}'..='\u{2f}' => Esc::Intermediate,
            '\u{30}'..='\u{7e}' => Esc::None,
            _ => step(Esc::None, c, w),
        },
        Esc::Csi => match c {
            // Parameter and intermediate bytes.
            '\u{20}'..='\u{3f}' => Esc::Csi,
            // Final byte.
            '\u{40}'..='\u{7e}' => Esc::None,
            _ => step(Esc::None, c, w),
        },
        Esc::Osc => match c {
            BEL => Esc::None,
            // `ESC \` (string terminator) is a two-byte escape handled by
            // the Start state; any other ESC starts a new sequence.
            ESC => Esc::Start,
            _ => Esc::Osc,
        },
    }
}

/// The text a terminal would show for one log line: one trailing `\r` is
/// removed (CRLF files), then everything up to and including the last
/// remaining `\r` is dropped (progress bars redraw with `\r`).
///
/// ```
/// use headroom::followed::text::after_last_cr;
/// assert_eq!(after_last_cr(b" 10%\r 60%\r100%"), b"100%");
/// assert_eq!(after_last_cr(b"done\r"), b"done");
/// assert_eq!(after_last_cr(b""), b"");
/// ```
pub fn after_last_cr(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line.iter().rposition(|&c| c == b'\r') {
        Some(i) => line.get(i + 1..).unwrap_or_default(),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::String as StdString;

    fn ctx(src: &[u8]) -> Context {
        let mut out = Context::new();
        sanitize_into(src, CONTEXT_CHARS, &mut out);
        out
    }

    fn fixture_lines() -> std::vec::Vec<&'static [u8]> {
        let log = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/23-build-log-hostile-bytes/build.log"
        ));
        crate::kernel::parse::lines(log).collect()
    }

    /// Safety property every output must have, whatever the input.
    fn assert_csv_safe(s: &str, max_chars: usize) {
        assert!(s.chars().count() <= max_chars, "{s:?}");
        assert!(!s.contains(','), "{s:?}");
        assert!(!s.contains('"'), "{s:?}");
        assert!(!s.chars().any(char::is_control), "{s:?}");
        assert!(!s.contains("  "), "{s:?}");
        assert!(!s.ends_with(' '), "{s:?}");
    }

    #[test]
    fn fixture_23_build_log_hostile_bytes() {
        let lines = fixture_lines();
        assert_eq!(lines.len(), 9);
        // Line 2: ANSI SGR/EL escapes removed, UTF-8 quotes kept.
        assert_eq!(
            ctx(lines[1]).as_str(),
            "../src/parser.cpp:88:12: warning: unused variable ‘tmp’ [-Wunused-variable]"
        );
        // Line 3: ISO-8859-1, five maximal invalid sequences → five `?`.
        let mut long = heapless::String::<1024>::new();
        sanitize_into(lines[2], 1024, &mut long);
        assert_eq!(long.matches('?').count(), 5);
        assert_eq!(
            long.as_str(),
            "../src/parser.c:12:5: erreur: ? foo ? non d?clar? (premi?re utilisation dans cette fonction)"
        );
        // Line 5: only the last progress-bar redraw.
        assert_eq!(
            ctx(after_last_cr(lines[4])).as_str(),
            "Downloading wheel 100%|██████████| 10.0M/10.0M"
        );
        // Line 9: the half-written `…` is exactly one `?`, at the end.
        let l9 = ctx(lines[8]);
        assert_eq!(l9.matches('?').count(), 1);
        assert_eq!(
            l9.as_str(),
            "[ 41%] Building CXX object src/CMakeFiles/core.dir/ast.cpp.o ?"
        );
        // Line 4 (4624 bytes, commas in `-Wl,--as-needed`) cut to 80 chars.
        let l4 = ctx(lines[3]);
        assert_eq!(l4.chars().count(), CONTEXT_CHARS);
        assert!(l4.starts_with("/usr/bin/c++ -O2 -g -DNDEBUG -Wl --as-needed "));
        for l in &lines {
            assert_csv_safe(ctx(l).as_str(), CONTEXT_CHARS);
        }
    }

    #[test]
    fn cut_on_multibyte_boundary() {
        // 79 ASCII + 3-byte characters: the 80th character is `█`, whole.
        let mut src = std::vec![b'a'; 79];
        src.extend_from_slice("███".as_bytes());
        let out = ctx(&src);
        assert_eq!(out.chars().count(), 80);
        assert!(out.ends_with('█'));
        assert_eq!(out.len(), 79 + 3);
        // 80 four-byte characters fit exactly in CONTEXT_CAP.
        let emoji: StdString = core::iter::repeat_n('🦀', 100).collect();
        let out = ctx(emoji.as_bytes());
        assert_eq!(out.chars().count(), 80);
        assert_eq!(out.len(), CONTEXT_CAP);
        // Byte capacity cuts before a character that would not fit.
        let mut small = heapless::String::<5>::new();
        sanitize_into("ab██".as_bytes(), 80, &mut small);
        assert_eq!(small.as_str(), "ab█");
        // The pending space never ends up trailing at the cut.
        let mut two = heapless::String::<16>::new();
        sanitize_into(b"ab cd", 3, &mut two);
        assert_eq!(two.as_str(), "ab");
    }

    #[test]
    fn only_commas_and_quotes() {
        assert_eq!(ctx(b",,,\"\",\",").as_str(), "");
        assert_eq!(ctx(b"a,\"b\",c").as_str(), "a b c");
    }

    #[test]
    fn leading_space_kept_trailing_dropped() {
        assert_eq!(
            ctx(b"   Compiling syn v2.0.119  \r\n").as_str(),
            " Compiling syn v2.0.119"
        );
        assert_eq!(ctx(b"\t\tx\t\ty").as_str(), " x y");
        assert_eq!(ctx(b" \t \r\n").as_str(), "");
        assert_eq!(ctx(b"").as_str(), "");
        // Unicode white space (NBSP, line separator) collapses too.
        assert_eq!(ctx("a\u{a0}\u{2028} b".as_bytes()).as_str(), "a b");
    }

    #[test]
    fn escape_sequences() {
        // OSC 8 hyperlink with ST and with BEL terminators (gcc -fdiagnostics-urls).
        assert_eq!(
            ctx(b"[\x1b]8;;https://gcc.gnu.org/x\x1b\\-Wunused\x1b]8;;\x07]").as_str(),
            "[-Wunused]"
        );
        // Charset designation ESC ( B and a two-byte ESC =.
        assert_eq!(ctx(b"\x1b(Bok\x1b=!").as_str(), "ok!");
        // Truncated escapes at the end are dropped, not shown.
        assert_eq!(ctx(b"ok\x1b[01;3").as_str(), "ok");
        assert_eq!(ctx(b"ok\x1b").as_str(), "ok");
        // An unterminated OSC swallows the rest, including invalid bytes.
        assert_eq!(ctx(b"ok\x1b]0;title\xff more").as_str(), "ok");
        // A malformed CSI ends at the offending byte, which is shown.
        assert_eq!(ctx(b"a\x1b[1\xffb").as_str(), "a?b");
        assert_eq!(ctx("a\x1b[1éb".as_bytes()).as_str(), "aéb");
        // ESC followed by a control character: the control is a space.
        assert_eq!(ctx(b"a\x1b\nb").as_str(), "a b");
        // C1 controls and DEL become spaces.
        assert_eq!(ctx("a\u{9b}b\x7fc".as_bytes()).as_str(), "a b c");
    }

    #[test]
    fn invalid_utf8_maximal_subparts() {
        // Truncated 3-byte sequence = one maximal subpart; lone continuation
        // bytes are one each; overlong and surrogate encodings per byte.
        assert_eq!(ctx(b"\xe2\x80x").as_str(), "?x");
        assert_eq!(ctx(b"\x80\x80").as_str(), "??");
        assert_eq!(ctx(b"\xc0\xaf").as_str(), "??");
        assert_eq!(ctx(b"\xed\xa0\x80").as_str(), "???");
        // Matches std's lossy decoder everywhere (U+FFFD ↔ `?`).
        for s in [
            &b"\xf0\x9f\xa6"[..],
            b"\xff\xfe",
            b"a\xe9b\xe8",
            b"\xf4\x90\x80\x80",
        ] {
            let lossy = StdString::from_utf8_lossy(s).replace('\u{fffd}', "?");
            assert_eq!(ctx(s).as_str(), lossy);
        }
    }

    #[test]
    fn matches_naive_on_generated_inputs() {
        // A simple std reimplementation, compared on pseudo-random byte
        // strings built from an alphabet of interesting pieces.
        fn naive(src: &[u8], max_chars: usize) -> StdString {
            let text = StdString::from_utf8_lossy(src);
            let mut vis = StdString::new();
            let mut it = text.chars().peekable();
            while let Some(c) = it.next() {
                if c == '\u{1b}' {
                    match it.peek().copied() {
                        Some('[') => {
                            it.next();
                            while let Some(&d) = it.peek() {
                                if ('\u{20}'..='\u{3f}').contains(&d) {
                                    it.next();
                                } else {
                                    if ('\u{40}'..='\u{7e}').contains(&d) {
                                        it.next();
                                    }
                                    break;
                                }
                            }
                        }
                        Some(d) if ('\u{30}'..='\u{7e}').contains(&d) && d != ']' => {
                            it.next();
                        }
                        _ => {}
                    }
                    continue;
                }
                let c = if c == '\u{fffd}' { '?' } else { c };
                let space = c.is_control() || c.is_whitespace() || c == ',' || c == '"';
                vis.push(if space { ' ' } else { c });
            }
            let mut out = StdString::new();
            let mut pending = false;
            for c in vis.chars() {
                if c == ' ' {
                    pending = true;
                    continue;
                }
                let add = usize::from(pending) + 1;
                if out.chars().count() + add > max_chars {
                    break;
                }
                if pending {
                    out.push(' ');
                    pending = false;
                }
                out.push(c);
            }
            out
        }
        // No OSC and no intermediates in the alphabet: the naive version
        // does not model them.
        let pieces: [&[u8]; 12] = [
            b"a",
            b"Z9",
            b" ",
            b"\t",
            b",",
            b"\"",
            b"\r\n",
            b"\x1b[1;31m",
            b"\x1b[K",
            "█".as_bytes(),
            b"\xe9",
            b"\xe2\x80",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..5000 {
            let mut src = std::vec::Vec::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (seed >> 59) as usize;
            for _ in 0..len {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                src.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let max = (seed >> 40) as usize % 12;
            let mut out = heapless::String::<64>::new();
            sanitize_into(&src, max, &mut out);
            assert_eq!(out.as_str(), naive(&src, max), "{src:?} max={max}");
            assert_csv_safe(out.as_str(), max);
        }
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed: u64 = 1;
        for _ in 0..2000 {
            let mut src = [0u8; 64];
            for b in src.iter_mut() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *b = (seed >> 56) as u8;
            }
            let out = ctx(&src);
            assert_csv_safe(out.as_str(), CONTEXT_CHARS);
            let mut zero = heapless::String::<0>::new();
            sanitize_into(&src, CONTEXT_CHARS, &mut zero);
            assert_eq!(zero.as_str(), "");
        }
    }

    #[test]
    fn output_is_cleared_first() {
        let mut out = Context::new();
        sanitize_into(b"first", CONTEXT_CHARS, &mut out);
        sanitize_into(b"", CONTEXT_CHARS, &mut out);
        assert_eq!(out.as_str(), "");
    }

    #[test]
    fn after_last_cr_cases() {
        // Lines come without their `\n`; a stray one is kept (shown as a space).
        assert_eq!(after_last_cr(b"a\r\n"), b"\n");
        assert_eq!(after_last_cr(b"a\r"), b"a");
        assert_eq!(after_last_cr(b"a\rb\r"), b"b");
        assert_eq!(after_last_cr(b"a\r\r"), b"");
        assert_eq!(after_last_cr(b"\r"), b"");
        assert_eq!(after_last_cr(b"x\ry"), b"y");
        assert_eq!(after_last_cr(b"plain"), b"plain");
    }
}
