//! JSON written piece by piece through a `ufmt` writer, with no
//! allocation: string literals and optional numbers (`summarize --json`,
//! `status --json`).

use ufmt::{uWrite, uwrite};

/// A JSON string literal of `s` ([`chars`]).
pub fn string<W: uWrite + ?Sized>(w: &mut W, s: &str) -> Result<(), W::Error> {
    chars(w, s.chars())
}

/// A JSON string literal of the characters `cs`: `"` and `\` escaped, a
/// control character written as a space (headroom's texts have none that
/// mean anything).
pub fn chars<W: uWrite + ?Sized>(
    w: &mut W,
    cs: impl Iterator<Item = char>,
) -> Result<(), W::Error> {
    w.write_char('"')?;
    for c in cs {
        match c {
            '"' => w.write_str("\\\"")?,
            '\\' => w.write_str("\\\\")?,
            c if (c as u32) < 0x20 => w.write_str(" ")?,
            c => w.write_char(c)?,
        }
    }
    w.write_char('"')
}

/// A number or `null`.
pub fn opt<W: uWrite + ?Sized>(w: &mut W, v: Option<u64>) -> Result<(), W::Error> {
    match v {
        Some(v) => uwrite!(w, "{}", v),
        None => w.write_str("null"),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::testkit::Out;
    use std::string::String;

    #[test]
    fn strings_are_escaped_and_options_null() {
        let mut s = Out(String::new());
        let Ok(()) = string(&mut s, "a\"b\\c\nd");
        let Ok(()) = opt(&mut s, Some(7));
        let Ok(()) = opt(&mut s, None);
        assert_eq!(s.0, "\"a\\\"b\\\\c d\"7null");
    }
}
