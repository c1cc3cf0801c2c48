//! Go `text/template` with Loki's function map, for `line_format` and
//! `label_format` evaluated in the proxy.
//!
//! Loki runs these templates with Go's `text/template` (option
//! `missingkey=zero` over a `map[string]string` of labels) and a function map
//! of its own plus a sprig subset. This module reimplements that behaviour:
//! a template is parsed once per query ([`Template::parse`]) and rendered per
//! line ([`Template::render`]) without re-parsing. Templates made only of
//! text and `.field` references take a fast path that allocates nothing
//! beyond the output's growth.

mod ast;
mod exec;
mod funcs;
mod lex;
pub mod limits;
mod parse;
mod printf;
mod value;

#[cfg(test)]
mod tests;

use ast::{Arg, Node};

/// Why a template could not be parsed or rendered; Display is Go's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The template text is invalid, e.g. `template: line:1: unclosed action`.
    /// Loki rejects the query with this text (after its own prefix, e.g.
    /// `invalid line template: `).
    #[error("{0}")]
    Parse(String),
    /// Rendering failed, e.g. `template: line:1:3: executing "line" at <.a.b>:
    /// can't evaluate field b in type string`. Loki then sets
    /// `__error__=TemplateFormatErr` and this text as `__error_details__`.
    #[error("{0}")]
    Exec(String),
}

/// What a template reads while rendering one log line.
pub trait Context {
    /// `.name`: the label's value; a missing label renders as "" (Loki's
    /// `map[string]string` with `missingkey=zero`).
    fn label(&self, name: &str) -> Option<&str>;
    /// `__line__`: the current log line.
    fn line(&self) -> &str;
    /// `__timestamp__`: the entry's time, Unix nanoseconds.
    fn timestamp_ns(&self) -> i64;
    /// Visits every label; only `{{ . }}`, `range .`, `len .` need it, so the
    /// default (no labels) is enough for contexts that never meet those.
    fn for_each_label(&self, _f: &mut dyn FnMut(&str, &str)) {}
}

/// One piece of a text-and-fields template.
#[derive(Debug, Clone)]
enum Simple {
    Text(Box<str>),
    Field(Box<str>),
}

/// A parsed template, shared read-only by all lines of a query.
#[derive(Debug, Clone)]
pub struct Template {
    name: Box<str>,
    text: Box<str>,
    root: Vec<Node>,
    /// Set when the template is only text and single `.field` actions.
    simple: Option<Vec<Simple>>,
}

impl Template {
    /// Parses a `line_format` template (Go template name `line`).
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        Template::parse_named("line", text)
    }

    /// Parses with a Go template name, which appears in error texts: Loki
    /// names `line_format` templates `line` and `label_format` ones `label`.
    pub fn parse_named(name: &str, text: &str) -> Result<Template, TemplateError> {
        let root = parse::parse(text).map_err(|(line, msg)| {
            TemplateError::Parse(format!("template: {name}:{line}: {msg}"))
        })?;
        let simple = root
            .iter()
            .map(|n| match n {
                Node::Text(t) => Some(Simple::Text(t.clone())),
                Node::Action(p)
                    if p.decl.is_empty() && p.cmds.len() == 1 && p.cmds[0].args.len() == 1 =>
                {
                    match &p.cmds[0].args[0] {
                        Arg::Field(f) if f.len() == 1 => Some(Simple::Field(f[0].clone())),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect();
        Ok(Template {
            name: name.into(),
            text: text.into(),
            root,
            simple,
        })
    }

    /// The field names the template reads (every identifier of each `.a.b`
    /// field, in `if`/`with`/`range` too), as Loki's `listNodeFields`
    /// collects them: Loki's parser hints keep these labels extracted.
    pub fn fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        fields_of_list(&self.root, &mut out);
        out
    }

    /// Renders one line's output, appending to `out`. On error `out` may hold
    /// partial output (Go's behaviour too); callers discard it.
    ///
    /// # Errors
    /// [`TemplateError::Exec`] when the template fails on this line, or
    /// when it spends its budget ([`limits`]).
    pub fn render(&self, ctx: &dyn Context, out: &mut String) -> Result<(), TemplateError> {
        let start = out.len();
        if let Some(parts) = &self.simple {
            for p in parts {
                match p {
                    Simple::Text(t) => out.push_str(t),
                    Simple::Field(f) => out.push_str(ctx.label(f).unwrap_or("")),
                }
                // `{{.a}}` written ten thousand times must not allocate ten
                // thousand copies of a long label.
                if out.len() - start > limits::MAX_OUTPUT_BYTES {
                    return Err(TemplateError::Exec(format!(
                        "template: {}: {}",
                        self.name,
                        limits::output_too_large()
                    )));
                }
            }
            return Ok(());
        }
        exec::State::new(ctx, &self.text, start)
            .run(&self.root, &value::Value::Labels, out)
            .map_err(|e| exec::exec_error(&self.name, &self.text, e))
    }

    /// True when the template has no actions: rendering yields the text.
    pub fn is_constant(&self) -> bool {
        self.root.iter().all(|n| matches!(n, Node::Text(_)))
    }

    /// When the template is exactly one `{{.name}}`, that name (Loki's
    /// `simpleKey` shortcut; lets callers copy the label directly).
    pub fn simple_field(&self) -> Option<&str> {
        match self.simple.as_deref() {
            Some([Simple::Field(f)]) => Some(f),
            _ => None,
        }
    }

    /// Every `.name` the template references (first field of each chain),
    /// deduplicated in order of appearance, as Loki's `RequiredLabelNames`.
    pub fn referenced_labels(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        fn pipe<'t>(p: &'t ast::Pipe, out: &mut Vec<&'t str>) {
            for c in &p.cmds {
                for a in &c.args {
                    arg(a, out);
                }
            }
        }
        fn arg<'t>(a: &'t Arg, out: &mut Vec<&'t str>) {
            match a {
                Arg::Field(f) => {
                    for x in f {
                        if !out.contains(&&**x) {
                            out.push(x);
                        }
                    }
                }
                Arg::Paren(p, _) => pipe(p, out),
                _ => {}
            }
        }
        fn list<'t>(l: &'t [Node], out: &mut Vec<&'t str>) {
            for n in l {
                match n {
                    Node::Action(p) => pipe(p, out),
                    Node::Branch(b) => {
                        for a in &b.arms {
                            pipe(&a.pipe, out);
                            list(&a.list, out);
                        }
                        if let Some(e) = &b.else_list {
                            list(e, out);
                        }
                    }
                    _ => {}
                }
            }
        }
        list(&self.root, &mut out);
        out
    }
}

fn fields_of_list(list: &[Node], out: &mut Vec<String>) {
    for n in list {
        match n {
            Node::Action(p) => fields_of_pipe(p, out),
            Node::Branch(b) => {
                for a in &b.arms {
                    fields_of_pipe(&a.pipe, out);
                    fields_of_list(&a.list, out);
                }
                if let Some(e) = &b.else_list {
                    fields_of_list(e, out);
                }
            }
            Node::Text(_) | Node::Break | Node::Continue => {}
        }
    }
}

fn fields_of_pipe(p: &ast::Pipe, out: &mut Vec<String>) {
    for c in &p.cmds {
        for a in &c.args {
            match a {
                Arg::Field(f) => out.extend(f.iter().map(|s| s.to_string())),
                // Go parses `(pipe)` as a pipe node, `(pipe).a` as a chain
                // node, which Loki's walk does not enter.
                Arg::Paren(inner, chain) if chain.is_empty() => fields_of_pipe(inner, out),
                _ => {}
            }
        }
    }
}
