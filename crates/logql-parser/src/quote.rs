//! Go string literals: unquoting as Loki's lexer does and quoting as Go's
//! `strconv.Quote` does, because Loki prints every string with it.

/// Unquotes a double-quoted (Go escapes) or backtick (raw) literal.
///
/// The error is the message Loki's scanner reports for the bad escape.
pub(crate) fn unquote(raw: &str) -> Result<String, &'static str> {
    if let Some(body) = raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        // Go drops carriage returns from raw strings.
        return Ok(body.replace('\r', ""));
    }
    let body = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or("literal not terminated")?;
    // Most literals have no escape: one copy instead of a push per char.
    if !body.contains('\\') {
        return Ok(body.to_string());
    }
    // Bytes, as Go's unquoting builds them: `\xc3\xa9` is `é`.
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            push_char(&mut out, c);
            continue;
        }
        let e = chars.next().ok_or("invalid char escape")?;
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
                        .ok_or("invalid char escape")?;
                    v = v * 8 + d;
                }
                if v > 255 {
                    return Err("octal escape value > 255");
                }
                out.push(u8::try_from(v).unwrap_or(u8::MAX));
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
                        .ok_or("invalid char escape")?;
                    v = v * 16 + d;
                }
                if e == 'x' {
                    out.push(u8::try_from(v).unwrap_or(u8::MAX));
                } else {
                    let c =
                        char::from_u32(v).ok_or("escape sequence is invalid Unicode code point")?;
                    push_char(&mut out, c);
                }
            }
            _ => return Err("invalid char escape"),
        }
    }
    // Loki accepts byte escapes that make invalid UTF-8 (`"\xff"`); an AST
    // of `String`s cannot hold them, so lokivl refuses them (a known gap).
    String::from_utf8(out).map_err(|_| "invalid UTF-8 rune")
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// Quotes `s` exactly as Go's `strconv.Quote` does.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_printable(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint`: graphic characters and the
/// ASCII space, not control or format characters.
fn is_go_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32, 0xad | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquotes_go_escapes() {
        assert_eq!(unquote(r#""a\"b\n\x41\u00e9\101""#).unwrap(), "a\"b\nAéA");
        assert_eq!(unquote(r"`a\d+`").unwrap(), r"a\d+");
        assert_eq!(unquote(r#""\q""#), Err("invalid char escape"));
        // Byte escapes are bytes: together they may spell a character.
        assert_eq!(unquote(r#""\xc3\xa9\303\251""#).unwrap(), "éé");
        assert_eq!(unquote(r#""\xff""#), Err("invalid UTF-8 rune"));
    }

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote("a\"b\\c\n\té"), r#""a\"b\\c\n\té""#);
        assert_eq!(go_quote("\u{1}"), r#""\x01""#);
    }
}
