//! Decoding VictoriaLogs `stats` answers into borrowed `(name, value)` rows.
//!
//! A `stats` answer is NDJSON whose objects hold only strings and may have no
//! `_time` (a `stats` without a step), which [`crate::ndjson::Decoder`]
//! requires. Lines are read in place by [`super::objects`], so names and
//! values are `&str`s into the body and no map is built per row.

use super::Source;

/// Calls `each` with the string fields of every row of `body` (every
/// non-empty line of an NDJSON answer, or every row lokivl merged), reusing
/// one field vector. Non-string values are skipped.
///
/// # Errors
/// The message of the first line that is not a JSON object.
pub fn for_each_row<'a, E>(
    body: &'a mut (impl Source + ?Sized),
    each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
    invalid: impl Fn(String) -> E,
) -> Result<(), E> {
    body.for_each_fields(each).map_err(|e| match e {
        Ok(bad) => invalid(format!("invalid stats row {}: {}", bad.line, bad.reason)),
        Err(e) => e,
    })
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
