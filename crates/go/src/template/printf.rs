//! Go's `fmt` formatting for template values: `print`, `println`, `printf`.

use super::Context;
use super::limits::MAX_OUTPUT_BYTES;
use super::value::{Value, write_v};
use crate::strconv::format_float_g;

/// Go's `%#U`: `U+0041 'A'`.
pub(crate) fn unicode_sharp_u(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("U+{:04X} '{c}'", c as u32)
    }
}

/// `%e` with precision.
fn fmt_float_e(out: &mut String, v: f64, prec: usize, upper: bool) {
    if v.is_sign_negative() {
        out.push('-');
    }
    let a = v.abs();
    let s = format!("{a:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    out.push_str(mant);
    out.push(if upper { 'E' } else { 'e' });
    let exp: i32 = exp.parse().unwrap_or(0);
    out.push(if exp < 0 { '-' } else { '+' });
    if exp.abs() < 10 {
        out.push('0');
    }
    out.push_str(&exp.abs().to_string());
}

/// `fmt.Sprint`: spaces between operands when neither is a string.
pub(crate) fn sprint(out: &mut String, args: &[Value<'_>], ctx: &dyn Context) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 && !matches!(a, Value::Str(_)) && !matches!(args[i - 1], Value::Str(_)) {
            out.push(' ');
        }
        write_v(out, a, ctx);
    }
}

/// `fmt.Sprintln`: always spaces, then a newline.
pub(crate) fn sprintln(out: &mut String, args: &[Value<'_>], ctx: &dyn Context) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_v(out, a, ctx);
    }
    out.push('\n');
}

#[derive(Default, Clone, Copy)]
struct Spec {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn pad(out: &mut String, s: &str, spec: &Spec, numeric: bool) {
    let n = s.chars().count();
    let w = spec.width.unwrap_or(0);
    if n >= w {
        out.push_str(s);
        return;
    }
    let fill = w - n;
    if spec.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if spec.zero {
        // Zeros go after the sign for numbers.
        let (sign, rest) =
            if numeric && (s.starts_with('-') || s.starts_with('+') || s.starts_with(' ')) {
                s.split_at(1)
            } else {
                ("", s)
            };
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(rest);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(s);
    }
}

/// Go's `badVerb`: the value is printed with `%v` and the verb's flags,
/// width and precision (`%5z` of 3 is `%!z(int=    3)`).
fn bad_verb(out: &mut String, verb: char, a: &Value<'_>, spec: &Spec, ctx: &dyn Context) {
    out.push_str("%!");
    out.push(verb);
    out.push('(');
    if matches!(a, Value::Nil) {
        out.push_str("<nil>");
    } else {
        out.push_str(a.type_name());
        out.push('=');
        fmt_arg(out, a, 'v', spec, ctx);
    }
    out.push(')');
}

fn fmt_int(out: &mut String, i: i64, verb: char, spec: &Spec) {
    let neg = i < 0;
    let u = i.unsigned_abs();
    let mut digits = match verb {
        'd' | 'v' => u.to_string(),
        'x' => format!("{u:x}"),
        'X' => format!("{u:X}"),
        'o' | 'O' => format!("{u:o}"),
        'b' => format!("{u:b}"),
        _ => u.to_string(),
    };
    if let Some(p) = spec.prec {
        if p == 0 && u == 0 {
            digits.clear();
        }
        if digits.len() < p {
            let mut z = "0".repeat(p - digits.len());
            z.push_str(&digits);
            digits = z;
        }
    }
    let mut s = String::new();
    if neg {
        s.push('-');
    } else if spec.plus {
        s.push('+');
    } else if spec.space {
        s.push(' ');
    }
    if spec.sharp || verb == 'O' {
        match verb {
            'x' => s.push_str("0x"),
            'X' => s.push_str("0X"),
            'o' if !digits.starts_with('0') => s.push('0'),
            'O' => s.push_str("0o"),
            'b' => s.push_str("0b"),
            _ => {}
        }
    }
    s.push_str(&digits);
    let mut sp = *spec;
    if spec.prec.is_some() {
        sp.zero = false;
    }
    pad(out, &s, &sp, true);
}

fn fmt_float(out: &mut String, f: f64, verb: char, spec: &Spec) {
    let mut s = String::new();
    match verb {
        'v' | 'g' | 'G' => format_float_g(&mut s, f, spec.prec, verb == 'G'),
        'e' | 'E' => {
            if f.is_finite() {
                fmt_float_e(&mut s, f, spec.prec.unwrap_or(6), verb == 'E')
            } else {
                format_float_g(&mut s, f, None, false)
            }
        }
        _ => {
            if f.is_finite() {
                s = format!("{:.*}", spec.prec.unwrap_or(6), f);
            } else {
                format_float_g(&mut s, f, None, false)
            }
        }
    }
    if !s.starts_with('-') && !s.starts_with('+') {
        if spec.plus {
            s.insert(0, '+');
        } else if spec.space {
            s.insert(0, ' ');
        }
    } else if s == "+Inf" && !spec.plus {
        s.remove(0);
        if spec.space {
            s.insert(0, ' ');
        }
    }
    let mut sp = *spec;
    if !f.is_finite() {
        sp.zero = false;
    }
    pad(out, &s, &sp, true);
}

fn fmt_str(out: &mut String, s: &str, verb: char, spec: &Spec) {
    match verb {
        's' | 'v' => {
            let t: &str = match spec.prec {
                Some(p) => match s.char_indices().nth(p) {
                    Some((i, _)) => &s[..i],
                    None => s,
                },
                None => s,
            };
            pad(out, t, spec, false);
        }
        'q' => {
            let q = if spec.sharp && !s.contains('`') {
                format!("`{s}`")
            } else {
                crate::strconv::quote(s)
            };
            pad(out, &q, spec, false);
        }
        'x' | 'X' => {
            let mut h = String::new();
            for (i, b) in s.bytes().enumerate() {
                if spec.space && i > 0 {
                    h.push(' ');
                }
                if verb == 'x' {
                    h.push_str(&format!("{b:02x}"));
                } else {
                    h.push_str(&format!("{b:02X}"));
                }
            }
            pad(out, &h, spec, false);
        }
        _ => {}
    }
}

/// Formats one argument with one verb, as `fmt.Printf` does.
fn fmt_arg(out: &mut String, a: &Value<'_>, verb: char, spec: &Spec, ctx: &dyn Context) {
    match (a, verb) {
        (Value::Nil, 'v') => pad(out, "<nil>", spec, false),
        (Value::Nil, _) => bad_verb(out, verb, a, spec, ctx),
        (Value::Bool(b), 'v' | 't') => pad(out, if *b { "true" } else { "false" }, spec, false),
        (Value::Int(i, _), 'v' | 'd' | 'x' | 'X' | 'o' | 'O' | 'b') => fmt_int(out, *i, verb, spec),
        (Value::Int(i, _), 'c') => {
            let c = u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            pad(out, &c.to_string(), spec, false);
        }
        (Value::Int(i, _), 'q') => {
            let c = u32::try_from(*i)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{FFFD}');
            let q = crate::strconv::quote(&c.to_string());
            let inner = &q[1..q.len() - 1];
            let inner = if inner == "\\\"" {
                "\""
            } else if c == '\'' {
                "\\'"
            } else {
                inner
            };
            pad(out, &format!("'{inner}'"), spec, false);
        }
        (Value::Int(i, _), 'U') => {
            let s = format!("U+{i:04X}");
            pad(out, &s, spec, false);
        }
        (Value::Float(f), 'v' | 'g' | 'G' | 'e' | 'E' | 'f' | 'F') => {
            fmt_float(out, *f, verb, spec)
        }
        (Value::Str(s), 'v' | 's' | 'q' | 'x' | 'X') => fmt_str(out, s, verb, spec),
        (Value::Time(t), 'v' | 's' | 'q') => {
            let mut s = String::new();
            t.write_string(&mut s);
            fmt_str(out, &s, verb, spec);
        }
        (Value::List(l), _) if verb != 'T' => {
            let mut s = String::from("[");
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                fmt_arg(&mut s, e, verb, &Spec::default(), ctx);
            }
            s.push(']');
            pad(out, &s, spec, false);
        }
        (_, 'T') => pad(out, a.type_name(), spec, false),
        (Value::Map(m), _) => {
            let mut s = String::from("map[");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                fmt_str(
                    &mut s,
                    k,
                    if verb == 'v' { 's' } else { verb },
                    &Spec::default(),
                );
                s.push(':');
                fmt_arg(&mut s, e, verb, &Spec::default(), ctx);
            }
            s.push(']');
            pad(out, &s, spec, false);
        }
        (Value::Labels, 'v' | 's') => {
            let mut s = String::new();
            write_v(&mut s, a, ctx);
            pad(out, &s, spec, false);
        }
        _ => bad_verb(out, verb, a, spec, ctx),
    }
}

/// Go's `fmt.tooLarge`: a width or precision fmt refuses.
fn too_large(x: i64) -> bool {
    !(-1_000_000..=1_000_000).contains(&x)
}

/// Go's `fmt.parsenum`: the digits at `i`, whether there were any, and
/// where they end. Go gives up when the number passes 1e6 before its last
/// digit, returning the end of the whole format (so that the verb is
/// missing).
fn parse_num(b: &[u8], mut i: usize) -> (usize, bool, usize) {
    let mut num = 0;
    let mut isnum = false;
    while i < b.len() && b[i].is_ascii_digit() {
        if too_large(num as i64) {
            return (0, false, b.len());
        }
        num = num * 10 + usize::from(b[i] - b'0');
        isnum = true;
        i += 1;
    }
    (num, isnum, i)
}

/// The output limit was reached while formatting.
pub(crate) struct TooLarge;

/// `fmt.Sprintf` over template values. Widths and precisions are Go's
/// (at most 1e6 from an argument, about 1e7 written out); any that would
/// take the result past [`MAX_OUTPUT_BYTES`] stops it with [`TooLarge`]
/// before the padding is allocated.
pub(crate) fn sprintf(
    out: &mut String,
    format: &str,
    args: &[Value<'_>],
    ctx: &dyn Context,
) -> Result<(), TooLarge> {
    let b = format.as_bytes();
    let mut i = 0;
    let mut argi = 0;
    let mut reordered = false;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i] != b'%' {
            i += 1;
        }
        out.push_str(&format[start..i]);
        if i >= b.len() {
            break;
        }
        i += 1; // '%'
        let mut spec = Spec::default();
        while i < b.len() {
            match b[i] {
                b'+' => spec.plus = true,
                b'-' => {
                    spec.minus = true;
                    spec.zero = false;
                }
                b'#' => spec.sharp = true,
                b' ' => spec.space = true,
                b'0' => spec.zero = !spec.minus,
                _ => break,
            }
            i += 1;
        }
        // Explicit argument index `%[n]verb`.
        if i < b.len()
            && b[i] == b'['
            && let Some(close) = format[i..].find(']')
            && let Ok(n) = format[i + 1..i + close].parse::<usize>()
            && n >= 1
        {
            argi = n - 1;
            i += close + 1;
            reordered = true;
        }
        // width
        if i < b.len() && b[i] == b'*' {
            i += 1;
            match args.get(argi) {
                Some(Value::Int(w, _)) if !too_large(*w) => {
                    if *w < 0 {
                        spec.minus = true;
                        spec.zero = false;
                    }
                    spec.width = Some(w.unsigned_abs() as usize);
                }
                _ => out.push_str("%!(BADWIDTH)"),
            }
            argi += 1;
        } else {
            let (w, isnum, next) = parse_num(b, i);
            i = next;
            if isnum {
                spec.width = Some(w);
            }
        }
        // Go reads a precision only when something follows the dot.
        if i + 1 < b.len() && b[i] == b'.' {
            i += 1;
            if b[i] == b'*' {
                i += 1;
                match args.get(argi) {
                    Some(Value::Int(p, _)) if *p >= 0 && !too_large(*p) => {
                        spec.prec = Some(*p as usize)
                    }
                    _ => out.push_str("%!(BADPREC)"),
                }
                argi += 1;
            } else {
                let (p, _, next) = parse_num(b, i);
                i = next;
                spec.prec = Some(p);
            }
        }
        let Some(verb) = format[i..].chars().next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        i += verb.len_utf8();
        if verb == '%' {
            out.push('%');
            continue;
        }
        match args.get(argi) {
            None => {
                out.push_str("%!");
                out.push(verb);
                out.push_str("(MISSING)");
            }
            Some(a) => {
                // Padding and numeric precision are the only verbs' output
                // not bounded by their argument's size: check them first.
                let numeric = matches!(a, Value::Int(..) | Value::Float(_));
                let wide = spec.width.unwrap_or(0) > MAX_OUTPUT_BYTES;
                let precise = numeric && spec.prec.unwrap_or(0) > MAX_OUTPUT_BYTES;
                if wide || precise {
                    return Err(TooLarge);
                }
                fmt_arg(out, a, verb, &spec, ctx);
                if out.len() > MAX_OUTPUT_BYTES {
                    return Err(TooLarge);
                }
            }
        }
        argi += 1;
    }
    if !reordered && argi < args.len() {
        out.push_str("%!(EXTRA ");
        for (k, a) in args[argi..].iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            if matches!(a, Value::Nil) {
                out.push_str("<nil>");
            } else {
                out.push_str(a.type_name());
                out.push('=');
                write_v(out, a, ctx);
            }
        }
        out.push(')');
    }
    Ok(())
}
