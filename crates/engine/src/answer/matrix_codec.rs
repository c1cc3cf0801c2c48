//! A metric window's series as cache bytes: label sets and samples stored
//! exactly (values as their IEEE bits), so a window read back from the cache
//! is the matrix that was evaluated, bit for bit.
//!
//! Layout, all integers little-endian `u32` except values (`u64` bits):
//! series count; per series: label count, then name and value as
//! length-prefixed UTF-8, then point count and `(step, bits)` pairs.

use crate::metric::{Matrix, Point, Series};

/// Bytes that are not a matrix this module wrote.
#[derive(Debug, thiserror::Error)]
#[error("corrupt cached metric window at byte {0}")]
pub struct CorruptWindow(usize);

/// Appends `m` to `out`.
pub fn encode(m: &Matrix, out: &mut Vec<u8>) {
    put(out, m.len());
    for s in m {
        put(out, s.labels.len());
        for (name, value) in &s.labels {
            put(out, name.len());
            out.extend_from_slice(name.as_bytes());
            put(out, value.len());
            out.extend_from_slice(value.as_bytes());
        }
        put(out, s.points.len());
        for p in &s.points {
            out.extend_from_slice(&p.step.to_le_bytes());
            out.extend_from_slice(&p.v.to_bits().to_le_bytes());
        }
    }
}

fn put(out: &mut Vec<u8>, n: usize) {
    // Counts and lengths of one window never reach 4 Gi (bodies are bounded far below).
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

/// Reads back what [`encode`] wrote.
///
/// # Errors
/// [`CorruptWindow`] on truncated or malformed bytes.
pub fn decode(b: &[u8]) -> Result<Matrix, CorruptWindow> {
    let mut r = Reader { b, at: 0 };
    let n = r.count()?;
    let mut m = Vec::with_capacity(n.min(b.len() / 8));
    for _ in 0..n {
        let nl = r.count()?;
        let mut labels = Vec::with_capacity(nl.min(64));
        for _ in 0..nl {
            let name = r.string()?;
            let value = r.string()?;
            labels.push((name, value));
        }
        let np = r.count()?;
        let mut points = Vec::with_capacity(np.min(r.left() / 12));
        for _ in 0..np {
            let step = r.u32()?;
            let v = f64::from_bits(u64::from_le_bytes(r.array()?));
            points.push(Point { step, v });
        }
        m.push(Series { labels, points });
    }
    if r.left() != 0 {
        return Err(CorruptWindow(r.at));
    }
    Ok(m)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.b.len() - self.at
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CorruptWindow> {
        let bytes = self
            .b
            .get(self.at..self.at + N)
            .ok_or(CorruptWindow(self.at))?;
        self.at += N;
        bytes.try_into().map_err(|_| CorruptWindow(self.at))
    }

    fn u32(&mut self) -> Result<u32, CorruptWindow> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn count(&mut self) -> Result<usize, CorruptWindow> {
        Ok(self.u32()? as usize)
    }

    fn string(&mut self) -> Result<String, CorruptWindow> {
        let len = self.count()?;
        let bytes = self
            .b
            .get(self.at..self.at.saturating_add(len))
            .ok_or(CorruptWindow(self.at))?;
        let s = std::str::from_utf8(bytes).map_err(|_| CorruptWindow(self.at))?;
        self.at += len;
        Ok(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Matrix {
        vec![
            Series {
                labels: vec![
                    ("app".to_owned(), "api".to_owned()),
                    ("level".to_owned(), "erröр".to_owned()),
                ],
                points: vec![
                    Point { step: 0, v: 1.5 },
                    Point {
                        step: 7,
                        v: f64::NAN,
                    },
                    Point { step: 9, v: -0.0 },
                ],
            },
            Series {
                labels: Vec::new(),
                points: vec![Point {
                    step: 3,
                    v: f64::INFINITY,
                }],
            },
        ]
    }

    #[test]
    fn round_trips_bit_for_bit() {
        let m = sample();
        let mut b = Vec::new();
        encode(&m, &mut b);
        let back = decode(&b).unwrap_or_default();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].labels, m[0].labels);
        for (a, b) in m.iter().zip(&back) {
            let bits = |s: &Series| -> Vec<(u32, u64)> {
                s.points.iter().map(|p| (p.step, p.v.to_bits())).collect()
            };
            assert_eq!(bits(a), bits(b));
        }
        let mut empty = Vec::new();
        encode(&Vec::new(), &mut empty);
        assert_eq!(decode(&empty).map(|m| m.len()).ok(), Some(0));
    }

    #[test]
    fn truncated_or_padded_bytes_are_refused() {
        let mut b = Vec::new();
        encode(&sample(), &mut b);
        for cut in [0, 3, 9, b.len() - 1] {
            assert!(decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        b.push(0);
        assert!(decode(&b).is_err());
    }
}
