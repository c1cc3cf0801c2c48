//! OpenTelemetry names: which VictoriaLogs fields hold a Loki label of an
//! OTLP-ingested log.
//!
//! The same OTLP request becomes different names in the two stores:
//!
//! * **Resource attributes of Loki's default index list**
//!   (`distributor.otlp_config` defaults, `service.name`, `k8s.pod.name`, …)
//!   are Loki *stream labels* under their sanitized names (`service_name`,
//!   `k8s_pod_name`); VictoriaLogs keeps them as stream fields under the
//!   attribute's own dotted name. [`INDEX_LABELS`] lists every pair, so a
//!   Loki name maps to exactly one dotted field (no guessing from `_`).
//! * **Severity**: Loki stores `severity_number` only when the record has a
//!   non-zero `SeverityNumber` and `severity_text` only when it has a
//!   `SeverityText`. VictoriaLogs v1.51 always stores both, filling a missing
//!   text with its name for the number ([`VL_SEVERITY_NAMES`]) and a missing
//!   number with `0`; v1.26 stores one `severity` field: the text, else the
//!   name for the number. [`loki_severity`] undoes both.
//! * Other attributes are structured metadata in Loki under sanitized names;
//!   the label-filter lowering tries the dotted spellings for those.

/// One resource attribute Loki indexes by default: its Loki label name and
/// the attribute (VictoriaLogs stream field) it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLabel {
    /// Loki's stream label (the attribute sanitized: `.` → `_`).
    pub loki: &'static str,
    /// The OTLP resource attribute, as VictoriaLogs names its stream field.
    pub attribute: &'static str,
}

const fn il(loki: &'static str, attribute: &'static str) -> IndexLabel {
    IndexLabel { loki, attribute }
}

/// Loki 3.7's default `otlp_config` index-label list
/// (`pkg/loghttp/push/otlp_config.go`, `DefaultOTLPResourceAttributesAsIndexLabels`).
pub const INDEX_LABELS: &[IndexLabel] = &[
    il("service_name", "service.name"),
    il("service_namespace", "service.namespace"),
    il("service_instance_id", "service.instance.id"),
    il("deployment_environment", "deployment.environment"),
    il("deployment_environment_name", "deployment.environment.name"),
    il("cloud_region", "cloud.region"),
    il("cloud_availability_zone", "cloud.availability_zone"),
    il("k8s_cluster_name", "k8s.cluster.name"),
    il("k8s_namespace_name", "k8s.namespace.name"),
    il("k8s_pod_name", "k8s.pod.name"),
    il("k8s_container_name", "k8s.container.name"),
    il("container_name", "container.name"),
    il("k8s_replicaset_name", "k8s.replicaset.name"),
    il("k8s_deployment_name", "k8s.deployment.name"),
    il("k8s_statefulset_name", "k8s.statefulset.name"),
    il("k8s_daemonset_name", "k8s.daemonset.name"),
    il("k8s_cronjob_name", "k8s.cronjob.name"),
    il("k8s_job_name", "k8s.job.name"),
];

/// The resource attribute behind Loki stream label `loki`, when it is one
/// of [`INDEX_LABELS`].
pub fn index_attribute(loki: &str) -> Option<&'static str> {
    INDEX_LABELS
        .iter()
        .find(|l| l.loki == loki)
        .map(|l| l.attribute)
}

/// Whether `field` is a resource attribute Loki would index: a stream with
/// one was pushed as OTLP (Loki's push API cannot carry a dotted label).
pub fn is_index_attribute(field: &str) -> bool {
    INDEX_LABELS.iter().any(|l| l.attribute == field)
}

/// The VictoriaLogs stream fields that can hold Loki stream label `loki`,
/// by precedence: the label itself (pushed through Loki's API), then the
/// OTLP attribute it is indexed from.
pub fn stream_fields(loki: &str) -> impl Iterator<Item = &str> {
    std::iter::once(loki).chain(index_attribute(loki))
}

/// Loki's structured metadata with the record's `SeverityText`.
pub const SEVERITY_TEXT: &str = "severity_text";
/// Loki's structured metadata with the record's `SeverityNumber`.
pub const SEVERITY_NUMBER: &str = "severity_number";
/// VictoriaLogs v1.26's one severity field.
pub const VL_SEVERITY: &str = "severity";

/// VictoriaLogs' name for each `SeverityNumber` (0–24), stored when the
/// record has no `SeverityText` (its `logSeverities`, from the collector's
/// `plog.SeverityNumber.String`).
pub const VL_SEVERITY_NAMES: [&str; 25] = [
    "Unspecified",
    "Trace",
    "Trace2",
    "Trace3",
    "Trace4",
    "Debug",
    "Debug2",
    "Debug3",
    "Debug4",
    "Info",
    "Info2",
    "Info3",
    "Info4",
    "Warn",
    "Warn2",
    "Warn3",
    "Warn4",
    "Error",
    "Error2",
    "Error3",
    "Error4",
    "Fatal",
    "Fatal2",
    "Fatal3",
    "Fatal4",
];

/// `0`–`24` as text, so a number recovered from a name borrows nothing.
const NUMBERS: [&str; 25] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16",
    "17", "18", "19", "20", "21", "22", "23", "24",
];

/// The severity structured metadata Loki stores for a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LokiSeverity<'a> {
    /// `severity_text`: the record's `SeverityText`, absent when empty.
    pub text: Option<&'a str>,
    /// `severity_number`: absent when the record's number is 0.
    pub number: Option<&'a str>,
}

/// Loki's severity metadata from what VictoriaLogs stored for an OTLP
/// record: `severity_text` and `severity_number` (v1.51) or `severity`
/// (v1.26).
///
/// v1.51: a number `0` is none; a text equal to VictoriaLogs' name for the
/// number was filled in (the sender's own text spelled exactly like it is
/// indistinguishable and taken as filled in). v1.26: a name of
/// [`VL_SEVERITY_NAMES`] stands for its number with no text; any other
/// value is the text, whose number VictoriaLogs did not keep.
pub fn loki_severity<'a>(
    text: Option<&'a str>,
    number: Option<&'a str>,
    severity: Option<&'a str>,
) -> LokiSeverity<'a> {
    if let Some(n) = number {
        let filled = n
            .parse::<usize>()
            .ok()
            .and_then(|i| VL_SEVERITY_NAMES.get(i))
            .map_or("Unspecified", |name| *name);
        return LokiSeverity {
            text: text.filter(|t| !t.is_empty() && *t != filled),
            number: Some(n).filter(|n| !n.is_empty() && *n != "0"),
        };
    }
    if let Some(t) = text {
        return LokiSeverity {
            text: Some(t).filter(|t| !t.is_empty()),
            number: None,
        };
    }
    match severity {
        Some(s) => match VL_SEVERITY_NAMES.iter().position(|n| *n == s) {
            Some(0) => LokiSeverity::default(),
            Some(i) => LokiSeverity {
                text: None,
                number: Some(NUMBERS[i]),
            },
            None => LokiSeverity {
                text: Some(s).filter(|s| !s.is_empty()),
                number: None,
            },
        },
        None => LokiSeverity::default(),
    }
}

/// Whether Loki label `name` is OTel severity metadata that VictoriaLogs
/// stores differently ([`loki_severity`]): a filter on it runs in the proxy
/// on the translated value.
pub fn is_severity(name: &str) -> bool {
    name == SEVERITY_TEXT || name == SEVERITY_NUMBER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_labels_are_the_sanitized_attributes() {
        for l in INDEX_LABELS {
            assert_eq!(l.attribute.replace('.', "_"), l.loki);
        }
        assert_eq!(index_attribute("k8s_pod_name"), Some("k8s.pod.name"));
        assert_eq!(index_attribute("http_status_code"), None);
        assert_eq!(
            stream_fields("service_name").collect::<Vec<_>>(),
            ["service_name", "service.name"]
        );
        assert_eq!(stream_fields("app").collect::<Vec<_>>(), ["app"]);
        assert!(is_index_attribute("k8s.namespace.name") && !is_index_attribute("k8s_pod_name"));
    }

    fn sev<'a>(text: Option<&'a str>, number: Option<&'a str>) -> LokiSeverity<'a> {
        LokiSeverity { text, number }
    }

    #[test]
    fn v1_51_filled_in_severity_is_dropped() {
        // Record without SeverityText, number 21: VictoriaLogs fills "Fatal".
        assert_eq!(
            loki_severity(Some("Fatal"), Some("21"), None),
            sev(None, Some("21"))
        );
        // Neither set: "Unspecified" and 0.
        assert_eq!(
            loki_severity(Some("Unspecified"), Some("0"), None),
            sev(None, None)
        );
        // The sender's own text stays, whatever its case.
        assert_eq!(
            loki_severity(Some("ERROR"), Some("17"), None),
            sev(Some("ERROR"), Some("17"))
        );
        assert_eq!(
            loki_severity(Some("Warning"), Some("13"), None),
            sev(Some("Warning"), Some("13"))
        );
        // Text without a number (0).
        assert_eq!(
            loki_severity(Some("INFO"), Some("0"), None),
            sev(Some("INFO"), None)
        );
    }

    #[test]
    fn v1_26_severity_names_stand_for_numbers() {
        assert_eq!(
            loki_severity(None, None, Some("Fatal")),
            sev(None, Some("21"))
        );
        assert_eq!(
            loki_severity(None, None, Some("Trace2")),
            sev(None, Some("2"))
        );
        assert_eq!(
            loki_severity(None, None, Some("Unspecified")),
            sev(None, None)
        );
        assert_eq!(
            loki_severity(None, None, Some("INFO")),
            sev(Some("INFO"), None)
        );
        assert_eq!(loki_severity(None, None, None), sev(None, None));
    }
}
