//! The stream index as Drilldown sees it: VictoriaLogs' streams with Loki's
//! label names and the `service_name` Loki would have added at ingest.
//!
//! A selector is split in two: matchers on labels lokivl synthesizes
//! (`service_name`, `detected_level`) are evaluated by the proxy on the
//! derived label sets (they are correct whether or not the label was stored),
//! all others are lowered to a VictoriaLogs stream filter.

use logql_parser::{Expr, Selector};

use super::discovery::{DETECTED_LEVEL, SERVICE_NAME};
use crate::error::ApiError;
use crate::labels::{parse_stream, sanitize_label_name};
use crate::pipeline::label_filter::StrMatcher;

/// Loki's answer when a selector was expected and something else came.
pub const ONLY_MATCHERS: &str = "only label matchers are supported";

/// A selector split between VictoriaLogs and the proxy.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The LogsQL filter of the stored-label matchers (`*` when none).
    pub vl_query: String,
    /// Matchers on synthesized labels.
    pub proxy: Vec<StrMatcher>,
    /// Every matcher's label name, in order (Loki's volume grouping labels).
    pub names: Vec<String>,
    /// The selector was empty (`{}` or no query): every stream.
    pub all: bool,
}

impl Selection {
    /// Whether a derived label set passes the proxy matchers.
    pub fn keeps(&self, labels: &[(String, String)]) -> bool {
        self.proxy.iter().all(|m| {
            let v = labels
                .iter()
                .find(|(k, _)| *k == m.name)
                .map_or("", |(_, v)| v.as_str());
            m.matches(v)
        })
    }

    /// Whether a proxy matcher names `detected_level`.
    pub fn needs_level(&self) -> bool {
        self.proxy.iter().any(|m| m.name == DETECTED_LEVEL)
    }
}

/// Whether lokivl synthesizes `name` (so its matchers run in the proxy).
pub fn is_synthesized(name: &str) -> bool {
    name == SERVICE_NAME || name == DETECTED_LEVEL
}

/// Parses an optional selector (empty or `{}` means every stream); a query
/// with a pipeline is refused unless `allow_pipeline`, then only its selector is used.
///
/// # Errors
/// Parse errors (400), or [`ONLY_MATCHERS`].
pub fn select(raw: &str, allow_pipeline: bool) -> Result<Selection, ApiError> {
    if raw.trim().is_empty() || raw.replace(' ', "") == "{}" {
        return Ok(Selection {
            vl_query: "*".to_owned(),
            proxy: Vec::new(),
            names: Vec::new(),
            all: true,
        });
    }
    let sel = match logql_parser::parse(raw)? {
        Expr::Log(log) if allow_pipeline || log.pipeline.is_empty() => log.selector,
        _ => return Err(ApiError::BadRequest(ONLY_MATCHERS.to_owned())),
    };
    split(&sel)
}

/// Splits a parsed selector.
///
/// # Errors
/// A regex that does not compile (400).
pub fn split(sel: &Selector) -> Result<Selection, ApiError> {
    let mut stored = Vec::new();
    let mut proxy = Vec::new();
    for m in &sel.matchers {
        if is_synthesized(&m.name) {
            proxy.push(
                StrMatcher::new(m)
                    .map_err(|e| ApiError::BadRequest(format!("parse error : {e}")))?,
            );
        } else {
            stored.push(m.clone());
        }
    }
    let vl_query = if stored.is_empty() {
        "*".to_owned()
    } else {
        logsql_ast::lower_selector(&Selector { matchers: stored }).to_string()
    };
    let mut names: Vec<String> = Vec::new();
    for m in &sel.matchers {
        if !names.contains(&m.name) {
            names.push(m.name.clone());
        }
    }
    Ok(Selection {
        vl_query,
        proxy,
        names,
        all: false,
    })
}

/// Parses a VictoriaLogs `_stream` value into Loki-named, sorted labels with
/// `service_name` added as Loki would.
///
/// # Errors
/// A malformed `_stream` (502).
pub fn derive_labels(stream: &str) -> Result<Vec<(String, String)>, ApiError> {
    let pairs = parse_stream(stream).map_err(|e| ApiError::BackendFailed {
        status: http::StatusCode::BAD_GATEWAY,
        message: e.to_string(),
    })?;
    let mut labels: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(k, v)| (sanitize_label_name(&k).into_owned(), v.into_owned()))
        .collect();
    labels.sort();
    labels.dedup_by(|a, b| a.0 == b.0);
    Ok(super::discovery::with_service_name(labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_synthesized_matchers() {
        let s = select(r#"{service_name=~"(?i).*check.*", env="prod"}"#, false).unwrap();
        assert_eq!(s.vl_query, r#"{env="prod"}"#);
        assert_eq!(s.names, ["service_name", "env"]);
        let l = |v: &str| vec![("service_name".to_owned(), v.to_owned())];
        assert!(s.keeps(&l("Checkout")));
        assert!(!s.keeps(&l("payments")));
        let all = select("", false).unwrap();
        assert!(all.all && all.vl_query == "*");
        assert!(select(r#"{a="b"} |= "x""#, false).is_err());
        assert!(select(r#"{a="b"} |= "x""#, true).is_ok());
        let only = select(r#"{service_name=~".+"}"#, false).unwrap();
        assert_eq!(only.vl_query, "*");
    }

    #[test]
    fn derived_labels_get_service_name() {
        let l = derive_labels(r#"{k8s.container.name="api",env="p"}"#).unwrap();
        assert_eq!(
            l,
            vec![
                ("env".to_owned(), "p".to_owned()),
                ("k8s_container_name".to_owned(), "api".to_owned()),
                ("service_name".to_owned(), "api".to_owned()),
            ]
        );
    }
}
