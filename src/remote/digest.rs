//! An action digest as text: `HASH/SIZE` (`--digest`, the REAPI resource
//! name form) or `HASH:SIZE` (Buck2's `action_digest`).
//!
//! # References
//! REAPI v2 `remote_execution.proto`: `Digest.hash` is "a lowercase
//! hexadecimal string, padded with leading zeroes up to the hash function
//! length", `size_bytes` an `int64`; `DigestFunction.Value` lists the hash
//! functions. Buck2 `app/buck2_common/src/cas_digest.rs` prints a digest as
//! `{hash}:{size}`.

use core::fmt;
use std::string::String;

use crate::remote::action::Digest;

/// Hex digits of the hash functions of REAPI `DigestFunction.Value`: MD5
/// and MURMUR3 (128 bits) 32, SHA1 and GITSHA1 40, SHA256, SHA256TREE and
/// BLAKE3 64, VSO (33 bytes) 66, SHA384 96, SHA512 128.
pub const HASH_HEX_LENGTHS: [usize; 6] = [32, 40, 64, 66, 96, 128];

/// Why a digest text is not one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestError {
    /// No `/` or `:` between hash and size.
    NoSeparator,
    /// A character of the hash that is not a hex digit, at this byte.
    NotHex {
        /// Byte offset in the hash.
        at: usize,
    },
    /// A hash whose length no REAPI hash function has.
    HashLength {
        /// Hex digits found.
        len: usize,
    },
    /// A size that is not a non-negative decimal `int64`.
    BadSize,
}

impl fmt::Display for DigestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSeparator => f.write_str("expected HASH/SIZE or HASH:SIZE"),
            Self::NotHex { at } => write!(f, "the hash has a non-hex character at {at}"),
            Self::HashLength { len } => write!(
                f,
                "the hash has {len} hex digits; REAPI hashes have 32, 40, 64, 66, 96 or 128"
            ),
            Self::BadSize => f.write_str("the size is not a non-negative whole number of bytes"),
        }
    }
}

impl std::error::Error for DigestError {}

/// Parse `HASH/SIZE` or `HASH:SIZE` (surrounding whitespace ignored): the
/// hash hex of a length in [`HASH_HEX_LENGTHS`] (upper case accepted, stored
/// lower case), the size a non-negative decimal `int64` (`+` and leading
/// signs refused).
pub fn parse_digest(s: &str) -> Result<Digest, DigestError> {
    let s = s.trim();
    let (hash, size) = s.rsplit_once(['/', ':']).ok_or(DigestError::NoSeparator)?;
    if let Some(at) = hash.bytes().position(|b| !b.is_ascii_hexdigit()) {
        return Err(DigestError::NotHex { at });
    }
    if !HASH_HEX_LENGTHS.contains(&hash.len()) {
        return Err(DigestError::HashLength { len: hash.len() });
    }
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DigestError::BadSize);
    }
    let size_bytes: i64 = size.parse().map_err(|_| DigestError::BadSize)?;
    Ok(Digest {
        hash: hash.to_ascii_lowercase(),
        size_bytes,
    })
}

/// A digest from its parts (Bazel's `Digest {hash, size_bytes}`), checked
/// as [`parse_digest`] checks its text.
pub fn digest_from_parts(hash: &str, size_bytes: i64) -> Result<Digest, DigestError> {
    if size_bytes < 0 {
        return Err(DigestError::BadSize);
    }
    let mut text = String::with_capacity(hash.len() + 21);
    text.push_str(hash);
    text.push('/');
    text.push_str(&std::format!("{size_bytes}"));
    parse_digest(&text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::ToString;

    const SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    // Facts: REAPI `Digest` (lowercase hex, int64 size); Buck2 writes
    // `HASH:SIZE` (cas_digest.rs `#[display("{}:{}", digest, size)]`).
    #[test]
    fn both_separators_and_upper_case() {
        let want = Digest {
            hash: SHA256.to_string(),
            size_bytes: 142,
        };
        assert_eq!(parse_digest(&format!("{SHA256}/142")), Ok(want.clone()));
        assert_eq!(parse_digest(&format!("{SHA256}:142")), Ok(want.clone()));
        let upper = SHA256.to_ascii_uppercase();
        assert_eq!(parse_digest(&format!(" {upper}:142\n")), Ok(want));
    }

    #[test]
    fn every_reapi_hash_length() {
        for len in HASH_HEX_LENGTHS {
            let d = parse_digest(&format!("{}/0", "a".repeat(len))).unwrap();
            assert_eq!(d.hash.len(), len);
            assert_eq!(d.size_bytes, 0);
        }
    }

    #[test]
    fn near_misses_are_typed_errors() {
        assert_eq!(parse_digest(SHA256), Err(DigestError::NoSeparator));
        assert_eq!(parse_digest(""), Err(DigestError::NoSeparator));
        assert_eq!(
            parse_digest(&format!("{}/1", &SHA256[1..])),
            Err(DigestError::HashLength { len: 63 })
        );
        let mut bad = SHA256.to_string();
        bad.replace_range(5..6, "g");
        assert_eq!(
            parse_digest(&format!("{bad}/1")),
            Err(DigestError::NotHex { at: 5 })
        );
        for size in ["", "-1", "+1", "1.0", "99999999999999999999", "1x", " 1"] {
            assert_eq!(
                parse_digest(&format!("{SHA256}/{size}")),
                Err(DigestError::BadSize),
                "size {size:?}"
            );
        }
        // The hash of "a/b:1" is "a/b": not hex.
        assert_eq!(parse_digest("a/b:1"), Err(DigestError::NotHex { at: 1 }));
    }

    #[test]
    fn from_parts_checks_like_text() {
        assert_eq!(digest_from_parts(SHA256, 3).map(|d| d.size_bytes), Ok(3));
        assert_eq!(digest_from_parts(SHA256, -3), Err(DigestError::BadSize));
        assert_eq!(
            digest_from_parts("abc", 3),
            Err(DigestError::HashLength { len: 3 })
        );
    }

    #[test]
    fn display_is_one_line() {
        for e in [
            DigestError::NoSeparator,
            DigestError::NotHex { at: 2 },
            DigestError::HashLength { len: 3 },
            DigestError::BadSize,
        ] {
            let s = e.to_string();
            assert!(!s.is_empty() && !s.contains('\n'), "{s}");
        }
    }
}
