//! OTLP-ingested entries as Loki stores them.
//!
//! VictoriaLogs keeps an OTLP record's severity in its own fields and forms
//! (`severity_text` filled from the number, `severity_number` `0`; v1.26 one
//! `severity` field), where Loki stores `severity_text` and
//! `severity_number` structured metadata only when the record set them
//! ([`logsql_ast::otel::loki_severity`]). An entry is read as OTLP when its
//! stream has a dotted label name: Loki's push API cannot carry one, so such
//! a stream came from VictoriaLogs' OpenTelemetry ingestion (resource
//! attributes become stream fields there).

use std::borrow::Cow;

use logsql_ast::otel::{SEVERITY_NUMBER, SEVERITY_TEXT, VL_SEVERITY, loki_severity};

use crate::labels::sanitize_label_name;

/// A stream's Loki labels and whether it was ingested as OTLP, cached per
/// `_stream` while rows are read.
pub type StreamLabels = (Vec<(String, String)>, bool);

/// Whether a stream with these (VictoriaLogs-named) labels was ingested as
/// OTLP: one of its names has a dot.
pub fn is_otlp_stream<'a>(names: impl IntoIterator<Item = &'a str>) -> bool {
    names.into_iter().any(|n| n.contains('.'))
}

/// [`is_otlp_stream`] for a VictoriaLogs `_stream` value (`{a="x",b.c="y"}`);
/// a value that does not parse is not OTLP.
pub fn is_otlp_raw_stream(stream: &str) -> bool {
    crate::labels::parse_stream(stream)
        .is_ok_and(|pairs| is_otlp_stream(pairs.iter().map(|(k, _)| k.as_ref())))
}

/// Appends the structured metadata Loki stores for an entry with stored
/// fields `fields` (the stream's copies already left out) to `out`, names
/// sanitized. For an OTLP entry (`otlp`), the severity fields are
/// translated as Loki's OTLP ingestion writes them. Borrows everything.
pub fn push_metadata<'a>(
    otlp: bool,
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    out: &mut Vec<(Cow<'a, str>, &'a str)>,
) {
    let (mut text, mut number, mut severity) = (None, None, None);
    for (k, v) in fields {
        if otlp {
            let slot = match k {
                SEVERITY_TEXT => &mut text,
                SEVERITY_NUMBER => &mut number,
                VL_SEVERITY => &mut severity,
                _ => {
                    out.push((sanitize_label_name(k), v));
                    continue;
                }
            };
            *slot = Some(v);
            continue;
        }
        out.push((sanitize_label_name(k), v));
    }
    if !otlp {
        return;
    }
    let loki = loki_severity(text, number, severity);
    if let Some(n) = loki.number {
        out.push((Cow::Borrowed(SEVERITY_NUMBER), n));
    }
    if let Some(t) = loki.text {
        out.push((Cow::Borrowed(SEVERITY_TEXT), t));
    }
    // A `severity` beside v1.51's pair is the record's own attribute.
    if let (Some(s), true) = (severity, text.is_some() || number.is_some()) {
        out.push((Cow::Borrowed(VL_SEVERITY), s));
    }
}

/// The VictoriaLogs fields to group by for Loki labels `labels`: an OTel
/// index label also by its attribute, listed first so that the Loki-named
/// field wins when a stream has both (later duplicates win when the
/// sanitized names are merged).
/// A label `discovery` synthesizes (`service_name`) is grouped by stream
/// instead, so it is left as it is.
pub fn group_fields(labels: &[String], discovery: &logsql_ast::Discovery) -> Vec<String> {
    let mut out = Vec::with_capacity(labels.len());
    for l in labels {
        if let Some(a) = logsql_ast::otel::index_attribute(l)
            && !discovery.synthesizes(l)
        {
            out.push(a.to_owned());
        }
        out.push(l.clone());
    }
    out
}

/// Whether grouping by the VictoriaLogs fields `by` would read a severity
/// field VictoriaLogs fills in for OTLP records.
pub fn stores_severity(by: &[String]) -> bool {
    by.iter()
        .any(|f| logsql_ast::otel::is_severity(f) || f == VL_SEVERITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta<'a>(otlp: bool, fields: &[(&'a str, &'a str)]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        push_metadata(otlp, fields.iter().copied(), &mut out);
        let mut v: Vec<(String, String)> = out
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.to_owned()))
            .collect();
        v.sort();
        v
    }

    fn l(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn otlp_streams_have_dotted_names() {
        assert!(is_otlp_stream(["k8s.pod.name", "service.name"]));
        assert!(!is_otlp_stream(["app", "k8s_pod_name"]));
    }

    #[test]
    fn v1_51_severity_as_loki_stores_it() {
        assert_eq!(
            meta(
                true,
                &[
                    ("http.status_code", "500"),
                    ("severity_number", "21"),
                    ("severity_text", "Fatal"),
                ]
            ),
            l(&[("http_status_code", "500"), ("severity_number", "21")])
        );
        assert_eq!(
            meta(
                true,
                &[("severity_number", "0"), ("severity_text", "Unspecified")]
            ),
            l(&[])
        );
        assert_eq!(
            meta(true, &[("severity_number", "9"), ("severity_text", "INFO")]),
            l(&[("severity_number", "9"), ("severity_text", "INFO")])
        );
    }

    #[test]
    fn v1_26_severity_as_loki_stores_it() {
        assert_eq!(
            meta(true, &[("severity", "Error")]),
            l(&[("severity_number", "17")])
        );
        assert_eq!(meta(true, &[("severity", "Unspecified")]), l(&[]));
        assert_eq!(
            meta(true, &[("severity", "WARN"), ("user.id", "u1")]),
            l(&[("severity_text", "WARN"), ("user_id", "u1")])
        );
    }

    #[test]
    fn grouping_reads_the_attribute_too() {
        let by = |l: &[&str], d: &logsql_ast::Discovery| {
            group_fields(&l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(), d)
        };
        let off = logsql_ast::Discovery::default();
        assert_eq!(
            by(&["k8s_namespace_name", "app"], &off),
            ["k8s.namespace.name", "k8s_namespace_name", "app"]
        );
        // A derived `service_name` is grouped by stream, not by field.
        let on = logsql_ast::Discovery {
            service_name_labels: vec!["app".into()],
            log_levels: false,
        };
        assert_eq!(by(&["service_name"], &on), ["service_name"]);
        assert_eq!(
            by(&["service_name"], &off),
            ["service.name", "service_name"]
        );
        assert!(stores_severity(&["severity_text".to_owned()]));
        assert!(!stores_severity(&["app".to_owned()]));
    }

    #[test]
    fn other_streams_keep_their_fields() {
        assert_eq!(
            meta(false, &[("severity", "Error"), ("severity_number", "0")]),
            l(&[("severity", "Error"), ("severity_number", "0")])
        );
    }
}
