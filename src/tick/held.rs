//! A writer that never returns an error: it holds its writer's first one
//! until [`Held::finish`] instead.
//!
//! A renderer's `?` after each piece it writes is a test and a branch at
//! every piece (about 1,900 of them in the release binary); with this
//! writer's error type, `Infallible`, the compiler drops them all, so the
//! renderers are smaller. The text written is the same: after the first
//! piece that did not fit, nothing more is written, as when the renderer
//! stopped at that piece.

use core::convert::Infallible;

use ufmt::uWrite;

/// A [`uWrite`] over `W` that keeps `W`'s first error and writes nothing
/// after it; [`Held::finish`] gives the error back.
pub struct Held<'w, W: uWrite + ?Sized> {
    /// Where the text goes.
    out: &'w mut W,
    /// The first error of `out`, if one came.
    failed: Option<W::Error>,
}

impl<'w, W: uWrite + ?Sized> Held<'w, W> {
    /// A writer over `out`, with no error yet.
    pub fn new(out: &'w mut W) -> Self {
        Held { out, failed: None }
    }

    /// `Ok` when every piece was written; else the first error (the pieces
    /// before it were written, none after).
    ///
    /// # Errors
    /// The first error of the writer.
    pub fn finish(self) -> Result<(), W::Error> {
        self.failed.map_or(Ok(()), Err)
    }
}

impl<W: uWrite + ?Sized> uWrite for Held<'_, W> {
    type Error = Infallible;

    // Never inlined: one call at each piece is the point (inlined, the
    // test would come back at every piece).
    #[inline(never)]
    fn write_str(&mut self, s: &str) -> Result<(), Infallible> {
        if self.failed.is_none()
            && let Err(e) = self.out.write_str(s)
        {
            self.failed = Some(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heapless::String;
    use ufmt::uwrite;

    #[test]
    fn writes_until_the_first_piece_that_does_not_fit() {
        let mut s: String<8> = String::new();
        let mut h = Held::new(&mut s);
        let Ok(()) = uwrite!(h, "abc{}", 12);
        let Ok(()) = uwrite!(h, "defg");
        let Ok(()) = uwrite!(h, "h");
        assert!(h.finish().is_err());
        assert_eq!(s.as_str(), "abc12");
    }

    #[test]
    fn ok_when_all_fit() {
        let mut s: String<8> = String::new();
        let mut h = Held::new(&mut s);
        let Ok(()) = uwrite!(h, "abc{}", 12);
        assert!(h.finish().is_ok());
        assert_eq!(s.as_str(), "abc12");
    }
}
