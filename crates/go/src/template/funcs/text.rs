//! Text cutting and padding: `strings.Title`, sprig's `trunc`/`substr`,
//! Go's byte slicing, Loki's `alignLeft`/`alignRight`.

use crate::template::limits::check_len;

/// Go's `strings.Title`.
pub(super) fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            !(c.is_alphabetic() || c.is_numeric()) && c.is_whitespace()
        };
    }
    out
}

/// sprig `trunc`: the first `c` bytes, or the last `-c` when negative.
pub(super) fn sprig_trunc(c: i64, s: &str) -> String {
    let l = s.len() as i64;
    let r = if c < 0 && l + c > 0 {
        s.get((l + c) as usize..)
    } else if c >= 0 && l > c {
        s.get(..c as usize)
    } else {
        Some(s)
    };
    r.map(str::to_string).unwrap_or_else(|| {
        // Go slices bytes; invalid UTF-8 cuts become U+FFFD when printed.
        let b = s.as_bytes();
        let part = if c < 0 {
            &b[(l + c) as usize..]
        } else {
            &b[..c as usize]
        };
        String::from_utf8_lossy(part).into_owned()
    })
}

/// Go's `s[a:b]` on bytes, with the runtime's bounds error.
pub(super) fn slice_bytes(s: &str, a: i64, b: i64) -> Result<String, String> {
    let l = s.len() as i64;
    if a < 0 || b > l || a > b {
        return Err(format!(
            "runtime error: slice bounds out of range [{a}:{b}]"
        ));
    }
    Ok(String::from_utf8_lossy(&s.as_bytes()[a as usize..b as usize]).into_owned())
}

/// sprig `substr`, with the bounds errors Go's slicing raises.
pub(super) fn sprig_substr(start: i64, end: i64, s: &str) -> Result<String, String> {
    let l = s.len() as i64;
    if start < 0 {
        if end > l {
            return Err(format!(
                "runtime error: slice bounds out of range [:{end}] with length {l}"
            ));
        }
        if end < 0 {
            return Err(format!("runtime error: slice bounds out of range [:{end}]"));
        }
        return slice_bytes(s, 0, end);
    }
    if end < 0 || end > l {
        if start > l {
            return Err(format!(
                "runtime error: slice bounds out of range [{start}:{l}]"
            ));
        }
        return slice_bytes(s, start, l);
    }
    if start > end {
        return Err(format!(
            "runtime error: slice bounds out of range [{start}:{end}]"
        ));
    }
    slice_bytes(s, start, end)
}

/// Loki's `alignLeft`/`alignRight`: pads with spaces or cuts to `count`
/// chars; a pad past the output limit is refused rather than allocated.
pub(super) fn align(count: i64, src: &str, left: bool) -> Result<String, String> {
    let l = src.chars().count() as i64;
    if count < 0 || count == l {
        return Ok(src.to_string());
    }
    let pad = count - l;
    if pad > 0 {
        check_len(src.len() as u128 + pad as u128)?;
        let p = " ".repeat(pad as usize);
        return Ok(if left {
            format!("{src}{p}")
        } else {
            format!("{p}{src}")
        });
    }
    Ok(if left {
        src.chars().take(count as usize).collect()
    } else {
        src.chars().skip((l - count) as usize).collect()
    })
}
