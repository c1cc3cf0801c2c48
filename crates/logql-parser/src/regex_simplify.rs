//! Whether Loki turns a regex label filter into plain string filters.
//!
//! Loki parses a `label=~"re"` filter's regex and, when the pattern is only
//! literals, `.*`, `.+` and alternations of those, replaces it by equality or
//! contains filters; such a filter prints as a quoted matcher
//! (`x=~"abc.*"`). Any other pattern stays a regex and prints in backticks
//! (`x=~`a.+``). This module decides which, by walking the parsed pattern
//! the way Loki's simplifier walks Go's `regexp/syntax` tree.

use regex_syntax::hir::{Class, Hir, HirKind, Literal};

/// True when Loki keeps `pattern` as a regex (printed in backticks).
pub(crate) fn stays_regex(pattern: &str) -> bool {
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
    else {
        // Loki falls back to the plain matcher when the pattern does not parse.
        return false;
    };
    !simplifies(&hir)
}

/// A literal run, possibly case-insensitive, as Go's parser would merge it.
fn literal_like(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Literal(Literal(_)) => true,
        HirKind::Class(c) => is_folded_char(c),
        HirKind::Concat(subs) => subs.iter().all(literal_like),
        _ => false,
    }
}

/// A class that is exactly the case variants of one character (`(?i)a` → `[Aa]`).
fn is_folded_char(c: &Class) -> bool {
    let chars: Vec<char> = match c {
        Class::Unicode(u) => {
            let mut v = Vec::new();
            for r in u.ranges() {
                for ch in r.start()..=r.end() {
                    v.push(ch);
                    if v.len() > 4 {
                        return false;
                    }
                }
            }
            v
        }
        Class::Bytes(b) => {
            let mut v = Vec::new();
            for r in b.ranges() {
                for ch in r.start()..=r.end() {
                    v.push(char::from(ch));
                    if v.len() > 4 {
                        return false;
                    }
                }
            }
            v
        }
    };
    if chars.len() < 2 {
        return false;
    }
    // Compare both ways: `ſ` only upper-cases to `S`, the Kelvin sign only lower-cases to `k`.
    let same = |f: fn(&char) -> String| {
        let first = f(&chars[0]);
        chars.iter().all(|c| f(c) == first)
    };
    same(|c| c.to_lowercase().collect()) || same(|c| c.to_uppercase().collect())
}

/// `.*` (no `s` flag: any char but newline).
fn is_any_not_nl(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Class(Class::Unicode(u)) => {
            let r = u.ranges();
            r.len() == 2
                && r[0].start() == '\0'
                && r[0].end() == '\x09'
                && r[1].start() == '\x0b'
                && r[1].end() == char::MAX
        }
        HirKind::Class(Class::Bytes(b)) => {
            let r = b.ranges();
            r.len() == 2
                && r[0].start() == 0
                && r[0].end() == 9
                && r[1].start() == 11
                && r[1].end() == 255
        }
        _ => false,
    }
}

fn is_star_any(h: &Hir, min: u32) -> bool {
    match h.kind() {
        HirKind::Repetition(r) => r.min == min && r.max.is_none() && is_any_not_nl(&r.sub),
        _ => false,
    }
}

fn unwrap_capture(h: &Hir) -> &Hir {
    match h.kind() {
        HirKind::Capture(c) => unwrap_capture(&c.sub),
        _ => h,
    }
}

fn simplifies(h: &Hir) -> bool {
    let h = unwrap_capture(h);
    if literal_like(h) {
        return true;
    }
    match h.kind() {
        HirKind::Empty => true,
        HirKind::Alternation(subs) => alternation_simplifies(subs),
        HirKind::Concat(subs) => concat_simplifies(subs),
        _ => is_star_any(h, 0) || is_star_any(h, 1),
    }
}

/// The plain literal text of a leg, if it is one.
fn literal_text(h: &Hir) -> Option<Vec<u8>> {
    match unwrap_capture(h).kind() {
        HirKind::Literal(Literal(b)) => Some(b.to_vec()),
        HirKind::Empty => Some(Vec::new()),
        HirKind::Concat(subs) => {
            let mut out = Vec::new();
            for s in subs {
                out.extend(literal_text(s)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// Go's parser merges adjacent one-character legs into a class and factors
/// common prefixes of adjacent literal legs (`abc|abd` → `ab[cd]`); either
/// leaves something Loki cannot simplify.
fn alternation_simplifies(subs: &[Hir]) -> bool {
    let texts: Vec<Option<Vec<u8>>> = subs.iter().map(literal_text).collect();
    literal_legs_ok(&texts) && subs.iter().all(simplifies)
}

fn literal_legs_ok(texts: &[Option<Vec<u8>>]) -> bool {
    // Two adjacent one-character legs become a character class.
    let one = |t: &Option<Vec<u8>>| t.as_ref().is_some_and(|t| t.len() == 1);
    if texts.windows(2).any(|w| one(&w[0]) && one(&w[1])) {
        return false;
    }
    let mut i = 0;
    while i < texts.len() {
        let Some(Some(first)) = texts.get(i).map(|t| t.as_ref().filter(|t| !t.is_empty())) else {
            i += 1;
            continue;
        };
        // The run of adjacent literal legs sharing `first`'s first byte.
        let mut j = i + 1;
        while let Some(Some(t)) = texts.get(j) {
            if t.first() != first.first() {
                break;
            }
            j += 1;
        }
        if j - i >= 2 {
            let run: Vec<&Vec<u8>> = texts[i..j].iter().flatten().collect();
            let lcp = (0..)
                .take_while(|&k| {
                    run.iter()
                        .all(|t| t.get(k).is_some() && t.get(k) == run[0].get(k))
                })
                .count();
            let rest: Vec<Option<Vec<u8>>> = run.iter().map(|t| Some(t[lcp..].to_vec())).collect();
            if !literal_legs_ok(&rest) {
                return false;
            }
        }
        i = j;
    }
    true
}

/// At most three parts, one literal run, the rest `.*`.
fn concat_simplifies(subs: &[Hir]) -> bool {
    let mut parts: Vec<&Hir> = Vec::new();
    let mut in_literal = false;
    for s in subs.iter().map(unwrap_capture) {
        if matches!(s.kind(), HirKind::Empty) {
            continue;
        }
        if literal_like(s) {
            if !in_literal {
                parts.push(s);
            }
            in_literal = true;
        } else {
            in_literal = false;
            parts.push(s);
        }
    }
    if parts.len() > 3 {
        return false;
    }
    let literals = parts.iter().filter(|p| literal_like(p)).count();
    literals == 1 && parts.iter().all(|p| literal_like(p) || is_star_any(p, 0))
}

#[cfg(test)]
mod tests {
    use super::stays_regex;

    #[test]
    fn matches_loki_printing() {
        // Verdicts recorded from Loki v3.7.8's format_query.
        for q in [
            "a.+", "^abc$", "a.*b", r"\d+", "a|b|c", "(?i)a|b", ".*.*", "a+", "[ab]", "a?",
            "(?s).*", ".+abc", "a|b", "a|b|cd", "abc|abd", "a|bc|bd",
        ] {
            assert!(stays_regex(q), "{q} stays a regex");
        }
        for q in [
            ".+",
            "(?i)a.*|UNSET",
            "(?i)abc",
            "a|b.*",
            "abc.*",
            ".*abc.*",
            ".*abc",
            "(abc)",
            "(?i).*",
            ".*|a",
            "a.*|b",
            r"a\.b",
            "",
            ".*",
            "ab|cd",
            "ab|c",
            "bar|buzz",
        ] {
            assert!(!stays_regex(q), "{q} is simplified");
        }
    }
}
