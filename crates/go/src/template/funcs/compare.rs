//! Comparisons as Go's `eq`/`lt` builtins make them, and sprig's `empty`.

use crate::template::Context;
use crate::template::value::Value;

/// Go's error for comparing values of different basic kinds.
fn cmp_err(a: &Value<'_>, b: &Value<'_>) -> String {
    format!(
        "incompatible types for comparison: {} and {}",
        a.type_name(),
        b.type_name()
    )
}

/// Go's `eq` for two basic values.
pub(super) fn eq_values(a: &Value<'_>, b: &Value<'_>) -> Result<bool, String> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x == y),
        (Value::Int(x, _), Value::Int(y, _)) => Ok(x == y),
        (Value::Float(x), Value::Float(y)) => Ok(x == y),
        (Value::Bool(x), Value::Bool(y)) => Ok(x == y),
        (Value::Nil, Value::Nil) => Ok(true),
        (Value::Nil, _) | (_, Value::Nil) => Ok(false),
        (Value::Time(x), Value::Time(y)) => Ok(x == y),
        (Value::List(_) | Value::Map(_) | Value::Labels, _)
        | (_, Value::List(_) | Value::Map(_) | Value::Labels) => Err("non-comparable type".into()),
        _ => Err(cmp_err(a, b)),
    }
}

/// Go's `lt` for two basic values.
pub(super) fn lt_values(a: &Value<'_>, b: &Value<'_>) -> Result<bool, String> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Ok(x < y),
        (Value::Int(x, _), Value::Int(y, _)) => Ok(x < y),
        (Value::Float(x), Value::Float(y)) => Ok(x < y),
        (
            Value::Str(_) | Value::Int(..) | Value::Float(_),
            Value::Str(_) | Value::Int(..) | Value::Float(_),
        ) => Err(cmp_err(a, b)),
        _ => Err("invalid type for comparison".into()),
    }
}

/// sprig's `empty`.
pub(super) fn empty(v: &Value<'_>, ctx: &dyn Context) -> bool {
    match v {
        Value::Time(_) => false,
        v => !v.truth(ctx),
    }
}
