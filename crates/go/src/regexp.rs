//! Go's `regexp` (Go 1.26, RE2 syntax) where lokivl must answer as Go does:
//! [`check`] refuses what `regexp/syntax` refuses, worded as Go words it
//! (`error parsing regexp: <what>: `<text>``), and [`quote_meta`] is
//! `regexp.QuoteMeta`.
//!
//! Loki compiles every regex of a query (matchers, label filters, line
//! filters) while parsing and answers 400 with that text. The check parses
//! with `regex-syntax` (no compilation) and adds the RE2 rules Rust's syntax
//! lacks (nested repetition, counts above 1000). Rust-only restrictions on
//! syntax RE2 accepts (`\Q…\E`, `a{,5}` as a literal) are not reported.

use regex_syntax::ast::{self, Ast, ErrorKind, RepetitionKind, RepetitionRange};

/// RE2's largest repetition count.
const MAX_REPEAT: u32 = 1000;

/// The first group name `re` repeats (Go accepts it; Loki's `regexp`
/// parser then refuses it).
pub fn duplicate_group_name(re: &str) -> Option<&str> {
    match ast::parse::Parser::new().parse(re) {
        Err(e) if matches!(e.kind(), ErrorKind::GroupNameDuplicate { .. }) => {
            re.get(e.span().start.offset..e.span().end.offset)
        }
        _ => None,
    }
}

/// `Err` with Go's message when RE2 rejects `re`.
pub fn check(re: &str) -> Result<(), String> {
    let ast = match ast::parse::Parser::new().parse(re) {
        Ok(ast) => ast,
        Err(e) => return parse_error(re, &e),
    };
    if let Some(msg) = repetition_error(re, &ast) {
        return Err(msg);
    }
    if let Err(e) = regex_syntax::hir::translate::Translator::new().translate(re, &ast) {
        use regex_syntax::hir::ErrorKind as H;
        if matches!(
            e.kind(),
            H::UnicodePropertyNotFound | H::UnicodePropertyValueNotFound
        ) {
            return Err(go("invalid character class range", span(re, e.span())));
        }
    }
    Ok(())
}

fn go(what: &str, text: &str) -> String {
    format!("error parsing regexp: {what}: `{text}`")
}

fn span<'a>(re: &'a str, s: &ast::Span) -> &'a str {
    re.get(s.start.offset..s.end.offset).unwrap_or_default()
}

fn parse_error(re: &str, e: &ast::Error) -> Result<(), String> {
    let at = e.span().start.offset;
    let text = span(re, e.span());
    let (what, text) = match e.kind() {
        ErrorKind::GroupUnclosed => ("missing closing )", re),
        ErrorKind::GroupUnopened => ("unexpected )", re),
        ErrorKind::ClassUnclosed => ("missing closing ]", re.get(at..).unwrap_or_default()),
        ErrorKind::ClassRangeInvalid => ("invalid character class range", text),
        // RE2 has `\Q…\E` quoting; Rust does not.
        ErrorKind::EscapeUnrecognized if text == r"\Q" => return Ok(()),
        ErrorKind::EscapeUnrecognized | ErrorKind::UnsupportedBackreference => {
            ("invalid escape sequence", text)
        }
        ErrorKind::RepetitionMissing => {
            // The span is empty, at the operator.
            let op = re.get(at..).and_then(|r| r.chars().next()).unwrap_or('*');
            let op = &re[at..at + op.len_utf8().min(re.len() - at)];
            ("missing argument to repetition operator", op)
        }
        ErrorKind::RepetitionCountInvalid => ("invalid repeat count", text),
        ErrorKind::EscapeUnexpectedEof => ("trailing backslash at end of expression", ""),
        // RE2 reads a malformed `{…}` as literal text, and allows a group
        // name twice.
        ErrorKind::RepetitionCountUnclosed
        | ErrorKind::RepetitionCountDecimalEmpty
        | ErrorKind::GroupNameDuplicate { .. } => {
            return Ok(());
        }
        _ => ("invalid or unsupported Perl syntax", text),
    };
    Err(go(what, text))
}

/// Go's `regexp.QuoteMeta`: escapes every RE2 metacharacter of `s`, so the
/// result is a regex matching `s` literally.
pub fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// RE2 refuses a repetition of a repetition (`a**`, `x{2}{3}`) and counts
/// above 1000; Rust accepts both.
fn repetition_error(re: &str, a: &Ast) -> Option<String> {
    match a {
        Ast::Repetition(r) => {
            if let Ast::Repetition(inner) = r.ast.as_ref() {
                let text = re
                    .get(inner.op.span.start.offset..r.op.span.end.offset)
                    .unwrap_or_default();
                return Some(go("invalid nested repetition operator", text));
            }
            if let RepetitionKind::Range(range) = &r.op.kind {
                let too_big = match *range {
                    RepetitionRange::Exactly(n) | RepetitionRange::AtLeast(n) => n > MAX_REPEAT,
                    RepetitionRange::Bounded(m, n) => m > MAX_REPEAT || n > MAX_REPEAT,
                };
                if too_big {
                    return Some(go("invalid repeat count", span(re, &r.op.span)));
                }
            }
            repetition_error(re, &r.ast)
        }
        Ast::Group(g) => repetition_error(re, &g.ast),
        Ast::Alternation(x) => x.asts.iter().find_map(|a| repetition_error(re, a)),
        Ast::Concat(x) => x.asts.iter().find_map(|a| repetition_error(re, a)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{check, quote_meta};

    #[test]
    fn quote_meta_escapes_re2_metachars_only() {
        assert_eq!(quote_meta("[ERROR]"), r"\[ERROR\]");
        assert_eq!(
            quote_meta(r"a.b*c+d?(e)|f{1}^$\"),
            r"a\.b\*c\+d\?\(e\)\|f\{1\}\^\$\\"
        );
        assert_eq!(quote_meta("plain -_/:= text"), "plain -_/:= text");
        assert_eq!(quote_meta(""), "");
    }

    /// Texts Loki 3.7.8 answered for `{a="b"} |~ "<re>"` (after `stage '…' : `).
    #[test]
    fn words_errors_as_loki() {
        for (re, want) in [
            ("(", "missing closing ): `(`"),
            ("a(", "missing closing ): `a(`"),
            ("x)", "unexpected ): `x)`"),
            ("[a", "missing closing ]: `[a`"),
            (r"\q", r"invalid escape sequence: `\q`"),
            (r"\8", r"invalid escape sequence: `\8`"),
            (r"\Z", r"invalid escape sequence: `\Z`"),
            (r"\C", r"invalid escape sequence: `\C`"),
            ("*a", "missing argument to repetition operator: `*`"),
            ("[z-a]", "invalid character class range: `z-a`"),
            (r"\pX", r"invalid character class range: `\pX`"),
            ("a{2,1}", "invalid repeat count: `{2,1}`"),
            ("a{1001}", "invalid repeat count: `{1001}`"),
            ("a**", "invalid nested repetition operator: `**`"),
            ("a++", "invalid nested repetition operator: `++`"),
            ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
            ("error\\", "trailing backslash at end of expression: ``"),
        ] {
            assert_eq!(
                check(re),
                Err(format!("error parsing regexp: {want}")),
                "{re}"
            );
        }
    }

    /// Loki 3.7.8 accepted these.
    #[test]
    fn accepts_what_re2_accepts() {
        for re in [
            "(?P<n>a)", "(?<n>a)", r"\Q(\E", "(?i)a", r"\z", "a{1000}", "(a*)*", "a*?", "a{,5}",
            "prod|dev",
        ] {
            assert_eq!(check(re), Ok(()), "{re}");
        }
    }
}
