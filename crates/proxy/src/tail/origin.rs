//! Which browser origins may open a tail.
//!
//! A WebSocket is not covered by the browser's same-origin policy, so any
//! page a user visits could open one to lokivl with the user's network
//! position (cross-site WebSocket hijacking). Loki accepts every origin;
//! lokivl accepts requests without `Origin` (Grafana's server-side proxy,
//! logcli), origins whose host is the request's `Host`, and the listed ones.

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

/// Whether the request's `Origin` is acceptable under `allowed`.
pub fn allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let origin = origin.trim().trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let host = headers.get(HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    matches!((host, origin_host), (Some(h), Some(o)) if h.eq_ignore_ascii_case(o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn h(origin: Option<&'static str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(HOST, HeaderValue::from_static("lokivl:3100"));
        if let Some(o) = origin {
            h.insert(ORIGIN, HeaderValue::from_static(o));
        }
        h
    }

    #[test]
    fn rules() {
        assert!(allowed(&h(None), &[]));
        assert!(allowed(&h(Some("http://lokivl:3100")), &[]));
        assert!(allowed(&h(Some("https://LOKIVL:3100")), &[]));
        assert!(!allowed(&h(Some("https://evil.example")), &[]));
        assert!(!allowed(&h(Some("http://lokivl:3101")), &[]));
        let list = vec!["https://grafana.example".to_owned()];
        assert!(allowed(&h(Some("https://grafana.example")), &list));
        assert!(!allowed(&h(Some("https://grafana.example.evil")), &list));
        assert!(allowed(&h(Some("https://x")), &["*".to_owned()]));
        assert!(!allowed(&h(Some("null")), &[]));
    }
}
