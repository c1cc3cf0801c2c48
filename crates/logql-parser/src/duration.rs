//! Durations as LogQL writes them (`5m`, `1h30m`, `250ms`).
//!
//! Loki uses Go's `time.Duration` (signed nanoseconds) and Prometheus-style
//! units; `humantime` disagrees on units such as `y` and `M`, so LogQL
//! durations get their own type.

/// A signed span of time in nanoseconds, as Go's `time.Duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub i64);

impl Duration {
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> i64 {
        self.0
    }

    /// The span in (fractional) seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

const NS_PER_MS: i64 = 1_000_000;
const PROM_UNITS: [(&str, i64); 7] = [
    ("y", 365 * 24 * 3_600_000 * NS_PER_MS),
    ("w", 7 * 24 * 3_600_000 * NS_PER_MS),
    ("d", 24 * 3_600_000 * NS_PER_MS),
    ("h", 3_600_000 * NS_PER_MS),
    ("m", 60_000 * NS_PER_MS),
    ("s", 1_000 * NS_PER_MS),
    ("ms", NS_PER_MS),
];

impl Duration {
    /// Parses a Prometheus duration (`5m`, `1h30m`, `1y`), as Loki's range brackets do.
    ///
    /// # Errors
    /// Returns the message Prometheus' `model.ParseDuration` gives.
    pub fn parse_prometheus(s: &str) -> Result<Duration, String> {
        match s {
            "0" => return Ok(Duration(0)),
            "" => return Err("empty duration string".into()),
            _ => {}
        }
        let invalid = || format!("not a valid duration string: \"{s}\"");
        let mut rest = s;
        let mut total: i64 = 0;
        let mut last_pos = 0usize;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            if digits == 0 {
                return Err(invalid());
            }
            let v: u64 = rest[..digits].parse().map_err(|_| invalid())?;
            rest = &rest[digits..];
            let ulen = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
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
                .ok_or_else(|| format!("unknown unit \"{unit}\" in duration \"{s}\""))?;
            if pos <= last_pos {
                return Err(invalid());
            }
            last_pos = pos;
            let add = i64::try_from(v)
                .ok()
                .and_then(|v| v.checked_mul(mult))
                .ok_or("duration out of range")?;
            total = total.checked_add(add).ok_or("duration out of range")?;
        }
        Ok(Duration(total))
    }

    /// Parses a Go `time.ParseDuration` string (`1.5h`, `250ms`, `-3s`).
    ///
    /// # Errors
    /// Returns Go's message for invalid input.
    pub fn parse_go(s: &str) -> Result<Duration, String> {
        let invalid = || format!("time: invalid duration \"{s}\"");
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
        let mut total: f64 = 0.0;
        while !rest.is_empty() {
            let n = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let num = &rest[..n];
            if num.is_empty() || num == "." {
                return Err(invalid());
            }
            let v: f64 = num.parse().map_err(|_| invalid())?;
            rest = &rest[n..];
            let u = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            if u == 0 {
                return Err(format!("time: missing unit in duration \"{s}\""));
            }
            let unit = &rest[..u];
            rest = &rest[u..];
            let mult: f64 = match unit {
                "ns" => 1.0,
                "us" | "µs" | "μs" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => return Err(format!("time: unknown unit \"{unit}\" in duration \"{s}\"")),
            };
            total += v * mult;
        }
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
        #[allow(clippy::cast_possible_truncation)]
        let ns = total.round() as i64;
        Ok(Duration(if neg { -ns } else { ns }))
    }

    /// Parses a duration token the way Loki's lexer does: Prometheus first, then Go.
    ///
    /// # Errors
    /// Returns Go's message when neither form parses.
    pub fn parse_loki(s: &str) -> Result<Duration, String> {
        Self::parse_prometheus(s).or_else(|_| Self::parse_go(s))
    }

    /// Formats as Go's `time.Duration.String()` (`1h30m0s`, `250ms`).
    pub fn to_go_string(self) -> String {
        let d = self.0;
        if d == 0 {
            return "0s".into();
        }
        let neg = d < 0;
        let u = d.unsigned_abs();
        let mut out = String::new();
        if u < 1_000_000_000 {
            let (unit, div) = if u < 1_000 {
                ("ns", 1u64)
            } else if u < 1_000_000 {
                ("µs", 1_000)
            } else {
                ("ms", 1_000_000)
            };
            out.push_str(&frac(u, div));
            out.push_str(unit);
        } else {
            let h = u / 3_600_000_000_000;
            let m = (u / 60_000_000_000) % 60;
            let s_ns = u % 60_000_000_000;
            if h > 0 {
                out.push_str(&format!("{h}h"));
            }
            if h > 0 || m > 0 {
                out.push_str(&format!("{m}m"));
            }
            out.push_str(&frac(s_ns, 1_000_000_000));
            out.push('s');
        }
        if neg { format!("-{out}") } else { out }
    }

    /// Formats as Prometheus' `model.Duration.String()` (`5m`, `1h30m`, `1w`),
    /// which Loki uses for range brackets. Sub-millisecond parts are dropped.
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
                out.push_str(&format!("{v}{unit}"));
                ms -= v * mult;
            }
        }
        out
    }
}

/// `v / div` with the fractional digits Go prints (trailing zeros trimmed).
fn frac(v: u64, div: u64) -> String {
    let int = v / div;
    let rem = v % div;
    if rem == 0 {
        return int.to_string();
    }
    let width = div.ilog10() as usize;
    let digits = format!("{rem:0width$}");
    format!("{int}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prometheus_and_go_forms() {
        assert_eq!(
            Duration::parse_prometheus("1h30m").unwrap(),
            Duration(5_400_000_000_000)
        );
        assert_eq!(
            Duration::parse_prometheus("5minutes").unwrap_err(),
            "unknown unit \"minutes\" in duration \"5minutes\""
        );
        assert!(Duration::parse_prometheus("1.5h").is_err());
        assert_eq!(
            Duration::parse_loki("1.5h").unwrap(),
            Duration(5_400_000_000_000)
        );
        assert_eq!(
            Duration::parse_loki("250ms").unwrap(),
            Duration(250_000_000)
        );
        assert_eq!(
            Duration::parse_loki("-5m").unwrap(),
            Duration(-300_000_000_000)
        );
        assert_eq!(Duration::parse_loki("1w").unwrap().as_secs_f64(), 604_800.0);
        assert!(Duration::parse_loki("5x").is_err());
    }

    #[test]
    fn prints_like_go_and_prometheus() {
        assert_eq!(Duration(5_400_000_000_000).to_go_string(), "1h30m0s");
        assert_eq!(Duration(250_000_000).to_go_string(), "250ms");
        assert_eq!(Duration(1_500).to_go_string(), "1.5µs");
        assert_eq!(Duration(-1_500_000_000).to_go_string(), "-1.5s");
        assert_eq!(Duration(5_400_000_000_000).to_prometheus_string(), "1h30m");
        assert_eq!(Duration(604_800_000_000_000).to_prometheus_string(), "1w");
        assert_eq!(Duration(691_200_000_000_000).to_prometheus_string(), "8d");
    }
}
