//! Time functions: Loki's `unixEpochMillis`/`unixEpochNanos`,
//! `toDateInZone`, `unixToTime`, `__timestamp__`, and sprig's `unixEpoch`,
//! `toDate`, `now`, `date`.

use super::Func;
use super::args::{P, R, owned, s, sig, want};
use super::parsing::unix_to_time;
use crate::template::Context;
use crate::template::value::{IntKind, Value};
use crate::time::{self as timefmt, GoTime};

/// `unixEpoch`, `unixEpochMillis`, `unixEpochNanos` of a time, as text.
pub(super) fn unix_epoch<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::T])?;
    let Value::Time(t) = &a[0] else {
        return Err("expected time".into());
    };
    let v = match f {
        Func::UnixEpochMillis => t.unix_millis(),
        Func::UnixEpochNanos => t.unix_nanos(),
        _ => t.secs,
    };
    Ok(owned(v.to_string()))
}

/// `toDateInZone layout zone value`.
pub(super) fn to_date_in_zone<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S, P::S])?;
    // Only UTC (and Local = UTC) zones are known here; Go falls back
    // to UTC for zones it cannot load.
    Ok(Value::Time(
        timefmt::parse(s(&a[0]), s(&a[2])).unwrap_or_else(GoTime::zero),
    ))
}

/// `toDate layout value`.
pub(super) fn to_date<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::S])?;
    Ok(Value::Time(
        timefmt::parse(s(&a[0]), s(&a[1])).unwrap_or_else(GoTime::zero),
    ))
}

/// `unixToTime`: epoch days, seconds, millis, micros or nanos by length.
pub(super) fn unix_to_time_fn<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S])?;
    Ok(Value::Time(
        unix_to_time(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
    ))
}

/// `__timestamp__`: the entry's time.
pub(super) fn timestamp<'a>(a: &[Value<'a>], name: &str, ctx: &dyn Context) -> R<'a> {
    want(a, name, 0)?;
    Ok(Value::Time(GoTime::from_unix_nanos(ctx.timestamp_ns())))
}

/// `now`.
pub(super) fn now<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 0)?;
    Ok(Value::Time(GoTime::from_unix_nanos(now_ns())))
}

/// `date layout t`: `t` may be a time or Unix seconds; anything else is now.
pub(super) fn date<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    sig(a, name, &[P::S, P::A])?;
    let t = match &a[1] {
        Value::Time(t) => t.in_utc(),
        Value::Int(x, IntKind::Int | IntKind::Int64) => GoTime::from_unix(*x),
        _ => GoTime::from_unix_nanos(now_ns()),
    };
    let mut o = String::new();
    t.format_into(&mut o, s(&a[0]));
    Ok(owned(o))
}

/// The wall clock in Unix nanoseconds (0 before 1970).
fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}
