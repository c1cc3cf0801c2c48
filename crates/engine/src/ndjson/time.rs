//! A fast RFC 3339 timestamp parser for VictoriaLogs' `_time` values.
//!
//! VictoriaLogs prints `_time` as `2026-11-22T04:21:07.29584787Z`: UTC, 0–9
//! fraction digits with trailing zeros trimmed. Parsing it with a general
//! date library costs more than decoding the rest of the row, so this parser
//! does only that grammar (plus numeric offsets, in case a future version
//! prints them) with plain integer arithmetic.

/// Parses an RFC 3339 timestamp into nanoseconds since the Unix epoch (the
/// go crate's single copy).
pub use go::time::parse_rfc3339_nanos;

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
