//! Loki's `ip()` filters: an address, a CIDR or a `a-b` range, and the scan
//! that finds addresses inside a line (grafana/loki `pkg/logql/log/ip.go`).

use std::net::IpAddr;

/// What `ip("…")` matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpMatcher {
    /// One address.
    Addr(IpAddr),
    /// A CIDR prefix.
    Prefix(IpAddr, u8),
    /// An inclusive range of one family.
    Range(IpAddr, IpAddr),
}

/// Parses an `ip()` pattern.
///
/// # Errors
/// Loki's text for an invalid pattern.
pub fn parse(pattern: &str) -> Result<IpMatcher, String> {
    let err = || format!("ip filter invalid pattern: {pattern:?}");
    if let Ok(a) = pattern.parse::<IpAddr>() {
        return Ok(IpMatcher::Addr(a));
    }
    if let Some((a, bits)) = pattern.split_once('/') {
        let a: IpAddr = a.parse().map_err(|_| err())?;
        if bits.is_empty() || (bits.len() > 1 && bits.starts_with('0')) {
            return Err(err());
        }
        let bits: u8 = bits.parse().map_err(|_| err())?;
        let max = if a.is_ipv4() { 32 } else { 128 };
        if bits > max {
            return Err(err());
        }
        return Ok(IpMatcher::Prefix(a, bits));
    }
    if let Some((a, b)) = pattern.split_once('-') {
        let a: IpAddr = a.trim().parse().map_err(|_| err())?;
        let b: IpAddr = b.trim().parse().map_err(|_| err())?;
        if a.is_ipv4() != b.is_ipv4() || bits(a) > bits(b) {
            return Err(err());
        }
        return Ok(IpMatcher::Range(a, b));
    }
    Err(err())
}

fn bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(v) => u128::from(u32::from(v)),
        IpAddr::V6(v) => u128::from(v),
    }
}

impl IpMatcher {
    /// Whether `ip` is matched (families never mix).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match *self {
            IpMatcher::Addr(a) => a == ip,
            IpMatcher::Prefix(a, n) => {
                if a.is_ipv4() != ip.is_ipv4() {
                    return false;
                }
                let width = if a.is_ipv4() { 32 } else { 128 };
                let shift = width - u32::from(n);
                if shift >= 128 {
                    return true;
                }
                (bits(a) >> shift) == (bits(ip) >> shift)
            }
            IpMatcher::Range(a, b) => {
                a.is_ipv4() == ip.is_ipv4() && bits(a) <= bits(ip) && bits(ip) <= bits(b)
            }
        }
    }

    /// Whether some address found in `line` is matched, scanning like Loki:
    /// an IPv4 candidate starts at a digit with a `.` within the next three
    /// bytes, an IPv6 candidate at a short hex group followed by `:`.
    pub fn matches_in(&self, line: &str) -> bool {
        let b = line.as_bytes();
        let n = b.len();
        let mut i = 0;
        while i < n {
            let charset: Option<fn(u8) -> bool> = if i + 3 < n && ipv4_hint(&b[i..i + 4]) {
                Some(|c| c.is_ascii_digit() || c == b'.')
            } else if i + 4 < n && ipv6_hint(&b[i..i + 5]) {
                Some(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.')
            } else {
                None
            };
            if let Some(accept) = charset {
                let len = b[i..].iter().position(|&c| !accept(c)).unwrap_or(n - i);
                if let Ok(ip) = line[i..i + len].parse::<IpAddr>()
                    && self.contains(ip)
                {
                    return true;
                }
                i += len;
            }
            i += 1;
        }
        false
    }
}

fn ipv4_hint(p: &[u8]) -> bool {
    p[0].is_ascii_digit() && (p[1] == b'.' || p[2] == b'.' || p[3] == b'.')
}

fn ipv6_hint(p: &[u8]) -> bool {
    let h = |c: u8| c.is_ascii_hexdigit();
    (p[0] == b':' && p[1] == b':' && h(p[2]))
        || (h(p[0]) && p[1] == b':')
        || (h(p[0]) && h(p[1]) && p[2] == b':')
        || (h(p[0]) && h(p[1]) && h(p[2]) && p[3] == b':')
        || (h(p[0]) && h(p[1]) && h(p[2]) && h(p[3]) && p[4] == b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_prefixes_and_ranges() {
        let m = parse("10.0.0.0/8").unwrap();
        assert!(m.matches_in("from 10.1.2.3 ok"));
        assert!(!m.matches_in("from 11.1.2.3 ok"));
        let r = parse("192.168.0.1-192.168.0.10").unwrap();
        assert!(r.matches_in("x=192.168.0.5"));
        assert!(!r.matches_in("x=192.168.0.11"));
        let a = parse("::1").unwrap();
        assert!(a.matches_in("addr ::1 end"));
        let v6 = parse("2001:db8::/32").unwrap();
        assert!(v6.matches_in("client 2001:db8:0:1::5 connected"));
        assert!(!v6.matches_in("client 2001:db9::5"));
        assert!(parse("10.0.0.0/33").is_err());
        assert!(parse("nope").is_err());
        assert!(!m.matches_in(""));
    }
}
