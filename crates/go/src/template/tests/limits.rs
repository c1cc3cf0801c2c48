//! The bounds of `template::limits`: hostile templates and lines get an
//! error (Go's words where Go has one), never a crash or an unbounded
//! allocation. Texts marked "Go" were checked against Go 1.26's
//! `text/template` with sprig v3.3.0, as Loki 3.7 builds them.

use super::{MapCtx, run};
use crate::template::limits::{MAX_CACHED_REGEXES, MAX_DEPTH, MAX_OUTPUT_BYTES};
use crate::template::{Template, TemplateError};

fn ctx() -> MapCtx {
    MapCtx {
        labels: vec![
            ("a", "A"),
            ("multi", "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10"),
            ("kb", KB),
        ],
        line: "the line",
        ts: 0,
    }
}

const KB: &str = concat!(
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
);

/// Runs `f` on a thread with a 1 MiB stack (half a tokio worker's), so a
/// test fails by overflowing it if the bound leaves too little margin.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn parens(n: usize) -> String {
    format!("{{{{{}1{}}}}}", "(".repeat(n), ")".repeat(n))
}

fn nested(open: &str, n: usize) -> String {
    format!("{}x{}", open.repeat(n), "{{end}}".repeat(n))
}

fn parse_err(t: &str) -> String {
    match Template::parse(t) {
        Err(TemplateError::Parse(e)) => e,
        other => panic!(
            "{t:.40}: want a parse error, got {:.200}",
            format!("{other:?}")
        ),
    }
}

fn exec_err(t: &str) -> String {
    match run(t, &ctx()) {
        Err(TemplateError::Exec(e)) => e,
        other => panic!(
            "{t:.60}: want an exec error, got {:.200}",
            format!("{other:?}")
        ),
    }
}

const TOO_DEEP: &str = "template: line:1: max expression depth exceeded";

/// At [`MAX_DEPTH`] every nesting shape parses, renders, lists its fields
/// and drops on a 1 MiB stack; one level more is Go's parse error for its
/// own (deeper) parenthesis bound.
#[test]
fn nesting_up_to_max_depth_runs_on_a_small_stack() {
    on_small_stack(|| {
        for t in [
            parens(MAX_DEPTH),
            nested("{{if 1}}", MAX_DEPTH),
            nested("{{with 1}}", MAX_DEPTH),
            nested("{{range 1}}", MAX_DEPTH),
        ] {
            let tpl = Template::parse(&t).unwrap();
            let mut out = String::new();
            tpl.render(&ctx(), &mut out).unwrap();
            assert!(out == "1" || out == "x", "{out}");
            let _ = (tpl.fields(), tpl.referenced_labels());
        }
    });
    assert_eq!(parse_err(&parens(MAX_DEPTH + 1)), TOO_DEEP);
    assert_eq!(parse_err(&nested("{{if 1}}", MAX_DEPTH + 1)), TOO_DEEP);
    assert_eq!(parse_err(&nested("{{range 1}}", MAX_DEPTH + 1)), TOO_DEEP);
    // Parentheses and control bodies add up.
    let mixed = format!(
        "{}{}{}",
        "{{with 1}}".repeat(MAX_DEPTH / 2),
        parens(MAX_DEPTH / 2 + 1),
        "{{end}}".repeat(MAX_DEPTH / 2)
    );
    assert_eq!(parse_err(&mixed), TOO_DEEP);
}

/// A hundred thousand levels, the shape that aborted the process, are
/// refused before the parser recurses past the bound; the line is the one
/// where the bound was passed.
#[test]
fn deep_nesting_is_refused_without_recursing() {
    let got = on_small_stack(|| {
        [
            parse_err(&parens(100_000)),
            parse_err(&nested("{{if 1}}", 100_000)),
            parse_err(&format!("{{{{with 1}}}}\n{}", parens(100_000))),
            // Unclosed: the bound is met before the lexer's error at the end.
            parse_err(&format!("{{{{{}", "(".repeat(100_000))),
        ]
    });
    assert_eq!(got[0], TOO_DEEP);
    assert_eq!(got[1], TOO_DEEP);
    assert_eq!(got[2], "template: line:2: max expression depth exceeded");
    assert_eq!(got[3], TOO_DEEP);
}

/// `else if` chains are one level however long (Go accepts any length):
/// a 100 000-link chain parses, takes its last arm, and drops on a small stack.
#[test]
fn long_else_if_chains_are_flat() {
    let out = on_small_stack(|| {
        let mut t = String::from("{{if eq .a \"0\"}}0");
        for k in 1..100_000 {
            t.push_str(&format!("{{{{else if eq .a \"{k}\"}}}}{k}"));
        }
        t.push_str("{{else if eq .a \"A\"}}last{{else}}none{{end}}");
        let tpl = Template::parse(&t).unwrap();
        assert_eq!(tpl.fields().len(), 100_001);
        let mut out = String::new();
        tpl.render(&ctx(), &mut out).unwrap();
        out
    });
    assert_eq!(out, "last");
    // Same meaning as Go's nesting: variables of earlier arms stay visible.
    let t = "{{if $x := .missing}}a{{else if $y := .a}}{{$x}}-{{$y}}{{end}}";
    assert_eq!(run(t, &ctx()).unwrap(), "-A");
    assert_eq!(
        parse_err("{{if 1}}{{else with 1}}{{end}}"),
        "template: line:1: unexpected <with> in input"
    );
}

/// Go's `fmt` refuses widths and precisions past 1e6 (`tooLarge`): from an
/// argument with `%!(BADWIDTH)`/`%!(BADPREC)`; written out, a number still
/// growing past 1e6 ends the format (`%!(NOVERB)`). Go.
#[test]
fn printf_width_and_precision_are_capped_as_go_does() {
    for (t, want) in [
        (r#"{{printf "%100000000d" 5}}"#, "%!(NOVERB)%!(EXTRA int=5)"),
        (r#"{{printf "%10000010d" 5}}"#, "%!(NOVERB)%!(EXTRA int=5)"),
        (
            r#"{{printf "%.100000000d" 5}}"#,
            "%!(NOVERB)%!(EXTRA int=5)",
        ),
        (r#"{{printf "%*d" 1000001 5}}"#, "%!(BADWIDTH)5"),
        (r#"{{printf "%*d" -1000001 5}}"#, "%!(BADWIDTH)5"),
        (r#"{{printf "%.*d" 1000001 5}}"#, "%!(BADPREC)5"),
        (r#"{{printf "%.*s" 1000001 "abc"}}"#, "%!(BADPREC)abc"),
        (r#"{{printf "%-*d|" 3 5}}"#, "5  |"),
        (r#"{{printf "%.d|" 3}}"#, "3|"),
        (r#"{{printf "%5." 3}}"#, "%!.(int=    3)"),
    ] {
        assert_eq!(run(t, &ctx()).unwrap(), want, "{t}");
    }
    // Within Go's caps: a width of a million pads (and precision padding
    // is linear, not one insertion per zero).
    let out = run(r#"{{printf "%1000000d|" 5}}"#, &ctx()).unwrap();
    assert_eq!((out.len(), &out[999_990..]), (1_000_001, "         5|"));
    let out = run(r#"{{printf "%.1000000d" -5}}"#, &ctx()).unwrap();
    assert_eq!(
        (out.len(), &out[..3], &out[999_999..]),
        (1_000_001, "-00", "05")
    );
}

/// Go pads up to about 1e7 bytes when the width is written out; that passes
/// the output limit, which refuses it before allocating (deviation).
#[test]
fn printf_past_the_output_limit_fails() {
    let want = |t: &str| {
        format!(
            "template: line:1:2: executing \"line\" at <{t}>: error calling printf: \
             result exceeds the template output limit ({MAX_OUTPUT_BYTES} bytes)"
        )
    };
    for t in [
        r#"printf "%10000000d" 5"#,
        r#"printf "%.9999999f" 1.5"#,
        r#"printf "%-10000009s|" "x""#,
        r#"printf "%1000000d%1000000d" 1 2"#,
    ] {
        assert_eq!(exec_err(&format!("{{{{{t}}}}}")), want(t));
    }
}

/// `indent`/`nindent`/`repeat` pad with Go's `strings.Repeat`, whose
/// panics the template reports as the call's error (Go); sizes past the
/// output limit are refused before allocating.
#[test]
fn repeat_counts_fail_as_go_or_at_the_limit() {
    let limit = format!("result exceeds the template output limit ({MAX_OUTPUT_BYTES} bytes)");
    for (t, why) in [
        (
            r#"indent -1 "x""#,
            "error calling indent: strings: negative Repeat count",
        ),
        (
            r#"nindent -3 "x""#,
            "error calling nindent: strings: negative Repeat count",
        ),
        (
            r#"repeat -1 "x""#,
            "error calling repeat: strings: negative Repeat count",
        ),
        (
            r#"repeat 9223372036854775807 "xx""#,
            "error calling repeat: strings: Repeat output length overflow",
        ),
        (
            r#"repeat 1048577 "x""#,
            &format!("error calling repeat: {limit}"),
        ),
        (
            r#"indent 2000000 "x""#,
            &format!("error calling indent: {limit}"),
        ),
        // Ten lines, each indented: the pad counts once per line.
        (
            r#"indent 110000 .multi"#,
            &format!("error calling indent: {limit}"),
        ),
        (
            r#"alignLeft 100000000 "x""#,
            &format!("error calling alignLeft: {limit}"),
        ),
        (
            r#"alignRight 1048577 "x""#,
            &format!("error calling alignRight: {limit}"),
        ),
        (
            r#"replace "" (repeat 1100 "x") .kb"#,
            &format!("error calling replace: {limit}"),
        ),
        (
            r#"Replace .kb "" (repeat 1100 "x") -1"#,
            &format!("error calling Replace: {limit}"),
        ),
        (
            r#"regexReplaceAll "." .kb (repeat 1100 "b")"#,
            &format!("error calling regexReplaceAll: {limit}"),
        ),
        (
            r#"regexReplaceAllLiteral "." .kb (repeat 1100 "b")"#,
            &format!("error calling regexReplaceAllLiteral: {limit}"),
        ),
    ] {
        assert_eq!(
            exec_err(&format!("{{{{{t}}}}}")),
            format!("template: line:1:2: executing \"line\" at <{t}>: {why}"),
        );
    }
    // Under the limit they work as before.
    for (t, want) in [
        (r#"{{indent 2 "a\nb"}}"#, "  a\n  b"),
        (
            r#"{{alignLeft -5 "abc"}}|{{alignRight 5 "abc"}}"#,
            "abc|  abc",
        ),
        (r#"{{len (repeat 1048576 "x")}}"#, "1048576"),
        (r#"{{Replace "aa" "a" "bb" 1}}"#, "bba"),
        (r#"{{regexReplaceAll "(a)" "xay" "<$1$1>"}}"#, "x<aa>y"),
    ] {
        assert_eq!(run(t, &ctx()).unwrap(), want, "{t}");
    }
}

/// `range N` iterates lazily and pays a step per iteration: the largest
/// int neither allocates nor runs for hours, it spends the step budget.
#[test]
fn range_over_a_huge_int_spends_the_step_budget() {
    assert_eq!(
        exec_err("{{range 9223372036854775807}}{{end}}"),
        "template: line:1:8: executing \"line\" at <9223372036854775807>: \
         exceeded maximum template steps (1000000)"
    );
    assert_eq!(
        exec_err("{{range $i := 100000000}}{{if $i}}{{end}}{{end}}"),
        "template: line:1:30: executing \"line\" at <$i>: exceeded maximum template steps (1000000)"
    );
    assert_eq!(run("{{range 3}}{{.}}{{end}}", &ctx()).unwrap(), "012");
    assert_eq!(
        run("{{range -3}}{{.}}{{else}}none{{end}}", &ctx()).unwrap(),
        "none"
    );
}

/// String work counts: copying a big variable a thousand times, or
/// scanning a long label, spends the budget well before a second.
#[test]
fn string_work_spends_the_step_budget() {
    let e = exec_err(
        "{{$x := repeat 1000000 \"a\"}}{{range 100000}}{{if eq (len $x) 0}}{{end}}{{end}}",
    );
    assert!(
        e.ends_with("exceeded maximum template steps (1000000)"),
        "{e}"
    );
    let e = exec_err("{{range 100000}}{{if contains \"zz\" $.kb}}{{end}}{{end}}");
    assert!(
        e.ends_with("exceeded maximum template steps (1000000)"),
        "{e}"
    );
}

/// The rendered output stops at the output limit, in the general path and
/// in the text-and-fields fast path alike (Go reports its writer's errors
/// without a location).
#[test]
fn output_past_the_limit_fails() {
    let want = format!(
        "template: line: output exceeds the template output limit ({MAX_OUTPUT_BYTES} bytes)"
    );
    assert_eq!(exec_err("{{range 2000}}{{$.kb}}{{end}}"), want);
    let fast = "{{.kb}}".repeat(1100);
    assert_eq!(exec_err(&fast), want);
    // Exactly at the limit is fine.
    let t = "{{.kb}}".repeat(MAX_OUTPUT_BYTES / KB.len());
    assert_eq!(run(&t, &ctx()).unwrap().len(), MAX_OUTPUT_BYTES);
}

/// A regex compilation costs `REGEX_COMPILE_STEPS` (100 000): a pattern from a
/// label is compiled per call, so a render compiles at most ten; a literal
/// one is compiled once per query (commands sharing it share the result),
/// for the first [`MAX_CACHED_REGEXES`] literal patterns of a template.
#[test]
fn regex_compilations_are_paid_for() {
    let mut c = ctx();
    c.labels.push(("pat", "l+"));
    let dynamic = |n: usize| {
        format!("{{{{range {n}}}}}{{{{regexReplaceAll $.pat \"hello\" \"L\"}}}}{{{{end}}}}")
    };
    assert_eq!(run(&dynamic(9), &c).unwrap(), "heLo".repeat(9));
    let e = match run(&dynamic(10), &c) {
        Err(TemplateError::Exec(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        e,
        "template: line:1:44: executing \"line\" at <\"L\">: exceeded maximum template steps (1000000)"
    );
    // One literal pattern, used a thousand times: compiled once.
    let t = "{{range 1000}}{{regexReplaceAll \"l+\" \"hello\" \"L\"}}{{end}}";
    assert_eq!(run(t, &c).unwrap().len(), 4000);
    // Eight literal patterns are kept; a ninth is compiled per call.
    let literal = |n: usize| {
        let calls: String = (0..n)
            .map(|k| format!("{{{{count \"a{k}\" \"x\"}}}}"))
            .collect();
        format!("{{{{range 2}}}}{calls}{{{{end}}}}")
    };
    assert_eq!(
        run(&literal(MAX_CACHED_REGEXES), &c).unwrap(),
        "0".repeat(16)
    );
    let e = match run(&literal(MAX_CACHED_REGEXES + 1), &c) {
        Err(TemplateError::Exec(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(
        e.ends_with("exceeded maximum template steps (1000000)"),
        "{e}"
    );
}

/// Contexts find a label by scanning them, and a parsed JSON line can bring
/// thousands: each lookup (and truth test or `len` of `.`) pays for the
/// labels, so a loop over them stops at the budget.
#[test]
fn label_lookups_pay_for_many_labels() {
    let mut c = ctx();
    for k in 0..20_000 {
        c.labels
            .push((Box::leak(format!("f{k}").into_boxed_str()), "v"));
    }
    for t in [
        "{{range 100000}}{{$.a}}{{end}}",
        "{{range 100000}}{{if $}}{{end}}{{end}}",
        "{{range 100000}}{{len $}}{{end}}",
    ] {
        let e = match run(t, &c) {
            Err(TemplateError::Exec(e)) => e,
            other => panic!("{t}: {:.100}", format!("{other:?}")),
        };
        assert!(
            e.ends_with("exceeded maximum template steps (1000000)"),
            "{e}"
        );
    }
    // With the usual few labels the same loop is cheap.
    assert_eq!(
        run("{{range 1000}}{{$.a}}{{end}}", &ctx()).unwrap().len(),
        1000
    );
}
