//! `| json` in VictoriaLogs for metric queries, behind an exactness guard.
//!
//! A range aggregation over `{…} | json | status >= 400` used to fetch every
//! selected row and parse it in the proxy. Here VictoriaLogs parses instead
//! (`unpack_json`), resolves each label the query reads as Loki does (a
//! stored field — stream label or structured metadata — wins over the parsed
//! key, which Loki renames `<key>_extracted`), filters, and counts per bucket.
//! In the same `stats` it counts the *suspect* rows: those on which
//! VictoriaLogs' parse could give a label a value other than Loki's, or on
//! which Loki would raise `__error__` and fail the query. The proxy uses the
//! counts only when no bucket has a suspect row, and otherwise evaluates the
//! range itself, as before; so the answer is always Loki's.
//!
//! The guard is conservative (it may flag rows that are fine, which only
//! costs the fallback) and cheap: phrase and `seq` filters over the line, and
//! emptiness tests on fields. A row is suspect when, for the labels N the
//! query reads (Loki's parser hints, [`needed_names`]):
//!
//! * **it may not be JSON.** VictoriaLogs gives no field for a line it cannot
//!   parse, where Loki tags the row `JSONParserErr`. A row on which some
//!   label of N was parsed parsed; for the others, the line is unpacked whole
//!   and packed back: `{}` means no field came out, so the line failed to
//!   parse, or is an object without scalar values (flagged too).
//! * **it holds a `\u` escape.** Keys and values are compared as words of
//!   the raw line below; an escaped character would hide one.
//! * **a label of N whose stored field is empty** (so the parsed key counts):
//!   - its word occurs twice (`seq(n, n)`): a duplicate key, where Loki keeps
//!     the first and VictoriaLogs the last, or the word in a value as well;
//!   - its parts occur as separate words in order (`seq("latency", "ms")`
//!     for `latency_ms`): a key Loki sanitizes onto it (`latency-ms`,
//!     `latency.ms`, a nested `{"latency":{"ms":…}}`), which VictoriaLogs
//!     names otherwise; or such a key with one non-ASCII character between
//!     the parts (VictoriaLogs reads `latencyÄms` as one word);
//!   - its word occurs but no top-level scalar of that name was parsed: an
//!     object, `null` or `""` value (Loki keeps `""` as a present, empty
//!     label), a key with spaces around it (Loki trims them), or the word in
//!     another value;
//!   - its parsed value starts with `[`: VictoriaLogs keeps arrays as text,
//!     Loki skips them;
//!   - its parsed value holds U+FFFD or invalid UTF-8, which Loki deletes
//!     from parsed strings.
//! * **a stored field spells a label of N with dots** (`latency.ms` for
//!   `latency_ms`): such a field is the label, where the pushdown reads only
//!   the field of the label's own name.
//! * **a label compared as a number holds anything but a plain integer** of
//!   at most 15 digits: Loki fails on values that do not convert, and for
//!   integers both sides parse the same float;
//! * **the unwrapped label holds a value outside its conversion's grammar**
//!   ([`crate::guard_regex`]): Go reads `0x1p4`, `NaN` or `Inf` where the
//!   counts would call them conversion errors.
//!
//! Clean rows get, for every n in N, exactly Loki's value: stored n when
//! non-empty, else the one top-level scalar key n with its JSON text
//! unescaped (strings) or as written (numbers, booleans); both parsers agree
//! on valid JSON without `\u` escapes.

use logql_parser::{LabelFilter, MatchOp, Parser, Stage};

use crate::filter::Filter;
use crate::pipe::{Format, Pipe, Unpack, UnpackFormat};
use crate::plan::PARSED_PREFIX;

/// Set to `1` on suspect rows ([`JsonPushdown::pipes`]); the statistics
/// count them ([`crate::StatsFunc::Suspect`]).
pub const SUSPECT_FIELD: &str = "__lokivl_g";
/// Where a line is unpacked whole when no needed key was parsed from it.
const WHOLE_PREFIX: &str = "__lokivl_all.";
/// The whole unpack packed back into one JSON object.
const PACKED_FIELD: &str = "__lokivl_p";
/// Values both Loki (`strconv.ParseFloat`) and VictoriaLogs parse to the same float.
const PLAIN_INTEGER: &str = r"^-?(?:0|[1-9][0-9]{0,14})$";
/// The most `_` a needed name may have (its dotted spellings are checked).
const MAX_PARTS: usize = 4;

/// The marker filter: the row is suspect.
pub(crate) fn suspect_marker() -> Filter {
    Filter::Exact {
        field: SUSPECT_FIELD.to_owned(),
        value: "1".to_owned(),
    }
}

/// `filter` or the row is suspect: suspect rows must reach the statistics
/// that count them, whatever the later filters say.
pub(crate) fn or_suspect(filter: Filter) -> Filter {
    Filter::or([filter, suspect_marker()])
}

/// The parsing part of a pushed-down metric pipeline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParsedPushdown {
    /// `| json` or `| logfmt`.
    pub(crate) format: UnpackFormat,
    /// The labels the query reads after the parser, each resolved into the
    /// field of its own name.
    pub(crate) names: Vec<String>,
    /// The labels compared as numbers.
    pub(crate) numeric: Vec<String>,
    /// The unwrapped label and the values its conversion is known to read
    /// the same in Loki and VictoriaLogs (`guard_regex`): anything else
    /// (`0x1p4`, `NaN`, `Inf`, `1e3µs`…) Loki may convert where the
    /// VictoriaLogs path would call it an error.
    pub(crate) unwrapped: Option<(String, &'static str)>,
    /// The label filters after the parser, lowered (over the resolved
    /// fields); `*` when there are none.
    pub(crate) filter: Filter,
    /// Loki drops the rows the parser fails on (`| __error__=""` after it,
    /// or after `unwrap`).
    pub(crate) drops_errors: bool,
}

impl ParsedPushdown {
    /// The pipes after the selection: unpack, the guard's marker, and the
    /// resolution of each needed label into the field of its name.
    pub(crate) fn pipes(&self) -> Vec<Pipe> {
        let mut out = self.marked();
        out.extend(self.resolutions());
        out
    }

    /// The unpack and the guard's marker of `| json` or `| logfmt`, without
    /// the resolutions (a log query's prefilter, [`crate::log_prefilter`],
    /// resolves into fields of its own).
    pub(crate) fn marked(&self) -> Vec<Pipe> {
        match self.format {
            UnpackFormat::Json => self.json_marked(),
            UnpackFormat::Logfmt => self.logfmt_marked(),
        }
    }

    /// The unpacks of `| json` and the guard's marker: a line that fails to
    /// parse is Loki's `JSONParserErr`, so the guard also proves the line is
    /// JSON.
    fn json_marked(&self) -> Vec<Pipe> {
        let parsed = |n: &str| format!("{PARSED_PREFIX}{n}");
        let mut out = Vec::new();
        if !self.names.is_empty() {
            out.push(Pipe::Unpack(Unpack {
                format: UnpackFormat::Json,
                from: "_msg".to_owned(),
                fields: self.names.clone(),
                result_prefix: Some(PARSED_PREFIX.to_owned()),
                only_if: None,
                keep_original: true,
            }));
        }
        let none_parsed = Filter::and(self.names.iter().map(|n| Filter::Empty(parsed(n))));
        out.push(Pipe::Unpack(Unpack {
            format: UnpackFormat::Json,
            from: "_msg".to_owned(),
            fields: Vec::new(),
            result_prefix: Some(WHOLE_PREFIX.to_owned()),
            only_if: (!self.names.is_empty()).then(|| none_parsed.clone()),
            keep_original: false,
        }));
        out.push(Pipe::PackJson {
            fields: vec![format!("{WHOLE_PREFIX}*")],
            to: PACKED_FIELD.to_owned(),
        });
        out.push(Pipe::Format(Format {
            only_if: Some(self.suspect(none_parsed)),
            template: "1".to_owned(),
            to: SUSPECT_FIELD.to_owned(),
            keep_original: false,
        }));
        out
    }

    /// The suspect rows (see the module doc), before the labels are resolved:
    /// `n` is still the stored field.
    fn suspect(&self, none_parsed: Filter) -> Filter {
        let msg = || "_msg".to_owned();
        // Loki's parser (and VictoriaLogs') read keys only from a line that
        // starts with `{` after JSON whitespace; from any other line neither
        // extracts anything, and both agree on its labels.
        let brace = json_brace();
        let mentions = |n: &str| {
            let parts: Vec<&str> = n.split('_').collect();
            let mut m = vec![Filter::Phrase {
                field: msg(),
                phrase: n.to_owned(),
            }];
            if parts.len() > 1 {
                m.push(Filter::Seq {
                    field: msg(),
                    phrases: parts.iter().map(|p| (*p).to_owned()).collect(),
                });
                // Needed names are `[A-Za-z0-9_]`: nothing to escape.
                m.push(Filter::Regex {
                    field: msg(),
                    regex: parts.join(r"[^\x00-\x7F]"),
                });
            }
            m
        };
        // No key parsed and nothing in the whole line: not JSON (Loki tags
        // it `JSONParserErr`) or no scalar value. Such a row matters when the
        // filters keep it (Loki then fails, or drops it for `__error__=""`),
        // or when Loki may have parsed a needed key before the error.
        let mentioned = Filter::or(self.names.iter().flat_map(|n| mentions(n)));
        let empty = Filter::Exact {
            field: PACKED_FIELD.to_owned(),
            value: "{}".to_owned(),
        };
        // When Loki drops the rows it fails on, a line that does not start
        // with `{` is dropped in both ([`ParsedPushdown::row_filter`]); one
        // that does but yields nothing is suspect when the filters keep it.
        let kept = if self.drops_errors {
            Filter::and([brace.clone(), Filter::or([self.filter.clone(), mentioned])])
        } else {
            Filter::or([self.filter.clone(), Filter::and([brace.clone(), mentioned])])
        };
        let mut any = vec![Filter::and([none_parsed, empty, kept])];
        let mut json_line = vec![Filter::Regex {
            field: msg(),
            regex: r"\\u".to_owned(),
        }];
        for n in &self.names {
            let parsed = format!("{PARSED_PREFIX}{n}");
            let mut key = vec![
                Filter::Seq {
                    field: msg(),
                    phrases: vec![n.clone(), n.clone()],
                },
                Filter::and([
                    Filter::Phrase {
                        field: msg(),
                        phrase: n.clone(),
                    },
                    Filter::Empty(parsed.clone()),
                ]),
                Filter::ExactPrefix {
                    field: parsed.clone(),
                    prefix: "[".to_owned(),
                },
                // U+FFFD or invalid UTF-8 (Go's regexp reads both as
                // U+FFFD): Loki deletes them from parsed strings.
                Filter::Regex {
                    field: parsed.clone(),
                    regex: r"[^\x00-\x{FFFC}\x{FFFE}-\x{10FFFF}]".to_owned(),
                },
            ];
            key.extend(mentions(n).into_iter().skip(1));
            json_line.push(Filter::and([Filter::Empty(n.clone()), Filter::or(key)]));
        }
        any.extend(self.common_terms());
        any.push(Filter::and([brace, Filter::or(json_line)]));
        Filter::or(any)
    }
    /// The filter keeping a row (suspect rows are kept besides): the label
    /// filters, and for `| json` under `| __error__=""` a line starting with
    /// `{` (Loki fails on any other line, and drops it).
    pub(crate) fn row_filter(&self) -> Filter {
        if self.format == UnpackFormat::Json && self.drops_errors {
            Filter::and([json_brace(), self.filter.clone()])
        } else {
            self.filter.clone()
        }
    }

    /// The terms both parsers share: a stored field spelling a needed label
    /// with dots, and values outside the grammar a comparison or the
    /// conversion of `unwrap` reads alike in Loki and VictoriaLogs.
    fn common_terms(&self) -> Vec<Filter> {
        let mut any = Vec::new();
        for n in &self.names {
            let parsed = format!("{PARSED_PREFIX}{n}");
            any.extend(dotted(n).into_iter().map(Filter::NonEmpty));
            let grammars = self
                .numeric
                .contains(n)
                .then_some(PLAIN_INTEGER)
                .into_iter()
                .chain(
                    self.unwrapped
                        .as_ref()
                        .filter(|(u, _)| u == n)
                        .map(|(_, g)| *g),
                );
            for grammar in grammars {
                let outside = |f: &str| {
                    Filter::and([
                        Filter::NonEmpty(f.to_owned()),
                        Filter::not(Filter::Regex {
                            field: f.to_owned(),
                            regex: grammar.to_owned(),
                        }),
                    ])
                };
                any.push(outside(n));
                any.push(Filter::and([Filter::Empty(n.clone()), outside(&parsed)]));
            }
        }
        any
    }

    /// The unpack of `| logfmt` and the guard's marker: Loki's non-strict
    /// logfmt raises no error, so only the values are guarded
    /// ([`crate::logfmt_suspect`]).
    fn logfmt_marked(&self) -> Vec<Pipe> {
        if self.names.is_empty() {
            return Vec::new();
        }
        let mut out = vec![Pipe::Unpack(Unpack {
            format: UnpackFormat::Logfmt,
            from: "_msg".to_owned(),
            fields: self.names.clone(),
            result_prefix: Some(PARSED_PREFIX.to_owned()),
            only_if: None,
            keep_original: true,
        })];
        let mut any = vec![crate::logfmt_suspect(&self.names, PARSED_PREFIX)];
        any.extend(self.common_terms());
        out.push(Pipe::Format(Format {
            only_if: Some(Filter::or(any)),
            template: "1".to_owned(),
            to: SUSPECT_FIELD.to_owned(),
            keep_original: false,
        }));
        out
    }

    /// Each needed label's value as Loki sees it, in `to(n)`, leaving the
    /// stored fields as they are: the stored field when non-empty, else the
    /// parsed key.
    pub(crate) fn resolutions_into(&self, to: &dyn Fn(&str) -> String) -> Vec<Pipe> {
        let mut out = Vec::with_capacity(2 * self.names.len());
        for n in &self.names {
            out.push(Pipe::Format(Format {
                only_if: None,
                template: format!("<{n}>"),
                to: to(n),
                keep_original: false,
            }));
            out.push(Pipe::Format(Format {
                only_if: None,
                template: format!("<{PARSED_PREFIX}{n}>"),
                to: to(n),
                keep_original: true,
            }));
        }
        out
    }

    /// Each needed label's value as Loki sees it, in the field of its name:
    /// the stored field when non-empty, else the parsed key.
    fn resolutions(&self) -> Vec<Pipe> {
        self.names
            .iter()
            .map(|n| {
                Pipe::Format(Format {
                    only_if: None,
                    template: format!("<{PARSED_PREFIX}{n}>"),
                    to: n.clone(),
                    keep_original: true,
                })
            })
            .collect()
    }
}

/// A line starting with `{` after JSON whitespace: the only lines both
/// JSON parsers read keys from.
fn json_brace() -> Filter {
    Filter::Regex {
        field: "_msg".to_owned(),
        regex: r"^[ \t\n\r]*\{".to_owned(),
    }
}

/// `name` with some `_` written as `.`, each spelling but `name` itself.
fn dotted(name: &str) -> Vec<String> {
    let seps: Vec<usize> = name.match_indices('_').map(|(i, _)| i).collect();
    (1u32..(1 << seps.len()))
        .map(|mask| {
            let mut b = name.as_bytes().to_vec();
            for (k, &i) in seps.iter().enumerate() {
                if mask & (1 << k) != 0 {
                    b[i] = b'.';
                }
            }
            String::from_utf8_lossy(&b).into_owned()
        })
        .collect()
}

/// Why a pipeline stays in the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub String);

/// The post-parser stages a pushdown supports.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split {
    /// The parser.
    pub(crate) format: UnpackFormat,
    /// A `| __error__=""` follows the parser: Loki drops the rows it fails on.
    pub(crate) drops_errors: bool,
    /// Label filters after the parser (`__error__=""` no-ops removed).
    pub(crate) filters: Vec<LabelFilter>,
}

/// Splits the proxy stages of a metric pipeline: one `| json` or `| logfmt`
/// (no parameters, no flags) first, then
/// only label filters, `| __error__=""` and `| drop __error__, …` (no-ops
/// once the guard has found no error).
///
/// # Errors
/// [`Refused`] for any other stage.
pub(crate) fn split(stages: &[Stage]) -> Result<Split, Refused> {
    let (format, rest) = match stages.split_first() {
        Some((Stage::Parser(Parser::Json(params)), rest)) if params.is_empty() => {
            (UnpackFormat::Json, rest)
        }
        Some((
            Stage::Parser(Parser::Logfmt {
                strict: false,
                keep_empty: false,
                extractions,
            }),
            rest,
        )) if extractions.is_empty() => (UnpackFormat::Logfmt, rest),
        _ => {
            return Err(Refused(
                "only `| json` and `| logfmt` without parameters or flags run in VictoriaLogs"
                    .into(),
            ));
        }
    };
    let mut filters = Vec::new();
    let mut drops_errors = false;
    for s in rest {
        match s {
            Stage::LabelFilter(f) if keeps_non_errors(f) => drops_errors = true,
            Stage::LabelFilter(f) => filters.push(f.clone()),
            Stage::Drop(items) if items.iter().all(crate::lower::is_error_label) => {}
            _ => return Err(Refused("a stage after the parser runs in the proxy".into())),
        }
    }
    Ok(Split {
        format,
        filters,
        drops_errors,
    })
}

/// `__error__=""`: true on every row once no row errs.
fn keeps_non_errors(f: &LabelFilter) -> bool {
    matches!(f, LabelFilter::Matcher(m) if m.name == "__error__" && m.op == MatchOp::Eq && m.value.is_empty())
}

/// Adds the label names `f` reads to `out`, and those compared as numbers to `numeric`.
pub(crate) fn filter_names(f: &LabelFilter, out: &mut Vec<String>, numeric: &mut Vec<String>) {
    let push = |v: &mut Vec<String>, n: &str| {
        if !v.iter().any(|x| x == n) {
            v.push(n.to_owned());
        }
    };
    match f {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
            filter_names(a, out, numeric);
            filter_names(b, out, numeric);
        }
        LabelFilter::Paren(inner) => filter_names(inner, out, numeric),
        LabelFilter::Matcher(m) => push(out, &m.name),
        LabelFilter::Number { name, .. } => {
            push(out, name);
            push(numeric, name);
        }
        LabelFilter::Duration { name, .. }
        | LabelFilter::Bytes { name, .. }
        | LabelFilter::Ip { name, .. } => {
            push(out, name);
            push(numeric, name);
        }
    }
}

/// Checks that every label name the pushdown reads can be guarded.
///
/// # Errors
/// [`Refused`] for error labels, `_extracted` names (Loki's renamed parsed
/// keys), names with a leading `_` or digit, `__`, characters outside
/// `[A-Za-z0-9_]`, more than [`MAX_PARTS`] parts, and filters that are not
/// plain numbers or string matchers.
pub(crate) fn needed_names(names: &[String]) -> Result<(), Refused> {
    for n in names {
        let b = n.as_bytes();
        let ok = !b.is_empty()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
            && b[0].is_ascii_alphabetic()
            && !n.contains("__")
            && !n.ends_with('_')
            && !n.ends_with("_extracted")
            && n.split('_').count() <= MAX_PARTS;
        if !ok {
            return Err(Refused(format!("label {n:?} cannot be guarded")));
        }
    }
    Ok(())
}

/// Whether `f` uses only comparisons the pushdown guards: string matchers
/// and plain numbers (durations, sizes and `ip()` convert otherwise).
pub(crate) fn supported_filter(f: &LabelFilter) -> bool {
    match f {
        LabelFilter::And(a, b) | LabelFilter::Or(a, b) => {
            supported_filter(a) && supported_filter(b)
        }
        LabelFilter::Paren(inner) => supported_filter(inner),
        LabelFilter::Matcher(m) => m.name != "__error__" && m.name != "__error_details__",
        LabelFilter::Number { .. } => true,
        LabelFilter::Duration { .. } | LabelFilter::Bytes { .. } | LabelFilter::Ip { .. } => false,
    }
}

#[cfg(test)]
mod tests;
