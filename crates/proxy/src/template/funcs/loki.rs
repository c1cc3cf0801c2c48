//! The string functions of Loki's own function map: Go's `strings`
//! package, regular expressions, URL coding, byte sizes, durations,
//! alignment and `__line__`.

use std::borrow::Cow;

use super::Func;
use super::args::{P, R, i, owned, s, sig, want};
use super::encode::{query_escape, query_unescape};
use super::parsing::{parse_bytes, parse_duration, regex};
use super::text::align;
use crate::template::Context;
use crate::template::value::{IntKind, Value};

/// A pattern compiled at parse time when it was a literal (`re`), else now.
type Compiled<'r> = Option<&'r Result<regex::Regex, String>>;

fn compile<'r>(re: Compiled<'r>, p: &str) -> Result<Cow<'r, regex::Regex>, String> {
    match re {
        Some(Ok(r)) => Ok(Cow::Borrowed(r)),
        Some(Err(e)) => Err(e.clone()),
        None => regex(p).map(Cow::Owned),
    }
}

/// `ToLower` and sprig's `lower`.
pub(super) fn to_lower<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(s(&a[0]).to_lowercase()))
}

/// `ToUpper` and sprig's `upper`.
pub(super) fn to_upper<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(s(&a[0]).to_uppercase()))
}

/// `Replace src old new n` (`strings.Replace`; `n < 0` replaces all).
pub(super) fn replace<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S, P::I])?;
    let (src, old, new, n) = (s(&a[0]), s(&a[1]), s(&a[2]), i(&a[3]));
    Ok(owned(if n < 0 {
        src.replace(old, new)
    } else {
        src.replacen(old, new, n as usize)
    }))
}

/// `Trim`, `TrimLeft`, `TrimRight`: the second argument is a set of chars.
pub(super) fn trim<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let set: Vec<char> = s(&a[1]).chars().collect();
    let src = s(&a[0]);
    Ok(owned(
        match f {
            Func::Trim => src.trim_matches(set.as_slice()),
            Func::TrimLeft => src.trim_start_matches(set.as_slice()),
            _ => src.trim_end_matches(set.as_slice()),
        }
        .to_string(),
    ))
}

/// `TrimPrefix src x`, `TrimSuffix src x`.
pub(super) fn trim_affix<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let (src, x) = (s(&a[0]), s(&a[1]));
    Ok(owned(
        if f == Func::TrimPrefix {
            src.strip_prefix(x)
        } else {
            src.strip_suffix(x)
        }
        .unwrap_or(src)
        .to_string(),
    ))
}

/// `TrimSpace` and sprig's `trim`.
pub(super) fn trim_space<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(s(&a[0]).trim().to_string()))
}

/// `regexReplaceAll re src repl` (with `$1` expansion) and
/// `regexReplaceAllLiteral` (without).
pub(super) fn regex_replace<'a>(f: Func, a: &[Value<'a>], name: &str, re: Compiled<'_>) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S])?;
    let re = compile(re, s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?;
    let (src, repl) = (s(&a[1]), s(&a[2]));
    Ok(owned(if f == Func::RegexReplaceAll {
        re.replace_all(src, repl).into_owned()
    } else {
        re.replace_all(src, regex::NoExpand(repl)).into_owned()
    }))
}

/// `count re src`: non-overlapping matches.
pub(super) fn count<'a>(a: &[Value<'a>], name: &str, re: Compiled<'_>) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    let re = compile(re, s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?;
    Ok(Value::Int(
        re.find_iter(s(&a[1])).count() as i64,
        IntKind::Int,
    ))
}

/// `urldecode` (`url.QueryUnescape`).
pub(super) fn urldecode<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(
        query_unescape(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `urlencode` (`url.QueryEscape`).
pub(super) fn urlencode<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(owned(query_escape(s(&a[0]))))
}

/// `bytes`: a humanized size as a float number of bytes.
pub(super) fn bytes<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(Value::Float(
        parse_bytes(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `duration` and `duration_seconds`: a Go duration in seconds.
pub(super) fn duration<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(Value::Float(
        parse_duration(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `alignLeft n src`, `alignRight n src`: pad or cut to `n` chars.
pub(super) fn align_to<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::I, P::S])?;
    Ok(owned(align(i(&a[0]), s(&a[1]), f == Func::AlignLeft)))
}

/// `__line__`: the log line being formatted.
pub(super) fn line<'a>(a: &[Value<'a>], name: &str, ctx: &'a dyn Context) -> R<'a> {
    want(a, name, 0)?;
    Ok(Value::Str(Cow::Borrowed(ctx.line())))
}
