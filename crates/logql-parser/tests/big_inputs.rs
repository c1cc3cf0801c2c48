//! Big and adversarial inputs near the length limit: each must be answered
//! (parsed or rejected with an error) without a panic or stack overflow, and
//! the parser's work must grow linearly with the input (checked by comparing
//! a query with one 8 times its size, with a generous factor, not by clock).

use std::time::Instant;

use logql_parser::{MAX_QUERY_LENGTH, parse};

/// Repeats `unit` to fill about `len` bytes between `head` and `tail`.
fn fill(head: &str, unit: &str, tail: &str, len: usize) -> String {
    let n = (len.saturating_sub(head.len() + tail.len())) / unit.len();
    format!("{head}{}{tail}", unit.repeat(n))
}

fn shapes(len: usize) -> Vec<String> {
    vec![
        fill(r#"{a="b"}"#, r#" |= "xy""#, "", len),
        fill(r#"{a="b"}"#, r#" |= "x" or "y""#, "", len),
        fill(r#"{a="b"} | json"#, r#" | x="1""#, "", len),
        fill(r#"{a="b"} | x="1""#, r#" or y>2"#, "", len),
        fill("", "(", "", len),
        fill("", "{", "", len),
        fill("", r#"{a="b"} |= "#, "", len),
        fill("vector(1)", " + vector(1)", "", len),
        fill(
            "sum(rate({a=\"b\"}[5m]))",
            " or sum(rate({a=\"b\"}[5m]))",
            "",
            len,
        ),
        fill(r#"{a=~""#, "a|", r#""}"#, len),
        fill("", "\"", "", len),
        fill("", "\u{1F600}", "", len),
    ]
}

/// The slowest of a few runs of every shape at size `len`, in seconds.
fn cost(len: usize) -> f64 {
    shapes(len)
        .iter()
        .map(|q| {
            (0..2)
                .map(|_| {
                    let t = Instant::now();
                    let _ = parse(q);
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        })
        .sum()
}

#[test]
fn big_inputs_answer_without_panic() {
    for q in shapes(MAX_QUERY_LENGTH - 1) {
        // Either outcome is fine; it must return.
        let _ = parse(&q);
    }
    // A long but ordinary query is accepted, not cut off by an internal budget.
    let q = fill(r#"{a="b"}"#, r#" |= "xy""#, "", MAX_QUERY_LENGTH - 1);
    assert!(parse(&q).is_ok(), "long line filter chain rejected");
    let q = fill(r#"{a="b"} | json"#, r#" | x="1""#, "", 8000);
    assert!(parse(&q).is_ok(), "long pipeline rejected");
}

#[test]
fn work_grows_linearly() {
    let small = cost(4096);
    let large = cost(32768);
    // Linear work gives a ratio near 8; quadratic would give near 64.
    assert!(
        large < small * 24.0 + 0.05,
        "parse cost grows super-linearly: {small:.4}s at 4 KiB, {large:.4}s at 32 KiB"
    );
}
