//! Fuzzes the LogQL parser: any input must parse or fail with an error,
//! never panic or overflow the stack, and whatever parses must print to a
//! query that parses back to the same printing (and prettify without panic).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(q) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(expr) = logql_parser::parse(q) {
        let printed = expr.to_string();
        let _ = logql_parser::prettify(&expr);
        // Loki prints some things it cannot parse back, and lokivl prints as
        // Loki does: folded NaN/±Inf constants, and Unicode label names in
        // matchers, which are quoted (`{"é"="x"}`).
        if printed.contains("NaN")
            || printed.contains("Inf")
            || q.chars().any(|c| !c.is_ascii() && c.is_alphanumeric())
        {
            return;
        }
        let again = logql_parser::parse(&printed)
            .unwrap_or_else(|e| panic!("printed form {printed:?} of {q:?} does not parse: {e}"));
        assert_eq!(
            again.to_string(),
            printed,
            "printing is not stable for {q:?}"
        );
    }
});
