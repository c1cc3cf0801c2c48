//! Go's `time` package (Go 1.26) as Loki's answers and templates show it:
//! `time.Time` with reference-layout formatting (`2006-01-02T15:04:05Z07:00`),
//! `time.Parse` and `String()`; RFC 3339 parsing ([`parse_rfc3339`], and the
//! fast reader of VictoriaLogs' `_time` in [`rfc3339`]); calendar math in
//! [`civil`].
//!
//! The server's local zone is taken to be UTC, as in Loki's container images.

pub mod civil;
pub mod rfc3339;

use std::borrow::Cow;

use civil::{civil_from_days, days_from_civil, days_in_month, is_leap};

pub use rfc3339::parse_rfc3339_nanos;

/// Go's `time.RFC3339Nano` layout.
pub const RFC3339_NANO: &str = "2006-01-02T15:04:05.999999999Z07:00";

/// Go's `time.Parse(time.RFC3339Nano, value)`: Loki reads `start`/`end`
/// this way. Go's layout parser is more lenient than RFC 3339 (a `,`
/// before the fraction, one-digit hours, offsets up to `+24:00`).
pub fn parse_rfc3339(value: &str) -> Option<GoTime> {
    parse(RFC3339_NANO, value)
}

/// Seconds from the Unix epoch to Go's zero time, 0001-01-01T00:00:00Z.
const ZERO_SECS: i64 = -62_135_596_800;

/// A Go `time.Time`: an instant plus the zone it is shown in.
#[derive(Debug, Clone, PartialEq)]
pub struct GoTime {
    /// Unix seconds.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
    /// Zone offset east of UTC, seconds.
    pub offset: i32,
    /// Zone name; empty for a fixed zone without a name.
    pub zone: Cow<'static, str>,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Calendar fields of a local time.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    yday: u32,
    wday: usize,
    hour: u32,
    min: u32,
    sec: u32,
}

impl GoTime {
    /// `time.Unix(0, ns)` in the local (UTC) zone.
    pub fn from_unix_nanos(ns: i64) -> GoTime {
        GoTime {
            secs: ns.div_euclid(1_000_000_000),
            nanos: ns.rem_euclid(1_000_000_000) as u32,
            offset: 0,
            zone: Cow::Borrowed("UTC"),
        }
    }

    /// `time.Unix(secs, 0)`.
    pub fn from_unix(secs: i64) -> GoTime {
        GoTime {
            secs,
            nanos: 0,
            offset: 0,
            zone: Cow::Borrowed("UTC"),
        }
    }

    /// Go's zero `time.Time{}`.
    pub fn zero() -> GoTime {
        GoTime::from_unix(ZERO_SECS)
    }

    /// The same instant in UTC (`t.In(time.Local)` with Local = UTC).
    pub fn in_utc(&self) -> GoTime {
        GoTime {
            secs: self.secs,
            nanos: self.nanos,
            offset: 0,
            zone: Cow::Borrowed("UTC"),
        }
    }

    /// `t.UnixNano()` (wrapping like Go for out-of-range times).
    pub fn unix_nanos(&self) -> i64 {
        self.secs
            .wrapping_mul(1_000_000_000)
            .wrapping_add(self.nanos as i64)
    }

    /// Nanoseconds since the Unix epoch, exact for every `GoTime`.
    pub fn unix_nanos_i128(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// `t.UnixMilli()`.
    pub fn unix_millis(&self) -> i64 {
        self.secs
            .saturating_mul(1000)
            .saturating_add((self.nanos / 1_000_000) as i64)
    }

    fn civil(&self) -> Civil {
        let local = self.secs + self.offset as i64;
        let days = local.div_euclid(86_400);
        let sod = local.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        let yday = (days - days_from_civil(year, 1, 1)) as u32 + 1;
        Civil {
            year,
            month,
            day,
            yday,
            wday: (days + 4).rem_euclid(7) as usize,
            hour: sod / 3600,
            min: sod % 3600 / 60,
            sec: sod % 60,
        }
    }

    /// `t.String()`: `2006-01-02 15:04:05.999999999 -0700 MST`.
    pub fn write_string(&self, out: &mut String) {
        self.format_into(out, "2006-01-02 15:04:05.999999999 -0700 MST");
    }

    /// `t.Format(layout)`.
    pub fn format_into(&self, out: &mut String, layout: &str) {
        let c = self.civil();
        let mut rest = layout;
        while !rest.is_empty() {
            let (prefix, std, after) = next_std(rest);
            out.push_str(prefix);
            let Some(std) = std else { break };
            rest = after;
            match std {
                Std::Year4 => {
                    if c.year < 0 {
                        out.push('-');
                    }
                    push_pad(out, c.year.unsigned_abs(), 4);
                }
                Std::Year2 => push_pad(out, c.year.rem_euclid(100) as u64, 2),
                Std::MonthLong => out.push_str(MONTHS[c.month as usize - 1]),
                Std::Month => out.push_str(&MONTHS[c.month as usize - 1][..3]),
                Std::MonthNum => push_pad(out, c.month as u64, 1),
                Std::MonthNum0 => push_pad(out, c.month as u64, 2),
                Std::WeekdayLong => out.push_str(DAYS[c.wday]),
                Std::Weekday => out.push_str(&DAYS[c.wday][..3]),
                Std::Day => push_pad(out, c.day as u64, 1),
                Std::Day0 => push_pad(out, c.day as u64, 2),
                Std::DayUnder => {
                    if c.day < 10 {
                        out.push(' ');
                    }
                    push_pad(out, c.day as u64, 1);
                }
                Std::YDay0 => push_pad(out, c.yday as u64, 3),
                Std::YDayUnder => {
                    if c.yday < 100 {
                        out.push(' ');
                        if c.yday < 10 {
                            out.push(' ');
                        }
                    }
                    push_pad(out, c.yday as u64, 1);
                }
                Std::Hour => push_pad(out, c.hour as u64, 2),
                Std::Hour12 | Std::Hour12_0 => {
                    let h = match c.hour % 12 {
                        0 => 12,
                        h => h,
                    };
                    push_pad(out, h as u64, if std == Std::Hour12 { 1 } else { 2 });
                }
                Std::Minute => push_pad(out, c.min as u64, 1),
                Std::Minute0 => push_pad(out, c.min as u64, 2),
                Std::Second => push_pad(out, c.sec as u64, 1),
                Std::Second0 => push_pad(out, c.sec as u64, 2),
                Std::PM => out.push_str(if c.hour >= 12 { "PM" } else { "AM" }),
                Std::Pm => out.push_str(if c.hour >= 12 { "pm" } else { "am" }),
                Std::Tz => {
                    if self.zone.is_empty() {
                        let z = self.offset / 60;
                        out.push(if z < 0 { '-' } else { '+' });
                        push_pad(out, (z.abs() / 60) as u64, 2);
                        push_pad(out, (z.abs() % 60) as u64, 2);
                    } else {
                        out.push_str(&self.zone);
                    }
                }
                Std::Offset {
                    z,
                    colon,
                    secs,
                    hours_only,
                } => {
                    if z && self.offset == 0 {
                        out.push('Z');
                        continue;
                    }
                    let o = self.offset;
                    out.push(if o < 0 { '-' } else { '+' });
                    let a = o.unsigned_abs();
                    push_pad(out, (a / 3600) as u64, 2);
                    if !hours_only {
                        if colon {
                            out.push(':');
                        }
                        push_pad(out, (a / 60 % 60) as u64, 2);
                    }
                    if secs {
                        if colon {
                            out.push(':');
                        }
                        push_pad(out, (a % 60) as u64, 2);
                    }
                }
                Std::Frac { sep, digits, trim } => {
                    let mut frac = format!("{:09}", self.nanos);
                    frac.truncate(digits);
                    if trim {
                        let t = frac.trim_end_matches('0');
                        if t.is_empty() {
                            continue;
                        }
                        out.push(sep);
                        out.push_str(t);
                    } else {
                        out.push(sep);
                        out.push_str(&frac);
                    }
                }
            }
        }
    }
}

fn push_pad(out: &mut String, v: u64, width: usize) {
    let s = v.to_string();
    for _ in s.len()..width {
        out.push('0');
    }
    out.push_str(&s);
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Std {
    Year4,
    Year2,
    MonthLong,
    Month,
    MonthNum,
    MonthNum0,
    WeekdayLong,
    Weekday,
    Day,
    Day0,
    DayUnder,
    YDay0,
    YDayUnder,
    Hour,
    Hour12,
    Hour12_0,
    Minute,
    Minute0,
    Second,
    Second0,
    PM,
    Pm,
    Tz,
    Offset {
        z: bool,
        colon: bool,
        secs: bool,
        hours_only: bool,
    },
    Frac {
        sep: char,
        digits: usize,
        trim: bool,
    },
}

/// Finds the next reference-time element in `layout`, like Go's `nextStdChunk`.
fn next_std(layout: &str) -> (&str, Option<Std>, &str) {
    let b = layout.as_bytes();
    let at = |i: usize, s: &str| layout[i..].starts_with(s);
    for i in 0..b.len() {
        if !layout.is_char_boundary(i) {
            continue;
        }
        let found: Option<(Std, usize)> = match b[i] {
            b'J' if at(i, "January") => Some((Std::MonthLong, 7)),
            b'J' if at(i, "Jan") => Some((Std::Month, 3)),
            b'M' if at(i, "Monday") => Some((Std::WeekdayLong, 6)),
            b'M' if at(i, "Mon") => Some((Std::Weekday, 3)),
            b'M' if at(i, "MST") => Some((Std::Tz, 3)),
            b'0' if at(i, "002") => Some((Std::YDay0, 3)),
            b'0' if i + 1 < b.len() && (b'1'..=b'6').contains(&b[i + 1]) => Some((
                match b[i + 1] {
                    b'1' => Std::MonthNum0,
                    b'2' => Std::Day0,
                    b'3' => Std::Hour12_0,
                    b'4' => Std::Minute0,
                    b'5' => Std::Second0,
                    _ => Std::Year2,
                },
                2,
            )),
            b'1' if at(i, "15") => Some((Std::Hour, 2)),
            b'1' => Some((Std::MonthNum, 1)),
            b'2' if at(i, "2006") => Some((Std::Year4, 4)),
            b'2' => Some((Std::Day, 1)),
            b'_' if at(i, "_2") && !at(i, "_2006") => Some((Std::DayUnder, 2)),
            b'_' if at(i, "__2") => Some((Std::YDayUnder, 3)),
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if at(i, "PM") => Some((Std::PM, 2)),
            b'p' if at(i, "pm") => Some((Std::Pm, 2)),
            b'-' | b'Z' => {
                let z = b[i] == b'Z';
                let s = &layout[i + 1..];
                let off = |colon, secs, hours_only| Std::Offset {
                    z,
                    colon,
                    secs,
                    hours_only,
                };
                if s.starts_with("070000") {
                    Some((off(false, true, false), 7))
                } else if s.starts_with("07:00:00") {
                    Some((off(true, true, false), 9))
                } else if s.starts_with("0700") {
                    Some((off(false, false, false), 5))
                } else if s.starts_with("07:00") {
                    Some((off(true, false, false), 6))
                } else if s.starts_with("07") {
                    Some((off(false, false, true), 3))
                } else {
                    None
                }
            }
            c @ (b'.' | b',') if i + 1 < b.len() && (b[i + 1] == b'0' || b[i + 1] == b'9') => {
                let d = b[i + 1];
                let mut j = i + 1;
                while j < b.len() && b[j] == d {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    None
                } else {
                    Some((
                        Std::Frac {
                            sep: c as char,
                            digits: (j - i - 1).min(9),
                            trim: d == b'9',
                        },
                        j - i,
                    ))
                }
            }
            _ => None,
        };
        if let Some((std, len)) = found {
            return (&layout[..i], Some(std), &layout[i + len..]);
        }
    }
    (layout, None, "")
}

fn take_digits(s: &str, min: usize, max: usize) -> Option<(u32, &str)> {
    let n = s.bytes().take(max).take_while(u8::is_ascii_digit).count();
    if n < min {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

fn lookup_name<'a>(s: &'a str, names: &[&str], short: bool) -> Option<(usize, &'a str)> {
    for (i, n) in names.iter().enumerate() {
        let n = if short { &n[..3] } else { n };
        if s.len() >= n.len() && s[..n.len()].eq_ignore_ascii_case(n) {
            return Some((i, &s[n.len()..]));
        }
    }
    None
}

/// `time.ParseInLocation(layout, value, UTC)`; `None` where Go returns an error.
pub fn parse(layout: &str, value: &str) -> Option<GoTime> {
    let (mut year, mut month, mut day, mut yday) = (1i64, 1u32, 1u32, 0u32);
    let (mut hour, mut min, mut sec, mut nanos) = (0u32, 0u32, 0u32, 0u32);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut zone_name: Option<String> = None;
    let mut lay = layout;
    let mut v = value;
    loop {
        let (prefix, std, after) = next_std(lay);
        v = v.strip_prefix(prefix)?;
        let Some(std) = std else { break };
        lay = after;
        match std {
            Std::Year4 => {
                if v.len() < 4 || !v.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
                    return None;
                }
                year = v[..4].parse().ok()?;
                v = &v[4..];
            }
            Std::Year2 => {
                let (y, r) = take_digits(v, 2, 2)?;
                year = if y >= 69 {
                    1900 + y as i64
                } else {
                    2000 + y as i64
                };
                v = r;
            }
            Std::MonthLong | Std::Month => {
                let (m, r) = lookup_name(v, &MONTHS, std == Std::Month)?;
                month = m as u32 + 1;
                v = r;
            }
            Std::MonthNum | Std::MonthNum0 => {
                let (m, r) = take_digits(v, if std == Std::MonthNum0 { 2 } else { 1 }, 2)?;
                if !(1..=12).contains(&m) {
                    return None;
                }
                month = m;
                v = r;
            }
            Std::WeekdayLong | Std::Weekday => {
                let (_, r) = lookup_name(v, &DAYS, std == Std::Weekday)?;
                v = r;
            }
            Std::Day | Std::Day0 | Std::DayUnder => {
                if std == Std::DayUnder && v.starts_with(' ') {
                    v = &v[1..];
                }
                let (d, r) = take_digits(v, if std == Std::Day0 { 2 } else { 1 }, 2)?;
                day = d;
                v = r;
            }
            Std::YDay0 | Std::YDayUnder => {
                let t = v.trim_start_matches(' ');
                let (d, r) = take_digits(t, if std == Std::YDay0 { 3 } else { 1 }, 3)?;
                yday = d;
                v = r;
            }
            Std::Hour => {
                let (h, r) = take_digits(v, 1, 2)?;
                if h >= 24 {
                    return None;
                }
                hour = h;
                v = r;
            }
            Std::Hour12 | Std::Hour12_0 => {
                let (h, r) = take_digits(v, if std == Std::Hour12_0 { 2 } else { 1 }, 2)?;
                if h > 12 {
                    return None;
                }
                hour = h;
                v = r;
            }
            Std::Minute | Std::Minute0 => {
                let (m, r) = take_digits(v, if std == Std::Minute0 { 2 } else { 1 }, 2)?;
                if m >= 60 {
                    return None;
                }
                min = m;
                v = r;
            }
            Std::Second | Std::Second0 => {
                let (s, r) = take_digits(v, if std == Std::Second0 { 2 } else { 1 }, 2)?;
                if s >= 60 {
                    return None;
                }
                sec = s;
                v = r;
                // Go accepts a fractional second here even if the layout has none.
                let next_is_frac =
                    matches!(next_std(lay).1, Some(Std::Frac { .. })) && next_std(lay).0.is_empty();
                if !next_is_frac
                    && v.len() >= 2
                    && (v.starts_with('.') || v.starts_with(','))
                    && v.as_bytes()[1].is_ascii_digit()
                {
                    let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                    nanos = frac_nanos(&v[1..1 + n]);
                    v = &v[1 + n..];
                }
            }
            Std::PM | Std::Pm => {
                if v.len() < 2 {
                    return None;
                }
                match &v[..2] {
                    "PM" | "pm" => pm = Some(true),
                    "AM" | "am" => pm = Some(false),
                    _ => return None,
                }
                v = &v[2..];
            }
            Std::Tz => {
                if v.starts_with("UTC") {
                    zone_name = Some("UTC".into());
                    v = &v[3..];
                } else {
                    let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                    if n < 3 {
                        return None;
                    }
                    zone_name = Some(v[..n].to_string());
                    v = &v[n..];
                }
            }
            Std::Offset {
                z,
                colon,
                secs,
                hours_only,
            } => {
                if z && v.starts_with('Z') {
                    offset = Some(0);
                    v = &v[1..];
                    continue;
                }
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return None,
                };
                v = &v[1..];
                let (h, r) = take_digits(v, 2, 2)?;
                v = r;
                let mut m = 0;
                let mut s = 0;
                if !hours_only {
                    if colon {
                        v = v.strip_prefix(':')?;
                    }
                    let (mm, r) = take_digits(v, 2, 2)?;
                    m = mm;
                    v = r;
                }
                if secs {
                    if colon {
                        v = v.strip_prefix(':')?;
                    }
                    let (ss, r) = take_digits(v, 2, 2)?;
                    s = ss;
                    v = r;
                }
                offset = Some(sign * (h * 3600 + m * 60 + s) as i32);
            }
            // Go reads either separator, whichever the layout shows.
            Std::Frac { digits, trim, .. } => {
                if trim {
                    if v.len() >= 2 && v.starts_with(['.', ',']) && v.as_bytes()[1].is_ascii_digit()
                    {
                        let n = v[1..].bytes().take_while(u8::is_ascii_digit).count();
                        nanos = frac_nanos(&v[1..1 + n]);
                        v = &v[1 + n..];
                    }
                } else {
                    let s = v.strip_prefix(['.', ','])?;
                    if s.len() < digits || !s.as_bytes()[..digits].iter().all(u8::is_ascii_digit) {
                        return None;
                    }
                    nanos = frac_nanos(&s[..digits]);
                    v = &s[digits..];
                }
            }
        }
    }
    if !v.is_empty() {
        return None;
    }
    match pm {
        Some(true) if hour < 12 => hour += 12,
        Some(false) if hour == 12 => hour = 0,
        _ => {}
    }
    if yday > 0 {
        let days = if is_leap(year) { 366 } else { 365 };
        if yday > days {
            return None;
        }
        let mut d = yday;
        month = 1;
        while d > days_in_month(year, month) {
            d -= days_in_month(year, month);
            month += 1;
        }
        day = d;
    }
    if day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let local = days * 86_400 + (hour * 3600 + min * 60 + sec) as i64;
    let (off, zone): (i32, Cow<'static, str>) = match (offset, zone_name) {
        (Some(0), _) => (0, Cow::Borrowed("UTC")),
        (Some(o), _) => (o, Cow::Borrowed("")),
        (None, Some(n)) if n == "UTC" => (0, Cow::Borrowed("UTC")),
        (None, Some(n)) => (0, Cow::Owned(n)),
        (None, None) => (0, Cow::Borrowed("UTC")),
    };
    Some(GoTime {
        secs: local - off as i64,
        nanos,
        offset: off,
        zone,
    })
}

fn frac_nanos(digits: &str) -> u32 {
    let mut s: String = digits.chars().take(9).collect();
    while s.len() < 9 {
        s.push('0');
    }
    s.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests;
