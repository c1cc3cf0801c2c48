//! Decimal arithmetic for sprig's `addf`/`subf`/`mulf`: sprig computes
//! with shopspring/decimal, so `0.1 + 0.2` is `0.3`, not `0.30000000000000004`.

/// A float as an exact decimal `(mantissa, scale)`: `v = m / 10^scale`,
/// from its shortest representation (shopspring's `NewFromFloat`).
fn to_decimal(f: f64) -> Option<(i128, u32)> {
    if !f.is_finite() {
        return None;
    }
    let s = format!("{f:e}");
    let (mant, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let neg = mant.starts_with('-');
    let mant = mant.trim_start_matches('-');
    let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{ip}{fp}");
    let mut m: i128 = digits.parse().ok()?;
    let mut scale = fp.len() as i32 - exp;
    while scale < 0 {
        m = m.checked_mul(10)?;
        scale += 1;
    }
    if scale > 30 {
        return None;
    }
    Some((if neg { -m } else { m }, scale as u32))
}

/// `a op b` in exact decimals (`op` is `+`, `-`, `*`; `/` stays in
/// floats), falling back to floats when a decimal does not fit.
pub(super) fn decimal_op(a: f64, b: f64, op: char) -> f64 {
    let fallback = match op {
        '+' => a + b,
        '-' => a - b,
        '*' => a * b,
        _ => a / b,
    };
    if op == '/' {
        return fallback;
    }
    let (Some((ma, sa)), Some((mb, sb))) = (to_decimal(a), to_decimal(b)) else {
        return fallback;
    };
    let r = match op {
        '*' => ma.checked_mul(mb).map(|m| (m, sa + sb)),
        _ => {
            let sc = sa.max(sb);
            let fa = 10i128.checked_pow(sc - sa).and_then(|p| ma.checked_mul(p));
            let fb = 10i128.checked_pow(sc - sb).and_then(|p| mb.checked_mul(p));
            match (fa, fb) {
                (Some(x), Some(y)) => if op == '+' {
                    x.checked_add(y)
                } else {
                    x.checked_sub(y)
                }
                .map(|m| (m, sc)),
                _ => None,
            }
        }
    };
    match r {
        Some((m, sc)) => format!("{m}e-{sc}").parse().unwrap_or(fallback),
        None => fallback,
    }
}
