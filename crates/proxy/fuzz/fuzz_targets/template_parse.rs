//! Fuzzes template parsing: any text must give a template or Go's parse
//! error, never a panic, a stack overflow or an unbounded allocation (deep
//! nesting is refused at `template::limits::MAX_DEPTH`).
#![no_main]

use go::template::{Template, TemplateError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Template::parse_named("label", text) {
        Ok(t) => {
            // The walks over the tree must hold at any accepted depth.
            let _ = t.fields();
            let _ = t.referenced_labels();
            let _ = t.is_constant();
            let _ = t.simple_field();
        }
        Err(TemplateError::Parse(e)) => assert!(e.starts_with("template: label:"), "{e}"),
        Err(e) => panic!("parse gave a non-parse error: {e}"),
    }
});
