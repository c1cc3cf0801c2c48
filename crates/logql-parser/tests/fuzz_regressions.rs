//! Inputs the fuzz target (`fuzz/fuzz_targets/parse.rs`) once failed on, kept
//! as regression tests with the answer Loki v3.7.8 gives for them.

use logql_parser::{parse, prettify};

/// Parses, prints, and checks the printed form is stable or a folded non-finite constant.
fn check(q: &str) -> Result<String, String> {
    let expr = parse(q).map_err(|e| e.to_string())?;
    let printed = expr.to_string();
    let pretty = prettify(&expr);
    let unicode = q.chars().any(|c| !c.is_ascii() && c.is_alphanumeric());
    if !(printed.contains("NaN") || printed.contains("Inf") || unicode) {
        let again = parse(&printed).map_err(|e| format!("reparse of {printed:?}: {e}"))?;
        assert_eq!(again.to_string(), printed);
    }
    Ok(pretty)
}

#[test]
fn division_by_zero_folds_to_nan_like_loki() {
    // fuzz crash-613051006b60deb9ae674d62444b71ee6f12f99c: folded to +Inf,
    // which Loki never prints for a division (it answers NaN).
    assert_eq!(check("10 /10 / (0/25/2)"), Ok("NaN".into()));
    assert_eq!(check("-1/0"), Ok("NaN".into()));
    assert_eq!(check("5 % 0"), Ok("NaN".into()));
    assert_eq!(
        check("vector(1) + 1/0"),
        Ok("(vector(1.000000) + NaN)".into())
    );
}

#[test]
fn unicode_label_names_print_like_loki() {
    // fuzz crash-2272915fd240fa3b8dce392713216c7018e0e85e: `orߋypename=~"…"`
    // is one Unicode identifier; Loki quotes such names in matchers (and
    // cannot parse that back), but not in the backtick regex form.
    assert_eq!(
        check(r#"{a="b"} | keep é="x""#),
        Ok(r#"{a="b"} | keep "é"="x""#.into())
    );
    assert_eq!(
        check(r#"{a="b"} | é=~"a.+""#),
        Ok("{a=\"b\"} | é=~`a.+`".into())
    );
    assert_eq!(
        check(r#"{a="b"} | drop é"#),
        Ok(r#"{a="b"} | drop é"#.into())
    );
}
