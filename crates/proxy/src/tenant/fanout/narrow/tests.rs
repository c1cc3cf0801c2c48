use super::*;
use crate::tenant::VlTenant;
use logsql_ast::Filter;

fn member(name: &str) -> Member {
    Member {
        name: name.into(),
        vl: VlTenant::default(),
    }
}

fn names(n: &Narrowed<'_>) -> Vec<String> {
    n.members.iter().map(|m| m.name.clone()).collect()
}

fn printed(n: &Narrowed<'_>) -> Option<String> {
    n.query.as_ref().map(ToString::to_string)
}

fn matcher(label: &str, op: StreamOp, value: &str) -> StreamMatcher {
    StreamMatcher {
        label: label.into(),
        op,
        value: value.into(),
    }
}

fn typed(filter: Filter, pipes: Vec<Pipe>) -> LogsQl {
    LogsQl::Typed(Query { filter, pipes })
}

#[test]
fn typed_matchers_narrow_the_tenants() {
    let ms = [member("a"), member("b"), member("team-c")];
    let app = matcher("app", StreamOp::Eq, "x");
    let q = typed(
        Filter::And(vec![
            Filter::Stream(vec![app.clone(), matcher(TENANT_LABEL, StreamOp::Eq, "a")]),
            Filter::Exact {
                field: "_msg".into(),
                value: "__tenant_id__=\"b\"".into(),
            },
        ]),
        vec![Pipe::Limit(3)],
    );
    let n = narrow(&q, &ms).unwrap();
    assert_eq!(names(&n), ["a"]);
    let LogsQl::Typed(before) = &q else { panic!() };
    let want = Query {
        filter: Filter::And(vec![
            Filter::Stream(vec![app.clone()]),
            Filter::Exact {
                field: "_msg".into(),
                value: "__tenant_id__=\"b\"".into(),
            },
        ]),
        pipes: before.pipes.clone(),
    };
    assert_eq!(n.query, Some(LogsQl::Typed(want)));

    // A stream filter left without matchers selects every stream.
    let q = typed(
        Filter::Stream(vec![matcher(TENANT_LABEL, StreamOp::Re, "a|team-.*")]),
        vec![],
    );
    let n = narrow(&q, &ms).unwrap();
    assert_eq!(names(&n), ["a", "team-c"]);
    assert_eq!(printed(&n).as_deref(), Some("*"));

    let q = typed(
        Filter::Stream(vec![matcher(TENANT_LABEL, StreamOp::Neq, "a"), app.clone()]),
        vec![],
    );
    let n = narrow(&q, &ms).unwrap();
    assert_eq!(names(&n), ["b", "team-c"]);
    assert_eq!(
        printed(&n),
        Some(Filter::Stream(vec![app.clone()]).to_string())
    );

    let q = typed(
        Filter::Stream(vec![matcher(TENANT_LABEL, StreamOp::Nre, "a|b")]),
        vec![],
    );
    assert_eq!(names(&narrow(&q, &ms).unwrap()), ["team-c"]);

    let q = typed(
        Filter::Stream(vec![
            matcher(TENANT_LABEL, StreamOp::Eq, "nobody"),
            app.clone(),
        ]),
        vec![],
    );
    assert!(narrow(&q, &ms).unwrap().members.is_empty());

    let bad = typed(
        Filter::Stream(vec![matcher(TENANT_LABEL, StreamOp::Re, "(")]),
        vec![],
    );
    assert!(narrow(&bad, &ms).is_err());
}

#[test]
fn every_group_of_an_any_filter_loses_its_tenant_matchers() {
    let ms = [member("a"), member("b")];
    let t = matcher(TENANT_LABEL, StreamOp::Eq, "b");
    let q = typed(
        Filter::StreamAny(vec![
            vec![matcher("service_name", StreamOp::Eq, "x"), t.clone()],
            vec![matcher("app", StreamOp::Eq, "x"), t.clone()],
        ]),
        vec![Pipe::Filter(Filter::Not(Box::new(Filter::Stream(vec![
            t.clone(),
        ]))))],
    );
    let n = narrow(&q, &ms).unwrap();
    assert_eq!(names(&n), ["b"]);
    let want = typed(
        Filter::StreamAny(vec![
            vec![matcher("service_name", StreamOp::Eq, "x")],
            vec![matcher("app", StreamOp::Eq, "x")],
        ]),
        vec![Pipe::Filter(Filter::Not(Box::new(Filter::Stream(vec![]))))],
    );
    assert_eq!(n.query, Some(want));
}

#[test]
fn a_query_without_tenant_matchers_is_sent_unchanged() {
    let ms = [member("a"), member("b")];
    let q = typed(
        Filter::Stream(vec![matcher("app", StreamOp::Eq, "x")]),
        vec![],
    );
    let n = narrow(&q, &ms).unwrap();
    assert_eq!(names(&n).len(), 2);
    assert_eq!(n.query, None);
    let n = narrow(
        &LogsQl::Text(r#"{app="x",env="y"} | fields _msg"#.into()),
        &ms,
    )
    .unwrap();
    assert_eq!((n.query, n.members.len()), (None, 2));
}

#[test]
fn text_matchers_narrow_the_tenants() {
    let ms = [member("a"), member("b"), member("team-c")];
    let text = |q: &str| narrow(&LogsQl::Text(q.into()), &ms).unwrap();
    let n = text(r#"{app="x", __tenant_id__="a"} | stats count()"#);
    assert_eq!(names(&n), ["a"]);
    assert_eq!(printed(&n).as_deref(), Some(r#"{app="x"} | stats count()"#));
    let n = text(r#"{__tenant_id__=~"a|team-.*"} "__tenant_id__=\"b\"""#);
    assert_eq!(names(&n), ["a", "team-c"]);
    // The selector is left empty (all streams); the quoted phrase is untouched.
    assert_eq!(printed(&n).as_deref(), Some(r#"* "__tenant_id__=\"b\"""#));
    let n = text(r#"{__tenant_id__!="a", app=~"x,y"}"#);
    assert_eq!(names(&n), ["b", "team-c"]);
    assert_eq!(printed(&n).as_deref(), Some(r#"{app=~"x,y"}"#));
    assert_eq!(names(&text(r#"{__tenant_id__!~"a|b"}"#)), ["team-c"]);
    assert!(
        text(r#"{__tenant_id__="nobody", app="x"}"#)
            .members
            .is_empty()
    );
    assert!(narrow(&LogsQl::Text(r#"{__tenant_id__=~"("}"#.into()), &ms).is_err());
    assert_eq!(
        tenant_matcher(r#"__tenant_id__="a\"b\x41""#),
        Some(("=", "a\"bA".to_owned()))
    );
}
