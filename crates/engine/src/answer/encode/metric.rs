//! Loki's JSON for `matrix`, `vector` and `scalar` answers.
//!
//! Written by hand into a `Vec<u8>`: the shapes are small and fixed, and the
//! number formats (times as seconds with millisecond precision, values as Go
//! `strconv.FormatFloat(v, 'f', -1, 64)` strings) are easier to get exactly
//! right without a serializer in between.

use crate::encode::json::write_str;
use crate::encode::stats::{Summary, write_stats_field};
use crate::metric::grid::Grid;
use crate::metric::series::{Labels, Series};

/// Formats a sample value as Prometheus does (Go `strconv.FormatFloat(v, 'f', -1, 64)`).
pub fn format_value(v: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_value(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// Formats a nanosecond time as Prometheus' `model.Time`: seconds with millisecond precision.
pub fn format_time(ns: i64) -> String {
    let mut out = Vec::with_capacity(24);
    write_time(&mut out, ns);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`format_time`] of `ns` without going through a float: the
/// milliseconds as `seconds[.fff]`, trailing zeros trimmed. This is exactly
/// the shortest decimal of `ms as f64 / 1000.0`: an i64 of nanoseconds is
/// under 2^33 s, where half an f64 ulp is far below 0.0005, so no other
/// decimal with as few digits rounds to the same f64.
pub fn write_time(out: &mut Vec<u8>, ns: i64) {
    let ms = ns / 1_000_000;
    if ms < 0 {
        out.push(b'-');
    }
    let ms = ms.unsigned_abs();
    out.extend_from_slice(itoa::Buffer::new().format(ms / 1000).as_bytes());
    let frac = ms % 1000;
    if frac != 0 {
        let digits = [
            b'0' + (frac / 100) as u8,
            b'0' + (frac / 10 % 10) as u8,
            b'0' + (frac % 10) as u8,
        ];
        let keep = if frac.is_multiple_of(100) {
            1
        } else if frac.is_multiple_of(10) {
            2
        } else {
            3
        };
        out.push(b'.');
        out.extend_from_slice(&digits[..keep]);
    }
}

/// Integers up to 2^53 are exact in an f64 and print as themselves.
const EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Appends [`format_value`] of `v`: integers through `itoa`, other values
/// as `ryu`'s shortest round-trip digits written out in plain decimal,
/// never with an exponent. Those are Go's digits, ties between two shortest
/// candidates to the even one; Rust's `Display` rounds such ties up, so it
/// is not used.
pub fn write_value(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v == f64::INFINITY {
        out.extend_from_slice(b"+Inf");
    } else if v == f64::NEG_INFINITY {
        out.extend_from_slice(b"-Inf");
    } else if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
    } else if v.fract() == 0.0 && v.abs() <= EXACT_INT {
        // In range, so the cast is exact.
        out.extend_from_slice(itoa::Buffer::new().format(v as i64).as_bytes());
    } else {
        plain_decimal(out, ryu::Buffer::new().format_finite(v).as_bytes());
    }
}

/// Rewrites `ryu`'s output (`1.5`, `0.001`, `1e21`, `1.2e-7`, maybe
/// negative) as a plain decimal without exponent or trailing `.0`.
fn plain_decimal(out: &mut Vec<u8>, s: &[u8]) {
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (mantissa, exp) = match s.iter().position(|&b| b == b'e') {
        Some(i) => (
            &s[..i],
            std::str::from_utf8(&s[i + 1..])
                .ok()
                .and_then(|e| e.parse::<i32>().ok())
                .unwrap_or(0),
        ),
        None => (s, 0),
    };
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, &[][..]),
    };
    // value = 0.DIGITS × 10^point
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let mut point = int.len() as i32 + exp;
    let lead = digits.iter().take_while(|&&b| b == b'0').count();
    digits.drain(..lead);
    point -= lead as i32;
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        out.extend_from_slice(if neg { b"-0" } else { b"0" });
        return;
    }
    if neg {
        out.push(b'-');
    }
    let len = digits.len() as i32;
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', point.unsigned_abs() as usize));
        out.extend_from_slice(&digits);
    } else if point >= len {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', (point - len) as usize));
    } else {
        let (a, b) = digits.split_at(point as usize);
        out.extend_from_slice(a);
        out.push(b'.');
        out.extend_from_slice(b);
    }
}

fn write_sample(out: &mut Vec<u8>, ns: i64, v: f64) {
    out.push(b'[');
    write_time(out, ns);
    out.extend_from_slice(b",\"");
    write_value(out, v);
    out.extend_from_slice(b"\"]");
}

fn write_labels(out: &mut Vec<u8>, labels: &Labels) {
    out.push(b'{');
    for (i, (n, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, n);
        out.push(b':');
        write_str(out, v);
    }
    out.push(b'}');
}

fn open(out: &mut Vec<u8>, result_type: &str) {
    out.extend_from_slice(br#"{"status":"success","data":{"resultType":""#);
    out.extend_from_slice(result_type.as_bytes());
    out.extend_from_slice(br#"","result":"#);
}

fn close(out: &mut Vec<u8>, summary: &Summary) {
    out.push(b',');
    write_stats_field(out, summary);
    out.extend_from_slice(b"}}");
}

/// Writes a `matrix` answer; series must already be in answer order.
pub fn write_matrix(out: &mut Vec<u8>, m: &[Series], grid: &Grid, summary: &Summary) {
    open(out, "matrix");
    out.push(b'[');
    for (i, s) in m.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"metric":"#);
        write_labels(out, &s.labels);
        out.extend_from_slice(br#","values":["#);
        for (j, p) in s.points.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            write_sample(out, grid.time(p.step), p.v);
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b']');
    close(out, summary);
}

/// Writes a `vector` answer: each series' sample at its step.
pub fn write_vector(out: &mut Vec<u8>, m: &[Series], grid: &Grid, summary: &Summary) {
    open(out, "vector");
    out.push(b'[');
    let mut first = true;
    for s in m {
        for p in &s.points {
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(br#"{"metric":"#);
            write_labels(out, &s.labels);
            out.extend_from_slice(br#","value":"#);
            write_sample(out, grid.time(p.step), p.v);
            out.push(b'}');
        }
    }
    out.push(b']');
    close(out, summary);
}

/// Writes a `scalar` answer.
pub fn write_scalar(out: &mut Vec<u8>, ns: i64, v: f64, summary: &Summary) {
    open(out, "scalar");
    write_sample(out, ns, v);
    close(out, summary);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::series::Point;

    const S: i64 = 1_000_000_000;

    fn json(out: &[u8]) -> serde_json::Value {
        serde_json::from_slice(out).unwrap()
    }

    #[test]
    fn values_format_like_go() {
        assert_eq!(format_value(2.0), "2");
        assert_eq!(format_value(1.5), "1.5");
        assert_eq!(format_value(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_value(1e21), "1000000000000000000000");
        assert_eq!(format_value(1e-7), "0.0000001");
        assert_eq!(format_value(-0.0), "-0");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(-1.0 / 60.0), "-0.016666666666666666");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
    }

    /// Deterministic f64s of every kind: random bit patterns (all
    /// exponents), small decimals, rates and integers near 2^53.
    fn samples() -> Vec<f64> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut out = Vec::new();
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.push(f64::from_bits(x));
            out.push((x % 1_000_000) as f64 / 1000.0);
            out.push((x % 100_000) as f64 / 60.0);
            out.push(i as f64 / 3.0);
            out.push(9_007_199_254_740_992.0 + (i as f64) * 2.0 - 200_000.0);
        }
        out.extend([
            1e21,
            1e-7,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1,
            -2.5e-300,
        ]);
        out
    }

    #[test]
    fn values_are_the_shortest_round_trip_in_plain_decimal() {
        // What Go's 'f', -1 prints: the value reads back exactly, with as
        // few significant digits as Rust's Display (also shortest), and no
        // exponent. (These samples, 999,890 finite values, were compared line
        // by line with `strconv.FormatFloat` of go1.26.8: identical.)
        let digits = |s: &str| {
            let d: String = s.chars().filter(char::is_ascii_digit).collect();
            let d = d.trim_start_matches('0');
            let d = if s.contains('.') {
                d
            } else {
                d.trim_end_matches('0')
            };
            d.len()
        };
        for v in samples().into_iter().filter(|v| v.is_finite()) {
            let got = format_value(v);
            assert!(!got.contains(['e', 'E']), "{v:e}: {got}");
            assert_eq!(
                got.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{v:e}: {got}"
            );
            assert_eq!(digits(&got), digits(&v.to_string()), "{v:e}: {got}");
        }
        // Exact ties between two shortest candidates: Go (and ryu) pick
        // the even digit, Rust's Display rounds up.
        // 1658206780088562.25 and …62.75 (the f64 spacing there is 0.25).
        assert_eq!(
            format_value(f64::from_bits(0x43179085685d83c9)),
            "1658206780088562.2"
        );
        assert_eq!(
            format_value(f64::from_bits(0x43179085685d83cb)),
            "1658206780088562.8"
        );
    }

    #[test]
    fn times_equal_the_float_display_everywhere() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut ns: Vec<i64> = vec![
            0,
            -1,
            -999_999,
            -1_000_000,
            -1_500_000_000,
            i64::MAX,
            i64::MIN,
        ];
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ns.push(x as i64);
            ns.push((x % 4_000_000_000_000_000_000) as i64);
            ns.push((x % 10_000_000_000_000) as i64 - 5_000_000_000_000);
        }
        for n in ns {
            let ms = n / 1_000_000;
            assert_eq!(format_time(n), (ms as f64 / 1000.0).to_string(), "{n}");
        }
    }

    #[test]
    fn times_are_seconds_with_ms() {
        assert_eq!(format_time(4_000_000_000 * S), "4000000000");
        assert_eq!(format_time(1_724_325_660 * S + 500_999_999), "1724325660.5");
        assert_eq!(
            format_time(1_724_325_660 * S + 123_456_789),
            "1724325660.123"
        );
    }

    #[test]
    fn matrix_vector_scalar() {
        let grid = Grid::range(100 * S, 130 * S, 15 * S);
        let m = vec![Series {
            labels: vec![("app".into(), "a\"b".into())],
            points: vec![Point { step: 0, v: 2.0 }, Point { step: 2, v: 0.5 }],
        }];
        let mut out = Vec::new();
        write_matrix(&mut out, &m, &grid, &Summary::default());
        let v = json(&out);
        assert_eq!(v["data"]["resultType"], "matrix");
        assert_eq!(
            v["data"]["result"],
            serde_json::json!([{"metric":{"app":"a\"b"},"values":[[100,"2"],[130,"0.5"]]}])
        );
        assert_eq!(v["data"]["stats"]["summary"]["totalBytesProcessed"], 0);
        out.clear();
        let one = vec![Series {
            labels: vec![("app".into(), "x".into())],
            points: vec![Point { step: 0, v: 1e-7 }],
        }];
        write_vector(
            &mut out,
            &one,
            &Grid::instant(7 * S + 250_000_000),
            &Summary::default(),
        );
        assert_eq!(
            json(&out)["data"]["result"],
            serde_json::json!([{"metric":{"app":"x"},"value":[7.25,"0.0000001"]}])
        );
        out.clear();
        write_scalar(&mut out, 10 * S, 2.0, &Summary::default());
        assert_eq!(json(&out)["data"]["result"], serde_json::json!([10, "2"]));
        assert_eq!(json(&out)["data"]["resultType"], "scalar");
    }
}
