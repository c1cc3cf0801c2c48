//! Loki's JSON for `matrix`, `vector` and `scalar` answers.
//!
//! Written by hand into a `Vec<u8>`: the shapes are small and fixed, and the
//! number formats (times as seconds with millisecond precision, values as Go
//! `strconv.FormatFloat(v, 'f', -1, 64)` strings) are easier to get exactly
//! right without a serializer in between.

use std::io::Write as _;

use super::grid::Grid;
use super::series::{Labels, Series};
use crate::encode::json::write_str;
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
