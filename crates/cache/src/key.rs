//! Cache keys: everything that can make two responses differ.

use std::{
    fmt,
    hash::{BuildHasher, Hasher},
    mem,
    sync::OnceLock,
};

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

/// A keyed 128-bit hash of the credentials a request forwarded upstream.
///
/// Two users of one tenant may see different data when VictoriaLogs or a
/// gateway in front of it authorises per user, so their entries must differ.
/// Hashing keeps the secrets themselves out of long-lived cache keys. The hash
/// keys are random per process, so fingerprints cannot be forged or compared
/// across restarts; 128 bits make accidental collisions negligible.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CredentialFingerprint([u64; 2]);

/// Two independently seeded SipHash instances, chosen once per process.
fn hashers() -> &'static (std::hash::RandomState, std::hash::RandomState) {
    static HASHERS: OnceLock<(std::hash::RandomState, std::hash::RandomState)> = OnceLock::new();
    HASHERS.get_or_init(|| (std::hash::RandomState::new(), std::hash::RandomState::new()))
}

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
        let (a, b) = hashers();
        let mut ha = a.build_hasher();
        let mut hb = b.build_hasher();
        let mut count = 0u64;
        for part in parts {
            for h in [&mut ha, &mut hb] {
                h.write_u64(part.len() as u64);
                h.write(part);
            }
            count += 1;
        }
        ha.write_u64(count);
        hb.write_u64(count);
        Self([ha.finish(), hb.finish()])
    }
}

impl fmt::Debug for CredentialFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CredentialFingerprint({:016x}{:016x})",
            self.0[0], self.0[1]
        )
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
