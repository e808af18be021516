//! A command's words written as sh(1) needs them to give the same words
//! back: the RUN line shows `sh -c 'exit 3'`, not `sh -c exit 3`.

/// Bytes that need no quoting anywhere in a word: letters, digits and
/// `%+,-./:=@_` (no shell gives these a meaning inside a word; `=` and
/// `:` are safe after the first word too, which is where they are).
fn is_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || "%+,-./:=@_".contains(c)
}

/// `word` as sh reads it back: bare when every character is safe (and the
/// word is not empty), else in single quotes with each `'` as `'\''`
/// (`'it'\''s'`). A word with a control character (a newline, an escape)
/// is written `$'…'` with `\n`, `\t`, `\xHH`, `\\` and `\'`, so that the
/// line stays one line (bash, zsh, ksh and POSIX.1-2024 sh read it).
pub fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_safe) {
        return word.to_string();
    }
    if word.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if c.is_control() => {
                    let mut b = [0u8; 4];
                    for byte in c.encode_utf8(&mut b).bytes() {
                        out.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The words each [`quote`]d, joined by single spaces.
pub fn join(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_words_stay_bare() {
        for w in [
            "make",
            "-j4",
            "CC=gcc",
            "--x=y",
            "a/b.c",
            "user@host:1",
            "50%",
            "-Wl,--as-needed",
        ] {
            assert_eq!(quote(w), w);
        }
    }

    #[test]
    fn other_words_are_single_quoted() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote("*.c"), "'*.c'");
        assert_eq!(quote("a\"b"), "'a\"b'");
        assert_eq!(quote("~"), "'~'");
        assert_eq!(quote("é"), "'é'");
    }

    #[test]
    fn control_characters_keep_one_line() {
        assert_eq!(quote("a\nb"), r"$'a\nb'");
        assert_eq!(quote("it's\t\x1b"), r"$'it\'s\t\x1b'");
    }

    #[test]
    fn join_quotes_each_word() {
        let words: Vec<String> = ["sh", "-c", "exit 3"].map(String::from).to_vec();
        assert_eq!(join(&words), "sh -c 'exit 3'");
    }

    /// What sh reads back from a quoted word is the word.
    #[test]
    fn sh_reads_each_quoted_word_back() {
        let words = ["a b", "it's", "", "$HOME `x` \\ \"q\"", "*", "--x=y", "ü'ß"];
        let line = words.map(quote).join(" ");
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf '%s\\n' {line}")])
            .output()
            .unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        let want: String = words.iter().map(|w| format!("{w}\n")).collect();
        assert_eq!(got, want);
    }
}
