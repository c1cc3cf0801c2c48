//! Security headers on every answer.
//!
//! lokivl serves JSON and plain text to API clients, never pages, so the
//! strictest browser policies cost nothing and stop a response from being
//! framed, sniffed or rendered as HTML.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, header};

/// The headers set when the handler did not set them itself.
const SECURITY_HEADERS: [(HeaderName, &str); 5] = [
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "no-referrer"),
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; frame-ancestors 'none'",
    ),
    (header::CACHE_CONTROL, "no-store"),
];

/// Adds [`SECURITY_HEADERS`] that are missing.
pub async fn secure(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    add_missing(resp.headers_mut());
    resp
}

/// Sets each of [`SECURITY_HEADERS`] that `h` lacks (also used by the cache-hit front).
pub(crate) fn add_missing(h: &mut HeaderMap) {
    // Room for these and `x-request-id`, so the map grows at most once.
    h.reserve(SECURITY_HEADERS.len() + 1);
    for (name, value) in SECURITY_HEADERS {
        h.entry(name)
            .or_insert_with(|| HeaderValue::from_static(value));
    }
}
