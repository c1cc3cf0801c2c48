//! How many rows of a limited answer share its farthest time, told from
//! the rows' `_time` alone, before the answer is decoded in place.
//!
//! A log query asks VictoriaLogs for a few rows more than the limit; when
//! every row from the last kept one to the farthest shares one time, the
//! cut may go through a timestamp whose other rows VictoriaLogs did not
//! send, and that timestamp is read again whole (`Spliced`), which needs
//! the first answer's rows as they came. Decoding in place consumes the
//! body, so the body would have to be copied before every decode. The rows
//! from the limit on are the farthest in direction order (the oldest for
//! backward, the newest for forward), so this count tells, without
//! decoding, whether the copy is needed.

use super::body::Body;
use crate::direction::Direction;

/// How many rows of `body` have the time of the row farthest in
/// `direction` order; `None` when that cannot be told without decoding (a
/// line without a top-level `_time` string, a malformed time), which the
/// caller treats as a possible tie.
pub fn edge_run(body: &Body, direction: Direction) -> Option<usize> {
    let mut edge = Edge::new(direction);
    let known = match body {
        Body::Ndjson(b) => lines_seen(b, &mut edge),
        Body::Segments(s) => s.parts().all(|p| lines_seen(p, &mut edge)),
        Body::Rows(r) => (0..r.len()).all(|i| r.time(i).map(|t| edge.see(t)).is_some()),
    };
    known.then_some(edge.count)
}

/// The farthest time seen so far and how often.
struct Edge {
    direction: Direction,
    time: i64,
    count: usize,
}

impl Edge {
    fn new(direction: Direction) -> Self {
        Self {
            direction,
            time: 0,
            count: 0,
        }
    }

    fn see(&mut self, t: i64) {
        let farther = match self.direction {
            Direction::Backward => t < self.time,
            Direction::Forward => t > self.time,
        };
        if self.count == 0 || farther {
            self.time = t;
            self.count = 1;
        } else if t == self.time {
            self.count += 1;
        }
    }
}

/// Feeds the time of every line of `ndjson` to `edge`; `false` at the first
/// line whose time cannot be read.
fn lines_seen(ndjson: &[u8], edge: &mut Edge) -> bool {
    ndjson
        .split(|&b| b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .all(|line| line_time(line).map(|t| edge.see(t)).is_some())
}

/// The `_time` of one NDJSON object. The key is found as `"_time":"` right
/// after `{` or `,`: inside a JSON string every `"` is escaped, so `,"`
/// never occurs there and the match is a key. VictoriaLogs' rows are flat,
/// so it is the top-level `_time`.
fn line_time(line: &[u8]) -> Option<i64> {
    const KEY: &[u8] = b"\"_time\":\"";
    let at = memchr::memmem::find_iter(line, KEY)
        .find(|&i| i > 0 && matches!(line[i - 1], b'{' | b','))?;
    let value = &line[at + KEY.len()..];
    let end = memchr::memchr(b'"', value)?;
    let text = std::str::from_utf8(&value[..end]).ok()?;
    go::time::parse_rfc3339_nanos(text)
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;

    use super::*;
    use crate::ndjson::{RowSet, SegmentWriter};

    fn row(time: &str) -> String {
        format!(
            r#"{{"_msg":"m \"_time\":\"2000-01-01T00:00:00Z\"","_stream":"{{}}","_time":"{time}"}}"#
        )
    }

    fn ndjson(times: &[&str]) -> Body {
        let text: String = times.iter().map(|t| row(t) + "\n").collect();
        Body::Ndjson(BytesMut::from(text.as_bytes()))
    }

    /// The farthest time occurs more than once (or cannot be read).
    fn edge_time_repeats(body: &Body, direction: Direction) -> bool {
        edge_run(body, direction).is_none_or(|n| n > 1)
    }

    const T1: &str = "2026-11-28T08:00:01Z";
    const T1_NANOS: &str = "2026-11-28T08:00:01.000000000Z";
    const T2: &str = "2026-11-28T08:00:02.5Z";
    const T3: &str = "2026-11-28T08:00:03Z";

    #[test]
    fn backward_repeats_only_when_the_oldest_time_does() {
        assert!(!edge_time_repeats(
            &ndjson(&[T3, T2, T1]),
            Direction::Backward
        ));
        assert!(!edge_time_repeats(
            &ndjson(&[T3, T3, T1]),
            Direction::Backward
        ));
        assert!(edge_time_repeats(
            &ndjson(&[T3, T1, T1]),
            Direction::Backward
        ));
        // Equal instants printed differently are one time.
        assert!(edge_time_repeats(
            &ndjson(&[T1_NANOS, T2, T1]),
            Direction::Backward
        ));
    }

    #[test]
    fn forward_repeats_only_when_the_newest_time_does() {
        assert!(!edge_time_repeats(
            &ndjson(&[T1, T1, T3]),
            Direction::Forward
        ));
        assert!(edge_time_repeats(
            &ndjson(&[T3, T1, T3]),
            Direction::Forward
        ));
    }

    #[test]
    fn the_run_counts_every_row_of_the_farthest_time() {
        let body = ndjson(&[T3, T1, T2, T1, T1]);
        assert_eq!(edge_run(&body, Direction::Backward), Some(3));
        assert_eq!(edge_run(&body, Direction::Forward), Some(1));
        assert_eq!(edge_run(&ndjson(&[]), Direction::Backward), Some(0));
        assert_eq!(
            edge_run(
                &Body::Ndjson(BytesMut::from(&b"{\"_msg\":\"x\"}\n"[..])),
                Direction::Forward
            ),
            None
        );
    }

    #[test]
    fn unreadable_times_answer_true() {
        for body in [
            "{\"_msg\":\"no time\"}\n",
            "{\"_time\":\"yesterday\"}\n",
            "{\"x\":\"\\\"_time\\\":\\\"2026-11-28T08:00:01Z\\\"\"}\n",
        ] {
            let b = Body::Ndjson(BytesMut::from(body.as_bytes()));
            assert!(edge_time_repeats(&b, Direction::Backward), "{body}");
        }
        let mut set = RowSet::new();
        set.begin_row(None);
        set.end_row();
        assert!(edge_time_repeats(&Body::Rows(set), Direction::Backward));
    }

    #[test]
    fn segments_and_rows_read_like_one_body() {
        let text: String = [T3, T1, T2, T1].iter().map(|t| row(t) + "\n").collect();
        for chunk in [1, 7, 100, text.len()] {
            let mut w = SegmentWriter::new(None);
            for c in text.as_bytes().chunks(chunk) {
                w.push(c);
            }
            let body = Body::Segments(w.finish());
            assert!(edge_time_repeats(&body, Direction::Backward), "{chunk}");
            assert!(!edge_time_repeats(&body, Direction::Forward), "{chunk}");
        }
        let mut set = RowSet::new();
        for t in [3, 1, 1] {
            set.begin_row(Some(t));
            set.end_row();
        }
        assert!(edge_time_repeats(
            &Body::Rows(set.clone()),
            Direction::Backward
        ));
        assert!(!edge_time_repeats(&Body::Rows(set), Direction::Forward));
    }
}
