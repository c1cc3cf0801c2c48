//! Cache keys: everything that can make two responses differ.

use std::{fmt, mem};

use sha2::{Digest, Sha256};

use crate::shared::key::feed;

/// How the cached body is encoded on the wire.
///
/// A gzip body must never be served to a client that asked for identity, so
/// the encoding is part of the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// Uncompressed.
    Identity,
    /// `Content-Encoding: gzip`.
    Gzip,
    /// `Content-Encoding: deflate`.
    Deflate,
    /// `Content-Encoding: br`.
    Brotli,
    /// `Content-Encoding: zstd`.
    Zstd,
}

impl Encoding {
    /// A stable name (part of the shared tier's key, so never `Debug`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Identity => "identity",
            Self::Gzip => "gzip",
            Self::Deflate => "deflate",
            Self::Brotli => "br",
            Self::Zstd => "zstd",
        }
    }
}

/// A 128-bit hash of the credentials a request forwarded upstream.
///
/// Two users of one tenant may see different data when VictoriaLogs or a
/// gateway in front of it authorises per user, so their entries must differ.
/// Hashing keeps the secrets themselves out of long-lived cache keys. The
/// hash is a truncated SHA-256, the same in every process, so lokivl
/// replicas sharing a cache tier agree on keys; 128 bits make accidental
/// collisions negligible, and the shared tier hashes the fingerprint again
/// before it leaves the process.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CredentialFingerprint([u8; 16]);

impl CredentialFingerprint {
    /// The fingerprint of a request that forwarded no credentials.
    pub fn none() -> Self {
        Self::of(std::iter::empty::<&[u8]>())
    }

    /// Fingerprints the credential parts a request forwards upstream, for
    /// example the `Authorization` header value and a trusted user header.
    ///
    /// Order matters and each part is length-prefixed, so `["ab", "c"]` and
    /// `["a", "bc"]` differ. Pass absent parts as empty slices to keep
    /// positions stable.
    pub fn of<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let mut h = Sha256::new();
        feed(&mut h, b"lokivl/credentials/1");
        let mut count = 0u64;
        for part in parts {
            feed(&mut h, part);
            count += 1;
        }
        h.update(count.to_le_bytes());
        let digest: [u8; 32] = h.finalize().into();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        Self(out)
    }

    /// The fingerprint's bytes (part of the shared tier's key).
    pub(crate) fn bytes(&self) -> [u8; 16] {
        self.0
    }
}

impl fmt::Debug for CredentialFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CredentialFingerprint(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// Identifies one cached response.
///
/// Every field takes part in equality, so entries of different tenants,
/// encodings or credentials are distinct even for byte-identical requests.
/// `request` is the caller's normalised form of the request (sorted
/// parameters, snapped time range, …); the cache treats it as opaque.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    tenant: Box<str>,
    encoding: Encoding,
    flags: Box<str>,
    credentials: CredentialFingerprint,
    endpoint: Box<str>,
    request: Box<str>,
}

impl CacheKey {
    /// Builds a key from all the parts that can make responses differ.
    pub fn new(
        tenant: impl Into<Box<str>>,
        encoding: Encoding,
        flags: impl Into<Box<str>>,
        credentials: CredentialFingerprint,
        endpoint: impl Into<Box<str>>,
        request: impl Into<Box<str>>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            encoding,
            flags: flags.into(),
            credentials,
            endpoint: endpoint.into(),
            request: request.into(),
        }
    }

    /// The tenant the response belongs to.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The encoding of the cached body.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The response-shape flags the client asked for (Loki's
    /// `X-Loki-Response-Encoding-Flags`): a 2-tuple answer must never be
    /// served to a client that asked for 3-tuples, or the reverse.
    pub fn flags(&self) -> &str {
        &self.flags
    }

    /// The fingerprint of the caller's credentials.
    pub fn credentials(&self) -> CredentialFingerprint {
        self.credentials
    }

    /// The API endpoint, such as `/loki/api/v1/query_range`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The normalised request.
    pub fn request(&self) -> &str {
        &self.request
    }

    /// Approximate heap and inline bytes the key occupies, counted towards
    /// the byte bound so many small entries with long keys stay bounded too.
    pub(crate) fn weight(&self) -> usize {
        mem::size_of::<Self>()
            + self.tenant.len()
            + self.flags.len()
            + self.endpoint.len()
            + self.request.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tenant: &str, enc: Encoding, creds: CredentialFingerprint) -> CacheKey {
        CacheKey::new(
            tenant,
            enc,
            "",
            creds,
            "/loki/api/v1/labels",
            "start=1&end=2",
        )
    }

    #[test]
    fn every_part_distinguishes_keys() {
        let none = CredentialFingerprint::none();
        let base = key("a", Encoding::Identity, none);
        assert_eq!(base, key("a", Encoding::Identity, none));
        assert_ne!(base, key("b", Encoding::Identity, none));
        assert_ne!(base, key("a", Encoding::Gzip, none));
        assert_ne!(
            base,
            CacheKey::new(
                "a",
                Encoding::Identity,
                "categorize-labels",
                none,
                "/loki/api/v1/labels",
                "start=1&end=2"
            )
        );
        assert_ne!(
            base,
            key(
                "a",
                Encoding::Identity,
                CredentialFingerprint::of([b"Bearer x".as_slice()])
            )
        );
        assert_ne!(
            base,
            CacheKey::new(
                "a",
                Encoding::Identity,
                "",
                none,
                "/loki/api/v1/series",
                "start=1&end=2"
            )
        );
        assert_ne!(
            base,
            CacheKey::new(
                "a",
                Encoding::Identity,
                "",
                none,
                "/loki/api/v1/labels",
                "start=1&end=3"
            )
        );
    }

    #[test]
    fn fingerprint_is_stable_and_length_prefixed() {
        let a = CredentialFingerprint::of([b"Bearer t1".as_slice()]);
        assert_eq!(a, CredentialFingerprint::of([b"Bearer t1".as_slice()]));
        assert_ne!(a, CredentialFingerprint::of([b"Bearer t2".as_slice()]));
        let split1 = CredentialFingerprint::of([b"ab".as_slice(), b"c".as_slice()]);
        let split2 = CredentialFingerprint::of([b"a".as_slice(), b"bc".as_slice()]);
        assert_ne!(split1, split2);
        // An empty part is not the same as no part at all.
        assert_ne!(
            CredentialFingerprint::none(),
            CredentialFingerprint::of([b"".as_slice()])
        );
    }

    /// Fixed expected bytes: replicas must agree on fingerprints.
    #[test]
    fn fingerprint_is_the_same_in_every_process() {
        let fp = CredentialFingerprint::of([b"Bearer t1".as_slice()]);
        assert_eq!(
            format!("{fp:?}"),
            "CredentialFingerprint(f61bac38008048bc39e843cac5ac61f8)"
        );
    }

    #[test]
    fn debug_does_not_leak_secret() {
        let fp = CredentialFingerprint::of([b"Bearer hunter2".as_slice()]);
        assert!(!format!("{fp:?}").contains("hunter2"));
    }

    #[test]
    fn weight_grows_with_key_text() {
        let none = CredentialFingerprint::none();
        let short = CacheKey::new("a", Encoding::Identity, "", none, "/e", "q");
        let long = CacheKey::new("a", Encoding::Identity, "", none, "/e", "q".repeat(100));
        assert_eq!(long.weight() - short.weight(), 99);
    }
}
