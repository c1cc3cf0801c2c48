//! Named workloads: weighted request templates, each written twice — the
//! Loki API call Grafana sends to lokivl, and the hand-written VictoriaLogs
//! request that computes the same answer.
//!
//! Parameter values may hold placeholders filled per request from its time
//! window: `{start}`/`{end}` (Unix ns), `{end1}` (`end − 1 ns`: Loki's log
//! range is `[start, end)`, VictoriaLogs' is inclusive), `{start_rfc}`/
//! `{end_rfc}` (RFC 3339 with milliseconds, as JavaScript's `toISOString()`).

mod compute;
mod dashboard;
mod drilldown;
mod drilldown_labels;
mod heavy;
mod long_range;
mod markdown;
mod pair;
mod render;
mod small;

pub(crate) use markdown::pairs_markdown;
pub(crate) use pair::Workload;
pub(crate) use render::rfc3339_ms;

/// Every workload, in report order.
pub(crate) const WORKLOADS: &[Workload] = &[
    Workload {
        name: "small",
        templates: small::TEMPLATES,
    },
    Workload {
        name: "heavy",
        templates: heavy::TEMPLATES,
    },
    Workload {
        name: "long_range",
        templates: long_range::TEMPLATES,
    },
    Workload {
        name: "compute",
        templates: compute::TEMPLATES,
    },
    Workload {
        name: "drilldown",
        templates: drilldown::TEMPLATES,
    },
    Workload {
        name: "dashboard",
        templates: dashboard::TEMPLATES,
    },
    // Only meaningful on a dataset pushed with `--stream-labels-only`.
    Workload {
        name: "drilldown_labels",
        templates: drilldown_labels::TEMPLATES,
    },
];

/// Looks a workload up by name.
pub(crate) fn by_name(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().find(|w| w.name == name)
}

#[cfg(test)]
mod tests {
    use super::pair::HOUR;
    use super::*;

    #[test]
    fn render_fills_placeholders_and_encodes() {
        let t = &small::TEMPLATES[5];
        let r = t.direct.render(1_000_000_000, 2_000_000_000);
        assert_eq!(
            r.path_and_query,
            "/select/logsql/query?query=%7Bnamespace%3D%22prod%22%2Capp%3D%22checkout%22%7D&limit=100&start=1000000000&end=1999999999"
        );
        assert_eq!(
            rfc3339_ms(1_795_321_267_295_847_870),
            "2026-11-22T04:21:07.295Z"
        );
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn every_workload_is_named_weighted_and_loopback_free_of_hosts() {
        for w in WORKLOADS {
            assert!(!w.templates.is_empty());
            assert!(w.max_window() <= 72 * HOUR);
            for t in w.templates {
                assert!(t.weight > 0, "{}", t.name);
                assert!(t.loki.path.starts_with("/loki/api/v1/"), "{}", t.name);
                assert!(t.direct.path.starts_with("/select/logsql/"), "{}", t.name);
            }
        }
        let small = by_name("small").map(|w| w.templates.len());
        assert_eq!(small, Some(7));
        // Weights 2,1,2,1,1,2,1 → r = 0..10 covers every template in order.
        let w = by_name("small").unwrap_or(&WORKLOADS[0]);
        let picked: Vec<&str> = (0..10).map(|r| w.pick(r).name).collect();
        assert_eq!(
            picked,
            [
                "labels",
                "labels",
                "labels_query",
                "label_values_app",
                "label_values_app",
                "label_values_pod",
                "series",
                "logs_15m",
                "logs_15m",
                "logs_filter_1h"
            ]
        );
    }
}
