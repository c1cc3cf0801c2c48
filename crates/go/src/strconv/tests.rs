//! Oracle cases recorded from Go 1.26.8 (the Go Loki 3.7.8 is built with).

use super::*;

/// `(input, strconv.Quote(input))` as Go printed them.
const QUOTE_CASES: &[(&str, &str)] = &[
    ("", r#""""#),
    ("plain", r#""plain""#),
    ("a\u{22}b\u{5c}c\u{a}\u{9}\u{e9}", r#""a\"b\\c\n\té""#),
    ("\u{1}\u{7f}", r#""\x01\x7f""#),
    ("\u{a0}", r#""\u00a0""#),
    ("\u{ad}", r#""\u00ad""#),
    ("\u{85}", r#""\u0085""#),
    ("\u{2028}", r#""\u2028""#),
    ("\u{200b}", r#""\u200b""#),
    ("\u{feff}", r#""\ufeff""#),
    ("\u{fffd}", r#""�""#),
    ("\u{e000}", r#""\ue000""#),
    ("\u{1f600}", r#""😀""#),
    ("\u{e0001}", r#""\U000e0001""#),
    ("\u{10ffff}", r#""\U0010ffff""#),
    ("\u{378}", r#""\u0378""#),
    ("\u{65e5}\u{672c}\u{8a9e}", r#""日本語""#),
    ("\u{7}\u{8}\u{c}\u{b}\u{d}", r#""\a\b\f\v\r""#),
    ("\u{3000}", r#""\u3000""#),
    ("\u{1d173}", r#""\U0001d173""#),
    ("\u{e0100}", r#""󠄀""#),
    ("\u{10000}", r#""𐀀""#),
    ("\u{600}", r#""\u0600""#),
];

/// `strconv.IsPrint(r)` for r = 0, 997, 1994, … up to U+10FFFF: P printable,
/// N not, - a surrogate (no Rust `char`).
const IS_PRINT_EVERY_997: &str = "NPPPPPNPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPP--NNNNNNPPPPNNPPNNPPNNPPNNNNNNNNNNNNNPNPPPPPPPNNNNNNNNNPNNNNNNNPNPNPPNNPNPPNPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPNNNNNPPPPPPPPPNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN";

#[test]
fn quote_matches_go() {
    for (input, want) in QUOTE_CASES {
        assert_eq!(quote(input), *want, "{input:?}");
    }
}

#[test]
fn is_print_matches_go_across_unicode() {
    for (i, expect) in IS_PRINT_EVERY_997.chars().enumerate() {
        let r = u32::try_from(i).unwrap() * 997;
        match char::from_u32(r) {
            Some(c) => assert_eq!(is_print(c), expect == 'P', "U+{r:04X}"),
            None => assert_eq!(expect, '-', "U+{r:04X}"),
        }
    }
}

#[test]
fn append_quote_appends() {
    let mut out = b"x=".to_vec();
    append_quote(&mut out, "a\u{a0}b");
    assert_eq!(out, br#"x="a\u00a0b""#);
}

#[test]
fn unquotes_go_escapes() {
    assert_eq!(unquote(r#""a\"b\n\x41\u00e9\101""#).unwrap(), "a\"b\nAéA");
    assert_eq!(unquote(r"`a\d+`").unwrap(), r"a\d+");
    assert_eq!(unquote("`a\rb`").unwrap(), "ab");
    // Byte escapes are bytes: together they may spell a character.
    assert_eq!(unquote(r#""\xc3\xa9\303\251""#).unwrap(), "éé");
    assert_eq!(unquote_bytes(r#""\xff""#).unwrap(), [0xff]);
    assert_eq!(unquote(r#""\xff""#), Err(UnquoteError::InvalidUtf8));
}

#[test]
fn unquote_rejects_what_go_rejects() {
    assert_eq!(unquote(r#""\q""#), Err(UnquoteError::InvalidEscape));
    assert_eq!(unquote(r#""\x4""#), Err(UnquoteError::InvalidEscape));
    assert_eq!(unquote(r#""\400""#), Err(UnquoteError::OctalRange));
    assert_eq!(unquote(r#""\ud800""#), Err(UnquoteError::InvalidCodePoint));
    assert_eq!(
        unquote(r#""\U00110000""#),
        Err(UnquoteError::InvalidCodePoint)
    );
    assert_eq!(unquote(r#""abc"#), Err(UnquoteError::NotTerminated));
    assert_eq!(
        UnquoteError::InvalidEscape.to_string(),
        "invalid char escape"
    );
}

/// `strconv.ParseFloat(input, 64)`: the value or Go's error text.
const PARSE_FLOAT_CASES: &[(&str, Result<f64, &str>)] = &[
    ("1", Ok(1.0)),
    ("-1.5", Ok(-1.5)),
    ("+2e3", Ok(2000.0)),
    (
        "1e400",
        Err(r#"strconv.ParseFloat: parsing "1e400": value out of range"#),
    ),
    (
        "-1e400",
        Err(r#"strconv.ParseFloat: parsing "-1e400": value out of range"#),
    ),
    ("1e-400", Ok(0.0)),
    ("inf", Ok(f64::INFINITY)),
    ("+Inf", Ok(f64::INFINITY)),
    ("-infinity", Ok(f64::NEG_INFINITY)),
    ("NaN", Ok(f64::NAN)),
    ("nan", Ok(f64::NAN)),
    ("", Err(r#"strconv.ParseFloat: parsing "": invalid syntax"#)),
    (
        ".",
        Err(r#"strconv.ParseFloat: parsing ".": invalid syntax"#),
    ),
    ("1.", Ok(1.0)),
    (".5", Ok(0.5)),
    (
        "1e",
        Err(r#"strconv.ParseFloat: parsing "1e": invalid syntax"#),
    ),
    ("1_000", Ok(1000.0)),
    (
        "1__0",
        Err(r#"strconv.ParseFloat: parsing "1__0": invalid syntax"#),
    ),
    (
        "_1",
        Err(r#"strconv.ParseFloat: parsing "_1": invalid syntax"#),
    ),
    (
        "1_",
        Err(r#"strconv.ParseFloat: parsing "1_": invalid syntax"#),
    ),
    (
        "1_.5",
        Err(r#"strconv.ParseFloat: parsing "1_.5": invalid syntax"#),
    ),
    (
        "1._5",
        Err(r#"strconv.ParseFloat: parsing "1._5": invalid syntax"#),
    ),
    ("1e1_0", Ok(1e+10)),
    (
        "1e_1",
        Err(r#"strconv.ParseFloat: parsing "1e_1": invalid syntax"#),
    ),
    (
        "0x10",
        Err(r#"strconv.ParseFloat: parsing "0x10": invalid syntax"#),
    ),
    (
        "abc",
        Err(r#"strconv.ParseFloat: parsing "abc": invalid syntax"#),
    ),
    (
        " 1",
        Err(r#"strconv.ParseFloat: parsing " 1": invalid syntax"#),
    ),
    (
        "1é",
        Err(r#"strconv.ParseFloat: parsing "1é": invalid syntax"#),
    ),
    ("Infinity", Ok(f64::INFINITY)),
    (
        "+nan",
        Err(r#"strconv.ParseFloat: parsing "+nan": invalid syntax"#),
    ),
    (
        "-NaN",
        Err(r#"strconv.ParseFloat: parsing "-NaN": invalid syntax"#),
    ),
    ("99999999999999999999999999", Ok(1e+26)),
    ("1.5E-3", Ok(0.0015)),
    (
        "1e+",
        Err(r#"strconv.ParseFloat: parsing "1e+": invalid syntax"#),
    ),
    (
        "-",
        Err(r#"strconv.ParseFloat: parsing "-": invalid syntax"#),
    ),
    ("+.5e-1", Ok(0.05)),
    (
        "1.2.3",
        Err(r#"strconv.ParseFloat: parsing "1.2.3": invalid syntax"#),
    ),
    (
        "infx",
        Err(r#"strconv.ParseFloat: parsing "infx": invalid syntax"#),
    ),
];

#[test]
fn parse_float_matches_go() {
    for (input, want) in PARSE_FLOAT_CASES {
        match (parse_float(input), want) {
            (Ok(got), Ok(want)) => assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{input:?}: {got}"
            ),
            (Err(got), Err(want)) => assert_eq!(got.to_string(), *want, "{input:?}"),
            (got, _) => panic!("{input:?}: {got:?}, Go: {want:?}"),
        }
    }
}
