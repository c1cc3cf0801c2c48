//! Matchers on the labels Loki adds at ingest, rewritten over stored labels.
//!
//! Loki's distributor gives a stream without `service_name` the value of the
//! first label of `discover_service_name` that it has, else
//! `unknown_service`. VictoriaLogs stores streams as they were pushed, so
//! `{service_name="api"}` must select the streams whose *derived* value is
//! `api`: `service_name="api"`, or `service_name` absent and `service="api"`,
//! or both absent and `app="api"`, and so on. VictoriaLogs' stream filter
//! treats an absent label as `""` (checked on v1.26), so each alternative is
//! one stream filter and the whole matcher is their disjunction.

use logql_parser::{MatchOp, Matcher};

use crate::error::LowerError;
#[cfg(test)]
use crate::filter::Filter;
use crate::filter::{StreamMatcher, StreamOp};

/// The label Loki gives every stream.
pub const SERVICE_NAME: &str = "service_name";
/// The structured metadata Loki gives every entry.
pub const DETECTED_LEVEL: &str = "detected_level";
/// `service_name` when no candidate label exists.
pub const UNKNOWN_SERVICE: &str = "unknown_service";

/// Which labels lokivl synthesizes as Loki's ingest would have added them.
///
/// [`Discovery::default`] synthesizes nothing: selectors and label filters
/// then read stored labels only (Loki with `discover_service_name: []` and
/// `discover_log_levels: false`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Discovery {
    /// Loki's `discover_service_name`: the labels `service_name` is taken
    /// from, in priority order; empty disables `service_name`.
    pub service_name_labels: Vec<String>,
    /// Loki's `discover_log_levels`: every entry gets `detected_level`
    /// structured metadata.
    pub log_levels: bool,
}

impl Discovery {
    /// Whether `service_name` is derived for streams that lack it.
    pub fn service_name(&self) -> bool {
        !self.service_name_labels.is_empty()
    }

    /// Whether `name` is a label lokivl synthesizes with these settings, so
    /// that a filter on it must see the derived value.
    pub fn synthesizes(&self, name: &str) -> bool {
        (name == SERVICE_NAME && self.service_name()) || (name == DETECTED_LEVEL && self.log_levels)
    }
}

/// The filter selecting streams whose derived `service_name` satisfies `m`.
///
/// # Errors
/// [`LowerError::Unsupported`] when `m` holds a regex that does not compile.
#[cfg(test)]
pub(crate) fn service_name(m: &Matcher, labels: &[String]) -> Result<Filter, LowerError> {
    Ok(Filter::stream_any(service_name_groups(m, labels)?))
}

/// The stream-filter groups (one per link of the derivation chain, plus the
/// all-absent group for `unknown_service`) whose union is the set of streams
/// whose derived `service_name` satisfies `m`. The caller adds the
/// selector's other matchers to every group and writes one stream filter.
///
/// Every link is a Loki label name, read from each VictoriaLogs stream field
/// it can be stored in ([`crate::otel::stream_fields`]): `service_name` is
/// also `service.name`, `k8s_container_name` also `k8s.container.name`.
///
/// # Errors
/// [`LowerError::Unsupported`] when `m` holds a regex that does not compile.
pub(crate) fn service_name_groups(
    m: &Matcher,
    labels: &[String],
) -> Result<Vec<Vec<StreamMatcher>>, LowerError> {
    // The chain: the stored label first, then the candidates; a candidate
    // that repeats an earlier one can never be the first non-empty one.
    let mut chain: Vec<&str> = Vec::new();
    for l in std::iter::once(SERVICE_NAME).chain(labels.iter().map(String::as_str)) {
        for f in crate::otel::stream_fields(l) {
            if !chain.contains(&f) {
                chain.push(f);
            }
        }
    }
    chain_groups(m, &chain, UNKNOWN_SERVICE)
}

/// The stream-filter groups selecting the streams whose Loki label `m.name`
/// (stored, not derived) satisfies `m`, when the label can be stored in
/// several stream fields (an OTel index label: `k8s_pod_name` or
/// `k8s.pod.name`); `None` when it has one field and carries over as is.
///
/// # Errors
/// [`LowerError::Unsupported`] when `m` holds a regex that does not compile.
pub(crate) fn stored_groups(m: &Matcher) -> Result<Option<Vec<Vec<StreamMatcher>>>, LowerError> {
    let chain: Vec<&str> = crate::otel::stream_fields(&m.name).collect();
    if chain.len() < 2 {
        return Ok(None);
    }
    chain_groups(m, &chain, "").map(Some)
}

/// The groups for "the first non-empty field of `chain`, else `fallback`,
/// satisfies `m`".
fn chain_groups(
    m: &Matcher,
    chain: &[&str],
    fallback: &str,
) -> Result<Vec<Vec<StreamMatcher>>, LowerError> {
    let op = stream_op(m.op);
    let absent = |l: &str| StreamMatcher {
        label: l.to_owned(),
        op: StreamOp::Eq,
        value: String::new(),
    };
    // A present label is non-empty: a matcher that accepts `""` needs
    // `!=""` beside it, and `=""` can only hold for the absent label.
    let accepts_empty = matches_value(m, "")?;
    let mut branches = Vec::with_capacity(chain.len() + 1);
    for (i, label) in chain.iter().enumerate() {
        if op == StreamOp::Eq && m.value.is_empty() {
            break;
        }
        let mut ms: Vec<StreamMatcher> = chain[..i].iter().map(|l| absent(l)).collect();
        if accepts_empty {
            ms.push(StreamMatcher {
                label: (*label).to_owned(),
                op: StreamOp::Neq,
                value: String::new(),
            });
        }
        ms.push(StreamMatcher {
            label: (*label).to_owned(),
            op,
            value: m.value.clone(),
        });
        branches.push(ms);
    }
    if matches_value(m, fallback)? {
        branches.push(chain.iter().map(|l| absent(l)).collect());
    }
    Ok(branches)
}

fn stream_op(op: MatchOp) -> StreamOp {
    match op {
        MatchOp::Eq => StreamOp::Eq,
        MatchOp::Neq => StreamOp::Neq,
        MatchOp::Re => StreamOp::Re,
        MatchOp::Nre => StreamOp::Nre,
    }
}

/// Whether `value` satisfies the matcher (regexes anchored, as in selectors).
fn matches_value(m: &Matcher, value: &str) -> Result<bool, LowerError> {
    let re = || {
        regex::Regex::new(&format!("^(?:{})$", m.value))
            .map_err(|e| LowerError::Unsupported(format!("invalid regex {:?}: {e}", m.value)))
    };
    Ok(match m.op {
        MatchOp::Eq => m.value == value,
        MatchOp::Neq => m.value != value,
        MatchOp::Re => re()?.is_match(value),
        MatchOp::Nre => !re()?.is_match(value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(op: MatchOp, value: &str) -> Matcher {
        Matcher {
            name: SERVICE_NAME.into(),
            op,
            value: value.into(),
        }
    }

    fn labels(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn equality_follows_the_discovery_order() {
        let f = service_name(&m(MatchOp::Eq, "api"), &labels(&["service", "app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name="api" or service_name="", "service.name"="api" or service_name="", "service.name"="", service="api" or service_name="", "service.name"="", service="", app="api"}"#
        );
    }

    #[test]
    fn unknown_service_is_every_candidate_absent() {
        let f = service_name(&m(MatchOp::Eq, "unknown_service"), &labels(&["app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name="unknown_service" or service_name="", "service.name"="unknown_service" or service_name="", "service.name"="", app="unknown_service" or service_name="", "service.name"="", app=""}"#
        );
    }

    #[test]
    fn negative_and_regex_matchers_require_presence() {
        let f = service_name(&m(MatchOp::Neq, "api"), &labels(&["app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name!="", service_name!="api" or service_name="", "service.name"!="", "service.name"!="api" or service_name="", "service.name"="", app!="", app!="api" or service_name="", "service.name"="", app=""}"#
        );
        let f = service_name(&m(MatchOp::Re, "ap.*"), &labels(&["app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name=~"ap.*" or service_name="", "service.name"=~"ap.*" or service_name="", "service.name"="", app=~"ap.*"}"#
        );
        let f = service_name(&m(MatchOp::Re, "a|"), &labels(&["app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name!="", service_name=~"a|" or service_name="", "service.name"!="", "service.name"=~"a|" or service_name="", "service.name"="", app!="", app=~"a|"}"#
        );
        let f = service_name(&m(MatchOp::Nre, "unknown.*"), &labels(&["app", "app"])).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{service_name!="", service_name!~"unknown.*" or service_name="", "service.name"!="", "service.name"!~"unknown.*" or service_name="", "service.name"="", app!="", app!~"unknown.*"}"#
        );
    }

    #[test]
    fn empty_value_never_matches_a_derived_name() {
        // The derived value is never empty, so `=""` keeps nothing
        // (Loki refuses such a selector alone anyway).
        let f = service_name(&m(MatchOp::Eq, ""), &labels(&["app"])).unwrap();
        assert_eq!(f, Filter::Nothing);
        assert_eq!(f.to_string(), "!*");
    }

    #[test]
    fn synthesized_names() {
        let off = Discovery::default();
        assert!(!off.synthesizes(SERVICE_NAME) && !off.synthesizes(DETECTED_LEVEL));
        let on = Discovery {
            service_name_labels: labels(&["app"]),
            log_levels: true,
        };
        assert!(on.synthesizes(SERVICE_NAME) && on.synthesizes(DETECTED_LEVEL));
        assert!(!on.synthesizes("app"));
    }

    fn stored(name: &str, op: MatchOp, value: &str) -> Option<String> {
        let m = Matcher {
            name: name.into(),
            op,
            value: value.into(),
        };
        stored_groups(&m)
            .unwrap()
            .map(|g| Filter::stream_any(g).to_string())
    }

    #[test]
    fn otel_index_labels_read_the_label_or_the_attribute() {
        assert_eq!(stored("app", MatchOp::Eq, "a"), None);
        assert_eq!(
            stored("k8s_pod_name", MatchOp::Eq, "p").as_deref(),
            Some(r#"{k8s_pod_name="p" or k8s_pod_name="", "k8s.pod.name"="p"}"#)
        );
        // Absent in both; `!=` keeps the streams with neither.
        assert_eq!(
            stored("k8s_pod_name", MatchOp::Eq, "").as_deref(),
            Some(r#"{k8s_pod_name="", "k8s.pod.name"=""}"#)
        );
        assert_eq!(
            stored("service_name", MatchOp::Neq, "x").as_deref(),
            Some(
                r#"{service_name!="", service_name!="x" or service_name="", "service.name"!="", "service.name"!="x" or service_name="", "service.name"=""}"#
            )
        );
        assert_eq!(
            stored("service_name", MatchOp::Re, ".+").as_deref(),
            Some(r#"{service_name=~".+" or service_name="", "service.name"=~".+"}"#)
        );
    }

    #[test]
    fn bad_regex_is_refused() {
        assert!(service_name(&m(MatchOp::Re, "("), &labels(&["app"])).is_err());
    }
}

#[cfg(test)]
mod plan_tests {
    use logql_parser::Expr;

    use super::*;

    fn plan(q: &str, d: &Discovery) -> crate::LogPlan {
        let Ok(Expr::Log(e)) = logql_parser::parse(q) else {
            panic!("{q} is a log query")
        };
        crate::lower_log(&e, d).unwrap()
    }

    #[test]
    fn filters_on_synthesized_labels_run_in_the_proxy() {
        let on = Discovery {
            service_name_labels: vec!["app".into()],
            log_levels: true,
        };
        let p = plan(r#"{env="p"} | detected_level="error""#, &on);
        assert_eq!(p.query.to_string(), r#"{env="p"}"#);
        assert_eq!(p.proxy_stages.len(), 1);
        assert_eq!(p.discovery, on);
        let p = plan(r#"{env="p"} | level="x" or service_name="api""#, &on);
        assert_eq!(p.proxy_stages.len(), 1);
        // Without discovery they are stored fields like any other.
        let p = plan(
            r#"{env="p"} | detected_level="error""#,
            &Discovery::default(),
        );
        assert!(
            p.query
                .to_string()
                .starts_with(r#"{env="p"} and ("detected_level":="error" or"#)
        );
        assert!(p.proxy_stages.is_empty());
    }
}
