//! Fuzz target: plot_csv. Both passes of `plot` over any bytes, then the
//! SVG: never panics, and the output stays bounded and free of raw control
//! characters whatever the CSV holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Counts what the renderer writes and checks each piece.
struct Sink(usize);

impl ufmt::uWrite for Sink {
    type Error = core::convert::Infallible;
    fn write_str(&mut self, s: &str) -> Result<(), Self::Error> {
        assert!(s.bytes().all(|b| b >= 0x20 || b == b'\n'), "{s:?}");
        self.0 += s.len();
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut scan = headroom::report::plot::Scan::new(None);
    let mut rows = headroom::report::csvread::CsvRows::new();
    if rows.feed(data, &mut |r| scan.observe(r)).is_err() {
        return;
    }
    let _ = rows.feed(&[], &mut |r| scan.observe(r));
    let mut plot = Box::new(headroom::report::plot::Plot::new(&scan));
    let mut rows = headroom::report::csvread::CsvRows::new();
    let _ = rows.feed(data, &mut |r| plot.observe(r));
    let _ = rows.feed(&[], &mut |r| plot.observe(r));
    let mut out = Sink(0);
    let _ = plot.render("fuzz<&>.csv", &mut out);
    assert!(out.0 < 1024 * 1024, "{} bytes", out.0);
});
