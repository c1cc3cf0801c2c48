//! `| json` and `| logfmt` to `unpack_json` / `unpack_logfmt` pipes.

use logql_parser::{LabelExtraction, Parser};

use crate::error::LowerError;
use crate::pipe::{Pipe, Unpack, UnpackFormat};
use crate::plan::{PARSED_PREFIX, SCRATCH_PREFIX};

/// Lowers a parser stage into pipes writing under [`PARSED_PREFIX`].
///
/// Field expressions (`json a="b.c"`) unpack the named paths under a scratch
/// prefix, copy them to their labels and delete the scratch fields.
pub(crate) fn lower(parser: &Parser) -> Result<Vec<Pipe>, LowerError> {
    let (format, extractions) = match parser {
        Parser::Json(ex) => (UnpackFormat::Json, ex),
        Parser::Logfmt {
            strict,
            keep_empty,
            extractions,
        } => {
            if *strict {
                return Err(LowerError::Unsupported("logfmt --strict".into()));
            }
            if *keep_empty {
                return Err(LowerError::Unsupported("logfmt --keep-empty".into()));
            }
            (UnpackFormat::Logfmt, extractions)
        }
        Parser::Regexp(_) => return Err(LowerError::Unsupported("regexp parser".into())),
        Parser::Pattern(_) => return Err(LowerError::Unsupported("pattern parser".into())),
        Parser::Unpack => return Err(LowerError::Unsupported("unpack parser".into())),
    };
    if extractions.is_empty() {
        return Ok(vec![Pipe::Unpack(Unpack {
            format,
            from: "_msg".into(),
            fields: Vec::new(),
            result_prefix: Some(PARSED_PREFIX.into()),
        })]);
    }
    let mut paths: Vec<String> = Vec::new();
    let mut copies = Vec::new();
    for LabelExtraction { name, expr } in extractions {
        let raw = expr.as_deref().unwrap_or(name);
        let path = match format {
            UnpackFormat::Json => json_path(raw)?,
            UnpackFormat::Logfmt => raw.to_owned(),
        };
        if !paths.contains(&path) {
            paths.push(path.clone());
        }
        copies.push((
            format!("{SCRATCH_PREFIX}{path}"),
            format!("{PARSED_PREFIX}{name}"),
        ));
    }
    let scratch: Vec<String> = paths
        .iter()
        .map(|p| format!("{SCRATCH_PREFIX}{p}"))
        .collect();
    Ok(vec![
        Pipe::Unpack(Unpack {
            format,
            from: "_msg".into(),
            fields: paths,
            result_prefix: Some(SCRATCH_PREFIX.into()),
        }),
        Pipe::Copy(copies),
        Pipe::Delete(scratch),
    ])
}

/// Converts a Loki JSON path (`a.b`, `a["b"]`) to VictoriaLogs' flattened name (`a.b`).
///
/// Array indexes (`a[0]`) and keys containing `.` have no flattened equivalent.
fn json_path(expr: &str) -> Result<String, LowerError> {
    let unsupported = || LowerError::Unsupported(format!("json field expression {expr:?}"));
    let mut segments: Vec<String> = Vec::new();
    let mut rest = expr;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("[\"") {
            let end = after.find("\"]").ok_or_else(unsupported)?;
            segments.push(after[..end].to_owned());
            rest = &after[end + 2..];
        } else if rest.starts_with('[') {
            return Err(unsupported());
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            segments.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
            if rest.is_empty() {
                return Err(unsupported());
            }
        }
    }
    if segments.is_empty()
        || segments
            .iter()
            .any(|s| s.is_empty() || s.contains(['.', '\\', '"']))
    {
        return Err(unsupported());
    }
    Ok(segments.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_paths_flatten_with_dots() {
        assert_eq!(json_path("a").unwrap(), "a");
        assert_eq!(json_path("a.b").unwrap(), "a.b");
        assert_eq!(json_path(r#"a["b c"].d"#).unwrap(), "a.b c.d");
        assert_eq!(json_path(r#"["x"]"#).unwrap(), "x");
    }

    #[test]
    fn json_paths_with_indexes_are_unsupported() {
        assert!(json_path("a[0]").is_err());
        assert!(json_path(r#"a["b.c"]"#).is_err());
        assert!(json_path("a.").is_err());
        assert!(json_path("").is_err());
    }
}
