//! Execution of a parsed template against a [`Context`].

use std::borrow::Cow;

use super::ast::{Arg, Branch, BranchKind, Cmd, List, Node, Pipe};
use super::funcs::Func;
use super::value::{IntKind, Value, write_value};
use super::{Context, TemplateError};

/// What a list execution asks the enclosing range to do.
enum Flow {
    Normal,
    Break,
    Continue,
}

/// An execution failure: the message and the command it happened at.
pub(crate) struct ExecErr {
    pub msg: String,
    pub pos: usize,
    pub src: Box<str>,
}

type X<T> = Result<T, ExecErr>;

pub(crate) struct State<'a> {
    pub ctx: &'a dyn Context,
    pub vars: Vec<(&'a str, Value<'a>)>,
    pub cmd: Option<&'a Cmd>,
    pub depth: usize,
    /// Go's "current node" (`state.at`): the last node evaluated, which
    /// Go's error texts point at.
    pub at: (usize, &'a str),
}

impl<'a> State<'a> {
    /// Fails at the current node.
    fn fail<T>(&self, msg: impl Into<String>) -> X<T> {
        Err(ExecErr {
            msg: msg.into(),
            pos: self.at.0,
            src: self.at.1.into(),
        })
    }

    /// Fails at the current command (Go's `error calling f: …`).
    fn fail_cmd<T>(&self, msg: impl Into<String>) -> X<T> {
        match self.cmd {
            Some(c) => Err(ExecErr {
                msg: msg.into(),
                pos: c.pos,
                src: c.src.clone(),
            }),
            None => self.fail(msg),
        }
    }

    pub(crate) fn run(&mut self, list: &'a List, dot: &Value<'a>, out: &mut String) -> X<()> {
        self.list(list, dot, out).map(|_| ())
    }

    fn list(&mut self, list: &'a List, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        for n in list {
            match n {
                Node::Text(t) => out.push_str(t),
                Node::Action(p) => {
                    let v = self.pipe(p, dot)?;
                    if p.decl.is_empty() {
                        write_value(out, &v, self.ctx);
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
            BranchKind::If | BranchKind::With => {
                let v = self.pipe(&b.pipe, dot)?;
                if v.truth(self.ctx) {
                    let d = if b.kind == BranchKind::With {
                        v
                    } else {
                        dot.clone()
                    };
                    self.list(&b.list, &d, out)
                } else if let Some(e) = &b.else_list {
                    self.list(e, dot, out)
                } else {
                    Ok(Flow::Normal)
                }
            }
            BranchKind::Range => self.range(b, dot, out),
        };
        self.vars.truncate(mark);
        r
    }

    fn range(&mut self, b: &'a Branch, dot: &Value<'a>, out: &mut String) -> X<Flow> {
        // The pipeline's declarations are set per element, not to the whole value.
        let mut pipe = b.pipe.clone();
        let decl = std::mem::take(&mut pipe.decl);
        let v = self.eval_cmds(&b.pipe.cmds, dot)?;
        let _ = pipe;
        let items: Vec<(Value<'a>, Value<'a>)> = match &v {
            Value::List(l) => l
                .iter()
                .enumerate()
                .map(|(k, e)| (Value::Int(k as i64, IntKind::Int), e.clone()))
                .collect(),
            Value::Map(m) => m
                .iter()
                .map(|(k, e)| (Value::Str(Cow::Owned(k.clone())), e.clone()))
                .collect(),
            Value::Labels => {
                let mut pairs: Vec<(String, String)> = Vec::new();
                self.ctx
                    .for_each_label(&mut |k, v| pairs.push((k.into(), v.into())));
                pairs.sort();
                pairs
                    .into_iter()
                    .map(|(k, v)| (Value::Str(Cow::Owned(k)), Value::Str(Cow::Owned(v))))
                    .collect()
            }
            Value::Int(n, _) => {
                if decl.len() > 1 {
                    return self.fail(format!(
                        "can't use {n} to iterate over more than one variable"
                    ));
                }
                (0..*n)
                    .map(|k| (Value::Int(k, IntKind::Int), Value::Int(k, IntKind::Int)))
                    .collect()
            }
            Value::Nil => Vec::new(),
            other => {
                let mut s = String::new();
                write_value(&mut s, other, self.ctx);
                return self.fail(format!("range can't iterate over {s}"));
            }
        };
        if items.is_empty() {
            if let Some(e) = &b.else_list {
                return self.list(e, dot, out);
            }
            return Ok(Flow::Normal);
        }
        let mark = self.vars.len();
        for (k, e) in items {
            self.vars.truncate(mark);
            match decl.len() {
                0 => {}
                1 => self.vars.push((&b.pipe.decl[0], e.clone())),
                _ => {
                    self.vars.push((&b.pipe.decl[0], k));
                    self.vars.push((&b.pipe.decl[1], e.clone()));
                }
            }
            if let Flow::Break = self.list(&b.list, &e, out)? {
                break;
            }
        }
        Ok(Flow::Normal)
    }

    fn pipe(&mut self, p: &'a Pipe, dot: &Value<'a>) -> X<Value<'a>> {
        let v = self.eval_cmds(&p.cmds, dot)?;
        for name in &p.decl {
            if p.is_assign {
                match self.vars.iter_mut().rev().find(|(n, _)| *n == &**name) {
                    Some(slot) => slot.1 = v.clone(),
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
        self.at = (c.spans[0].0, &c.spans[0].1);
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
                        c.spans[0].1
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
        let (args, spans, re): (&'a [Arg], &'a [(usize, Box<str>)], _) = match cmd {
            Some(c) => (&c.args[1..], &c.spans[1..], c.re.as_ref()),
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
                if v.truth(self.ctx) == (f == Func::Or) {
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
                spans[0].1,
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
        match f.call(name, vals, self.ctx, re) {
            Ok(v) => Ok(v),
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
                            format!("expected integer; found {}", spans[k].1)
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

    fn arg(&mut self, a: &'a Arg, dot: &Value<'a>, span: &'a (usize, Box<str>)) -> X<Value<'a>> {
        self.at = (span.0, &span.1);
        match a {
            Arg::Dot => Ok(dot.clone()),
            Arg::Nil => Ok(Value::Nil),
            Arg::Bool(b) => Ok(Value::Bool(*b)),
            Arg::Number(n) => Ok(match (n.int, n.is_float_text) {
                (Some(i), false) => Value::Int(i, IntKind::Int),
                _ => match n.float {
                    Some(f) => Value::Float(f),
                    None => return self.fail(format!("{} overflows int", n.text)),
                },
            }),
            Arg::Str(s) => Ok(Value::Str(Cow::Borrowed(s))),
            Arg::Field(names) => self.fields(dot.clone(), names),
            Arg::Var(name, names) => {
                let v = self
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == &**name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or(Value::Nil);
                self.fields(v, names)
            }
            Arg::Func(f, name) => self.call(*f, name, None, dot, None),
            Arg::Paren(p, names) => {
                self.depth += 1;
                if self.depth > 10_000 {
                    return self.fail("exceeded maximum template depth (100000)");
                }
                let v = self.eval_cmds(&p.cmds, dot);
                self.depth -= 1;
                let v = v?;
                for name in &p.decl {
                    self.vars.push((name, v.clone()));
                }
                self.fields(v, names)
            }
        }
    }

    fn fields(&self, mut v: Value<'a>, names: &[Box<str>]) -> X<Value<'a>> {
        for n in names {
            v = match v {
                Value::Labels => Value::Str(Cow::Borrowed(self.ctx.label(n).unwrap_or(""))),
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
    let before = &text[..e.pos.min(text.len())];
    let line = 1 + before.matches('\n').count();
    let col = match before.rfind('\n') {
        Some(k) => e.pos - (k + 1),
        None => e.pos,
    };
    TemplateError::Exec(format!(
        "template: {name}:{line}:{col}: executing \"{name}\" at <{}>: {}",
        e.src, e.msg
    ))
}
