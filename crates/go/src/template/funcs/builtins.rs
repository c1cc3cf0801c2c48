//! Go's `text/template` builtins: logic, comparison, `len`, `index`,
//! `slice`, the `print` family and the `html`/`js`/`urlquery` escapers.

use std::borrow::Cow;
use std::rc::Rc;

use super::Func;
use super::args::{P, R, arg_err, check, i, owned, s, want, want_at_least};
use super::compare::{eq_values, lt_values};
use super::encode::{html_escape, js_escape, query_escape};
use super::text::slice_bytes;
use crate::template::Context;
use crate::template::limits::result_too_large;
use crate::template::printf::{sprint, sprintf, sprintln};
use crate::template::value::{IntKind, Value};

/// `and`/`or` short-circuit in the executor, which never calls them here;
/// the value is what they would return with every argument evaluated.
pub(super) fn and_or<'a>(a: &[Value<'a>]) -> Value<'a> {
    a.last().cloned().unwrap_or(Value::Nil)
}

/// `not`.
pub(super) fn not<'a>(a: &[Value<'a>], name: &str, ctx: &'a dyn Context) -> R<'a> {
    want(a, name, 1)?;
    Ok(Value::Bool(!a[0].truth(ctx)))
}

/// `eq` (true when the first argument equals any other) and `ne`.
pub(super) fn eq<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, if f == Func::Ne { 2 } else { 1 })?;
    if f == Func::Ne {
        want(a, name, 2)?;
        return Ok(Value::Bool(!eq_values(&a[0], &a[1])?));
    }
    if a.len() == 1 {
        return Err("missing argument for comparison".into());
    }
    let mut r = false;
    for b in &a[1..] {
        if eq_values(&a[0], b)? {
            r = true;
            break;
        }
    }
    Ok(Value::Bool(r))
}

/// `lt`, `le`, `gt`, `ge`.
pub(super) fn order<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 2)?;
    let r = match f {
        Func::Lt => lt_values(&a[0], &a[1])?,
        Func::Le => lt_values(&a[0], &a[1])? || eq_values(&a[0], &a[1])?,
        Func::Gt => !(lt_values(&a[0], &a[1])? || eq_values(&a[0], &a[1])?),
        _ => !lt_values(&a[0], &a[1])?,
    };
    Ok(Value::Bool(r))
}

/// `len`: bytes of a string, items of a list or map, labels of `.`.
pub(super) fn len<'a>(a: &[Value<'a>], name: &str, ctx: &'a dyn Context) -> R<'a> {
    want(a, name, 1)?;
    let n = match &a[0] {
        Value::Str(s) => s.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.len(),
        Value::Labels => {
            let mut n = 0;
            ctx.for_each_label(&mut |_, _| n += 1);
            n
        }
        Value::Nil => return Err("len of nil pointer".into()),
        v => return Err(format!("len of type {}", v.type_name())),
    };
    Ok(Value::Int(n as i64, IntKind::Int))
}

/// `index`: list items, string bytes, map and label values.
pub(super) fn index<'a>(a: &[Value<'a>], name: &str, ctx: &'a dyn Context) -> R<'a> {
    want_at_least(a, name, 1)?;
    let mut cur = a[0].clone();
    for ix in &a[1..] {
        cur = match (&cur, ix) {
            (Value::List(l), Value::Int(k, _)) => {
                if *k < 0 || *k as usize >= l.len() {
                    return Err(format!("error calling index: index out of range: {k}"));
                }
                l[*k as usize].clone()
            }
            (Value::Str(s), Value::Int(k, _)) => {
                if *k < 0 || *k as usize >= s.len() {
                    return Err(format!("error calling index: index out of range: {k}"));
                }
                Value::Int(s.as_bytes()[*k as usize] as i64, IntKind::Uint8)
            }
            (Value::Map(m), Value::Str(k)) => m.get(k.as_ref()).cloned().unwrap_or(Value::Nil),
            (Value::Labels, Value::Str(k)) => match ctx.label(k) {
                Some(v) => Value::Str(Cow::Borrowed(v)),
                None => Value::Str(Cow::Borrowed("")),
            },
            (Value::Nil, _) => {
                return Err("error calling index: index of untyped nil".into());
            }
            (Value::List(_) | Value::Str(_), v) => {
                return Err(format!(
                    "error calling index: cannot index slice/array with type {}",
                    v.type_name()
                ));
            }
            (Value::Map(_) | Value::Labels, v) => {
                return Err(format!(
                    "error calling index: value has type {}; should be string",
                    v.type_name()
                ));
            }
            (v, _) => {
                return Err(format!(
                    "error calling index: can't index item of type {}",
                    v.type_name()
                ));
            }
        };
    }
    Ok(cur)
}

/// `slice` of a string (by bytes) or a list.
pub(super) fn slice<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 1)?;
    Ok(match (&a[0], &a[1..]) {
        (Value::Str(s), []) => Value::Str(s.clone()),
        (Value::Str(s), [Value::Int(x, _)]) => owned(slice_bytes(s, *x, s.len() as i64)?),
        (Value::Str(s), [Value::Int(x, _), Value::Int(y, _)]) => owned(slice_bytes(s, *x, *y)?),
        (Value::List(l), ix) => {
            let x = ix.first().map(i).unwrap_or(0);
            let y = ix.get(1).map(i).unwrap_or(l.len() as i64);
            if x < 0 || y < x || y as usize > l.len() {
                return Err(format!("error calling slice: index out of range: {y}"));
            }
            Value::List(Rc::new(l[x as usize..y as usize].to_vec()))
        }
        (v, _) => {
            return Err(format!(
                "error calling slice: can't slice item of type {}",
                v.type_name()
            ));
        }
    })
}

/// `print`.
pub(super) fn print<'a>(a: &[Value<'a>], ctx: &dyn Context) -> Value<'a> {
    let mut o = String::new();
    sprint(&mut o, a, ctx);
    owned(o)
}

/// `println`.
pub(super) fn println<'a>(a: &[Value<'a>], ctx: &dyn Context) -> Value<'a> {
    let mut o = String::new();
    sprintln(&mut o, a, ctx);
    owned(o)
}

/// `printf`: the format must be a string.
pub(super) fn printf<'a>(a: &[Value<'a>], name: &str, ctx: &dyn Context) -> R<'a> {
    want_at_least(a, name, 1)?;
    check(&a[0], P::S).map_err(|e| arg_err(0, e))?;
    let mut o = String::new();
    sprintf(&mut o, s(&a[0]), &a[1..], ctx)
        .map_err(|_| format!("error calling {name}: {}", result_too_large()))?;
    Ok(owned(o))
}

/// `html`, `js` and `urlquery` over their arguments' text.
pub(super) fn escape<'a>(f: Func, a: &[Value<'a>], ctx: &dyn Context) -> Value<'a> {
    let text = eval_args_text(a, ctx);
    owned(match f {
        Func::Html => html_escape(&text),
        Func::Js => js_escape(&text),
        _ => query_escape(&text),
    })
}

/// The text `html`, `js` and `urlquery` work on (`evalArgs`).
fn eval_args_text(args: &[Value<'_>], ctx: &dyn Context) -> String {
    if let [Value::Str(s)] = args {
        return s.to_string();
    }
    let mut out = String::new();
    sprint(&mut out, args, ctx);
    out
}
