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
/// buffer would pin 10 MiB the byte bound never sees. The same holds for a
/// buffer that grew by doubling: `shrink_to_fit` cannot be relied on to give
/// the slack back (mimalloc keeps a block in place when it shrinks by less
/// than half, so the Vec reports the length while the block stays whole).
/// A body whose buffer holds more than [`SLACK`] of unused room is therefore
/// copied into a buffer of its own size; an exact (or nearly exact),
/// uniquely owned body is kept without a copy.
pub(crate) fn detach(body: Bytes) -> Bytes {
    let owned: Vec<u8> = body.into();
    if owned.capacity() - owned.len() > owned.len() / SLACK {
        return Bytes::copy_from_slice(&owned);
    }
    Bytes::from(owned)
}

/// Unused room a stored buffer may keep, as a fraction (1/16) of its length:
/// about what the allocator's own size classes round up anyway.
const SLACK: usize = 16;

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
    fn a_body_with_slack_is_copied_to_its_own_size() {
        // Shrinking in place cannot be trusted to free the slack (the
        // allocator may keep the block whole), so the body moves.
        let mut grown = Vec::with_capacity(1 << 20);
        grown.extend_from_slice(&[1u8; 600 << 10]);
        let grown_ptr = grown.as_ptr();
        let detached = detach(Bytes::from(grown));
        assert_eq!(detached.as_ref(), &[1u8; 600 << 10][..]);
        assert_ne!(detached.as_ptr(), grown_ptr, "copied, not shrunk in place");
        let back: Vec<u8> = detached.into();
        assert_eq!(
            back.capacity(),
            600 << 10,
            "stored in a buffer of its own size"
        );
        // Slack within 1/16 of the length is kept as it is.
        let mut near = Vec::with_capacity(1000);
        near.extend_from_slice(&[2u8; 950]);
        let near_ptr = near.as_ptr();
        assert_eq!(detach(Bytes::from(near)).as_ptr(), near_ptr);
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
