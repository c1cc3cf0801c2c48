//! The function map: Go's template builtins plus the functions Loki
//! registers (its own `functionMap` and the sprig subset it imports).

use std::borrow::Cow;
use std::rc::Rc;

use super::Context;
use super::printf::{sprint, sprintf, sprintln};
use super::timefmt::{self, GoTime};
use super::value::{IntKind, Value};

macro_rules! funcs {
    ($($v:ident = $n:literal),* $(,)?) => {
        /// A function a template can call.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(non_camel_case_types)]
        pub(crate) enum Func { $($v),* }
        impl Func {
            /// Resolves a name as Go's parser does against the function map.
            pub(crate) fn lookup(name: &str) -> Option<Func> {
                match name { $($n => Some(Func::$v),)* _ => None }
            }
        }
    };
}

funcs! {
    And = "and", Or = "or", Not = "not", Eq = "eq", Ne = "ne", Lt = "lt", Le = "le", Gt = "gt",
    Ge = "ge", Len = "len", Index = "index", Print = "print", Printf = "printf",
    Println = "println", Html = "html", Js = "js", Urlquery = "urlquery", Slice = "slice",
    Call = "call",
    ToLower = "ToLower", ToUpper = "ToUpper", Replace = "Replace", Trim = "Trim",
    TrimLeft = "TrimLeft", TrimRight = "TrimRight", TrimPrefix = "TrimPrefix",
    TrimSuffix = "TrimSuffix", TrimSpace = "TrimSpace", RegexReplaceAll = "regexReplaceAll",
    RegexReplaceAllLiteral = "regexReplaceAllLiteral", Count = "count", Urldecode = "urldecode",
    Urlencode = "urlencode", Bytes = "bytes", Duration = "duration",
    DurationSeconds = "duration_seconds", UnixEpochMillis = "unixEpochMillis",
    UnixEpochNanos = "unixEpochNanos", ToDateInZone = "toDateInZone", UnixToTime = "unixToTime",
    AlignLeft = "alignLeft", AlignRight = "alignRight", Line = "__line__",
    Timestamp = "__timestamp__",
    B64enc = "b64enc", B64dec = "b64dec", Lower = "lower", Upper = "upper", Title = "title",
    Trunc = "trunc", Substr = "substr", Contains = "contains", HasPrefix = "hasPrefix",
    HasSuffix = "hasSuffix", Indent = "indent", Nindent = "nindent", SReplace = "replace",
    Repeat = "repeat", STrim = "trim", TrimAll = "trimAll", STrimSuffix = "trimSuffix",
    STrimPrefix = "trimPrefix", Int = "int", Float64 = "float64", Add = "add", Sub = "sub",
    Mul = "mul", Div = "div", Mod = "mod", Addf = "addf", Subf = "subf", Mulf = "mulf",
    Divf = "divf", Max = "max", Min = "min", Maxf = "maxf", Minf = "minf", Ceil = "ceil",
    Floor = "floor", Round = "round", FromJson = "fromJson", Date = "date", ToDate = "toDate",
    Now = "now", UnixEpoch = "unixEpoch", Default = "default",
}

/// Parameter types, for Go's argument checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum P {
    S,
    I,
    T,
    A,
}

type R<'a> = Result<Value<'a>, String>;

fn want(args: &[Value<'_>], name: &str, n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn want_at_least(args: &[Value<'_>], name: &str, n: usize) -> Result<(), String> {
    if args.len() < n {
        return Err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn check(v: &Value<'_>, p: P) -> Result<(), String> {
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
fn arg_err(k: usize, e: String) -> String {
    format!("\u{1}{k}\u{1}{e}")
}

/// Splits a message made by [`arg_err`] into (argument index, message).
pub(crate) fn split_arg_err(m: &str) -> Option<(usize, &str)> {
    let rest = m.strip_prefix('\u{1}')?;
    let (k, msg) = rest.split_once('\u{1}')?;
    Some((k.parse().ok()?, msg))
}

/// Checks a fixed signature.
fn sig(args: &[Value<'_>], name: &str, ps: &[P]) -> Result<(), String> {
    want(args, name, ps.len())?;
    for (k, (a, p)) in args.iter().zip(ps).enumerate() {
        check(a, *p).map_err(|e| arg_err(k, e))?;
    }
    Ok(())
}

fn s<'v>(v: &'v Value<'_>) -> &'v str {
    v.as_str().unwrap_or("")
}

fn i(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        _ => 0,
    }
}

fn owned<'a>(s: String) -> Value<'a> {
    Value::Str(Cow::Owned(s))
}

/// spf13/cast `ToInt64`: strings parse with base prefixes, failures are 0.
pub(crate) fn to_int64(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => *b as i64,
        Value::Str(s) => {
            // cast drops a decimal part: `^([-+]?\d*)(\.\d*)?$` keeps group 1.
            let mut t: &str = s;
            if let Some(dot) = t.find('.') {
                let (ip, fp) = (&t[..dot], &t[dot + 1..]);
                let digits = ip.strip_prefix(['-', '+']).unwrap_or(ip);
                if digits.bytes().all(|b| b.is_ascii_digit())
                    && fp.bytes().all(|b| b.is_ascii_digit())
                {
                    t = if digits.is_empty() {
                        if ip.is_empty() { "0" } else { return 0 }
                    } else {
                        ip
                    };
                }
            }
            parse_int_base0(t).unwrap_or(0)
        }
        _ => 0,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn parse_int_base0(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    if digits.is_empty() || digits.starts_with('_') || digits.contains("__") {
        return None;
    }
    if radix == 10 && digits.contains('_') {
        return None;
    }
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    let v = i128::from_str_radix(&digits, radix).ok()?;
    i64::try_from(if neg { -v } else { v }).ok()
}

/// spf13/cast `ToFloat64`.
pub(crate) fn to_float64(v: &Value<'_>) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => go_parse_float(s).unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms users write.
fn go_parse_float(s: &str) -> Option<f64> {
    let t = s.strip_prefix('+').unwrap_or(s);
    match t.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => {
            return Some(if s.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        "-inf" | "-infinity" => return Some(f64::NEG_INFINITY),
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if t.is_empty()
        || !t
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
    {
        return None;
    }
    t.parse().ok()
}

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

fn decimal_op(a: f64, b: f64, op: char) -> f64 {
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

/// Go's `url.QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Go's `url.QueryUnescape`.
fn query_unescape(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'%' => {
                let hex = |c: u8| (c as char).to_digit(16);
                if k + 2 >= b.len() {
                    let bad: String = s[k..].chars().take(3).collect();
                    return Err(format!(
                        "invalid URL escape {}",
                        super::printf::go_quote(&bad)
                    ));
                }
                match (hex(b[k + 1]), hex(b[k + 2])) {
                    (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => {
                        let bad = String::from_utf8_lossy(&b[k..k + 3]).into_owned();
                        return Err(format!(
                            "invalid URL escape {}",
                            super::printf::go_quote(&bad)
                        ));
                    }
                }
                k += 3;
            }
            b'+' => {
                out.push(b' ');
                k += 1;
            }
            c => {
                out.push(c);
                k += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn b64enc(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= c.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// sprig `b64dec`: on failure the result is Go's error text.
fn b64dec(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    let mut acc = 0u32;
    let mut nbits = 0;
    let mut pad_at: Option<usize> = None;
    for (k, &c) in b.iter().enumerate() {
        if c == b'\r' || c == b'\n' {
            continue;
        }
        if c == b'=' {
            pad_at.get_or_insert(k);
            continue;
        }
        if pad_at.is_some() {
            return format!("illegal base64 data at input byte {}", pad_at.unwrap_or(k));
        }
        let Some(v) = B64.iter().position(|x| *x == c) else {
            return format!("illegal base64 data at input byte {k}");
        };
        acc = acc << 6 | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((acc >> nbits) as u8);
            acc &= (1 << nbits) - 1;
        }
    }
    let data_len = b.iter().filter(|c| !matches!(c, b'\r' | b'\n')).count();
    if data_len % 4 != 0 {
        return format!("illegal base64 data at input byte {}", data_len / 4 * 4);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Go's `strings.Title`.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            !(c.is_alphabetic() || c.is_numeric()) && c.is_whitespace()
        };
    }
    out
}

/// Go's `time.ParseDuration`, in seconds.
fn parse_duration(s: &str) -> Result<f64, String> {
    let err = || format!("time: invalid duration {}", super::printf::go_quote(s));
    let (neg, mut t) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if t == "0" {
        return Ok(0.0);
    }
    if t.is_empty() {
        return Err(err());
    }
    let mut total_ns: f64 = 0.0;
    while !t.is_empty() {
        let n = t
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        if n == 0 {
            return Err(err());
        }
        let num: f64 = t[..n].parse().map_err(|_| err())?;
        t = &t[n..];
        let u = t
            .bytes()
            .take_while(|b| !b.is_ascii_digit() && *b != b'.')
            .count();
        let unit = &t[..u];
        t = &t[u..];
        let mult = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => {
                return Err(format!(
                    "time: missing unit in duration {}",
                    super::printf::go_quote(s)
                ));
            }
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    super::printf::go_quote(unit),
                    super::printf::go_quote(s)
                ));
            }
        };
        total_ns += (num * mult).trunc();
    }
    let secs = total_ns / 1e9;
    Ok(if neg { -secs } else { secs })
}

/// go-humanize `ParseBytes`.
fn parse_bytes(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let n = t
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.' || *b == b',')
        .count();
    let num: f64 = t[..n]
        .replace(',', "")
        .parse()
        .map_err(|e: std::num::ParseFloatError| {
            format!(
                "strconv.ParseFloat: parsing {}: {}",
                super::printf::go_quote(&t[..n].replace(',', "")),
                if t[..n].is_empty() {
                    "invalid syntax".to_string()
                } else {
                    e.to_string()
                }
            )
        })?;
    let unit = t[n..].trim().to_ascii_lowercase();
    let mult: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "ki" | "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mi" | "mib" => 1048576.0,
        "g" | "gb" => 1e9,
        "gi" | "gib" => 1073741824.0,
        "t" | "tb" => 1e12,
        "ti" | "tib" => 1099511627776.0,
        "p" | "pb" => 1e15,
        "pi" | "pib" => 1125899906842624.0,
        "e" | "eb" => 1e18,
        "ei" | "eib" => 1152921504606846976.0,
        _ => return Err(format!("unhandled size name: {unit}")),
    };
    let v = num * mult;
    if v >= u64::MAX as f64 {
        return Err(format!("too large: {s}"));
    }
    Ok(v.trunc())
}

/// Compiles with the regex crate (RE2 syntax, like Go's regexp); errors are
/// worded as Go's `regexp/syntax` words the common ones.
pub(crate) fn regex(pat: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(pat).map_err(|e| {
        let msg = e.to_string();
        let last = msg
            .lines()
            .last()
            .unwrap_or(&msg)
            .trim()
            .trim_start_matches("error: ");
        let code = if last.contains("unclosed group") {
            "missing closing )"
        } else if last.contains("unclosed character class") {
            "missing closing ]"
        } else if last.contains("unopened group") {
            "unexpected )"
        } else if last.contains("repetition operator missing expression") {
            "missing argument to repetition operator"
        } else if last.contains("escape sequence") {
            "invalid escape sequence"
        } else if last.contains("invalid character class range") {
            "invalid character class range"
        } else if last.contains("decimal") || last.contains("repetition quantifier") {
            "invalid repeat count"
        } else {
            last
        };
        format!("error parsing regexp: {code}: `{pat}`")
    })
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            c if (c as u32) < 0x20 || c.is_control() => {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
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

/// sprig's `empty`.
fn empty(v: &Value<'_>, ctx: &dyn Context) -> bool {
    match v {
        Value::Time(_) => false,
        v => !v.truth(ctx),
    }
}

fn sprig_trunc(c: i64, s: &str) -> String {
    let l = s.len() as i64;
    let r = if c < 0 && l + c > 0 {
        s.get((l + c) as usize..)
    } else if c >= 0 && l > c {
        s.get(..c as usize)
    } else {
        Some(s)
    };
    r.map(str::to_string).unwrap_or_else(|| {
        // Go slices bytes; invalid UTF-8 cuts become U+FFFD when printed.
        let b = s.as_bytes();
        let part = if c < 0 {
            &b[(l + c) as usize..]
        } else {
            &b[..c as usize]
        };
        String::from_utf8_lossy(part).into_owned()
    })
}

fn slice_bytes(s: &str, a: i64, b: i64) -> Result<String, String> {
    let l = s.len() as i64;
    if a < 0 || b > l || a > b {
        return Err(format!(
            "runtime error: slice bounds out of range [{a}:{b}]"
        ));
    }
    Ok(String::from_utf8_lossy(&s.as_bytes()[a as usize..b as usize]).into_owned())
}

fn sprig_substr(start: i64, end: i64, s: &str) -> Result<String, String> {
    let l = s.len() as i64;
    if start < 0 {
        if end > l {
            return Err(format!(
                "runtime error: slice bounds out of range [:{end}] with length {l}"
            ));
        }
        if end < 0 {
            return Err(format!("runtime error: slice bounds out of range [:{end}]"));
        }
        return slice_bytes(s, 0, end);
    }
    if end < 0 || end > l {
        if start > l {
            return Err(format!(
                "runtime error: slice bounds out of range [{start}:{l}]"
            ));
        }
        return slice_bytes(s, start, l);
    }
    if start > end {
        return Err(format!(
            "runtime error: slice bounds out of range [{start}:{end}]"
        ));
    }
    slice_bytes(s, start, end)
}

fn align(count: i64, src: &str, left: bool) -> String {
    let l = src.chars().count() as i64;
    if count < 0 || count == l {
        return src.to_string();
    }
    let pad = count - l;
    if pad > 0 {
        let p = " ".repeat(pad as usize);
        return if left {
            format!("{src}{p}")
        } else {
            format!("{p}{src}")
        };
    }
    if left {
        src.chars().take(count as usize).collect()
    } else {
        src.chars().skip((l - count) as usize).collect()
    }
}

fn unix_to_time(epoch: &str) -> Result<GoTime, String> {
    let parsed = epoch.parse::<i64>();
    let err = |e: String| format!("unable to parse time '{epoch}': {e}");
    let go_err = |e: &std::num::ParseIntError| {
        let kind = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!(
            "strconv.ParseInt: parsing {}: {kind}",
            super::printf::go_quote(epoch)
        )
    };
    let i = match &parsed {
        Ok(i) => *i,
        Err(e) => return Err(err(go_err(e))),
    };
    Ok(match epoch.len() {
        5 => GoTime::from_unix(i * 86_400),
        10 => GoTime::from_unix(i),
        13 => GoTime::from_unix_nanos(i.wrapping_mul(1_000_000)),
        16 => GoTime::from_unix_nanos(i.wrapping_mul(1_000)),
        19 => GoTime::from_unix_nanos(i),
        _ => return Err(err("%!w(<nil>)".into())),
    })
}

fn cmp_err(a: &Value<'_>, b: &Value<'_>) -> String {
    format!(
        "incompatible types for comparison: {} and {}",
        a.type_name(),
        b.type_name()
    )
}

/// Go's `eq` for two basic values.
pub(crate) fn eq_values(a: &Value<'_>, b: &Value<'_>) -> Result<bool, String> {
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

fn lt_values(a: &Value<'_>, b: &Value<'_>) -> Result<bool, String> {
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

impl Func {
    /// Calls the function on evaluated arguments (`and`/`or` are handled by
    /// the executor because they short-circuit).
    pub(crate) fn call<'a>(
        self,
        name: &str,
        args: Vec<Value<'a>>,
        ctx: &'a dyn Context,
        re: Option<&Result<regex::Regex, String>>,
    ) -> R<'a> {
        // The pattern, compiled at parse time when it was a literal.
        let compile = |p: &str| -> Result<Cow<'_, regex::Regex>, String> {
            match re {
                Some(Ok(r)) => Ok(Cow::Borrowed(r)),
                Some(Err(e)) => Err(e.clone()),
                None => regex(p).map(Cow::Owned),
            }
        };
        use Func::*;
        let a = &args;
        Ok(match self {
            And | Or => unreachable_and_or(a),
            Not => {
                want(a, name, 1)?;
                Value::Bool(!a[0].truth(ctx))
            }
            Eq | Ne => {
                want_at_least(a, name, if self == Ne { 2 } else { 1 })?;
                if self == Ne {
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
                Value::Bool(r)
            }
            Lt | Le | Gt | Ge => {
                want(a, name, 2)?;
                let r = match self {
                    Lt => lt_values(&a[0], &a[1])?,
                    Le => lt_values(&a[0], &a[1])? || eq_values(&a[0], &a[1])?,
                    Gt => !(lt_values(&a[0], &a[1])? || eq_values(&a[0], &a[1])?),
                    _ => !lt_values(&a[0], &a[1])?,
                };
                Value::Bool(r)
            }
            Len => {
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
                Value::Int(n as i64, IntKind::Int)
            }
            Index => {
                want_at_least(a, name, 1)?;
                let mut cur = a[0].clone();
                for ix in &a[1..] {
                    cur = match (&cur, ix) {
                        (Value::List(l), Value::Int(k, _)) => {
                            if *k < 0 || *k as usize >= l.len() {
                                return Err(format!(
                                    "error calling index: index out of range: {k}"
                                ));
                            }
                            l[*k as usize].clone()
                        }
                        (Value::Str(s), Value::Int(k, _)) => {
                            if *k < 0 || *k as usize >= s.len() {
                                return Err(format!(
                                    "error calling index: index out of range: {k}"
                                ));
                            }
                            Value::Int(s.as_bytes()[*k as usize] as i64, IntKind::Uint8)
                        }
                        (Value::Map(m), Value::Str(k)) => {
                            m.get(k.as_ref()).cloned().unwrap_or(Value::Nil)
                        }
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
                cur
            }
            Slice => {
                want_at_least(a, name, 1)?;
                match (&a[0], &a[1..]) {
                    (Value::Str(s), []) => Value::Str(s.clone()),
                    (Value::Str(s), [Value::Int(x, _)]) => {
                        owned(slice_bytes(s, *x, s.len() as i64)?)
                    }
                    (Value::Str(s), [Value::Int(x, _), Value::Int(y, _)]) => {
                        owned(slice_bytes(s, *x, *y)?)
                    }
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
                }
            }
            Call => return Err("error calling call: non-function of type string".into()),
            Print => {
                let mut o = String::new();
                sprint(&mut o, a, ctx);
                owned(o)
            }
            Println => {
                let mut o = String::new();
                sprintln(&mut o, a, ctx);
                owned(o)
            }
            Printf => {
                want_at_least(a, name, 1)?;
                check(&a[0], P::S).map_err(|e| arg_err(0, e))?;
                let mut o = String::new();
                sprintf(&mut o, s(&a[0]), &a[1..], ctx);
                owned(o)
            }
            Html => owned(html_escape(&eval_args_text(a, ctx))),
            Js => owned(js_escape(&eval_args_text(a, ctx))),
            Urlquery => owned(query_escape(&eval_args_text(a, ctx))),

            // Loki's own functionMap (Go's strings package).
            ToLower | Lower => {
                sig(a, name, &[P::S])?;
                owned(s(&a[0]).to_lowercase())
            }
            ToUpper | Upper => {
                sig(a, name, &[P::S])?;
                owned(s(&a[0]).to_uppercase())
            }
            Replace => {
                sig(a, name, &[P::S, P::S, P::S, P::I])?;
                let (src, old, new, n) = (s(&a[0]), s(&a[1]), s(&a[2]), i(&a[3]));
                owned(if n < 0 {
                    src.replace(old, new)
                } else {
                    src.replacen(old, new, n as usize)
                })
            }
            Trim | TrimLeft | TrimRight => {
                sig(a, name, &[P::S, P::S])?;
                let set: Vec<char> = s(&a[1]).chars().collect();
                let src = s(&a[0]);
                owned(
                    match self {
                        Trim => src.trim_matches(set.as_slice()),
                        TrimLeft => src.trim_start_matches(set.as_slice()),
                        _ => src.trim_end_matches(set.as_slice()),
                    }
                    .to_string(),
                )
            }
            TrimPrefix | TrimSuffix => {
                sig(a, name, &[P::S, P::S])?;
                let (src, x) = (s(&a[0]), s(&a[1]));
                owned(
                    if self == TrimPrefix {
                        src.strip_prefix(x)
                    } else {
                        src.strip_suffix(x)
                    }
                    .unwrap_or(src)
                    .to_string(),
                )
            }
            TrimSpace | STrim => {
                sig(a, name, &[P::S])?;
                owned(s(&a[0]).trim().to_string())
            }
            RegexReplaceAll | RegexReplaceAllLiteral => {
                sig(a, name, &[P::S, P::S, P::S])?;
                let re = compile(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?;
                let (src, repl) = (s(&a[1]), s(&a[2]));
                owned(if self == RegexReplaceAll {
                    re.replace_all(src, repl).into_owned()
                } else {
                    re.replace_all(src, regex::NoExpand(repl)).into_owned()
                })
            }
            Count => {
                sig(a, name, &[P::S, P::S])?;
                let re = compile(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?;
                Value::Int(re.find_iter(s(&a[1])).count() as i64, IntKind::Int)
            }
            Urldecode => {
                sig(a, name, &[P::S])?;
                owned(query_unescape(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?)
            }
            Urlencode => {
                sig(a, name, &[P::S])?;
                owned(query_escape(s(&a[0])))
            }
            Bytes => {
                sig(a, name, &[P::S])?;
                Value::Float(
                    parse_bytes(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
                )
            }
            Duration | DurationSeconds => {
                sig(a, name, &[P::S])?;
                Value::Float(
                    parse_duration(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
                )
            }
            UnixEpochMillis | UnixEpochNanos | UnixEpoch => {
                sig(a, name, &[P::T])?;
                let Value::Time(t) = &a[0] else {
                    return Err("expected time".into());
                };
                let v = match self {
                    UnixEpochMillis => t.unix_millis(),
                    UnixEpochNanos => t.unix_nanos(),
                    _ => t.secs,
                };
                owned(v.to_string())
            }
            ToDateInZone => {
                sig(a, name, &[P::S, P::S, P::S])?;
                // Only UTC (and Local = UTC) zones are known here; Go falls back
                // to UTC for zones it cannot load.
                Value::Time(timefmt::parse(s(&a[0]), s(&a[2])).unwrap_or_else(GoTime::zero))
            }
            ToDate => {
                sig(a, name, &[P::S, P::S])?;
                Value::Time(timefmt::parse(s(&a[0]), s(&a[1])).unwrap_or_else(GoTime::zero))
            }
            UnixToTime => {
                sig(a, name, &[P::S])?;
                Value::Time(
                    unix_to_time(s(&a[0])).map_err(|e| format!("error calling {name}: {e}"))?,
                )
            }
            AlignLeft | AlignRight => {
                sig(a, name, &[P::I, P::S])?;
                owned(align(i(&a[0]), s(&a[1]), self == AlignLeft))
            }
            Line => {
                want(a, name, 0)?;
                Value::Str(Cow::Borrowed(ctx.line()))
            }
            Timestamp => {
                want(a, name, 0)?;
                Value::Time(GoTime::from_unix_nanos(ctx.timestamp_ns()))
            }
            Now => {
                want(a, name, 0)?;
                let ns = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as i64)
                    .unwrap_or(0);
                Value::Time(GoTime::from_unix_nanos(ns))
            }
            Date => {
                sig(a, name, &[P::S, P::A])?;
                let t = match &a[1] {
                    Value::Time(t) => t.in_utc(),
                    Value::Int(x, IntKind::Int | IntKind::Int64) => GoTime::from_unix(*x),
                    _ => {
                        let ns = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_nanos() as i64)
                            .unwrap_or(0);
                        GoTime::from_unix_nanos(ns)
                    }
                };
                let mut o = String::new();
                t.format_into(&mut o, s(&a[0]));
                owned(o)
            }

            // sprig.
            B64enc => {
                sig(a, name, &[P::S])?;
                owned(b64enc(s(&a[0])))
            }
            B64dec => {
                sig(a, name, &[P::S])?;
                owned(b64dec(s(&a[0])))
            }
            Title => {
                sig(a, name, &[P::S])?;
                owned(title(s(&a[0])))
            }
            Trunc => {
                sig(a, name, &[P::I, P::S])?;
                owned(sprig_trunc(i(&a[0]), s(&a[1])))
            }
            Substr => {
                sig(a, name, &[P::I, P::I, P::S])?;
                owned(
                    sprig_substr(i(&a[0]), i(&a[1]), s(&a[2]))
                        .map_err(|e| format!("error calling {name}: {e}"))?,
                )
            }
            Contains | HasPrefix | HasSuffix => {
                sig(a, name, &[P::S, P::S])?;
                let (x, src) = (s(&a[0]), s(&a[1]));
                Value::Bool(match self {
                    Contains => src.contains(x),
                    HasPrefix => src.starts_with(x),
                    _ => src.ends_with(x),
                })
            }
            Indent | Nindent => {
                sig(a, name, &[P::I, P::S])?;
                let pad = " ".repeat(i(&a[0]).max(0) as usize);
                let body = format!("{pad}{}", s(&a[1]).replace('\n', &format!("\n{pad}")));
                owned(if self == Nindent {
                    format!("\n{body}")
                } else {
                    body
                })
            }
            SReplace => {
                sig(a, name, &[P::S, P::S, P::S])?;
                owned(s(&a[2]).replace(s(&a[0]), s(&a[1])))
            }
            Repeat => {
                sig(a, name, &[P::I, P::S])?;
                let n = i(&a[0]);
                if n < 0 {
                    return Err(format!(
                        "error calling {name}: strings: negative Repeat count"
                    ));
                }
                let src = s(&a[1]);
                if (n as u128) * (src.len() as u128) > 64 << 20 {
                    return Err(format!(
                        "error calling {name}: strings: Repeat output length overflow"
                    ));
                }
                owned(src.repeat(n as usize))
            }
            TrimAll => {
                sig(a, name, &[P::S, P::S])?;
                let set: Vec<char> = s(&a[0]).chars().collect();
                owned(s(&a[1]).trim_matches(set.as_slice()).to_string())
            }
            STrimSuffix | STrimPrefix => {
                sig(a, name, &[P::S, P::S])?;
                let (x, src) = (s(&a[0]), s(&a[1]));
                owned(
                    if self == STrimPrefix {
                        src.strip_prefix(x)
                    } else {
                        src.strip_suffix(x)
                    }
                    .unwrap_or(src)
                    .to_string(),
                )
            }
            Int => {
                want(a, name, 1)?;
                Value::Int(to_int64(&a[0]), IntKind::Int)
            }
            Float64 => {
                want(a, name, 1)?;
                Value::Float(to_float64(&a[0]))
            }
            Add => Value::Int(
                a.iter().map(to_int64).fold(0i64, i64::wrapping_add),
                IntKind::Int64,
            ),
            Sub | Div | Mod => {
                want(a, name, 2)?;
                let (x, y) = (to_int64(&a[0]), to_int64(&a[1]));
                if self != Sub && y == 0 {
                    return Err(format!(
                        "error calling {name}: runtime error: integer divide by zero"
                    ));
                }
                Value::Int(
                    match self {
                        Sub => x.wrapping_sub(y),
                        Div => x.wrapping_div(y),
                        _ => x.wrapping_rem(y),
                    },
                    IntKind::Int64,
                )
            }
            Mul => {
                want_at_least(a, name, 1)?;
                Value::Int(
                    a.iter().map(to_int64).fold(1i64, i64::wrapping_mul),
                    IntKind::Int64,
                )
            }
            Addf => Value::Float(
                a.iter()
                    .map(to_float64)
                    .fold(0.0, |x, y| decimal_op(x, y, '+')),
            ),
            Subf | Mulf | Divf => {
                want_at_least(a, name, 1)?;
                let op = match self {
                    Subf => '-',
                    Mulf => '*',
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
                Value::Float(acc)
            }
            Max | Min => {
                want_at_least(a, name, 1)?;
                let it = a.iter().map(to_int64);
                let v = if self == Max { it.max() } else { it.min() };
                Value::Int(v.unwrap_or(0), IntKind::Int64)
            }
            Maxf | Minf => {
                want_at_least(a, name, 1)?;
                let mut acc = to_float64(&a[0]);
                for b in &a[1..] {
                    let y = to_float64(b);
                    acc = if self == Maxf {
                        go_max(acc, y)
                    } else {
                        go_min(acc, y)
                    };
                }
                Value::Float(acc)
            }
            Ceil => {
                want(a, name, 1)?;
                Value::Float(to_float64(&a[0]).ceil())
            }
            Floor => {
                want(a, name, 1)?;
                Value::Float(to_float64(&a[0]).floor())
            }
            Round => {
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
                Value::Float(r / pow)
            }
            FromJson => {
                sig(a, name, &[P::S])?;
                match serde_json::from_str::<serde_json::Value>(s(&a[0])) {
                    Ok(v) => Value::from_json(v),
                    Err(_) => Value::Nil,
                }
            }
            Default => {
                want_at_least(a, name, 1)?;
                match a.get(1) {
                    Some(g) if !empty(g, ctx) => g.clone(),
                    _ => a[0].clone(),
                }
            }
        })
    }
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

fn unreachable_and_or<'a>(a: &[Value<'a>]) -> Value<'a> {
    a.last().cloned().unwrap_or(Value::Nil)
}
