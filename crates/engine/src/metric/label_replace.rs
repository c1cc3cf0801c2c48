//! `label_replace(v, dst, replacement, src, regex)` with Prometheus' semantics.

use logql_parser::LabelReplace;
use regex::Regex;

use super::error::EngineError;
use super::series::{Matrix, normalize};

/// Rewrites each series' `dst` label when the anchored `regex` matches its
/// `src` value (missing labels read as `""`); an empty result removes `dst`.
///
/// # Errors
/// [`EngineError::Unsupported`] when the regex does not compile.
pub fn apply(lr: &LabelReplace, mut m: Matrix) -> Result<Matrix, EngineError> {
    let re = Regex::new(&format!("^(?s:{})$", lr.regex)).map_err(|e| {
        EngineError::Unsupported(format!(
            "invalid regular expression in label_replace(): {e}"
        ))
    })?;
    for s in &mut m {
        let src = s
            .labels
            .iter()
            .find(|(n, _)| *n == lr.src)
            .map_or("", |(_, v)| v.as_str());
        let Some(caps) = re.captures(src) else {
            continue;
        };
        let mut value = String::new();
        caps.expand(&lr.replacement, &mut value);
        let mut labels = std::mem::take(&mut s.labels);
        labels.retain(|(n, _)| *n != lr.dst);
        labels.push((lr.dst.clone(), value));
        s.labels = normalize(labels);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::series::{Point, Series};

    fn lr(dst: &str, rep: &str, src: &str, re: &str) -> LabelReplace {
        LabelReplace {
            inner: Box::new(logql_parser::MetricExpr::Literal(0.0)),
            dst: dst.into(),
            replacement: rep.into(),
            src: src.into(),
            regex: re.into(),
        }
    }

    fn m() -> Matrix {
        vec![Series {
            labels: vec![("app".into(), "api-prod".into())],
            points: vec![Point { step: 0, v: 1.0 }],
        }]
    }

    #[test]
    fn captures_and_anchoring() {
        let out = apply(&lr("env", "$1", "app", "api-(.*)"), m()).unwrap();
        assert_eq!(
            out[0].labels,
            vec![
                ("app".to_owned(), "api-prod".to_owned()),
                ("env".to_owned(), "prod".to_owned())
            ]
        );
        // Anchored: "prod" alone does not match "api-prod".
        let out = apply(&lr("env", "x", "app", "prod"), m()).unwrap();
        assert_eq!(out[0].labels.len(), 1);
        // Empty result deletes the label.
        let out = apply(&lr("app", "", "app", ".*"), m()).unwrap();
        assert!(out[0].labels.is_empty());
        assert!(apply(&lr("a", "", "b", "("), m()).is_err());
    }
}
