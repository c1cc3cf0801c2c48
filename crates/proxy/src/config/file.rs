//! `--config-file`: the same settings as the flags, in YAML.
//!
//! Keys are the flag names without `--`, with `_` or `-` (`backend_timeout: 2m`
//! or `backend-timeout: 2m`); values are scalars written as on the command
//! line. Precedence is flag > `LOKIVL_*` variable > file > default: the file
//! only fills settings that neither the command line nor the environment set.
//! Unknown keys are errors, so a typo cannot silently fall back to a default.

use std::path::Path;

/// Why the configuration file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// The YAML does not parse or is not a mapping of scalars.
    #[error("config file {path}: {reason}")]
    Syntax {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A key that is not a setting.
    #[error("config file {path}: unknown setting {key:?}")]
    UnknownKey {
        /// The file.
        path: String,
        /// The key as written.
        key: String,
    },
}

/// One setting from the file: the clap argument id (`backend_timeout`) and its value.
pub type Entry = (String, String);

/// Reads `path` into `(id, value)` pairs; `known` tells whether an id is a setting.
///
/// # Errors
/// [`FileError`] for unreadable files, bad YAML, non-scalar values or unknown keys.
pub fn read(path: &Path, known: impl Fn(&str) -> bool) -> Result<Vec<Entry>, FileError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| FileError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    parse(&text, &shown, known)
}

/// Parses YAML text (see [`read`]).
///
/// # Errors
/// As [`read`], without the I/O case.
pub fn parse(
    text: &str,
    path: &str,
    known: impl Fn(&str) -> bool,
) -> Result<Vec<Entry>, FileError> {
    let syntax = |reason: String| FileError::Syntax {
        path: path.to_owned(),
        reason,
    };
    let value: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(text).map_err(|e| syntax(e.to_string()))?;
    let map = match value {
        serde_yaml_ng::Value::Null => return Ok(Vec::new()),
        serde_yaml_ng::Value::Mapping(m) => m,
        _ => return Err(syntax("expected a mapping of setting: value".to_owned())),
    };
    let mut out = Vec::with_capacity(map.len());
    for (k, v) in map {
        let serde_yaml_ng::Value::String(key) = k else {
            return Err(syntax(format!("setting names must be strings, got {k:?}")));
        };
        let id = key.replace('-', "_");
        if id == "config_file" || !known(&id) {
            return Err(FileError::UnknownKey {
                path: path.to_owned(),
                key,
            });
        }
        let value = match v {
            serde_yaml_ng::Value::String(s) => s,
            serde_yaml_ng::Value::Number(n) => n.to_string(),
            serde_yaml_ng::Value::Bool(b) => b.to_string(),
            // `key:` with no value: leave the setting at its default.
            serde_yaml_ng::Value::Null => continue,
            other => {
                return Err(syntax(format!(
                    "{key}: expected a single value, got {other:?}"
                )));
            }
        };
        out.push((id, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(id: &str) -> bool {
        matches!(
            id,
            "listen" | "backend_timeout" | "enable_push" | "max_inflight"
        )
    }

    #[test]
    fn scalars_and_dashes() {
        let e = parse(
            "listen: 127.0.0.1:3100\nbackend-timeout: 2m\nenable_push: true\nmax_inflight: 10\n",
            "f",
            known,
        )
        .unwrap();
        assert_eq!(
            e,
            [
                ("listen".into(), "127.0.0.1:3100".into()),
                ("backend_timeout".into(), "2m".into()),
                ("enable_push".into(), "true".into()),
                ("max_inflight".into(), "10".into()),
            ]
        );
        assert!(parse("", "f", known).unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(matches!(
            parse("listn: x\n", "f", known),
            Err(FileError::UnknownKey { key, .. }) if key == "listn"
        ));
        assert!(matches!(
            parse("config_file: x\n", "f", known),
            Err(FileError::UnknownKey { .. })
        ));
        assert!(matches!(
            parse("listen: [a, b]\n", "f", known),
            Err(FileError::Syntax { .. })
        ));
        assert!(matches!(
            parse("- a\n", "f", known),
            Err(FileError::Syntax { .. })
        ));
        assert!(matches!(
            parse("a: : :\n", "f", known),
            Err(FileError::Syntax { .. })
        ));
    }
}
