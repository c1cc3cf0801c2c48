//! Loki's multi-line query formatting (`syntax.Prettify`), which
//! `/loki/api/v1/format_query` answers.
//!
//! Any node whose one-line form (its `Display`, Loki's `String()`) is longer
//! than [`MAX_CHARS_PER_LINE`] bytes is split over lines, two spaces of
//! indent per level; shorter nodes print on one line. Loki's quirks are kept
//! on purpose, because the endpoint must answer byte for byte what Loki does:
//! `| decolorize` is never indented, a split chain of line filters loses the
//! `or` alternatives of every filter printed on its own line, offsets use the
//! Prometheus duration form (`1h`, not `1h0m0s`) and split groupings put a
//! space after each comma.

use std::fmt::Write as _;

use crate::ast::*;
use crate::print::go_float_v;
use go::strconv::quote as go_quote;

/// Loki's `maxCharsPerLine`: longer nodes are split.
const MAX_CHARS_PER_LINE: usize = 100;

/// Formats `expr` as Loki's `/loki/api/v1/format_query` does.
pub fn prettify(expr: &Expr) -> String {
    let view = loki_view(expr);
    let expr = view.as_ref().unwrap_or(expr);
    let mut out = String::new();
    match expr {
        Expr::Log(l) => log_expr(&mut out, l, 0),
        Expr::Metric(m) => metric(&mut out, m, 0),
    }
    out
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Writes `indent + one-line form` and returns true when `node` fits on a line.
fn one_line(out: &mut String, node: &impl std::fmt::Display, level: usize) -> bool {
    let s = node.to_string();
    if s.len() > MAX_CHARS_PER_LINE {
        return false;
    }
    indent(out, level);
    out.push_str(&s);
    true
}

/// A stage of Loki's pipeline: consecutive line filters form one stage.
enum Group<'a> {
    Filters(&'a [Stage]),
    Other(&'a Stage),
}

fn groups(stages: &[Stage]) -> Vec<Group<'_>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < stages.len() {
        let start = i;
        while i < stages.len() && matches!(stages[i], Stage::LineFilter(_)) {
            i += 1;
        }
        if i > start {
            out.push(Group::Filters(&stages[start..i]));
        } else {
            out.push(Group::Other(&stages[i]));
            i += 1;
        }
    }
    out
}

fn log_expr(out: &mut String, l: &LogExpr, level: usize) {
    if l.pipeline.is_empty() || one_line(out, l, level) {
        if l.pipeline.is_empty() {
            indent(out, level);
            let _ = write!(out, "{}", l.selector);
        }
        return;
    }
    indent(out, level);
    let _ = write!(out, "{}", l.selector);
    for g in groups(&l.pipeline) {
        out.push('\n');
        match g {
            Group::Filters(fs) => filter_chain(out, fs, level + 1),
            // Loki prints decolorize without its indent.
            Group::Other(Stage::Decolorize) => out.push_str("| decolorize"),
            Group::Other(s) => {
                indent(out, level + 1);
                let _ = write!(out, "{s}");
            }
        }
    }
}

/// A chain of line filters: the longest prefix that fits stays on one line,
/// every later filter goes on its own line with only its first value.
fn filter_chain(out: &mut String, fs: &[Stage], level: usize) {
    let strings: Vec<String> = fs.iter().map(ToString::to_string).collect();
    let (mut fit, mut len) = (0, 0usize);
    for s in &strings {
        let next = if fit == 0 { s.len() } else { len + 1 + s.len() };
        if next > MAX_CHARS_PER_LINE {
            break;
        }
        len = next;
        fit += 1;
    }
    let mut first = true;
    if fit > 0 {
        indent(out, level);
        out.push_str(&strings[..fit].join(" "));
        first = false;
    }
    for s in &fs[fit..] {
        if !first {
            out.push('\n');
        }
        first = false;
        indent(out, level);
        if let Stage::LineFilter(f) = s {
            let _ = write!(out, "{}", f.op);
            if let Some(v) = f.values.first() {
                let _ = write!(out, " {v}");
            }
        }
    }
}

fn metric(out: &mut String, m: &MetricExpr, level: usize) {
    if one_line(out, m, level) {
        return;
    }
    match m {
        MetricExpr::RangeAggregation(r) => range_aggregation(out, r, level),
        MetricExpr::VectorAggregation(v) => vector_aggregation(out, v, level),
        MetricExpr::Binary(b) => {
            metric(out, &b.lhs, level + 1);
            out.push('\n');
            indent(out, level);
            binary_op(out, b);
            out.push('\n');
            metric(out, &b.rhs, level + 1);
        }
        MetricExpr::LabelReplace(l) => {
            indent(out, level);
            out.push_str("label_replace(\n");
            metric(out, &l.inner, level + 1);
            for s in [&l.dst, &l.replacement, &l.src, &l.regex] {
                out.push_str(",\n");
                indent(out, level + 1);
                out.push_str(&go_quote(s));
            }
            out.push('\n');
            indent(out, level);
            out.push(')');
        }
        // Literals and vector() never split.
        MetricExpr::Literal(_) | MetricExpr::Vector(_) => {
            indent(out, level);
            let _ = write!(out, "{m}");
        }
    }
}

fn range_aggregation(out: &mut String, r: &RangeAggregation, level: usize) {
    indent(out, level);
    out.push_str(r.op.name());
    out.push_str("(\n");
    if let Some(p) = r.param {
        indent(out, level + 1);
        out.push_str(&go_float_v(p));
        out.push_str(",\n");
    }
    log_range(out, &r.range, level + 1);
    out.push('\n');
    indent(out, level);
    out.push(')');
    if let Some(g) = &r.grouping {
        grouping(out, g);
    }
}

fn log_range(out: &mut String, r: &LogRange, level: usize) {
    log_expr(out, &r.log, level);
    if let Some(u) = &r.unwrap {
        out.push('\n');
        indent(out, level + 1);
        out.push_str("| unwrap ");
        match u.conversion {
            UnwrapConversion::Plain => out.push_str(&u.label),
            UnwrapConversion::Bytes => {
                let _ = write!(out, "bytes({})", u.label);
            }
            UnwrapConversion::Duration => {
                let _ = write!(out, "duration({})", u.label);
            }
            UnwrapConversion::DurationSeconds => {
                let _ = write!(out, "duration_seconds({})", u.label);
            }
        }
        for p in &u.post_filters {
            out.push('\n');
            indent(out, level + 1);
            let _ = write!(out, "| {p}");
        }
    }
    let _ = write!(out, " [{}]", r.interval.to_prometheus_string());
    if let Some(o) = r.offset.filter(|o| o.as_nanos() != 0) {
        let _ = write!(out, " offset {}", o.to_prometheus_string());
    }
}

fn vector_aggregation(out: &mut String, v: &VectorAggregation, level: usize) {
    indent(out, level);
    out.push_str(v.op.name());
    if let Some(g) = &v.grouping {
        grouping(out, g);
    }
    out.push_str("(\n");
    let param = match v.op {
        VectorOp::Topk | VectorOp::Bottomk => Some(v.param.unwrap_or(0)),
        _ => v.param.filter(|p| *p != 0),
    };
    if let Some(p) = param {
        indent(out, level + 1);
        let _ = writeln!(out, "{p},");
    }
    metric(out, &v.inner, level + 1);
    out.push('\n');
    indent(out, level);
    out.push(')');
}

/// Loki's split grouping: ` by (a, b)`, ` without (a)`, a bare ` without`
/// for `without ()`, nothing for `by ()`.
fn grouping(out: &mut String, g: &Grouping) {
    if g.without {
        out.push_str(" without");
    } else if !g.labels.is_empty() {
        out.push_str(" by");
    }
    if !g.labels.is_empty() {
        let _ = write!(out, " ({})", g.labels.join(", "));
    }
}

/// The operator line of a split binary expression.
fn binary_op(out: &mut String, b: &BinaryExpr) {
    out.push_str(b.op.symbol());
    if b.modifier.return_bool {
        out.push_str(" bool");
    }
    let Some(m) = &b.modifier.matching else {
        return;
    };
    if m.labels.is_empty() {
        return;
    }
    let mut group = match &m.group {
        None => String::new(),
        Some(g) if g.left => "group_left".into(),
        Some(_) => "group_right".into(),
    };
    if let Some(g) = m.group.as_ref().filter(|g| !g.include.is_empty()) {
        let _ = write!(group, " ({})", g.include.join(", "));
    }
    let on = if m.on { "on" } else { "ignoring" };
    let _ = write!(out, " {on} ({}) {group}", m.labels.join(", "));
}

/// Loki's printer drops every middle value of a line filter `or` chain as
/// soon as one of them is an `ip(…)` (only the first and last remain).
/// Returns a copy with that applied, or `None` when nothing changes.
fn loki_view(expr: &Expr) -> Option<Expr> {
    fn affected(f: &LineFilter) -> bool {
        let n = f.values.len();
        n > 2
            && f.values[1..n - 1]
                .iter()
                .any(|v| matches!(v, LineFilterValue::Ip(_)))
    }
    fn fix_log(l: &mut LogExpr) {
        for s in &mut l.pipeline {
            if let Stage::LineFilter(f) = s
                && affected(f)
            {
                let n = f.values.len();
                f.values.drain(1..n - 1);
            }
        }
    }
    fn fix_metric(m: &mut MetricExpr) {
        match m {
            MetricExpr::RangeAggregation(r) => fix_log(&mut r.range.log),
            MetricExpr::VectorAggregation(v) => fix_metric(&mut v.inner),
            MetricExpr::Binary(b) => {
                fix_metric(&mut b.lhs);
                fix_metric(&mut b.rhs);
            }
            MetricExpr::LabelReplace(l) => fix_metric(&mut l.inner),
            MetricExpr::Literal(_) | MetricExpr::Vector(_) => {}
        }
    }
    let mut found = false;
    visit(expr, &mut |l| {
        found |= l
            .pipeline
            .iter()
            .any(|s| matches!(s, Stage::LineFilter(f) if affected(f)))
    });
    if !found {
        return None;
    }
    let mut copy = expr.clone();
    match &mut copy {
        Expr::Log(l) => fix_log(l),
        Expr::Metric(m) => fix_metric(m),
    }
    Some(copy)
}

/// Calls `f` on every log expression inside `expr`.
fn visit(expr: &Expr, f: &mut impl FnMut(&LogExpr)) {
    fn metric(m: &MetricExpr, f: &mut impl FnMut(&LogExpr)) {
        match m {
            MetricExpr::RangeAggregation(r) => f(&r.range.log),
            MetricExpr::VectorAggregation(v) => metric(&v.inner, f),
            MetricExpr::Binary(b) => {
                metric(&b.lhs, f);
                metric(&b.rhs, f);
            }
            MetricExpr::LabelReplace(l) => metric(&l.inner, f),
            MetricExpr::Literal(_) | MetricExpr::Vector(_) => {}
        }
    }
    match expr {
        Expr::Log(l) => f(l),
        Expr::Metric(m) => metric(m, f),
    }
}
