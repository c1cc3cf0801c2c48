//! Parse errors carrying Loki's exact wording.

/// A LogQL parse error. `Display` prints Loki's text, which Grafana shows verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// An error with a position: `parse error at line 1, col 12: syntax error: unexpected …`.
    ///
    /// `line` may be 0: Loki's lexer reports line 0 for tokens it reads
    /// character by character, and lokivl reproduces that.
    #[error("parse error at line {line}, col {col}: {msg}")]
    Syntax {
        /// Line as Loki reports it (1-based, or 0).
        line: usize,
        /// Column, 1-based, in characters.
        col: usize,
        /// The message after the position.
        msg: String,
    },
    /// A semantic error without position: `parse error : <msg>`.
    #[error("parse error : {0}")]
    Semantic(String),
    /// A regular expression RE2 rejects; Loki refuses the query at parse time.
    ///
    /// Prints `parse error : error parsing regexp: …` for a matcher or label
    /// filter, and `parse error : stage '<line filters>' : error parsing
    /// regexp: …` for a line filter, as Loki does.
    #[error("parse error : {}{msg}", stage_prefix(.stage.as_deref()))]
    InvalidRegex {
        /// For a line filter: the query's line filters as Loki prints them.
        stage: Option<String>,
        /// Go's `regexp` error text.
        msg: String,
    },
}

fn stage_prefix(stage: Option<&str>) -> String {
    stage.map(|s| format!("stage '{s}' : ")).unwrap_or_default()
}
