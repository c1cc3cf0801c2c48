//! Fuzzes template execution: a template and the line and labels it runs
//! on (split at NUL bytes) must render or fail with a template error, never
//! panic, and the output must stay within `template::limits`.
#![no_main]

use go::template::limits::MAX_OUTPUT_BYTES;
use go::template::{Context, Template, TemplateError};
use libfuzzer_sys::fuzz_target;

struct Line<'a> {
    labels: Vec<(&'static str, &'a str)>,
    line: &'a str,
}

impl Context for Line<'_> {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
    fn line(&self) -> &str {
        self.line
    }
    fn timestamp_ns(&self) -> i64 {
        1_787_392_800_123_456_789
    }
    fn for_each_label(&self, f: &mut dyn FnMut(&str, &str)) {
        for (k, v) in &self.labels {
            f(k, v);
        }
    }
}

/// Label names the fuzzer's fields can hit (`.a`, `.msg`, …).
const NAMES: [&str; 4] = ["a", "msg", "n", "json"];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.split('\0');
    let template = parts.next().unwrap_or("");
    let line = parts.next().unwrap_or("");
    let labels = NAMES.iter().copied().zip(parts).collect();
    let Ok(t) = Template::parse(template) else {
        return;
    };
    let ctx = Line { labels, line };
    let mut out = String::from("kept");
    match t.render(&ctx, &mut out) {
        Ok(()) => assert!(out.len() - 4 <= MAX_OUTPUT_BYTES, "{} bytes", out.len()),
        Err(TemplateError::Exec(e)) => assert!(e.starts_with("template: line"), "{e}"),
        Err(e) => panic!("render gave a parse error: {e}"),
    }
    assert!(out.starts_with("kept"));
});
