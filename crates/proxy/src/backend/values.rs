//! VictoriaLogs' answers of names and values (`field_names`,
//! `field_values`, `stream_field_names`, `stream_field_values`, `streams`):
//! `{"values":[{"value":"app","hits":3}]}`, read once into [`Hit`]s.

use super::BackendError;

/// One name or value with the number of entries that have it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Hit {
    /// The name, value or stream.
    pub value: String,
    /// Entries with it (0 when VictoriaLogs leaves it out).
    #[serde(default)]
    pub hits: u64,
}

#[derive(serde::Deserialize)]
struct Values {
    values: Vec<Hit>,
}

/// Reads a values answer.
///
/// # Errors
/// [`BackendError::Body`] when it is not one.
pub fn parse(body: &[u8]) -> Result<Vec<Hit>, BackendError> {
    serde_json::from_slice::<Values>(body)
        .map(|v| v.values)
        .map_err(|e| BackendError::Body(format!("invalid response from VictoriaLogs: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_values_with_escapes_and_missing_hits() {
        let v = parse(br#"{"values":[{"value":"a\"x","hits":2},{"value":"b"}]}"#).unwrap();
        assert_eq!(
            v,
            [
                Hit {
                    value: "a\"x".into(),
                    hits: 2
                },
                Hit {
                    value: "b".into(),
                    hits: 0
                }
            ]
        );
        assert!(parse(b"[1]").is_err());
    }
}
