//! The import graph of lokivl's own sources, read from `use` paths.
//!
//! The architecture keeps the data path readable as folders: no import cycle
//! through more than two files, and no module importing from a layer above
//! it. Rust allows both inside a crate, so they are checked here, on the
//! text of `crates/*/src`, with the same reading a reviewer would do:
//! `crate::a::b` and `super::x` paths (in `use` items and in code),
//! resolved to the longest prefix that names a module file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One crate's module files and the edges between them.
pub(crate) struct Graph {
    /// Module path (`a::b`) → file, relative to the crate's `src`.
    pub(crate) files: BTreeMap<Vec<String>, PathBuf>,
    /// File → files it imports from (never itself).
    pub(crate) edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// Reads every `.rs` file under `src` (except `main.rs` and `bin/`).
pub(crate) fn read_crate(src: &Path) -> Graph {
    let mut files = BTreeMap::new();
    walk(src, src, &mut files);
    let by_module: BTreeMap<Vec<String>, PathBuf> = files.clone();
    let mut edges = BTreeMap::new();
    for (module, file) in &by_module {
        let text = fs::read_to_string(src.join(file)).unwrap();
        let mut targets = BTreeSet::new();
        for path in paths_in(&strip_comments(&text), module) {
            if let Some(target) = resolve(&by_module, &path)
                && &target != file
            {
                targets.insert(target);
            }
        }
        edges.insert(file.clone(), targets);
    }
    Graph { files, edges }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            walk(root, &p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if rel == Path::new("main.rs") {
                continue;
            }
            out.insert(module_of(&rel), rel);
        }
    }
}

/// `lib.rs` → [], `a.rs` and `a/mod.rs` → [a], `a/b.rs` → [a, b].
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The text without comments and string literals (their content could
/// look like a path).
fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            // A raw string's `r#"` prefix is kept; its content is skipped
            // like any string's, up to the closing quote and hashes.
            let hashes = count_hashes_before(b, i);
            i += 1;
            while i < b.len() {
                if b[i] == b'\\' && hashes == 0 {
                    i += 2;
                    continue;
                }
                if b[i] == b'"' && b[i + 1..].iter().take(hashes).all(|&c| c == b'#') {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3; // a char literal such as '"' or '{'
            out.push_str("' '");
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn count_hashes_before(b: &[u8], quote: usize) -> usize {
    let mut n = 0;
    while quote > n && b[quote - 1 - n] == b'#' {
        n += 1;
    }
    if quote > n && b[quote - 1 - n] == b'r' {
        n
    } else {
        0
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every absolute module path the text names through `crate::` or
/// `super::`. A module's own children (`child::x`, `self::child::x`) are its
/// parts, not its dependencies: a parent that re-exports or calls them forms
/// no cycle with them, so paths relative to the module are not read.
fn paths_in(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Inline `mod name {` blocks: (brace depth at open, name).
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let at_word = i == 0 || !is_ident(b[i - 1]);
        if b[i] == b'{' {
            depth += 1;
            i += 1;
            continue;
        }
        if b[i] == b'}' {
            depth = depth.saturating_sub(1);
            if inline.last().is_some_and(|(d, _)| *d == depth) {
                inline.pop();
            }
            i += 1;
            continue;
        }
        if at_word && text[i..].starts_with("mod ") {
            let rest = &text[i + 4..];
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if after.starts_with('{') {
                inline.push((depth, name));
            }
        }
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(_, n)| n.clone()))
            .collect();
        let starts = ["crate::", "super::"];
        if at_word && let Some(s) = starts.iter().find(|s| text[i..].starts_with(*s)) {
            let (paths, end) = parse_tree(text, i);
            for p in paths {
                if let Some(abs) = absolute(&p, &here) {
                    out.push(abs);
                }
            }
            i = end.max(i + s.len());
            continue;
        }
        i += 1;
    }
    out
}

/// Parses a path tree starting at `i` (`a::b::{c, d::e}`) into its leaves.
fn parse_tree(text: &str, i: usize) -> (Vec<Vec<String>>, usize) {
    let b = text.as_bytes();
    let mut prefix = Vec::new();
    let mut j = i;
    loop {
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < b.len() && b[j] == b'{' {
            let mut leaves = Vec::new();
            j += 1;
            loop {
                while j < b.len() && (b[j].is_ascii_whitespace() || b[j] == b',') {
                    j += 1;
                }
                if j >= b.len() || b[j] == b'}' {
                    j += 1;
                    break;
                }
                let (sub, end) = parse_tree(text, j);
                for s in sub {
                    let mut p = prefix.clone();
                    p.extend(s);
                    leaves.push(p);
                }
                j = end;
                // Skip `as name` and anything else up to the separator.
                while j < b.len() && b[j] != b',' && b[j] != b'}' {
                    j += 1;
                }
            }
            return (leaves, j);
        }
        let start = j;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        if start == j {
            break;
        }
        prefix.push(text[start..j].to_owned());
        if text[j..].starts_with("::") {
            j += 2;
        } else {
            break;
        }
    }
    (vec![prefix], j)
}

fn absolute(path: &[String], here: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = here.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file of the longest module prefix of `path`.
fn resolve(files: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| files.get(&path[..n]).cloned())
        .or_else(|| files.get(&Vec::new()).cloned().filter(|_| path.is_empty()))
}

/// Strongly connected components with more than one file (Tarjan).
pub(crate) fn cycles(g: &Graph) -> Vec<Vec<PathBuf>> {
    struct T<'g> {
        g: &'g Graph,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on: BTreeSet<&'g PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g PathBuf) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in &t.g.edges[v] {
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}
