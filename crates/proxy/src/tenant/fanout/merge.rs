//! Merging the tenants' answers of one multi-tenant call into typed rows
//! and values, each member's answer decoded once.
//!
//! Rows are labelled as Loki's multi-tenant querier labels them: a
//! `__tenant_id__` field and the tenant first in the `_stream` labels.

use std::collections::BTreeMap;

use bytes::BytesMut;
use engine::ndjson::RowSet;
use engine::ndjson::objects::for_each_object;
use go::time::parse_rfc3339_nanos;

use super::super::{Member, TENANT_LABEL};
use crate::backend::{BackendError, Hit, Take};

/// Decodes every member's NDJSON answer once, labels each row with its
/// tenant, and keeps what one call would have returned: the newest `limit`
/// (backward) or oldest `N` (forward) overall, so that paging over the
/// merged answer stays exact. Rows of equal time keep member order, then
/// answer order. A row's fields are in name order (the order its JSON
/// object had when merged rows were printed).
///
/// # Errors
/// [`BackendError::Body`] naming the tenant for a line that is not a JSON
/// object or a `_time` that is not RFC 3339.
pub fn rows(
    answers: &mut [(&Member, BytesMut)],
    take: Option<Take>,
) -> Result<RowSet, BackendError> {
    let mut set = RowSet::new();
    for (m, body) in answers.iter_mut() {
        let name = m.name.as_str();
        let bad = |line: usize, reason: &str| {
            BackendError::Body(format!(
                "invalid answer for tenant {name}, line {line}: {reason}"
            ))
        };
        let mut line = 0usize;
        for_each_object(&mut body[..], |fields| {
            line += 1;
            let time = match fields.iter().find(|(k, _)| *k == "_time") {
                None => None,
                Some((_, t)) => Some(parse_rfc3339_nanos(t).ok_or(())?),
            };
            set.begin_row(time);
            for &(k, v) in fields {
                match k {
                    TENANT_LABEL => {}
                    "_stream" => set.push_field_with(k, |out| with_tenant_label(out, v, name)),
                    _ => set.push_field(k, v),
                }
            }
            set.push_field(TENANT_LABEL, name);
            set.end_row();
            Ok(())
        })
        .map_err(|e| match e {
            Ok(l) => bad(l.line, &l.reason),
            Err(()) => bad(line, "malformed _time"),
        })?;
    }
    match take {
        Some(Take::Newest(limit)) => {
            set.sort_by_time(true);
            set.truncate(limit);
        }
        Some(Take::Oldest(n)) => {
            set.sort_by_time(false);
            set.truncate(n);
        }
        None => {}
    }
    Ok(set)
}

/// Appends `stream` with `__tenant_id__="name"` as its first label:
/// `{a="b"}` → `{__tenant_id__="t",a="b"}`. Tenant ids never need quoting
/// (their characters are checked when resolved).
pub fn with_tenant_label(out: &mut String, stream: &str, name: &str) {
    let inner = stream
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or("")
        .trim();
    out.push('{');
    out.push_str(TENANT_LABEL);
    out.push_str("=\"");
    out.push_str(name);
    out.push('"');
    if !inner.is_empty() {
        out.push(',');
        out.push_str(inner);
    }
    out.push('}');
}

/// Names or values of several tenants: one entry per value, hits summed,
/// in value order.
pub fn values(answers: Vec<(&Member, Vec<Hit>)>) -> BTreeMap<String, u64> {
    let mut all = BTreeMap::new();
    for (_, hits) in answers {
        for h in hits {
            *all.entry(h.value).or_insert(0) += h.hits;
        }
    }
    all
}

/// Field or stream field names of several tenants, with `__tenant_id__`
/// among them (its hits are the sum of all, at least 1).
pub fn names(answers: Vec<(&Member, Vec<Hit>)>) -> Vec<Hit> {
    let mut all = values(answers);
    let total = all.values().sum::<u64>().max(1);
    all.insert(TENANT_LABEL.to_owned(), total);
    into_hits(all)
}

/// Streams of several tenants, each with its tenant's label, in member order.
pub fn streams(answers: Vec<(&Member, Vec<Hit>)>) -> Vec<Hit> {
    let mut out = Vec::new();
    for (m, hits) in answers {
        for h in hits {
            let mut value =
                String::with_capacity(h.value.len() + TENANT_LABEL.len() + m.name.len() + 5);
            with_tenant_label(&mut value, &h.value, &m.name);
            out.push(Hit {
                value,
                hits: h.hits,
            });
        }
    }
    out
}

/// `BTreeMap` entries as hits, in value order.
pub fn into_hits(all: BTreeMap<String, u64>) -> Vec<Hit> {
    all.into_iter()
        .map(|(value, hits)| Hit { value, hits })
        .collect()
}

#[cfg(test)]
mod tests;
