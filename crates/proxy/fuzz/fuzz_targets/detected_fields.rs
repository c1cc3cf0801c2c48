//! Fuzzes Drilldown's detected fields and field values over arbitrary lines:
//! each line is parsed again with `json`, else `logfmt` (with its JSON paths),
//! so any line must give fields, never a panic, a stack overflow or a hang.
//!
//! Input: lines separated by `\n`; a line starting with `@` also carries a
//! structured-metadata pair `@key=value ` before the line.
#![no_main]

use engine::drilldown::fields::{detect, values};
use engine::drilldown::{Entry, Stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let entries: Vec<Entry> = text
        .split('\n')
        .take(16)
        .enumerate()
        .map(|(i, raw)| {
            let (metadata, line) = match raw
                .strip_prefix('@')
                .and_then(|r| r.split_once(' '))
                .and_then(|(pair, line)| pair.split_once('=').map(|p| (p, line)))
            {
                Some(((k, v), line)) => (vec![(k.to_owned(), v.to_owned())], line),
                None => (Vec::new(), raw),
            };
            Entry {
                ts: i64::try_from(i).unwrap_or(0),
                line: line.to_owned(),
                metadata,
                parsed: Vec::new(),
            }
        })
        .collect();
    let streams = vec![Stream {
        labels: vec![("app".to_owned(), "api".to_owned())],
        entries,
    }];
    let limit = 50;
    let fields = detect(&streams, limit);
    assert!(fields.len() <= limit);
    for (name, field) in fields.iter().take(4) {
        assert!(!field.values.is_empty(), "{name} detected without a value");
        if let Some(path) = &field.json_path {
            assert!(!path.is_empty(), "{name}: empty JSON path");
        }
        let found = values(&streams, name, 100);
        assert!(!found.is_empty(), "{name}: detected but has no values");
    }
});
