//! Reading NDJSON lines as flat objects of string fields, in place.
//!
//! The one line reader behind `stats` answers ([`super::stats_rows`]) and
//! the per-tenant answers a fan-out merges: simd-json parses each line in
//! place, so names and values are `&str`s into the body, and one field
//! vector is reused for every line.

use simd_json::{Buffers, Node, Tape};

/// Why a line is not a flat object: its 1-based number and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number in the body.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Calls `each` with the string fields of every non-empty line of `body`
/// (surrounding ASCII whitespace, `\r\n` included, is ignored). Values that
/// are not strings are skipped.
///
/// # Errors
/// `Err(Ok(LineError))` for the first line that is not a JSON object,
/// `Err(Err(e))` when `each` fails.
pub fn for_each_object<'a, E>(
    body: &'a mut [u8],
    mut each: impl FnMut(&[(&'a str, &'a str)]) -> Result<(), E>,
) -> Result<(), Result<LineError, E>> {
    let mut buffers = Buffers::new(1024);
    let mut tape: Tape<'a> = Tape(Vec::new());
    let mut fields: Vec<(&'a str, &'a str)> = Vec::new();
    for (lineno, line) in body.split_mut(|&b| b == b'\n').enumerate() {
        let start = line
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(line.len());
        let end = line
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(start, |i| i + 1);
        let line = &mut line[start..end];
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| {
            Err(Ok(LineError {
                line: lineno + 1,
                reason,
            }))
        };
        tape = tape.reset();
        if let Err(e) = simd_json::fill_tape(line, &mut buffers, &mut tape) {
            return bad(e.to_string());
        }
        fields.clear();
        if let Err(e) = object_fields(&tape.0, &mut fields) {
            return bad(e.to_owned());
        }
        each(&fields).map_err(Err)?;
    }
    Ok(())
}

fn object_fields<'a>(
    nodes: &[Node<'a>],
    fields: &mut Vec<(&'a str, &'a str)>,
) -> Result<(), &'static str> {
    let Some(&Node::Object { len, .. }) = nodes.first() else {
        return Err("expected a JSON object");
    };
    let mut i = 1;
    for _ in 0..len {
        let Some(&Node::String(key)) = nodes.get(i) else {
            return Err("malformed object");
        };
        match nodes.get(i + 1) {
            Some(&Node::String(v)) => {
                fields.push((key, v));
                i += 2;
            }
            Some(Node::Static(_)) => i += 2,
            Some(&Node::Object { count, .. } | &Node::Array { count, .. }) => i += 2 + count,
            None => return Err("malformed object"),
        }
    }
    Ok(())
}
