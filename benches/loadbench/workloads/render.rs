//! A request template made concrete for one time window.

use super::pair::Call;

/// A concrete request: path with query string, and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// Path and query string.
    pub(crate) path_and_query: String,
    /// Headers to send.
    pub(crate) headers: &'static [(&'static str, &'static str)],
}

impl Call {
    /// Fills the placeholders for the window `[start, end)` (Unix ns).
    pub(crate) fn render(&self, start: i64, end: i64) -> Request {
        let subst = |v: &str| -> String {
            if !v.contains('{') || !v.contains('}') {
                return v.to_owned();
            }
            v.replace("{start}", &start.to_string())
                .replace("{end1}", &(end - 1).to_string())
                .replace("{end}", &end.to_string())
                .replace("{start_rfc}", &rfc3339_ms(start))
                .replace("{end_rfc}", &rfc3339_ms(end))
        };
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in self.params {
            q.append_pair(k, &subst(v));
        }
        Request {
            path_and_query: format!("{}?{}", self.path, q.finish()),
            headers: self.headers,
        }
    }
}

/// RFC 3339 with exactly three fraction digits, as `Date.toISOString()`.
pub(crate) fn rfc3339_ms(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let ms = ns.rem_euclid(1_000_000_000) / 1_000_000;
    let whole = benches::rfc3339(secs, 0);
    format!("{}.{ms:03}Z", whole.trim_end_matches('Z'))
}
