use super::*;
use crate::pipeline::json_scan::*;

fn parse(line: &str, stream: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut b = LabelsBuilder::new();
    b.reset(stream.iter().copied());
    JsonParser::default().process(line, &mut b, &Hints::default());
    let mut v = Vec::new();
    b.for_each(|n, val, c| {
        if c == Category::Parsed {
            v.push((n.to_owned(), val.to_owned()));
        }
    });
    v
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| ((*a).into(), (*b).into())).collect()
}

#[test]
fn flattens_sanitises_and_skips_arrays_and_null() {
    let got = parse(
        r#"{"a":{"b":"c","d e":1.50},"1x":true,"arr":[1,2],"n":null,"s":"q\"\u00e9","app":"x"}"#,
        &[("app", "api")],
    );
    assert_eq!(
        got,
        pairs(&[
            ("a_b", "c"),
            ("a_d_e", "1.50"),
            ("_1x", "true"),
            ("s", "q\"é"),
            ("app_extracted", "x"),
        ])
    );
}

#[test]
fn string_and_block_ends_honour_backslash_runs() {
    // `\\"` ends the string (escaped backslash), `\"` does not.
    assert_eq!(string_end(br#"ab\\"x"#, 0), Some((5, true)));
    assert_eq!(string_end(br#"a\"b"c"#, 0), Some((5, true)));
    assert_eq!(string_end(br#"plain"tail"#, 0), Some((6, false)));
    assert_eq!(string_end(br#"no end\"#, 0), None);
    assert_eq!(string_end(br#"odd\\\""#, 0), None);
    // Brackets inside strings do not count.
    let d = br#"{"a":"}{\"}","b":{"c":"]"}} rest"#;
    assert_eq!(block_end(d, 0, b'{', b'}'), Some(d.len() - 5));
    assert_eq!(block_end(br#"[1,"]",[2]]"#, 0, b'[', b']'), Some(11));
    assert_eq!(block_end(br#"{"a":"}"#, 0, b'{', b'}'), None);
    let got = parse(r#"{"k":"a\\","m":{"n":"}\"x"},"z":"\u00e9\ufffd"}"#, &[]);
    assert_eq!(got, pairs(&[("k", "a\\"), ("m_n", "}\"x"), ("z", "é ")]));
}

#[test]
fn reused_builder_gives_each_line_its_own_labels() {
    // The builder keeps slot names across lines; a line with other keys
    // in the same positions must not see the previous line's names.
    let mut b = LabelsBuilder::new();
    let mut p = JsonParser::default();
    let hints = Hints::default();
    let mut seen = Vec::new();
    for line in [
        r#"{"a":"1","b":"2"}"#,
        r#"{"b":"3","c":"4"}"#,
        r#"{"a":"5"}"#,
    ] {
        b.reset([("app", "api")]);
        p.process(line, &mut b, &hints);
        let mut v = Vec::new();
        b.for_each(|n, val, _| v.push(format!("{n}={val}")));
        v.sort();
        seen.push(v.join(","));
    }
    assert_eq!(seen, ["a=1,app=api,b=2", "app=api,b=3,c=4", "a=5,app=api"]);
}

#[test]
fn errors_keep_earlier_labels_and_use_the_scanner_text() {
    assert_eq!(
        parse("plain text", &[]),
        pairs(&[
            ("__error__", "JSONParserErr"),
            ("__error_details__", MALFORMED_OBJECT)
        ])
    );
    assert_eq!(
        parse(r#"{"a":"b","c":nope}"#, &[]),
        pairs(&[
            ("a", "b"),
            ("__error__", "JSONParserErr"),
            ("__error_details__", UNKNOWN_VALUE_TYPE)
        ])
    );
    assert_eq!(parse(r#"{"a":"b"} trailing"#, &[]), pairs(&[("a", "b")]));
    assert_eq!(parse("{}", &[]), vec![]);
}

#[test]
fn paths() {
    assert_eq!(
        parse_path(r#"a["b c"][0].d"#).unwrap(),
        vec![
            PathStep::Key("a".into()),
            PathStep::Key("b c".into()),
            PathStep::Index(0),
            PathStep::Key("d".into())
        ]
    );
    assert!(parse_path("a.").is_err());
    let mut b = LabelsBuilder::new();
    b.reset([]);
    let mut p = JsonExpressionParser::new(vec![
        ("m".into(), parse_path("req.method").unwrap()),
        ("f".into(), parse_path("list[1]").unwrap()),
        ("o".into(), parse_path("req").unwrap()),
        ("x".into(), parse_path("missing").unwrap()),
    ]);
    p.process(r#"{"req":{"method":"GET"},"list":["a","b"]}"#, &mut b);
    // Found before the fault: no error (jsonparser's EachKey stops early).
    let mut b = LabelsBuilder::new();
    b.reset([]);
    let mut one = JsonExpressionParser::new(vec![("l".into(), parse_path("level").unwrap())]);
    one.process(r#"{"level":"warn","msg":"cut"#, &mut b);
    assert_eq!((b.get("l"), b.err()), (Some("warn"), ""));
    let mut two = JsonExpressionParser::new(vec![
        ("l".into(), parse_path("level").unwrap()),
        ("m".into(), parse_path("msg").unwrap()),
    ]);
    let mut b = LabelsBuilder::new();
    b.reset([]);
    two.process(r#"{"level":"warn","msg":"cut"#, &mut b);
    assert_eq!(
        (b.get("l"), b.get("m"), b.err_details()),
        (Some("warn"), Some(""), MALFORMED_STRING)
    );
    let mut b = LabelsBuilder::new();
    b.reset([]);
    p.process(r#"{"req":{"method":"GET"},"list":["a","b"]}"#, &mut b);
    assert_eq!(b.get("m"), Some("GET"));
    assert_eq!(b.get("f"), Some("b"));
    assert_eq!(b.get("o"), Some(r#"{"method":"GET"}"#));
    assert_eq!(b.get("x"), Some(""));
}

/// `n` nested `{"a":` levels around `inner`, closed when `close`.
fn deep(n: usize, inner: &str, close: bool) -> String {
    let mut s = "{\"a\":".repeat(n);
    s.push_str(inner);
    if close {
        s.push_str(&"}".repeat(n));
    }
    s
}

/// The label name of `n` nested `a` keys.
fn deep_name(n: usize) -> String {
    vec!["a"; n].join("_")
}

#[test]
fn a_deeply_nested_line_is_parsed_to_the_end_as_loki_does() {
    // Loki has no depth limit (its recursion runs on Go's growable
    // stack); the recursive walk this replaced overflowed the thread's
    // stack here and aborted the process.
    let n = 100_000;
    assert_eq!(
        parse(&deep(n, r#"{"b":"x","c":1}"#, true), &[]),
        vec![
            (format!("{}_b", deep_name(n)), "x".to_owned()),
            (format!("{}_c", deep_name(n)), "1".to_owned())
        ]
    );
    // Unclosed: the outermost value has no end, Loki's first fault.
    assert_eq!(
        parse(&deep(n, r#""x""#, false), &[]),
        pairs(&[
            ("__error__", "JSONParserErr"),
            ("__error_details__", MALFORMED_OBJECT)
        ])
    );
    // A fault at the bottom ends the walk with its text, from any depth.
    assert_eq!(
        parse(&deep(n, r#"{"b":nope}"#, true), &[]),
        pairs(&[
            ("__error__", "JSONParserErr"),
            ("__error_details__", UNKNOWN_VALUE_TYPE)
        ])
    );
    // Deep arrays are skipped whole, as by Loki.
    let arrays = format!(
        r#"{{"k":"v","a":{}{},"z":2}}"#,
        "[".repeat(n),
        "]".repeat(n)
    );
    assert_eq!(parse(&arrays, &[]), pairs(&[("k", "v"), ("z", "2")]));
}

#[test]
fn a_line_whose_names_would_repeat_a_long_key_quadratically_is_refused() {
    // 20,000 labels each named after a 100 kB key would take 2 GB;
    // past the budget the line gets lokivl's error, labels before it stay.
    let long = "k".repeat(100_000);
    let members: Vec<String> = (0..20_000).map(|i| format!(r#""m{i}":1"#)).collect();
    let line = format!(r#"{{"first":"1","{long}":{{{}}}}}"#, members.join(","));
    let mut b = LabelsBuilder::new();
    b.reset([]);
    JsonParser::default().process(&line, &mut b, &Hints::default());
    assert_eq!(b.get("first"), Some("1"));
    assert_eq!((b.err(), b.err_details()), (JSON_PARSER_ERR, TOO_COSTLY));
    let mut n = 0;
    b.for_each(|_, _, _| n += 1);
    assert!(n < 200, "{n} labels set before the bound");
}

#[test]
fn expressions_reach_the_bottom_of_a_deep_line() {
    let n = 100_000;
    let line = deep(n, r#"{"b":"x"}"#, true);
    let mut path = vec!["a"; n].join(".");
    path.push_str(".b");
    let mut p = JsonExpressionParser::new(vec![
        ("x".into(), parse_path(&path).unwrap()),
        ("top".into(), parse_path("a.a").unwrap()),
        ("none".into(), parse_path("a.b").unwrap()),
    ]);
    let mut b = LabelsBuilder::new();
    b.reset([]);
    p.process(&line, &mut b);
    assert_eq!(
        (b.get("x"), b.get("none"), b.err()),
        (Some("x"), Some(""), "")
    );
    assert_eq!(b.get("top").map(str::len), Some(line.len() - 12));
}

/// The recursive walk `JsonParser` had before it became iterative,
/// without hints: the reference the iterative walk must agree with.
fn recursive(obj: &str, key: &mut String, lbs: &mut LabelsBuilder) -> Result<(), &'static str> {
    object_each(obj, &mut |k, v| {
        let len = key.len();
        if !k.trim().is_empty() {
            if !key.is_empty() {
                key.push('_');
            }
            append_sanitized(key, &k);
        }
        let r = match v.kind {
            Kind::Object => recursive(v.raw, key, lbs),
            Kind::String | Kind::Number | Kind::Boolean if !key.is_empty() => {
                if lbs.collides(key) {
                    key.push_str(EXTRACTED);
                }
                if !lbs.extracted(key) {
                    lbs.set(Category::Parsed, key, &scalar_value(v));
                }
                Ok(())
            }
            _ => Ok(()),
        };
        key.truncate(len);
        r
    })
}

#[test]
fn the_iterative_walk_agrees_with_the_recursive_one() {
    use super::walk::tests::{Rng, jsonish};
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut line, mut p) = (String::new(), JsonParser::default());
    let labels = |b: &LabelsBuilder| {
        let mut v = Vec::new();
        b.for_each(|n, val, _| v.push(format!("{n}={val}")));
        v
    };
    for _ in 0..20_000 {
        line.clear();
        jsonish(&mut rng, 14, &mut line);
        let mut want = LabelsBuilder::new();
        want.reset([("a", "s")]);
        if let Err(e) = recursive(&line, &mut String::new(), &mut want) {
            want.set_err(JSON_PARSER_ERR, Some(e));
        }
        let mut got = LabelsBuilder::new();
        got.reset([("a", "s")]);
        p.process(&line, &mut got, &Hints::default());
        assert_eq!(labels(&got), labels(&want), "{line:?}");
    }
}

#[test]
fn unpack_replaces_the_line() {
    let mut b = LabelsBuilder::new();
    b.reset([("app", "api")]);
    let mut drop = false;
    let h = Hints::default();
    let line = unpack(
        r#"{"_entry":"hello \"x\"","app":"a","n":1,"k":"v"}"#,
        &mut b,
        &h,
        &mut drop,
    );
    assert_eq!(line.as_deref(), Some("hello \"x\""));
    assert_eq!(b.get("app_extracted"), Some("a"));
    assert_eq!(b.get("k"), Some("v"));
    assert_eq!(b.get("n"), None);
    let mut b = LabelsBuilder::new();
    b.reset([]);
    assert_eq!(unpack(r#"{"k":"v"}"#, &mut b, &h, &mut drop), None);
    assert_eq!(b.get("k"), None, "labels only when _entry exists");
}
