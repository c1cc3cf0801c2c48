//! The whole-word tokens of a line-filter literal that VictoriaLogs' per-block
//! Bloom filters can answer.
//!
//! VictoriaLogs stores, for every block and column, a Bloom filter of the
//! column's word tokens: maximal runs of token characters (ASCII letters,
//! digits and `_`; beyond ASCII, Go's `unicode.IsLetter`/`IsDigit`), see its
//! `lib/logstorage/tokenizer.go`. A line that contains the literal `needle`
//! contains, as whole tokens, exactly the needle's *interior* tokens: the
//! runs bounded on both sides, inside the needle, by non-token characters.
//! The first and last runs may continue outside the needle (`|= "id=42"`
//! matches `uid=421`), so they prove nothing. VictoriaLogs derives the same
//! interior tokens from a literal `_msg:~"…"` regex itself (`filterRegexp.
//! initTokens`: `GetLiterals`, then `skipFirstLastToken`), so a single
//! substring filter already skips blocks; what lokivl controls is that every
//! alternative reaches VictoriaLogs as such a literal (see `line.rs`).

/// Whether VictoriaLogs counts `c` as a token character.
///
/// ASCII is exact. Beyond ASCII, Go counts Unicode letters (category L) and
/// decimal digits (Nd); Rust's `is_alphabetic`/`is_numeric` are supersets
/// (they add letter numbers, other numbers and alphabetic combining marks),
/// so a run this function calls a token may, for such rare characters, not
/// be one to VictoriaLogs. That only affects whether lokivl splits an `or`
/// ([`has_interior_token`]), which is exact either way.
fn is_token_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        c.is_alphabetic() || c.is_numeric()
    }
}

/// The needle's interior tokens, in order, without duplicates: every one is
/// a whole token of any line that contains `needle`.
pub(crate) fn interior_tokens(needle: &str) -> Vec<&str> {
    // Drop the first and the last run of token characters (either may be a
    // fragment of a longer token of the line).
    let inner = needle.trim_start_matches(is_token_char);
    let inner = inner.trim_end_matches(is_token_char);
    let mut out: Vec<&str> = Vec::new();
    for token in inner.split(|c: char| !is_token_char(c)) {
        if !token.is_empty() && !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

/// Whether a line containing `needle` must hold at least one whole token
/// the needle determines, so VictoriaLogs can skip blocks whose Bloom filter
/// lacks it.
pub(crate) fn has_interior_token(needle: &str) -> bool {
    !interior_tokens(needle).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_last_runs_are_not_tokens() {
        assert_eq!(
            interior_tokens("trace_id=4bf92f3577b34da6"),
            Vec::<&str>::new()
        );
        assert_eq!(
            interior_tokens("4bf92f3577b34da6a3ce929d0e0e4736"),
            Vec::<&str>::new()
        );
        assert_eq!(
            interior_tokens("requestId=550e8400-e29b-41d4-a716-446655440000"),
            vec!["550e8400", "e29b", "41d4", "a716"]
        );
        assert_eq!(interior_tokens("a b"), Vec::<&str>::new());
        assert_eq!(interior_tokens("a b c"), vec!["b"]);
    }

    #[test]
    fn a_needle_bounded_by_separators_keeps_every_token() {
        assert_eq!(interior_tokens(" user=bob "), vec!["user", "bob"]);
        assert_eq!(interior_tokens("[ERROR]"), vec!["ERROR"]);
        assert_eq!(
            interior_tokens("\"GET /api/v1/users\""),
            vec!["GET", "api", "v1", "users"]
        );
        assert_eq!(interior_tokens("-x-x-"), vec!["x"]);
        assert_eq!(interior_tokens("--"), Vec::<&str>::new());
        assert_eq!(interior_tokens(""), Vec::<&str>::new());
    }

    #[test]
    fn unicode_letters_and_digits_are_token_characters() {
        // Georgian letters and Devanagari digits continue a token; `—` and
        // `✓` separate.
        assert_eq!(interior_tokens("x—შეცდომა—y"), vec!["შეცდომა"]);
        assert_eq!(interior_tokens("a ✓ १२ ✓"), vec!["१२"]);
        assert_eq!(interior_tokens("éa-b"), Vec::<&str>::new());
        assert!(has_interior_token("é-b-é"));
        assert!(!has_interior_token("é-b"));
    }
}
