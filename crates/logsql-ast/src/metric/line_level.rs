//! Loki's `detected_level` of a line, computed by VictoriaLogs.
//!
//! Loki's distributor derives the level of an entry without a level label or
//! metadata from its line (grafana/loki `pkg/distributor/field_detection.go`):
//! a JSON line (first and last non-space characters `{` and `}`) gives the
//! first string member named like a level field, depth first; another line
//! with `=` gives the logfmt level key (by the fields' priority, keys compared
//! ASCII-case-insensitively); a value that is a known spelling is normalized,
//! anything else (or no value) falls back to the earliest level word of the
//! line between word boundaries, else `unknown`.
//!
//! [`pipes`] writes that rule as LogsQL pipes setting [`LEVEL_FIELD`] on every
//! entry the caller's `unleveled` filter selects. Where LogsQL can decide the
//! rule exactly the field is the level: the earliest bounded level word is
//! the leftmost match of one regex; a JSON or logfmt line that does not even
//! contain a level key name has no level key; a JSON line whose first level
//! key is a top-level member (no `{` or `[` before it, no escaped ASCII in the
//! line, the line parses as JSON in VictoriaLogs) or a logfmt line whose
//! level key follows plain `key=value` pairs (and no other level key name
//! appears) has its value found by one regex. Every other entry gets
//! [`RESIDUE`]: its level is derived by the proxy from its row
//! ([`residue_filter`]). The classes are conservative: a line is classified
//! only when every line of the class provably gets Loki's level.

use std::fmt::Write;

use crate::filter::Filter;
use crate::quote::{quote, write_field};

/// The field the pipes set: a level, or [`RESIDUE`].
pub const LEVEL_FIELD: &str = "__lokivl_ll";
/// The [`LEVEL_FIELD`] value of entries whose level the proxy derives.
pub const RESIDUE: &str = "residue";

const WORD: &str = "__lokivl_lw";
const JSON_KEY: &str = "__lokivl_jk";
const JSON_VALUE: &str = "__lokivl_jv";
const JSON_PREFIX: &str = "__lokivl_j_";
const LOGFMT_KEY: &str = "__lokivl_lk";
const LOGFMT_VALUE: &str = "__lokivl_lv";
const VALUE: &str = "__lokivl_lvv";

/// Rust's `char::is_whitespace` (Unicode `White_Space`), as RE2 class items:
/// what `str::trim` removes before the JSON test.
const SPACE: &str = r"\t\n\x0b\x0c\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}";
/// JSON's insignificant whitespace.
const JSON_SPACE: &str = r"[ \t\n\r]*";

/// Loki's level words, in its order, with their level.
const WORDS: &[(&str, &str)] = &[
    ("trace", "trace"),
    ("debug", "debug"),
    ("fatal", "fatal"),
    ("critical", "critical"),
    ("error", "error"),
    ("err", "error"),
    ("warning", "warn"),
    ("warn", "warn"),
    ("info", "info"),
];

/// Loki's known spellings of a level value, per level.
const SPELLINGS: &[(&[&str], &str)] = &[
    (&["trace", "trc"], "trace"),
    (&["debug", "dbg"], "debug"),
    (&["info", "inf", "information"], "info"),
    (&["warn", "wrn", "warning"], "warn"),
    (&["error", "err"], "error"),
    (&["critical"], "critical"),
    (&["fatal"], "fatal"),
];

/// `word` matching ASCII-case-insensitively (`[eE][rR][rR]`): RE2's `(?i)`
/// folds Unicode too, Loki's comparisons of level words do not.
fn ci(word: &str) -> String {
    let mut out = String::with_capacity(word.len() * 4);
    for c in word.chars() {
        if c.is_ascii_alphabetic() {
            let _ = write!(out, "[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase());
        } else {
            out.push_str(&crate::quote::quote_meta(&c.to_string()));
        }
    }
    out
}

fn msg(regex: String) -> Filter {
    Filter::Regex {
        field: "_msg".into(),
        regex,
    }
}

fn field_re(field: &str, regex: String) -> Filter {
    Filter::Regex {
        field: field.into(),
        regex,
    }
}

/// `^(?:a|b)$`, each alternative ASCII-case-insensitive.
fn exactly_ci(words: &[&str]) -> String {
    let alts: Vec<String> = words.iter().map(|w| ci(w)).collect();
    format!("^(?:{})$", alts.join("|"))
}

/// The earliest level word between Loki's boundaries: the leftmost match
/// is the earliest word (the left boundary is the character before it).
fn word_regex() -> String {
    let words: Vec<String> = WORDS.iter().map(|(w, _)| ci(w)).collect();
    format!(
        r#"(?:^|[ \t\n\[({{"=])(?P<{WORD}>{})(?:$|[ \t\n\[\](){{}}:,!"=])"#,
        words.join("|")
    )
}

/// Rust's `is_json`: trimmed, the line starts with `{` and ends with `}`.
fn json_shape() -> Filter {
    Filter::and([
        msg(format!("^[{SPACE}]*\\{{")),
        msg(format!("\\}}[{SPACE}]*$")),
    ])
}

/// The first member of the top-level object named like a level field whose
/// value is a string, with nothing but plain members before it (a `{` or
/// `[` before it ends the match: the key could be nested).
fn json_regex(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| crate::quote::quote_meta(k)).collect();
    format!(
        r#"^[{SPACE}]*\{{(?:[^{{\[]*?,)??{JSON_SPACE}"(?P<{JSON_KEY}>{})"{JSON_SPACE}:{JSON_SPACE}"(?P<{JSON_VALUE}>(?:[^"\\]|\\.)*)""#,
        keys.join("|")
    )
}

/// The level names a JSON key must contain (case-sensitive, as Loki
/// compares JSON keys): every level field contains one.
const JSON_STEMS: &str = "level|LEVEL|Level|severity|SEVERITY|Severity|lvl|LVL|Lvl";

/// The logfmt level keys [`logfmt_regex`] finds.
const LOGFMT_KEYS: [&str; 3] = ["level", "severity", "lvl"];

/// The first logfmt key named `level`, `severity` or `lvl` (any case) after
/// nothing but `key=value` pairs of printable characters without quotes, and
/// its value up to the next space or tab.
fn logfmt_regex() -> String {
    let keys: Vec<String> = LOGFMT_KEYS.iter().map(|k| ci(k)).collect();
    let plain = r#"[!#-<>-~\x{80}-\x{10ffff}]"#;
    format!(
        r"^[ \t]*(?:{plain}+={plain}*[ \t]+)*?(?P<{LOGFMT_KEY}>{})=(?P<{LOGFMT_VALUE}>[^ \t]*)(?:[ \t]|$)",
        keys.join("|")
    )
}

/// `(?s)a.*a`: the (case-insensitive) name occurs twice.
fn twice(word: &str) -> String {
    let w = ci(word);
    format!("(?s){w}.*{w}")
}

/// The logfmt key found is the one Loki's priority picks: `level` is first
/// in priority; `severity` only when no key named like `level` can exist;
/// `lvl` only when neither can. And the name occurs once, so that no later
/// key of the same priority could be the one the parser keeps.
fn logfmt_valid() -> Filter {
    let key_is = |k: &str| field_re(LOGFMT_KEY, exactly_ci(&[k]));
    let none = |w: &str| Filter::not(msg(ci(w)));
    let once = |w: &str| Filter::not(msg(twice(w)));
    Filter::and([
        field_re(LOGFMT_VALUE, "^[A-Za-z]+$".into()),
        Filter::or([
            Filter::and([key_is("level"), once("level")]),
            Filter::and([key_is("severity"), none("level"), once("severity")]),
            Filter::and([
                key_is("lvl"),
                none("level"),
                none("severity"),
                once("lvl"),
            ]),
        ]),
    ])
}

/// The JSON key found is a top-level member of a line VictoriaLogs parses
/// as JSON (so the key is not inside a string), its value has no escape.
fn json_valid(keys: &[&str]) -> Filter {
    Filter::and([
        Filter::NonEmpty(JSON_KEY.into()),
        Filter::not(field_re(JSON_VALUE, r"\\".into())),
        Filter::or(keys.iter().map(|k| {
            Filter::and([
                Filter::Exact {
                    field: JSON_KEY.into(),
                    value: (*k).into(),
                },
                Filter::NonEmpty(format!("{JSON_PREFIX}{k}")),
            ])
        })),
    ])
}

/// A `\u` escape of a character that may be part of a key name: keys are
/// compared unescaped, so the line's text does not show them.
const ASCII_ESCAPE: &str = r"\\u00(?:2[eE]|[3-7][0-9a-fA-F])";

/// The entries of `unleveled` whose level the pipes cannot decide.
fn residue(unleveled: &Filter, keys: &[&str]) -> Filter {
    Filter::and([
        unleveled.clone(),
        Filter::or([
            Filter::and([
                json_shape(),
                Filter::or([
                    msg(ASCII_ESCAPE.into()),
                    Filter::and([msg(JSON_STEMS.into()), Filter::not(json_valid(keys))]),
                ]),
            ]),
            Filter::and([
                Filter::not(json_shape()),
                msg("=".into()),
                msg(LOGFMT_KEYS
                    .iter()
                    .map(|k| ci(k))
                    .collect::<Vec<_>>()
                    .join("|")),
                Filter::not(logfmt_valid()),
            ]),
        ]),
    ])
}

fn format_if(out: &mut String, cond: &Filter, template: &str, field: &str) {
    let _ = write!(out, " | format if ({cond}) {} as ", quote(template));
    let _ = write_field(out, field);
}

fn extract_if(out: &mut String, cond: &Filter, regex: &str) {
    let _ = write!(out, " | extract_regexp if ({cond}) {} from _msg", quote(regex));
}

/// The pipes setting [`LEVEL_FIELD`] on the entries `unleveled` selects (those
/// without a level label or metadata, whose level is in the line), each
/// starting with ` | `. `keys` are Loki's `log_level_fields`.
pub fn pipes(unleveled: &Filter, keys: &[&str]) -> String {
    let mut out = String::with_capacity(4096);
    extract_if(&mut out, unleveled, &word_regex());
    let json = Filter::and([unleveled.clone(), json_shape(), msg(JSON_STEMS.into())]);
    extract_if(&mut out, &json, &json_regex(keys));
    let _ = write!(
        out,
        " | unpack_json if ({}) from _msg fields (",
        Filter::NonEmpty(JSON_KEY.into())
    );
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write_field(&mut out, k);
    }
    let _ = write!(out, ") result_prefix {}", quote(JSON_PREFIX));
    let logfmt = Filter::and([
        unleveled.clone(),
        Filter::not(json_shape()),
        msg("=".into()),
    ]);
    extract_if(&mut out, &logfmt, &logfmt_regex());
    format_if(&mut out, unleveled, "unknown", LEVEL_FIELD);
    for (word, level) in WORDS {
        let cond = field_re(WORD, exactly_ci(&[word]));
        format_if(&mut out, &cond, level, LEVEL_FIELD);
    }
    let value = |f: &str| format!("<{f}>");
    format_if(&mut out, &json_valid(keys), &value(JSON_VALUE), VALUE);
    format_if(&mut out, &logfmt_valid(), &value(LOGFMT_VALUE), VALUE);
    for (spellings, level) in SPELLINGS {
        let cond = field_re(VALUE, exactly_ci(spellings));
        format_if(&mut out, &cond, level, LEVEL_FIELD);
    }
    format_if(&mut out, &residue(unleveled, keys), RESIDUE, LEVEL_FIELD);
    out
}

/// The entries [`pipes`] left to the proxy.
pub fn residue_filter() -> Filter {
    Filter::Exact {
        field: LEVEL_FIELD.into(),
        value: RESIDUE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_insensitive_words_are_ascii_classes() {
        assert_eq!(ci("err"), "[eE][rR][rR]");
        assert_eq!(ci("log.level"), r"[lL][oO][gG]\.[lL][eE][vV][eE][lL]");
        assert_eq!(exactly_ci(&["inf", "info"]), "^(?:[iI][nN][fF]|[iI][nN][fF][oO])$");
    }

    #[test]
    fn pipes_set_the_level_field_last() {
        let p = pipes(&Filter::Empty("level".into()), &["level", "log.level"]);
        assert!(p.starts_with(" | extract_regexp if (\"level\":\"\") "), "{p}");
        assert!(p.contains(r#"fields ("level", "log.level") result_prefix "__lokivl_j_""#));
        assert!(p.ends_with(r#""residue" as "__lokivl_ll""#), "{p}");
    }
}
#[cfg(test)]
mod print {
    #[test]
    fn print_pipes() {
        let f = crate::Filter::not(crate::Filter::or(["detected_level","level","lvl"].iter().map(|f| crate::Filter::NonEmpty((*f).into()))));
        println!("PIPES{}", super::pipes(&f, &["level","LEVEL","Level","log.level","severity","SEVERITY","Severity","SeverityText","lvl","LVL","Lvl","severity_text","Severity_Text","SEVERITY_TEXT"]));
    }
}
