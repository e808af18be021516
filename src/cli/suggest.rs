//! The nearest known word to a mistyped one (`stauts` → `status`), for the
//! "did you mean" of an unknown command or option.

/// Edits between `a` and `b`, over bytes: insertions, deletions,
/// substitutions and swaps of two neighbours, each 1 (the optimal string
/// alignment distance: Damerau–Levenshtein without editing a swapped pair
/// again). `stauts` is one swap from `status`.
pub fn distance(a: &[u8], b: &[u8]) -> usize {
    // Three rows of the table: before the previous, the previous, this.
    let n = b.len();
    let mut before: Vec<usize> = vec![0; n + 1];
    let mut prev: Vec<usize> = (0..=n).collect();
    let mut row: Vec<usize> = vec![0; n + 1];
    for (i, &ca) in a.iter().enumerate() {
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let mut d = (prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1);
            if i > 0 && j > 0 && ca == b[j - 1] && a[i - 1] == cb {
                d = d.min(before[j - 1] + 1);
            }
            row[j + 1] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut row);
    }
    prev[n]
}

/// The known word nearest to `typed`, when it is near enough to be what
/// was meant: at most 2 edits, or a third of `typed`'s length for longer
/// words. On a tie the first of `known` wins.
pub fn nearest<'a>(typed: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let most = 2.max(typed.len() / 3);
    known
        .into_iter()
        .map(|k| (distance(typed.as_bytes(), k.as_bytes()), k))
        .filter(|&(d, _)| d <= most)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_each_kind_of_edit_once() {
        assert_eq!(distance(b"status", b"status"), 0);
        assert_eq!(distance(b"stauts", b"status"), 1); // a swap
        assert_eq!(distance(b"statu", b"status"), 1); // a deletion
        assert_eq!(distance(b"statuss", b"status"), 1); // an insertion
        assert_eq!(distance(b"statos", b"status"), 1); // a substitution
        assert_eq!(distance(b"", b"run"), 3);
        assert_eq!(distance(b"run", b""), 3);
        assert_eq!(distance(b"ca", b"abc"), 3); // OSA: no edit of a swapped pair
        assert_eq!(distance(b"kitten", b"sitting"), 3);
    }

    #[test]
    fn distance_is_symmetric() {
        for (a, b) in [
            ("stauts", "status"),
            ("plto", "plot"),
            ("--intervl", "--interval"),
        ] {
            assert_eq!(
                distance(a.as_bytes(), b.as_bytes()),
                distance(b.as_bytes(), a.as_bytes())
            );
        }
    }

    #[test]
    fn nearest_suggests_only_a_near_word() {
        let cmds = ["record", "run", "summarize", "status", "plot"];
        assert_eq!(nearest("stauts", cmds), Some("status"));
        assert_eq!(nearest("plto", cmds), Some("plot"));
        assert_eq!(nearest("ru", cmds), Some("run"));
        assert_eq!(nearest("summarise", cmds), Some("summarize"));
        assert_eq!(nearest("xyzzy", cmds), None);
        assert_eq!(
            nearest("--intervl", ["--interval", "--count"]),
            Some("--interval")
        );
        assert_eq!(nearest("--frobnicate", ["--interval", "--count"]), None);
    }
}
