//! The stream index as Drilldown sees it: VictoriaLogs' streams with Loki's
//! label names and the `service_name` Loki would have added at ingest.
//!
//! A selector is split in two: matchers on labels lokivl synthesizes
//! (`service_name`, `detected_level`) are evaluated by the proxy on the
//! derived label sets (they are correct whether or not the label was stored),
//! all others are lowered to a VictoriaLogs stream filter.

use logql_parser::{Expr, Selector};

use logsql_ast::Discovery;

use crate::Error;
use crate::discovery::DETECTED_LEVEL;
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

/// Parses an optional selector (empty or `{}` means every stream); a query
/// with a pipeline is refused unless `allow_pipeline`, then only its selector
/// is used. Matchers on the labels `discovery` synthesizes run in the proxy.
///
/// # Errors
/// Parse errors (400), or [`ONLY_MATCHERS`].
pub fn select(raw: &str, allow_pipeline: bool, discovery: &Discovery) -> Result<Selection, Error> {
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
        _ => return Err(Error::BadRequest(ONLY_MATCHERS.to_owned())),
    };
    split(&sel, discovery)
}

/// Splits a parsed selector: matchers on labels `discovery` synthesizes go
/// to the proxy.
///
/// # Errors
/// A regex that does not compile (400).
pub fn split(sel: &Selector, discovery: &Discovery) -> Result<Selection, Error> {
    let mut stored = Vec::new();
    let mut proxy = Vec::new();
    for m in &sel.matchers {
        if discovery.synthesizes(&m.name) {
            proxy.push(
                StrMatcher::new(m).map_err(|e| Error::BadRequest(format!("parse error : {e}")))?,
            );
        } else {
            stored.push(m.clone());
        }
    }
    let vl_query = if stored.is_empty() {
        "*".to_owned()
    } else {
        // Only stored-label matchers are left: nothing to derive.
        logsql_ast::lower_selector(&Selector { matchers: stored }, &Discovery::default())
            .map_err(|e| Error::BadRequest(format!("parse error : {e}")))?
            .to_string()
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
/// `service_name` added as Loki would under `discovery`.
///
/// # Errors
/// A malformed `_stream` (502).
pub fn derive_labels(stream: &str, discovery: &Discovery) -> Result<Vec<(String, String)>, Error> {
    let pairs = parse_stream(stream).map_err(|e| Error::Backend(e.to_string()))?;
    let mut labels: Vec<(String, String)> = pairs
        .into_iter()
        .map(|(k, v)| (sanitize_label_name(&k).into_owned(), v.into_owned()))
        .collect();
    labels.sort();
    labels.dedup_by(|a, b| a.0 == b.0);
    crate::discovery::stream::with_service_name(&mut labels, discovery);
    Ok(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on() -> Discovery {
        crate::discovery::loki_defaults()
    }

    #[test]
    fn splits_synthesized_matchers() {
        let s = select(
            r#"{service_name=~"(?i).*check.*", env="prod"}"#,
            false,
            &on(),
        )
        .unwrap();
        assert_eq!(s.vl_query, r#"{env="prod"}"#);
        assert_eq!(s.names, ["service_name", "env"]);
        let l = |v: &str| vec![("service_name".to_owned(), v.to_owned())];
        assert!(s.keeps(&l("Checkout")));
        assert!(!s.keeps(&l("payments")));
        let all = select("", false, &on()).unwrap();
        assert!(all.all && all.vl_query == "*");
        assert!(select(r#"{a="b"} |= "x""#, false, &on()).is_err());
        assert!(select(r#"{a="b"} |= "x""#, true, &on()).is_ok());
        let only = select(r#"{service_name=~".+"}"#, false, &on()).unwrap();
        assert_eq!(only.vl_query, "*");
    }

    #[test]
    fn derived_labels_get_service_name() {
        let l = derive_labels(r#"{k8s.container.name="api",env="p"}"#, &on()).unwrap();
        assert_eq!(
            l,
            vec![
                ("env".to_owned(), "p".to_owned()),
                ("k8s_container_name".to_owned(), "api".to_owned()),
                ("service_name".to_owned(), "api".to_owned()),
            ]
        );
    }

    #[test]
    fn without_discovery_nothing_is_derived() {
        let off = Discovery::default();
        let s = select(r#"{service_name="checkout", env="prod"}"#, false, &off).unwrap();
        assert!(s.proxy.is_empty());
        assert!(s.vl_query.contains("service_name"), "{}", s.vl_query);
        let l = derive_labels(r#"{app="api"}"#, &off).unwrap();
        assert_eq!(l, vec![("app".to_owned(), "api".to_owned())]);
        let only_app = Discovery {
            service_name_labels: vec!["app".into()],
            log_levels: false,
        };
        let l = derive_labels(r#"{container="c",app="api"}"#, &only_app).unwrap();
        assert!(l.contains(&("service_name".to_owned(), "api".to_owned())));
        assert!(
            !select(r#"{detected_level="error"}"#, false, &only_app)
                .unwrap()
                .needs_level()
        );
    }
}
