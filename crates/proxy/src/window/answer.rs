//! One window's answer as a compact, typed value: the pieces of the Loki
//! `streams` body the window's query produced, kept byte for byte.
//!
//! A window is evaluated by the same code as an unsplit query (the direct
//! encoder or the proxy pipeline), so its body is exactly what Loki's
//! encoding rules give for that window. [`WindowAnswer::from_body`] cuts that
//! body once, when the window is fetched, into per-stream label objects and
//! per-entry JSON values; the merge then copies those bytes and never
//! encodes an entry again. [`WindowAnswer::to_bytes`] and
//! [`WindowAnswer::from_bytes`] store it in the byte cache in a
//! length-prefixed layout that is read back by slicing, without JSON.

use std::collections::BTreeMap;

use bytes::{BufMut, Bytes, BytesMut};

use engine::labels::write_label_string;

/// A window body that is not the streams answer lokivl writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("window answer: {0}")]
pub struct AnswerError(&'static str);

/// Counters from the window's `stats.summary`, summed over the merge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Processed {
    /// `totalBytesProcessed`.
    pub bytes: u64,
    /// `totalLinesProcessed`.
    pub lines: u64,
    /// `totalPostFilterLines`.
    pub post_filter_lines: u64,
    /// `totalStructuredMetadataBytesProcessed`.
    pub metadata_bytes: u64,
}

/// One stream of a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stream {
    /// Loki's label-set string (`{a="1", b="2"}`), the order of streams.
    pub key: Bytes,
    /// The `stream` JSON object, as written.
    pub object: Bytes,
    /// Entries in direction order: timestamp and the JSON array as written.
    pub entries: Vec<(i64, Bytes)>,
}

/// A window's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowAnswer {
    /// `warnings` strings, JSON-encoded as written.
    pub warnings: Vec<Bytes>,
    /// Streams in label-string order.
    pub streams: Vec<Stream>,
    /// The window's stats.
    pub processed: Processed,
}

impl WindowAnswer {
    /// Entries over all streams.
    pub fn len(&self) -> usize {
        self.streams.iter().map(|s| s.entries.len()).sum()
    }

    /// Whether the window holds no entry.
    pub fn is_empty(&self) -> bool {
        self.streams.iter().all(|s| s.entries.is_empty())
    }

    /// Cuts a Loki `streams` body (as lokivl's encoders write it) into pieces.
    ///
    /// # Errors
    /// [`AnswerError`] when the body is not such an answer.
    pub fn from_body(body: &Bytes) -> Result<Self, AnswerError> {
        let mut s = Scan { b: body, i: 0 };
        let mut out = Self::default();
        s.object(|s, key| {
            match key {
                b"warnings" => s.array(|s| {
                    let r = s.value()?;
                    out.warnings.push(body.slice(r));
                    Ok(())
                })?,
                b"data" => s.object(|s, key| {
                    match key {
                        b"result" => s.array(|s| {
                            let stream = stream(s, body)?;
                            out.streams.push(stream);
                            Ok(())
                        })?,
                        b"stats" => {
                            let r = s.value()?;
                            out.processed = processed(&body[r]);
                        }
                        _ => {
                            s.value()?;
                        }
                    }
                    Ok(())
                })?,
                _ => {
                    s.value()?;
                }
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The compact stored form (length-prefixed pieces).
    pub fn to_bytes(&self) -> Bytes {
        let size = 64
            + self.warnings.iter().map(|w| w.len() + 4).sum::<usize>()
            + self
                .streams
                .iter()
                .map(|s| {
                    s.key.len()
                        + s.object.len()
                        + 12
                        + s.entries.iter().map(|e| e.1.len() + 12).sum::<usize>()
                })
                .sum::<usize>();
        let mut b = BytesMut::with_capacity(size);
        let p = &self.processed;
        for n in [p.bytes, p.lines, p.post_filter_lines, p.metadata_bytes] {
            b.put_u64_le(n);
        }
        put_len(&mut b, self.warnings.len());
        for w in &self.warnings {
            put_piece(&mut b, w);
        }
        put_len(&mut b, self.streams.len());
        for s in &self.streams {
            put_piece(&mut b, &s.key);
            put_piece(&mut b, &s.object);
            put_len(&mut b, s.entries.len());
            for (ts, e) in &s.entries {
                b.put_i64_le(*ts);
                put_piece(&mut b, e);
            }
        }
        b.freeze()
    }

    /// Reads the stored form back; the pieces share `bytes`' buffer.
    ///
    /// # Errors
    /// [`AnswerError`] for a truncated or foreign buffer.
    pub fn from_bytes(bytes: &Bytes) -> Result<Self, AnswerError> {
        let mut r = Reader { b: bytes, i: 0 };
        let processed = Processed {
            bytes: r.u64()?,
            lines: r.u64()?,
            post_filter_lines: r.u64()?,
            metadata_bytes: r.u64()?,
        };
        let n = r.len()?;
        let mut warnings = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            warnings.push(r.piece()?);
        }
        let n = r.len()?;
        let mut streams = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            let key = r.piece()?;
            let object = r.piece()?;
            let m = r.len()?;
            let mut entries = Vec::with_capacity(m.min(1 << 16));
            for _ in 0..m {
                let ts = r.u64()?.cast_signed();
                entries.push((ts, r.piece()?));
            }
            streams.push(Stream {
                key,
                object,
                entries,
            });
        }
        if r.i != bytes.len() {
            return Err(AnswerError("trailing bytes"));
        }
        Ok(Self {
            warnings,
            streams,
            processed,
        })
    }
}

fn put_len(b: &mut BytesMut, n: usize) {
    b.put_u32_le(u32::try_from(n).unwrap_or(u32::MAX));
}

fn put_piece(b: &mut BytesMut, piece: &[u8]) {
    put_len(b, piece.len());
    b.put_slice(piece);
}

struct Reader<'a> {
    b: &'a Bytes,
    i: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<std::ops::Range<usize>, AnswerError> {
        let end = self
            .i
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(AnswerError("truncated"))?;
        let r = self.i..end;
        self.i = end;
        Ok(r)
    }

    fn u64(&mut self) -> Result<u64, AnswerError> {
        let r = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.b[r]);
        Ok(u64::from_le_bytes(a))
    }

    fn len(&mut self) -> Result<usize, AnswerError> {
        let r = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.b[r]);
        Ok(u32::from_le_bytes(a) as usize)
    }

    fn piece(&mut self) -> Result<Bytes, AnswerError> {
        let n = self.len()?;
        let r = self.take(n)?;
        Ok(self.b.slice(r))
    }
}

/// One `{"stream":{…},"values":[…]}` element.
fn stream(s: &mut Scan<'_>, body: &Bytes) -> Result<Stream, AnswerError> {
    let mut object = None;
    let mut entries = Vec::new();
    s.object(|s, key| {
        match key {
            b"stream" => object = Some(s.value()?),
            b"values" => s.array(|s| {
                let r = s.value()?;
                let ts = entry_ts(&body[r.clone()]).ok_or(AnswerError("entry timestamp"))?;
                entries.push((ts, body.slice(r)));
                Ok(())
            })?,
            _ => {
                s.value()?;
            }
        }
        Ok(())
    })?;
    let object = object.ok_or(AnswerError("stream without labels"))?;
    let labels: BTreeMap<String, String> =
        serde_json::from_slice(&body[object.clone()]).map_err(|_| AnswerError("stream labels"))?;
    let mut key = Vec::with_capacity(object.len() + 8);
    write_label_string(
        &mut key,
        labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    );
    Ok(Stream {
        key: Bytes::from(key),
        object: body.slice(object),
        entries,
    })
}

/// The timestamp of `["<ns>",…]`.
fn entry_ts(entry: &[u8]) -> Option<i64> {
    let rest = entry.strip_prefix(b"[\"")?;
    let end = rest.iter().position(|&c| c == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

fn processed(stats: &[u8]) -> Processed {
    let v: serde_json::Value = serde_json::from_slice(stats).unwrap_or_default();
    let n = |k: &str| v["summary"][k].as_u64().unwrap_or(0);
    Processed {
        bytes: n("totalBytesProcessed"),
        lines: n("totalLinesProcessed"),
        post_filter_lines: n("totalPostFilterLines"),
        metadata_bytes: n("totalStructuredMetadataBytesProcessed"),
    }
}

/// A minimal JSON walker over a body lokivl wrote itself: finds where values
/// start and end, never decodes strings (keys here are plain ASCII).
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), AnswerError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(AnswerError("unexpected byte"))
        }
    }

    /// A string's raw range, quotes included.
    fn string(&mut self) -> Result<std::ops::Range<usize>, AnswerError> {
        self.ws();
        let start = self.i;
        self.expect(b'"')?;
        loop {
            match self.b.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(start..self.i);
                }
                Some(b'\\') => self.i += 2,
                Some(_) => self.i += 1,
                None => return Err(AnswerError("unterminated string")),
            }
        }
    }

    /// Skips one value and returns its range.
    fn value(&mut self) -> Result<std::ops::Range<usize>, AnswerError> {
        self.ws();
        let start = self.i;
        match self.b.get(self.i) {
            Some(b'"') => {
                self.string()?;
            }
            Some(b'{') => self.object(|s, _| s.value().map(drop))?,
            Some(b'[') => self.array(|s| s.value().map(drop))?,
            Some(_) => {
                while self
                    .b
                    .get(self.i)
                    .is_some_and(|c| !matches!(c, b',' | b']' | b'}') && !c.is_ascii_whitespace())
                {
                    self.i += 1;
                }
                if self.i == start {
                    return Err(AnswerError("empty value"));
                }
            }
            None => return Err(AnswerError("truncated")),
        }
        Ok(start..self.i)
    }

    fn object(
        &mut self,
        mut field: impl FnMut(&mut Self, &[u8]) -> Result<(), AnswerError>,
    ) -> Result<(), AnswerError> {
        self.expect(b'{')?;
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            let k = self.string()?;
            self.expect(b':')?;
            let b = self.b;
            field(self, &b[k.start + 1..k.end - 1])?;
            if self.eat(b'}') {
                return Ok(());
            }
            self.expect(b',')?;
        }
    }

    fn array(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<(), AnswerError>,
    ) -> Result<(), AnswerError> {
        self.expect(b'[')?;
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            item(self)?;
            if self.eat(b']') {
                return Ok(());
            }
            self.expect(b',')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{"status":"success","warnings":["w \"1\""],"data":{"resultType":"streams","encodingFlags":["categorize-labels"],"result":[{"stream":{"app":"a","env":"x"},"values":[["30","l3 \u003c",{}],["10","l1",{"structuredMetadata":{"t":"]"}}]]},{"stream":{"app":"a"},"values":[["20","l2",{}]]}],"stats":{"summary":{"totalBytesProcessed":7,"totalLinesProcessed":3,"totalPostFilterLines":2,"totalStructuredMetadataBytesProcessed":1,"execTime":0.1}}}}"#;

    #[test]
    fn a_body_is_cut_into_streams_and_entries_byte_for_byte() {
        let a = WindowAnswer::from_body(&Bytes::from_static(BODY.as_bytes()))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.warnings, vec![Bytes::from_static(br#""w \"1\"""#)]);
        assert_eq!(a.streams.len(), 2);
        assert_eq!(&a.streams[0].key[..], br#"{app="a", env="x"}"#);
        assert_eq!(&a.streams[0].object[..], br#"{"app":"a","env":"x"}"#);
        assert_eq!(a.streams[0].entries[0].0, 30);
        assert_eq!(&a.streams[0].entries[0].1[..], br#"["30","l3 \u003c",{}]"#);
        assert_eq!(
            &a.streams[0].entries[1].1[..],
            br#"["10","l1",{"structuredMetadata":{"t":"]"}}]"#
        );
        assert_eq!(&a.streams[1].key[..], br#"{app="a"}"#);
        assert_eq!(a.len(), 3);
        assert_eq!(
            a.processed,
            Processed {
                bytes: 7,
                lines: 3,
                post_filter_lines: 2,
                metadata_bytes: 1
            }
        );
    }

    #[test]
    fn the_stored_form_reads_back_equal() {
        let a = WindowAnswer::from_body(&Bytes::from_static(BODY.as_bytes()))
            .unwrap_or_else(|e| panic!("{e}"));
        let stored = a.to_bytes();
        assert_eq!(WindowAnswer::from_bytes(&stored), Ok(a));
        assert!(WindowAnswer::from_bytes(&stored.slice(..stored.len() - 1)).is_err());
        assert_eq!(
            WindowAnswer::from_bytes(&WindowAnswer::default().to_bytes()),
            Ok(WindowAnswer::default())
        );
    }

    #[test]
    fn foreign_bodies_are_refused() {
        for bad in [
            "",
            "{",
            r#"{"data":{"result":[{"values":[]}]}}"#,
            r#"{"data":{"result":[{"stream":{},"values":[["x","l"]]}]}}"#,
        ] {
            assert!(
                WindowAnswer::from_body(&Bytes::from(bad.to_owned())).is_err(),
                "{bad}"
            );
        }
    }
}
