//! Negated character classes written so that VictoriaLogs parses them
//! cheaply.
//!
//! VictoriaLogs simplifies the regex of every `~` filter by printing it with
//! Go's `regexp/syntax` and parsing it again until it stops changing
//! (`regexutil.SimplifyRegex`). Go's printer checks each character class for
//! closure under case folding (`calcFlags`): it walks every rune of the class
//! between `A` and the last cased rune, about 125,000 `unicode.SimpleFold`
//! calls, unless it meets a rune whose case partner is outside the class. A
//! negated class such as `[^"]` holds every cased rune with its partners, so
//! each print walks all of them. Measured on VictoriaLogs v1.51 over an empty
//! time range, `_msg:~"=\"[^\"]*(\"[^ ]|$)"` costs 37–70 ms before any row is
//! read, and the logfmt guard's two quote regexes took 97 of the 106 ms of a
//! whole pushed-down request.
//!
//! Leaving `K` out of the class (its partner `k` stays in) stops that walk at
//! `k`. `K` is then matched on its own, in a shape the printer's reparse
//! cannot merge back into the class (Go merges alternatives that are single
//! characters, so `(?:[^"K]|K)` would become `[^"]` again).

/// `K`, left out of the classes: the first upper-case letter whose lower
/// case has a second partner (U+212A KELVIN SIGN), so the walk stops early.
const LEFT_OUT: char = 'K';

/// Any run of characters outside `excluded` (a class body that does not
/// hold `K`): the language of `[^excluded]*`.
pub(crate) fn run_outside(excluded: &str) -> String {
    debug_assert!(!excluded.contains(LEFT_OUT));
    format!("[^{excluded}{LEFT_OUT}]*(?:{LEFT_OUT}[^{excluded}{LEFT_OUT}]*)*")
}

/// One character outside `excluded`, for the last item of a regex that is
/// only tested for a match somewhere in a value (a filter): there, `K+`
/// matches exactly where `K` does.
pub(crate) fn last_outside(excluded: &str) -> String {
    debug_assert!(!excluded.contains(LEFT_OUT));
    format!("(?:[^{excluded}{LEFT_OUT}]|{LEFT_OUT}+)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string over `alphabet` up to `len` characters.
    fn strings(alphabet: &[char], len: usize) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    /// The rewritten regexes match exactly the strings the plain negated
    /// classes match, `K`, `k` and the Kelvin sign included.
    #[test]
    fn rewritten_classes_match_what_the_negated_classes_match() {
        let pairs = [
            (
                r#"="[^"]*("[^ ]|$)"#.to_owned(),
                format!(r#"="{}(?:"{}|$)"#, run_outside("\""), last_outside(" ")),
            ),
            (
                r#""[^ ="]*=""#.to_owned(),
                format!(r#""{}=""#, run_outside(" =\"")),
            ),
            ("^[^a]*$".to_owned(), format!("^{}$", run_outside("a"))),
        ];
        let alphabet = ['"', ' ', '=', 'K', 'k', '\u{212A}', 'a'];
        for (plain, cheap) in pairs {
            let (plain_re, cheap_re) = (
                regex::Regex::new(&plain).unwrap(),
                regex::Regex::new(&cheap).unwrap(),
            );
            for s in strings(&alphabet, 6) {
                assert_eq!(
                    plain_re.is_match(&s),
                    cheap_re.is_match(&s),
                    "{plain} / {cheap} on {s:?}"
                );
            }
        }
    }

    /// What VictoriaLogs receives: `K` out of each class, never a class alone
    /// holding every cased rune.
    #[test]
    fn the_classes_leave_k_out() {
        assert_eq!(run_outside("\""), r#"[^"K]*(?:K[^"K]*)*"#);
        assert_eq!(last_outside(" "), "(?:[^ K]|K+)");
    }
}
