//! Byte sizes as Go's `go-humanize` parses and prints them; Loki uses it to
//! type detected fields (`bytes`) and to rewrite byte values so they can be
//! pasted back into a query.

/// `humanize.ParseBytes`: the parser's reading, so a byte size means the
/// same in a label filter and in detected fields.
pub fn parse_bytes(s: &str) -> Option<u64> {
    logql_parser::parse_bytes(s)
}

/// `humanize.Bytes` and `humanize.IBytes` (`1.5 kB`, `64 MiB`): Loki
/// prints its `max_query_bytes_read` refusal with `IBytes`.
pub use go::humanize::{bytes as format_bytes, ibytes as format_ibytes};

/// The units Loki accepts as "bytes" when rewriting detected values.
const BYTES_SUFFIXES: &[&str] = &[
    "b", "kib", "kb", "mib", "mb", "gib", "gb", "tib", "tb", "pib", "pb", "eib", "eb", "ki", "k",
    "mi", "m", "gi", "g", "ti", "t", "pi", "p", "ei", "e",
];

/// Loki's detected-field-values rewrite: a byte size with a unit becomes
/// `humanize.Bytes` without its space (`2048KiB` → `2.1MB`); anything else is kept.
pub fn normalize_bytes_value(v: &str) -> Option<String> {
    let lower = v.to_ascii_lowercase();
    if !BYTES_SUFFIXES.iter().any(|u| lower.ends_with(u)) {
        return None;
    }
    let n = parse_bytes(v)?;
    Some(format_bytes(n).replacen(' ', "", 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_go_humanize() {
        assert_eq!(parse_bytes("42"), Some(42));
        assert_eq!(parse_bytes("42MB"), Some(42_000_000));
        assert_eq!(parse_bytes("42 MiB"), Some(42 * 1024 * 1024));
        assert_eq!(parse_bytes("1.5kb"), Some(1500));
        assert_eq!(parse_bytes("1,000 B"), Some(1000));
        assert_eq!(parse_bytes("abc"), None);
        assert_eq!(parse_bytes("12 parsecs"), None);
    }

    #[test]
    fn formats_like_go_humanize() {
        assert_eq!(format_bytes(5), "5 B");
        assert_eq!(format_bytes(82854982), "83 MB");
        assert_eq!(format_bytes(1500), "1.5 kB");
        assert_eq!(format_bytes(999), "999 B");
        assert_eq!(normalize_bytes_value("2048KiB").as_deref(), Some("2.1MB"));
        assert_eq!(normalize_bytes_value("10"), None);
        assert_eq!(normalize_bytes_value("fast"), None);
        assert_eq!(format_ibytes(64 << 20), "64 MiB");
        assert_eq!(format_ibytes(1 << 20), "1.0 MiB");
        assert_eq!(format_ibytes(49 * (1 << 20) + 1000), "49 MiB");
        assert_eq!(format_ibytes(1000), "1000 B");
        assert_eq!(format_ibytes(1536), "1.5 KiB");
    }
}
