//! Multi-tenant calls (`X-Scope-OrgID: a|b`): one VictoriaLogs call per
//! tenant, answers merged, every result labelled `__tenant_id__` as Loki's
//! multi-tenant querier does.
//!
//! Supported: log entries (`/select/logsql/query`, so log queries and the
//! metric queries lokivl evaluates from raw entries), stream and field names,
//! stream and field values, and streams (series). Calls whose answers cannot
//! be merged without re-aggregating (VictoriaLogs stats and hits) are refused.

use std::collections::BTreeMap;

use bytes::BytesMut;

use super::{Member, TENANT_LABEL, Tenant};
use crate::backend::{Backend, BackendError, Endpoint};
use crate::ndjson::time::parse_rfc3339_nanos;

/// Runs `form` against every member of `tenant` and merges the answers.
///
/// # Errors
/// The first member's [`BackendError`], or [`BackendError::Unsupported`] for
/// endpoints whose answers cannot be merged.
pub async fn post_form(
    backend: &Backend,
    endpoint: Endpoint,
    form: &[(&str, &str)],
    tenant: &Tenant,
) -> Result<BytesMut, BackendError> {
    let members = tenant.members();
    match endpoint {
        Endpoint::Query
        | Endpoint::StreamFieldNames
        | Endpoint::FieldNames
        | Endpoint::Streams
        | Endpoint::StreamFieldValues
        | Endpoint::FieldValues => {}
        _ => {
            return Err(BackendError::Unsupported(format!(
                "queries over several tenants (X-Scope-OrgID {}) are supported for log queries, \
                 labels, label values and series; this one needs VictoriaLogs `{}` per tenant",
                names(members),
                endpoint.name()
            )));
        }
    }
    let field = form.iter().find(|(k, _)| *k == "field").map(|(_, v)| *v);
    if matches!(
        endpoint,
        Endpoint::StreamFieldValues | Endpoint::FieldValues
    ) && field == Some(TENANT_LABEL)
    {
        let hits: Vec<(String, u64)> = members.iter().map(|m| (m.name.clone(), 1)).collect();
        return Ok(write_values(hits));
    }
    let mut answers = Vec::with_capacity(members.len());
    for m in members {
        let one = Tenant::resolved(vec![m.clone()]);
        let body = super::scope(one, backend.post_form_one(endpoint, form)).await?;
        answers.push((m, body));
    }
    match endpoint {
        Endpoint::Query => Ok(merge_entries(&answers, form)),
        Endpoint::StreamFieldNames | Endpoint::FieldNames => {
            let mut hits = merge_values(&answers)?;
            let total = hits.values().sum::<u64>().max(1);
            hits.insert(TENANT_LABEL.to_owned(), total);
            Ok(write_values(hits.into_iter().collect()))
        }
        Endpoint::Streams => {
            let mut out = Vec::new();
            for (m, body) in &answers {
                for (v, h) in parse_values(body)? {
                    out.push((with_tenant_label(&v, &m.name), h));
                }
            }
            Ok(write_values(out))
        }
        _ => Ok(write_values(merge_values(&answers)?.into_iter().collect())),
    }
}

fn names(members: &[Member]) -> String {
    members
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join("|")
}

/// `{a="b"}` → `{__tenant_id__="t",a="b"}`. Tenant ids never need quoting
/// (their characters are checked when resolved).
pub fn with_tenant_label(stream: &str, name: &str) -> String {
    let inner = stream
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or("")
        .trim();
    if inner.is_empty() {
        format!("{{{TENANT_LABEL}=\"{name}\"}}")
    } else {
        format!("{{{TENANT_LABEL}=\"{name}\",{inner}}}")
    }
}

#[derive(serde::Deserialize)]
struct Values {
    values: Vec<Hit>,
}

#[derive(serde::Deserialize)]
struct Hit {
    value: String,
    #[serde(default)]
    hits: u64,
}

fn parse_values(body: &[u8]) -> Result<Vec<(String, u64)>, BackendError> {
    let v: Values = serde_json::from_slice(body)
        .map_err(|e| BackendError::Body(format!("invalid values answer: {e}")))?;
    Ok(v.values.into_iter().map(|h| (h.value, h.hits)).collect())
}

fn merge_values(answers: &[(&Member, BytesMut)]) -> Result<BTreeMap<String, u64>, BackendError> {
    let mut all = BTreeMap::new();
    for (_, body) in answers {
        for (v, h) in parse_values(body)? {
            *all.entry(v).or_insert(0) += h;
        }
    }
    Ok(all)
}

fn write_values(values: Vec<(String, u64)>) -> BytesMut {
    let values: Vec<serde_json::Value> = values
        .into_iter()
        .map(|(value, hits)| serde_json::json!({"value": value, "hits": hits}))
        .collect();
    let out = serde_json::json!({ "values": values });
    BytesMut::from(out.to_string().as_bytes())
}

/// The `N` of a trailing `| sort by (_time) limit N` (forward pages).
fn forward_limit(query: &str) -> Option<usize> {
    let rest = query.trim_end();
    let idx = rest.rfind("| sort by (_time) limit ")?;
    rest[idx + "| sort by (_time) limit ".len()..].parse().ok()
}

/// Labels every entry with its tenant, then keeps what one call would have
/// returned: the newest `limit` (backward) or oldest `N` (forward) overall,
/// so paging over the merged answer stays exact.
fn merge_entries(answers: &[(&Member, BytesMut)], form: &[(&str, &str)]) -> BytesMut {
    let mut rows: Vec<(i64, Vec<u8>)> = Vec::new();
    for (m, body) in answers {
        for line in body[..].split(|&b| b == b'\n') {
            let Ok(mut obj) =
                serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
            else {
                continue;
            };
            let ts = obj
                .get("_time")
                .and_then(|t| t.as_str())
                .and_then(parse_rfc3339_nanos)
                .unwrap_or(0);
            if let Some(serde_json::Value::String(s)) = obj.get_mut("_stream") {
                *s = with_tenant_label(s, &m.name);
            }
            obj.insert(
                TENANT_LABEL.to_owned(),
                serde_json::Value::String(m.name.clone()),
            );
            let mut bytes = serde_json::to_vec(&obj).unwrap_or_default();
            bytes.push(b'\n');
            rows.push((ts, bytes));
        }
    }
    let get = |k: &str| form.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    if let Some(limit) = get("limit").and_then(|l| l.parse::<usize>().ok()) {
        rows.sort_by_key(|r| std::cmp::Reverse(r.0));
        rows.truncate(limit);
    } else if let Some(n) = get("query").and_then(forward_limit) {
        rows.sort_by_key(|r| r.0);
        rows.truncate(n);
    }
    let mut out = BytesMut::with_capacity(rows.iter().map(|r| r.1.len()).sum());
    for (_, r) in rows {
        out.extend_from_slice(&r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tenant::VlTenant;

    fn member(name: &str) -> Member {
        Member {
            name: name.into(),
            vl: VlTenant::default(),
        }
    }

    #[test]
    fn stream_labels() {
        assert_eq!(with_tenant_label("{}", "a"), r#"{__tenant_id__="a"}"#);
        assert_eq!(
            with_tenant_label(r#"{app="x",env="y"}"#, "12"),
            r#"{__tenant_id__="12",app="x",env="y"}"#
        );
    }

    #[test]
    fn entries_are_labelled_and_limited() {
        let a = member("a");
        let b = member("b");
        let body_a = BytesMut::from(
            "{\"_time\":\"2026-01-01T00:00:03Z\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"a3\",\"app\":\"x\"}\n\
             {\"_time\":\"2026-01-01T00:00:01Z\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"a1\",\"app\":\"x\"}\n",
        );
        let body_b = BytesMut::from(
            "{\"_time\":\"2026-01-01T00:00:02Z\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"b2\",\"app\":\"x\"}\n",
        );
        let answers = vec![(&a, body_a), (&b, body_b)];
        let out = merge_entries(&answers, &[("query", "*"), ("limit", "2")]);
        let lines: Vec<serde_json::Value> = out[..]
            .split(|&c| c == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["_msg"], "a3");
        assert_eq!(lines[1]["_msg"], "b2");
        assert_eq!(lines[1]["__tenant_id__"], "b");
        assert_eq!(lines[1]["_stream"], r#"{__tenant_id__="b",app="x"}"#);
        let fwd = merge_entries(&answers, &[("query", "* | sort by (_time) limit 2")]);
        let first: serde_json::Value =
            serde_json::from_slice(fwd[..].split(|&c| c == b'\n').next().unwrap()).unwrap();
        assert_eq!(first["_msg"], "a1");
        assert_eq!(forward_limit("x | sort by (_time) limit 17"), Some(17));
        assert_eq!(forward_limit("x | sort by (_time desc) limit 17"), None);
    }

    #[test]
    fn values_are_merged() {
        let a = member("a");
        let b = member("b");
        let answers = vec![
            (
                &a,
                BytesMut::from(r#"{"values":[{"value":"app","hits":2}]}"#),
            ),
            (
                &b,
                BytesMut::from(r#"{"values":[{"value":"app","hits":1},{"value":"env","hits":1}]}"#),
            ),
        ];
        let m = merge_values(&answers).unwrap();
        assert_eq!(m["app"], 3);
        assert_eq!(m["env"], 1);
    }
}
