use logql_parser::{Expr, MetricExpr, RangeAggregation};

use crate::lower::Discovery;
use crate::metric::{RangePlan, StatsFunc};

fn range(q: &str) -> RangeAggregation {
    match logql_parser::parse(q).unwrap() {
        Expr::Metric(MetricExpr::RangeAggregation(r)) => r,
        other => panic!("not a range aggregation: {other:?}"),
    }
}

fn pushed(q: &str, grouping: &[&str]) -> RangePlan {
    let g: Vec<String> = grouping.iter().map(|s| (*s).to_owned()).collect();
    RangePlan::lower_with_parsers(&range(q), &Discovery::default(), &g).unwrap()
}

#[test]
fn a_numeric_filter_after_json_runs_in_victorialogs_with_its_guard() {
    let p = pushed(r#"rate({app="api"} | json | status >= 400 [5m])"#, &[]);
    assert!(p.guarded);
    assert_eq!(p.funcs(), vec![StatsFunc::Count, StatsFunc::Suspect]);
    let q = p.stats_query(60_000_000_000, 0, &[]);
    assert_eq!(
        q,
        concat!(
            r#"{app="api"}"#,
            r#" | unpack_json from _msg fields ("status") result_prefix "__lokivl_parsed." keep_original_fields"#,
            r#" | unpack_json if ("__lokivl_parsed.status":"") from _msg result_prefix "__lokivl_all.""#,
            r#" | pack_json fields ("__lokivl_all.*") as "__lokivl_p""#,
            r#" | format if (("__lokivl_parsed.status":"" and "__lokivl_p":="{}""#,
            r#" and ("status":>=400 or (_msg:~"^[ \\t\\n\\r]*\\{" and _msg:"status")))"#,
            r#" or ("status":* and !"status":~"^-?(?:0|[1-9][0-9]{0,14})$")"#,
            r#" or ("status":"" and "__lokivl_parsed.status":* and !"__lokivl_parsed.status":~"^-?(?:0|[1-9][0-9]{0,14})$")"#,
            r#" or (_msg:~"^[ \\t\\n\\r]*\\{" and (_msg:~"\\\\u""#,
            r#" or ("status":"" and (_msg:seq("status","status") or (_msg:"status" and "__lokivl_parsed.status":"")"#,
            r#" or "__lokivl_parsed.status":="["* or "__lokivl_parsed.status":~"[^\\x00-\\x{FFFC}\\x{FFFE}-\\x{10FFFF}]")))))"#,
            r#" "1" as "__lokivl_g""#,
            r#" | format "<__lokivl_parsed.status>" as "status" keep_original_fields"#,
            r#" | filter "status":>=400 or "__lokivl_g":="1""#,
            r#" | stats by (_time:60000000000ns offset 0ns) count() "__lokivl_c", count() if ("__lokivl_g":="1") "__lokivl_x""#,
        )
    );
}

#[test]
fn a_sum_that_reads_no_label_skips_the_parser_as_loki_does() {
    let p = pushed(r#"count_over_time({app="api"} | json [5m])"#, &[]);
    assert!(!p.guarded);
    assert_eq!(p.query.to_string(), r#"{app="api"}"#);
    let p = pushed(
        r#"count_over_time({app="api"} | json | drop __error__ [5m])"#,
        &[],
    );
    assert_eq!(p.query.to_string(), r#"{app="api"}"#);
    // A grouping, or an error filter, makes Loki parse: guarded.
    assert!(pushed(r#"count_over_time({app="api"} | json [5m])"#, &["app"]).guarded);
    let p = pushed(
        r#"count_over_time({app="api"} | json | __error__="" [5m])"#,
        &[],
    );
    assert!(p.guarded);
    assert!(
        p.query
            .to_string()
            .contains(r#"unpack_json from _msg result_prefix "__lokivl_all.""#)
    );
}

#[test]
fn names_with_underscores_check_their_other_spellings() {
    let p = pushed(
        r#"max_over_time({app="api"} | json | unwrap latency_ms [5m])"#,
        &["app"],
    );
    assert!(p.guarded);
    let q = p.stats_query(60_000_000_000, 0, &["app".to_owned()]);
    for part in [
        r#"_msg:seq("latency","ms")"#,
        r#"_msg:~"latency[^\\x00-\\x7F]ms""#,
        r#""latency.ms":*"#,
        r#"format "<__lokivl_parsed.latency_ms>" as "latency_ms" keep_original_fields"#,
        r#"format "<__lokivl_parsed.app>" as "app" keep_original_fields"#,
        r#"copy "latency_ms" as "__lokivl_v" | filter "__lokivl_v":* or "__lokivl_g":="1""#,
        // Values VictoriaLogs may read otherwise than Go are suspect.
        r#"("latency_ms":* and !"latency_ms":~"^-?(?:0|[1-9][0-9]{0,14})$")"#,
    ] {
        assert!(q.contains(part), "{part} not in {q}");
    }
}

#[test]
fn what_cannot_be_guarded_stays_in_the_proxy() {
    let g = Discovery::default();
    let none: Vec<String> = Vec::new();
    let error = vec!["__error__".to_owned()];
    for (q, grouping) in [
        (r#"rate({app="api"} | json | latency > 5s [5m])"#, &none),
        (
            r#"rate({app="api"} | json | line_format "{{.a}}" [5m])"#,
            &none,
        ),
        (r#"rate({app="api"} | json a="b" | a="x" [5m])"#, &none),
        (
            r#"rate({app="api"} | logfmt --strict | level="error" [5m])"#,
            &none,
        ),
        (
            r#"rate({app="api"} | logfmt level="lvl" | level="error" [5m])"#,
            &none,
        ),
        (
            r#"rate({app="api"} | json | status_extracted="x" [5m])"#,
            &none,
        ),
        (r#"rate({app="api"} | json | __error__!="" [5m])"#, &none),
        (r#"rate({app="api"} | json [5m])"#, &error),
    ] {
        assert!(
            RangePlan::lower_with_parsers(&range(q), &g, grouping).is_err(),
            "{q} was pushed down"
        );
    }
    // Without a grouping (every label), the parser stays in the proxy.
    assert!(RangePlan::lower(&range(r#"rate({app="api"} | json [5m])"#), &g).is_err());
}

#[test]
fn dotted_spellings_cover_every_separator() {
    assert_eq!(super::dotted("a_b_c"), vec!["a.b_c", "a_b.c", "a.b.c"]);
    assert!(super::dotted("ab").is_empty());
}

#[test]
fn raw_samples_carry_the_suspect_mark() {
    let p = pushed(
        r#"quantile_over_time(0.99, {app="api"} | json | unwrap latency_ms | __error__="" [5m])"#,
        &["app"],
    );
    assert!(p.needs_raw() && p.guarded);
    let q = p.raw_query(&["app".to_owned()], 1001);
    assert!(
        q.ends_with(r#" | fields _time, "__lokivl_n", "__lokivl_g", "app" | limit 1001"#),
        "{q}"
    );
}

#[test]
fn logfmt_runs_in_victorialogs_with_its_own_guard() {
    let p = pushed(
        r#"count_over_time({app="pay"} | logfmt | level="error" [5m])"#,
        &[],
    );
    assert!(p.guarded);
    let q = p.query.to_string();
    assert!(
        q.starts_with(concat!(
            r#"{app="pay"} | unpack_logfmt from _msg fields ("level") result_prefix "__lokivl_parsed." keep_original_fields"#,
            r#" | format if ("#,
        )),
        "{q}"
    );
    // The logfmt guard, and nothing of the JSON one (logfmt raises no error).
    assert!(
        q.contains(&crate::logfmt_suspect(&["level".to_owned()], crate::PARSED_PREFIX).to_string())
    );
    assert!(!q.contains("pack_json"), "{q}");
    assert!(q.ends_with(concat!(
        r#" "1" as "__lokivl_g" | format "<__lokivl_parsed.level>" as "level" keep_original_fields"#,
        r#" | filter "level":="error" or "__lokivl_g":="1""#,
    )), "{q}");
    // A sum reading nothing skips the parser, as for JSON.
    let p = pushed(r#"count_over_time({app="pay"} | logfmt [5m])"#, &[]);
    assert!(!p.guarded);
    assert_eq!(p.query.to_string(), r#"{app="pay"}"#);
}

#[test]
fn under_an_error_filter_lines_that_are_not_json_are_dropped_not_suspect() {
    let p = pushed(
        r#"count_over_time({ns="prod"} | json | __error__="" [5m])"#,
        &["level"],
    );
    let q = p.query.to_string();
    // Loki fails on a line not starting with `{` and drops it: so does the filter.
    assert!(
        q.ends_with(r#" | filter _msg:~"^[ \\t\\n\\r]*\\{" or "__lokivl_g":="1""#),
        "{q}"
    );
    // A line that starts with `{` and yields nothing stays suspect.
    assert!(
        q.contains(
            r#"("__lokivl_parsed.level":"" and "__lokivl_p":="{}" and _msg:~"^[ \\t\\n\\r]*\\{")"#
        ),
        "{q}"
    );
    // Without the error filter, every line yielding nothing is suspect.
    let p = pushed(r#"count_over_time({ns="prod"} | json [5m])"#, &["level"]);
    let q = p.query.to_string();
    assert!(!q.contains("| filter "), "{q}");
    assert!(
        q.contains(r#"("__lokivl_parsed.level":"" and "__lokivl_p":="{}")"#),
        "{q}"
    );
}

#[test]
fn summed_values_must_be_integers_whose_sum_no_order_changes() {
    let p = pushed(
        r#"sum_over_time({app="api"} | json | unwrap latency_ms | __error__="" [5m])"#,
        &["app"],
    );
    let q = p.query.to_string();
    assert!(
        q.contains(r#"("latency_ms":* and !"latency_ms":~"^-?(?:0|[1-9][0-9]{0,8})$")"#),
        "{q}"
    );
    let g = Discovery::default();
    let app = vec!["app".to_owned()];
    for q in [
        r#"avg_over_time({app="api"} | json | unwrap latency_ms [5m])"#,
        r#"stddev_over_time({app="api"} | json | unwrap latency_ms [5m])"#,
        r#"sum_over_time({app="api"} | json | unwrap duration(took) [5m])"#,
    ] {
        assert!(
            RangePlan::lower_with_parsers(&range(q), &g, &app).is_err(),
            "{q} was pushed down"
        );
    }
}
