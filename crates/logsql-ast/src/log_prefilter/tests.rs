use logql_parser::Expr;

use super::add_parser_prefilter;
use crate::lower::Discovery;
use crate::plan::LogPlan;

fn plan(q: &str, discovery: &Discovery) -> LogPlan {
    match logql_parser::parse(q).unwrap() {
        Expr::Log(e) => crate::lower_log(&e, discovery).unwrap(),
        other => panic!("not a log query: {other:?}"),
    }
}

/// The LogsQL after the prefilter, or `None` when none applies.
fn prefiltered(q: &str) -> Option<String> {
    let mut p = plan(q, &Discovery::default());
    let stages = p.proxy_stages.clone();
    let added = add_parser_prefilter(&mut p);
    // The proxy still runs the whole pipeline.
    assert_eq!(p.proxy_stages, stages);
    added.then(|| p.query.to_string())
}

#[test]
fn a_filter_after_json_selects_in_victorialogs_and_the_added_fields_are_deleted() {
    let q = prefiltered(r#"{app="api"} | json | status >= 400 | line_format "{{.msg}}""#).unwrap();
    assert_eq!(
        q,
        concat!(
            r#"{app="api"}"#,
            r#" | unpack_json from _msg fields ("status") result_prefix "__lokivl_parsed." keep_original_fields"#,
            r#" | unpack_json if ("__lokivl_parsed.status":"") from _msg result_prefix "__lokivl_all.""#,
            r#" | pack_json fields ("__lokivl_all.*") as "__lokivl_p""#,
            // Nothing unpacked: suspect when the stored fields pass the
            // filter or Loki may have read the key before failing.
            r#" | format if (("__lokivl_parsed.status":"" and "__lokivl_p":="{}""#,
            r#" and ("status":>=400 or (_msg:~"^[ \\t\\n\\r]*\\{" and _msg:"status")))"#,
            r#" or ("status":* and !"status":~"^-?(?:0|[1-9][0-9]{0,14})$")"#,
            r#" or ("status":"" and "__lokivl_parsed.status":* and !"__lokivl_parsed.status":~"^-?(?:0|[1-9][0-9]{0,14})$")"#,
            r#" or (_msg:~"^[ \\t\\n\\r]*\\{" and (_msg:~"\\\\u""#,
            r#" or ("status":"" and (_msg:seq("status","status") or (_msg:"status" and "__lokivl_parsed.status":"")"#,
            r#" or "__lokivl_parsed.status":="["* or "__lokivl_parsed.status":~"[^\\x00-\\x{FFFC}\\x{FFFE}-\\x{10FFFF}]")))))"#,
            r#" "1" as "__lokivl_g""#,
            // Stored wins, else parsed, in a field of its own.
            r#" | format "<status>" as "__lokivl_r.status""#,
            r#" | format "<__lokivl_parsed.status>" as "__lokivl_r.status" keep_original_fields"#,
            r#" | filter "__lokivl_r.status":>=400 or "__lokivl_g":="1" or {status=~".+"}"#,
            r#" | delete "__lokivl_*""#,
        )
    );
}

#[test]
fn only_the_filters_right_after_the_parser_are_used() {
    let q = prefiltered(r#"{app="api"} | json | level="error" | line_format "x" | status >= 400"#)
        .unwrap();
    assert!(q.contains(r#"fields ("level")"#), "{q}");
    assert!(!q.contains("status"), "{q}");
    // A filter the guard cannot cover ends the run.
    let q = prefiltered(r#"{app="api"} | json | level="error" | latency > 1s | status >= 400"#)
        .unwrap();
    assert!(
        q.contains(r#"fields ("level")"#) && !q.contains("latency"),
        "{q}"
    );
}

#[test]
fn other_pipelines_are_left_to_the_proxy() {
    for q in [
        // No filter after the parser.
        r#"{app="api"} | json"#,
        r#"{app="api"} | json | line_format "x" | status >= 400"#,
        // Parameters, other parsers.
        r#"{app="api"} | json status="s.code" | status >= 400"#,
        r#"{app="api"} | logfmt --strict | level="error""#,
        r#"{app="api"} | logfmt level="lvl" | level="error""#,
        r#"{app="api"} | regexp "(?P<status>\\d+)" | status >= 400"#,
        // Error labels, names the guard cannot check.
        r#"{app="api"} | json | __error__="" | status >= 400"#,
        r#"{app="api"} | json | duration > 1s"#,
        r#"{app="api"} | json | status_extracted >= 400"#,
        r#"{app="api"} | json | a__b="x""#,
        // Nothing in the proxy.
        r#"{app="api"} |= "x""#,
    ] {
        assert_eq!(prefiltered(q), None, "{q}");
    }
}

#[test]
fn labels_lokivl_derives_per_entry_are_not_prefiltered() {
    let discovery = Discovery {
        service_name_labels: vec!["app".into()],
        log_levels: true,
    };
    let mut p = plan(r#"{app="api"} | json | detected_level="error""#, &discovery);
    assert!(!add_parser_prefilter(&mut p));
}

#[test]
fn a_filter_after_logfmt_selects_behind_the_logfmt_guard() {
    let q = prefiltered(r#"{app="api"} | logfmt | level="error""#).unwrap();
    assert!(
        q.starts_with(concat!(
            r#"{app="api"}"#,
            r#" | unpack_logfmt from _msg fields ("level") result_prefix "__lokivl_parsed." keep_original_fields"#,
            r#" | format if (_msg:~"#,
        )),
        "{q}"
    );
    assert!(
        q.ends_with(concat!(
            r#" "1" as "__lokivl_g""#,
            r#" | format "<level>" as "__lokivl_r.level""#,
            r#" | format "<__lokivl_parsed.level>" as "__lokivl_r.level" keep_original_fields"#,
            r#" | filter "__lokivl_r.level":="error" or "__lokivl_g":="1" or {level=~".+"}"#,
            r#" | delete "__lokivl_*""#,
        )),
        "{q}"
    );
}
