//! The value stored in memcached: a small header, then the body.
//!
//! The header says who wrote the entry (magic bytes, format number, the
//! writer's version) and until when it is valid (absolute Unix seconds), so
//! a replica of another version treats the entry as absent instead of
//! serving bytes it may lay out differently, and a replica that reads an
//! entry keeps it locally only for the lifetime it has left.

use std::time::Duration;

use bytes::Bytes;

/// The first bytes of every value lokivl writes.
const MAGIC: &[u8; 4] = b"LKVC";

/// The layout of the header and body; bumped when it changes.
const FORMAT: u8 = 1;

/// The version written into (and required of) every value.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A value read back from memcached.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// Written by this version and still valid for `remaining`.
    Fresh {
        /// The response body.
        body: Bytes,
        /// How long the writer's TTL still runs.
        remaining: Duration,
    },
    /// The writer's TTL has run out (memcached's clock may differ).
    Expired,
    /// Another magic, format or version: not ours to serve.
    Incompatible,
}

/// The header of a value written now that expires at `expires_at` (Unix seconds).
pub(crate) fn header(expires_at: u64) -> Vec<u8> {
    header_of(VERSION, expires_at)
}

fn header_of(version: &str, expires_at: u64) -> Vec<u8> {
    let version = &version.as_bytes()[..version.len().min(255)];
    let mut out = Vec::with_capacity(MAGIC.len() + 2 + version.len() + 8);
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.push(u8::try_from(version.len()).unwrap_or(u8::MAX));
    out.extend_from_slice(version);
    out.extend_from_slice(&expires_at.to_be_bytes());
    out
}

/// Reads a value at `now` (Unix seconds).
pub(crate) fn decode(raw: Bytes, now: u64) -> Decoded {
    let Some(rest) = raw.strip_prefix(MAGIC.as_slice()) else {
        return Decoded::Incompatible;
    };
    let [format, len, rest @ ..] = rest else {
        return Decoded::Incompatible;
    };
    let len = usize::from(*len);
    if *format != FORMAT || rest.len() < len + 8 || &rest[..len] != VERSION.as_bytes() {
        return Decoded::Incompatible;
    }
    let mut expiry = [0u8; 8];
    expiry.copy_from_slice(&rest[len..len + 8]);
    let expires_at = u64::from_be_bytes(expiry);
    if expires_at <= now {
        return Decoded::Expired;
    }
    let start = MAGIC.len() + 2 + len + 8;
    Decoded::Fresh {
        body: raw.slice(start..),
        remaining: Duration::from_secs(expires_at - now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(header: Vec<u8>, body: &[u8]) -> Bytes {
        let mut v = header;
        v.extend_from_slice(body);
        Bytes::from(v)
    }

    #[test]
    fn round_trip_keeps_the_remaining_lifetime() {
        let v = value(header(1_000_060), b"{\"status\":\"success\"}");
        assert_eq!(
            decode(v.clone(), 1_000_000),
            Decoded::Fresh {
                body: Bytes::from_static(b"{\"status\":\"success\"}"),
                remaining: Duration::from_secs(60),
            }
        );
        assert_eq!(decode(v.clone(), 1_000_060), Decoded::Expired);
        assert_eq!(decode(v, 2_000_000), Decoded::Expired);
        // An empty body is a valid body.
        assert!(matches!(
            decode(value(header(10), b""), 1),
            Decoded::Fresh { body, .. } if body.is_empty()
        ));
    }

    #[test]
    fn another_version_format_or_magic_reads_absent() {
        let other = value(header_of("0.0.0-other", 1_000_060), b"{}");
        assert_eq!(decode(other, 1_000_000), Decoded::Incompatible);
        let mut format = header(1_000_060);
        format[4] = FORMAT + 1;
        assert_eq!(
            decode(value(format, b"{}"), 1_000_000),
            Decoded::Incompatible
        );
        assert_eq!(
            decode(Bytes::from_static(b"{\"status\":\"success\"}"), 1),
            Decoded::Incompatible
        );
        // Cut inside the header.
        let cut = header(1_000_060);
        assert_eq!(
            decode(Bytes::from(cut[..cut.len() - 1].to_vec()), 1),
            Decoded::Incompatible
        );
        assert_eq!(decode(Bytes::new(), 1), Decoded::Incompatible);
    }
}
