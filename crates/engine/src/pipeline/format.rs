//! `line_format` and `label_format`, rendered with [`go::template`]
//! (grafana/loki `pkg/logql/log/fmt.go`):
//!
//! * templates read the labels as Loki's label map (every label, the error
//!   labels included; a missing one renders as `""`);
//! * `line_format "{{.x}}"` alone copies label `x` (or `""`) to the line;
//! * a render error keeps the line (or skips the label) and sets
//!   `__error__=TemplateFormatErr` with Go's text in `__error_details__`;
//! * `label_format` sets parsed labels; `dst=src` renames (when `src`
//!   exists); all templates of one `label_format` see the labels as they were
//!   when its first template ran, as Loki builds that map once.

use logql_parser::LabelFormatOp;

use super::PipelineError;
use super::labels::{Category, ERROR, ERROR_DETAILS, LabelsBuilder};
use go::template::{Context, Template};

/// Loki's error label value for template failures.
pub const TEMPLATE_FORMAT_ERR: &str = "TemplateFormatErr";

/// The live labels of an entry, as a template context.
struct Live<'a> {
    lbs: &'a LabelsBuilder,
    line: &'a str,
    ts: i64,
}

fn label_of<'a>(lbs: &'a LabelsBuilder, name: &str) -> Option<&'a str> {
    match name {
        ERROR => Some(lbs.err()).filter(|e| !e.is_empty()),
        ERROR_DETAILS => Some(lbs.err_details()).filter(|e| !e.is_empty()),
        _ => lbs.get(name),
    }
}

impl Context for Live<'_> {
    fn label(&self, name: &str) -> Option<&str> {
        label_of(self.lbs, name)
    }
    fn line(&self) -> &str {
        self.line
    }
    fn timestamp_ns(&self) -> i64 {
        self.ts
    }
    fn for_each_label(&self, f: &mut dyn FnMut(&str, &str)) {
        self.lbs.for_each(|n, v, _| f(n, v));
    }
}

/// A snapshot of the labels (for `label_format`).
struct Snapshot<'a> {
    labels: &'a [(String, String)],
    line: &'a str,
    ts: i64,
}

impl Context for Snapshot<'_> {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn line(&self) -> &str {
        self.line
    }
    fn timestamp_ns(&self) -> i64 {
        self.ts
    }
    fn for_each_label(&self, f: &mut dyn FnMut(&str, &str)) {
        for (n, v) in self.labels {
            f(n, v);
        }
    }
}

/// A compiled `line_format`.
#[derive(Debug)]
pub struct LineFormat {
    tmpl: Template,
    out: String,
}

impl LineFormat {
    /// Parses the template.
    ///
    /// # Errors
    /// [`PipelineError::Invalid`] with the template's parse error.
    pub fn new(text: &str) -> Result<Self, PipelineError> {
        let tmpl = Template::parse(text)
            .map_err(|e| PipelineError::Invalid(format!("invalid line template: {e}")))?;
        Ok(Self {
            tmpl,
            out: String::new(),
        })
    }

    /// Renders the new line into `line`.
    pub fn process(&mut self, ts: i64, line: &mut String, lbs: &mut LabelsBuilder) {
        self.out.clear();
        if let Some(key) = self.tmpl.simple_field() {
            // Same lookup as the general path, so `{{.__error__}}` reads the error.
            self.out.push_str(label_of(lbs, key).unwrap_or(""));
            std::mem::swap(line, &mut self.out);
            return;
        }
        let ctx = Live { lbs, line, ts };
        match self.tmpl.render(&ctx, &mut self.out) {
            Ok(()) => std::mem::swap(line, &mut self.out),
            Err(e) => lbs.set_err(TEMPLATE_FORMAT_ERR, Some(&e.to_string())),
        }
    }
}

enum Op {
    Rename { dst: String, src: String },
    Template { dst: String, tmpl: Template },
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Rename { dst, src } => write!(f, "{dst}={src}"),
            Op::Template { dst, .. } => write!(f, "{dst}=<template>"),
        }
    }
}

/// A compiled `label_format`.
#[derive(Debug)]
pub struct LabelFormat {
    ops: Vec<Op>,
    snapshot: Vec<(String, String)>,
    out: String,
    value: String,
}

impl LabelFormat {
    /// Parses the templates.
    ///
    /// # Errors
    /// [`PipelineError::Invalid`] with a template's parse error.
    pub fn new(ops: &[LabelFormatOp]) -> Result<Self, PipelineError> {
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            out.push(match op {
                LabelFormatOp::Rename { dst, src } => Op::Rename {
                    dst: dst.clone(),
                    src: src.clone(),
                },
                LabelFormatOp::Template { dst, template } => Op::Template {
                    dst: dst.clone(),
                    tmpl: Template::parse_named("label", template).map_err(|e| {
                        PipelineError::Invalid(format!("invalid label template: {e}"))
                    })?,
                },
            });
        }
        Ok(Self {
            ops: out,
            snapshot: Vec::new(),
            out: String::new(),
            value: String::new(),
        })
    }

    /// Applies the operations in order.
    pub fn process(&mut self, ts: i64, line: &str, lbs: &mut LabelsBuilder) {
        let mut snapped = false;
        for op in &self.ops {
            match op {
                Op::Rename { dst, src } => {
                    if let Some(v) = lbs.get(src) {
                        self.value.clear();
                        self.value.push_str(v);
                        lbs.set(Category::Parsed, dst, &self.value);
                        lbs.del(src);
                    }
                }
                Op::Template { dst, tmpl } => {
                    if !snapped {
                        self.snapshot.clear();
                        let snap = &mut self.snapshot;
                        lbs.for_each(|n, v, _| snap.push((n.to_owned(), v.to_owned())));
                        snapped = true;
                    }
                    self.out.clear();
                    let ctx = Snapshot {
                        labels: &self.snapshot,
                        line,
                        ts,
                    };
                    match tmpl.render(&ctx, &mut self.out) {
                        Ok(()) => lbs.set(Category::Parsed, dst, &self.out),
                        Err(e) => lbs.set_err(TEMPLATE_FORMAT_ERR, Some(&e.to_string())),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "format_template_tests.rs"]
mod template_tests;
