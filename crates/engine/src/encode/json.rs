//! Small JSON writers that append straight to a byte buffer.
//!
//! The Loki answers are written by hand rather than through serde so that
//! decoded rows go from the VictoriaLogs body to the response without
//! intermediate values.
//!
//! String escaping follows Go's `encoding/json` (which Loki's encoder
//! matches): `"` and `\` escaped, `\n` `\r` `\t` short forms, other control
//! characters as `\u00XX`, and the HTML-sensitive `<`, `>`, `&` plus U+2028
//! and U+2029 as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`. The HTML
//! escapes are not needed for JSON; they are kept so that the proxy's bytes
//! equal Loki's, which makes side-by-side diffs with real Loki quiet.

use std::io::Write as _;

/// Which characters a JSON string escapes beyond what JSON requires.
///
/// lokivl has two rules: the query answers (`query_range`, `query`, the
/// Drilldown answers built on them) escape the HTML-sensitive `<`, `>`, `&`
/// and U+2028/U+2029 as Go's `encoding/json` does and write `\b`/`\f` as
/// `\u0008`/`\u000c`, as Loki's answers do; the tail frames do not escape
/// HTML and use the short `\b`/`\f` forms (the rule of `serde_json`,
/// through which the metadata answers are written; the tail frames are
/// compared with Loki 3.7.8's by `tests/differential_tail.rs`). Both rules
/// are one routine, [`write_str_body_as`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    /// Go's `encoding/json` with HTML escaping (the query answers).
    Html,
    /// No HTML escaping, short `\b` and `\f` (tail frames, metadata).
    Plain,
}

/// What to write for a byte under [`Escape::Html`]: 0 = itself, otherwise
/// the escape kind.
const ESCAPE: [u8; 256] = {
    let mut t = PLAIN;
    t[0x08] = b'u';
    t[0x0c] = b'u';
    t[b'<' as usize] = b'u';
    t[b'>' as usize] = b'u';
    t[b'&' as usize] = b'u';
    // First byte of U+2028/U+2029 (E2 80 A8/A9): checked further.
    t[0xE2] = b'L';
    t
};

/// What to write for a byte under [`Escape::Plain`].
const PLAIN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x0c] = b'f';
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes `s` as a quoted, escaped JSON string.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_str_body(out, s);
    out.push(b'"');
}

/// Writes the escaped contents of `s` without the surrounding quotes.
pub fn write_str_body(out: &mut Vec<u8>, s: &str) {
    write_str_body_as(out, s, Escape::Html);
}

/// Writes `s` as a quoted JSON string escaped by `rule`.
pub fn write_str_as(out: &mut Vec<u8>, s: &str, rule: Escape) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_str_body_as(out, s, rule);
    out.push(b'"');
}

/// Writes the contents of `s` escaped by `rule`, without the quotes.
pub fn write_str_body_as(out: &mut Vec<u8>, s: &str, rule: Escape) {
    let table = match rule {
        Escape::Html => &ESCAPE,
        Escape::Plain => &PLAIN,
    };
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Look at eight bytes at a time and jump to the first one that may
        // need escaping (the lowest flagged byte is exact).
        if let Some(chunk) = bytes.get(i..i + 8)
            && let Ok(word) = <[u8; 8]>::try_from(chunk)
        {
            let mask = escape_mask(u64::from_le_bytes(word));
            if mask == 0 {
                i += 8;
                continue;
            }
            i += (mask.trailing_zeros() / 8) as usize;
        }
        let b = bytes[i];
        let kind = table[b as usize];
        if kind == 0 {
            i += 1;
            continue;
        }
        if kind == b'L' {
            match bytes.get(i + 1..i + 3) {
                Some([0x80, third @ (0xA8 | 0xA9)]) => {
                    out.extend_from_slice(&bytes[start..i]);
                    out.extend_from_slice(if *third == 0xA8 {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                    i += 3;
                    start = i;
                }
                _ => i += 1,
            }
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        match kind {
            b'u' => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xf) as usize],
            ]),
            c => out.extend_from_slice(&[b'\\', c]),
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// High bits set for zero bytes of `w`; the lowest set bit is exact (higher
/// ones may be false positives from borrows, which only cost a table check).
#[inline]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// High bits flagging bytes of `w` that may need the slow path: a control
/// character, `"`, `\`, `<`, `>`, `&`, or 0xE2 (lead byte of U+2028/U+2029),
/// a superset of what either [`Escape`] rule escapes.
#[inline]
fn escape_mask(w: u64) -> u64 {
    (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
        | zero_bytes(w ^ (ONES * u64::from(b'"')))
        | zero_bytes(w ^ (ONES * u64::from(b'\\')))
        | zero_bytes(w ^ (ONES * u64::from(b'<')))
        | zero_bytes(w ^ (ONES * u64::from(b'>')))
        | zero_bytes(w ^ (ONES * u64::from(b'&')))
        | zero_bytes(w ^ (ONES * 0xE2))
}

/// Writes an unsigned integer.
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes a signed integer.
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes a signed integer as a JSON string (Loki's nanosecond timestamps).
pub fn write_i64_str(out: &mut Vec<u8>, v: i64) {
    out.push(b'"');
    write_i64(out, v);
    out.push(b'"');
}

/// Writes a float in its shortest round-trip decimal form; JSON has no NaN
/// or infinity, so those are written as `0`.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.push(b'0');
        return;
    }
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}

/// Writes `"key":` (the key must not need escaping).
pub fn write_key(out: &mut Vec<u8>, key: &str) {
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, v);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(s("plain"), r#""plain""#);
        assert_eq!(s(""), r#""""#);
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("l1\nl2\r\t"), r#""l1\nl2\r\t""#);
        assert_eq!(s("\u{0}\u{1f}\u{8}\u{c}"), r#""\u0000\u001f\u0008\u000c""#);
        assert_eq!(
            s("<a href=\"x\">&</a>"),
            r#""\u003ca href=\"x\"\u003e\u0026\u003c/a\u003e""#
        );
        assert_eq!(s("é 😀 \u{7f}"), "\"é 😀 \u{7f}\"");
        assert_eq!(
            s("x\u{2028}y\u{2029}z\u{2027}"),
            "\"x\\u2028y\\u2029z\u{2027}\""
        );
        assert_eq!(s("€"), "\"€\"");
    }

    #[test]
    fn word_scan_finds_specials_at_every_position() {
        let cases = [
            ("\"", r#"\""#),
            ("\\", r"\\"),
            ("<", r"\u003c"),
            (">", r"\u003e"),
            ("&", r"\u0026"),
            ("\n", r"\n"),
            ("\u{1}", r"\u0001"),
            ("\u{2028}", r"\u2028"),
        ];
        for (special, escaped) in cases {
            for pos in 0..17 {
                let (a, b) = ("a".repeat(pos), "b".repeat(20));
                assert_eq!(
                    s(&format!("{a}{special}{b}")),
                    format!("\"{a}{escaped}{b}\"")
                );
            }
        }
        // Non-special high bytes (é = C3 A9, € = E2 82 AC) pass through.
        assert_eq!(s("abcdefgé€hijklmnop"), "\"abcdefgé€hijklmnop\"");
    }

    #[test]
    fn escaped_output_round_trips_through_serde_json() {
        let input = "mixed <tag> & \"quotes\" \\ \n\t\u{1} é 😀 \u{2028}";
        let out = s(input);
        let back: String = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(back, input);
    }

    #[test]
    fn writes_numbers() {
        let mut out = Vec::new();
        write_u64(&mut out, 0);
        out.push(b' ');
        write_i64(&mut out, -42);
        out.push(b' ');
        write_i64_str(&mut out, 1_724_325_600_123_456_789);
        out.push(b' ');
        write_f64(&mut out, 0.087827);
        out.push(b' ');
        write_f64(&mut out, 2.0);
        out.push(b' ');
        write_f64(&mut out, f64::NAN);
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            r#"0 -42 "1724325600123456789" 0.087827 2 0"#
        );
    }
}
