//! Encodings: URL query escaping, base64, and the HTML/JS escapers of Go's
//! `text/template`.

use crate::strconv::quote;

/// Go's `url.QueryEscape`.
pub(super) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `url.QueryUnescape`.
pub(super) fn query_unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                if k + 2 >= b.len() {
                    let bad: String = s[k..].chars().take(3).collect();
                    return Err(format!("invalid URL escape {}", quote(&bad)));
                }
                match (hex(b[k + 1]), hex(b[k + 2])) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => {
                        let bad = String::from_utf8_lossy(&b[k..k + 3]).into_owned();
                        return Err(format!("invalid URL escape {}", quote(&bad)));
                    }
                }
                k += 3;
            }
            b'+' => {
                out.push(b' ');
                k += 1;
            }
            c => {
                out.push(c);
                k += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// sprig `b64enc`: standard base64 with padding.
pub(super) fn b64enc(s: &str) -> String {
    crate::base64::encode(s.as_bytes())
}

/// sprig `b64dec`: on failure the result is Go's error text.
pub(super) fn b64dec(s: &str) -> String {
    match crate::base64::decode(s) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e.to_string(),
    }
}

/// Go's `template.HTMLEscapeString`.
pub(super) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Go's `template.JSEscapeString`.
pub(super) fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 || c.is_control() => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}
