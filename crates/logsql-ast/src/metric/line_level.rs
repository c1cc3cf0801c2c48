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
const LOGFMT_KEY: &str = "__lokivl_lk";
const LOGFMT_VALUE: &str = "__lokivl_lv";
const VALUE: &str = "__lokivl_lvv";

/// Rust's `char::is_whitespace` (Unicode `White_Space`), as RE2 class items:
/// what `str::trim` removes before the JSON test.
const SPACE: &str =
    r"\t\n\x0b\x0c\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}";
/// JSON's insignificant whitespace.
const JSON_SPACE: &str = r"[ \t\n\r]*";

/// Loki's level words (`detectLevelFromLogLine`), in its order, with their
/// level; the proxy's row-by-row derivation reads the same table, so the two
/// cannot drift apart.
pub const WORDS: &[(&str, &str)] = &[
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
            let _ = write!(
                out,
                "[{}{}]",
                c.to_ascii_lowercase(),
                c.to_ascii_uppercase()
            );
        } else {
            out.push_str(&go::regexp::quote_meta(&c.to_string()));
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

/// A JSON string as the prefix of [`json_regex`] accepts it: escapes that
/// are valid JSON, no control character.
const JSON_STRING: &str = r#""(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#;
/// A JSON number (RFC 8259).
const JSON_NUMBER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?";

/// The first member of the top-level object named like a level field whose
/// value is a string, after members whose values are scalars only (a member
/// with an object or array value before it ends the match: a nested key
/// could come first). The prefix is parsed member by member as Loki's
/// `jsonparser.ObjectEach` (and lokivl's scanner) read it, which stop at the
/// level key, so what follows it does not matter. Only JSON's whitespace
/// may come before the object: the scanners do not skip other Unicode
/// spaces (the shape test trims them, so such a line is JSON without a key).
fn json_regex(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| go::regexp::quote_meta(k)).collect();
    let ws = JSON_SPACE;
    let scalar = format!("(?:{JSON_STRING}|{JSON_NUMBER}|true|false|null)");
    format!(
        r#"^{ws}\{{{ws}(?:{JSON_STRING}{ws}:{ws}{scalar}{ws},{ws})*?"(?P<{JSON_KEY}>{})"{ws}:{ws}"(?P<{JSON_VALUE}>(?:[^"\\]|\\.)*)""#,
        keys.join("|")
    )
}

/// The level names a JSON key must contain (case-sensitive, as Loki
/// compares JSON keys): every level field contains one.
const JSON_STEMS: &str = "level|LEVEL|Level|severity|SEVERITY|Severity|lvl|LVL|Lvl";

/// The logfmt level keys [`logfmt_regex`] finds.
const LOGFMT_KEYS: [&str; 3] = ["level", "severity", "lvl"];

/// The first logfmt key named `level`, `severity` or `lvl` (any case) after
/// nothing but `key=value` pairs without quotes (or a second `=`), and its
/// value up to the next separator (any byte up to the space, as Loki's
/// decoder separates).
fn logfmt_regex() -> String {
    let keys: Vec<String> = LOGFMT_KEYS.iter().map(|k| ci(k)).collect();
    // Loki's logfmt decoder separates on every byte up to the space.
    let plain = r#"[^\x00- "=]"#;
    let space = r"[\x00- ]";
    format!(
        r"^{space}*(?:{plain}+={plain}*{space}+)*?(?P<{LOGFMT_KEY}>{})=(?P<{LOGFMT_VALUE}>[^\x00- ]*)(?:{space}|$)",
        keys.join("|")
    )
}

/// The logfmt key found is the one Loki's priority picks (the first key of
/// the best priority, keys compared ASCII-case-insensitively): `level` is
/// first in priority; `severity` only when no key named like `level` (or
/// `log.level`) can exist; `lvl` only when neither can. Its value is a word.
fn logfmt_valid() -> Filter {
    let key_is = |k: &str| field_re(LOGFMT_KEY, exactly_ci(&[k]));
    let none = |w: &str| Filter::not(msg(ci(w)));
    Filter::and([
        Filter::Exact {
            field: CLASS.into(),
            value: LOGFMT.into(),
        },
        field_re(LOGFMT_VALUE, "^[A-Za-z]+$".into()),
        Filter::or([
            key_is("level"),
            Filter::and([key_is("severity"), none("level")]),
            Filter::and([key_is("lvl"), none("level"), none("severity")]),
        ]),
    ])
}

/// The JSON key found is a top-level member read exactly up to it; its value
/// has no escape or control character (as Loki reads it, unescaped, it
/// would differ from the text), and no `\u00xx` escape in the line can spell
/// a key name that the text does not show.
fn json_valid() -> Filter {
    Filter::and([
        Filter::Exact {
            field: CLASS.into(),
            value: JSON.into(),
        },
        Filter::NonEmpty(JSON_KEY.into()),
        Filter::not(field_re(JSON_VALUE, r"[\\\x00-\x1f]".into())),
        Filter::not(msg(ASCII_ESCAPE.into())),
    ])
}

/// A `\u` escape of a character that may be part of a key name: keys are
/// compared unescaped, so the line's text does not show them.
const ASCII_ESCAPE: &str = r"\\u00(?:2[eE]|[3-7][0-9a-fA-F])";

/// The field naming the line's class: [`JSON`], [`LOGFMT`] or empty.
const CLASS: &str = "__lokivl_lc";
const JSON: &str = "json";
const LOGFMT: &str = "logfmt";

fn format_if(out: &mut String, cond: &Filter, template: &str, field: &str) {
    let _ = write!(out, " | format if ({cond}) {} as ", quote(template));
    let _ = write_field(out, field);
}

fn extract_if(out: &mut String, cond: &Filter, regex: &str) {
    let _ = write!(
        out,
        " | extract_regexp if ({cond}) {} from _msg",
        quote(regex)
    );
}

fn class_is(class: &str) -> Filter {
    Filter::Exact {
        field: CLASS.into(),
        value: class.into(),
    }
}

/// The pipes setting [`LEVEL_FIELD`] on the entries `unleveled` selects (those
/// without a level label or metadata, whose level is in the line), each
/// starting with ` | `. `keys` are Loki's `log_level_fields`.
///
/// Each regex runs once per line, on the lines that need it: the class
/// (JSON, logfmt, other), then the level key of JSON and logfmt lines that
/// name one, the value's level, the residue, and only for lines still
/// without a level the earliest level word.
pub fn pipes(unleveled: &Filter, keys: &[&str]) -> String {
    let mut out = String::with_capacity(4096);
    let empty = |f: &str| Filter::Empty(f.into());
    // The class of the line.
    format_if(
        &mut out,
        &Filter::and([unleveled.clone(), json_shape()]),
        JSON,
        CLASS,
    );
    format_if(
        &mut out,
        &Filter::and([unleveled.clone(), empty(CLASS), msg("=".into())]),
        LOGFMT,
        CLASS,
    );
    // The level key's value, where one is found exactly.
    // Anchored regexes, cheap where they fail; whether the line names a
    // level key at all (an unanchored search) is asked only where no value
    // was found.
    extract_if(&mut out, &class_is(JSON), &json_regex(keys));
    extract_if(&mut out, &class_is(LOGFMT), &logfmt_regex());
    let stems = LOGFMT_KEYS.iter().map(|k| ci(k)).collect::<Vec<_>>();
    let value = |f: &str| format!("<{f}>");
    format_if(&mut out, &json_valid(), &value(JSON_VALUE), VALUE);
    format_if(&mut out, &logfmt_valid(), &value(LOGFMT_VALUE), VALUE);
    for (spellings, level) in SPELLINGS {
        let cond = field_re(VALUE, exactly_ci(spellings));
        format_if(&mut out, &cond, level, LEVEL_FIELD);
    }
    // The residue: a line naming a level key whose value was not found
    // exactly, or a JSON line with an escape that may spell a key.
    let residue = Filter::or([
        Filter::and([class_is(JSON), msg(ASCII_ESCAPE.into())]),
        Filter::and([class_is(JSON), empty(VALUE), msg(JSON_STEMS.into())]),
        Filter::and([class_is(LOGFMT), empty(VALUE), msg(stems.join("|"))]),
    ]);
    format_if(&mut out, &residue, RESIDUE, LEVEL_FIELD);
    // The earliest level word, for the lines still without a level.
    let open = Filter::and([unleveled.clone(), empty(LEVEL_FIELD)]);
    extract_if(&mut out, &open, &word_regex());
    for (word, level) in WORDS {
        let cond = field_re(WORD, exactly_ci(&[word]));
        format_if(&mut out, &cond, level, LEVEL_FIELD);
    }
    format_if(&mut out, &open, UNKNOWN, LEVEL_FIELD);
    out
}

/// Loki's level when nothing names one.
const UNKNOWN: &str = "unknown";

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
        assert_eq!(
            exactly_ci(&["inf", "info"]),
            "^(?:[iI][nN][fF]|[iI][nN][fF][oO])$"
        );
    }

    /// The class is set first, the level last; key names are RE2 literals.
    #[test]
    fn pipes_set_the_level_field_last() {
        let p = pipes(&Filter::Empty("level".into()), &["level", "log.level"]);
        assert!(
            p.starts_with(r#" | format if ("level":"" and _msg:~"#),
            "{p}"
        );
        assert!(p.contains(r"(?P<__lokivl_jk>level|log\\.level)"), "{p}");
        assert!(p.ends_with(r#""unknown" as "__lokivl_ll""#), "{p}");
    }
}
