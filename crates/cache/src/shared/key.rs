//! The memcached key of a [`CacheKey`]: a SHA-256 over every part of it.
//!
//! memcached keys are at most 250 bytes without spaces or control
//! characters, while a cache key holds a whole normalised request. Hashing
//! every part (length-prefixed, so no two keys run together) plus lokivl's
//! version gives `lokivl:` and 64 hex digits: 71 bytes, never a secret (the
//! credentials are already a fingerprint), and the same in every replica.

use sha2::{Digest, Sha256};

use crate::key::CacheKey;

/// What every memcached key starts with, so lokivl's entries are easy to
/// tell apart in a memcached shared with other programs.
const PREFIX: &[u8; 7] = b"lokivl:";

/// Length of a memcached key: the prefix and 64 hex digits.
pub(crate) const KEY_LEN: usize = PREFIX.len() + 64;

/// The memcached key of one cache entry, and the hash that picks its server.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct SharedKey {
    text: [u8; KEY_LEN],
    route: u64,
}

impl std::fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Feeds `part` with its length first, so `("ab", "c")` and `("a", "bc")` differ.
pub(crate) fn feed(h: &mut Sha256, part: &[u8]) {
    h.update((part.len() as u64).to_le_bytes());
    h.update(part);
}

impl SharedKey {
    /// The key of `key` as written by this version of lokivl.
    pub(crate) fn of(key: &CacheKey) -> Self {
        Self::with_version(key, env!("CARGO_PKG_VERSION"))
    }

    /// The key of `key` as written by lokivl `version`.
    pub(crate) fn with_version(key: &CacheKey, version: &str) -> Self {
        let mut h = Sha256::new();
        for part in [
            b"lokivl/shared-cache-key/1".as_slice(),
            version.as_bytes(),
            key.tenant().as_bytes(),
            key.encoding().name().as_bytes(),
            key.flags().as_bytes(),
            key.credentials().bytes().as_slice(),
            key.endpoint().as_bytes(),
            key.request().as_bytes(),
        ] {
            feed(&mut h, part);
        }
        let digest: [u8; 32] = h.finalize().into();
        let mut text = [0u8; KEY_LEN];
        text[..PREFIX.len()].copy_from_slice(PREFIX);
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for (i, b) in digest.iter().enumerate() {
            text[PREFIX.len() + 2 * i] = HEX[usize::from(b >> 4)];
            text[PREFIX.len() + 2 * i + 1] = HEX[usize::from(b & 0x0f)];
        }
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        Self {
            text,
            route: u64::from_be_bytes(first),
        }
    }

    /// The key as sent to memcached.
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII was written.
        std::str::from_utf8(&self.text).unwrap_or("")
    }

    /// The hash that picks the server (the digest's first 8 bytes).
    pub(crate) fn route(&self) -> u64 {
        self.route
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CredentialFingerprint, Encoding};

    fn key(tenant: &str, creds: CredentialFingerprint) -> CacheKey {
        CacheKey::new(
            tenant,
            Encoding::Identity,
            "categorize-labels",
            creds,
            "/loki/api/v1/query_range",
            "end=2&query=%7Bapp%3D%22a%22%7D&start=1",
        )
    }

    /// Fixed expected text: the key must be the same in every process and
    /// every replica (a change here means replicas of two builds disagree).
    #[test]
    fn stable_across_processes() {
        let k = SharedKey::with_version(&key("1:0", CredentialFingerprint::none()), "0.1.0");
        assert_eq!(
            k.as_str(),
            "lokivl:8b81c7089b8f1de0950e75fe1e1859255b38b19fbaf226edbab3d42aea3dddf8"
        );
        assert_eq!(k.as_str().len(), 71);
        assert!(k.as_str().bytes().all(|b| b.is_ascii_graphic()));
    }

    #[test]
    fn every_part_and_the_version_change_the_key() {
        let none = CredentialFingerprint::none();
        let base = SharedKey::of(&key("1:0", none));
        assert_eq!(base, SharedKey::of(&key("1:0", none)));
        assert_ne!(base, SharedKey::of(&key("2:0", none)));
        let bearer = CredentialFingerprint::of([b"Bearer t".as_slice()]);
        assert_ne!(base, SharedKey::of(&key("1:0", bearer)));
        assert_ne!(
            base,
            SharedKey::with_version(&key("1:0", none), "0.0.0-other")
        );
        let gzip = CacheKey::new(
            "1:0",
            Encoding::Gzip,
            "categorize-labels",
            none,
            "/loki/api/v1/query_range",
            "end=2&query=%7Bapp%3D%22a%22%7D&start=1",
        );
        assert_ne!(base, SharedKey::of(&gzip));
        // Length prefixes: moving a byte between parts changes the key.
        let a = CacheKey::new("t", Encoding::Identity, "", none, "/ab", "c");
        let b = CacheKey::new("t", Encoding::Identity, "", none, "/a", "bc");
        assert_ne!(SharedKey::of(&a), SharedKey::of(&b));
    }

    #[test]
    fn a_secret_never_appears_in_the_key() {
        let k = SharedKey::of(&key(
            "1:0",
            CredentialFingerprint::of([b"Bearer hunter2".as_slice()]),
        ));
        assert!(!k.as_str().contains("hunter2"));
        assert!(!format!("{k:?}").contains("hunter2"));
    }
}
