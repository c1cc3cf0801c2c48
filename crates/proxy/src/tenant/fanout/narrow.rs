//! `__tenant_id__` matchers of a multi-tenant log query: they pick the
//! tenants (Loki's `filterValuesByMatchers` in SelectLogs and
//! SelectSamples) and are removed before each tenant's call.
//!
//! A planned query is narrowed on its typed stream filters; only LogsQL a
//! caller wrote as text is narrowed on its text.

use logsql_ast::{Filter, Pipe, Query, StreamMatcher, StreamOp};

use super::super::{Member, TENANT_LABEL};
use crate::backend::{BackendError, LogsQl};

/// A query with its `__tenant_id__` matchers applied.
#[derive(Debug)]
pub struct Narrowed<'a> {
    /// The query without them; `None` when it had none (sent unchanged).
    pub query: Option<LogsQl>,
    /// The tenants they match, in request order.
    pub members: Vec<&'a Member>,
}

/// Applies the `__tenant_id__` matchers of `query`'s stream filters to
/// `members` and removes them; a stream filter left without matchers
/// selects everything (`*`).
///
/// # Errors
/// [`BackendError::Unsupported`] for a regex that does not compile.
pub fn narrow<'a>(query: &LogsQl, members: &'a [Member]) -> Result<Narrowed<'a>, BackendError> {
    match query {
        LogsQl::Typed(q) => narrow_typed(q, members),
        LogsQl::Text(q) => narrow_text(q, members),
    }
}

fn narrow_typed<'a>(query: &Query, members: &'a [Member]) -> Result<Narrowed<'a>, BackendError> {
    let mut kept: Vec<&Member> = members.iter().collect();
    if !has_tenant_matcher(query) {
        return Ok(Narrowed {
            query: None,
            members: kept,
        });
    }
    let mut q = query.clone();
    let mut found = Vec::new();
    take_tenant_matchers(&mut q.filter, &mut found);
    for p in &mut q.pipes {
        if let Pipe::Filter(f) = p {
            take_tenant_matchers(f, &mut found);
        }
    }
    for m in &found {
        keep_matching(&mut kept, m.op, &m.value)?;
    }
    Ok(Narrowed {
        query: Some(LogsQl::Typed(q)),
        members: kept,
    })
}

fn has_tenant_matcher(q: &Query) -> bool {
    fn in_filter(f: &Filter) -> bool {
        match f {
            Filter::Stream(ms) => ms.iter().any(|m| m.label == TENANT_LABEL),
            Filter::StreamAny(groups) => groups.iter().flatten().any(|m| m.label == TENANT_LABEL),
            Filter::And(v) | Filter::Or(v) => v.iter().any(in_filter),
            Filter::Not(f) => in_filter(f),
            _ => false,
        }
    }
    in_filter(&q.filter)
        || q.pipes
            .iter()
            .any(|p| matches!(p, Pipe::Filter(f) if in_filter(f)))
}

/// Moves the `__tenant_id__` matchers of every stream filter in `f` to `found`.
fn take_tenant_matchers(f: &mut Filter, found: &mut Vec<StreamMatcher>) {
    let mut take = |ms: &mut Vec<StreamMatcher>| {
        let (tenant, others): (Vec<_>, Vec<_>) = std::mem::take(ms)
            .into_iter()
            .partition(|m| m.label == TENANT_LABEL);
        found.extend(tenant);
        *ms = others;
    };
    match f {
        Filter::Stream(ms) => take(ms),
        Filter::StreamAny(groups) => groups.iter_mut().for_each(take),
        Filter::And(v) | Filter::Or(v) => v.iter_mut().for_each(|f| take_tenant_matchers(f, found)),
        Filter::Not(f) => take_tenant_matchers(f, found),
        _ => {}
    }
}

/// Keeps the members whose name `op value` matches (a regex is anchored).
fn keep_matching(kept: &mut Vec<&Member>, op: StreamOp, value: &str) -> Result<(), BackendError> {
    let re = match op {
        StreamOp::Re | StreamOp::Nre => {
            Some(regex::Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                BackendError::Unsupported(format!("invalid {TENANT_LABEL} regex: {e}"))
            })?)
        }
        StreamOp::Eq | StreamOp::Neq => None,
    };
    kept.retain(|m| match (op, &re) {
        (StreamOp::Eq, _) => m.name == value,
        (StreamOp::Neq, _) => m.name != value,
        (StreamOp::Re, Some(re)) => re.is_match(&m.name),
        (StreamOp::Nre, Some(re)) => !re.is_match(&m.name),
        _ => true,
    });
    Ok(())
}

/// [`narrow`] on LogsQL written as text: applies the `__tenant_id__`
/// matchers of the query's stream filters to
/// `members` and removes them; a stream filter left without matchers
/// selects everything (`*`).
///
/// # Errors
/// [`BackendError::Unsupported`] for a regex that does not compile.
fn narrow_text<'a>(query: &str, members: &'a [Member]) -> Result<Narrowed<'a>, BackendError> {
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
                    let op = match op {
                        "=" => StreamOp::Eq,
                        "!=" => StreamOp::Neq,
                        "=~" => StreamOp::Re,
                        _ => StreamOp::Nre,
                    };
                    keep_matching(&mut kept, op, &value)?;
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
        query: found.then_some(LogsQl::Text(out)),
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

#[cfg(test)]
mod tests;
