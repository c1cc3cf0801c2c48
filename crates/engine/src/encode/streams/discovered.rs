//! The labels Loki's ingest adds, added while encoding: `service_name` on
//! streams that lack it and `detected_level` structured metadata on every
//! entry (see [`crate::discovery`] for how they are derived).

use std::cmp::Ordering;

use logsql_ast::Discovery;

use super::name::{Kind, Lbl, Name};
use crate::discovery::{DETECTED_LEVEL, SERVICE_NAME, derive_service_name, level_label, level_of};

/// Adds the `service_name` Loki derives to sorted stream labels without one.
pub(super) fn add_service_name(labels: &mut Vec<Lbl<'_>>, discovery: &Discovery) {
    let get = |n: &str| labels.iter().find(|l| l.name.is(n)).map(|l| l.value);
    if !discovery.service_name() || get(SERVICE_NAME).is_some() {
        return;
    }
    let value = derive_service_name(
        discovery.service_name_labels.iter().map(String::as_str),
        get,
    );
    let name = Name::new(SERVICE_NAME);
    let at = labels.partition_point(|l| l.name.cmp(&name) == Ordering::Less);
    labels.insert(
        at,
        Lbl {
            name,
            value,
            kind: Kind::Stream,
        },
    );
}

/// The stream's level label value and whether it stores `detected_level`
/// itself (then none is synthesized).
pub(super) fn stream_level<'s>(labels: &[Lbl<'s>]) -> (Option<&'s str>, bool) {
    let get = |n: &str| labels.iter().find(|l| l.name.is(n)).map(|l| l.value);
    (level_label(get), get(DETECTED_LEVEL).is_some())
}

/// Adds the `detected_level` structured metadata Loki's ingest would have
/// stored to a row's sorted labels `out`, from the stream's level label
/// value, the row's metadata and its line.
pub(super) fn add_detected_level<'s>(
    stream_level: Option<&'s str>,
    msg: &'s str,
    out: &mut Vec<Lbl<'s>>,
) {
    let level = {
        let meta = |n: &str| {
            out.iter()
                .find(|l| l.kind == Kind::Metadata && l.name.is(n))
                .map(|l| l.value)
        };
        level_of(stream_level, &meta, msg)
    };
    let name = Name::new(DETECTED_LEVEL);
    let at = out.partition_point(|l| l.name.cmp(&name) == Ordering::Less);
    match out.get_mut(at) {
        // A stored one (normalized); a parsed label of that name stays.
        Some(l) if l.name.same(&name) => {
            if l.kind == Kind::Metadata {
                l.value = level;
            }
        }
        _ => out.insert(
            at,
            Lbl {
                name,
                value: level,
                kind: Kind::Metadata,
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{StreamsOptions, encode_streams, encode_streams_discovered};
    use super::*;
    use crate::direction::Direction;

    fn row(ns: u32, stream: &str, msg: &str, fields: &[(&str, &str)]) -> String {
        let mut obj = serde_json::Map::new();
        obj.insert(
            "_time".into(),
            format!("2024-08-22T11:20:00.{ns:09}Z").into(),
        );
        obj.insert("_stream".into(), stream.into());
        obj.insert("_msg".into(), msg.into());
        for (k, v) in fields {
            obj.insert((*k).into(), (*v).into());
        }
        Value::Object(obj).to_string() + "\n"
    }

    fn body() -> String {
        row(1, r#"{app="api"}"#, "level=error boom", &[("app", "api")])
            + &row(2, r#"{app="api"}"#, "info hi", &[("app", "api")])
            + &row(
                3,
                r#"{app="x",service_name="s"}"#,
                "plain",
                &[
                    ("app", "x"),
                    ("service_name", "s"),
                    ("detected_level", "WARNING"),
                ],
            )
            + &row(
                4,
                r#"{env="e"}"#,
                "[WARN] w",
                &[("env", "e"), ("trace_id", "t")],
            )
            + &row(5, r#"{level="Debug",job="j"}"#, "error!", &[])
    }

    fn on() -> Discovery {
        Discovery {
            service_name_labels: vec!["app".into(), "job".into()],
            log_levels: true,
        }
    }

    fn encode(categorize: bool, d: &Discovery) -> Value {
        let o = StreamsOptions {
            direction: Direction::Forward,
            limit: 100,
            categorize,
            parsed_prefix: None,
        };
        let mut buf = body().into_bytes();
        let mut out = Vec::new();
        encode_streams_discovered(&mut buf, &o, d, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        v["data"]["result"].clone()
    }

    #[test]
    fn merged_answer_splits_streams_by_detected_level() {
        let got = encode(false, &on());
        assert_eq!(
            got,
            json!([
                {"stream": {"app": "api", "detected_level": "error", "service_name": "api"},
                 "values": [["1724325600000000001", "level=error boom"]]},
                {"stream": {"app": "api", "detected_level": "info", "service_name": "api"},
                 "values": [["1724325600000000002", "info hi"]]},
                {"stream": {"app": "x", "detected_level": "warn", "service_name": "s"},
                 "values": [["1724325600000000003", "plain"]]},
                {"stream": {"detected_level": "debug", "job": "j", "level": "Debug", "service_name": "j"},
                 "values": [["1724325600000000005", "error!"]]},
                {"stream": {"detected_level": "warn", "env": "e", "service_name": "unknown_service", "trace_id": "t"},
                 "values": [["1724325600000000004", "[WARN] w"]]},
            ])
        );
    }

    #[test]
    fn categorized_answer_has_detected_level_as_structured_metadata() {
        let got = encode(true, &on());
        assert_eq!(
            got[0],
            json!({"stream": {"app": "api", "service_name": "api"},
                   "values": [
                       ["1724325600000000001", "level=error boom", {"structuredMetadata": {"detected_level": "error"}}],
                       ["1724325600000000002", "info hi", {"structuredMetadata": {"detected_level": "info"}}]]})
        );
        assert_eq!(
            got[2]["values"][0][2],
            json!({"structuredMetadata": {"detected_level": "warn", "trace_id": "t"}})
        );
        assert_eq!(got[2]["stream"]["service_name"], "unknown_service");
        // A stored `detected_level` is normalized, as Loki's distributor does.
        assert_eq!(
            got[1]["values"][0][2],
            json!({"structuredMetadata": {"detected_level": "warn"}})
        );
    }

    #[test]
    fn only_service_name_or_only_levels() {
        let sn = Discovery {
            log_levels: false,
            ..on()
        };
        let got = encode(false, &sn);
        assert_eq!(
            got[0]["stream"],
            json!({"app": "api", "service_name": "api"})
        );
        let lv = Discovery {
            service_name_labels: Vec::new(),
            log_levels: true,
        };
        let got = encode(false, &lv);
        assert_eq!(
            got[0]["stream"],
            json!({"app": "api", "detected_level": "error"})
        );
    }

    #[test]
    fn off_is_the_plain_encoder() {
        let o = StreamsOptions {
            direction: Direction::Forward,
            limit: 100,
            categorize: true,
            parsed_prefix: None,
        };
        let (mut a, mut b) = (body().into_bytes(), body().into_bytes());
        let (mut x, mut y) = (Vec::new(), Vec::new());
        encode_streams(&mut a, &o, &mut x).unwrap();
        encode_streams_discovered(&mut b, &o, &Discovery::default(), &mut y).unwrap();
        let strip = |v: &[u8]| {
            let mut v: Value = serde_json::from_slice(v).unwrap();
            v["data"]["stats"] = Value::Null;
            v
        };
        assert_eq!(strip(&x), strip(&y));
        assert!(!String::from_utf8_lossy(&y).contains("service_name\":\"api"));
    }
}
