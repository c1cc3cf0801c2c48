//! Argument checks as Go's `text/template` reports them when a call's
//! arguments do not fit the function's Go signature, and the accessors the
//! functions use once the checks have passed.

use std::borrow::Cow;

use crate::template::value::{IntKind, Value};

/// Parameter types, for Go's argument checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum P {
    S,
    I,
    T,
    A,
}

pub(super) type R<'a> = Result<Value<'a>, String>;

/// Go's arity check for a function of exactly `n` parameters.
pub(super) fn want(args: &[Value<'_>], name: &str, n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// Go's arity check for a variadic function with `n` fixed parameters.
pub(super) fn want_at_least(args: &[Value<'_>], name: &str, n: usize) -> Result<(), String> {
    if args.len() < n {
        return Err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// Go's assignability check of one argument to a parameter type.
pub(super) fn check(v: &Value<'_>, p: P) -> Result<(), String> {
    let ok = matches!(
        (p, v),
        (P::A, _)
            | (P::S, Value::Str(_))
            | (P::I, Value::Int(_, IntKind::Int))
            | (P::T, Value::Time(_))
    );
    if ok {
        return Ok(());
    }
    let want = match p {
        P::S => "string",
        P::I => "int",
        P::T => "time.Time",
        P::A => "interface {}",
    };
    if matches!(v, Value::Nil) {
        return Err(format!("invalid value; expected {want}"));
    }
    Err(format!(
        "wrong type for value; expected {want}; got {}",
        v.type_name()
    ))
}

/// Marks a type error with the index of the offending argument, so the
/// executor can point at that argument as Go does (see `split_arg_err`).
pub(super) fn arg_err(k: usize, e: String) -> String {
    format!("\u{1}{k}\u{1}{e}")
}

/// Splits a message made by [`arg_err`] into (argument index, message).
pub(crate) fn split_arg_err(m: &str) -> Option<(usize, &str)> {
    let rest = m.strip_prefix('\u{1}')?;
    let (k, msg) = rest.split_once('\u{1}')?;
    Some((k.parse().ok()?, msg))
}

/// Checks a fixed signature.
pub(super) fn sig(args: &[Value<'_>], name: &str, ps: &[P]) -> Result<(), String> {
    want(args, name, ps.len())?;
    for (k, (a, p)) in args.iter().zip(ps).enumerate() {
        check(a, *p).map_err(|e| arg_err(k, e))?;
    }
    Ok(())
}

/// A checked string argument ("" if the check was skipped).
pub(super) fn s<'v>(v: &'v Value<'_>) -> &'v str {
    v.as_str().unwrap_or("")
}

/// A checked int argument (0 if the check was skipped).
pub(super) fn i(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        _ => 0,
    }
}

/// A computed string as a value.
pub(super) fn owned<'a>(s: String) -> Value<'a> {
    Value::Str(Cow::Owned(s))
}
