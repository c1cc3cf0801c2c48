//! LogsQL pipes: the `| …` stages after the filter.

use std::fmt;

use crate::filter::Filter;
use crate::quote::{write_field, write_quoted};

/// A LogsQL pipe. `Display` prints it without the leading `| `.
#[derive(Debug, Clone, PartialEq)]
pub enum Pipe {
    /// `sort by (_time desc) limit N`
    Sort {
        /// Fields with `true` for descending.
        by: Vec<(String, bool)>,
        /// Optional top-N limit.
        limit: Option<u64>,
    },
    /// `limit N`
    Limit(u64),
    /// `unpack_json …` / `unpack_logfmt …`
    Unpack(Unpack),
    /// `filter <Filter>`: a filter over fields computed by earlier pipes.
    Filter(Filter),
    /// `copy a as b, c as d`
    Copy(Vec<(String, String)>),
    /// `delete a, b`
    Delete(Vec<String>),
    /// `pack_json fields ("p.*") as "f"`: the non-empty fields named, as one
    /// JSON object (`{}` when all are empty).
    PackJson {
        /// Field names or `prefix*` patterns.
        fields: Vec<String>,
        /// The result field.
        to: String,
    },
    /// `format if (…) "<a>…" as "f" keep_original_fields`.
    Format(Format),
}

/// `format if (cond) "template" as "to" [keep_original_fields]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Format {
    /// Rows the pipe applies to (others keep `to` as it was).
    pub only_if: Option<Filter>,
    /// The template: `<field>` placeholders and text.
    pub template: String,
    /// The result field.
    pub to: String,
    /// Keep a non-empty `to` instead of overwriting it.
    pub keep_original: bool,
}

/// The formats `unpack_*` pipes understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnpackFormat {
    /// `unpack_json`: nested objects become dotted names (`a.b`).
    Json,
    /// `unpack_logfmt`
    Logfmt,
}

/// `unpack_json from F fields (…) result_prefix "P"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Unpack {
    /// The format.
    pub format: UnpackFormat,
    /// The field read (`_msg` for Loki parsers).
    pub from: String,
    /// Only these (flattened) names are extracted; empty means all.
    pub fields: Vec<String>,
    /// Prepended to every extracted name, keeping parser output apart from stored fields.
    pub result_prefix: Option<String>,
    /// Rows the pipe parses (others get no extracted fields).
    pub only_if: Option<Filter>,
    /// `keep_original_fields`: a non-empty field of an extracted name keeps
    /// its value. With a `result_prefix` this changes no value, but
    /// VictoriaLogs v1.26 needs it to keep reading stored fields named like
    /// the unprefixed `fields` (it drops them from the fields it reads).
    pub keep_original: bool,
}

fn write_fields(f: &mut fmt::Formatter<'_>, names: &[String]) -> fmt::Result {
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_field(f, n)?;
    }
    Ok(())
}

impl fmt::Display for Pipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pipe::Sort { by, limit } => {
                f.write_str("sort by (")?;
                for (i, (name, desc)) in by.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_field(f, name)?;
                    if *desc {
                        f.write_str(" desc")?;
                    }
                }
                f.write_str(")")?;
                if let Some(n) = limit {
                    write!(f, " limit {n}")?;
                }
                Ok(())
            }
            Pipe::Limit(n) => write!(f, "limit {n}"),
            Pipe::Unpack(u) => write!(f, "{u}"),
            Pipe::Filter(filter) => write!(f, "filter {filter}"),
            Pipe::Copy(pairs) => {
                f.write_str("copy ")?;
                for (i, (src, dst)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_field(f, src)?;
                    f.write_str(" as ")?;
                    write_field(f, dst)?;
                }
                Ok(())
            }
            Pipe::Delete(names) => {
                f.write_str("delete ")?;
                write_fields(f, names)
            }
            Pipe::PackJson { fields, to } => {
                f.write_str("pack_json fields (")?;
                write_fields(f, fields)?;
                f.write_str(") as ")?;
                write_field(f, to)
            }
            Pipe::Format(fm) => {
                f.write_str("format ")?;
                if let Some(cond) = &fm.only_if {
                    write!(f, "if ({cond}) ")?;
                }
                write_quoted(f, &fm.template)?;
                f.write_str(" as ")?;
                write_field(f, &fm.to)?;
                if fm.keep_original {
                    f.write_str(" keep_original_fields")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Unpack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.format {
            UnpackFormat::Json => "unpack_json ",
            UnpackFormat::Logfmt => "unpack_logfmt ",
        })?;
        if let Some(cond) = &self.only_if {
            write!(f, "if ({cond}) ")?;
        }
        f.write_str("from ")?;
        write_field(f, &self.from)?;
        if !self.fields.is_empty() {
            f.write_str(" fields (")?;
            write_fields(f, &self.fields)?;
            f.write_str(")")?;
        }
        if let Some(p) = &self.result_prefix {
            f.write_str(" result_prefix ")?;
            write_quoted(f, p)?;
        }
        if self.keep_original {
            f.write_str(" keep_original_fields")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_sort_and_limit() {
        let s = Pipe::Sort {
            by: vec![("_time".into(), true), ("a b".into(), false)],
            limit: Some(5),
        };
        assert_eq!(s.to_string(), r#"sort by (_time desc, "a b") limit 5"#);
        assert_eq!(Pipe::Limit(3).to_string(), "limit 3");
    }

    #[test]
    fn prints_unpack() {
        let u = Pipe::Unpack(Unpack {
            format: UnpackFormat::Logfmt,
            from: "_msg".into(),
            fields: vec!["a.b".into(), "c".into()],
            result_prefix: Some("p.".into()),
            only_if: None,
            keep_original: false,
        });
        assert_eq!(
            u.to_string(),
            r#"unpack_logfmt from _msg fields ("a.b", "c") result_prefix "p.""#
        );
        let u = Pipe::Unpack(Unpack {
            format: UnpackFormat::Json,
            from: "_msg".into(),
            fields: Vec::new(),
            result_prefix: Some("q.".into()),
            only_if: Some(Filter::Empty("p.a".into())),
            keep_original: true,
        });
        assert_eq!(
            u.to_string(),
            r#"unpack_json if ("p.a":"") from _msg result_prefix "q." keep_original_fields"#
        );
    }

    #[test]
    fn prints_pack_json_and_format() {
        let p = Pipe::PackJson {
            fields: vec!["q.*".into()],
            to: "p".into(),
        };
        assert_eq!(p.to_string(), r#"pack_json fields ("q.*") as "p""#);
        let f = Pipe::Format(Format {
            only_if: Some(Filter::NonEmpty("x".into())),
            template: "<q.a>".into(),
            to: "a".into(),
            keep_original: true,
        });
        assert_eq!(
            f.to_string(),
            r#"format if ("x":*) "<q.a>" as "a" keep_original_fields"#
        );
    }

    #[test]
    fn prints_copy_and_delete() {
        let c = Pipe::Copy(vec![("t.a".into(), "p.x".into())]);
        assert_eq!(c.to_string(), r#"copy "t.a" as "p.x""#);
        assert_eq!(
            Pipe::Delete(vec!["t.a".into()]).to_string(),
            r#"delete "t.a""#
        );
    }
}
