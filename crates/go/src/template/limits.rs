//! The bounds that keep one template, or one log line rendered through it,
//! from exhausting the stack, the memory or the CPU of the process.
//!
//! Loki runs templates with Go's `text/template`, whose only bounds are a
//! nesting depth of 10 000 parenthesised pipelines at parse time and
//! goroutine stacks that grow to 1 GB; everything else is left to Loki's
//! query limits. Here every query runs on a fixed 2 MiB worker stack, so the
//! parser and the executor (both recursive over the tree) need a tighter
//! depth bound, and each render gets a budget. The defaults are far above
//! what real templates use (a few levels, tens of steps, output the size of
//! a log line); past a bound a template gets an error worded as Go words its
//! own, never a crash.

/// Deepest nesting of parenthesised pipelines plus `if`/`with`/`range`
/// bodies on one path of the tree. Past it the parse fails with Go's text
/// for its parenthesis bound, `max expression depth exceeded` (Go allows
/// 10 000 parentheses and any control nesting). `else if`/`else with`
/// chains are flat and do not count. At this depth the most stack-hungry
/// shape (nested parentheses, about 7 KiB per level in a debug build) still
/// parses and renders on a 1 MiB stack.
pub const MAX_DEPTH: usize = 100;

/// Steps one render may take. A step is one node or operand evaluated, one
/// range iteration, one function call, or [`BYTES_PER_STEP`] bytes of
/// string work (arguments a function reads, values it makes or copies,
/// output written). One million steps is tens of milliseconds of work at
/// most; a template ranging over a thousand JSON items uses about ten
/// thousand. Past it the render fails with
/// `exceeded maximum template steps (1000000)` at the node being evaluated.
pub const MAX_STEPS: usize = 1_000_000;

/// Bytes of string work that count as one step.
pub const BYTES_PER_STEP: usize = 64;

/// Steps one regex compilation costs: a pattern from a label (compiled per
/// call, as Go does) or a literal one at its first use. A pathological
/// pattern can take a few hundred milliseconds to compile (Unicode `\w{100}`
/// with the regex crate), so a render compiles at most ten.
pub const REGEX_COMPILE_STEPS: usize = 100_000;

/// Literal patterns of one template whose compiled form is kept for the
/// whole query (each one compiled at most once); the patterns past them
/// are compiled per call. Bounds what a query keeps to eight regexes of at
/// most the regex crate's 10 MiB each; real templates use one or two.
pub const MAX_CACHED_REGEXES: usize = 8;

/// Variables in scope a lookup passes over that count as one step (a
/// template declaring thousands of variables pays for scanning them).
pub const VARS_PER_STEP: usize = 32;

/// Longest output of one render, and longest string any function may
/// produce. Four times the usual 256 KiB maximum log line of Loki and
/// VictoriaLogs: formatting a line never comes near it, while `repeat`,
/// `indent`, `alignLeft`, `printf` widths and the like cannot allocate
/// without bound. Past it a function fails with `error calling <f>: result
/// exceeds the template output limit (1048576 bytes)` and the render with
/// `template: <name>: output exceeds the template output limit (1048576
/// bytes)`.
pub const MAX_OUTPUT_BYTES: usize = 1 << 20;

/// The parse error past [`MAX_DEPTH`] (Go's wording for its own bound).
pub(crate) const DEPTH_EXCEEDED: &str = "max expression depth exceeded";

/// The execution error once [`MAX_STEPS`] are spent.
pub(crate) fn steps_exceeded() -> String {
    format!("exceeded maximum template steps ({MAX_STEPS})")
}

/// Why a function's result is refused (after `error calling <f>: `).
pub(crate) fn result_too_large() -> String {
    format!("result exceeds the template output limit ({MAX_OUTPUT_BYTES} bytes)")
}

/// Why a render's output is refused (after `template: <name>: `).
pub(crate) fn output_too_large() -> String {
    format!("output exceeds the template output limit ({MAX_OUTPUT_BYTES} bytes)")
}

/// Checks the length of a string a function is about to build.
pub(crate) fn check_len(len: u128) -> Result<(), String> {
    if len > MAX_OUTPUT_BYTES as u128 {
        return Err(result_too_large());
    }
    Ok(())
}

/// Go's `strings.Repeat` checks and ours for `count` copies of `unit`
/// bytes: a negative count and an overflowing length panic in Go (the
/// template reports the panic as the call's error), a merely huge one is
/// refused here instead of allocated.
pub(crate) fn check_repeat(count: i64, unit: usize) -> Result<(), String> {
    if count < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let len = count as u128 * unit as u128;
    if len > i64::MAX as u128 {
        return Err("strings: Repeat output length overflow".into());
    }
    check_len(len)
}
