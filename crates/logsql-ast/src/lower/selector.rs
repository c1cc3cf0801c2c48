//! Stream selectors to VictoriaLogs stream filters.

use logql_parser::{MatchOp, Selector};

use super::discovery::{self, Discovery, SERVICE_NAME};
use crate::error::LowerError;
use crate::filter::{Filter, StreamMatcher, StreamOp};

/// Lowers `{a="x", b=~"re"}` to the same VictoriaLogs stream filter.
///
/// VictoriaLogs anchors stream-filter regexes and treats a missing label as
/// empty, as Prometheus and Loki do, so the matchers carry over unchanged,
/// except those on `service_name` when `discovery` derives it: they select
/// on the derived value ([`discovery::service_name_groups`]), and those on an
/// OTel index label (`k8s_pod_name`), which select on the label or on the
/// dotted attribute VictoriaLogs stores for OTLP (`k8s.pod.name`,
/// [`discovery::stored_groups`]).
///
/// # Errors
/// [`LowerError::Unsupported`] for a `service_name` regex that does not compile.
pub(crate) fn lower(selector: &Selector, discovery: &Discovery) -> Result<Filter, LowerError> {
    let mut stored = Vec::with_capacity(selector.matchers.len());
    let mut derived = Vec::new();
    for m in &selector.matchers {
        if m.name == SERVICE_NAME && discovery.service_name() {
            derived.push(discovery::service_name_groups(
                m,
                &discovery.service_name_labels,
            )?);
            continue;
        }
        if let Some(groups) = discovery::stored_groups(m)? {
            derived.push(groups);
            continue;
        }
        stored.push(StreamMatcher {
            label: m.name.clone(),
            op: match m.op {
                MatchOp::Eq => StreamOp::Eq,
                MatchOp::Neq => StreamOp::Neq,
                MatchOp::Re => StreamOp::Re,
                MatchOp::Nre => StreamOp::Nre,
            },
            value: m.value.clone(),
        });
    }
    let mut derived = derived.into_iter();
    let Some(first) = derived.next() else {
        return Ok(if stored.is_empty() {
            Filter::All
        } else {
            Filter::Stream(stored)
        });
    };
    // One stream filter: the stored matchers repeated in every group of the
    // first derived matcher. A second `service_name` matcher (rare) is its
    // own stream filter beside it.
    let merged = first
        .into_iter()
        .map(|group| stored.iter().cloned().chain(group).collect())
        .collect();
    Ok(Filter::and(
        std::iter::once(Filter::stream_any(merged)).chain(derived.map(Filter::stream_any)),
    ))
}

#[cfg(test)]
mod tests {
    use logql_parser::Matcher;

    use super::*;

    fn sel(ms: &[(&str, MatchOp, &str)]) -> Selector {
        Selector {
            matchers: ms
                .iter()
                .map(|(n, op, v)| Matcher {
                    name: (*n).into(),
                    op: *op,
                    value: (*v).into(),
                })
                .collect(),
        }
    }

    fn on() -> Discovery {
        Discovery {
            service_name_labels: vec!["service".into(), "app".into()],
            log_levels: true,
        }
    }

    #[test]
    fn without_discovery_matchers_carry_over() {
        let s = sel(&[
            ("service_name", MatchOp::Eq, "api"),
            ("env", MatchOp::Re, "p.*"),
        ]);
        // Without discovery `service_name` is stored: the label, or the OTel
        // attribute VictoriaLogs keeps for an OTLP resource.
        let f = lower(&s, &Discovery::default()).unwrap();
        assert_eq!(
            f.to_string(),
            r#"{env=~"p.*", service_name="api" or env=~"p.*", service_name="", "service.name"="api"}"#
        );
        let plain = sel(&[("app", MatchOp::Eq, "api"), ("env", MatchOp::Re, "p.*")]);
        assert_eq!(
            lower(&plain, &Discovery::default()).unwrap().to_string(),
            r#"{app="api", env=~"p.*"}"#
        );
        assert_eq!(lower(&sel(&[]), &on()).unwrap(), Filter::All);
    }

    #[test]
    fn service_name_selects_on_the_derived_value() {
        let s = sel(&[
            ("env", MatchOp::Eq, "prod"),
            ("service_name", MatchOp::Eq, "api"),
        ]);
        assert_eq!(
            lower(&s, &on()).unwrap().to_string(),
            r#"{env="prod", service_name="api" or env="prod", service_name="", "service.name"="api" or env="prod", service_name="", "service.name"="", service="api" or env="prod", service_name="", "service.name"="", service="", app="api"}"#
        );
        let only = sel(&[("service_name", MatchOp::Eq, "unknown_service")]);
        assert_eq!(
            lower(&only, &on()).unwrap().to_string(),
            r#"{service_name="unknown_service" or service_name="", "service.name"="unknown_service" or service_name="", "service.name"="", service="unknown_service" or service_name="", "service.name"="", service="", app="unknown_service" or service_name="", "service.name"="", service="", app=""}"#
        );
    }

    #[test]
    fn detected_level_in_a_selector_stays_a_stream_label() {
        // Loki's `detected_level` is structured metadata, never a stream
        // label: `{detected_level="error"}` selects no stream there either.
        let s = sel(&[("detected_level", MatchOp::Eq, "error")]);
        assert_eq!(
            lower(&s, &on()).unwrap().to_string(),
            r#"{detected_level="error"}"#
        );
    }
}
