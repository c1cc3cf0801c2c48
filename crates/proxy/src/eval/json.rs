//! Loki's JSON for scalar, vector and matrix answers.
//!
//! Written by hand into a `Vec<u8>`: the shapes are tiny and fixed, and the
//! number formats (seconds as JSON numbers, values as Go-formatted strings)
//! are easier to get exactly right without a serializer in between.

use std::io::Write as _;

use super::Value;
use crate::encode::stats::{Summary, write_stats_field};

/// Formats a sample value as Prometheus does (Go `strconv.FormatFloat(v, 'f', -1, 64)`).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v == f64::INFINITY {
        "+Inf".to_owned()
    } else if v == f64::NEG_INFINITY {
        "-Inf".to_owned()
    } else {
        // Rust's Display is the shortest round-trip decimal without exponent, like Go's 'f', -1.
        v.to_string()
    }
}

/// Formats a nanosecond time as Prometheus' `model.Time`: seconds with millisecond precision.
pub fn format_time(ns: i64) -> String {
    let ms = ns / 1_000_000;
    (ms as f64 / 1000.0).to_string()
}

fn write_sample(out: &mut Vec<u8>, ns: i64, v: f64) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "[{},\"{}\"]", format_time(ns), format_value(v));
}

fn open(out: &mut Vec<u8>, result_type: &str) {
    out.extend_from_slice(br#"{"status":"success","data":{"resultType":""#);
    out.extend_from_slice(result_type.as_bytes());
    out.extend_from_slice(br#"","result":"#);
}

fn close(out: &mut Vec<u8>) {
    out.push(b',');
    // Nothing was read from storage: the codec's full stats tree with zero counters.
    write_stats_field(out, &Summary::default());
    out.extend_from_slice(b"}}");
}

/// Writes an instant-query answer for `value` evaluated at `ns`.
pub fn write_instant(out: &mut Vec<u8>, ns: i64, value: Value) {
    match value {
        Value::Scalar(v) => {
            open(out, "scalar");
            write_sample(out, ns, v);
        }
        Value::Vector(v) => {
            open(out, "vector");
            out.push(b'[');
            if let Some(v) = v {
                out.extend_from_slice(br#"{"metric":{},"value":"#);
                write_sample(out, ns, v);
                out.push(b'}');
            }
            out.push(b']');
        }
    }
    close(out);
}

/// Writes a range-query answer: `value` at `start`, `start+step`, … up to and including `end`.
///
/// A scalar becomes a label-less series, as in Loki; an empty vector an empty matrix.
pub fn write_range(out: &mut Vec<u8>, start: i64, end: i64, step: i64, value: Value) {
    open(out, "matrix");
    out.push(b'[');
    let v = match value {
        Value::Scalar(v) | Value::Vector(Some(v)) => Some(v),
        Value::Vector(None) => None,
    };
    if let Some(v) = v {
        out.extend_from_slice(br#"{"metric":{},"values":["#);
        let mut t = start;
        let mut first = true;
        while t <= end {
            if !first {
                out.push(b',');
            }
            first = false;
            write_sample(out, t, v);
            match t.checked_add(step) {
                Some(next) => t = next,
                None => break,
            }
        }
        out.extend_from_slice(b"]}");
    }
    out.push(b']');
    close(out);
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
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
    fn health_check_vector() {
        let mut out = Vec::new();
        write_instant(&mut out, 4_000_000_000 * S, Value::Vector(Some(2.0)));
        let v = json(&out);
        assert_eq!(v["status"], "success");
        assert_eq!(v["data"]["resultType"], "vector");
        assert_eq!(
            v["data"]["result"],
            serde_json::json!([{"metric":{},"value":[4000000000u64,"2"]}])
        );
        assert_eq!(v["data"]["stats"]["summary"]["totalBytesProcessed"], 0);
    }

    #[test]
    fn scalar_and_empty_vector() {
        let mut out = Vec::new();
        write_instant(&mut out, 10 * S, Value::Scalar(2.0));
        assert_eq!(json(&out)["data"]["result"], serde_json::json!([10, "2"]));
        assert_eq!(json(&out)["data"]["resultType"], "scalar");
        out.clear();
        write_instant(&mut out, 10 * S, Value::Vector(None));
        assert_eq!(json(&out)["data"]["result"], serde_json::json!([]));
    }

    #[test]
    fn matrix_steps_include_end() {
        let mut out = Vec::new();
        write_range(&mut out, 100 * S, 130 * S, 15 * S, Value::Vector(Some(2.0)));
        let v = json(&out);
        assert_eq!(v["data"]["resultType"], "matrix");
        assert_eq!(
            v["data"]["result"],
            serde_json::json!([{"metric":{},"values":[[100,"2"],[115,"2"],[130,"2"]]}])
        );
        out.clear();
        write_range(&mut out, 100 * S, 129 * S, 15 * S, Value::Scalar(1.0));
        assert_eq!(
            json(&out)["data"]["result"][0]["values"],
            serde_json::json!([[100, "1"], [115, "1"]])
        );
        out.clear();
        write_range(&mut out, 100 * S, 130 * S, 15 * S, Value::Vector(None));
        assert_eq!(json(&out)["data"]["result"], serde_json::json!([]));
    }
}
