//! Byte sizes as Loki reads them (go-humanize `ParseBytes`) and prints them
//! (go-humanize `Bytes` with the space removed).

/// Parses `10KB`, `5MiB`, `1.5GB`, `42` as go-humanize's `ParseBytes` does:
/// units are case-insensitive, SI and IEC, and may follow a space.
///
/// Public because the proxy types and rewrites byte values the same way
/// (detected fields), and there must be one reading of a byte size.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim_start();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(s.len());
    let num: String = s[..split].chars().filter(|&c| c != ',').collect();
    let value: f64 = num.parse().ok()?;
    let unit = s[split..].trim().to_ascii_lowercase();
    let mult: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "ki" | "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mi" | "mib" => 1024f64.powi(2),
        "g" | "gb" => 1e9,
        "gi" | "gib" => 1024f64.powi(3),
        "t" | "tb" => 1e12,
        "ti" | "tib" => 1024f64.powi(4),
        "p" | "pb" => 1e15,
        "pi" | "pib" => 1024f64.powi(5),
        "e" | "eb" => 1e18,
        "ei" | "eib" => 1024f64.powi(6),
        _ => return None,
    };
    let bytes = value * mult;
    if !(0.0..1.8446744073709552e19).contains(&bytes) {
        return None;
    }
    // Truncation is what Go's uint64(f) conversion does.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some(bytes as u64)
}

/// The value Loki's queriers compare a bytes label filter with: Loki's
/// frontend sends a log selector to the queriers as its printed text, and
/// prints a byte size with go-humanize `Bytes` (SI units, one decimal), so
/// `size < 3KiB` arrives as `size<3.1kB` and compares with 3,100 bytes, not
/// 3,072. The filter stays as written in the AST (and in `format_query`).
pub fn effective_bytes(v: u64) -> u64 {
    parse_bytes(&format_bytes(v)).unwrap_or(v)
}

/// Formats as go-humanize `Bytes` (SI units, one decimal below 10), minus spaces.
pub fn format_bytes(v: u64) -> String {
    if v < 10 {
        return format!("{v}B");
    }
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let f = v as f64;
    let e = (f.ln() / 1000f64.ln()).floor();
    let idx = (e as usize).min(UNITS.len() - 1);
    let val = (f / 1000f64.powf(e) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1}{}", UNITS[idx])
    } else {
        format!("{val:.0}{}", UNITS[idx])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_bytes_follow_lokis_printed_form() {
        assert_eq!(effective_bytes(3 * 1024), 3_100);
        assert_eq!(effective_bytes(10_000), 10_000);
        assert_eq!(effective_bytes(5 * 1024 * 1024), 5_200_000);
        assert_eq!(effective_bytes(9), 9);
        assert_eq!(effective_bytes(1_536), 1_500);
    }

    #[test]
    fn parses_si_and_iec() {
        assert_eq!(parse_bytes("10KB"), Some(10_000));
        assert_eq!(parse_bytes("5MiB"), Some(5 * 1024 * 1024));
        assert_eq!(parse_bytes("1.5kB"), Some(1500));
        assert_eq!(parse_bytes("3XB"), None);
    }

    #[test]
    fn formats_like_humanize() {
        assert_eq!(format_bytes(5), "5B");
        assert_eq!(format_bytes(10_000), "10kB");
        assert_eq!(format_bytes(5 * 1024 * 1024), "5.2MB");
        assert_eq!(format_bytes(1_000_000), "1.0MB");
    }
}
