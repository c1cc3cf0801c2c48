//! What a fetch returns and what the cache stores.

use std::time::Duration;

use bytes::Bytes;

/// The result of a successful fetch: the final response body and how long it
/// may be served from the cache.
///
/// The fetch decides the TTL because only it knows whether the response is
/// historical (cache for long) or touches "now" (cache briefly, or use
/// [`Duration::ZERO`] to share the fill with concurrent callers but keep
/// nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The response body exactly as it is sent to clients.
    pub body: Bytes,
    /// How long the entry stays valid after it is stored.
    pub ttl: Duration,
}

impl Fetched {
    /// Pairs a body with its time to live.
    pub fn new(body: Bytes, ttl: Duration) -> Self {
        Self { body, ttl }
    }
}

/// A stored value; it carries its own TTL so moka's per-entry expiry can read
/// it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) body: Bytes,
    pub(crate) ttl: Duration,
}

impl From<Fetched> for Entry {
    fn from(fetched: Fetched) -> Self {
        Self {
            body: detach(fetched.body),
            ttl: fetched.ttl,
        }
    }
}

/// Returns a `Bytes` that owns exactly its own bytes.
///
/// A `Bytes` slice keeps its whole parent allocation alive, while the weigher
/// only counts the slice, so a cached 100-byte slice of a 10 MiB upstream
/// buffer would pin 10 MiB the byte bound never sees. Converting to a `Vec`
/// copies only when the buffer is shared (or static) and reuses it when this
/// handle is the sole owner; `shrink_to_fit` then releases any slack. An
/// exact, uniquely owned body is not copied at all.
pub(crate) fn detach(body: Bytes) -> Bytes {
    let mut owned: Vec<u8> = body.into();
    owned.shrink_to_fit();
    Bytes::from(owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_slice_of_shared_buffer_is_copied() {
        let parent = Bytes::from(vec![7u8; 1 << 20]);
        let slice = parent.slice(100..110);
        let slice_ptr = slice.as_ptr();
        let detached = detach(slice);
        assert_eq!(detached.as_ref(), &[7u8; 10]);
        assert_ne!(detached.as_ptr(), slice_ptr, "shared slice must be copied");
        // The parent is untouched and still usable.
        assert_eq!(parent.len(), 1 << 20);
    }

    #[test]
    fn sole_owner_slice_releases_parent() {
        let mut data = vec![0u8; 1 << 20];
        data[5..9].copy_from_slice(b"keep");
        let slice = Bytes::from(data).slice(5..9);
        let detached = detach(slice);
        assert_eq!(detached.as_ref(), b"keep");
        // Round trip through a Vec must not report more than we keep.
        let back: Vec<u8> = detached.into();
        assert_eq!(back.len(), 4);
        assert!(back.capacity() < 64, "capacity {}", back.capacity());
    }

    #[test]
    fn exact_owned_body_is_not_copied() {
        let body = Bytes::from(b"{\"status\":\"success\"}".to_vec());
        let ptr = body.as_ptr();
        let detached = detach(body);
        assert_eq!(detached.as_ptr(), ptr);
        assert_eq!(detached.as_ref(), b"{\"status\":\"success\"}");
    }
}
