//! `drilldown_labels`: the `drilldown` workload on data that stores the
//! stream labels only (`--stream-labels-only`), as most Loki users ship it.
//!
//! Grafana sends the same requests as on any data, so the Loki calls are
//! `drilldown`'s own: lokivl derives `service_name` from `app` and
//! `detected_level` from the line, as Loki does. VictoriaLogs called
//! directly has neither field; its side selects `app` and reads the level
//! from the JSON line, the nearest query a user would write by hand.

use super::drilldown::TEMPLATES as STORED;
use super::pair::{Template, VQ, VSR, vl};

/// The workload's request pairs.
pub(super) const TEMPLATES: &[Template] = &[
    Template {
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{app="checkout"} | unpack_json fields (level) | stats by (level) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "the level read from the JSON line (checkout writes JSON)",
        ..STORED[0]
    },
    Template {
        direct: vl(
            VQ,
            &[
                ("query", r#"{app="checkout"} | unpack_json"#),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "logfmt after json adds nothing on JSON lines; only unpack_json is asked",
        ..STORED[1]
    },
    Template {
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{app="checkout"} | unpack_json | filter level:in(error, warn)"#,
                ),
                ("limit", "1000"),
                ("start", "{start}"),
                ("end", "{end1}"),
            ],
        ),
        note: "the level read from the JSON line",
        ..STORED[2]
    },
    Template {
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{app="checkout",namespace!=""} | stats by (namespace) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "",
        ..STORED[3]
    },
    Template {
        direct: vl(
            VSR,
            &[
                (
                    "query",
                    r#"{app="checkout"} | unpack_json fields (method) | filter method:* | stats by (method) count() hits"#,
                ),
                ("start", "{start}"),
                ("end", "{end}"),
                ("step", "5s"),
            ],
        ),
        note: "",
        ..STORED[4]
    },
    Template {
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    "* | stats count_uniq(namespace) namespace, count_uniq(app) app, count_uniq(pod) pod, count_uniq(container) container",
                ),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "cardinality of each stored label",
        ..STORED[5]
    },
    Template {
        direct: vl(
            "/select/logsql/field_names",
            &[
                ("query", r#"{app="checkout"} | unpack_json"#),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "",
        ..STORED[6]
    },
    Template {
        direct: vl(
            VQ,
            &[
                (
                    "query",
                    r#"{app=~".+"} | stats by (app) sum_len(_msg) bytes"#,
                ),
                ("start", "{start_rfc}"),
                ("end", "{end_rfc}"),
            ],
        ),
        note: "volume in bytes per app (the service_name lokivl derives)",
        ..STORED[7]
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loki_side_is_drilldowns_own_and_the_direct_side_stores_no_service_name() {
        assert_eq!(TEMPLATES.len(), STORED.len());
        for (t, s) in TEMPLATES.iter().zip(STORED) {
            assert_eq!(
                (t.name, t.weight, t.window_ns),
                (s.name, s.weight, s.window_ns)
            );
            assert_eq!(t.loki.params, s.loki.params, "{}", t.name);
            let direct = t.direct.params.iter().map(|(_, v)| *v).collect::<String>();
            assert!(!direct.contains("service_name"), "{}", t.name);
            assert!(!direct.contains("detected_level"), "{}", t.name);
        }
    }
}
