//! What the library's unit tests share (test builds only; `lib.rs`
//! declares it under `#[cfg(test)]`): a [`ufmt::uWrite`] sink that keeps
//! what a renderer wrote as a `String`. It imports no layer, so the tests
//! of every layer may use it (`tests/layout.rs` checks both).

extern crate std;
use std::string::String;

/// A [`ufmt::uWrite`] into a growing `String`: `Out(String::new())`, hand
/// `&mut` it to a `write`/`render`, then read `.0`. Never fails.
pub(crate) struct Out(pub(crate) String);

impl ufmt::uWrite for Out {
    type Error = core::convert::Infallible;
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        self.0.push_str(s);
        Ok(())
    }
}
