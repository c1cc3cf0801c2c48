//! Go's `strconv.FormatFloat(v, 'g', prec, 64)`, which `fmt` uses for
//! `%v`, `%g` and `%G` of a float and `text/template` for printing one.

/// Splits a finite, non-zero `|v|` into decimal digits (no trailing zeros)
/// and the decimal point position, from Rust's exponent formatting.
fn digits_of(e_repr: &str) -> (String, i32) {
    let (mant, exp) = e_repr.split_once('e').unwrap_or((e_repr, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut d: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while d.len() > 1 && d.ends_with('0') {
        d.pop();
    }
    (d, exp + 1)
}

fn push_e(out: &mut String, digits: &str, dp: i32, frac: usize, upper: bool) {
    let mut d = digits.to_string();
    while d.len() < frac + 1 {
        d.push('0');
    }
    out.push_str(&d[..1]);
    if frac > 0 {
        out.push('.');
        out.push_str(&d[1..frac + 1]);
    }
    out.push(if upper { 'E' } else { 'e' });
    let exp = if digits == "0" { 0 } else { dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let a = exp.unsigned_abs();
    if a < 10 {
        out.push('0');
    }
    out.push_str(&a.to_string());
}

fn push_f(out: &mut String, digits: &str, dp: i32, frac: usize) {
    // integer part
    if dp <= 0 {
        out.push('0');
    } else {
        for i in 0..dp as usize {
            out.push(digits.as_bytes().get(i).map(|b| *b as char).unwrap_or('0'));
        }
    }
    if frac > 0 {
        out.push('.');
        for i in 0..frac as i32 {
            let idx = dp + i;
            let c = if idx < 0 {
                '0'
            } else {
                digits
                    .as_bytes()
                    .get(idx as usize)
                    .map(|b| *b as char)
                    .unwrap_or('0')
            };
            out.push(c);
        }
    }
}

/// `strconv.FormatFloat(v, 'g', prec, 64)`; `prec` None is shortest.
pub(crate) fn format_float_g(out: &mut String, v: f64, prec: Option<usize>, upper: bool) {
    if !v.is_finite() {
        out.push_str(if v.is_nan() {
            "NaN"
        } else if v > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        });
        return;
    }
    if v.is_sign_negative() {
        out.push('-');
    }
    let a = v.abs();
    let (digits, dp, shortest) = match prec {
        None => {
            let (d, dp) = digits_of(&format!("{a:e}"));
            (d, dp, true)
        }
        Some(p) => {
            let p = p.max(1);
            let (d, dp) = digits_of(&format!("{:.*e}", p - 1, a));
            (d, dp, false)
        }
    };
    let (digits, dp) = if a == 0.0 {
        ("0".to_string(), 1)
    } else {
        (digits, dp)
    };
    let nd = digits.len() as i32;
    let mut p = match prec {
        None => nd,
        Some(p) => p.max(1) as i32,
    };
    let mut eprec = p;
    if eprec > nd && nd >= dp {
        eprec = nd;
    }
    if shortest {
        eprec = 6;
    }
    let exp = dp - 1;
    if exp < -4 || exp >= eprec {
        if p > nd {
            p = nd;
        }
        push_e(out, &digits, dp, (p - 1).max(0) as usize, upper);
        return;
    }
    if p > dp {
        p = nd;
    }
    push_f(out, &digits, dp, (p - dp).max(0) as usize);
}
