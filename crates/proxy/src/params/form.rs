//! Request parameters from the query string and a form body, like Go's `r.Form`.
//!
//! Loki reads parameters through `r.Form`: form-body values first, then URL
//! values, repeated keys kept (`match[]`). Grafana uses GET; other clients
//! (logcli, scripts) POST forms, so both go through this one extractor.

use axum::extract::{FromRequest, Request};
use http::{Method, header};
use http_body_util::BodyExt;

use crate::error::ApiError;

/// Largest form body accepted; LogQL queries are far smaller.
const MAX_FORM_BODY: usize = 4 * 1024 * 1024;

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

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let mut form = Self::default();
        let query = req.uri().query().map(str::to_owned);
        let is_form = req.method() == Method::POST
            && req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        if is_form {
            let limited = http_body_util::Limited::new(req.into_body(), MAX_FORM_BODY);
            let body = limited
                .collect()
                .await
                .map_err(|e| ApiError::BadRequest(format!("cannot read form body: {e}")))?
                .to_bytes();
            form.extend_urlencoded(&body);
        }
        if let Some(q) = query {
            form.extend_urlencoded(q.as_bytes());
        }
        Ok(form)
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
