//! Quoting of LogsQL strings and field names.
//!
//! LogsQL double-quoted strings are decoded like Go string literals, so every
//! value is printed with Go escapes; a wrong escape would change the value
//! VictoriaLogs compares against, not just fail the query.

use std::fmt::{self, Write};

/// Writes `s` as a LogsQL double-quoted string (Go string literal escapes).
pub(crate) fn write_quoted(f: &mut impl Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 || c == '\u{7f}' => write!(f, "\\x{:02x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Returns `s` as a LogsQL double-quoted string.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing into a String cannot fail.
    let _ = write_quoted(&mut out, s);
    out
}

/// VictoriaLogs' own field names that are printed bare.
const BARE_FIELDS: [&str; 4] = ["_msg", "_time", "_stream", "_stream_id"];

/// Writes a field name, quoted unless it is one of VictoriaLogs' `_` fields.
///
/// Quoting every other name keeps dotted OTel names, names that collide with
/// LogsQL keywords or pipe names (`and`, `limit`, `fields`, …) and future
/// keywords from being misread.
pub(crate) fn write_field(f: &mut impl Write, name: &str) -> fmt::Result {
    if BARE_FIELDS.contains(&name) {
        f.write_str(name)
    } else {
        write_quoted(f, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str) -> String {
        let mut s = String::new();
        write_field(&mut s, name).unwrap();
        s
    }

    #[test]
    fn quotes_and_backslashes_are_escaped() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote(""), r#""""#);
        assert_eq!(quote("`'"), r#""`'""#);
    }

    #[test]
    fn control_chars_use_go_escapes() {
        assert_eq!(quote("a\nb\tc\r"), r#""a\nb\tc\r""#);
        assert_eq!(quote("\u{1}\u{7f}"), r#""\x01\x7f""#);
    }

    #[test]
    fn unicode_is_kept_raw() {
        assert_eq!(quote("შეცდომა ✓"), "\"შეცდომა ✓\"");
    }

    #[test]
    fn field_names_are_quoted_except_builtin_ones() {
        assert_eq!(field("_msg"), "_msg");
        assert_eq!(field("app"), "\"app\"");
        assert_eq!(field("k8s.pod.name"), "\"k8s.pod.name\"");
        assert_eq!(field("a:b"), "\"a:b\"");
        assert_eq!(field("limit"), "\"limit\"");
    }
}
