//! Multi-tenant calls (`X-Scope-OrgID: a|b`): one VictoriaLogs call per
//! tenant, answers merged, every result labelled `__tenant_id__` as Loki's
//! multi-tenant querier does.
//!
//! Supported: log entries (`/select/logsql/query`, so log queries and the
//! metric queries lokivl evaluates from raw entries), stream and field names,
//! stream and field values, and streams (series). Calls whose answers cannot
//! be merged without re-aggregating (VictoriaLogs stats and hits) are refused.
//! `__tenant_id__` matchers in a log query's stream filter pick the tenants
//! and are removed before the calls (Loki's `filterValuesByMatchers`).

use std::collections::BTreeMap;

use bytes::BytesMut;

use super::{Member, TENANT_LABEL, Tenant};
use crate::backend::{Backend, BackendError, Endpoint, LogsQl, Request, Take};
use crate::context::RequestContext;
use go::time::parse_rfc3339_nanos;

impl Backend {
    /// Sends `req` for the request's tenant and returns the whole 2xx body:
    /// one call for one tenant, one call per tenant merged for several
    /// (`X-Scope-OrgID: a|b`).
    ///
    /// It lives here, above [`Backend::send_one`], so that the client knows
    /// nothing of fan-out.
    ///
    /// # Errors
    /// [`BackendError`] on connection failure, deadline, non-2xx status or a
    /// broken body; see [`send_all`] for several tenants.
    pub async fn send(
        &self,
        ctx: &RequestContext,
        req: &Request,
    ) -> Result<BytesMut, BackendError> {
        match ctx.single_tenant() {
            Some(one) => self.send_one(one, req).await,
            None if ctx.tenant().is_multi() => send_all(self, req, ctx.tenant()).await,
            // An unresolved tenant (a defect): refused rather than sent to
            // VictoriaLogs' default tenant.
            None => Err(BackendError::Request(
                "internal error: a VictoriaLogs call was made without the request's tenant".into(),
            )),
        }
    }
}

/// Runs `req` against every member of `tenant` and merges the answers.
///
/// # Errors
/// The first member's [`BackendError`], or [`BackendError::Unsupported`] for
/// endpoints whose answers cannot be merged.
pub async fn send_all(
    backend: &Backend,
    req: &Request,
    tenant: &Tenant,
) -> Result<BytesMut, BackendError> {
    let members = tenant.members();
    let endpoint = req.endpoint;
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
    if matches!(
        endpoint,
        Endpoint::StreamFieldValues | Endpoint::FieldValues
    ) && req.field.as_deref() == Some(TENANT_LABEL)
    {
        let hits: Vec<(String, u64)> = members.iter().map(|m| (m.name.clone(), 1)).collect();
        return Ok(write_values(hits));
    }
    // Log entries (log queries and the metric queries evaluated from them):
    // `__tenant_id__` matchers pick the tenants, as in Loki's SelectLogs and
    // SelectSamples, and are removed before each tenant's call.
    let narrowed = match endpoint {
        Endpoint::Query => Some(narrow(&req.query.to_string(), members)?),
        _ => None,
    };
    let (members, rewritten): (Vec<&Member>, Option<Request>) = match narrowed {
        Some(n) => (
            n.members,
            Some(Request {
                query: LogsQl::Text(n.query),
                ..req.clone()
            }),
        ),
        None => (members.iter().collect(), None),
    };
    let req = rewritten.as_ref().unwrap_or(req);
    let answers = call_members(backend, req, members).await?;
    match endpoint {
        Endpoint::Query => Ok(merge_entries(&answers, req.take)),
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

/// One call per member, `backend.fanout_parallelism()` at a time, answers
/// in member order (so merging is the same as calling them one by one).
///
/// The calls run in this task, each for its member's VictoriaLogs tenant; the
/// backend gate still bounds all calls of all requests together.
///
/// # Errors
/// The error of the first member (in member order) whose call fails; the
/// calls still running are dropped, which cancels them.
async fn call_members<'m>(
    backend: &Backend,
    req: &Request,
    members: Vec<&'m Member>,
) -> Result<Vec<(&'m Member, BytesMut)>, BackendError> {
    use futures_util::{StreamExt as _, TryStreamExt as _};
    let calls: Vec<_> = members
        .into_iter()
        .map(|m| call_member(backend, req, m))
        .collect();
    futures_util::stream::iter(calls)
        .buffered(backend.fanout_parallelism())
        .try_collect()
        .await
}

/// One member's call, to its own VictoriaLogs tenant.
async fn call_member<'m>(
    backend: &Backend,
    req: &Request,
    m: &'m Member,
) -> Result<(&'m Member, BytesMut), BackendError> {
    let body = backend.send_one(m.vl, req).await?;
    Ok((m, body))
}

/// A query with its `__tenant_id__` matchers applied.
#[derive(Debug)]
struct Narrowed<'a> {
    /// The query without them (unchanged when it had none).
    query: String,
    /// The tenants they match, in request order.
    members: Vec<&'a Member>,
}

/// Applies the `__tenant_id__` matchers of the query's stream filters to
/// `members` and removes them (Loki's `filterValuesByMatchers`); a stream
/// filter left without matchers selects everything (`*`).
///
/// # Errors
/// [`BackendError::Unsupported`] for a regex that does not compile.
fn narrow<'a>(query: &str, members: &'a [Member]) -> Result<Narrowed<'a>, BackendError> {
    let mut kept: Vec<&Member> = members.iter().collect();
    let mut out = String::with_capacity(query.len());
    let mut found = false;
    let mut rest = query;
    while let Some(open) = find_unquoted(rest, '{') {
        out.push_str(&rest[..open]);
        let body_start = open + 1;
        let Some(close) = find_unquoted(&rest[body_start..], '}').map(|c| body_start + c) else {
            break;
        };
        let mut others = Vec::new();
        for part in split_unquoted(&rest[body_start..close]) {
            match tenant_matcher(part.trim()) {
                Some((op, value)) => {
                    found = true;
                    let re = match op {
                        "=~" | "!~" => {
                            Some(regex::Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                                BackendError::Unsupported(format!(
                                    "invalid {TENANT_LABEL} regex: {e}"
                                ))
                            })?)
                        }
                        _ => None,
                    };
                    kept.retain(|m| match (op, &re) {
                        ("=", _) => m.name == value,
                        ("!=", _) => m.name != value,
                        ("=~", Some(re)) => re.is_match(&m.name),
                        (_, Some(re)) => !re.is_match(&m.name),
                        _ => true,
                    });
                }
                None => others.push(part.trim()),
            }
        }
        if others.is_empty() {
            out.push('*');
        } else {
            out.push('{');
            out.push_str(&others.join(", "));
            out.push('}');
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(Narrowed {
        query: if found { out } else { query.to_owned() },
        members: kept,
    })
}

/// Byte offset of the first `c` outside double-quoted strings.
fn find_unquoted(s: &str, c: char) -> Option<usize> {
    let mut quoted = false;
    let mut escaped = false;
    for (i, ch) in s.char_indices() {
        match ch {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if !quoted && ch == c => return Some(i),
            _ => {}
        }
    }
    None
}

/// The matchers of a stream filter body, split on unquoted commas.
fn split_unquoted(mut s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    while let Some(i) = find_unquoted(s, ',') {
        parts.push(&s[..i]);
        s = &s[i + 1..];
    }
    if !s.trim().is_empty() {
        parts.push(s);
    }
    parts
}

/// `__tenant_id__="a"` (any of `=`, `!=`, `=~`, `!~`) → operator and value.
fn tenant_matcher(m: &str) -> Option<(&'static str, String)> {
    let rest = m.strip_prefix(TENANT_LABEL)?.trim_start();
    let (op, rest) = ["=~", "!~", "!=", "="]
        .into_iter()
        .find_map(|op| rest.strip_prefix(op).map(|r| (op, r.trim_start())))?;
    let inner = rest.strip_prefix('"')?.strip_suffix('"')?;
    let mut value = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            value.push(c);
            continue;
        }
        match chars.next()? {
            'n' => value.push('\n'),
            'r' => value.push('\r'),
            't' => value.push('\t'),
            'x' => {
                let hex: String = chars.by_ref().take(2).collect();
                value.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
            }
            other => value.push(other),
        }
    }
    Some((op, value))
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

/// Labels every entry with its tenant, then keeps what one call would have
/// returned: the newest `limit` (backward) or oldest `N` (forward) overall,
/// so paging over the merged answer stays exact.
fn merge_entries(answers: &[(&Member, BytesMut)], take: Option<Take>) -> BytesMut {
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
    match take {
        Some(Take::Newest(limit)) => {
            rows.sort_by_key(|r| std::cmp::Reverse(r.0));
            rows.truncate(limit);
        }
        Some(Take::Oldest(n)) => {
            rows.sort_by_key(|r| r.0);
            rows.truncate(n);
        }
        None => {}
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
        let out = merge_entries(&answers, Some(Take::Newest(2)));
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
        let fwd = merge_entries(&answers, Some(Take::Oldest(2)));
        let first: serde_json::Value =
            serde_json::from_slice(fwd[..].split(|&c| c == b'\n').next().unwrap()).unwrap();
        assert_eq!(first["_msg"], "a1");
    }

    #[test]
    fn tenant_matchers_narrow_the_tenants() {
        let ms = [member("a"), member("b"), member("team-c")];
        let names = |n: &Narrowed<'_>| -> Vec<String> {
            n.members.iter().map(|m| m.name.clone()).collect()
        };
        let n = narrow(r#"{app="x", __tenant_id__="a"} | stats count()"#, &ms).unwrap();
        assert_eq!(names(&n), ["a"]);
        assert_eq!(n.query, r#"{app="x"} | stats count()"#);
        let n = narrow(r#"{__tenant_id__=~"a|team-.*"} "__tenant_id__=\"b\"""#, &ms).unwrap();
        assert_eq!(names(&n), ["a", "team-c"]);
        // The selector is left empty (all streams); the quoted phrase is untouched.
        assert_eq!(n.query, r#"* "__tenant_id__=\"b\"""#);
        let n = narrow(r#"{__tenant_id__!="a", app=~"x,y"}"#, &ms).unwrap();
        assert_eq!(names(&n), ["b", "team-c"]);
        assert_eq!(n.query, r#"{app=~"x,y"}"#);
        let n = narrow(r#"{__tenant_id__!~"a|b"}"#, &ms).unwrap();
        assert_eq!(names(&n), ["team-c"]);
        let n = narrow(r#"{__tenant_id__="nobody", app="x"}"#, &ms).unwrap();
        assert!(n.members.is_empty());
        // Without a tenant matcher the query is kept byte for byte.
        let q = r#"{app="x",env="y"} | fields _msg"#;
        let n = narrow(q, &ms).unwrap();
        assert_eq!((n.query.as_str(), n.members.len()), (q, 3));
        assert!(narrow(r#"{__tenant_id__=~"("}"#, &ms).is_err());
        assert_eq!(
            tenant_matcher(r#"__tenant_id__="a\"b\x41""#),
            Some(("=", "a\"bA".to_owned()))
        );
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
