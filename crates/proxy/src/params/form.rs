//! Request parameters from the query string and a form body, like Go's `r.Form`.
//!
//! Loki reads parameters through `r.Form`: form-body values first, then URL
//! values, repeated keys kept (`match[]`). Grafana uses GET; other clients
//! (logcli, scripts) POST forms, so both go through this one extractor.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use http::{HeaderMap, Method, header};
use http_body_util::BodyExt;

use crate::error::ApiError;

/// Largest form body read, in bytes: Go's `ParseForm` bound, which Loki
/// 3.7 answers with 400 [`BODY_TOO_LARGE`] (10 MiB is read, one byte more
/// is refused). The response cache and the handlers read a body through
/// [`read_body`] only, so both see it whole.
pub const MAX_FORM_BODY: usize = 10 << 20;

/// Loki's answer (400) for a form body over [`MAX_FORM_BODY`]: Go's `ParseForm` error.
pub const BODY_TOO_LARGE: &str = "http: POST too large";

/// Whether Go's `ParseForm` reads the body of this request: a POST, PUT or
/// PATCH whose media type is `application/x-www-form-urlencoded`. Any other
/// body is ignored, as Loki ignores it.
pub fn reads_body(method: &Method, headers: &HeaderMap) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH)
        && headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
}

/// Reads a form body whole, up to [`MAX_FORM_BODY`].
///
/// # Errors
/// [`ApiError::BadRequest`] with [`BODY_TOO_LARGE`] past the bound, or the
/// read error when the client's body breaks off.
pub async fn read_body(body: Body) -> Result<Bytes, ApiError> {
    match http_body_util::Limited::new(body, MAX_FORM_BODY)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::BadRequest(BODY_TOO_LARGE.to_owned()))
        }
        Err(e) => Err(ApiError::BadRequest(format!("cannot read form body: {e}"))),
    }
}

/// All parameters of a request, in Go's `r.Form` order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form {
    pairs: Vec<(String, String)>,
}

impl Form {
    /// Builds a form from decoded pairs (tests, the instant→range handover).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            pairs: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The parameters of a request as Go's `r.Form` holds them: the form
    /// body's pairs (empty when [`reads_body`] is false), then the URL's.
    pub fn parse(uri_query: Option<&str>, body: &[u8]) -> Self {
        let mut form = Self::default();
        form.extend_urlencoded(body);
        if let Some(q) = uri_query {
            form.extend_urlencoded(q.as_bytes());
        }
        form
    }

    /// Appends the pairs of an `application/x-www-form-urlencoded` string.
    pub fn extend_urlencoded(&mut self, raw: &[u8]) {
        self.pairs
            .extend(form_urlencoded::parse(raw).map(|(k, v)| (k.into_owned(), v.into_owned())));
    }

    /// The first value of `key`, or `""` when absent (Go's `Form.Get`).
    pub fn get(&self, key: &str) -> &str {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }

    /// Every pair in `r.Form` order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Every value of `key` in order.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl<S: Send + Sync> FromRequest<S> for Form {
    type Rejection = ApiError;

    /// The form the response cache parsed (and keyed the request by), or
    /// the request's own when the cache did not see it.
    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        if let Some(form) = parts.extensions.remove::<Self>() {
            return Ok(form);
        }
        let body = if reads_body(&parts.method, &parts.headers) {
            read_body(body).await?
        } else {
            Bytes::new()
        };
        Ok(Self::parse(parts.uri.query(), &body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_and_all() {
        let mut f = Form::default();
        f.extend_urlencoded(
            b"match%5B%5D=%7Ba%3D%221%22%7D&match[]=%7Bb%3D%222%22%7D&limit=10&limit=20",
        );
        assert_eq!(f.get("limit"), "10");
        assert_eq!(f.get("missing"), "");
        assert_eq!(
            f.all("match[]").collect::<Vec<_>>(),
            [r#"{a="1"}"#, r#"{b="2"}"#]
        );
    }

    #[tokio::test]
    async fn body_values_come_first() {
        let req = Request::builder()
            .method(Method::POST)
            .uri("/x?limit=5&query=a")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(axum::body::Body::from("limit=7"))
            .unwrap();
        let f = Form::from_request(req, &()).await.unwrap();
        assert_eq!(f.get("limit"), "7");
        assert_eq!(f.get("query"), "a");
    }
}
