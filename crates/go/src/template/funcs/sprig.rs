//! The sprig text and value functions Loki imports: base64, `title`,
//! `trunc`, `substr`, the `contains` family, `indent`, `replace`, `repeat`,
//! `trimAll`/`trimPrefix`/`trimSuffix`, `fromJson` and `default`.
//! Sprig puts the string being worked on last, unlike Go's `strings`.

use super::Func;
use super::args::{P, R, i, owned, s, sig, want_at_least};
use super::compare::empty;
use super::encode::{b64dec, b64enc};
use super::text::{sprig_substr, sprig_trunc, title};
use crate::template::Context;
use crate::template::limits::{check_len, check_repeat};
use crate::template::value::Value;

/// `b64enc`.
pub(super) fn b64enc_fn<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(b64enc(s(&a[0]))))
}

/// `b64dec`: on bad input the result is Go's error text, not an error.
pub(super) fn b64dec_fn<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(b64dec(s(&a[0]))))
}

/// `title`.
pub(super) fn title_fn<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(title(s(&a[0]))))
}

/// `trunc n src`.
pub(super) fn trunc<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::I, P::S])?;
    Ok(owned(sprig_trunc(i(&a[0]), s(&a[1]))))
}

/// `substr start end src`.
pub(super) fn substr<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::I, P::I, P::S])?;
    Ok(owned(
        sprig_substr(i(&a[0]), i(&a[1]), s(&a[2]))
            .map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `contains x src`, `hasPrefix x src`, `hasSuffix x src`.
pub(super) fn contains<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let (x, src) = (s(&a[0]), s(&a[1]));
    Ok(Value::Bool(match f {
        Func::Contains => src.contains(x),
        Func::HasPrefix => src.starts_with(x),
        _ => src.ends_with(x),
    }))
}

/// `indent n src`, and `nindent` which also starts a new line. The pad is
/// Go's `strings.Repeat(" ", n)`: a negative `n` fails as its panic does.
pub(super) fn indent<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::I, P::S])?;
    let (n, src) = (i(&a[0]), s(&a[1]));
    let fail = |e: String| format!("error calling {name}: {e}");
    check_repeat(n, 1).map_err(fail)?;
    let lines = src.bytes().filter(|b| *b == b'\n').count() as u128 + 1;
    check_len(1 + src.len() as u128 + lines * n as u128).map_err(fail)?;
    let pad = " ".repeat(n as usize);
    let body = format!("{pad}{}", src.replace('\n', &format!("\n{pad}")));
    Ok(owned(if f == Func::Nindent {
        format!("\n{body}")
    } else {
        body
    }))
}

/// `replace old new src`.
pub(super) fn replace<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S])?;
    let (old, new, src) = (s(&a[0]), s(&a[1]), s(&a[2]));
    super::loki::check_replace(src, old, new, -1)
        .map_err(|e| format!("error calling {name}: {e}"))?;
    Ok(owned(src.replace(old, new)))
}

/// `repeat n src`, refusing what Go's `strings.Repeat` panics on.
pub(super) fn repeat<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::I, P::S])?;
    let (n, src) = (i(&a[0]), s(&a[1]));
    check_repeat(n, src.len()).map_err(|e| format!("error calling {name}: {e}"))?;
    Ok(owned(src.repeat(n as usize)))
}

/// `trimAll set src`.
pub(super) fn trim_all<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let set: Vec<char> = s(&a[0]).chars().collect();
    Ok(owned(s(&a[1]).trim_matches(set.as_slice()).to_string()))
}

/// `trimPrefix x src`, `trimSuffix x src`.
pub(super) fn trim_affix<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let (x, src) = (s(&a[0]), s(&a[1]));
    Ok(owned(
        if f == Func::STrimPrefix {
            src.strip_prefix(x)
        } else {
            src.strip_suffix(x)
        }
        .unwrap_or(src)
        .to_string(),
    ))
}

/// `fromJson`: invalid JSON is nil, as sprig swallows the error.
pub(super) fn from_json<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(match serde_json::from_str::<serde_json::Value>(s(&a[0])) {
        Ok(v) => Value::from_json(v),
        Err(_) => Value::Nil,
    })
}

/// `default d given`: `given` unless it is empty.
pub(super) fn default<'a>(a: &[Value<'a>], name: &str, ctx: &dyn Context) -> R<'a> {
    want_at_least(a, name, 1)?;
    Ok(match a.get(1) {
        Some(g) if !empty(g, ctx) => g.clone(),
        _ => a[0].clone(),
    })
}
