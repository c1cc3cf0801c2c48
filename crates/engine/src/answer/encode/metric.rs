//! The one writer of Loki's `matrix`, `vector` and `scalar` answers, from a
//! [`MetricAnswer`]: metric queries and the volume answers.
//!
//! Written by hand into a `Vec<u8>`: the shapes are small and fixed, and the
//! number formats (times as seconds with millisecond precision, values as Go
//! `strconv.FormatFloat(v, 'f', -1, 64)` strings) are easier to get exactly
//! right without a serializer in between.

use super::write_object;
use crate::answer::metric::{MetricAnswer, MetricResult, Steps};
use crate::encode::json::Escape;
use crate::encode::stats::write_stats_field;
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

fn write_labels(out: &mut Vec<u8>, labels: &Labels, e: Escape) {
    write_object(out, labels.iter().map(|(n, v)| (n.as_str(), v.as_str())), e);
}

/// Writes the whole body of `answer`: `matrix`, `vector` or `scalar` by its
/// result, series in the order given (already in answer order).
pub fn write_metric(answer: &MetricAnswer, out: &mut Vec<u8>) {
    let e = answer.escape;
    out.extend_from_slice(br#"{"status":"success","data":{"resultType":""#);
    out.extend_from_slice(match answer.result {
        MetricResult::Matrix(_) => b"matrix",
        MetricResult::Vector(_) => b"vector",
        MetricResult::Scalar(_) => b"scalar",
    });
    out.extend_from_slice(br#"","result":"#);
    // One monomorphized loop per kind of steps: no branch per sample.
    match &answer.steps {
        Steps::Grid(g) => write_result(out, &answer.result, |i| g.time(i), e),
        Steps::Times(t) => write_result(
            out,
            &answer.result,
            |i| t.get(i as usize).copied().unwrap_or(0),
            e,
        ),
    }
    out.push(b',');
    write_stats_field(out, &answer.stats);
    out.extend_from_slice(b"}}");
}

fn write_result(out: &mut Vec<u8>, result: &MetricResult, time: impl Fn(u32) -> i64, e: Escape) {
    match result {
        MetricResult::Matrix(m) => write_matrix(out, m, time, e),
        MetricResult::Vector(m) => write_vector(out, m, time, e),
        MetricResult::Scalar(v) => write_sample(out, time(0), *v),
    }
}

fn write_matrix(out: &mut Vec<u8>, m: &[Series], time: impl Fn(u32) -> i64, e: Escape) {
    out.push(b'[');
    for (i, s) in m.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"metric":"#);
        write_labels(out, &s.labels, e);
        out.extend_from_slice(br#","values":["#);
        for (j, p) in s.points.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            write_sample(out, time(p.step), p.v);
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b']');
}

/// Each series' samples, one element each.
fn write_vector(out: &mut Vec<u8>, m: &[Series], time: impl Fn(u32) -> i64, e: Escape) {
    out.push(b'[');
    let mut first = true;
    for s in m {
        for p in &s.points {
            if !first {
                out.push(b',');
            }
            first = false;
            out.extend_from_slice(br#"{"metric":"#);
            write_labels(out, &s.labels, e);
            out.extend_from_slice(br#","value":"#);
            write_sample(out, time(p.step), p.v);
            out.push(b'}');
        }
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::stats::Summary;
    use crate::metric::grid::Grid;
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

    fn answer(result: MetricResult, steps: Steps) -> MetricAnswer {
        MetricAnswer {
            result,
            steps,
            escape: Escape::Html,
            stats: Summary::default(),
        }
    }

    fn write(a: &MetricAnswer) -> Vec<u8> {
        let mut out = Vec::new();
        write_metric(a, &mut out);
        out
    }

    #[test]
    fn matrix_vector_scalar() {
        let grid = Grid::range(100 * S, 130 * S, 15 * S);
        let m = vec![Series {
            labels: vec![("app".into(), "a\"b".into())],
            points: vec![Point { step: 0, v: 2.0 }, Point { step: 2, v: 0.5 }],
        }];
        let out = write(&answer(MetricResult::Matrix(m), Steps::Grid(grid)));
        let v = json(&out);
        assert_eq!(v["data"]["resultType"], "matrix");
        assert_eq!(
            v["data"]["result"],
            serde_json::json!([{"metric":{"app":"a\"b"},"values":[[100,"2"],[130,"0.5"]]}])
        );
        assert_eq!(v["data"]["stats"]["summary"]["totalBytesProcessed"], 0);
        let one = vec![Series {
            labels: vec![("app".into(), "x".into())],
            points: vec![Point { step: 0, v: 1e-7 }],
        }];
        let out = write(&answer(
            MetricResult::Vector(one),
            Steps::Grid(Grid::instant(7 * S + 250_000_000)),
        ));
        assert_eq!(
            json(&out)["data"]["result"],
            serde_json::json!([{"metric":{"app":"x"},"value":[7.25,"0.0000001"]}])
        );
        let out = write(&answer(
            MetricResult::Scalar(2.0),
            Steps::Grid(Grid::instant(10 * S)),
        ));
        assert_eq!(json(&out)["data"]["result"], serde_json::json!([10, "2"]));
        assert_eq!(json(&out)["data"]["resultType"], "scalar");
    }

    #[test]
    fn bytes_of_each_shape_and_escape() {
        let stats = {
            let mut s = Vec::new();
            write_stats_field(&mut s, &Summary::default());
            String::from_utf8(s).unwrap_or_default()
        };
        let series = |labels: &[(&str, &str)], points: &[(u32, f64)]| Series {
            labels: labels
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            points: points.iter().map(|&(step, v)| Point { step, v }).collect(),
        };
        let m = vec![
            series(&[("a", "<&>")], &[(0, 1.0), (1, 0.25)]),
            series(&[], &[(1, 3.0)]),
        ];
        let grid = Steps::Grid(Grid::range(S, 2 * S + 500_000_000, S));
        let text = |a: &MetricAnswer| String::from_utf8(write(a)).unwrap_or_default();
        assert_eq!(
            text(&answer(MetricResult::Matrix(m.clone()), grid.clone())),
            format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"a":"\u003c\u0026\u003e"}},"values":[[1,"1"],[2,"0.25"]]}},{{"metric":{{}},"values":[[2,"3"]]}}],{stats}}}}}"#
            )
        );
        assert_eq!(
            text(&answer(MetricResult::Vector(m.clone()), grid)),
            format!(
                r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{"a":"\u003c\u0026\u003e"}},"value":[1,"1"]}},{{"metric":{{"a":"\u003c\u0026\u003e"}},"value":[2,"0.25"]}},{{"metric":{{}},"value":[2,"3"]}}],{stats}}}}}"#
            )
        );
        // The volume answers: explicit step times, labels as `serde_json`
        // escapes them (no HTML escapes, short `\b`).
        let mut volume = answer(
            MetricResult::Matrix(vec![series(&[("a", "<\u{8}>")], &[(0, 42.0), (1, 7.0)])]),
            Steps::Times(vec![1_500_000_000, 1_999_000_000]),
        );
        volume.escape = Escape::Plain;
        assert_eq!(
            text(&volume),
            format!(
                r#"{{"status":"success","data":{{"resultType":"matrix","result":[{{"metric":{{"a":"<\b>"}},"values":[[1.5,"42"],[1.999,"7"]]}}],{stats}}}}}"#
            )
        );
    }
}
