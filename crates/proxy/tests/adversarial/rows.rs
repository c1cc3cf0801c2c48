//! VictoriaLogs NDJSON rows for the fake; the datasets that answer a query
//! the way VictoriaLogs would are the kit's ([`Dataset`]).
#![allow(dead_code, unreachable_pub, missing_docs)]

pub use crate::support::fake_vl::rows::{Dataset, MakeRow, now_ns, rfc3339};

/// 2026-08-22T09:00:00Z, the start of the hour most cases query.
pub const HOUR_START_NS: i64 = 1_787_389_200_000_000_000;
/// One hour later.
pub const HOUR_END_NS: i64 = HOUR_START_NS + 3_600_000_000_000;

/// One NDJSON row of stream `{app="<app>"}` with message `msg` and extra
/// top-level fields (structured metadata to lokivl).
pub fn row(ns: i64, app: &str, msg: &str, extra: &[(&str, &str)]) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("_time".into(), rfc3339(ns).into());
    obj.insert("_stream_id".into(), format!("id-{app}").into());
    obj.insert("_stream".into(), format!("{{app=\"{app}\"}}").into());
    obj.insert("_msg".into(), msg.into());
    obj.insert("app".into(), app.into());
    for (k, v) in extra {
        obj.insert((*k).into(), (*v).into());
    }
    serde_json::Value::Object(obj).to_string()
}
