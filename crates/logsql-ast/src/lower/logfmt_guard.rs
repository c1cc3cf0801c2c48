//! The suspect filter of the logfmt parser pushdown: the rows on which
//! VictoriaLogs' `unpack_logfmt` might give a needed label another value than
//! Loki's `| logfmt` does, so that the pushed-down answer is used only when it
//! flags none.
//!
//! The two tokenizers (Loki 3.7 `pkg/logql/log/logfmt/decode.go` with
//! `LogfmtParser.Process`; VictoriaLogs `lib/logstorage/logfmt_parser.go`)
//! agree on a line made of `key=value`, `key="value"`, `key=` and bare `key`
//! tokens separated by spaces. They part ways on:
//!
//! * separators: Loki splits on every byte up to `' '` (tabs, newlines,
//!   every control character), VictoriaLogs on `' '` only;
//! * quoted values: Loki scans to the next unescaped `"` and unescapes like
//!   JSON (`\'` and `\/` allowed, `\x41` refused); VictoriaLogs unquotes like
//!   Go (`\x41` allowed, `\'` refused, a newline refused), also opens `'…'`
//!   and `` `…` `` values, stops parsing the line when a closing quote is not
//!   followed by a space, and reads an unterminated quote as an unquoted
//!   value, where Loki stops;
//! * a `"` in a key makes Loki skip the token to the next whitespace, while
//!   VictoriaLogs still opens a quoted value after its `=`; so does an empty
//!   key (`="…"` at a token start);
//! * an unquoted value holding `=` or `"`: Loki drops the pair, VictoriaLogs
//!   keeps the value;
//! * keys: Loki sanitizes (every character outside `[A-Za-z0-9_]` becomes
//!   `_`), VictoriaLogs matches the key as written; both trim Unicode spaces;
//! * repeated keys: Loki keeps the first non-empty value, VictoriaLogs
//!   the last one;
//! * values with U+FFFD (or invalid UTF-8): Loki blanks those characters.
//!
//! The filter is the disjunction of one test per difference; see
//! [`logfmt_suspect`] for why, once none holds, both parsers give every
//! needed label the same value.

use super::cheap_class::{last_outside, run_outside};
use crate::filter::Filter;

/// LogsQL's field holding the line.
const MSG: &str = "_msg";

/// One separator character of a key that Loki sanitizes onto `_` but that
/// VictoriaLogs keeps: anything but an ASCII letter, digit or `_`, and not a
/// character that ends or spoils a key in both (`=`, space, `"`).
const ALIAS_SEP: &str = r#"[^0-9A-Za-z_= "]"#;
/// As [`ALIAS_SEP`], `_` included.
const ANY_SEP: &str = r#"[^0-9A-Za-z= "]"#;

/// The Unicode spaces Go's `strings.TrimSpace` (which both parsers apply to
/// keys) trims beyond ASCII, which separate neither parser's tokens.
const UNICODE_SPACE: &str =
    r"[\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]";

/// The rows where VictoriaLogs' `unpack_logfmt fields (names) result_prefix
/// parsed_prefix` (each name then copied to its own field with
/// `keep_original_fields`) might give some name another value than Loki's
/// `| logfmt` with its parser hints.
///
/// `names` are the labels the query needs, already checked to be label
/// names Loki extracts under their own name (none starts with `_`, ends with
/// `_extracted` or holds `__`). A stored field of the same name wins in both
/// systems, so only the parsed values are compared. The filter is
/// conservative: it also flags some rows that parse alike. It is built from
/// phrases, `seq` and short fields; the only regexes over the line are a
/// single character class and ones anchored on a literal, and the costly
/// quote regexes run only on lines with three quotes or more.
///
/// Terms about the whole line:
///
/// 1. `_msg:~"[\x00-\x1f\\\x{FFFD}]"`, one pass over the line for three
///    characters:
///    * a control character, which Loki takes as a separator and
///      VictoriaLogs as part of a key or value (and a newline inside quotes
///      makes VictoriaLogs refuse the quoted value);
///    * a backslash, the only way escapes (which the two unquote
///      differently) or an escaped quote (which moves where a quoted value
///      ends) can appear;
///    * U+FFFD, which Loki blanks in values and for which it skips a key up
///      to the next whitespace (even inside the quotes VictoriaLogs then
///      opens); VictoriaLogs keeps it. Go's `regexp` reads each byte of
///      invalid UTF-8 as U+FFFD, so the class also catches those (a
///      phrase would not).
/// 2. `_msg:"='"`, ``_msg:"=`"``: VictoriaLogs unquotes `'…'` and `` `…` ``
///    values, Loki reads them as plain text.
///
/// Without 1–2, both cut the line at spaces, and a `"` opens a quoted value
/// only right after the first `=` of a token (`="`), in both, unless the key
/// before holds a `"` or is empty (Loki then skips to the next space, which
/// may be inside the quotes VictoriaLogs reads). The quoted value ends at the
/// next `"` in both; VictoriaLogs stops parsing when that quote is not
/// followed by a space or the end, and Loki stops when there is none. All of
/// that can only change a name's value when a `"` comes before the name's
/// key, so term 3 is `seq("\"", n)` for some needed `n`, a `="`
/// (`_msg:"=\""`: nothing is quoted without one), and one of:
///
/// * `_msg:" =\""`, `_msg:="=\""*`: an empty key opening a quote;
/// * at most two quotes (`!seq("\"","\"","\"")`) where the second follows a
///   `=` (`seq("\"","=\"")`: a key quote or a closing quote glued to a
///   value, or a second value never closed), or is missing or followed by
///   neither a space (`seq("\"","\" ")`) nor the end (`_msg:~"\"$"`);
///   otherwise the first opens the value the second closes, or the only
///   quote opens a value at the end of the line, which changes nothing;
/// * three quotes or more and `_msg:~"=\"[^\"]*(\"[^ ]|$)"` (from some
///   `="`, the next quote is glued to what follows, or there is none) or
///   `_msg:~"\"[^ =\"]*=\""` (a `"` in a key whose value opens a quote: the
///   key's last `"` is followed by neither a space, a `=` nor a `"` up to
///   the `="`).
///
/// VictoriaLogs runs a regex with a literal prefix by trying the rest of the
/// regex, anchored, at every occurrence of the prefix. So each of these
/// regexes stops at the next quote (`[^ =]*` instead of `[^ ="]*` cost 28 s
/// over 121k JSON lines, each with dozens of quotes and no space: quadratic
/// in a line's quotes), and all run only on lines with a `="` (even linear,
/// the one starting at every quote cost 2 s on those JSON lines). Both are
/// sent with `K` left out of their classes (`super::cheap_class`): the plain
/// classes cost VictoriaLogs 87 ms of parsing per request, before any row.
///
/// Without 1–3 the tokens up to each needed name's key are the same bytes in
/// both, with the same values, except that Loki drops a token whose key
/// holds `"` (no name equals such a key) or whose unquoted value holds `=` or
/// `"`. Terms per name `n`:
///
/// 4. A repeated key: `_msg:seq("n","n")` and either a Unicode space
///    (`UNICODE_SPACE`) or `seq("n=","n")` with, after that `n=`, another
///    ` n=`, a bare ` n ` or ` n` ending the line (`seq("n="," n=")`,
///    `seq("n="," n ")`, `_msg:~" n$"`). Loki keeps the first
///    non-empty value, VictoriaLogs the last one (its `unpack` adds every
///    pair and the last column of a name wins), so they differ only when a
///    non-empty value comes before another occurrence of the key. Every key
///    that is `n` once both have trimmed Unicode spaces is the word `n`, and
///    one with a value is `n=` unless a Unicode space stands between. Without
///    terms 1–3 a later key starts after a space or a Unicode space, and is
///    followed by `=`, a space, the end or a Unicode space. The word `n`
///    elsewhere (in a message, `msg="job done" job=etl`, or in a value,
///    `service=payment-service`) is not flagged.
/// 5. `parsed_prefix + n` holding `=` or `"`: the value Loki drops when it
///    is unquoted (quoted ones are flagged too, conservatively); an opening
///    quote of `n`'s own value that never closes leaves VictoriaLogs a value
///    starting with `"`.
/// 6. For a name with `_`, `_msg:~"<n with one _ as another character>"`
///    (`duration.ms`, `duration-ms`, `durationÄms` for `duration_ms`): a key
///    Loki sanitizes onto `n` and VictoriaLogs does not. Without `_` in `n`
///    only `n` itself sanitizes onto `n`: sanitizing maps each character to
///    one, keeping letters and digits, and names start with neither `_` nor
///    a digit, so Loki's leading `_` for a digit cannot produce one.
///
/// Then the only key that is `n` in either parser occurs once, as `n` in
/// both, with the same value: VictoriaLogs' value, and Loki's unless it is
/// empty, where Loki sets nothing and VictoriaLogs an empty field, which
/// label filters, `by (…)` and `unwrap` treat alike.
pub fn logfmt_suspect(names: &[String], parsed_prefix: &str) -> Filter {
    let mut terms = vec![
        regex(MSG, r"[\x00-\x1f\\\x{FFFD}]"),
        phrase(MSG, "='"),
        phrase(MSG, "=`"),
    ];
    let quote_before = Filter::or(names.iter().map(|n| seq(&["\"", n.as_str()])));
    terms.push(Filter::and([quote_before, quote_desync()]));
    for n in names {
        let key = format!("{n}=");
        // `seq(n=, n)` implies `seq(n, n)`: one pass over a line naming `n`
        // once.
        terms.push(Filter::and([
            seq(&[n.as_str(), n.as_str()]),
            Filter::or([
                Filter::and([
                    seq(&[&key, n]),
                    Filter::or([
                        seq(&[&key, &format!(" {key}")]),
                        seq(&[&key, &format!(" {n} ")]),
                        regex(MSG, &format!(" {}$", regex_escape(n))),
                    ]),
                ]),
                regex(MSG, UNICODE_SPACE),
            ]),
        ]));
        let parsed = format!("{parsed_prefix}{n}");
        terms.push(phrase(&parsed, "="));
        terms.push(phrase(&parsed, "\""));
        if let Some(re) = alias_regex(n) {
            terms.push(regex(MSG, &re));
        }
    }
    Filter::or(terms)
}

/// Term 3 of [`logfmt_suspect`] but its `seq("\"", n)`: the line's quotes may
/// put the two parsers at different places.
fn quote_desync() -> Filter {
    let quotes = |k: usize| seq(&vec!["\""; k]);
    // Every case below has a `="`; testing it first spares the other passes
    // on lines without one (JSON, most plain text).
    Filter::and([
        phrase(MSG, "=\""),
        Filter::or([
            phrase(MSG, " =\""),
            Filter::ExactPrefix {
                field: MSG.to_owned(),
                prefix: "=\"".to_owned(),
            },
            Filter::and([
                Filter::not(quotes(3)),
                Filter::or([
                    seq(&["\"", "=\""]),
                    Filter::and([
                        Filter::not(seq(&["\"", "\" "])),
                        Filter::not(regex(MSG, "\"$")),
                    ]),
                ]),
            ]),
            Filter::and([
                quotes(3),
                Filter::or([
                    // `="[^"]*("[^ ]|$)` and `"[^ ="]*="`, in classes
                    // VictoriaLogs parses cheaply.
                    regex(
                        MSG,
                        &format!(r#"="{}(?:"{}|$)"#, run_outside("\""), last_outside(" ")),
                    ),
                    regex(MSG, &format!(r#""{}=""#, run_outside(" =\""))),
                ]),
            ]),
        ]),
    ])
}

/// A regex matching the keys other than `n` that Loki sanitizes onto `n`
/// (one `_` of `n` written as another character, the others as anything
/// sanitized to `_`), or `None` when `n` has no `_`.
fn alias_regex(n: &str) -> Option<String> {
    let parts: Vec<&str> = n.split('_').collect();
    if parts.len() < 2 {
        return None;
    }
    let mut alts = Vec::with_capacity(parts.len() - 1);
    for odd in 1..parts.len() {
        let mut alt = String::new();
        for (i, part) in parts.iter().enumerate().skip(1) {
            alt.push_str(match i.cmp(&odd) {
                std::cmp::Ordering::Less => "_",
                std::cmp::Ordering::Equal => ALIAS_SEP,
                std::cmp::Ordering::Greater => ANY_SEP,
            });
            alt.push_str(&regex_escape(part));
        }
        alts.push(alt);
    }
    let head = regex_escape(parts[0]);
    Some(if alts.len() == 1 {
        format!("{head}{}", alts[0])
    } else {
        format!("{head}(?:{})", alts.join("|"))
    })
}

/// Names are ASCII letters, digits and `_`, none special in a regex; any
/// other character is escaped all the same.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !c.is_ascii_alphanumeric() && c != '_' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn phrase(field: &str, phrase: &str) -> Filter {
    Filter::Phrase {
        field: field.to_owned(),
        phrase: phrase.to_owned(),
    }
}

fn seq(phrases: &[&str]) -> Filter {
    Filter::Seq {
        field: MSG.to_owned(),
        phrases: phrases.iter().map(|p| (*p).to_owned()).collect(),
    }
}

fn regex(field: &str, regex: &str) -> Filter {
    Filter::Regex {
        field: field.to_owned(),
        regex: regex.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "__lokivl_parsed.";

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|n| (*n).to_owned()).collect()
    }

    /// The line terms, and term 3 up to its `seq("\"", n)`.
    const LINE: &str = r#"_msg:~"[\\x00-\\x1f\\\\\\x{FFFD}]" or _msg:"='" or _msg:"=`" or "#;
    const DESYNC: &str = concat!(
        r#"_msg:"=\"" and (_msg:" =\"" or _msg:="=\""* or "#,
        r#"(!_msg:seq("\"","\"","\"") and (_msg:seq("\"","=\"") or "#,
        r#"(!_msg:seq("\"","\" ") and !_msg:~"\"$"))) or "#,
        r#"(_msg:seq("\"","\"","\"") and (_msg:~"=\"[^\"K]*(?:K[^\"K]*)*(?:\"(?:[^ K]|K+)|$)" or "#,
        r#"_msg:~"\"[^ =\"K]*(?:K[^ =\"K]*)*=\"")))"#,
    );
    const SPACES: &str = r#"_msg:~"[\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]""#;

    /// Terms 4 and 5 of `n`.
    fn per_name(n: &str) -> String {
        format!(
            concat!(
                r#"(_msg:seq("{n}","{n}") and ((_msg:seq("{n}=","{n}") and (_msg:seq("{n}="," {n}=") or "#,
                r#"_msg:seq("{n}="," {n} ") or _msg:~" {n}$")) or {spaces})) or "#,
                r#""__lokivl_parsed.{n}":"=" or "__lokivl_parsed.{n}":"\"""#
            ),
            n = n,
            spaces = SPACES
        )
    }

    #[test]
    fn prints_the_line_terms_and_the_terms_of_a_plain_name() {
        let f = logfmt_suspect(&names(&["level"]), P);
        assert_eq!(
            f.to_string(),
            format!(
                r#"{LINE}(_msg:seq("\"","level") and {DESYNC}) or {}"#,
                per_name("level")
            )
        );
    }

    #[test]
    fn a_name_with_underscores_also_refuses_its_aliases() {
        let f = logfmt_suspect(&names(&["duration_ms", "status"]), P);
        assert_eq!(
            f.to_string(),
            format!(
                concat!(
                    r#"{}((_msg:seq("\"","duration_ms") or _msg:seq("\"","status")) and {}) or "#,
                    r#"{} or _msg:~"duration[^0-9A-Za-z_= \"]ms" or {}"#
                ),
                LINE,
                DESYNC,
                per_name("duration_ms"),
                per_name("status")
            )
        );
    }

    #[test]
    fn alias_regex_puts_one_foreign_separator_in_each_alternative() {
        assert_eq!(alias_regex("level"), None);
        assert_eq!(
            alias_regex("a_b_c").as_deref(),
            Some(r#"a(?:[^0-9A-Za-z_= "]b[^0-9A-Za-z= "]c|_b[^0-9A-Za-z_= "]c)"#)
        );
        assert_eq!(
            alias_regex("foo_").as_deref(),
            Some(r#"foo[^0-9A-Za-z_= "]"#)
        );
    }

    /// The alias regex (the same RE2 dialect in Rust's `regex` as in Go's
    /// `regexp` for these classes) accepts the aliases and refuses the name
    /// itself and neighbouring keys.
    #[test]
    fn alias_regex_matches_aliases_only() {
        let re = regex::Regex::new(&alias_regex("trace_id").unwrap()).unwrap();
        for alias in [
            "trace.id=1",
            "a trace-id=1",
            "traceÄid=1",
            "trace\u{a0}id=1",
        ] {
            assert!(re.is_match(alias), "{alias}");
        }
        for other in [
            "trace_id=1",
            "trace=id",
            "trace id=1",
            "traceid=1",
            "trace\"id=1",
        ] {
            assert!(!re.is_match(other), "{other}");
        }
        let re = regex::Regex::new(&alias_regex("a_b_c").unwrap()).unwrap();
        for alias in ["a.b_c", "a_b.c", "a.b.c", "a-b-c"] {
            assert!(re.is_match(alias), "{alias}");
        }
        assert!(!re.is_match("a_b_c=1"));
    }

    /// The quote-structure regexes flag what they are meant to and leave a
    /// well-formed line alone.
    #[test]
    fn quote_regexes_flag_desynchronising_quotes() {
        let unbalanced = format!(r#"="{}(?:"{}|$)"#, run_outside("\""), last_outside(" "));
        let unbalanced = regex::Regex::new(&unbalanced).unwrap();
        let key_quote = regex::Regex::new(&format!(r#""{}=""#, run_outside(" =\""))).unwrap();
        let clean = r#"level=info msg="job completed" empty="" job=etl"#;
        assert!(!unbalanced.is_match(clean) && !key_quote.is_match(clean));
        for glued in [r#"a="x"level=e"#, r#"a="x y="z w""#, r#"msg="open level=e"#] {
            assert!(unbalanced.is_match(glued), "{glued}");
        }
        for quoted_key in [
            r#"a"b="c level=e d""#,
            r#""a="x level=e y""#,
            r#"a"b"c="x y""#,
        ] {
            assert!(key_quote.is_match(quoted_key), "{quoted_key}");
        }
    }
}
