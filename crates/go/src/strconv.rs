//! Go's `strconv` (Go 1.26): `Quote`, `IsPrint`, `Unquote`, `ParseFloat` and
//! `ParseInt` ([`parse_int`]).
//!
//! Loki prints every string of a query, a stream selector and most error
//! texts with `strconv.Quote`, and reads every LogQL and template string
//! literal with Go's unquoting. Which characters `Quote` escapes depends on
//! Go's Unicode tables, so [`is_print`] uses Go's own tables
//! ([`isprint`]) rather than an approximation from Rust's `char` methods.

mod atoi;
mod ftoa;
mod isprint;

pub use atoi::{AtoiError, ParseIntError, atoi, parse_int};
pub(crate) use ftoa::format_float_g;

use isprint::{IS_NOT_PRINT16, IS_NOT_PRINT32, IS_PRINT16, IS_PRINT32};

/// Go's `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and
/// the ASCII space, as Go's Unicode tables define them.
pub fn is_print(c: char) -> bool {
    let r = c as u32;
    if r <= 0xff {
        return (0x20..=0x7e).contains(&r) || ((0xa1..=0xff).contains(&r) && r != 0xad);
    }
    if let Ok(r) = u16::try_from(r) {
        return in_ranges(&IS_PRINT16, r) && IS_NOT_PRINT16.binary_search(&r).is_err();
    }
    if !in_ranges(&IS_PRINT32, r) {
        return false;
    }
    if r >= 0x20000 {
        return true;
    }
    // Below 0x20000 the exceptions are stored as 16-bit offsets.
    u16::try_from(r - 0x10000).is_ok_and(|off| IS_NOT_PRINT32.binary_search(&off).is_err())
}

/// Whether `x` lies in one of the inclusive `[start, end]` pairs of `ranges`.
fn in_ranges<T: Ord + Copy>(ranges: &[T], x: T) -> bool {
    // The first entry >= x is either the start or the end of the pair that may hold x.
    let i = ranges.partition_point(|&v| v < x);
    i < ranges.len() && ranges[i & !1] <= x && x <= ranges[i | 1]
}

/// Go's `strconv.Quote`: `s` as a double-quoted Go string literal.
pub fn quote(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    append_quote(&mut out, s);
    // Only ASCII escapes and whole characters of `s` were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Go's `strconv.AppendQuote`: appends `s` quoted, without allocating.
///
/// Printable ASCII without `"` or `\` (most label values) is copied in one
/// piece.
#[inline]
pub fn append_quote(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    if bytes
        .iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut run = 0;
    for (i, c) in s.char_indices() {
        if c != '"'
            && c != '\\'
            && (c == ' ' || c.is_ascii_graphic() || (!c.is_ascii() && is_print(c)))
        {
            continue;
        }
        out.extend_from_slice(&bytes[run..i]);
        run = i + c.len_utf8();
        append_escaped(out, c);
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Go's escape for one character that is not printed as itself.
fn append_escaped(out: &mut Vec<u8>, c: char) {
    let esc: &[u8] = match c {
        '"' => b"\\\"",
        '\\' => b"\\\\",
        '\u{7}' => b"\\a",
        '\u{8}' => b"\\b",
        '\u{c}' => b"\\f",
        '\n' => b"\\n",
        '\r' => b"\\r",
        '\t' => b"\\t",
        '\u{b}' => b"\\v",
        c if c < ' ' || c == '\u{7f}' => {
            out.extend_from_slice(b"\\x");
            return push_hex(out, c as u32, 2);
        }
        c if (c as u32) < 0x10000 => {
            out.extend_from_slice(b"\\u");
            return push_hex(out, c as u32, 4);
        }
        c => {
            out.extend_from_slice(b"\\U");
            return push_hex(out, c as u32, 8);
        }
    };
    out.extend_from_slice(esc);
}

fn push_hex(out: &mut Vec<u8>, v: u32, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for k in (0..digits).rev() {
        out.push(HEX[((v >> (k * 4)) & 0xf) as usize]);
    }
}

/// Why a Go string literal could not be unquoted; `Display` is the message
/// Go's scanner (and so Loki's LogQL lexer) reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UnquoteError {
    /// No closing quote.
    #[error("literal not terminated")]
    NotTerminated,
    /// An unknown escape or one with too few digits.
    #[error("invalid char escape")]
    InvalidEscape,
    /// `\400` and above.
    #[error("octal escape value > 255")]
    OctalRange,
    /// `\u`/`\U` naming a surrogate or a value past U+10FFFF.
    #[error("escape sequence is invalid Unicode code point")]
    InvalidCodePoint,
    /// Byte escapes that do not spell UTF-8 (Go keeps the bytes).
    #[error("invalid UTF-8 rune")]
    InvalidUtf8,
}

/// Go's unquoting of a double-quoted (`"…"`, escapes) or raw (`` `…` ``)
/// literal, as bytes: Go strings are bytes, and `\xc3\xa9` spells `é`.
///
/// Raw literals lose their carriage returns, as in Go.
///
/// # Errors
/// [`UnquoteError`] for a missing quote or a bad escape.
pub fn unquote_bytes(raw: &str) -> Result<Vec<u8>, UnquoteError> {
    if let Some(body) = raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        return Ok(body.replace('\r', "").into_bytes());
    }
    let body = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or(UnquoteError::NotTerminated)?;
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            push_char(&mut out, c);
            continue;
        }
        let e = chars.next().ok_or(UnquoteError::InvalidEscape)?;
        match e {
            'a' => out.push(0x07),
            'b' => out.push(0x08),
            'f' => out.push(0x0c),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'v' => out.push(0x0b),
            '\\' => out.push(b'\\'),
            '"' => out.push(b'"'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let d = chars
                        .next()
                        .and_then(|c| c.to_digit(8))
                        .ok_or(UnquoteError::InvalidEscape)?;
                    v = v * 8 + d;
                }
                out.push(u8::try_from(v).map_err(|_| UnquoteError::OctalRange)?);
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = chars
                        .next()
                        .and_then(|c| c.to_digit(16))
                        .ok_or(UnquoteError::InvalidEscape)?;
                    v = v * 16 + d;
                }
                if e == 'x' {
                    out.push(u8::try_from(v).unwrap_or(u8::MAX));
                } else {
                    let c = char::from_u32(v).ok_or(UnquoteError::InvalidCodePoint)?;
                    push_char(&mut out, c);
                }
            }
            _ => return Err(UnquoteError::InvalidEscape),
        }
    }
    Ok(out)
}

/// [`unquote_bytes`] for a literal that must be valid UTF-8.
///
/// # Errors
/// [`UnquoteError`], [`UnquoteError::InvalidUtf8`] when byte escapes do not
/// spell UTF-8 (Go would keep the bytes; a Rust `String` cannot).
pub fn unquote(raw: &str) -> Result<String, UnquoteError> {
    // Most literals have no escape: one copy instead of a push per char.
    if let Some(body) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        && !body.contains('\\')
    {
        return Ok(body.to_owned());
    }
    String::from_utf8(unquote_bytes(raw)?).map_err(|_| UnquoteError::InvalidUtf8)
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Why Go's `strconv.ParseFloat(s, 64)` refused `s`; `Display` is Go's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFloatError {
    /// Not a Go float literal.
    #[error("strconv.ParseFloat: parsing {}: invalid syntax", quote(.0))]
    Syntax(String),
    /// A finite literal beyond `f64` (Go also returns ±Inf).
    #[error("strconv.ParseFloat: parsing {}: value out of range", quote(.0))]
    Range(String),
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text: an optional sign,
/// digits with one optional `.` and `_` separators between digits, an
/// optional exponent; or `inf`/`infinity` (signed) and `nan` (unsigned),
/// in any case.
///
/// Go's hexadecimal floats (`0x1p-2`) are refused (a known gap: no Loki
/// value has been seen in that form).
///
/// # Errors
/// [`ParseFloatError`] with Go's text.
pub fn parse_float(s: &str) -> Result<f64, ParseFloatError> {
    let syntax = || ParseFloatError::Syntax(s.to_owned());
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if ["inf", "infinity"]
        .iter()
        .any(|w| body.eq_ignore_ascii_case(w))
        || s.eq_ignore_ascii_case("nan")
    {
        return s.parse().map_err(|_| syntax());
    }
    if !is_decimal_float(body) {
        return Err(syntax());
    }
    let v: f64 = if body.contains('_') {
        s.replace('_', "").parse()
    } else {
        s.parse()
    }
    .map_err(|_| syntax())?;
    if v.is_infinite() {
        return Err(ParseFloatError::Range(s.to_owned()));
    }
    Ok(v)
}

/// Go's decimal float syntax (after the sign): mantissa digits with at most
/// one `.` and at least one digit, then `e`/`E`, an optional sign and digits;
/// underscores only between digits.
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let (mut digits, mut dot) = (false, false);
    while i < b.len() {
        match b[i] {
            b'0'..=b'9' => digits = true,
            b'_' => {}
            b'.' if !dot => dot = true,
            _ => break,
        }
        i += 1;
    }
    if !digits {
        return false;
    }
    if i < b.len() && (b[i] | 0x20) == b'e' {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len() && underscores_between_digits(s)
}

/// Go's `underscoreOK` for a decimal number: each `_` between two digits.
fn underscores_between_digits(s: &str) -> bool {
    let mut prev = b'^';
    for &c in s.as_bytes() {
        match c {
            b'0'..=b'9' => prev = b'0',
            b'_' if prev != b'0' => return false,
            b'_' => prev = b'_',
            _ if prev == b'_' => return false,
            _ => prev = b'!',
        }
    }
    prev != b'_'
}

#[cfg(test)]
mod tests;
