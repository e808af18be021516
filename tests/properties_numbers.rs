//! Property tests of the decoders every kernel reader shares: `parse_u64`
//! and `parse_i64` against `str::parse` on digit strings around every
//! boundary, `/proc/self/oom_score_adj`, and the octal unescaping of the
//! paths in /proc/swaps and mountinfo (`mountinfo::unescape`,
//! `Swap::unescape`) into buffers of any size.
//!
//! How: proptest generates the text, a naive std parser written here is
//! the reference, and the library must agree with it (the whole method,
//! the settings and the generators are in `properties/kit.rs`).

use headroom::kernel::mountinfo;
use headroom::kernel::parse::{parse_i64, parse_u64};
use headroom::kernel::swaps::Swap;
use proptest::prelude::*;
use proptest::sample::select;

#[path = "properties/kit.rs"]
mod kit;
use kit::*;

// ------------------------------------------------------------------- parse

/// Digit strings around every boundary, with signs, spaces, dots, leading
/// zeros and a byte that is not UTF-8.
fn digit_bytes() -> BoxedStrategy<Vec<u8>> {
    let text = |v: u128| v.to_string().into_bytes();
    prop_oneof![
        prop::collection::vec(select(&b"0123456789-+ .x\xff"[..]), 0..24),
        any::<u64>().prop_map(move |v| text(v.into())),
        any::<i64>().prop_map(|v| v.to_string().into_bytes()),
        any::<u128>().prop_map(text),
        any::<i128>().prop_map(|v| v.to_string().into_bytes()),
        (0u128..=1000).prop_map(move |d| text(u128::from(u64::MAX) - 500 + d)),
        (0i128..=1000).prop_map(|d| (i128::from(i64::MIN) - 500 + d).to_string().into_bytes()),
        (0i128..=1000).prop_map(|d| (i128::from(i64::MAX) - 500 + d).to_string().into_bytes()),
        (0usize..25, any::<u64>(), any::<bool>()).prop_map(|(z, v, neg)| {
            let sign = if neg { "-" } else { "" };
            format!("{sign}{}{v}", "0".repeat(z)).into_bytes()
        }),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(config(8192))]

    #[test]
    fn parse_u64_and_i64_match_str_parse(b in digit_bytes()) {
        let s = std::str::from_utf8(&b).ok();
        prop_assert_eq!(parse_u64(&b), s.and_then(naive_u64));
        prop_assert_eq!(parse_i64(&b), s.and_then(naive_i64));
    }

    /// /proc/self/oom_score_adj: one integer in -1000..=1000, white space
    /// around it allowed.
    #[test]
    fn oom_score_adj_matches_naive(b in digit_bytes(), pad in 0usize..3, nl in any::<bool>()) {
        let mut text = vec![b' '; pad];
        text.extend_from_slice(&b);
        if nl {
            text.push(b'\n');
        }
        let naive = std::str::from_utf8(&b)
            .ok()
            .map(|s| s.trim_matches(|c| " \t\n\r\x0b\x0c".contains(c)))
            .and_then(naive_i64)
            .filter(|v| (-1000..=1000).contains(v))
            .map(|v| v as i16);
        prop_assert_eq!(headroom::kernel::oom_score_adj::parse(&text).ok(), naive);
    }
}

// ---------------------------------------------------------------- unescape

/// Bytes around backslashes: plain bytes, `\` and three digits that may or
/// may not be octal or fit a byte, a lone or doubled backslash at any place.
fn escaped_bytes() -> BoxedStrategy<Vec<u8>> {
    let piece = prop_oneof![
        2 => select(&b"01234567 89a\xff/"[..]).prop_map(|b| vec![b]),
        2 => (select(&b"01234"[..]), select(&b"0123456789"[..]), select(&b"012345678"[..]))
            .prop_map(|(a, b, c)| vec![b'\\', a, b, c]),
        1 => Just(b"\\".to_vec()),
    ];
    prop::collection::vec(piece, 0..10)
        .prop_map(|v| v.concat())
        .boxed()
}

proptest! {
    #![proptest_config(config(8192))]

    /// Both octal decoders on any bytes, into buffers of any size.
    #[test]
    fn unescape_matches_naive(raw in escaped_bytes(), cap in 0usize..48) {
        let want = naive_unescape(&raw);
        let mut buf = vec![0u8; cap];
        let fits = want.len() <= cap;
        prop_assert_eq!(mountinfo::unescape(&raw, &mut buf), fits.then_some(&want[..]));
        let s = Swap { name_raw: &raw, kind: b"file", size_kib: 0, used_kib: 0, priority: 0 };
        prop_assert_eq!(s.unescape(&mut buf), &want[..want.len().min(cap)]);
        prop_assert_eq!(s.try_unescape(&mut buf), fits.then_some(&want[..]));
    }
}
