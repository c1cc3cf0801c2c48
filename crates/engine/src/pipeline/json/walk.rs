//! Walking nested JSON objects without recursion and in bounded work.
//!
//! Loki's `| json` recurses once per nested object (jsonparser's
//! `ObjectEach` inside its own callback) and finds each nested value's end
//! before walking it. Done the same way here, a line of a few hundred
//! thousand `{"a":` overflows a worker's stack and aborts the process, and a
//! deep line costs time quadratic in its length. This walk keeps one
//! resumable scanner per open object on a heap stack, visits members in
//! Loki's order with Loki's results and error texts, remembers block ends
//! once a line nests deeply, and charges what is left to a budget
//! proportional to the line (past it: [`TOO_COSTLY`], lokivl's own text).
//! [`get_value_in`] reads one value with those block ends and
//! [`object_each`] one object's members.

use std::borrow::Cow;

use crate::pipeline::json_scan::{
    Kind, MALFORMED_ARRAY, MALFORMED_ESCAPE, MALFORMED_JSON, MALFORMED_OBJECT, MALFORMED_STRING,
    MALFORMED_VALUE, UNKNOWN_VALUE_TYPE, Value, append_sanitized, block_end, next_token,
    string_end, token_end, unescape,
};

/// lokivl's own error text past the work budget of [`Blocks`]. Loki has no
/// such bound: every label name repeats its parents' keys, so a crafted line
/// costs it time and memory quadratic in the line's length.
pub(crate) const TOO_COSTLY: &str =
    "JSON line too costly to flatten: over 32 bytes of work per byte of line (lokivl bound)";
/// The budget of [`Blocks`]: this much work plus [`BUDGET_PER_BYTE`] per
/// byte of line. Real lines spend a few bytes per byte (label names
/// repeating their parents' keys).
const BUDGET_BASE: usize = 4 << 20;
/// See [`BUDGET_BASE`].
const BUDGET_PER_BYTE: usize = 32;
/// From this nesting depth on, [`Walker::walk`] remembers block ends: finding each
/// nested value's end anew costs the rest of the line once per level.
/// Shallower lines, nearly all of them, never touch the memory.
pub(crate) const REMEMBER_DEPTH: usize = 8;

/// One step of [`Members`].
pub(crate) enum Member<'a> {
    /// The next member: its (unescaped) key and its value.
    Item(Cow<'a, str>, Value<'a>),
    /// The object closed.
    End,
    /// The member with this key has a malformed value.
    BadValue(Cow<'a, str>, &'static str),
    /// The object itself is malformed.
    Fault(&'static str),
}

/// Where [`Members`] resumes.
#[derive(Debug, Clone, Copy)]
enum At {
    /// Before the opening brace.
    Start,
    /// Just past the value of the member returned last.
    After(usize),
    /// Past the end, or past a fault.
    Done,
}

/// jsonparser's `ObjectEach` as a resumable iterator. The checks after a
/// value run on the next call, that is after the caller walked the value,
/// in the order the recursive scanner makes them.
#[derive(Debug)]
pub(crate) struct Members<'a> {
    s: &'a str,
    at: At,
}

impl<'a> Members<'a> {
    /// Members of the object in `s` (which may hold text after it).
    pub(crate) fn new(s: &'a str) -> Self {
        Self { s, at: At::Start }
    }

    fn fault(&mut self, e: &'static str) -> Member<'a> {
        self.at = At::Done;
        Member::Fault(e)
    }

    /// The next member; nested block ends are found through `blocks` if given.
    pub(crate) fn next(&mut self, blocks: Option<&mut Blocks>) -> Member<'a> {
        let s = self.s;
        let d = s.as_bytes();
        let mut off = match self.at {
            At::Done => return Member::End,
            At::Start => {
                let Some(off) = next_token(d, 0) else {
                    return self.fault(MALFORMED_OBJECT);
                };
                if d[off] != b'{' {
                    return self.fault(MALFORMED_OBJECT);
                }
                let Some(off) = next_token(d, off + 1) else {
                    return self.fault(MALFORMED_JSON);
                };
                off
            }
            At::After(end) => {
                let Some(off) = next_token(d, end) else {
                    return self.fault(MALFORMED_ARRAY);
                };
                match d[off] {
                    b'}' => {
                        self.at = At::Done;
                        return Member::End;
                    }
                    b',' => {}
                    _ => return self.fault(MALFORMED_OBJECT),
                }
                let Some(off) = next_token(d, off + 1) else {
                    return self.fault(MALFORMED_ARRAY);
                };
                off
            }
        };
        match d[off] {
            b'"' => off += 1,
            b'}' => {
                self.at = At::Done;
                return Member::End;
            }
            _ => return self.fault(MALFORMED_OBJECT),
        }
        let Some((end, escaped)) = string_end(d, off) else {
            return self.fault(MALFORMED_JSON);
        };
        let raw_key = &s[off..end - 1];
        let key = if escaped {
            match unescape(raw_key) {
                Some(k) => Cow::Owned(k),
                None => return self.fault(MALFORMED_ESCAPE),
            }
        } else {
            Cow::Borrowed(raw_key)
        };
        match next_token(d, end) {
            Some(colon) if d[colon] == b':' => off = colon + 1,
            _ => return self.fault(MALFORMED_JSON),
        }
        match get_value_in(s, off, blocks) {
            Ok((value, end)) => {
                self.at = At::After(end);
                Member::Item(key, value)
            }
            Err(e) => {
                self.at = At::Done;
                Member::BadValue(key, e)
            }
        }
    }
}

/// Finds the ends of `{…}` and `[…]` blocks in one line, and keeps the
/// cost of a crafted line bounded.
///
/// Once told to remember, a scan records the end of every block it crosses,
/// so a deeper level's end is looked up instead of scanned again. Recorded
/// ends are exact: a scan started at a block the recording scan crossed
/// makes the same moves from there on. Scans above [`REMEMBER_DEPTH`] cost
/// at most that many passes over the line; what is left (recording scans,
/// which stray quotes in a malformed line can make miss the memory, and
/// label names repeating their parents' keys) is charged to a budget
/// proportional to the line; past it the walk fails with [`TOO_COSTLY`].
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    /// The line's address and length: slices given to [`Blocks::end`] are
    /// parts of it, so an address locates a byte in `ends`.
    base: usize,
    len: usize,
    /// By offset in the line of a block's opening byte: [`UNKNOWN`],
    /// [`UNCLOSED`], or the offset one past its closing byte. Filled only
    /// once a line nests deeply; capacity kept across lines.
    ends: Vec<u32>,
    /// Opening offsets of the recording scan, innermost last.
    open: Vec<u32>,
    remember: bool,
    spent: usize,
    budget: usize,
}

/// In [`Blocks`]' `ends`: no scan crossed this byte as an opening.
const UNKNOWN: u32 = 0;
/// In [`Blocks`]' `ends`: the line never closes this block.
const UNCLOSED: u32 = u32::MAX;

impl Blocks {
    /// Starts on a new line: forgets the previous line's ends and sets the
    /// budget from this line's length.
    pub(crate) fn start(&mut self, line: &str) {
        self.base = line.as_ptr() as usize;
        self.len = line.len();
        self.remember = false;
        self.spent = 0;
        self.budget = BUDGET_BASE.saturating_add(line.len().saturating_mul(BUDGET_PER_BYTE));
    }

    /// Records block ends from now on, for the rest of the line (a line
    /// too long for 32-bit offsets, which no log line is, is scanned anew).
    pub(crate) fn remember(&mut self) {
        if !self.remember && self.len < UNCLOSED as usize {
            self.remember = true;
            self.ends.clear();
            self.ends.resize(self.len, UNKNOWN);
        }
    }

    /// Charges `n` bytes of work, failing with [`TOO_COSTLY`] past the budget.
    pub(crate) fn charge(&mut self, n: usize) -> Result<(), &'static str> {
        self.spent = self.spent.saturating_add(n);
        if self.spent > self.budget {
            Err(TOO_COSTLY)
        } else {
            Ok(())
        }
    }

    /// [`block_end`] in `d` from `from`, looked up when a recording scan
    /// crossed `from`. `Err` only past the budget.
    pub(crate) fn end(
        &mut self,
        d: &[u8],
        from: usize,
        open: u8,
        close: u8,
    ) -> Result<Option<usize>, &'static str> {
        // Where `d` sits in the line; a slice of another text is scanned.
        let at = (d.as_ptr() as usize)
            .checked_sub(self.base)
            .filter(|&at| at + d.len() <= self.len);
        let Some(at) = at.filter(|_| self.remember) else {
            return Ok(block_end(d, from, open, close));
        };
        match self.ends[at + from] {
            UNKNOWN => {}
            // A block closing past the end of `d` does not close within it.
            UNCLOSED => return Ok(None),
            end => {
                let end = end as usize;
                return Ok((end <= at + d.len()).then(|| end - at));
            }
        }
        let end = self.record(d, at, from, open, close);
        self.charge(end.unwrap_or(d.len()) - from)?;
        Ok(end)
    }

    /// [`block_end`], recording the end of every `open` block it crosses;
    /// `d` starts at offset `at` of the line.
    fn record(&mut self, d: &[u8], at: usize, from: usize, open: u8, close: u8) -> Option<usize> {
        // Offsets fit: `remember` checked the line's length.
        let offset = |i: usize| (at + i) as u32;
        self.open.clear();
        let mut i = from;
        let end = loop {
            let Some(p) = d
                .get(i..)
                .and_then(|r| memchr::memchr3(b'"', open, close, r))
            else {
                break None;
            };
            i += p;
            match d[i] {
                b'"' => match string_end(d, i + 1) {
                    Some((e, _)) => i = e - 1,
                    None => break None,
                },
                c if c == open => self.open.push(offset(i)),
                // `d[from]` is `open`: every close up to the end has its opening.
                _ => {
                    if let Some(q) = self.open.pop() {
                        self.ends[q as usize] = offset(i + 1);
                        if self.open.is_empty() {
                            break Some(i + 1);
                        }
                    }
                }
            }
            i += 1;
        };
        for q in self.open.drain(..) {
            self.ends[q as usize] = UNCLOSED;
        }
        end
    }
}

/// What [`Walker::walk`] tells its visitor.
pub(crate) trait Visitor<'a> {
    /// A member at `depth` (0 in the line's own object); `key` holds its
    /// flattened, sanitised name, which the visitor may extend (the walk
    /// restores it). Returns whether to walk into an object value.
    ///
    /// # Errors
    /// Any text ends the walk with it.
    fn member(
        &mut self,
        key: &mut String,
        depth: usize,
        k: &str,
        v: Value<'a>,
    ) -> Result<bool, &'static str>;

    /// After each member, a walked object included (Loki's parser checks
    /// there whether every label it needs is found).
    ///
    /// # Errors
    /// Any text ends the walk with it.
    fn after(&mut self) -> Result<(), &'static str> {
        Ok(())
    }
}

/// An object open in a [`Walker::walk`]: its span in the line, where its scan
/// resumes, and the name length to restore when it closes.
#[derive(Debug, Clone, Copy)]
struct Frame {
    start: usize,
    end: usize,
    at: At,
    key_len: usize,
}

/// The reusable state of [`Walker::walk`]: kept across lines, so a walk allocates
/// only when a line is deeper or larger than any before.
#[derive(Debug, Default)]
pub(crate) struct Walker {
    frames: Vec<Frame>,
    blocks: Blocks,
}

impl Walker {
    /// Walks the object in `line` depth first, as Loki's `JSONParser` does
    /// with its recursion: the visitor sees every member with its flattened
    /// name (keys joined with `_`, blank keys skipped), a fault anywhere
    /// ends the walk with the scanner's text, and members before it stay
    /// visited. `key` is the name buffer; it is left empty.
    ///
    /// # Errors
    /// The first fault, visitor error or [`TOO_COSTLY`].
    pub(crate) fn walk<'a>(
        &mut self,
        line: &'a str,
        key: &mut String,
        visitor: &mut dyn Visitor<'a>,
    ) -> Result<(), &'static str> {
        key.clear();
        self.blocks.start(line);
        self.frames.clear();
        self.frames.push(Frame {
            start: 0,
            end: line.len(),
            at: At::Start,
            key_len: 0,
        });
        let r = self.run(line, key, visitor);
        key.clear();
        r
    }

    fn run<'a>(
        &mut self,
        line: &'a str,
        key: &mut String,
        visitor: &mut dyn Visitor<'a>,
    ) -> Result<(), &'static str> {
        let base = line.as_ptr() as usize;
        while let Some(depth) = self.frames.len().checked_sub(1) {
            let top = &mut self.frames[depth];
            if depth >= REMEMBER_DEPTH {
                self.blocks.remember();
            }
            // Spans are those of values the scanner returned: `{` to `}`.
            let mut members = Members {
                s: &line[top.start..top.end],
                at: top.at,
            };
            let step = members.next(Some(&mut self.blocks));
            top.at = members.at;
            let (k, v) = match step {
                Member::Item(k, v) => (k, v),
                Member::End => {
                    let key_len = top.key_len;
                    self.frames.pop();
                    key.truncate(key_len);
                    if !self.frames.is_empty() {
                        visitor.after()?;
                    }
                    continue;
                }
                Member::BadValue(_, e) | Member::Fault(e) => return Err(e),
            };
            let len = key.len();
            // `k.trim()` is non-empty when the first byte is visible ASCII.
            let visible = k
                .as_bytes()
                .first()
                .is_some_and(|&c| c.is_ascii() && !char::from(c).is_whitespace());
            if visible || !k.trim().is_empty() {
                if !key.is_empty() {
                    key.push('_');
                }
                append_sanitized(key, &k);
            }
            // An object's name grows by its own key; a label repeats the
            // whole name, which is what a crafted line multiplies.
            let cost = if v.kind == Kind::Object {
                key.len() - len
            } else {
                key.len()
            };
            self.blocks.charge(cost)?;
            if visitor.member(key, depth, &k, v)? && v.kind == Kind::Object {
                let start = v.raw.as_ptr() as usize - base;
                self.frames.push(Frame {
                    start,
                    end: start + v.raw.len(),
                    at: At::Start,
                    key_len: len,
                });
            } else {
                key.truncate(len);
                visitor.after()?;
            }
        }
        Ok(())
    }
}

/// Reads the value starting at the first token at or after `from`; returns it
/// and the offset just past it. Block ends are found through `blocks` when
/// given (looked up once it remembers them).
pub(crate) fn get_value_in<'a>(
    s: &'a str,
    from: usize,
    mut blocks: Option<&mut Blocks>,
) -> Result<(Value<'a>, usize), &'static str> {
    let d = s.as_bytes();
    let off = next_token(d, from).ok_or(MALFORMED_JSON)?;
    let mut block = |open, close| match blocks.as_deref_mut() {
        Some(b) => b.end(d, off, open, close),
        None => Ok(block_end(d, off, open, close)),
    };
    let (kind, end) = match d[off] {
        b'"' => (
            Kind::String,
            string_end(d, off + 1).ok_or(MALFORMED_STRING)?.0,
        ),
        b'[' => (Kind::Array, block(b'[', b']')?.ok_or(MALFORMED_ARRAY)?),
        b'{' => (Kind::Object, block(b'{', b'}')?.ok_or(MALFORMED_OBJECT)?),
        c => {
            let end = token_end(d, off);
            let v = &s[off..end];
            let kind = match c {
                b't' | b'f' if v == "true" || v == "false" => Kind::Boolean,
                b'u' | b'n' if v == "null" => Kind::Null,
                b'0'..=b'9' | b'-' => Kind::Number,
                _ => return Err(UNKNOWN_VALUE_TYPE),
            };
            if end == off {
                return Err(MALFORMED_VALUE);
            }
            (kind, end)
        }
    };
    let raw = if kind == Kind::String {
        &s[off + 1..end - 1]
    } else {
        &s[off..end]
    };
    Ok((Value { kind, raw }, end))
}

/// Calls `f(key, value)` for each member of the object in `s`, like
/// jsonparser's `ObjectEach`: stops at the first fault or callback error.
pub(crate) fn object_each<'a>(
    s: &'a str,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    object_scan(s, None, f)
}

/// [`object_each`], or with `wanted` set, jsonparser's `EachKey` leniency:
/// a fault in the structure, or in the value of a member `wanted` rejects,
/// ends the scan quietly; only a wanted member's bad value is an error.
pub(crate) fn object_scan<'a>(
    s: &'a str,
    wanted: Option<&dyn Fn(&str) -> bool>,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), &'static str> {
    match object_scan_inner(s, wanted, f) {
        Ok(()) => Ok(()),
        Err(Fault::Callback(e) | Fault::WantedValue(e)) => Err(e),
        Err(Fault::Scan(_)) if wanted.is_some() => Ok(()),
        Err(Fault::Scan(e)) => Err(e),
    }
}

/// Where a scan stopped.
enum Fault {
    /// The callback asked to stop.
    Callback(&'static str),
    /// A wanted member's value is malformed.
    WantedValue(&'static str),
    /// Any other malformed JSON.
    Scan(&'static str),
}

impl From<&'static str> for Fault {
    fn from(e: &'static str) -> Self {
        Fault::Scan(e)
    }
}

fn object_scan_inner<'a>(
    s: &'a str,
    wanted: Option<&dyn Fn(&str) -> bool>,
    f: &mut dyn FnMut(Cow<'a, str>, Value<'a>) -> Result<(), &'static str>,
) -> Result<(), Fault> {
    let mut members = Members::new(s);
    loop {
        match members.next(None) {
            Member::Item(k, v) => f(k, v).map_err(Fault::Callback)?,
            Member::End => return Ok(()),
            Member::BadValue(k, e) if wanted.is_some_and(|w| w(&k)) => {
                return Err(Fault::WantedValue(e));
            }
            Member::BadValue(_, e) | Member::Fault(e) => return Err(Fault::Scan(e)),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), for property tests.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// JSON-like text: well-formed mostly, with stray quotes, brackets and
    /// backslashes often enough to exercise every fault.
    pub(crate) fn jsonish(rng: &mut Rng, depth: usize, out: &mut String) {
        const NOISE: &[&str] = &["\"", "{", "}", "[", "]", "\\", ",", ":", " ", "1\"", "x"];
        if rng.below(12) == 0 {
            out.push_str(NOISE[rng.below(NOISE.len())]);
        }
        match rng.below(if depth == 0 { 3 } else { 6 }) {
            0 => out.push_str(["\"v\"", "\"a\\\"}\"", "\"é\""][rng.below(3)]),
            1 => out.push_str(["1", "-2.5", "true", "null", "1{", "nope"][rng.below(6)]),
            2 => out.push_str(["\"\"", "0", "\"[\""][rng.below(3)]),
            3 | 4 => {
                out.push('{');
                for i in 0..rng.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(["\"a\"", "\"b c\"", "\"\"", "\"a\\u0041\""][rng.below(4)]);
                    out.push(':');
                    jsonish(rng, depth - 1, out);
                }
                out.push('}');
            }
            _ => {
                out.push('[');
                for i in 0..rng.below(3) {
                    if i > 0 {
                        out.push(',');
                    }
                    jsonish(rng, depth - 1, out);
                }
                out.push(']');
            }
        }
    }

    #[test]
    fn remembered_ends_are_the_scanned_ends() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut line = String::new();
        let mut blocks = Blocks::default();
        for _ in 0..3000 {
            line.clear();
            jsonish(&mut rng, 12, &mut line);
            let d = line.as_bytes();
            blocks.start(&line);
            blocks.remember();
            // Blocks visited in any order; once remembered, an end holds
            // for any shorter slice too (a walk's slices nest).
            let opens: Vec<usize> = (0..d.len())
                .filter(|&i| matches!(d[i], b'{' | b'['))
                .collect();
            for _ in 0..opens.len() * 2 {
                let q = opens[rng.below(opens.len())];
                let (open, close) = if d[q] == b'{' {
                    (b'{', b'}')
                } else {
                    (b'[', b']')
                };
                let want = block_end(d, q, open, close);
                assert_eq!(blocks.end(d, q, open, close), Ok(want), "{line:?} at {q}");
                let cut = q + 1 + rng.below(d.len() - q);
                let want = block_end(&d[..cut], q, open, close);
                assert_ne!(blocks.ends[q], UNKNOWN);
                let got = blocks.end(&d[..cut], q, open, close);
                assert_eq!(got, Ok(want), "{line:?} at {q} within {cut}");
            }
        }
    }

    #[test]
    fn a_deep_line_is_scanned_a_few_times_not_once_per_level() {
        // 200,000 levels scanned once per level would spend ~2e11 bytes of
        // the ~10 MB budget; remembered, the walk stays well within it.
        let n = 200_000;
        let line = format!("{}\"x\"{}", "{\"a\":".repeat(n), "}".repeat(n));
        struct Count(usize, usize);
        impl Visitor<'_> for Count {
            fn member(
                &mut self,
                key: &mut String,
                depth: usize,
                _k: &str,
                v: Value<'_>,
            ) -> Result<bool, &'static str> {
                self.0 = self.0.max(depth + 1);
                if v.kind == Kind::String {
                    self.1 = key.len();
                }
                Ok(true)
            }
        }
        let mut count = Count(0, 0);
        let mut w = Walker::default();
        assert_eq!(w.walk(&line, &mut String::new(), &mut count), Ok(()));
        assert_eq!((count.0, count.1), (n, 2 * n - 1));
        assert!(w.blocks.spent < 16 * line.len(), "{}", w.blocks.spent);
    }
}
