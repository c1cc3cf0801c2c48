//! Loki's pattern language (`<name>`, `<_>`, literals) for the `pattern`
//! parser and the `|>`/`!>` line filters (grafana/loki `pkg/logql/log/pattern`).

/// One part of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Literal(String),
    /// A capture; `None` for `<_>`.
    Capture(Option<String>),
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    nodes: Vec<Node>,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Pattern {
    /// Parses a pattern. `<x>` with a valid identifier is a capture; any
    /// other `<` is literal text.
    ///
    /// # Errors
    /// Loki's messages for consecutive captures, no capture at all (parser),
    /// or repeated names.
    pub fn parse(text: &str, line_filter: bool) -> Result<Self, String> {
        let mut nodes: Vec<Node> = Vec::new();
        let mut rest = text;
        let mut lit = String::new();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('<')
                && let Some(end) = after.find('>')
                && is_ident(&after[..end])
            {
                if !lit.is_empty() {
                    nodes.push(Node::Literal(std::mem::take(&mut lit)));
                }
                let name = &after[..end];
                nodes.push(Node::Capture((name != "_").then(|| name.to_owned())));
                rest = &after[end + 1..];
                continue;
            }
            let c = rest.chars().next().unwrap_or_default();
            lit.push(c);
            rest = &rest[c.len_utf8()..];
        }
        if !lit.is_empty() {
            nodes.push(Node::Literal(lit));
        }
        for w in nodes.windows(2) {
            if matches!((&w[0], &w[1]), (Node::Capture(_), Node::Capture(_))) {
                return Err("found consecutive capture: invalid expression".into());
            }
        }
        let names: Vec<&String> = nodes
            .iter()
            .filter_map(|n| match n {
                Node::Capture(Some(s)) => Some(s),
                _ => None,
            })
            .collect();
        if line_filter {
            if !names.is_empty() {
                return Err("named captures are not allowed in pattern line filters".into());
            }
        } else {
            if !nodes.iter().any(|n| matches!(n, Node::Capture(_))) {
                return Err("at least one capture is required: invalid expression".into());
            }
            for (i, n) in names.iter().enumerate() {
                if names[..i].contains(n) {
                    return Err(format!("duplicate capture name ({n}): invalid expression"));
                }
            }
        }
        Ok(Pattern { nodes })
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
