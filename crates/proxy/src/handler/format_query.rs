//! `/loki/api/v1/format_query`: Loki's canonical multi-line printing of a query.
//!
//! Loki answers `{"status":"success","data":"<pretty>"}` with 200, or 400
//! `{"status":"invalid-query","error":"<parse error>"}`, both JSON with
//! `application/json; charset=utf-8`, written by Go's `json.Encoder` (HTML
//! characters escaped as `\u003c`, a trailing newline). lokivl writes the same
//! bytes so the golden answers recorded from Loki compare byte for byte.

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

use crate::params::Form;

/// `GET|POST /loki/api/v1/format_query`.
///
/// Loki reads `query` with Go's `FormValue`, which drops a body it cannot
/// read (over 10 MiB) and keeps the URL's values: so does this handler.
pub async fn format_query(req: Request) -> Response {
    let query = req.uri().query().map(str::to_owned);
    let form = match Form::from_request(req, &()).await {
        Ok(form) => form,
        Err(_) => Form::parse(query.as_deref(), b""),
    };
    let (status, body) = match form.logql("query") {
        Ok(query) => answer(query),
        Err(e) => (StatusCode::BAD_REQUEST, invalid_query(&e.to_string())),
    };
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    resp
}

/// The status and exact body Loki sends for `query`.
pub fn answer(query: &str) -> (StatusCode, String) {
    match logql_parser::parse(query) {
        Ok(expr) => (
            StatusCode::OK,
            body("success", "data", &logql_parser::prettify(&expr)),
        ),
        Err(e) => (StatusCode::BAD_REQUEST, invalid_query(&e.to_string())),
    }
}

/// Loki's body for a query it cannot parse.
fn invalid_query(error: &str) -> String {
    body("invalid-query", "error", error)
}

fn body(state: &str, key: &str, value: &str) -> String {
    format!(
        "{{\"status\":\"{state}\",\"{key}\":{}}}\n",
        go_json_string(value)
    )
}

/// A JSON string as Go's `json.Encoder` writes it (HTML-safe escaping).
fn go_json_string(s: &str) -> String {
    let json = serde_json::Value::String(s.to_owned()).to_string();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_go() {
        assert_eq!(
            go_json_string("a<b>&\u{2028}\"\n"),
            r#""a\u003cb\u003e\u0026\u2028\"\n""#
        );
    }

    #[test]
    fn answers() {
        assert_eq!(
            answer(r#"{a="b"} |= "x""#),
            (
                StatusCode::OK,
                "{\"status\":\"success\",\"data\":\"{a=\\\"b\\\"} |= \\\"x\\\"\"}\n".to_owned()
            )
        );
        let (status, body) = answer("{a=");
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.starts_with("{\"status\":\"invalid-query\",\"error\":\"parse error"));
    }
}
