//! `| regexp "(?P<name>…)"`: named groups become parsed labels.

use regex::Regex;

use super::hints::Hints;
use super::labels::{Category, EXTRACTED, LabelsBuilder};

/// A compiled `regexp` parser.
#[derive(Debug, Clone)]
pub struct RegexpParser {
    re: Regex,
    /// `(group index, label name)` of every named group.
    names: Vec<(usize, String)>,
}

impl RegexpParser {
    /// Compiles the regex; it must have at least one named group.
    ///
    /// # Errors
    /// Loki's messages for a regex without named captures or with an invalid
    /// or repeated name.
    pub fn new(re: &str) -> Result<Self, String> {
        let compiled = Regex::new(re).map_err(|e| format!("error parsing regexp: {e}"))?;
        let mut names: Vec<(usize, String)> = Vec::new();
        for (i, n) in compiled.capture_names().enumerate() {
            let Some(n) = n else { continue };
            if !crate::labels::is_valid_label_name(n) {
                return Err(format!("invalid extracted label name '{n}'"));
            }
            if names.iter().any(|(_, m)| m == n) {
                return Err(format!("duplicate extracted label name '{n}'"));
            }
            names.push((i, n.to_owned()));
        }
        if names.is_empty() {
            return Err("at least one named capture must be supplied".into());
        }
        Ok(Self {
            re: compiled,
            names,
        })
    }

    /// Extracts the groups of the first match; no match sets nothing (the
    /// entry is kept). A group that did not take part yields `""`.
    /// `false` when a hint filter drops the line.
    pub fn process(&self, line: &str, lbs: &mut LabelsBuilder, hints: &Hints) -> bool {
        let Some(caps) = self.re.captures(line) else {
            return true;
        };
        let mut key = String::new();
        for (i, name) in &self.names {
            let value = caps.get(*i).map_or("", |m| m.as_str());
            key.clear();
            key.push_str(name);
            if lbs.collides(name) {
                key.push_str(EXTRACTED);
            }
            if lbs.extracted(&key) || !hints.extract(&key) {
                continue;
            }
            lbs.set(Category::Parsed, &key, value);
            if !hints.keep(&key, lbs) {
                return false;
            }
        }
        true
    }
}
