//! Lexer for Go's text/template action syntax.
//!
//! It follows the token rules of Go's `text/template/parse` lexer (delimiters
//! `{{`/`}}`, trim markers `{{- ` and ` -}}`, comments `{{/* */}}`, quoted and
//! raw strings, numbers, fields, variables) so that the parser can report the
//! same errors, in the same order, as Go does.

/// One lexical item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Plain text outside actions.
    Text(String),
    /// `{{` (after any trim marker was handled).
    Left,
    /// `}}`.
    Right,
    /// A run of spaces inside an action.
    Space,
    /// `|`.
    Pipe,
    /// `=`.
    Assign,
    /// `:=`.
    Declare,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// Any other printable ASCII character, e.g. `,`.
    Char(char),
    /// Quoted string, raw text as written (quotes included).
    Str(String),
    /// Raw string, text as written (backquotes included).
    RawStr(String),
    /// Character constant as written.
    CharConst(String),
    /// Number as written.
    Number(String),
    /// `true`/`false`.
    Bool(bool),
    /// `nil`.
    Nil,
    /// `.` alone.
    Dot,
    /// `.name` (without the dot).
    Field(String),
    /// `$` or `$name` (with the `$`).
    Variable(String),
    /// A bare identifier (function name).
    Ident(String),
    /// A keyword: if, else, end, range, with, define, template, block, break, continue.
    Keyword(&'static str),
    /// End of input.
    Eof,
    /// A lexing error, with Go's wording.
    Error(String),
}

/// A token with its byte offset and starting line, as Go tracks them.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    pub tok: Tok,
    pub pos: usize,
    pub line: usize,
}

const KEYWORDS: [&str; 10] = [
    "block", "break", "continue", "define", "else", "end", "if", "range", "template", "with",
];

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

fn has_left_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

/// Lexes the whole input; the list ends with `Eof` or with one `Error`.
pub(crate) fn lex(input: &str) -> Vec<Item> {
    let mut l = Lexer {
        input,
        pos: 0,
        line: 1,
        out: Vec::new(),
        paren: 0,
    };
    l.run();
    l.out
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    line: usize,
    out: Vec<Item>,
    paren: i32,
}

impl Lexer<'_> {
    fn push(&mut self, tok: Tok, pos: usize, line: usize) {
        self.out.push(Item { tok, pos, line });
    }

    fn error(&mut self, msg: String) {
        let (pos, line) = (self.pos, self.line);
        self.push(Tok::Error(msg), pos, line);
    }

    fn at_right(&self) -> Option<bool> {
        let rest = &self.input[self.pos..];
        if has_right_trim(rest) && rest[2..].starts_with("}}") {
            return Some(true);
        }
        rest.starts_with("}}").then_some(false)
    }

    fn run(&mut self) {
        loop {
            // Text state.
            let rest = &self.input[self.pos..];
            let Some(x) = rest.find("{{") else {
                if !rest.is_empty() {
                    let (p, line) = (self.pos, self.line);
                    self.line += rest.matches('\n').count();
                    self.push(Tok::Text(rest.to_string()), p, line);
                }
                let (p, line) = (self.input.len(), self.line);
                self.push(Tok::Eof, p, line);
                return;
            };
            let delim = self.pos + x;
            let trim = has_left_trim(&self.input[delim + 2..]);
            let mut text = &self.input[self.pos..delim];
            if trim {
                text = text.trim_end_matches(is_space);
            }
            if !text.is_empty() {
                let (p, line) = (self.pos, self.line);
                self.push(Tok::Text(text.to_string()), p, line);
            }
            self.line += self.input[self.pos..delim].matches('\n').count();
            self.pos = delim + 2;
            let after = if trim { 2 } else { 0 };
            if self.input[self.pos + after..].starts_with("/*") {
                self.pos += after;
                if !self.comment() {
                    return;
                }
                continue;
            }
            let (p, line) = (delim, self.line);
            self.push(Tok::Left, p, line);
            self.pos += after;
            self.paren = 0;
            if !self.action() {
                return;
            }
        }
    }

    /// Skips a comment; false after an error.
    fn comment(&mut self) -> bool {
        let start = self.pos;
        self.pos += 2;
        let Some(x) = self.input[self.pos..].find("*/") else {
            self.error("unclosed comment".into());
            return false;
        };
        self.pos += x + 2;
        let Some(trim) = self.at_right() else {
            self.error("comment ends before closing delimiter".into());
            return false;
        };
        self.line += self.input[start..self.pos].matches('\n').count();
        if trim {
            self.pos += 2;
        }
        self.pos += 2;
        if trim {
            let rest = &self.input[self.pos..];
            let skipped = rest.len() - rest.trim_start_matches(is_space).len();
            self.line += rest[..skipped].matches('\n').count();
            self.pos += skipped;
        }
        true
    }

    fn peek(&self) -> Option<char> {
        self.input[self.pos..].chars().next()
    }

    /// Lexes inside an action until `}}`; false after an error.
    fn action(&mut self) -> bool {
        loop {
            if let Some(trim) = self.at_right() {
                if self.paren != 0 {
                    self.error("unclosed left paren".into());
                    return false;
                }
                let p = self.pos + if trim { 2 } else { 0 };
                let line = self.line;
                self.pos = p + 2;
                self.push(Tok::Right, p, line);
                if trim {
                    let rest = &self.input[self.pos..];
                    let skipped = rest.len() - rest.trim_start_matches(is_space).len();
                    self.line += rest[..skipped].matches('\n').count();
                    self.pos += skipped;
                }
                return true;
            }
            let start = self.pos;
            let line = self.line;
            let Some(c) = self.peek() else {
                self.error("unclosed action".into());
                return false;
            };
            if is_space(c) {
                // A run of spaces, stopping before a " -}}" trim marker.
                let mut n = 0;
                while let Some(c) = self.peek() {
                    if !is_space(c) {
                        break;
                    }
                    if self.input[self.pos..].starts_with(|c: char| is_space(c))
                        && has_right_trim(&self.input[self.pos..])
                        && self.input[self.pos + 2..].starts_with("}}")
                    {
                        break;
                    }
                    self.pos += c.len_utf8();
                    n += 1;
                }
                self.line += self.input[start..self.pos].matches('\n').count();
                if n > 0 {
                    self.push(Tok::Space, start, line);
                }
                continue;
            }
            self.pos += c.len_utf8();
            let tok = match c {
                '=' => Tok::Assign,
                ':' => {
                    if self.peek() != Some('=') {
                        self.error("expected :=".into());
                        return false;
                    }
                    self.pos += 1;
                    Tok::Declare
                }
                '|' => Tok::Pipe,
                '"' => match self.quote(start) {
                    Some(s) => Tok::Str(s),
                    None => return false,
                },
                '`' => match self.input[self.pos..].find('`') {
                    Some(x) => {
                        self.pos += x + 1;
                        let s = &self.input[start..self.pos];
                        self.line += s.matches('\n').count();
                        Tok::RawStr(s.to_string())
                    }
                    None => {
                        self.error("unterminated raw quoted string".into());
                        return false;
                    }
                },
                '$' => {
                    self.scan_ident();
                    if !self.check_term_end() {
                        return false;
                    }
                    Tok::Variable(self.input[start..self.pos].to_string())
                }
                '\'' => match self.char_const(start) {
                    Some(s) => Tok::CharConst(s),
                    None => return false,
                },
                '.' if !matches!(self.peek(), Some('0'..='9')) => {
                    if !self.peek().is_some_and(is_alnum) {
                        if !self.check_term_end() {
                            return false;
                        }
                        Tok::Dot
                    } else {
                        self.scan_ident();
                        if !self.check_term_end() {
                            return false;
                        }
                        Tok::Field(self.input[start + 1..self.pos].to_string())
                    }
                }
                '.' | '+' | '-' | '0'..='9' => {
                    self.pos = start;
                    match self.number() {
                        Some(s) => Tok::Number(s),
                        None => return false,
                    }
                }
                '(' => {
                    self.paren += 1;
                    Tok::LParen
                }
                ')' => {
                    self.paren -= 1;
                    if self.paren < 0 {
                        self.error("unexpected right paren".into());
                        return false;
                    }
                    Tok::RParen
                }
                c if is_alnum(c) => {
                    self.scan_ident();
                    if !self.check_term_end() {
                        return false;
                    }
                    let w = &self.input[start..self.pos];
                    if let Some(k) = KEYWORDS.iter().find(|k| **k == w) {
                        Tok::Keyword(k)
                    } else if w == "true" || w == "false" {
                        Tok::Bool(w == "true")
                    } else if w == "nil" {
                        Tok::Nil
                    } else {
                        Tok::Ident(w.to_string())
                    }
                }
                c if c.is_ascii() && !c.is_ascii_control() => Tok::Char(c),
                c => {
                    self.error(format!(
                        "unrecognized character in action: {}",
                        crate::template::printf::unicode_sharp_u(c)
                    ));
                    return false;
                }
            };
            self.push(tok, start, line);
        }
    }

    fn scan_ident(&mut self) {
        while let Some(c) = self.peek() {
            if !is_alnum(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
    }

    /// Go requires a field/identifier to be followed by a space, a delimiter,
    /// `.`, `,`, `|`, `:`, `)` or `(`.
    fn check_term_end(&mut self) -> bool {
        let Some(c) = self.peek() else { return true };
        if is_space(c) || matches!(c, '.' | ',' | '|' | ':' | ')' | '(') {
            return true;
        }
        if self.input[self.pos..].starts_with("}}") {
            return true;
        }
        self.error(format!(
            "bad character {}",
            crate::template::printf::unicode_sharp_u(c)
        ));
        false
    }

    fn quote(&mut self, start: usize) -> Option<String> {
        loop {
            match self.peek() {
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') | None => {
                            self.error("unterminated quoted string".into());
                            return None;
                        }
                        Some(c) => self.pos += c.len_utf8(),
                    }
                }
                Some('\n') | None => {
                    self.error("unterminated quoted string".into());
                    return None;
                }
                Some('"') => {
                    self.pos += 1;
                    return Some(self.input[start..self.pos].to_string());
                }
                Some(c) => self.pos += c.len_utf8(),
            }
        }
    }

    fn char_const(&mut self, start: usize) -> Option<String> {
        loop {
            match self.peek() {
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') | None => {
                            self.error("unterminated character constant".into());
                            return None;
                        }
                        Some(c) => self.pos += c.len_utf8(),
                    }
                }
                Some('\n') | None => {
                    self.error("unterminated character constant".into());
                    return None;
                }
                Some('\'') => {
                    self.pos += 1;
                    return Some(self.input[start..self.pos].to_string());
                }
                Some(c) => self.pos += c.len_utf8(),
            }
        }
    }

    fn number(&mut self) -> Option<String> {
        let start = self.pos;
        let b = self.input.as_bytes();
        let mut i = self.pos;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let mut digits: &[u8] = b"0123456789_";
        let mut exp: &[u8] = b"eE";
        if i + 1 < b.len() && b[i] == b'0' {
            match b[i + 1] {
                b'x' | b'X' => {
                    i += 2;
                    digits = b"0123456789abcdefABCDEF_";
                    exp = b"pP";
                }
                b'o' | b'O' => {
                    i += 2;
                    digits = b"01234567_";
                    exp = b"";
                }
                b'b' | b'B' => {
                    i += 2;
                    digits = b"01_";
                    exp = b"";
                }
                _ => {}
            }
        }
        while i < b.len() && digits.contains(&b[i]) {
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            while i < b.len() && digits.contains(&b[i]) {
                i += 1;
            }
        }
        if !exp.is_empty() && i < b.len() && exp.contains(&b[i]) {
            i += 1;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                i += 1;
            }
            while i < b.len() && b[i].is_ascii_digit() || (i < b.len() && b[i] == b'_') {
                i += 1;
            }
        }
        if i < b.len() && b[i] == b'i' {
            i += 1;
        }
        self.pos = i;
        // A sign right after a number starts a complex constant (`1+2i`),
        // which must end in `i`.
        if matches!(self.peek(), Some('+' | '-')) {
            let b = self.input.as_bytes();
            let mut j = self.pos + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'.' | b'_')) {
                j += 1;
            }
            let text = &self.input[start..j];
            self.pos = j;
            let msg = if text.ends_with('i') {
                "complex constants are not supported".to_string()
            } else {
                format!("bad number syntax: {text:?}")
            };
            self.error(msg);
            return None;
        }
        if let Some(c) = self.peek()
            && is_alnum(c)
        {
            self.pos += c.len_utf8();
            self.error(format!(
                "bad number syntax: {:?}",
                &self.input[start..self.pos]
            ));
            return None;
        }
        Some(self.input[start..self.pos].to_string())
    }
}
