//! The key text of a cached request, read exactly as the handler reads it.
//!
//! A handler sees Go's `r.Form`: the form body's pairs, then the URL's, and
//! takes the first value of a scalar (`Form::get`) or every value in order
//! (`Form::all`). Two requests may share an answer only when every handler
//! reading gives the same values, so the key keeps the values of one name
//! in that order and sorts only across names: `start=late&start=early` and
//! `start=early&start=late` are different requests, and a POST body's
//! values come before the URL's in the key as in the handler.

use std::borrow::Cow;

use http::HeaderMap;

use crate::params::Form;

/// The decoded name of one `name=value` segment; borrowed unless escaped.
fn name_of(segment: &str) -> Cow<'_, str> {
    let raw = segment.split_once('=').map_or(segment, |(k, _)| k);
    if !raw.contains(['%', '+']) {
        return Cow::Borrowed(raw);
    }
    form_urlencoded::parse(raw.as_bytes())
        .next()
        .map_or(Cow::Borrowed(""), |(k, _)| Cow::Owned(k.into_owned()))
}

/// The key text of a request's parameters without decoding their values:
/// the raw `name=value` segments of the form body (when the handler reads
/// it) and then the URL query, stably sorted by decoded name. Equal texts
/// hold equal values per name in equal order, so they are the same request
/// to every handler; the same request spelled with other escapes only
/// misses a sharing chance. `None` when the body is not UTF-8 (then
/// [`decoded_params`] is the key).
pub(super) fn raw_params(uri_query: Option<&str>, body: &[u8]) -> Option<String> {
    let body = std::str::from_utf8(body).ok()?;
    let mut segments: Vec<(Cow<'_, str>, &str)> = body
        .split('&')
        .chain(uri_query.unwrap_or("").split('&'))
        .filter(|s| !s.is_empty())
        .map(|s| (name_of(s), s))
        .collect();
    // Stable: the values of one name keep their request order.
    segments.sort_by(|a, b| a.0.cmp(&b.0));
    let len = segments.iter().map(|(_, s)| s.len() + 1).sum::<usize>();
    let mut out = String::with_capacity(len + 16);
    for (i, (_, s)) in segments.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(s);
    }
    Some(out)
}

/// The decoded pairs of `form`, stably sorted by name (values of one name
/// in request order), re-encoded: the key of a body that is not UTF-8, and
/// the base of the metadata key.
pub(super) fn decoded_params<'a>(
    pairs: impl Iterator<Item = (&'a str, &'a str)>,
    skip: impl Fn(&str) -> bool,
) -> form_urlencoded::Serializer<'static, String> {
    let mut pairs: Vec<(&str, &str)> = pairs.filter(|(k, _)| !skip(k)).collect();
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut ser = form_urlencoded::Serializer::new(String::with_capacity(128));
    for (k, v) in pairs {
        ser.append_pair(k, v);
    }
    ser
}

/// The key text of a non-metadata request: [`raw_params`], or for a body
/// that is not UTF-8 the decoded `form`.
pub(super) fn params_text(
    uri_query: Option<&str>,
    body: &[u8],
    form: impl FnOnce() -> Form,
) -> String {
    raw_params(uri_query, body)
        .unwrap_or_else(|| decoded_params(form().pairs(), |_| false).finish())
}

/// Appends the query tags (`X-Query-Tags`, every value: they are only keyed,
/// never read by a handler, so keying all of them cannot under-split).
pub(super) fn join_tags(params: &str, headers: &HeaderMap) -> String {
    let mut out = String::with_capacity(params.len() + 32);
    out.push_str(params);
    for v in headers.get_all("x-query-tags") {
        out.push_str("\ntags=");
        out.push_str(String::from_utf8_lossy(v.as_bytes()).trim());
    }
    out
}

/// The response-shape flags part of a key: the first
/// `X-Loki-Response-Encoding-Flags` value, trimmed, as Loki reads it
/// (`Header.Get`) and as the handler reads it
/// ([`crate::context::wants_categorized`]). Loki echoes every flag
/// of that value in `encodingFlags`, so the whole value is keyed.
pub(super) fn shape_flags(headers: &HeaderMap) -> String {
    headers
        .get("x-loki-response-encoding-flags")
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_across_names_and_method_do_not_split_keys() {
        let a = raw_params(Some("query=%7Ba%3D%22b%22%7D&limit=10"), b"");
        assert_eq!(a, raw_params(None, b"limit=10&query=%7Ba%3D%22b%22%7D"));
        assert_eq!(a, raw_params(Some("limit=10"), b"query=%7Ba%3D%22b%22%7D"));
        assert_eq!(
            a,
            raw_params(Some("&limit=10&&query=%7Ba%3D%22b%22%7D"), b"")
        );
        assert_ne!(a, raw_params(Some("limit=11&query=%7Ba%3D%22b%22%7D"), b""));
        // `a=1&b=2` is not `a=1%26b%3D2` (one parameter holding `&`).
        assert_ne!(
            raw_params(Some("a=1&b=2"), b""),
            raw_params(Some("a=1%26b%3D2"), b"")
        );
        assert_eq!(raw_params(None, &[0xff]), None);
    }

    #[test]
    fn repeated_names_keep_their_order() {
        let late_first = raw_params(Some("start=2&query=q&start=1"), b"");
        let early_first = raw_params(Some("start=1&query=q&start=2"), b"");
        assert_ne!(late_first, early_first);
        assert_eq!(late_first.as_deref(), Some("query=q&start=2&start=1"));
        // Escaped names sort by their decoded name, keeping the order.
        assert_ne!(
            raw_params(Some("st%61rt=1&start=2"), b""),
            raw_params(Some("start=2&st%61rt=1"), b"")
        );
        // A body's values come first, as in `r.Form`.
        assert_eq!(
            raw_params(Some("start=2"), b"start=1"),
            raw_params(Some("start=1&start=2"), b"")
        );
        assert_ne!(
            raw_params(Some("start=1"), b"start=2"),
            raw_params(Some("start=1&start=2"), b"")
        );
    }

    #[test]
    fn decoded_keys_keep_value_order() {
        let f = |q: &str| {
            let form = Form::parse(Some(q), b"");
            decoded_params(form.pairs(), |k| k == "end").finish()
        };
        assert_eq!(f("b=2&a=1&b=1&end=9"), "a=1&b=2&b=1");
        assert_ne!(f("b=2&b=1"), f("b=1&b=2"));
    }
}
