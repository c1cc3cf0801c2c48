//! Line filters evaluated in the proxy: after a stage that rewrote the line,
//! and the `ip()` and pattern filters VictoriaLogs has no exact form for.

use logql_parser::{LineFilter, LineFilterOp, LineFilterValue};
use regex::Regex;

use super::ip::{self, IpMatcher};
use super::pattern::Pattern;

/// One alternative of an `or` chain.
#[derive(Debug, Clone)]
enum Alt {
    /// A substring searcher built once per query, not once per line
    /// (boxed: it is much larger than the other variants).
    Contains(Box<memchr::memmem::Finder<'static>>),
    Regex(Regex),
    Ip(IpMatcher),
    Pattern(Pattern),
}

/// A compiled line filter with its `or` alternatives.
#[derive(Debug, Clone)]
pub struct LineFilterStep {
    negate: bool,
    /// Empty means "every line" (all alternatives were empty literals).
    alts: Vec<Alt>,
}

impl LineFilterStep {
    /// Compiles a filter.
    ///
    /// # Errors
    /// An invalid regex, `ip()` or pattern, with Loki-like text.
    pub fn new(f: &LineFilter) -> Result<Self, String> {
        let negate = matches!(
            f.op,
            LineFilterOp::NotContains | LineFilterOp::NotRegex | LineFilterOp::NotPattern
        );
        let mut alts = Vec::with_capacity(f.values.len());
        for v in &f.values {
            match v {
                LineFilterValue::Ip(p) => alts.push(Alt::Ip(ip::parse(p)?)),
                // As in Loki, an empty literal drops out of an `or` chain.
                LineFilterValue::Literal(s) if s.is_empty() => {}
                LineFilterValue::Literal(s) => alts.push(match f.op {
                    LineFilterOp::Contains | LineFilterOp::NotContains => Alt::Contains(Box::new(
                        memchr::memmem::Finder::new(s.as_bytes()).into_owned(),
                    )),
                    LineFilterOp::Regex | LineFilterOp::NotRegex => {
                        Alt::Regex(Regex::new(s).map_err(|e| format!("invalid regex {s:?}: {e}"))?)
                    }
                    LineFilterOp::Pattern | LineFilterOp::NotPattern => {
                        Alt::Pattern(Pattern::parse(s, true)?)
                    }
                }),
            }
        }
        Ok(Self { negate, alts })
    }

    /// Whether `line` passes.
    pub fn keep(&self, line: &str) -> bool {
        if self.alts.is_empty() {
            return !self.negate;
        }
        let hit = self.alts.iter().any(|a| match a {
            Alt::Contains(f) => f.find(line.as_bytes()).is_some(),
            Alt::Regex(r) => r.is_match(line),
            Alt::Ip(m) => m.matches_in(line),
            Alt::Pattern(p) => p.test(line),
        });
        hit != self.negate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(op: LineFilterOp, vals: &[&str]) -> LineFilterStep {
        LineFilterStep::new(&LineFilter {
            op,
            values: vals
                .iter()
                .map(|v| LineFilterValue::Literal((*v).into()))
                .collect(),
        })
        .unwrap()
    }

    #[test]
    fn substring_regex_and_or_chains() {
        assert!(step(LineFilterOp::Contains, &["[ERR"]).keep("a [ERROR] b"));
        assert!(step(LineFilterOp::Contains, &["x", "b"]).keep("abc"));
        assert!(!step(LineFilterOp::NotContains, &["x", "b"]).keep("abc"));
        assert!(step(LineFilterOp::NotContains, &["x", "y"]).keep("abc"));
        assert!(step(LineFilterOp::Regex, &["a.c"]).keep("zabcz"));
        assert!(!step(LineFilterOp::NotRegex, &["b"]).keep("abc"));
        assert!(step(LineFilterOp::Contains, &[""]).keep("any"));
        assert!(!step(LineFilterOp::NotContains, &[""]).keep("any"));
        assert!(step(LineFilterOp::Pattern, &["<_> b <_>"]).keep("a b c"));
        assert!(step(LineFilterOp::NotPattern, &["<_> b"]).keep("a b c"));
    }

    #[test]
    fn ip_filters() {
        let f = LineFilterStep::new(&LineFilter {
            op: LineFilterOp::NotContains,
            values: vec![LineFilterValue::Ip("10.0.0.0/8".into())],
        })
        .unwrap();
        assert!(!f.keep("src=10.2.3.4"));
        assert!(f.keep("src=172.16.0.1"));
    }
}
