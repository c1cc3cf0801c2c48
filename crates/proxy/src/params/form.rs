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
    /// The decoded bytes of each value that is not UTF-8, by index in
    /// `pairs` (which holds it lossily): Loki's LogQL parser rejects such
    /// bytes, so [`Form::logql`] must see them.
    not_utf8: Vec<(usize, Box<[u8]>)>,
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
            not_utf8: Vec::new(),
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

    /// Appends the pairs of an `application/x-www-form-urlencoded` string,
    /// decoded as `form_urlencoded::parse` does (`+` is a space, invalid
    /// UTF-8 becomes U+FFFD), remembering the bytes of values that are not UTF-8.
    pub fn extend_urlencoded(&mut self, raw: &[u8]) {
        for piece in raw.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
            let (k, v) = match piece.iter().position(|&b| b == b'=') {
                Some(i) => (&piece[..i], &piece[i + 1..]),
                None => (piece, &b""[..]),
            };
            let key = String::from_utf8_lossy(&decode(k)).into_owned();
            let value = match String::from_utf8(decode(v)) {
                Ok(v) => v,
                Err(e) => {
                    let bytes = e.into_bytes();
                    let lossy = String::from_utf8_lossy(&bytes).into_owned();
                    self.not_utf8
                        .push((self.pairs.len(), bytes.into_boxed_slice()));
                    lossy
                }
            };
            self.pairs.push((key, value));
        }
    }

    /// The first value of `key` as LogQL text (`""` when absent), or
    /// Loki's parse error when its bytes are not UTF-8
    /// (`parse error at line 1, col 6: invalid UTF-8 encoding`).
    ///
    /// # Errors
    /// Loki's [`logql_parser::ParseError`] for bytes that are not UTF-8.
    pub fn logql(&self, key: &str) -> Result<&str, logql_parser::ParseError> {
        let Some(i) = self.pairs.iter().position(|(k, _)| k == key) else {
            return Ok("");
        };
        self.check_utf8(i)?;
        Ok(&self.pairs[i].1)
    }

    /// Checks every value of `key` (series `match[]`) as [`Form::logql`] does.
    ///
    /// # Errors
    /// Loki's [`logql_parser::ParseError`] for the first value that is not UTF-8.
    pub fn check_logql(&self, key: &str) -> Result<(), logql_parser::ParseError> {
        for (i, _) in self.pairs.iter().enumerate().filter(|(_, (k, _))| k == key) {
            self.check_utf8(i)?;
        }
        Ok(())
    }

    fn check_utf8(&self, index: usize) -> Result<(), logql_parser::ParseError> {
        match self.not_utf8.iter().find(|(i, _)| *i == index) {
            Some((_, raw)) => logql_parser::invalid_utf8_error(raw).map_or(Ok(()), Err),
            None => Ok(()),
        }
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

/// Percent-decodes `s` with `+` as a space, as an urlencoded form does.
fn decode(s: &[u8]) -> Vec<u8> {
    let plus_free: std::borrow::Cow<'_, [u8]> = if s.contains(&b'+') {
        s.iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect::<Vec<u8>>()
            .into()
    } else {
        s.into()
    };
    percent_encoding::percent_decode(&plus_free).collect()
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

    #[test]
    fn decodes_like_form_urlencoded() {
        let raw: &[u8] = b"a=1+2%2B3&&b&c=%E2%82%AC&=x&d=%zz&e=\xc3\xa9";
        let mut f = Form::default();
        f.extend_urlencoded(raw);
        let want: Vec<(String, String)> = form_urlencoded::parse(raw)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        assert_eq!(
            f.pairs()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect::<Vec<_>>(),
            want
        );
    }

    #[test]
    fn logql_values_that_are_not_utf8_get_lokis_error() {
        let mut f = Form::default();
        f.extend_urlencoded(
            b"query=%7Bapp%3D%22%FF%22%7D&match[]=%7Ba%3D%22b%22%7D&match[]=%7Bb%3D%FF",
        );
        assert_eq!(
            f.logql("query").unwrap_err().to_string(),
            "parse error at line 1, col 6: invalid UTF-8 encoding"
        );
        // The lossy text is kept for everything else.
        assert_eq!(f.get("query"), "{app=\"\u{FFFD}\"}");
        assert_eq!(
            f.check_logql("match[]").unwrap_err().to_string(),
            "parse error at line 1, col 3: invalid UTF-8 encoding"
        );
        assert_eq!(f.logql("missing"), Ok(""));
        let mut ok = Form::default();
        ok.extend_urlencoded(b"query=%7Bapp%3D%22%5Cxff%22%7D");
        assert_eq!(ok.logql("query"), Ok(r#"{app="\xff"}"#));
        assert_eq!(ok.check_logql("query"), Ok(()));
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
