//! The pest grammar (`logql.pest`); its `Pairs` never leave the crate.
//!
//! It is generated twice, differing only in `identifier`. The strict parser
//! is Loki's grammar, where a keyword is never an identifier. The lax parser
//! accepts keywords as identifiers, which saves a case-insensitive match per
//! keyword at every identifier (a tenth of a typical parse). Queries run
//! through the lax parser; a name that turns out to be a keyword (see
//! [`is_keyword`]) sends the query to the strict parser, which decides and
//! locates the error as Loki does. Where the strict parser succeeds the lax
//! one builds the same tree, as every choice that could take a keyword
//! tries the keyword reading first.

#![allow(missing_docs, unreachable_pub)]

/// The fast parser, used to build every tree.
pub(crate) mod lax {
    /// The derived pest parser for LogQL, identifiers unchecked.
    #[derive(pest_derive::Parser)]
    #[grammar = "logql.pest"]
    #[grammar = "ident_lax.pest"]
    pub(crate) struct LogqlParser;
}

/// Loki's grammar, used to find the error in a query Loki rejects.
pub(crate) mod strict {
    /// The derived pest parser for LogQL, keywords never identifiers.
    #[derive(pest_derive::Parser)]
    #[grammar = "logql.pest"]
    #[grammar = "ident_strict.pest"]
    pub(crate) struct LogqlParser;
}

pub(crate) use lax::{LogqlParser, Rule};

/// LogQL's keywords: the words `keyword` in `logql.pest` matches (compared
/// case-insensitively), which Loki's lexer never reads as identifiers. The
/// syntax-error lexer ([`crate::lexer`]) uses the same list.
pub(crate) const KEYWORDS: [&str; 24] = [
    "by",
    "without",
    "bool",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "or",
    "and",
    "unless",
    "json",
    "regexp",
    "logfmt",
    "unpack",
    "pattern",
    "label_format",
    "line_format",
    "decolorize",
    "drop",
    "keep",
    "unwrap",
    "offset",
    "variants",
    "of",
];

/// Words Loki's lexer also makes tokens of its own (`ip(…)`, `label_replace(…)`)
/// that the grammar reads as function names only before `(`; the
/// syntax-error lexer names them as Loki does.
pub(crate) const LEXER_ONLY_KEYWORDS: [&str; 2] = ["ip", "label_replace"];

/// Whether a whole identifier word is one the strict grammar refuses.
pub(crate) fn is_keyword(word: &str) -> bool {
    word.len() <= 12 && KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use pest::Parser as _;

    #[test]
    fn keyword_list_matches_the_grammar() {
        for k in super::KEYWORDS {
            for w in [k.to_string(), k.to_ascii_uppercase()] {
                assert!(super::is_keyword(&w));
                let strict = super::strict::LogqlParser::parse(super::strict::Rule::identifier, &w);
                assert!(
                    strict.is_err(),
                    "{w} is an identifier for the strict grammar"
                );
                let lax = super::lax::LogqlParser::parse(super::lax::Rule::identifier, &w);
                assert!(lax.is_ok(), "{w} is not an identifier for the lax grammar");
            }
        }
        for w in ["level", "byx", "of_", "on1", "app"] {
            assert!(!super::is_keyword(w));
            let strict = super::strict::LogqlParser::parse(super::strict::Rule::identifier, w);
            assert!(strict.is_ok_and(|p| p.as_str() == w), "{w}");
        }
    }
}
