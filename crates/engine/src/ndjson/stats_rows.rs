//! Decoding VictoriaLogs `stats` answers into borrowed `(name, value)` rows.
//!
//! A `stats` answer is NDJSON whose objects hold only strings and may have no
//! `_time` (a `stats` without a step), which [`crate::ndjson::Decoder`]
//! requires. simd-json parses each line in place, so names and values are
//! `&str`s into the body and no map is built per row.

use simd_json::{Buffers, Node, Tape};

/// Calls `each` with the string fields of every non-empty line of `body`,
/// reusing one field vector. Non-string values are skipped.
///
/// # Errors
/// The message of the first line that is not a JSON object.
pub fn for_each_row<'a, E>(
    body: &'a mut [u8],
    mut each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    invalid: impl Fn(String) -> E,
) -> Result<(), E> {
    let mut buffers = Buffers::new(1024);
    let mut tape: Tape<'a> = Tape(Vec::new());
    let mut fields: Vec<(&'a str, &'a str)> = Vec::new();
    for (lineno, line) in body.split_mut(|&b| b == b'\n').enumerate() {
        let start = line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(line.len());
        let end = line
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(start, |i| i + 1);
        let line = &mut line[start..end];
        if line.is_empty() {
            continue;
        }
        let bad =
            |e: &dyn std::fmt::Display| invalid(format!("invalid stats row {}: {e}", lineno + 1));
        tape = tape.reset();
        simd_json::fill_tape(line, &mut buffers, &mut tape).map_err(|e| bad(&e))?;
        fields.clear();
        object_fields(&tape.0, &mut fields).map_err(|e| bad(&e))?;
        each(&fields)?;
    }
    Ok(())
}

fn object_fields<'a>(
    nodes: &[Node<'a>],
    fields: &mut Vec<(&'a str, &'a str)>,
) -> Result<(), &'static str> {
    let Some(&Node::Object { len, .. }) = nodes.first() else {
        return Err("expected a JSON object");
    };
    let mut i = 1;
    for _ in 0..len {
        let Some(&Node::String(key)) = nodes.get(i) else {
            return Err("malformed object");
        };
        match nodes.get(i + 1) {
            Some(&Node::String(v)) => {
                fields.push((key, v));
                i += 2;
            }
            Some(Node::Static(_)) => i += 2,
            Some(&Node::Object { count, .. } | &Node::Array { count, .. }) => i += 2 + count,
            None => return Err("malformed object"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(body: &str) -> Result<Vec<Vec<(String, String)>>, String> {
        let mut buf = body.as_bytes().to_vec();
        let mut out = Vec::new();
        for_each_row(
            &mut buf,
            |f| {
                out.push(
                    f.iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                );
                Ok(())
            },
            |m| m,
        )?;
        Ok(out)
    }

    #[test]
    fn decodes_rows_with_escapes_and_skips_blank_lines() {
        let r = rows(
            "{\"_stream\":\"{app=\\\"a\\\\\\\"b\\\"}\",\"e\":\"3\",\"n\":1}\n\n  \r\n{\"b\":\"7\"}\r\n",
        )
        .unwrap();
        assert_eq!(
            r,
            vec![
                vec![
                    ("_stream".to_owned(), r#"{app="a\"b"}"#.to_owned()),
                    ("e".to_owned(), "3".to_owned())
                ],
                vec![("b".to_owned(), "7".to_owned())]
            ]
        );
    }

    #[test]
    fn rejects_non_objects() {
        let e = rows("{\"e\":\"1\"}\n[1]\n").unwrap_err();
        assert!(e.starts_with("invalid stats row 2:"), "{e}");
        assert!(rows("{\"e\":").is_err());
    }
}
