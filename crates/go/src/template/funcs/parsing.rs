//! Functions that read a value out of text: durations, byte sizes, regular
//! expressions and Unix epochs, each failing with Go's error text.

use crate::template::printf::go_quote;
use crate::template::timefmt::GoTime;

/// Go's `time.ParseDuration`, in seconds.
pub(super) fn parse_duration(s: &str) -> Result<f64, String> {
    let err = || format!("time: invalid duration {}", go_quote(s));
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
                return Err(format!("time: missing unit in duration {}", go_quote(s)));
            }
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit),
                    go_quote(s)
                ));
            }
        };
        total_ns += (num * mult).trunc();
    }
    let secs = total_ns / 1e9;
    Ok(if neg { -secs } else { secs })
}
/// go-humanize `ParseBytes`, as Loki's `bytes` function calls it.
///
/// The reading is the parser's ([`crate::humanize::parse_bytes`]), so a byte
/// size means the same in a label filter and in a template. The parser only
/// says whether the text is a size; Go's error names the part that failed,
/// so on failure this works out which: the number, the unit, or the range.
pub(super) fn parse_bytes(s: &str) -> Result<f64, String> {
    if let Some(v) = crate::humanize::parse_bytes(s) {
        // Loki returns `float64(uint64)`; below 2^64 the conversion is exact
        // for every value the parser can produce from an f64.
        return Ok(v as f64);
    }
    let t = s.trim();
    let n = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(t.len());
    let num = t[..n].replace(',', "");
    if num.parse::<f64>().is_err() {
        // Rust's float parser fails only on syntax (overflow gives inf), and
        // Go words every syntax failure the same way.
        return Err(format!(
            "strconv.ParseFloat: parsing {}: invalid syntax",
            go_quote(&num)
        ));
    }
    let unit = t[n..].trim().to_ascii_lowercase();
    // One of a unit alone is always in range, so the parser
    // refusing it means the unit is unknown; accepting it means the
    // product overflowed.
    if crate::humanize::parse_bytes(&format!("1 {unit}")).is_none() {
        return Err(format!("unhandled size name: {unit}"));
    }
    Err(format!("too large: {s}"))
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

pub(super) fn unix_to_time(epoch: &str) -> Result<GoTime, String> {
    let parsed = epoch.parse::<i64>();
    let err = |e: String| format!("unable to parse time '{epoch}': {e}");
    let go_err = |e: &std::num::ParseIntError| {
        let kind = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.ParseInt: parsing {}: {kind}", go_quote(epoch))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_bytes_reads_humanized_sizes() {
        assert_eq!(parse_bytes("1KiB"), Ok(1024.0));
        assert_eq!(parse_bytes("1.5 GB"), Ok(1.5e9));
        assert_eq!(parse_bytes("1,000 b"), Ok(1000.0));
        assert_eq!(parse_bytes("10"), Ok(10.0));
        assert_eq!(parse_bytes("2.5B"), Ok(2.0));
    }

    #[test]
    fn parse_bytes_fails_with_go_text() {
        let float = |s: &str| format!("strconv.ParseFloat: parsing {s}: invalid syntax");
        assert_eq!(parse_bytes("bogus"), Err(float(r#""""#)));
        assert_eq!(parse_bytes(""), Err(float(r#""""#)));
        // Go words every malformed number "invalid syntax".
        assert_eq!(parse_bytes(","), Err(float(r#""""#)));
        assert_eq!(parse_bytes("1.2.3kb"), Err(float(r#""1.2.3""#)));
        assert_eq!(
            parse_bytes("12 parsecs"),
            Err("unhandled size name: parsecs".into())
        );
        assert_eq!(parse_bytes("10 5"), Err("unhandled size name: 5".into()));
        assert_eq!(parse_bytes("20EiB"), Err("too large: 20EiB".into()));
        assert_eq!(
            parse_bytes("18446744073709551616"),
            Err("too large: 18446744073709551616".into())
        );
    }
}
