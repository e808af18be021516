//! What every log reader's fuzz target checks of what it found (the log
//! targets include this file; it is no target itself).

/// What a reader found is consistent: digests once each, valid hashes.
pub fn check(found: headroom::remote::action::Found) {
    let mut seen = std::collections::HashSet::new();
    for n in &found.actions {
        assert!(seen.insert(n.digest.clone()));
        assert!(
            n.digest
                .hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
        assert!(n.digest.size_bytes >= 0);
    }
    assert!(found.truncated.len() <= 1);
    // A count of records read before a cut only beside a cut log.
    assert!(
        found
            .records_before_cut
            .iter()
            .all(|(f, _)| found.truncated.contains(f))
    );
}
