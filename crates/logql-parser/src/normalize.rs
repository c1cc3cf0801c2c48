//! Spaces out what the grammar would skip, so pest's implicit whitespace
//! rule can be a single `" "`.
//!
//! pest runs the implicit `WHITESPACE`/`COMMENT` rules at every `~` of the
//! grammar; with four whitespace characters and a comment alternative that
//! skip was about a sixth of a parse. Replacing `\t`, `\n`, `\r` and `#`
//! comments by spaces outside string literals and `[…]` ranges keeps every
//! byte offset (errors are still located in, and worded from, the original
//! text) and accepts exactly the same queries.

use std::borrow::Cow;

/// The text pest parses: `input` itself unless it has tabs, newlines,
/// carriage returns or comments, else a copy with those turned into spaces.
pub(crate) fn spaced(input: &str) -> Cow<'_, str> {
    if !maybe_spaced(input.as_bytes()) {
        return Cow::Borrowed(input);
    }
    let mut out = input.as_bytes().to_vec();
    let mut i = 0;
    while i < out.len() {
        match out[i] {
            // A double-quoted literal ends at its closing quote or at a raw
            // newline (where the grammar rejects it anyway).
            b'"' => {
                i += 1;
                while i < out.len() && out[i] != b'"' && out[i] != b'\n' {
                    i += if out[i] == b'\\' { 2 } else { 1 };
                }
                if out.get(i) == Some(&b'"') {
                    i += 1;
                }
            }
            b'`' => i = skip_past(&out, i + 1, b'`'),
            // A range body is taken verbatim by the grammar, up to `]`.
            b'[' => i = skip_past(&out, i + 1, b']'),
            b'#' => {
                while i < out.len() && out[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'\t' | b'\n' | b'\r' => {
                out[i] = b' ';
                i += 1;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced, by ASCII, and multi-byte sequences
    // are skipped whole, so the text stays UTF-8.
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(input),
    }
}

/// Whether `b` may hold a byte `spaced` replaces: false means it has no
/// control character and no `#`. Checks eight bytes per step, since every
/// query is scanned and nearly none has such a byte.
fn maybe_spaced(b: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    const HASHES: u64 = u64::from_ne_bytes([b'#'; 8]);
    // Some byte of `x` is below `n` (`n` times ONES), for bytes below 0x80;
    // bytes at or above 0x80 may be reported too, which only costs a copy.
    let below = |x: u64, n: u64| x.wrapping_sub(n) & !x & HIGHS != 0;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_ne_bytes(w);
        if below(x, SPACES) || below(x ^ HASHES, ONES) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&c| c < 0x20 || c == b'#')
}

/// The index just past the next `end` byte at or after `from` (or the end).
fn skip_past(b: &[u8], from: usize, end: u8) -> usize {
    b[from.min(b.len())..]
        .iter()
        .position(|&c| c == end)
        .map_or(b.len(), |p| from + p + 1)
}

#[cfg(test)]
mod tests {
    use super::{maybe_spaced, spaced};

    #[test]
    fn quick_check_finds_every_replaced_byte() {
        for len in 0..20 {
            let plain = "a".repeat(len);
            assert!(!maybe_spaced(plain.as_bytes()), "{len}");
            assert!(!maybe_spaced(
                format!("{plain}{{x=\"ü\"}} ~!@$%^&*()").as_bytes()
            ));
            for pos in 0..len {
                for b in [b'\t', b'\n', b'\r', b'#'] {
                    let mut v = plain.clone().into_bytes();
                    v[pos] = b;
                    assert!(maybe_spaced(&v), "{len} {pos} {b}");
                }
            }
        }
    }

    #[test]
    fn spaces_whitespace_and_comments_outside_literals() {
        assert!(matches!(
            spaced(r#"{a="b"} |= "x""#),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            spaced("{a=\"b\\\"#\\t\"}\t# c\n|= `x\n#`[5m\t#]\r\n"),
            "{a=\"b\\\"#\\t\"}     |= `x\n#`[5m\t#]  "
        );
        // Byte offsets are kept, also after multi-byte text.
        let q = "{a=\"é\"} # ü\n|= \"ö\"";
        assert_eq!(spaced(q).len(), q.len());
        assert_eq!(spaced(q), "{a=\"é\"}      |= \"ö\"");
    }
}
