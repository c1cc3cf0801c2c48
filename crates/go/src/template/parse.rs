//! Parser from tokens to the tree in [`super::ast`], with Go's error texts.

use std::collections::HashMap;

use super::ast::{Arg, Arm, Branch, BranchKind, Cmd, List, Node, Number, Pipe, RegexSlot, Span};
use super::funcs::Func;
use super::lex::{Item, Tok, lex};
use super::limits::{DEPTH_EXCEEDED, MAX_CACHED_REGEXES, MAX_DEPTH};

/// Parses `text` as template `name`; errors carry Go's message without the
/// `template: name:line: ` prefix, plus the line.
pub(crate) fn parse(text: &str) -> Result<List, (usize, String)> {
    let items = lex(text);
    let mut p = Parser {
        text,
        items,
        i: 0,
        vars: Vec::new(),
        declared: HashMap::new(),
        regexes: HashMap::new(),
        range_depth: 0,
        depth: 0,
        line: 1,
        action_line: 0,
    };
    p.declare("$");
    p.top()
}

type PResult<T> = Result<T, (usize, String)>;

struct Parser<'a> {
    text: &'a str,
    items: Vec<Item>,
    i: usize,
    /// Variables in scope, innermost last (popped at `{{end}}`).
    vars: Vec<Box<str>>,
    /// How many entries of `vars` bear each name: a use is checked in
    /// constant time, not by a scan of every declaration before it.
    declared: HashMap<Box<str>, usize>,
    /// The slots of the literal regex patterns met so far.
    regexes: HashMap<Box<str>, RegexSlot>,
    range_depth: usize,
    /// Parentheses and control bodies open around the current token.
    depth: usize,
    line: usize,
    action_line: usize,
}

/// What ended an item list.
enum Stop {
    End,
    Else,
    Eof,
}

/// Go's `item.String()` for error messages.
fn tok_str(text: &str, it: &Item, next_pos: usize) -> String {
    match &it.tok {
        Tok::Eof => "EOF".into(),
        Tok::Error(m) => m.clone(),
        Tok::Keyword(k) => format!("<{k}>"),
        _ => {
            let raw = &text[it.pos..next_pos.max(it.pos).min(text.len())];
            let raw = match &it.tok {
                Tok::Left => "{{",
                Tok::Right => "}}",
                _ => raw,
            };
            if raw.chars().count() > 10 {
                let head: String = raw.chars().take(10).collect();
                format!("{}...", crate::strconv::quote(&head))
            } else {
                crate::strconv::quote(raw)
            }
        }
    }
}

impl Parser<'_> {
    fn declare(&mut self, name: &str) {
        self.vars.push(name.into());
        *self.declared.entry(name.into()).or_insert(0) += 1;
    }

    fn pop_vars(&mut self, len: usize) {
        for name in self.vars.drain(len..) {
            if let Some(n) = self.declared.get_mut(&name) {
                *n -= 1;
                if *n == 0 {
                    self.declared.remove(&name);
                }
            }
        }
    }

    /// The shared slot for a literal pattern, while there are slots left.
    fn regex_slot(&mut self, pattern: &str) -> Option<RegexSlot> {
        if let Some(slot) = self.regexes.get(pattern) {
            return Some(slot.clone());
        }
        if self.regexes.len() >= MAX_CACHED_REGEXES {
            return None;
        }
        let slot = RegexSlot::default();
        self.regexes.insert(pattern.into(), slot.clone());
        Some(slot)
    }

    /// Opens one nesting level, refusing one past [`MAX_DEPTH`] before the
    /// parser recurses into it.
    fn enter(&mut self) -> PResult<()> {
        if self.depth >= MAX_DEPTH {
            return self.err(DEPTH_EXCEEDED.into());
        }
        self.depth += 1;
        Ok(())
    }

    fn next(&mut self) -> Item {
        let it = self.items[self.i.min(self.items.len() - 1)].clone();
        if self.i < self.items.len() - 1 {
            self.i += 1;
        }
        self.line = it.line;
        it
    }

    fn peek(&self) -> &Item {
        &self.items[self.i.min(self.items.len() - 1)]
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let it = self.next();
            if it.tok != Tok::Space {
                return it;
            }
        }
    }

    fn peek_non_space(&mut self) -> Tok {
        let save = self.i;
        let it = self.next_non_space();
        self.i = save;
        it.tok
    }

    /// A lexer error, with Go's note on where a multi-line action started.
    fn lex_err<T>(&self, m: &str, line: usize) -> PResult<T> {
        if self.action_line != 0 && self.action_line != line {
            let extra = format!(" in action started at line:{}", self.action_line);
            let extra = if m.ends_with(" action") {
                &extra[" in action".len()..]
            } else {
                &extra[..]
            };
            return Err((line, format!("{m}{extra}")));
        }
        Err((line, m.to_string()))
    }

    fn err<T>(&self, msg: String) -> PResult<T> {
        Err((self.line, msg))
    }

    /// Text of a token for messages: from its offset to the next token's.
    fn token_text(&self, it: &Item) -> String {
        let idx = self
            .items
            .iter()
            .position(|x| x.pos == it.pos && x.tok == it.tok);
        let end = idx
            .and_then(|k| self.items.get(k + 1))
            .map(|n| n.pos)
            .unwrap_or(self.text.len());
        let end = match &it.tok {
            Tok::Char(c) => it.pos + c.len_utf8(),
            Tok::Pipe | Tok::Assign | Tok::LParen | Tok::RParen => it.pos + 1,
            Tok::Declare => it.pos + 2,
            _ => end,
        };
        tok_str(self.text, it, end)
    }

    fn unexpected<T>(&self, it: &Item, context: &str) -> PResult<T> {
        if let Tok::Error(m) = &it.tok {
            return self.lex_err(m, it.line);
        }
        self.err(format!("unexpected {} in {}", self.token_text(it), context))
    }

    fn top(&mut self) -> PResult<List> {
        let mut list = Vec::new();
        loop {
            if self.peek().tok == Tok::Eof {
                return Ok(list);
            }
            match self.text_or_action()? {
                Ok(n) => list.extend(n),
                Err(Stop::End) => return self.err("unexpected {{end}}".into()),
                Err(Stop::Else) => return self.err("unexpected {{else}}".into()),
                Err(Stop::Eof) => return Ok(list),
            }
        }
    }

    fn item_list(&mut self) -> PResult<(List, Stop)> {
        let mut list = Vec::new();
        while self.peek_non_space() != Tok::Eof {
            match self.text_or_action()? {
                Ok(n) => list.extend(n),
                Err(e) => return Ok((list, e)),
            }
        }
        // Surface a pending lexer error rather than EOF.
        let it = self.next_non_space();
        if let Tok::Error(m) = &it.tok {
            return self.lex_err(m, it.line);
        }
        self.err("unexpected EOF".into())
    }

    /// One node, or the end marker of an enclosing list.
    fn text_or_action(&mut self) -> PResult<Result<Option<Node>, Stop>> {
        let it = self.next_non_space();
        match it.tok {
            Tok::Text(t) => Ok(Ok(Some(Node::Text(t.into_boxed_str())))),
            Tok::Left => {
                self.action_line = it.line;
                let r = self.action();
                if r.is_ok() {
                    self.action_line = 0;
                }
                r
            }
            Tok::Eof => Ok(Err(Stop::Eof)),
            Tok::Error(m) => self.lex_err(&m, it.line),
            _ => self.unexpected(&it, "input"),
        }
    }

    fn action(&mut self) -> PResult<Result<Option<Node>, Stop>> {
        if let Tok::Keyword(k) = self.peek_non_space() {
            self.next_non_space();
            return match k {
                "end" => {
                    self.expect_right("end")?;
                    Ok(Err(Stop::End))
                }
                "else" => {
                    // `else if` / `else with` leave the keyword pending.
                    if matches!(self.peek_non_space(), Tok::Keyword("if" | "with")) {
                        return Ok(Err(Stop::Else));
                    }
                    self.expect_right("else")?;
                    Ok(Err(Stop::Else))
                }
                "if" => self.control(BranchKind::If, "if").map(|n| Ok(Some(n))),
                "with" => self.control(BranchKind::With, "with").map(|n| Ok(Some(n))),
                "range" => self
                    .control(BranchKind::Range, "range")
                    .map(|n| Ok(Some(n))),
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return self.err(format!("{{{{{k}}}}} outside {{{{range}}}}"));
                    }
                    let it = self.next_non_space();
                    if it.tok != Tok::Right {
                        return self.unexpected(&it, &format!("{{{{{k}}}}}"));
                    }
                    Ok(Ok(Some(if k == "break" {
                        Node::Break
                    } else {
                        Node::Continue
                    })))
                }
                // define/template/block: not used by Loki templates.
                _ => self.err(format!("unsupported action {{{{{k}}}}}")),
            };
        }
        let pipe = self.pipeline("command", true)?;
        Ok(Ok(Some(Node::Action(pipe))))
    }

    fn expect_right(&mut self, context: &str) -> PResult<()> {
        let it = self.next_non_space();
        if it.tok != Tok::Right {
            return self.unexpected(&it, context);
        }
        Ok(())
    }

    /// A control structure after its keyword, with its `else if`/`else
    /// with` chain parsed in a loop into arms of one branch (Go nests each
    /// link in the previous one's else list; the meaning is the same).
    fn control(&mut self, kind: BranchKind, context: &str) -> PResult<Node> {
        self.enter()?;
        let nvars = self.vars.len();
        let mut arms = Vec::new();
        let mut context = context;
        let else_list = loop {
            let pipe = self.pipeline(context, true)?;
            if kind == BranchKind::Range {
                self.range_depth += 1;
            }
            let (list, end) = self.item_list()?;
            if kind == BranchKind::Range {
                self.range_depth -= 1;
            }
            arms.push(Arm { pipe, list });
            match end {
                Stop::End => break None,
                Stop::Eof => return self.err("unexpected EOF".into()),
                Stop::Else => {
                    if kind != BranchKind::Range
                        && let Tok::Keyword(k @ ("if" | "with")) = self.peek_non_space()
                    {
                        // `{{else if x}}…{{end}}` is `{{else}}{{if x}}…{{end}}{{end}}`.
                        if (k == "if") != (kind == BranchKind::If) {
                            let it = self.next_non_space();
                            return self.unexpected(&it, "input");
                        }
                        self.next_non_space();
                        context = k;
                        continue;
                    }
                    let (else_list, end) = self.item_list()?;
                    if !matches!(end, Stop::End) {
                        return self.err("expected end; found {{else}}".into());
                    }
                    break Some(else_list);
                }
            }
        };
        self.pop_vars(nvars);
        self.depth -= 1;
        Ok(Node::Branch(Box::new(Branch {
            kind,
            arms,
            else_list,
        })))
    }

    /// Parses a pipeline up to `}}` (or `)` when `at_delim` is false).
    fn pipeline(&mut self, context: &str, at_delim: bool) -> PResult<Pipe> {
        let mut pipe = Pipe {
            decl: Vec::new(),
            is_assign: false,
            cmds: Vec::new(),
        };
        // Declarations.
        loop {
            let save = self.i;
            let v = self.next_non_space();
            let Tok::Variable(name) = &v.tok else {
                self.i = save;
                break;
            };
            let after = self.peek().tok.clone();
            match self.peek_non_space() {
                t @ (Tok::Assign | Tok::Declare) => {
                    self.next_non_space();
                    pipe.is_assign = t == Tok::Assign;
                    pipe.decl.push(name.clone().into_boxed_str());
                    self.declare(name);
                    break;
                }
                Tok::Char(',') => {
                    self.next_non_space();
                    pipe.decl.push(name.clone().into_boxed_str());
                    self.declare(name);
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space() {
                            Tok::Variable(_) | Tok::Right | Tok::RParen => continue,
                            _ => return self.err("range can only initialize variables".into()),
                        }
                    }
                    return self.err(format!("too many declarations in {context}"));
                }
                _ => {
                    let _ = after;
                    self.i = save;
                    break;
                }
            }
        }
        loop {
            let it = self.next_non_space();
            match &it.tok {
                Tok::Right if at_delim => break,
                Tok::RParen if !at_delim => break,
                Tok::Bool(_)
                | Tok::CharConst(_)
                | Tok::Dot
                | Tok::Field(_)
                | Tok::Ident(_)
                | Tok::Number(_)
                | Tok::Nil
                | Tok::RawStr(_)
                | Tok::Str(_)
                | Tok::Variable(_)
                | Tok::LParen => {
                    self.i -= 1;
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&it, context),
            }
        }
        if pipe.cmds.is_empty() {
            return self.err(format!("missing value for {context}"));
        }
        for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
            if matches!(
                c.args[0],
                Arg::Bool(_) | Arg::Dot | Arg::Nil | Arg::Number(_) | Arg::Str(_)
            ) {
                return self.err(format!(
                    "non executable command in pipeline stage {}",
                    i + 1
                ));
            }
        }
        Ok(pipe)
    }

    fn command(&mut self) -> PResult<Cmd> {
        while self.peek().tok == Tok::Space {
            self.next();
        }
        let pos = self.peek().pos;
        let mut args = Vec::new();
        let mut spans = Vec::new();
        let mut end = pos;
        loop {
            while self.peek().tok == Tok::Space {
                self.next();
            }
            if is_term_start(&self.peek().tok) {
                let start = self.peek().pos;
                let (op, chain_pos) = self.operand()?;
                end = self.peek().pos;
                spans.push(Span {
                    pos: chain_pos.unwrap_or(start),
                    start,
                    end: start + self.text[start..end.max(start)].trim_end().len(),
                });
                args.push(op);
            }
            let it = self.next();
            match &it.tok {
                Tok::Space => continue,
                Tok::Right | Tok::RParen => self.i -= 1,
                Tok::Pipe => {}
                Tok::Error(m) => return self.lex_err(m, it.line),
                _ => return self.unexpected(&it, "operand"),
            }
            break;
        }
        if args.is_empty() {
            return self.err("empty command".into());
        }
        let src_end = pos
            + self.text[pos..end.max(pos).min(self.text.len())]
                .trim_end()
                .len();
        let re = match (&args[0], args.get(1)) {
            (
                Arg::Func(Func::RegexReplaceAll | Func::RegexReplaceAllLiteral | Func::Count, _),
                Some(Arg::Str(p)),
            ) => self.regex_slot(p),
            _ => None,
        };
        Ok(Cmd {
            args,
            spans,
            span: Span {
                pos,
                start: pos,
                end: src_end,
            },
            re,
        })
    }

    /// An operand, and for a chain (`.a.b`, `$x.a`, `(p).a`) Go's node
    /// position: that of the first chained field.
    fn operand(&mut self) -> PResult<(Arg, Option<usize>)> {
        let term = self.term()?;
        let chain_pos = match &self.peek().tok {
            Tok::Field(_) => Some(self.peek().pos),
            _ => None,
        };
        let mut fields: Vec<Box<str>> = Vec::new();
        while let Tok::Field(f) = &self.peek().tok {
            fields.push(f.clone().into_boxed_str());
            self.next();
        }
        if fields.is_empty() {
            return Ok((term, None));
        }
        let arg = match term {
            Arg::Field(mut f) => {
                f.extend(fields);
                Arg::Field(f)
            }
            Arg::Var(v, mut f) => {
                f.extend(fields);
                Arg::Var(v, f)
            }
            Arg::Paren(p, mut f) => {
                f.extend(fields);
                Arg::Paren(p, f)
            }
            Arg::Bool(_) | Arg::Str(_) | Arg::Number(_) | Arg::Nil | Arg::Dot => {
                return self.err(format!(
                    "unexpected . after term {}",
                    crate::strconv::quote(&term_text(&term))
                ));
            }
            Arg::Func(_, name) => {
                return self.err(format!("unexpected . after term {name:?}"));
            }
        };
        Ok((arg, chain_pos))
    }

    fn term(&mut self) -> PResult<Arg> {
        let it = self.next_non_space();
        Ok(match it.tok {
            Tok::Ident(name) => match Func::lookup(&name) {
                Some(f) => Arg::Func(f, name.into_boxed_str()),
                None => return self.err(format!("function {name:?} not defined")),
            },
            Tok::Dot => Arg::Dot,
            Tok::Nil => Arg::Nil,
            Tok::Variable(name) => {
                if !self.declared.contains_key(name.as_str()) {
                    return self.err(format!("undefined variable {name:?}"));
                }
                Arg::Var(name.into_boxed_str(), Vec::new())
            }
            Tok::Field(f) => Arg::Field(vec![f.into_boxed_str()]),
            Tok::Bool(b) => Arg::Bool(b),
            Tok::CharConst(s) => match unquote_char(&s) {
                Some(c) => Arg::Number(Number {
                    text: s.into_boxed_str(),
                    int: Some(c as i64),
                    float: Some(c as i64 as f64),
                    is_float_text: false,
                }),
                None => return self.err(format!("malformed character constant: {s}")),
            },
            Tok::Number(s) => match number(&s) {
                Some(n) => Arg::Number(n),
                None => return self.err(format!("illegal number syntax: {s:?}")),
            },
            Tok::LParen => {
                self.enter()?;
                let pipe = self.pipeline("parenthesized pipeline", false)?;
                self.depth -= 1;
                Arg::Paren(Box::new(pipe), Vec::new())
            }
            Tok::Str(s) => match unquote(&s) {
                Some(u) => Arg::Str(u.into_boxed_str()),
                None => return self.err("invalid syntax".into()),
            },
            Tok::RawStr(s) => Arg::Str(s[1..s.len() - 1].replace('\r', "").into_boxed_str()),
            Tok::Error(m) => return self.lex_err(&m, it.line),
            _ => return self.unexpected(&it, "operand"),
        })
    }
}

fn is_term_start(t: &Tok) -> bool {
    matches!(
        t,
        Tok::Bool(_)
            | Tok::CharConst(_)
            | Tok::Dot
            | Tok::Field(_)
            | Tok::Ident(_)
            | Tok::Number(_)
            | Tok::Nil
            | Tok::RawStr(_)
            | Tok::Str(_)
            | Tok::Variable(_)
            | Tok::LParen
    )
}

fn term_text(a: &Arg) -> String {
    match a {
        Arg::Bool(b) => b.to_string(),
        Arg::Str(s) => crate::strconv::quote(s),
        Arg::Number(n) => n.text.to_string(),
        Arg::Nil => "nil".into(),
        Arg::Dot => ".".into(),
        _ => String::new(),
    }
}

/// Go's number classification (`parse.newNumber`).
fn number(text: &str) -> Option<Number> {
    if text.ends_with('i') {
        return None; // complex constants: not supported.
    }
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, clean.strip_prefix('+').unwrap_or(&clean)),
    };
    let lower = body.to_ascii_lowercase();
    let radix_int = |s: &str| -> Option<i128> {
        let (radix, digits) = if let Some(d) = s.strip_prefix("0x") {
            (16, d)
        } else if let Some(d) = s.strip_prefix("0o") {
            (8, d)
        } else if let Some(d) = s.strip_prefix("0b") {
            (2, d)
        } else if s.len() > 1 && s.starts_with('0') {
            (8, &s[1..])
        } else {
            (10, s)
        };
        i128::from_str_radix(digits, radix).ok()
    };
    let is_hex = lower.starts_with("0x");
    let is_float_text = !is_hex && body.contains(['.', 'e', 'E', 'p', 'P']);
    let mut n = Number {
        text: text.into(),
        int: None,
        float: None,
        is_float_text,
    };
    if let Some(v) = radix_int(&lower) {
        let v = if neg { -v } else { v };
        n.int = i64::try_from(v).ok();
        n.float = Some(v as f64);
        return Some(n);
    }
    if is_hex {
        return None;
    }
    let f: f64 = clean.parse().ok()?;
    n.float = Some(f);
    if f.fract() == 0.0 && f.abs() < 9.2e18 {
        n.int = Some(f as i64);
    }
    Some(n)
}

/// Unquotes a Go double-quoted string literal ([`crate::strconv`]); byte
/// escapes that do not spell UTF-8 become U+FFFD, as Loki's JSON output
/// shows them.
pub(crate) fn unquote(s: &str) -> Option<String> {
    s.strip_prefix('"')?;
    let bytes = crate::strconv::unquote_bytes(s).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn unquote_char(s: &str) -> Option<char> {
    let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
    if inner == "\"" {
        return Some('"');
    }
    if inner == "\\'" {
        return Some('\'');
    }
    let u = unquote(&format!("\"{inner}\""))?;
    let mut it = u.chars();
    let c = it.next()?;
    it.next().is_none().then_some(c)
}
