//! Fuzz target: a pool's per-job peak file. Never panics, whatever the
//! bytes; whatever parses renders within the cap to bytes that parse to
//! the same jobs.
#![no_main]

use libfuzzer_sys::fuzz_target;

use headroom::govern::jobserver::job_peaks::{JOB_PEAKS_BUF, JobPeaks, parse, render};

fuzz_target!(|data: &[u8]| {
    let mut t = Box::new(JobPeaks::new());
    if parse(data, &mut t).is_err() {
        return;
    }
    let mut buf = vec![0u8; JOB_PEAKS_BUF];
    let text = render(&t, &mut buf).expect("a table always fits the cap");
    let mut back = Box::new(JobPeaks::new());
    parse(text, &mut back).expect("rendered text parses");
    assert_eq!((back.len(), back.others_mb(), back.skipped()), (t.len(), t.others_mb(), 0));
    for i in 0..t.len() {
        assert_eq!(back.entry(i), t.entry(i));
    }
});
