//! Loki's ingest-time label discovery, done at query time.
//!
//! Loki's distributor adds `service_name` to every stream (from the first
//! label of `discover_service_name` present, else `unknown_service`) and the
//! `detected_level` structured metadata to every entry (from a level label,
//! level metadata, OTel severity, the JSON/logfmt level key, or words of the
//! line). VictoriaLogs stores what was pushed, so lokivl derives both the same
//! way when they are absent (grafana/loki `pkg/distributor/field_detection.go`
//! and `validation.Limits` defaults).

use std::borrow::Cow;

pub mod otel;
pub mod stream;

/// Loki's default `discover_service_name` list, in priority order.
pub const SERVICE_NAME_LABELS: &[&str] = &[
    "service",
    "app",
    "application",
    "app_name",
    "name",
    "app_kubernetes_io_name",
    "container",
    "container_name",
    "k8s_container_name",
    "component",
    "workload",
    "job",
    "k8s_job_name",
];

/// Loki's defaults: `service_name` from [`SERVICE_NAME_LABELS`], levels on.
pub fn loki_defaults() -> logsql_ast::Discovery {
    logsql_ast::Discovery {
        service_name_labels: SERVICE_NAME_LABELS
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        log_levels: true,
    }
}

/// Loki's default `log_level_fields` (v3.7), in priority order.
pub const LEVEL_FIELDS: &[&str] = &[
    "level",
    "LEVEL",
    "Level",
    "log.level",
    "severity",
    "SEVERITY",
    "Severity",
    "SeverityText",
    "lvl",
    "LVL",
    "Lvl",
    "severity_text",
    "Severity_Text",
    "SEVERITY_TEXT",
];

/// The label Loki gives every stream.
pub const SERVICE_NAME: &str = "service_name";
/// The structured metadata Loki gives every entry.
pub const DETECTED_LEVEL: &str = "detected_level";
/// `service_name` when no candidate label exists.
pub const UNKNOWN_SERVICE: &str = "unknown_service";
/// `detected_level` when nothing names a level.
pub const UNKNOWN_LEVEL: &str = "unknown";

/// The `service_name` Loki with its default list would give a stream with
/// `labels` (Loki names); requests use their context's list instead
/// ([`crate::discovery::stream::with_service_name`]).
#[cfg(test)]
pub fn service_name(labels: &[(String, String)]) -> &str {
    let get = |n: &str| labels.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
    if let Some(v) = get(SERVICE_NAME) {
        return v;
    }
    derive_service_name(SERVICE_NAME_LABELS.iter().copied(), get)
}

/// The `service_name` Loki derives for a stream without one: the value of
/// the first of `candidates` the stream has (non-empty), else
/// [`UNKNOWN_SERVICE`]. `get` reads a stream label by Loki name.
pub fn derive_service_name<'a, 'n>(
    candidates: impl IntoIterator<Item = &'n str>,
    get: impl Fn(&str) -> Option<&'a str>,
) -> &'a str {
    candidates
        .into_iter()
        .find_map(|n| get(n).filter(|v| !v.is_empty()))
        .unwrap_or(UNKNOWN_SERVICE)
}

/// Loki's `normalizeLogLevel`: known spellings to lowercase standard names,
/// anything else unchanged.
pub fn normalize_level(level: &str) -> Cow<'_, str> {
    Cow::Borrowed(normalized(level))
}

/// [`normalize_level`] without the `Cow`: a standard name or `level` itself.
pub fn normalized(level: &str) -> &str {
    known_level(level).unwrap_or(level)
}

fn known_level(v: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("trace", "trace"),
        ("trc", "trace"),
        ("debug", "debug"),
        ("dbg", "debug"),
        ("info", "info"),
        ("inf", "info"),
        ("information", "info"),
        ("warn", "warn"),
        ("wrn", "warn"),
        ("warning", "warn"),
        ("error", "error"),
        ("err", "error"),
        ("critical", "critical"),
        ("fatal", "fatal"),
    ];
    TABLE
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(v))
        .map(|(_, l)| *l)
}

/// The `detected_level` Loki would store for an entry.
///
/// `stream` and `metadata` are Loki-named label pairs; an existing
/// `detected_level` in `metadata` wins (normalized), then a level label, then
/// level metadata, then OTel's `severity_number`, then the line.
pub fn detected_level(
    stream: &[(String, String)],
    metadata: &[(String, String)],
    line: &str,
) -> String {
    fn get<'a>(set: &'a [(String, String)], n: &str) -> Option<&'a str> {
        set.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str())
    }
    let level = level_label(|n| get(stream, n));
    level_of(level, &|n| get(metadata, n), line).to_owned()
}

/// The value of a stream's level label (the first of [`LEVEL_FIELDS`] it
/// has), computed once per stream for [`level_of`].
pub fn level_label<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<&'a str> {
    LEVEL_FIELDS.iter().find_map(|n| get(n))
}

/// The `detected_level` Loki would store for an entry, borrowing from the
/// inputs: an existing `detected_level` in `metadata` (normalized), then the
/// stream's level label (`stream_level`, see [`level_label`]), then a level
/// field of `metadata`, then OTel's `severity_number`, then the line.
/// `metadata` reads the entry's structured metadata by Loki name.
pub fn level_of<'a>(
    stream_level: Option<&'a str>,
    metadata: &dyn Fn(&str) -> Option<&'a str>,
    line: &str,
) -> &'a str {
    if let Some(v) = metadata(DETECTED_LEVEL) {
        return normalized(v);
    }
    if let Some(v) = stream_level.or_else(|| level_label(metadata)) {
        return normalized(v);
    }
    if let Some(n) = metadata("severity_number").filter(|n| !n.is_empty()) {
        return otel_severity(n);
    }
    level_from_line(line)
}

/// OTel severity numbers to Loki's levels.
fn otel_severity(n: &str) -> &'static str {
    match n.parse::<i64>() {
        Err(_) => "info",
        Ok(0) => UNKNOWN_LEVEL,
        Ok(n) if n <= 4 => "trace",
        Ok(n) if n <= 8 => "debug",
        Ok(n) if n <= 12 => "info",
        Ok(n) if n <= 16 => "warn",
        Ok(n) if n <= 20 => "error",
        Ok(n) if n <= 24 => "fatal",
        Ok(_) => UNKNOWN_LEVEL,
    }
}

fn is_json(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('{') && t.ends_with('}')
}

/// The level of a line: a JSON string member named like a level field
/// (two levels deep), a logfmt level key, else a level word.
pub fn level_from_line(line: &str) -> &'static str {
    let value = if is_json(line) {
        json_level(line, 0)
    } else if line.contains('=') {
        logfmt_level(line)
    } else {
        return word_level(line);
    };
    value
        .and_then(|v| known_level(&v))
        .unwrap_or_else(|| word_level(line))
}

fn json_level(obj: &str, depth: usize) -> Option<String> {
    use crate::pipeline::json::{Kind, object_each, string_value};
    if depth >= 2 {
        return None;
    }
    let mut found = None;
    let _ = object_each(obj, &mut |k, v| {
        match v.kind {
            Kind::String if LEVEL_FIELDS.contains(&k.as_ref()) => {
                found = Some(string_value(v.raw).into_owned());
                return Err("found");
            }
            Kind::Object => {
                if let Some(l) = json_level(v.raw, depth + 1) {
                    found = Some(l);
                    return Err("found");
                }
            }
            _ => {}
        }
        Ok(())
    });
    found
}

fn logfmt_level(line: &str) -> Option<String> {
    use crate::pipeline::hints::Hints;
    use crate::pipeline::labels::{Category, LabelsBuilder};
    use crate::pipeline::logfmt::LogfmtParser;
    let mut lbs = LabelsBuilder::new();
    lbs.reset(std::iter::empty());
    LogfmtParser::new(false, false, Vec::new()).process(line, &mut lbs, &Hints::default());
    let mut best: Option<(usize, String)> = None;
    lbs.for_each(|k, v, c| {
        if c != Category::Parsed {
            return;
        }
        if let Some(i) = LEVEL_FIELDS.iter().position(|h| h.eq_ignore_ascii_case(k))
            && best.as_ref().is_none_or(|(b, _)| i < *b)
        {
            best = Some((i, v.to_owned()));
        }
    });
    best.map(|(_, v)| v)
}

fn left_boundary(s: &[u8], pos: Option<usize>) -> bool {
    match pos {
        None => true,
        Some(p) => matches!(
            s.get(p),
            None | Some(b' ' | b'\t' | b'\n' | b'[' | b'(' | b'{' | b'"' | b'=')
        ),
    }
}

fn right_boundary(s: &[u8], pos: usize) -> bool {
    matches!(
        s.get(pos),
        None | Some(
            b' ' | b'\t'
                | b'\n'
                | b'['
                | b']'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b':'
                | b','
                | b'!'
                | b'"'
                | b'='
        )
    )
}

fn bounded_index(s: &str, word: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut offset = 0;
    while let Some(p) = s.get(offset..)?.find(word) {
        let abs = offset + p;
        if left_boundary(b, abs.checked_sub(1)) && right_boundary(b, abs + word.len()) {
            return Some(abs);
        }
        offset = abs + 1;
    }
    None
}

/// Loki's `detectLevelFromLogLine`: the earliest bounded level word wins.
fn word_level(line: &str) -> &'static str {
    use logsql_ast::line_level::WORDS;
    let lower = line.to_lowercase();
    let mut best = (lower.len(), UNKNOWN_LEVEL);
    for (w, l) in WORDS {
        if let Some(p) = bounded_index(&lower, w)
            && p < best.0
        {
            best = (p, l);
            if p == 0 {
                break;
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn service_name_priority() {
        assert_eq!(service_name(&l(&[("app", "a"), ("job", "j")])), "a");
        assert_eq!(
            service_name(&l(&[("service_name", "s"), ("app", "a")])),
            "s"
        );
        assert_eq!(service_name(&l(&[("env", "prod")])), UNKNOWN_SERVICE);
        assert_eq!(service_name(&l(&[("container", "c"), ("job", "j")])), "c");
        let mut with = l(&[("app", "a"), ("zone", "z")]);
        crate::discovery::stream::with_service_name(&mut with, &loki_defaults());
        assert_eq!(
            with,
            l(&[("app", "a"), ("service_name", "a"), ("zone", "z")])
        );
    }

    /// Lines pushed to Loki 3.7.8 (default `discover_log_levels`) and the
    /// `detected_level` it stored for each.
    #[test]
    fn levels_as_loki_3_7_detects_them() {
        let table: &[(&str, &str)] = &[
            ("info x", "info"),
            ("GET /x 200", "unknown"),
            ("[WARN] disk almost full", "warn"),
            ("misc:error happened", "unknown"),
            ("debug: then error", "debug"),
            ("an error occurred", "error"),
            ("ERROR something", "error"),
            ("warning: x", "warn"),
            (r#"{"level":"WARNING"}"#, "warn"),
            (r#"{"a":{"lvl":"warn"}}"#, "warn"),
            (r#"{"a":{"b":{"level":"error"}}}"#, "error"),
            ("ts=1 level=err msg=x", "error"),
            ("ts=1 msg=\"an error\"", "error"),
            ("critical: x", "critical"),
            ("fatal crash", "fatal"),
            ("err: x", "error"),
            ("this is information", "unknown"),
            ("level=notice x", "unknown"),
            ("Information here", "unknown"),
            ("[error] x", "error"),
            ("ERR: y", "error"),
            ("[debug] dbg", "debug"),
            ("a=b warn", "warn"),
            (r#"{"msg":"x error"}"#, "error"),
            (r#"{"level":5}"#, "unknown"),
            ("ts=2 LEVEL=Warning", "warn"),
            ("ts=2 severity=info level=error", "error"),
        ];
        for (line, want) in table {
            assert_eq!(level_from_line(line), *want, "{line}");
        }
        let none = |_: &str| None;
        assert_eq!(level_of(Some("ERR"), &none, "info"), "error");
        assert_eq!(level_of(Some("notice"), &none, "info"), "notice");
        let meta = |set: &'static [(&'static str, &'static str)]| {
            move |n: &str| set.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
        };
        assert_eq!(
            level_of(None, &meta(&[("severity_number", "17")]), "hello"),
            "error"
        );
        assert_eq!(
            level_of(None, &meta(&[("level", "Debug")]), "hello"),
            "debug"
        );
        assert_eq!(
            level_of(None, &meta(&[("detected_level", "WARNING")]), "error"),
            "warn"
        );
    }

    #[test]
    fn levels() {
        assert_eq!(
            detected_level(&[], &l(&[("detected_level", "WARNING")]), ""),
            "warn"
        );
        assert_eq!(
            detected_level(&l(&[("level", "ERR")]), &[], "info x"),
            "error"
        );
        assert_eq!(
            detected_level(&[], &l(&[("severity_number", "17")]), ""),
            "error"
        );
        assert_eq!(
            detected_level(&[], &[], r#"{"msg":"x","level":"debug"}"#),
            "debug"
        );
        assert_eq!(detected_level(&[], &[], r#"{"a":{"lvl":"warn"}}"#), "warn");
        assert_eq!(
            detected_level(&[], &[], "ts=1 level=info msg=hello"),
            "info"
        );
        assert_eq!(detected_level(&[], &[], "ts=1 msg=\"an error\""), "error");
        assert_eq!(detected_level(&[], &[], "GET /x 200"), "unknown");
        assert_eq!(detected_level(&[], &[], "[WARN] disk almost full"), "warn");
        assert_eq!(detected_level(&[], &[], "misc:error happened"), "unknown");
        assert_eq!(detected_level(&[], &[], "debug: then error"), "debug");
    }
}
