//! Execution of a parsed template against a [`Context`].
//!
//! The walk recurses over the tree, whose depth the parser bounds
//! ([`super::limits::MAX_DEPTH`]); each render has a budget of steps and
//! output bytes ([`super::limits`]).

use std::borrow::Cow;

use super::ast::{Arg, Branch, BranchKind, Cmd, List, Node, Pipe, Span};
use super::funcs::Func;
use super::limits::{
    BYTES_PER_STEP, MAX_OUTPUT_BYTES, MAX_STEPS, REGEX_COMPILE_STEPS, VARS_PER_STEP,
    output_too_large, result_too_large, steps_exceeded,
};
use super::value::{IntKind, Value, write_value};
use super::{Context, TemplateError};

/// What a list execution asks the enclosing range to do.
enum Flow {
    Normal,
    Break,
    Continue,
}

/// An execution failure: the message and the node it happened at (none
/// for a spent output budget, which Go would report as its writer's error,
/// without a location).
pub(crate) struct ExecErr {
    pub msg: String,
    pub at: Option<(usize, Box<str>)>,
}

type X<T> = Result<T, ExecErr>;

pub(crate) struct State<'a> {
    ctx: &'a dyn Context,
    /// The template text, which the tree's spans index.
    text: &'a str,
    vars: Vec<(&'a str, Value<'a>)>,
    cmd: Option<&'a Cmd>,
    /// Go's "current node" (`state.at`): the last node evaluated, which
    /// Go's error texts point at.
    at: (usize, &'a str),
    /// Steps left of [`MAX_STEPS`].
    steps: usize,
    /// Length of the output buffer before this render.
    out_start: usize,
    /// How many labels the context has, counted at first need.
    labels: Option<usize>,
}

impl<'a> State<'a> {
    /// A render of template `text` with `$` and dot the label map, appending
    /// to an output buffer that holds `out_start` bytes already.
    pub(crate) fn new(ctx: &'a dyn Context, text: &'a str, out_start: usize) -> Self {
        State {
            ctx,
            text,
            vars: vec![("$", Value::Labels)],
            cmd: None,
            at: (0, ""),
            steps: MAX_STEPS,
            out_start,
            labels: None,
        }
    }

    fn src(&self, s: &Span) -> &'a str {
        &self.text[s.start..s.end]
    }

    /// Fails at the current node.
    fn fail<T>(&self, msg: impl Into<String>) -> X<T> {
        Err(ExecErr {
            msg: msg.into(),
            at: Some((self.at.0, self.at.1.into())),
        })
    }

    /// Fails at the current command (Go's `error calling f: …`).
    fn fail_cmd<T>(&self, msg: impl Into<String>) -> X<T> {
        match self.cmd {
            Some(c) => Err(ExecErr {
                msg: msg.into(),
                at: Some((c.span.pos, self.src(&c.span).into())),
            }),
            None => self.fail(msg),
        }
    }

    /// Takes `n` steps from the budget.
    fn spend(&mut self, n: usize) -> X<()> {
        match self.steps.checked_sub(n) {
            Some(left) => {
                self.steps = left;
                Ok(())
            }
            None => {
                self.steps = 0;
                self.fail(steps_exceeded())
            }
        }
    }

    /// Accounts for output written since the buffer was `before` long.
    fn wrote(&mut self, out: &str, before: usize) -> X<()> {
        if out.len() - self.out_start > MAX_OUTPUT_BYTES {
            return Err(ExecErr {
                msg: output_too_large(),
                at: None,
            });
        }
        self.spend((out.len() - before) / BYTES_PER_STEP)
    }

    /// Pays for a walk over the context's labels (a lookup, a truth test,
    /// `len .`): contexts scan them, and a parsed line can have thousands.
    fn pay_labels(&mut self) -> X<()> {
        let n = match self.labels {
            Some(n) => n,
            None => {
                let mut n = 0;
                self.ctx.for_each_label(&mut |_, _| n += 1);
                self.labels = Some(n);
                n
            }
        };
        self.spend(n / VARS_PER_STEP)
    }

    /// Go's truth of `v`, paying for a walk over the labels.
    fn truth(&mut self, v: &Value<'a>) -> X<bool> {
        if let Value::Labels = v {
            self.pay_labels()?;
        }
        Ok(v.truth(self.ctx))
    }

    /// Finds the innermost variable `name`, paying for the scan.
    fn var_index(&mut self, name: &str) -> X<Option<usize>> {
        let k = self.vars.iter().rposition(|(n, _)| *n == name);
        let scanned = self.vars.len() - k.map_or(0, |k| k);
        self.spend(scanned / VARS_PER_STEP)?;
        Ok(k)
    }

    pub(crate) fn run(&mut self, list: &'a List, dot: &Value<'a>, out: &mut String) -> X<()> {
        self.list(list, dot, out).map(|_| ())
    }

    fn list(&mut self, list: &'a List, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        for n in list {
            self.spend(1)?;
            match n {
                Node::Text(t) => {
                    let before = out.len();
                    out.push_str(t);
                    self.wrote(out, before)?;
                }
                Node::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.decl.is_empty() {
                        let before = out.len();
                        write_value(out, &v, self.ctx);
                        self.wrote(out, before)?;
                    }
                }
                Node::Branch(b) => match self.branch(b, dot, out)? {
                    Flow::Normal => {}
                    f => return Ok(f),
                },
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn branch(&mut self, b: &'a Branch, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        let mark = self.vars.len();
        let r = match b.kind {
            BranchKind::If | BranchKind::With => self.if_with(b, dot, out),
            BranchKind::Range => self.range(b, dot, out),
        };
        self.vars.truncate(mark);
        r
    }

    /// Runs the first arm whose pipeline is true (for `with`, with that
    /// value as dot), else the else list.
    fn if_with(&mut self, b: &'a Branch, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        for arm in &b.arms {
            let v = self.pipe(&arm.pipe, dot)?;
            if self.truth(&v)? {
                return if b.kind == BranchKind::With {
                    self.list(&arm.list, &v, out)
                } else {
                    self.list(&arm.list, dot, out)
                };
            }
        }
        match &b.else_list {
            Some(e) => self.list(e, dot, out),
            None => Ok(Flow::Normal),
        }
    }

    fn range(&mut self, b: &'a Branch, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        // The pipeline's declarations are set per element, not to the whole value.
        let arm = &b.arms[0];
        let v = self.eval_cmds(&arm.pipe.cmds, dot)?;
        match v {
            Value::List(l) => {
                let items = l
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (Value::Int(k as i64, IntKind::Int), e.clone()));
                self.iterate(b, items, dot, out)
            }
            Value::Map(m) => {
                let items = m
                    .iter()
                    .map(|(k, e)| (Value::Str(Cow::Owned(k.clone())), e.clone()));
                self.iterate(b, items, dot, out)
            }
            Value::Labels => {
                self.pay_labels()?;
                let mut pairs: Vec<(String, String)> = Vec::new();
                self.ctx
                    .for_each_label(&mut |k, v| pairs.push((k.into(), v.into())));
                pairs.sort();
                let items = pairs
                    .into_iter()
                    .map(|(k, v)| (Value::Str(Cow::Owned(k)), Value::Str(Cow::Owned(v))));
                self.iterate(b, items, dot, out)
            }
            Value::Int(n, _) => {
                if arm.pipe.decl.len() > 1 {
                    return self.fail(format!(
                        "can't use {n} to iterate over more than one variable"
                    ));
                }
                // Lazily: `range N` costs a step per iteration, not N items up front.
                let items =
                    (0..n).map(|k| (Value::Int(k, IntKind::Int), Value::Int(k, IntKind::Int)));
                self.iterate(b, items, dot, out)
            }
            Value::Nil => self.iterate(b, std::iter::empty(), dot, out),
            other => {
                let mut s = String::new();
                write_value(&mut s, &other, self.ctx);
                self.fail(format!("range can't iterate over {s}"))
            }
        }
    }

    /// Runs a range's list once per (key, element), or its else list when
    /// there is none.
    fn iterate(
        &mut self,
        b: &'a Branch,
        items: impl Iterator<Item = (Value<'a>, Value<'a>)>,
        dot: &Value<'a>,
        out: &mut String,
    ) -> X<Flow> {
        let arm = &b.arms[0];
        let mut items = items.peekable();
        if items.peek().is_none() {
            if let Some(e) = &b.else_list {
                return self.list(e, dot, out);
            }
            return Ok(Flow::Normal);
        }
        let mark = self.vars.len();
        for (k, e) in items {
            self.spend(1 + e.weight() / BYTES_PER_STEP)?;
            self.vars.truncate(mark);
            match arm.pipe.decl.len() {
                0 => {}
                1 => self.vars.push((&arm.pipe.decl[0], e.clone())),
                _ => {
                    self.vars.push((&arm.pipe.decl[0], k));
                    self.vars.push((&arm.pipe.decl[1], e.clone()));
                }
            }
            if let Flow::Break = self.list(&arm.list, &e, out)? {
                break;
            }
        }
        Ok(Flow::Normal)
    }

    fn pipe(&mut self, p: &'a Pipe, dot: &Value<'a>) -> X<Value<'a>> {
        let v = self.eval_cmds(&p.cmds, dot)?;
        if !p.decl.is_empty() {
            self.spend(p.decl.len() * v.weight() / BYTES_PER_STEP)?;
        }
        for name in &p.decl {
            if p.is_assign {
                match self.var_index(name)? {
                    Some(k) => self.vars[k].1 = v.clone(),
                    None => return self.fail(format!("undefined variable: {name}")),
                }
            } else {
                self.vars.push((name, v.clone()));
            }
        }
        Ok(v)
    }

    fn eval_cmds(&mut self, cmds: &'a [Cmd], dot: &Value<'a>) -> X<Value<'a>> {
        let mut last: Option<Value<'a>> = None;
        for c in cmds {
            let prev = self.cmd.replace(c);
            let v = self.cmd(c, dot, last.take());
            self.cmd = prev;
            last = Some(v?);
        }
        Ok(last.unwrap_or(Value::Nil))
    }

    fn cmd(&mut self, c: &'a Cmd, dot: &Value<'a>, fin: Option<Value<'a>>) -> X<Value<'a>> {
        self.at = (c.spans[0].pos, self.src(&c.spans[0]));
        match &c.args[0] {
            Arg::Func(f, name) => self.call(*f, name, Some(c), dot, fin),
            Arg::Nil => self.fail("nil is not a command"),
            first => {
                let has_args = c.args.len() > 1 || fin.is_some();
                if has_args {
                    if let Arg::Field(f) = first {
                        return self.fail(format!(
                            "{} is not a method but has arguments",
                            f[f.len() - 1]
                        ));
                    }
                    return self.fail(format!(
                        "can't give argument to non-function {}",
                        self.src(&c.spans[0])
                    ));
                }
                self.arg(first, dot, &c.spans[0])
            }
        }
    }

    /// Calls `f`; its arguments are those of `cmd` after the function name
    /// (none when `f` appears as a bare operand).
    fn call(
        &mut self,
        f: Func,
        name: &str,
        cmd: Option<&'a Cmd>,
        dot: &Value<'a>,
        fin: Option<Value<'a>>,
    ) -> X<Value<'a>> {
        let ident = self.at;
        let (args, spans, re): (&'a [Arg], &'a [Span], _) = match cmd {
            Some(c) => (&c.args[1..], &c.spans[1..], c.re.as_deref()),
            None => (&[], &[], None),
        };
        if matches!(f, Func::And | Func::Or) {
            let n = args.len() + fin.is_some() as usize;
            if n < 1 {
                return self.fail(format!(
                    "wrong number of args for {name}: want at least 1 got 0"
                ));
            }
            let mut v = Value::Nil;
            for (a, sp) in args.iter().zip(spans) {
                v = self.arg(a, dot, sp)?;
                if self.truth(&v)? == (f == Func::Or) {
                    return Ok(v);
                }
            }
            if let Some(x) = fin {
                v = x;
            }
            return Ok(v);
        }
        if f == Func::Call {
            let v = match args.first().zip(spans.first()) {
                Some((a, sp)) => self.arg(a, dot, sp)?,
                None => return self.fail("wrong number of args for call: want at least 1 got 0"),
            };
            return self.fail_cmd(format!(
                "error calling call: non-function {} of type {}",
                self.src(&spans[0]),
                v.type_name()
            ));
        }
        let mut vals = Vec::with_capacity(args.len() + 1);
        // Go's current node after each argument was evaluated.
        let mut ats = Vec::with_capacity(args.len());
        for (a, sp) in args.iter().zip(spans) {
            vals.push(self.arg(a, dot, sp)?);
            ats.push(self.at);
        }
        if let Some(x) = fin {
            vals.push(x);
        }
        // Functions read their string arguments (`len` and `index` only
        // look at a length or one byte) and pay for what they make.
        let read: usize = match f {
            Func::Len | Func::Index => 0,
            _ => vals.iter().map(|v| v.as_str().map_or(0, str::len)).sum(),
        };
        if vals.iter().any(|v| matches!(v, Value::Labels)) {
            self.pay_labels()?;
        }
        self.spend(1 + read / BYTES_PER_STEP)?;
        // Compiling a pattern can take far longer than anything else a call
        // does; a literal one is compiled once per query.
        let compiles = matches!(
            f,
            Func::RegexReplaceAll | Func::RegexReplaceAllLiteral | Func::Count
        ) && re.is_none_or(|slot| slot.get().is_none());
        if compiles {
            self.spend(REGEX_COMPILE_STEPS)?;
        }
        match f.call(name, vals, self.ctx, re) {
            Ok(v) => {
                let made = match &v {
                    Value::Str(Cow::Owned(s)) => s.len(),
                    Value::List(l) => l.len() * 8,
                    Value::Map(m) => m.len() * 8,
                    _ => 0,
                };
                if made > MAX_OUTPUT_BYTES && matches!(v, Value::Str(_)) {
                    return self.fail_cmd(format!("error calling {name}: {}", result_too_large()));
                }
                self.spend(made / BYTES_PER_STEP)?;
                Ok(v)
            }
            Err(m) => {
                if m.starts_with("wrong number of args") {
                    self.at = ident;
                    return self.fail(m);
                }
                if let Some((k, msg)) = super::funcs::split_arg_err(&m) {
                    if let Some(at) = ats.get(k) {
                        self.at = *at;
                    }
                    // An untyped constant is converted, not checked, by Go.
                    let msg = match (args.get(k), msg.rsplit_once("; got ")) {
                        (Some(Arg::Number(n)), Some((w, _))) if w.ends_with("string") => {
                            format!("expected string; found {}", n.text)
                        }
                        (Some(Arg::Str(_)), Some((w, _))) if w.ends_with("int") => {
                            format!("expected integer; found {}", self.src(&spans[k]))
                        }
                        (Some(Arg::Bool(b)), Some((w, _))) if !w.ends_with("bool") => {
                            format!(
                                "expected {}; found {b}",
                                w.trim_start_matches("wrong type for value; expected ")
                            )
                        }
                        _ => msg.to_string(),
                    };
                    return self.fail(msg);
                }
                if m.starts_with("error calling") {
                    return self.fail_cmd(m);
                }
                self.fail_cmd(format!("error calling {name}: {m}"))
            }
        }
    }

    fn arg(&mut self, a: &'a Arg, dot: &Value<'a>, span: &'a Span) -> X<Value<'a>> {
        self.at = (span.pos, self.src(span));
        let v = match a {
            Arg::Dot => dot.clone(),
            Arg::Nil => Value::Nil,
            Arg::Bool(b) => Value::Bool(*b),
            Arg::Number(n) => match (n.int, n.is_float_text) {
                (Some(i), false) => Value::Int(i, IntKind::Int),
                _ => match n.float {
                    Some(f) => Value::Float(f),
                    None => return self.fail(format!("{} overflows int", n.text)),
                },
            },
            Arg::Str(s) => Value::Str(Cow::Borrowed(s)),
            Arg::Field(names) => self.fields(dot.clone(), names)?,
            Arg::Var(name, names) => {
                let v = match self.var_index(name)? {
                    Some(k) => self.vars[k].1.clone(),
                    None => Value::Nil,
                };
                self.fields(v, names)?
            }
            Arg::Func(f, name) => self.call(*f, name, None, dot, None)?,
            Arg::Paren(p, names) => {
                let v = self.eval_cmds(&p.cmds, dot)?;
                for name in &p.decl {
                    self.vars.push((name, v.clone()));
                }
                self.fields(v, names)?
            }
        };
        // Copying an owned string (a variable, dot, a map entry) is work too.
        self.spend(1 + v.weight() / BYTES_PER_STEP)?;
        Ok(v)
    }

    fn fields(&mut self, mut v: Value<'a>, names: &[Box<str>]) -> X<Value<'a>> {
        for n in names {
            v = match v {
                Value::Labels => {
                    self.pay_labels()?;
                    Value::Str(Cow::Borrowed(self.ctx.label(n).unwrap_or("")))
                }
                Value::Map(m) => m.get(&**n).cloned().unwrap_or(Value::Nil),
                Value::Time(t) => match &**n {
                    "Unix" => Value::Int(t.secs, IntKind::Int64),
                    "UnixMilli" => Value::Int(t.unix_millis(), IntKind::Int64),
                    "UnixNano" => Value::Int(t.unix_nanos(), IntKind::Int64),
                    "UTC" => Value::Time(t.in_utc()),
                    "String" => {
                        let mut s = String::new();
                        t.write_string(&mut s);
                        Value::Str(Cow::Owned(s))
                    }
                    _ => return self.fail(format!("can't evaluate field {n} in type time.Time")),
                },
                // Go returns the invalid value for a field of nil data.
                Value::Nil => Value::Nil,
                other => {
                    return self.fail(format!(
                        "can't evaluate field {n} in type {}",
                        other.type_name()
                    ));
                }
            };
        }
        Ok(v)
    }
}

/// Formats an execution error as Go does.
pub(crate) fn exec_error(name: &str, text: &str, e: ExecErr) -> TemplateError {
    let Some((pos, src)) = e.at else {
        return TemplateError::Exec(format!("template: {name}: {}", e.msg));
    };
    let before = &text[..pos.min(text.len())];
    let line = 1 + before.matches('\n').count();
    let col = match before.rfind('\n') {
        Some(k) => pos - (k + 1),
        None => pos,
    };
    TemplateError::Exec(format!(
        "template: {name}:{line}:{col}: executing \"{name}\" at <{src}>: {}",
        e.msg
    ))
}
