//! A minimal HTTP client for the end-to-end checks (hyper-util, no extra deps).

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use axum::body::Bytes;

/// Status, content type and body text of an answer.
pub type Answer = (u16, String, String);

async fn send_request(req: http::Request<Full<Bytes>>) -> Result<Answer, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let resp = client.request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((
        status,
        content_type,
        String::from_utf8_lossy(&body).into_owned(),
    ))
}

/// GET `url` with extra headers.
pub async fn get(url: &str, headers: &[(&str, &str)]) -> Result<Answer, String> {
    let mut b = http::Request::get(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    send_request(b.body(Full::new(Bytes::new())).map_err(|e| e.to_string())?).await
}

/// POST `body` to `url`.
pub async fn post(url: &str, content_type: &str, body: Vec<u8>) -> Result<Answer, String> {
    let req = http::Request::post(url)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    send_request(req).await
}

/// Builds `base` + `path` + `?` + urlencoded params.
pub fn url(base: &str, path: &str, params: &[(&str, &str)]) -> String {
    let mut ser = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        ser.append_pair(k, v);
    }
    format!("{base}{path}?{}", ser.finish())
}

/// A client kept for many requests (load and soak loops).
pub type Shared = Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// A new [`Shared`] client.
pub fn shared() -> Shared {
    Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>()
}

/// Any method, with headers and a body; status and body text.
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<(u16, String), String> {
    send_with(&shared(), method, url, headers, body).await
}

/// Like [`send`], on a shared client.
pub async fn send_with(
    client: &Shared,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<(u16, String), String> {
    let mut b = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = client.request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}
