//! Stream selectors to VictoriaLogs stream filters.

use logql_parser::{MatchOp, Selector};

use crate::filter::{Filter, StreamMatcher, StreamOp};

/// Lowers `{a="x", b=~"re"}` to the same VictoriaLogs stream filter.
///
/// VictoriaLogs anchors stream-filter regexes and treats a missing label as
/// empty, as Prometheus and Loki do, so the matchers carry over unchanged.
pub(crate) fn lower(selector: &Selector) -> Filter {
    if selector.matchers.is_empty() {
        return Filter::All;
    }
    Filter::Stream(
        selector
            .matchers
            .iter()
            .map(|m| StreamMatcher {
                label: m.name.clone(),
                op: match m.op {
                    MatchOp::Eq => StreamOp::Eq,
                    MatchOp::Neq => StreamOp::Neq,
                    MatchOp::Re => StreamOp::Re,
                    MatchOp::Nre => StreamOp::Nre,
                },
                value: m.value.clone(),
            })
            .collect(),
    )
}
