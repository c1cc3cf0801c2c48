//! Durations in the three dialects Loki reads and prints.
//!
//! - Go's `time.Duration` (Go 1.26): `time.ParseDuration` (`1.5h`, `250ms`,
//!   `-3s`) and `Duration.String` (`1h30m0s`). Loki reads `| duration > 1m`
//!   filters, `unwrap duration(…)` values and the template `duration`
//!   function this way.
//! - Prometheus' `model.Duration` (prometheus/common v0.67.5, Loki 3.7's):
//!   `model.ParseDuration` (`5m`, `1h30m`, `1y`, whole numbers, units in
//!   descending order) and its `String` (`1w`, `90d`). Range brackets, the
//!   `since` and `step` parameters and the limits Loki prints use it.
//! - LogQL's duration token: Prometheus' form first, then Go's, as Loki's
//!   lexer tries them ([`Duration::parse_logql`]).
//!
//! humantime disagrees with both on units (`y`, `M`), hence this module.

use std::fmt::Write as _;

/// A signed span of time in nanoseconds, as Go's `time.Duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

const NS_PER_MS: i64 = 1_000_000;

/// Prometheus' units, largest first: the order `model.ParseDuration` demands.
const PROM_UNITS: [(&str, i64); 7] = [
    ("y", 365 * 24 * 3_600_000 * NS_PER_MS),
    ("w", 7 * 24 * 3_600_000 * NS_PER_MS),
    ("d", 24 * 3_600_000 * NS_PER_MS),
    ("h", 3_600_000 * NS_PER_MS),
    ("m", 60_000 * NS_PER_MS),
    ("s", 1_000 * NS_PER_MS),
    ("ms", NS_PER_MS),
];

/// Why Go's `time.ParseDuration` refused a string; `Display` is Go's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoDurationError {
    /// Malformed or out of range.
    #[error("time: invalid duration {}", time_quote(.0))]
    Invalid(String),
    /// A number without a unit.
    #[error("time: missing unit in duration {}", time_quote(.0))]
    MissingUnit(String),
    /// A unit Go does not know.
    #[error("time: unknown unit {} in duration {}", time_quote(.unit), time_quote(.value))]
    UnknownUnit {
        /// The unknown unit.
        unit: String,
        /// The whole input.
        value: String,
    },
}

/// Why Prometheus' `model.ParseDuration` refused a string; `Display` is
/// Prometheus' text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrometheusDurationError {
    /// The empty string.
    #[error("empty duration string")]
    Empty,
    /// Not of the form `[Ny][Nw][Nd][Nh][Nm][Ns][Nms]`.
    #[error("not a valid duration string: {}", crate::strconv::quote(.0))]
    Invalid(String),
    /// A unit Prometheus does not know.
    #[error("unknown unit {} in duration {}", crate::strconv::quote(.unit), crate::strconv::quote(.value))]
    UnknownUnit {
        /// The unknown unit.
        unit: String,
        /// The whole input.
        value: String,
    },
    /// Larger than Go's `time.Duration`.
    #[error("duration out of range")]
    OutOfRange,
}

impl Duration {
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> i64 {
        self.0
    }

    /// The span in seconds, as Go's `Duration.Seconds` computes it (whole
    /// seconds plus the fraction, which can differ from `ns / 1e9` in the
    /// last bit).
    pub fn as_secs_f64(self) -> f64 {
        let sec = self.0 / 1_000_000_000;
        let nsec = self.0 % 1_000_000_000;
        sec as f64 + nsec as f64 / 1e9
    }

    /// Parses a Prometheus duration (`5m`, `1h30m`, `1y`), as Prometheus'
    /// `model.ParseDuration` does.
    ///
    /// # Errors
    /// [`PrometheusDurationError`] with Prometheus' text.
    pub fn parse_prometheus(s: &str) -> Result<Duration, PrometheusDurationError> {
        match s {
            "0" => return Ok(Duration(0)),
            "" => return Err(PrometheusDurationError::Empty),
            _ => {}
        }
        let invalid = || PrometheusDurationError::Invalid(s.to_owned());
        let mut rest = s;
        let mut total: i64 = 0;
        let mut last_pos = 0usize;
        while !rest.is_empty() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return Err(invalid());
            }
            let v: u64 = rest[..digits].parse().map_err(|_| invalid())?;
            rest = &rest[digits..];
            let ulen = rest.bytes().take_while(|b| !b.is_ascii_digit()).count();
            if ulen == 0 {
                return Err(invalid());
            }
            let unit = &rest[..ulen];
            rest = &rest[ulen..];
            let (pos, mult) = PROM_UNITS
                .iter()
                .enumerate()
                .find(|(_, (u, _))| *u == unit)
                .map(|(i, (_, m))| (i + 1, *m))
                .ok_or_else(|| PrometheusDurationError::UnknownUnit {
                    unit: unit.to_owned(),
                    value: s.to_owned(),
                })?;
            if pos <= last_pos {
                return Err(invalid());
            }
            last_pos = pos;
            let add = i64::try_from(v)
                .ok()
                .and_then(|v| v.checked_mul(mult))
                .ok_or(PrometheusDurationError::OutOfRange)?;
            total = total
                .checked_add(add)
                .ok_or(PrometheusDurationError::OutOfRange)?;
        }
        Ok(Duration(total))
    }

    /// Parses as Go's `time.ParseDuration` (`1.5h`, `250ms`, `-3s`), to the
    /// nanosecond Go computes (integer parts exact, fractions via `f64`).
    ///
    /// # Errors
    /// [`GoDurationError`] with Go's text.
    pub fn parse_go(s: &str) -> Result<Duration, GoDurationError> {
        const LIMIT: u64 = 1 << 63;
        let invalid = || GoDurationError::Invalid(s.to_owned());
        let (neg, mut rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if rest == "0" {
            return Ok(Duration(0));
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut d: u64 = 0;
        while !rest.is_empty() {
            let b = rest.as_bytes();
            if !(b[0] == b'.' || b[0].is_ascii_digit()) {
                return Err(invalid());
            }
            // The integer part; overflow is an error.
            let int_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
            let mut v: u64 = 0;
            for &c in &b[..int_len] {
                if v > LIMIT / 10 {
                    return Err(invalid());
                }
                v = v * 10 + u64::from(c - b'0');
                if v > LIMIT {
                    return Err(invalid());
                }
            }
            rest = &rest[int_len..];
            // The fraction; digits past u64 precision are skipped.
            let (mut f, mut scale, mut post) = (0u64, 1f64, false);
            if let Some(tail) = rest.strip_prefix('.') {
                let frac_len = tail.bytes().take_while(u8::is_ascii_digit).count();
                let mut overflow = false;
                for c in tail[..frac_len].bytes() {
                    if overflow || f > (LIMIT - 1) / 10 {
                        overflow = true;
                        continue;
                    }
                    let y = f * 10 + u64::from(c - b'0');
                    if y > LIMIT {
                        overflow = true;
                        continue;
                    }
                    f = y;
                    scale *= 10.0;
                }
                post = frac_len > 0;
                rest = &tail[frac_len..];
            }
            if int_len == 0 && !post {
                return Err(invalid());
            }
            let unit_len = rest
                .bytes()
                .take_while(|c| !(*c == b'.' || c.is_ascii_digit()))
                .count();
            if unit_len == 0 {
                return Err(GoDurationError::MissingUnit(s.to_owned()));
            }
            let unit = &rest[..unit_len];
            rest = &rest[unit_len..];
            let mult: u64 = match unit {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => {
                    return Err(GoDurationError::UnknownUnit {
                        unit: unit.to_owned(),
                        value: s.to_owned(),
                    });
                }
            };
            if v > LIMIT / mult {
                return Err(invalid());
            }
            v *= mult;
            if f > 0 {
                // Go: float64 keeps fractions of hours nanosecond-accurate.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let frac = (f as f64 * (mult as f64 / scale)) as u64;
                v += frac;
                if v > LIMIT {
                    return Err(invalid());
                }
            }
            d += v;
            if d > LIMIT {
                return Err(invalid());
            }
        }
        if neg {
            // d <= 2^63, so the negation fits (2^63 is i64::MIN).
            return Ok(Duration(0i64.wrapping_sub_unsigned(d)));
        }
        i64::try_from(d).map(Duration).map_err(|_| invalid())
    }

    /// Parses a LogQL duration token the way Loki's lexer does: Prometheus'
    /// form first, then Go's.
    ///
    /// # Errors
    /// Go's error when neither form parses.
    pub fn parse_logql(s: &str) -> Result<Duration, GoDurationError> {
        Self::parse_prometheus(s).or_else(|_| Self::parse_go(s))
    }

    /// Formats as Go's `time.Duration.String()` (`1h30m0s`, `250ms`, `1.5µs`).
    pub fn to_go_string(self) -> String {
        let mut out = String::new();
        self.write_go(&mut out);
        out
    }

    /// [`Duration::to_go_string`] into `out`.
    pub fn write_go(self, out: &mut String) {
        let d = self.0;
        if d == 0 {
            out.push_str("0s");
            return;
        }
        if d < 0 {
            out.push('-');
        }
        let u = d.unsigned_abs();
        if u < 1_000_000_000 {
            let (unit, digits) = if u < 1_000 {
                ("ns", 0)
            } else if u < 1_000_000 {
                ("µs", 3)
            } else {
                ("ms", 6)
            };
            push_frac(out, u, digits);
            out.push_str(unit);
            return;
        }
        let secs = u / 1_000_000_000;
        let (h, m) = (secs / 3600, secs / 60 % 60);
        if h > 0 {
            let _ = write!(out, "{h}h");
        }
        if h > 0 || m > 0 {
            let _ = write!(out, "{m}m");
        }
        push_frac(out, secs % 60 * 1_000_000_000 + u % 1_000_000_000, 9);
        out.push('s');
    }

    /// Formats as Prometheus' `model.Duration.String()` (`5m`, `1h30m`,
    /// `1w`): years and weeks only when they divide the value exactly,
    /// sub-millisecond parts dropped.
    pub fn to_prometheus_string(self) -> String {
        let mut ms = self.0 / NS_PER_MS;
        if ms == 0 {
            return "0s".into();
        }
        let mut out = String::new();
        if ms < 0 {
            out.push('-');
            ms = -ms;
        }
        for (i, (unit, mult)) in PROM_UNITS.iter().enumerate() {
            let mult = mult / NS_PER_MS;
            if i < 2 && ms % mult != 0 {
                continue;
            }
            let v = ms / mult;
            if v > 0 {
                let _ = write!(out, "{v}{unit}");
                ms -= v * mult;
            }
        }
        out
    }
}

/// `v` divided by `10^digits`, with the fraction Go prints (no trailing zeros).
fn push_frac(out: &mut String, v: u64, digits: u32) {
    let div = 10u64.pow(digits);
    let (int, rem) = (v / div, v % div);
    let _ = write!(out, "{int}");
    if rem != 0 {
        let width = digits as usize;
        let frac = format!("{rem:0width$}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
}

/// The `time` package's own quoting for its errors: every byte of a
/// non-ASCII or control character as `\xNN` (not `strconv.Quote`).
fn time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        if c < ' ' || !c.is_ascii() {
            for b in &bytes[i..i + c.len_utf8()] {
                let _ = write!(out, "\\x{b:02x}");
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests;
