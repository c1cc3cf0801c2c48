use super::*;
use crate::tenant::VlTenant;
use engine::ndjson::{Decoder, Rows, Source as _};

fn member(name: &str) -> Member {
    Member {
        name: name.into(),
        vl: VlTenant::default(),
    }
}

/// `(time, msg, stream, stream_id, fields)` of a decoded row, owned.
type Owned = (i64, String, String, String, Vec<(String, String)>);

fn decoded(src: &mut impl engine::ndjson::Source) -> Vec<Owned> {
    let mut rows = Rows::new();
    Decoder::new().decode(src, &mut rows).unwrap();
    rows.rows
        .iter()
        .map(|r| {
            let f = rows
                .fields_of(r)
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            (
                r.time_ns,
                r.msg.to_owned(),
                r.stream.to_owned(),
                r.stream_id.to_owned(),
                f,
            )
        })
        .collect()
}

/// The merge lokivl ran before rows were typed: every line parsed into a
/// `serde_json` map, labelled, printed again as NDJSON. The reference the
/// typed merge must decode the same as.
fn merged_as_text(answers: &[(&Member, BytesMut)], take: Option<Take>) -> BytesMut {
    let mut rows: Vec<(i64, Vec<u8>)> = Vec::new();
    for (m, body) in answers {
        for line in body[..].split(|&b| b == b'\n') {
            let Ok(mut obj) =
                serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
            else {
                continue;
            };
            let ts = obj
                .get("_time")
                .and_then(|t| t.as_str())
                .and_then(parse_rfc3339_nanos)
                .unwrap_or(0);
            if let Some(serde_json::Value::String(s)) = obj.get_mut("_stream") {
                let mut out = String::new();
                with_tenant_label(&mut out, s, &m.name);
                *s = out;
            }
            obj.insert(
                TENANT_LABEL.to_owned(),
                serde_json::Value::String(m.name.clone()),
            );
            let mut bytes = serde_json::to_vec(&obj).unwrap();
            bytes.push(b'\n');
            rows.push((ts, bytes));
        }
    }
    match take {
        Some(Take::Newest(limit)) => {
            rows.sort_by_key(|r| std::cmp::Reverse(r.0));
            rows.truncate(limit);
        }
        Some(Take::Oldest(n)) => {
            rows.sort_by_key(|r| r.0);
            rows.truncate(n);
        }
        None => {}
    }
    rows.into_iter().flat_map(|r| r.1).collect::<Vec<u8>>()[..].into()
}

const A: &str = concat!(
    "{\"_time\":\"2026-01-01T00:00:03Z\",\"_stream_id\":\"s1\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"a3 \\\"q\\\" \\u00e9\",\"app\":\"x\",\"zz\":\"1\",\"Up\":\"2\"}\n",
    "\r\n",
    "{\"_time\":\"2026-01-01T00:00:01Z\",\"_stream\":\"{}\",\"_msg\":\"a1\",\"__tenant_id__\":\"forged\"}\n",
    "{\"_time\":\"2026-01-01T00:00:02Z\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"a2\",\"n\":5,\"o\":{\"p\":\"q\"}}\n",
);
const B: &str = concat!(
    "{\"_time\":\"2026-01-01T00:00:02Z\",\"_stream\":\"{app=\\\"x\\\"}\",\"_msg\":\"b2\",\"app\":\"x\"}\n",
    "{\"_time\":\"2026-01-01T00:00:03Z\",\"_stream\":\" { app=\\\"y\\\" } \",\"_msg\":\"b3\"}",
);

#[test]
fn rows_decode_as_the_printed_merge_did() {
    let (a, b) = (member("a"), member("b"));
    for take in [
        None,
        Some(Take::Newest(100)),
        Some(Take::Newest(2)),
        Some(Take::Newest(0)),
        Some(Take::Oldest(3)),
        Some(Take::Oldest(100)),
    ] {
        let mut answers = vec![(&a, BytesMut::from(A)), (&b, BytesMut::from(B))];
        let mut text = merged_as_text(&answers, take);
        let mut set = rows(&mut answers, take).unwrap();
        assert_eq!(decoded(&mut set), decoded(&mut text), "{take:?}");
        assert_eq!(set.row_count(), text.row_count(), "{take:?}");
    }
}

#[test]
fn rows_are_labelled_sorted_and_cut() {
    let (a, b) = (member("a"), member("b"));
    let mut answers = vec![(&a, BytesMut::from(A)), (&b, BytesMut::from(B))];
    let mut set = rows(&mut answers, Some(Take::Newest(3))).unwrap();
    let got = decoded(&mut set);
    // Newest first; at equal times member order, then answer order.
    let msgs: Vec<&str> = got.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(msgs, ["a3 \"q\" é", "b3", "a2"]);
    assert_eq!(got[1].2, r#"{__tenant_id__="b",app="y"}"#);
    assert_eq!(
        got[0].4,
        [
            ("Up".to_owned(), "2".to_owned()),
            ("__tenant_id__".to_owned(), "a".to_owned()),
            ("app".to_owned(), "x".to_owned()),
            ("zz".to_owned(), "1".to_owned()),
        ]
    );
    let mut answers = vec![(&a, BytesMut::from(A)), (&b, BytesMut::from(B))];
    let mut fwd = rows(&mut answers, Some(Take::Oldest(3))).unwrap();
    let got = decoded(&mut fwd);
    let msgs: Vec<&str> = got.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(msgs, ["a1", "a2", "b2"]);
    // A forged tenant field is replaced by the member's name.
    assert_eq!(got[0].2, r#"{__tenant_id__="a"}"#);
    assert_eq!(got[0].4, [("__tenant_id__".to_owned(), "a".to_owned())]);
}

#[test]
fn stats_rows_without_time_keep_answer_order() {
    let (a, b) = (member("a"), member("b"));
    let mut answers = vec![
        (
            &a,
            BytesMut::from("{\"_stream\":\"{app=\\\"x\\\"}\",\"e\":\"3\"}\n"),
        ),
        (&b, BytesMut::from("{\"e\":\"1\"}\n")),
    ];
    let mut set = rows(&mut answers, None).unwrap();
    let mut seen = Vec::new();
    engine::ndjson::stats_rows::for_each_row(
        &mut set,
        |f| {
            seen.push(
                f.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            Ok::<_, String>(())
        },
        |m| m,
    )
    .unwrap();
    assert_eq!(
        seen,
        [
            r#"__tenant_id__=a _stream={__tenant_id__="a",app="x"} e=3"#,
            "__tenant_id__=b e=1"
        ]
    );
}

#[test]
fn a_broken_member_answer_names_the_tenant() {
    let (a, b) = (member("a"), member("team-b"));
    let mut answers = vec![
        (&a, BytesMut::from(A)),
        (
            &b,
            BytesMut::from("{\"_time\":\"2026-01-01T00:00:02Z\"}\n[1]\n"),
        ),
    ];
    let err = rows(&mut answers, None).unwrap_err().to_string();
    assert!(
        err.contains("invalid answer for tenant team-b, line 2: expected a JSON object"),
        "{err}"
    );
    let mut answers = vec![(&b, BytesMut::from("{\"_time\":\"yesterday\"}\n"))];
    let err = rows(&mut answers, None).unwrap_err().to_string();
    assert!(
        err.contains("tenant team-b, line 1: malformed _time"),
        "{err}"
    );
}

#[test]
fn stream_labels() {
    let label = |s: &str, n: &str| {
        let mut out = String::new();
        with_tenant_label(&mut out, s, n);
        out
    };
    assert_eq!(label("{}", "a"), r#"{__tenant_id__="a"}"#);
    assert_eq!(
        label(r#"{app="x",env="y"}"#, "12"),
        r#"{__tenant_id__="12",app="x",env="y"}"#
    );
}

fn hits(v: &[(&str, u64)]) -> Vec<Hit> {
    v.iter()
        .map(|(value, hits)| Hit {
            value: (*value).to_owned(),
            hits: *hits,
        })
        .collect()
}

#[test]
fn values_are_summed_in_value_order() {
    let (a, b) = (member("a"), member("b"));
    let answers = vec![
        (&a, hits(&[("web", 2), ("api", 1)])),
        (&b, hits(&[("api", 1), ("db", 4)])),
    ];
    assert_eq!(
        into_hits(values(answers)),
        hits(&[("api", 2), ("db", 4), ("web", 2)])
    );
}

#[test]
fn names_include_the_tenant_label() {
    let (a, b) = (member("a"), member("b"));
    let answers = vec![
        (&a, hits(&[("app", 2)])),
        (&b, hits(&[("app", 1), ("env", 1)])),
    ];
    assert_eq!(
        names(answers),
        hits(&[("__tenant_id__", 4), ("app", 3), ("env", 1)])
    );
    assert_eq!(names(vec![(&a, vec![])]), hits(&[("__tenant_id__", 1)]));
}

#[test]
fn streams_are_labelled_in_member_order() {
    let (a, b) = (member("a"), member("b"));
    let answers = vec![
        (&b, hits(&[(r#"{app="x"}"#, 2)])),
        (&a, hits(&[(r#"{app="x"}"#, 1), ("{}", 1)])),
    ];
    assert_eq!(
        streams(answers),
        hits(&[
            (r#"{__tenant_id__="b",app="x"}"#, 2),
            (r#"{__tenant_id__="a",app="x"}"#, 1),
            (r#"{__tenant_id__="a"}"#, 1),
        ])
    );
}
