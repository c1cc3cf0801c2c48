//! Comparing a lokivl answer with Loki's, value by value: labels,
//! timestamps and lines exactly, metric sample values within a relative
//! tolerance.

use serde_json::Value;

use super::differential::Compared;

/// Relative tolerance for sample values of metric answers (issue 5): two
/// value strings within it are equal; everything else compares exactly.
const VALUE_TOLERANCE: f64 = 1e-9;

fn short(v: &Value) -> String {
    let s = v.to_string();
    truncate(&s, 160)
}

/// Shortens `s` for the report; `LOKIVL_DIFF_FULL=1` keeps diffs whole.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max || std::env::var_os("LOKIVL_DIFF_FULL").is_some() {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// Whether two sample-value strings are equal within [`VALUE_TOLERANCE`]
/// (finite numbers only: `NaN`, `+Inf` must be spelled the same).
fn numerically_close(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) if x.is_finite() && y.is_finite() => {
            let scale = x.abs().max(y.abs()).max(f64::MIN_POSITIVE);
            (x - y).abs() / scale <= VALUE_TOLERANCE
        }
        _ => false,
    }
}

/// Whether `path` names a sample value of a metric result: the second
/// element of a `values[i]` or `value` pair, or of a scalar result.
fn is_sample_value(path: &str) -> bool {
    let Some(pair) = path.strip_suffix("[1]") else {
        return false;
    };
    if pair.ends_with(".value") || pair == ".data.result" {
        return true;
    }
    pair.rsplit_once(".values[")
        .is_some_and(|(_, rest)| rest.ends_with(']') && !rest.contains('.'))
}

/// How values are compared: exactly (log lines), or sample values within
/// the relative tolerance (matrix, vector, scalar answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Values {
    Exact,
    Tolerant,
}

/// The first place where `loki` and `lokivl` differ, as `path: loki X, lokivl Y`.
fn first_diff(path: &str, loki: &Value, lokivl: &Value, mode: Values) -> Option<String> {
    match (loki, lokivl) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_diff(&p, x, y, mode) {
                            return Some(d);
                        }
                    }
                    (Some(x), None) => {
                        return Some(format!("{p}: loki {}, lokivl absent", short(x)));
                    }
                    (None, Some(y)) => {
                        return Some(format!("{p}: loki absent, lokivl {}", short(y)));
                    }
                    (None, None) => {}
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_diff(&format!("{path}[{i}]"), x, y, mode) {
                    let len = if a.len() == b.len() {
                        String::new()
                    } else {
                        format!(" (lengths: loki {}, lokivl {})", a.len(), b.len())
                    };
                    return Some(d + &len);
                }
            }
            if a.len() != b.len() {
                let extra = if a.len() > b.len() {
                    format!("loki has {}", short(&a[b.len()]))
                } else {
                    format!("lokivl has {}", short(&b[a.len()]))
                };
                return Some(format!(
                    "{path}: length loki {}, lokivl {}; first extra: {extra}",
                    a.len(),
                    b.len()
                ));
            }
            None
        }
        (Value::String(a), Value::String(b)) if a != b => {
            let tolerated =
                mode == Values::Tolerant && is_sample_value(path) && numerically_close(a, b);
            (!tolerated).then(|| {
                format!(
                    "{path}: loki {:?}, lokivl {:?}",
                    truncate(a, 120),
                    truncate(b, 120)
                )
            })
        }
        (Value::Number(a), Value::Number(b)) => {
            // Timestamps in seconds: compare the numbers, not their spelling.
            let same = match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x == y,
                _ => a == b,
            };
            (!same).then(|| format!("{path}: loki {a}, lokivl {b}"))
        }
        (a, b) if a != b => Some(format!("{path}: loki {}, lokivl {}", short(a), short(b))),
        _ => None,
    }
}

/// Compares lokivl's answer with Loki's: `None` when equal, else a short diff.
///
/// Compared: status; for 200 JSON answers `status`, `warnings`,
/// `data.resultType`, `data.result` (in order, every label, timestamp,
/// line, metadata object and value string) and `data.encodingFlags`
/// (`stats` is ignored); for anything else the whole body. Sample values
/// of matrix, vector and scalar answers are equal within a relative 1e-9
/// (issue 5: float sums in another order differ in the last digit); labels,
/// timestamps, series sets and log lines compare exactly.
pub fn compare(loki: &Compared, lokivl: &Compared) -> Option<String> {
    if loki.status != lokivl.status {
        let body = lokivl
            .text
            .clone()
            .or_else(|| lokivl.json.as_ref().map(Value::to_string))
            .unwrap_or_default();
        return Some(format!(
            "status: loki {}, lokivl {} ({})",
            loki.status,
            lokivl.status,
            truncate(body.trim_end(), 200)
        ));
    }
    match (&loki.json, &lokivl.json) {
        (Some(a), Some(b)) if loki.status == 200 => {
            let pick = |v: &Value| {
                let data = v.get("data");
                serde_json::json!({
                    "status": v.get("status"),
                    "warnings": v.get("warnings"),
                    "data.resultType": data.and_then(|d| d.get("resultType")),
                    "data.encodingFlags": data.and_then(|d| d.get("encodingFlags")),
                    "data.result": data.and_then(|d| d.get("result")),
                    // `labels`, `label/…/values` and `series` answer a list;
                    // Loki lists series in hash-map order, so they compare
                    // as a set.
                    "data": data.filter(|d| d.is_array()).map(|d| {
                        let mut items = d.as_array().cloned().unwrap_or_default();
                        if items.iter().all(Value::is_object) {
                            items.sort_by_key(Value::to_string);
                        }
                        Value::Array(items)
                    }),
                })
            };
            let metric = matches!(
                a.pointer("/data/resultType").and_then(Value::as_str),
                Some("matrix" | "vector" | "scalar")
            );
            let mode = if metric {
                Values::Tolerant
            } else {
                Values::Exact
            };
            first_diff("", &pick(a), &pick(b), mode)
        }
        (Some(a), Some(b)) => first_diff("body", a, b, Values::Exact),
        _ => (loki.text != lokivl.text || loki.json != lokivl.json).then(|| {
            format!(
                "body: loki {:?}, lokivl {:?}",
                truncate(loki.text.as_deref().unwrap_or("<json>"), 200),
                truncate(lokivl.text.as_deref().unwrap_or("<json>"), 200)
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_reports_the_first_difference() {
        let a = Compared::from_http(
            "r".into(),
            200,
            r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1.5,"0.1"]]}],"stats":{"x":1}}}"#,
        );
        let mut b = a.clone();
        assert_eq!(compare(&a, &b), None);
        // Sample values: equal within a relative 1e-9, not beyond.
        b.json.as_mut().unwrap()["data"]["result"][0]["values"][0][1] =
            "0.10000000000000002".into();
        assert_eq!(compare(&a, &b), None);
        b.json.as_mut().unwrap()["data"]["result"][0]["values"][0][1] = "0.1000001".into();
        let d = compare(&a, &b).unwrap();
        assert!(d.contains("values[0][1]"), "{d}");
        // Labels and timestamps stay exact, even when numeric.
        let mut c = a.clone();
        c.json.as_mut().unwrap()["data"]["result"][0]["metric"]["a"] = "1.0000000000001".into();
        assert!(compare(&a, &c).unwrap().contains("metric.a"));
        let mut t = a.clone();
        t.json.as_mut().unwrap()["data"]["result"][0]["values"][0][0] =
            serde_json::json!(1.5000000000001);
        assert!(compare(&a, &t).unwrap().contains("values[0][0]"));
        // Log lines stay exact even when they spell numbers.
        let s1 = Compared::from_http(
            "r".into(),
            200,
            r#"{"status":"success","data":{"resultType":"streams","result":[{"stream":{"a":"1"},"values":[["1","0.1"]]}]}}"#,
        );
        let mut s2 = s1.clone();
        s2.json.as_mut().unwrap()["data"]["result"][0]["values"][0][1] =
            "0.10000000000000002".into();
        assert!(compare(&s1, &s2).is_some());
        // Scalar and vector results are tolerant too.
        assert!(is_sample_value(".data.result[1]"));
        assert!(is_sample_value(".data.result[3].value[1]"));
        assert!(!is_sample_value(".data.result[3].metric.x[1]"));
        let e = Compared::from_http("r".into(), 400, "parse error\n");
        assert!(
            compare(&a, &e)
                .unwrap()
                .starts_with("status: loki 200, lokivl 400")
        );
    }
}
