//! `| json` or `| logfmt` and the label filters right after it, run in
//! VictoriaLogs as a prefilter of a log query.
//!
//! A log query such as `{app="api"} | json | status >= 400` keeps its whole
//! pipeline in the proxy, which used to read every selected row to find the
//! few that match. VictoriaLogs now parses the labels those filters read,
//! behind the guard of the metric pushdown ([`crate::metric::parsed`], and
//! for `| logfmt` [`crate::logfmt_suspect`]), and returns only the rows the
//! filters keep or the guard calls suspect. The proxy still runs the whole
//! pipeline on what comes back, so the answer is Loki's as long as every
//! row Loki keeps is returned:
//!
//! * Loki 3.7 keeps a row after `| json | F` exactly when `F` holds over
//!   its labels. A row the parser fails on is no exception: a numeric filter
//!   drops it when the label is missing, a string filter reads the missing
//!   label as `""`. Its non-strict `| logfmt` raises no error at all.
//! * On a clean row (no guard term holds) VictoriaLogs resolves each label
//!   to Loki's value: the stored field when non-empty, else the one
//!   top-level scalar key; on a line nothing was unpacked from, the stored
//!   field, as Loki. The guard flags such a line when it starts with `{` and
//!   names a label, where Loki may have read keys before the error.
//! * A row whose stream has a label of a needed name is returned too: the
//!   stream label is Loki's value, and VictoriaLogs' field of that name may
//!   hold another (its Loki endpoint stores a JSON key equal to a stream
//!   label as a field).
//!
//! Loki may drop more rows than the filters alone (its parser stops at the
//! first filtered key that fails, `errLabelDoesNotMatch`); the proxy does
//! the same, on a superset. The labels are resolved into fields of their
//! own (`__lokivl_r.<name>`), and every field the prefilter adds is deleted
//! before the rows are returned, so rows come back as stored.

use logql_parser::{Parser, Stage};

use crate::filter::{Filter, StreamMatcher, StreamOp};
use crate::metric::parsed::{self, ParsedPushdown, or_suspect};
use crate::pipe::{Pipe, UnpackFormat};
use crate::plan::LogPlan;

/// Where each label the filters read is resolved.
const RESOLVED_PREFIX: &str = "__lokivl_r.";
/// Every field the prefilter adds starts with this.
const ADDED: &str = "__lokivl_*";

/// Adds the prefilter of `plan`'s proxy stages to its LogsQL, when they
/// start with `| json` or `| logfmt` (no parameters, no flags) and at least
/// one label filter the guard covers (string matchers and plain numbers on
/// names it can guard, none derived per entry or from OTel attributes).
/// Returns whether it did.
///
/// Only the filters right after the parser count; the stages after them
/// still run in the proxy alone, which only drops or rewrites rows.
pub fn add_parser_prefilter(plan: &mut LogPlan) -> bool {
    match prefilter_pipes(plan) {
        Some(pipes) => {
            plan.query.pipes.splice(0..0, pipes);
            true
        }
        None => false,
    }
}

fn prefilter_pipes(plan: &LogPlan) -> Option<Vec<Pipe>> {
    let (first, rest) = plan.proxy_stages.split_first()?;
    let format = match first {
        Stage::Parser(Parser::Json(params)) if params.is_empty() => UnpackFormat::Json,
        Stage::Parser(Parser::Logfmt {
            strict: false,
            keep_empty: false,
            extractions,
        }) if extractions.is_empty() => UnpackFormat::Logfmt,
        _ => return None,
    };
    let filters: Vec<_> = rest
        .iter()
        .map_while(|s| match s {
            Stage::LabelFilter(f) if parsed::supported_filter(f) => Some(f),
            _ => None,
        })
        .collect();
    if filters.is_empty() {
        return None;
    }
    let (mut names, mut numeric) = (Vec::new(), Vec::new());
    for f in &filters {
        parsed::filter_names(f, &mut names, &mut numeric);
    }
    parsed::needed_names(&names).ok()?;
    if names
        .iter()
        .any(|n| plan.discovery.synthesizes(n) || crate::otel::index_attribute(n).is_some())
    {
        return None;
    }
    let lowered = filters
        .iter()
        .map(|f| crate::lower::label_filter(f))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    let resolved = |n: &str| format!("{RESOLVED_PREFIX}{n}");
    // The guard reads the filters over the stored fields (what Loki reads
    // on a line nothing was unpacked from), the last pipe over the labels.
    let stored = Filter::and(lowered);
    let filter = stored.renamed(&resolved)?;
    let pushdown = ParsedPushdown {
        format,
        names,
        numeric,
        unwrapped: None,
        filter: stored,
        drops_errors: false,
    };
    let mut pipes = pushdown.marked();
    pipes.extend(pushdown.resolutions_into(&resolved));
    // A stream label of a needed name is the label (Loki's stream labels
    // win), but VictoriaLogs' field of that name may hold another value: its
    // Loki endpoint stores a JSON key equal to a stream label as a field.
    // Such rows are returned and left to the proxy.
    let stream_labels = pushdown.names.iter().map(|n| {
        Filter::Stream(vec![StreamMatcher {
            label: n.clone(),
            op: StreamOp::Re,
            value: ".+".to_owned(),
        }])
    });
    pipes.push(Pipe::Filter(Filter::or(
        std::iter::once(or_suspect(filter)).chain(stream_labels),
    )));
    pipes.push(Pipe::Delete(vec![ADDED.to_owned()]));
    Some(pipes)
}

#[cfg(test)]
mod tests;
