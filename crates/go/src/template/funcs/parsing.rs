//! Functions that read a value out of text: durations, byte sizes, regular
//! expressions and Unix epochs, each failing with Go's error text.

use crate::strconv::parse_int;
use crate::time::GoTime;

/// Go's `time.ParseDuration`, in seconds (`Duration.Seconds`).
pub(super) fn parse_duration(s: &str) -> Result<f64, String> {
    crate::duration::Duration::parse_go(s)
        .map(crate::duration::Duration::as_secs_f64)
        .map_err(|e| e.to_string())
}

/// go-humanize `ParseBytes`, as Loki's `bytes` function calls it: the same
/// reading as a label filter's ([`crate::humanize::try_parse_bytes`]).
pub(super) fn parse_bytes(s: &str) -> Result<f64, String> {
    // Loki returns `float64(uint64)`.
    crate::humanize::try_parse_bytes(s)
        .map(|v| v as f64)
        .map_err(|e| e.to_string())
}

/// Compiles with the regex crate (RE2 syntax, like Go's regexp); errors are
/// Go's ([`crate::regexp::check`]), and the regex crate's own refusals are
/// worded as Go's `regexp/syntax` words the common ones.
pub(crate) fn regex(pat: &str) -> Result<regex::Regex, String> {
    crate::regexp::check(pat)?;
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
    let err = |e: String| format!("unable to parse time '{epoch}': {e}");
    let i = parse_int(epoch, 10, 64).map_err(|e| err(e.to_string()))?;
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
