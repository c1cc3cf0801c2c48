//! The streaming call to VictoriaLogs' `/select/logsql/tail`.
//!
//! Its own small client rather than [`crate::backend::Backend`]'s pool: a
//! tail lives for up to `tail_max_duration`, so it must not hold one of the
//! bounded backend slots or run under the per-call deadline. Opening it
//! still passes the backend's breaker and gate
//! ([`crate::backend::Backend::admit_stream`], in the session), and
//! connecting and the response head have a deadline.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::backend::url::BackendUrl;
use crate::backend::{BackendError, BackendOptions};
use crate::context::RequestContext;

/// Time allowed to connect and get the response head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest VictoriaLogs error text kept (a close reason holds 123 bytes anyway).
const MAX_ERROR: usize = 1024;

/// What the tail asks VictoriaLogs for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailRequest {
    /// The LogsQL query (no sort/limit/stats pipes).
    pub query: String,
    /// How far back the first poll looks.
    pub start_offset: Duration,
    /// How long new entries are held back (Loki's `delay_for`).
    pub offset: Duration,
    /// Polling period.
    pub refresh_interval: Duration,
}

impl TailRequest {
    /// The form body, durations in milliseconds as VictoriaLogs reads them.
    pub fn form(&self) -> String {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", &self.query)
            .append_pair("start_offset", &ms(self.start_offset))
            .append_pair("offset", &ms(self.offset))
            .append_pair("refresh_interval", &ms(self.refresh_interval))
            .finish()
    }
}

/// A cheap-to-clone client for tails.
#[derive(Debug, Clone)]
pub struct Upstream {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: BackendUrl,
    authorization: Option<HeaderValue>,
}

impl Upstream {
    /// A client for `url` with the backend's credentials and TLS settings,
    /// so a tail reaches an `https://` VictoriaLogs exactly as queries do.
    pub fn new(url: BackendUrl, options: &BackendOptions) -> Self {
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(0)
            .build(crate::backend::connector(options, HEAD_TIMEOUT));
        Self {
            client,
            url,
            authorization: options.authorization.clone(),
        }
    }

    /// Starts the tail for the request's tenant and returns the body.
    ///
    /// # Errors
    /// [`BackendError::Status`] with VictoriaLogs' error text,
    /// [`BackendError::Unreachable`] or [`BackendError::Timeout`].
    pub async fn open(
        &self,
        ctx: &RequestContext,
        req: &TailRequest,
    ) -> Result<Incoming, BackendError> {
        // A tail follows one tenant (the handler refuses several).
        let tenant = ctx
            .single_tenant()
            .ok_or_else(|| BackendError::Request("a tail follows exactly one tenant".to_owned()))?;
        let uri = format!("{}/select/logsql/tail", self.url.base());
        let mut r = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .body(Full::new(Bytes::from(req.form())))
            .map_err(|e| BackendError::Request(e.to_string()))?;
        crate::tenant::set_headers(r.headers_mut(), tenant);
        if let Some(auth) = &self.authorization {
            r.headers_mut().insert(header::AUTHORIZATION, auth.clone());
        }
        let resp = tokio::time::timeout(HEAD_TIMEOUT, self.client.request(r))
            .await
            .map_err(|_| BackendError::Timeout(HEAD_TIMEOUT))?
            .map_err(|e| BackendError::Unreachable {
                authority: self.url.authority.clone(),
                reason: e.to_string(),
            })?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp.into_body());
        }
        let mut text = Vec::new();
        let _ = tokio::time::timeout(HEAD_TIMEOUT, error_head(resp.into_body(), &mut text)).await;
        Err(BackendError::Status {
            status,
            body: String::from_utf8_lossy(&text).trim().to_owned(),
        })
    }
}

/// Reads the first [`MAX_ERROR`] bytes of an error answer into `out`, never the rest.
async fn error_head(mut body: Incoming, out: &mut Vec<u8>) {
    while out.len() < MAX_ERROR {
        let Some(Ok(frame)) = body.frame().await else {
            return;
        };
        if let Ok(data) = frame.into_data() {
            let take = data.len().min(MAX_ERROR - out.len());
            out.extend_from_slice(&data[..take]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_uses_milliseconds() {
        let r = TailRequest {
            query: "{app=\"x\"}".into(),
            start_offset: Duration::from_secs(3),
            offset: Duration::ZERO,
            refresh_interval: Duration::from_millis(500),
        };
        assert_eq!(
            r.form(),
            "query=%7Bapp%3D%22x%22%7D&start_offset=3000ms&offset=0ms&refresh_interval=500ms"
        );
    }
}
