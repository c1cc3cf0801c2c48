//! RFC 3339 timestamps as Go's `Time.Format(time.RFC3339Nano)` prints them
//! (VictoriaLogs' `_time`: `2026-11-22T04:21:07.29584787Z`), read fast.
//!
//! Parsing them with a general date library costs more than decoding the
//! rest of a row, so this parser does only that grammar (plus numeric
//! offsets, in case a future version prints them) with plain integer
//! arithmetic. [`super::parse_rfc3339`] is Go's full `time.Parse`.

use super::civil::{days_from_civil, days_in_month};

/// Parses an RFC 3339 timestamp into nanoseconds since the Unix epoch.
///
/// Accepts `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `t`/`z` in lower case
/// too. More than nine fraction digits are truncated. Returns `None` for
/// anything else, including dates outside the `i64` nanosecond range
/// (1677-09-21 … 2262-04-11).
#[inline]
pub fn parse_rfc3339_nanos(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let year = digits(b, 0, 4)? as i64;
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    let hour = digits(b, 11, 2)?;
    let minute = digits(b, 14, 2)?;
    let second = digits(b, 17, 2)?;
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }

    let mut pos = 19;
    let mut nanos: i64 = 0;
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        let mut scale = 100_000_000;
        while let Some(&c) = b.get(pos) {
            if !c.is_ascii_digit() {
                break;
            }
            if pos - start < 9 {
                nanos += i64::from(c - b'0') * scale;
                scale /= 10;
            }
            pos += 1;
        }
        if pos == start {
            return None;
        }
    }

    let offset_secs: i64 = match b.get(pos)? {
        b'Z' | b'z' => {
            pos += 1;
            0
        }
        sign @ (b'+' | b'-') => {
            let oh = digits(b, pos + 1, 2)?;
            if b.get(pos + 3) != Some(&b':') {
                return None;
            }
            let om = digits(b, pos + 4, 2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            let off = i64::from(oh * 3600 + om * 60);
            pos += 6;
            if *sign == b'-' { -off } else { off }
        }
        _ => return None,
    };
    if pos != b.len() {
        return None;
    }

    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset_secs;
    // i128: near i64::MIN the seconds alone overflow before the fraction is added.
    i64::try_from(i128::from(secs) * 1_000_000_000 + i128::from(nanos)).ok()
}

/// Reads `n` ASCII digits at `at`.
#[inline]
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let mut v = 0u32;
    for &c in b.get(at..at + n)? {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::parse_rfc3339_nanos as p;

    #[test]
    fn parses_vl_timestamps() {
        assert_eq!(p("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            p("2026-11-22T04:21:07.29584787Z"),
            Some(1_795_321_267_295_847_870)
        );
        assert_eq!(
            p("2024-08-22T11:20:00.123456789Z"),
            Some(1_724_325_600_123_456_789)
        );
        assert_eq!(p("2024-08-22T11:20:00.1Z"), Some(1_724_325_600_100_000_000));
        assert_eq!(p("2024-08-22T11:20:00Z"), Some(1_724_325_600_000_000_000));
        assert_eq!(p("2024-02-29T00:00:00z"), Some(1_709_164_800_000_000_000));
        // More than nine digits: truncated, not rounded.
        assert_eq!(
            p("2024-08-22T11:20:00.1234567899Z"),
            Some(1_724_325_600_123_456_789)
        );
    }

    #[test]
    fn applies_offsets() {
        assert_eq!(
            p("2024-08-22T13:20:00.5+02:00"),
            Some(1_724_325_600_500_000_000)
        );
        assert_eq!(
            p("2024-08-22T06:50:00-04:30"),
            Some(1_724_325_600_000_000_000)
        );
        assert_eq!(p("1970-01-01T00:00:00+00:00"), Some(0));
    }

    #[test]
    fn handles_pre_epoch_and_range_limits() {
        assert_eq!(p("1969-12-31T23:59:59.999999999Z"), Some(-1));
        assert_eq!(p("2262-04-11T23:47:16.854775807Z"), Some(i64::MAX));
        assert_eq!(p("2262-04-11T23:47:16.854775808Z"), None);
        assert_eq!(p("1677-09-21T00:12:43.145224192Z"), Some(i64::MIN));
    }

    #[test]
    fn rejects_malformed_values() {
        for bad in [
            "",
            "2024-08-22",
            "2024-08-22T11:20:00",
            "2024-08-22 11:20:00Z",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-08-22T24:00:00Z",
            "2024-08-22T11:60:00Z",
            "2024-08-22T11:20:60Z",
            "2024-08-22T11:20:00.Z",
            "2024-08-22T11:20:00.12",
            "2024-08-22T11:20:00+0200",
            "2024-08-22T11:20:00+02:00x",
            "2024-08-22T11:20:00ZZ",
            "20a4-08-22T11:20:00Z",
            "1724325600123456789",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }
}
