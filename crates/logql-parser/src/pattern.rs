//! Loki's pattern language (`<name>`, `<_>`, literals), parsed as Loki's
//! `pkg/logql/log/pattern` does. Loki checks a `| pattern` parser while it
//! parses the query (`invalid pattern parser: …`), so the check lives with
//! the parser; the proxy matches lines with the nodes.

/// One part of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternNode {
    /// Text matched literally.
    Literal(String),
    /// A capture; `None` for `<_>`.
    Capture(Option<String>),
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses a pattern. `<x>` with a valid identifier is a capture; any
/// other `<` is literal text.
///
/// # Errors
/// Loki's messages for consecutive captures, no capture at all (parser),
/// or repeated names.
pub fn parse_pattern(text: &str, line_filter: bool) -> Result<Vec<PatternNode>, String> {
    let mut nodes: Vec<PatternNode> = Vec::new();
    let mut rest = text;
    let mut lit = String::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('<')
            && let Some(end) = after.find('>')
            && is_ident(&after[..end])
        {
            if !lit.is_empty() {
                nodes.push(PatternNode::Literal(std::mem::take(&mut lit)));
            }
            let name = &after[..end];
            nodes.push(PatternNode::Capture((name != "_").then(|| name.to_owned())));
            rest = &after[end + 1..];
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        lit.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if !lit.is_empty() {
        nodes.push(PatternNode::Literal(lit));
    }
    for w in nodes.windows(2) {
        if let (PatternNode::Capture(a), PatternNode::Capture(b)) = (&w[0], &w[1]) {
            let show = |c: &Option<String>| format!("<{}>", c.as_deref().unwrap_or("_"));
            return Err(format!(
                "found consecutive capture '{}{}': invalid expression",
                show(a),
                show(b)
            ));
        }
    }
    let names: Vec<&String> = nodes
        .iter()
        .filter_map(|n| match n {
            PatternNode::Capture(Some(s)) => Some(s),
            _ => None,
        })
        .collect();
    if line_filter {
        if let Some(n) = names.first() {
            return Err(format!("named captures are not allowed: found '<{n}>'"));
        }
    } else {
        // `<_>` does not count: Loki wants a named capture.
        if names.is_empty() {
            return Err("at least one capture is required".into());
        }
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(format!("duplicate capture name ({n}): invalid expression"));
            }
        }
    }
    Ok(nodes)
}
