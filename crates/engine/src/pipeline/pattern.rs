//! Loki's pattern language (`<name>`, `<_>`, literals) for the `pattern`
//! parser and the `|>`/`!>` line filters (grafana/loki `pkg/logql/log/pattern`).

use logql_parser::PatternNode as Node;

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    nodes: Vec<Node>,
}

impl Pattern {
    /// Parses a pattern ([`logql_parser::parse_pattern`]).
    ///
    /// # Errors
    /// Loki's messages for consecutive captures, no named capture (parser),
    /// or repeated names.
    pub fn parse(text: &str, line_filter: bool) -> Result<Self, String> {
        logql_parser::parse_pattern(text, line_filter).map(|nodes| Pattern { nodes })
    }

    /// The named captures in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().filter_map(|n| match n {
            Node::Capture(Some(s)) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The parser's matches: named captures in order, possibly fewer than
    /// [`Pattern::names`] when the line ends early (Loki's `Matches`).
    pub fn captures<'a>(&self, line: &'a str, out: &mut Vec<&'a str>) {
        out.clear();
        if line.is_empty() || self.nodes.is_empty() {
            return;
        }
        let mut input = line;
        let mut nodes = &self.nodes[..];
        if let Node::Literal(l) = &nodes[0] {
            if !input.starts_with(l.as_str()) {
                return;
            }
            input = &input[l.len()..];
            nodes = &nodes[1..];
        }
        while !nodes.is_empty() {
            let Node::Capture(name) = &nodes[0] else {
                return;
            };
            if nodes.len() == 1 {
                if name.is_some() {
                    out.push(input);
                }
                return;
            }
            let Node::Literal(l) = &nodes[1] else {
                return;
            };
            nodes = &nodes[2..];
            match input.find(l.as_str()) {
                None => {
                    if name.is_some() {
                        out.push(input);
                    }
                    return;
                }
                Some(i) => {
                    if name.is_some() {
                        out.push(&input[..i]);
                    }
                    input = &input[i + l.len()..];
                }
            }
        }
    }

    /// The line filter's test (Loki's `Test`): literals in order, no empty
    /// capture, and the end anchored as the pattern ends.
    pub fn test(&self, line: &str) -> bool {
        if line.is_empty() || self.nodes.is_empty() {
            return line.is_empty() && self.nodes.is_empty();
        }
        let mut off = 0;
        for (i, n) in self.nodes.iter().enumerate() {
            let Node::Literal(l) = n else { continue };
            let Some(j) = line[off..].find(l.as_str()) else {
                return false;
            };
            if i != 0 && j == 0 {
                return false;
            }
            off += j + l.len();
        }
        let req_rem = matches!(self.nodes.last(), Some(Node::Capture(_)));
        req_rem == (off != line.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_captures() {
        let p = Pattern::parse(r#"<ip> - <_> [<ts>] "<method> <path> <_>""#, false).unwrap();
        let mut out = Vec::new();
        p.captures(r#"1.2.3.4 - - [01/Jan] "GET /x HTTP/1.1" 200"#, &mut out);
        assert_eq!(out, vec!["1.2.3.4", "01/Jan", "GET", "/x"]);
        assert_eq!(
            p.names().collect::<Vec<_>>(),
            vec!["ip", "ts", "method", "path"]
        );
        p.captures("no dash here", &mut out);
        assert_eq!(out, vec!["no dash here"]);
        assert!(Pattern::parse("<a><b>", false).is_err());
        assert!(Pattern::parse("no capture", false).is_err());
        assert!(Pattern::parse("<a> <a>", false).is_err());
    }

    #[test]
    fn line_filter_test() {
        let p = Pattern::parse("<_> bar", true).unwrap();
        assert!(!p.test("foo bar baz"));
        assert!(p.test("foo bar"));
        assert!(Pattern::parse("<_> baz", true).unwrap().test("foo bar baz"));
        assert!(Pattern::parse("foo <_>", true).unwrap().test("foo bar baz"));
        assert!(!Pattern::parse("<_> bar <_>", true).unwrap().test(" bar "));
        assert!(Pattern::parse("<x>", true).is_err());
    }
}
