//! The lenient JSON scanner Loki's parsers read lines with
//! (grafana/jsonparser): values are found by position without building a
//! tree, a malformed line can still yield the members before the fault, and
//! the error texts are the scanner's, word for word.

use std::borrow::Cow;

/// The scanner's error messages, word for word.
pub(crate) const MALFORMED_JSON: &str = "Malformed JSON error";
pub(crate) const MALFORMED_STRING: &str = "Value is string, but can't find closing '\"' symbol";
pub(crate) const MALFORMED_ARRAY: &str = "Value is array, but can't find closing ']' symbol";
pub(crate) const MALFORMED_OBJECT: &str =
    "Value looks like object, but can't find closing '}' symbol";
pub(crate) const MALFORMED_VALUE: &str =
    "Value looks like Number/Boolean/None, but can't find its end: ',' or '}' symbol";
pub(crate) const UNKNOWN_VALUE_TYPE: &str = "Unknown value type";
pub(crate) const MALFORMED_ESCAPE: &str = "Encountered an invalid escape sequence in a string";

/// A JSON value kind as the scanner sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    String,
    Number,
    Boolean,
    Null,
    Array,
    Object,
}

/// One scanned value: its kind and its raw bytes (strings without quotes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Value<'a> {
    pub(crate) kind: Kind,
    pub(crate) raw: &'a str,
}

pub(crate) fn next_token(d: &[u8], from: usize) -> Option<usize> {
    d[from.min(d.len())..]
        .iter()
        .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
        .map(|p| from + p)
}

/// The end (one past the closing quote) of a string whose body starts at
/// `from`, and whether it holds a backslash. Jumps between quotes and
/// backslashes with `memchr2`; a backslash escapes the byte after it, which
/// is what counting the backslashes before a quote amounts to.
pub(crate) fn string_end(d: &[u8], from: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    let mut i = from;
    while i < d.len() {
        i += memchr::memchr2(b'"', b'\\', &d[i..])?;
        if d[i] == b'"' {
            return Some((i + 1, escaped));
        }
        escaped = true;
        i += 2;
    }
    None
}

/// The end (one past the closing bracket) of the block opening at `from`,
/// skipping strings; jumps between the interesting bytes with `memchr3`.
pub(crate) fn block_end(d: &[u8], from: usize, open: u8, close: u8) -> Option<usize> {
    let mut level = 0i32;
    let mut i = from;
    while i < d.len() {
        i += memchr::memchr3(b'"', open, close, &d[i..])?;
        match d[i] {
            b'"' => {
                let (e, _) = string_end(d, i + 1)?;
                i = e - 1;
            }
            c if c == open => level += 1,
            _ => {
                level -= 1;
                if level == 0 {
                    return Some(i + 1);
                }
            }
        }
        i += 1;
    }
    None
}

pub(crate) fn token_end(d: &[u8], from: usize) -> usize {
    d[from..]
        .iter()
        .position(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',' | b'}' | b']'))
        .map_or(d.len(), |p| from + p)
}

/// Unescapes a JSON string body; `None` on an invalid escape.
pub(crate) fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '/' => out.push('/'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let hi = hex4(&mut chars)?;
                if (0xD800..0xDC00).contains(&hi) {
                    let rest = chars.as_str();
                    if let Some(after) = rest.strip_prefix("\\u") {
                        let mut it = after.chars();
                        if let Some(lo) = hex4(&mut it).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                            chars = it;
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                            continue;
                        }
                    }
                    out.push('\u{FFFD}');
                } else {
                    out.push(char::from_u32(hi).unwrap_or('\u{FFFD}'));
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        v = v * 16 + chars.next()?.to_digit(16)?;
    }
    Some(v)
}

/// A string value as Loki reads it: unescaped (`""` on a bad escape), with
/// U+FFFD replaced by a space.
pub(crate) fn string_value(raw: &str) -> Cow<'_, str> {
    let b = raw.as_bytes();
    // The common case: no escape, and ASCII so no U+FFFD either.
    if b.is_ascii() && memchr::memchr(b'\\', b).is_none() {
        return Cow::Borrowed(raw);
    }
    let s = if memchr::memchr(b'\\', b).is_some() {
        Cow::Owned(unescape(raw).unwrap_or_default())
    } else {
        Cow::Borrowed(raw)
    };
    if s.contains('\u{FFFD}') {
        Cow::Owned(s.replace('\u{FFFD}', " "))
    } else {
        s
    }
}

pub(crate) fn scalar_value(v: Value<'_>) -> Cow<'_, str> {
    match v.kind {
        Kind::String => string_value(v.raw),
        Kind::Null => Cow::Borrowed(""),
        _ => Cow::Borrowed(v.raw),
    }
}

/// Which bytes are `[A-Za-z0-9_]` (a table beats the range tests per byte).
static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = c.is_ascii_alphanumeric() || c == b'_';
        i += 1;
    }
    t
};

/// Appends `key` sanitised the way Loki's `appendSanitized` does: trimmed,
/// `_` before a leading digit when `out` is empty, `_` for every character
/// outside `[A-Za-z0-9_]`.
pub(crate) fn append_sanitized(out: &mut String, key: &str) {
    // Fast path: a key of `[A-Za-z0-9_]` only needs no trimming or mapping.
    let b = key.as_bytes();
    if !b.is_empty() && b.iter().all(|&c| WORD[usize::from(c)]) {
        if out.is_empty() && b[0].is_ascii_digit() {
            out.push('_');
        }
        out.push_str(key);
        return;
    }
    let key = key.trim();
    if key.is_empty() {
        return;
    }
    if out.is_empty() && key.as_bytes()[0].is_ascii_digit() {
        out.push('_');
    }
    for c in key.chars() {
        out.push(if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        });
    }
}
