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
use crate::template::limits::check_len;
use crate::template::value::{IntKind, Value};

/// The slot of a literal pattern (`re`, filled at its first use), or none
/// for a pattern compiled per call.
type Compiled<'r> = Option<&'r std::sync::OnceLock<Result<regex::Regex, String>>>;

fn compile<'r>(re: Compiled<'r>, p: &str) -> Result<Cow<'r, regex::Regex>, String> {
    match re.map(|slot| slot.get_or_init(|| regex(p))) {
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

/// Refuses a `strings.Replace` of at most `n` (all if negative)
/// occurrences whose result would pass the output limit, before building
/// it: an empty `old` matches between every character.
pub(super) fn check_replace(src: &str, old: &str, new: &str, n: i64) -> Result<(), String> {
    if new.len() <= old.len() {
        return Ok(());
    }
    let mut count = src.matches(old).count() as u128;
    if n >= 0 {
        count = count.min(n as u128);
    }
    check_len(src.len() as u128 + count * (new.len() - old.len()) as u128)
}

/// `Replace src old new n` (`strings.Replace`; `n < 0` replaces all).
pub(super) fn replace<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S, P::I])?;
    let (src, old, new, n) = (s(&a[0]), s(&a[1]), s(&a[2]), i(&a[3]));
    check_replace(src, old, new, n).map_err(|e| format!("error calling {name}: {e}"))?;
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
/// `regexReplaceAllLiteral` (without). Built match by match, as the regex
/// crate's `replace_all` does, so that a replacement repeated over many
/// matches stops at the output limit instead of growing without bound.
pub(super) fn regex_replace<'a>(f: Func, a: &[Value<'a>], name: &str, re: Compiled<'_>) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S])?;
    let re = compile(re, s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?;
    let (src, repl) = (s(&a[1]), s(&a[2]));
    let mut out = String::with_capacity(src.len());
    let mut last = 0;
    let mut push = |out: &mut String, start: usize, end: usize, caps: Option<&regex::Captures>| {
        out.push_str(&src[last..start]);
        match caps {
            Some(c) => c.expand(repl, out),
            None => out.push_str(repl),
        }
        last = end;
        check_len(out.len() as u128).map_err(|e| format!("error calling {name}: {e}"))
    };
    if f == Func::RegexReplaceAll {
        for c in re.captures_iter(src) {
            let m = c.get(0).expect("group 0 is the match");
            push(&mut out, m.start(), m.end(), Some(&c))?;
        }
    } else {
        for m in re.find_iter(src) {
            push(&mut out, m.start(), m.end(), None)?;
        }
    }
    out.push_str(&src[last..]);
    Ok(owned(out))
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
    Ok(owned(
        align(i(&a[0]), s(&a[1]), f == Func::AlignLeft)
            .map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `__line__`: the log line being formatted.
pub(super) fn line<'a>(a: &[Value<'a>], name: &str, ctx: &'a dyn Context) -> R<'a> {
    want(a, name, 0)?;
    Ok(Value::Str(Cow::Borrowed(ctx.line())))
}
