//! Encodings: URL query escaping, base64, and the HTML/JS escapers of Go's
//! `text/template`.

use crate::template::printf::go_quote;

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
                    return Err(format!("invalid URL escape {}", go_quote(&bad)));
                }
                match (hex(b[k + 1]), hex(b[k + 2])) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => {
                        let bad = String::from_utf8_lossy(&b[k..k + 3]).into_owned();
                        return Err(format!("invalid URL escape {}", go_quote(&bad)));
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

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// sprig `b64enc`: standard base64 with padding.
pub(super) fn b64enc(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// sprig `b64dec`: on failure the result is Go's error text.
pub(super) fn b64dec(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    let mut acc = 0u32;
    let mut nbits = 0;
    let mut pad_at: Option<usize> = None;
    for (k, &c) in b.iter().enumerate() {
        if c == b'\r' || c == b'\n' {
            continue;
        }
        if c == b'=' {
            pad_at.get_or_insert(k);
            continue;
        }
        if pad_at.is_some() {
            return format!("illegal base64 data at input byte {}", pad_at.unwrap_or(k));
        }
        let Some(v) = B64.iter().position(|x| *x == c) else {
            return format!("illegal base64 data at input byte {k}");
        };
        acc = acc << 6 | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((acc >> nbits) as u8);
            acc &= (1 << nbits) - 1;
        }
    }
    let data_len = b.iter().filter(|c| !matches!(c, b'\r' | b'\n')).count();
    if data_len % 4 != 0 {
        return format!("illegal base64 data at input byte {}", data_len / 4 * 4);
    }
    String::from_utf8_lossy(&out).into_owned()
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
