//! Oracle cases recorded from Go 1.26.8 (`time`) and prometheus/common
//! v0.67.5 (`model`), the versions Loki 3.7.8 is built with.

use super::*;

/// `time.ParseDuration(input)`: nanoseconds or the error text.
const GO_PARSE: &[(&str, Result<i64, &str>)] = &[
    ("0", Ok(0)),
    ("", Err(r#"time: invalid duration """#)),
    ("-", Err(r#"time: invalid duration "-""#)),
    ("+", Err(r#"time: invalid duration "+""#)),
    ("1h30m", Ok(5400000000000)),
    ("1.5h", Ok(5400000000000)),
    ("250ms", Ok(250000000)),
    ("-3s", Ok(-3000000000)),
    ("+5m", Ok(300000000000)),
    ("1.0000000001s", Ok(1000000000)),
    ("0.1s", Ok(100000000)),
    (".5s", Ok(500000000)),
    ("5.s", Ok(5000000000)),
    (".s", Err(r#"time: invalid duration ".s""#)),
    ("1e3s", Err(r#"time: unknown unit "e" in duration "1e3s""#)),
    ("5", Err(r#"time: missing unit in duration "5""#)),
    ("5x", Err(r#"time: unknown unit "x" in duration "5x""#)),
    (
        "5\u{e9}",
        Err(r#"time: unknown unit "\xc3\xa9" in duration "5\xc3\xa9""#),
    ),
    ("1\u{b5}s", Ok(1000)),
    ("1\u{3bc}s", Ok(1000)),
    ("1us", Ok(1000)),
    ("2562047h47m16.854775807s", Ok(9223372036854775807)),
    (
        "2562047h47m16.854775808s",
        Err(r#"time: invalid duration "2562047h47m16.854775808s""#),
    ),
    ("-2562047h47m16.854775808s", Ok(-9223372036854775808)),
    ("9223372036854775807ns", Ok(9223372036854775807)),
    (
        "9223372036854775808ns",
        Err(r#"time: invalid duration "9223372036854775808ns""#),
    ),
    (
        "99999999999999999999ns",
        Err(r#"time: invalid duration "99999999999999999999ns""#),
    ),
    ("1.333333333333333333333333h", Ok(4800000000000)),
    ("3.000000001h", Ok(10800000003600)),
    ("0.3333333333333333333s", Ok(333333333)),
    ("1h1h", Ok(7200000000000)),
    ("1s1m", Ok(61000000000)),
    ("x1s", Err(r#"time: invalid duration "x1s""#)),
    (
        "1\u{1}s",
        Err(r#"time: unknown unit "\x01s" in duration "1\x01s""#),
    ),
    (
        "1\u{22}s",
        Err(r#"time: unknown unit "\"s" in duration "1\"s""#),
    ),
    (
        "5minutes",
        Err(r#"time: unknown unit "minutes" in duration "5minutes""#),
    ),
    ("1y", Err(r#"time: unknown unit "y" in duration "1y""#)),
    ("1d", Err(r#"time: unknown unit "d" in duration "1d""#)),
    ("0.0000000001s", Ok(0)),
    ("1.00000000000000000000000000001s", Ok(1000000000)),
    ("1h2m3s4ms5us6ns", Ok(3723004005006)),
];

/// `model.ParseDuration(input)`: nanoseconds or the error text.
const PROMETHEUS_PARSE: &[(&str, Result<i64, &str>)] = &[
    ("0", Ok(0)),
    ("", Err(r#"empty duration string"#)),
    ("5m", Ok(300000000000)),
    ("1h30m", Ok(5400000000000)),
    ("15000ms", Ok(15000000000)),
    ("1y", Ok(31536000000000000)),
    ("2w1d", Ok(1296000000000000)),
    ("1m1s1ms", Ok(61001000000)),
    ("1.5s", Err(r#"unknown unit "." in duration "1.5s""#)),
    ("5", Err(r#"not a valid duration string: "5""#)),
    ("1s1m", Err(r#"not a valid duration string: "1s1m""#)),
    ("1h1h", Err(r#"not a valid duration string: "1h1h""#)),
    (
        "5minutes",
        Err(r#"unknown unit "minutes" in duration "5minutes""#),
    ),
    ("-1s", Err(r#"not a valid duration string: "-1s""#)),
    ("1M", Err(r#"unknown unit "M" in duration "1M""#)),
    ("s", Err(r#"not a valid duration string: "s""#)),
    ("99999999999y", Err(r#"duration out of range"#)),
    (
        "99999999999999999999s",
        Err(r#"not a valid duration string: "99999999999999999999s""#),
    ),
    ("106751d23h47m16s854ms", Ok(9223372036854000000)),
    ("106751d23h47m16s855ms", Err(r#"duration out of range"#)),
    ("1\u{e9}", Err(r#"unknown unit "é" in duration "1é""#)),
    ("5m0s", Ok(300000000000)),
    ("0s", Ok(0)),
    ("1ms1s", Err(r#"not a valid duration string: "1ms1s""#)),
];

/// `(ns, time.Duration(ns).String(), model.Duration(ns).String())`.
const STRINGS: &[(i64, &str, &str)] = &[
    (0, "0s", "0s"),
    (1, "1ns", "0s"),
    (999, "999ns", "0s"),
    (1000, "1µs", "0s"),
    (1500, "1.5µs", "0s"),
    (999999, "999.999µs", "0s"),
    (1000000, "1ms", "1ms"),
    (250000000, "250ms", "250ms"),
    (999999999, "999.999999ms", "999ms"),
    (1000000000, "1s", "1s"),
    (1500000000, "1.5s", "1s500ms"),
    (90000000000, "1m30s", "1m30s"),
    (3600000000000, "1h0m0s", "1h"),
    (2692800000000000, "748h0m0s", "31d4h"),
    (3723500000000, "1h2m3.5s", "1h2m3s500ms"),
    (-90000000000, "-1m30s", "-1m30s"),
    (-1, "-1ns", "0s"),
    (-1500, "-1.5µs", "0s"),
    (
        9223372036854775807,
        "2562047h47m16.854775807s",
        "106751d23h47m16s854ms",
    ),
    (
        -9223372036854775808,
        "-2562047h47m16.854775808s",
        "-106751d23h47m16s854ms",
    ),
    (5400000000000, "1h30m0s", "1h30m"),
    (604800000000000, "168h0m0s", "1w"),
    (691200000000000, "192h0m0s", "8d"),
    (31536000000000000, "8760h0m0s", "1y"),
    (31622400000000000, "8784h0m0s", "366d"),
    (61005000000, "1m1.005s", "1m1s5ms"),
    (500000, "500µs", "0s"),
    (-86400000000000, "-24h0m0s", "-1d"),
    (1209600000000000, "336h0m0s", "2w"),
    (7776000000000000, "2160h0m0s", "90d"),
];

/// `(ns, time.Duration(ns).Seconds())`.
const SECONDS: &[(i64, f64)] = &[
    (100000000, 0.1),
    (1100000000, 1.1),
    (3300000000, 3.3),
    (123456789000000, 123456.789),
    (1000000001, 1.000000001),
    (-2500000000, -2.5),
    (9223372036854775807, 9.223372036854776e+09),
];

#[test]
fn parse_go_matches_go() {
    for (input, want) in GO_PARSE {
        let got = Duration::parse_go(input)
            .map(Duration::as_nanos)
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_owned), "{input:?}");
    }
}

#[test]
fn parse_prometheus_matches_prometheus() {
    for (input, want) in PROMETHEUS_PARSE {
        let got = Duration::parse_prometheus(input)
            .map(Duration::as_nanos)
            .map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_owned), "{input:?}");
    }
}

#[test]
fn parse_logql_tries_prometheus_then_go() {
    assert_eq!(
        Duration::parse_logql("1w"),
        Ok(Duration(604_800_000_000_000))
    );
    assert_eq!(
        Duration::parse_logql("1.5h"),
        Ok(Duration(5_400_000_000_000))
    );
    assert_eq!(Duration::parse_logql("-5m"), Ok(Duration(-300_000_000_000)));
    assert_eq!(
        Duration::parse_logql("5x").unwrap_err().to_string(),
        r#"time: unknown unit "x" in duration "5x""#
    );
}

#[test]
fn strings_match_go_and_prometheus() {
    for (ns, go, prom) in STRINGS {
        assert_eq!(Duration(*ns).to_go_string(), *go, "{ns}");
        assert_eq!(Duration(*ns).to_prometheus_string(), *prom, "{ns}");
    }
}

#[test]
fn seconds_match_go() {
    for (ns, secs) in SECONDS {
        assert_eq!(
            Duration(*ns).as_secs_f64().to_bits(),
            secs.to_bits(),
            "{ns}"
        );
    }
}
