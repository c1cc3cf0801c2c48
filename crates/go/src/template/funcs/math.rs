//! sprig's math: `int`/`float64` conversions, integer arithmetic (wrapping
//! as Go's int64 does), float arithmetic in decimals, `max`/`min` and
//! rounding.

use super::Func;
use super::args::{P, R, arg_err, check, i, want, want_at_least};
use super::cast::{to_float64, to_int64};
use super::decimal::decimal_op;
use crate::template::value::{IntKind, Value};

/// `int`.
pub(super) fn int<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 1)?;
    Ok(Value::Int(to_int64(&a[0]), IntKind::Int))
}

/// `float64`.
pub(super) fn float64<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 1)?;
    Ok(Value::Float(to_float64(&a[0])))
}

/// `add`: the sum of any number of arguments.
pub(super) fn add<'a>(a: &[Value<'a>]) -> Value<'a> {
    Value::Int(
        a.iter().map(to_int64).fold(0i64, i64::wrapping_add),
        IntKind::Int64,
    )
}

/// `sub`, `div`, `mod` of two integers.
pub(super) fn sub_div_mod<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 2)?;
    let (x, y) = (to_int64(&a[0]), to_int64(&a[1]));
    if f != Func::Sub && y == 0 {
        return Err(format!(
            "error calling {name}: runtime error: integer divide by zero"
        ));
    }
    Ok(Value::Int(
        match f {
            Func::Sub => x.wrapping_sub(y),
            Func::Div => x.wrapping_div(y),
            _ => x.wrapping_rem(y),
        },
        IntKind::Int64,
    ))
}

/// `mul`: the product of one or more arguments.
pub(super) fn mul<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 1)?;
    Ok(Value::Int(
        a.iter().map(to_int64).fold(1i64, i64::wrapping_mul),
        IntKind::Int64,
    ))
}

/// `addf`: the decimal sum of any number of arguments.
pub(super) fn addf<'a>(a: &[Value<'a>]) -> Value<'a> {
    Value::Float(
        a.iter()
            .map(to_float64)
            .fold(0.0, |x, y| decimal_op(x, y, '+')),
    )
}

/// `subf`, `mulf`, `divf`, folded left over one or more arguments.
pub(super) fn float_op<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 1)?;
    let op = match f {
        Func::Subf => '-',
        Func::Mulf => '*',
        _ => '/',
    };
    let mut acc = to_float64(&a[0]);
    for b in &a[1..] {
        let y = to_float64(b);
        if op == '/' && y == 0.0 {
            return Err(format!("error calling {name}: decimal division by 0"));
        }
        acc = decimal_op(acc, y, op);
    }
    Ok(Value::Float(acc))
}

/// `max`, `min` over integers.
pub(super) fn max_min<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 1)?;
    let it = a.iter().map(to_int64);
    let v = if f == Func::Max { it.max() } else { it.min() };
    Ok(Value::Int(v.unwrap_or(0), IntKind::Int64))
}

/// `maxf`, `minf` over floats, NaN-propagating as Go's `math.Max`/`Min`.
pub(super) fn max_min_f<'a>(f: Func, a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 1)?;
    let mut acc = to_float64(&a[0]);
    for b in &a[1..] {
        let y = to_float64(b);
        acc = if f == Func::Maxf {
            go_max(acc, y)
        } else {
            go_min(acc, y)
        };
    }
    Ok(Value::Float(acc))
}

/// `ceil`.
pub(super) fn ceil<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 1)?;
    Ok(Value::Float(to_float64(&a[0]).ceil()))
}

/// `floor`.
pub(super) fn floor<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want(a, name, 1)?;
    Ok(Value::Float(to_float64(&a[0]).floor()))
}

/// `round value places [round_on]`: sprig rounds up from `round_on` (0.5).
pub(super) fn round<'a>(a: &[Value<'a>], name: &str) -> R<'a> {
    want_at_least(a, name, 2)?;
    check(&a[1], P::I).map_err(|e| arg_err(1, e))?;
    let round_on = match a.get(2) {
        Some(Value::Float(f)) => *f,
        Some(v) => {
            return Err(format!(
                "wrong type for value; expected float64; got {}",
                v.type_name()
            ));
        }
        None => 0.5,
    };
    let val = to_float64(&a[0]);
    let pow = 10f64.powf(i(&a[1]) as f64);
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(r / pow))
}

fn go_max(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn go_min(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}
