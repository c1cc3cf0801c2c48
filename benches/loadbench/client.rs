//! A pooled HTTP/1 client for loopback targets only: the test kit's client
//! (`crates/proxy/tests/support/client.rs`, included as it is) bound to one
//! base URL, with a timeout and a loopback check.

use std::net::IpAddr;
use std::time::Duration;

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http::{Method, Request, Uri};
use http_body_util::Full;

/// The test kit's HTTP client, shared with lokivl's test suites.
#[path = "../../crates/proxy/tests/support/client.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod kit;

/// What one request returned.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// HTTP status, or 0 when the request failed before a status (connect, timeout).
    pub(crate) status: u16,
    /// The body (for errors, kept for the report; otherwise only its length is used).
    pub(crate) body: Bytes,
}

/// A keep-alive client bound to one base URL on the loopback interface.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    client: kit::Client,
    base: String,
    timeout: Duration,
}

impl Target {
    /// A client for `base` (`http://127.0.0.1:port`); refuses any host that is not loopback.
    ///
    /// # Errors
    /// A base URL that does not parse or is not on the loopback interface.
    pub(crate) fn new(base: &str, timeout: Duration, pool: usize) -> anyhow::Result<Self> {
        let base = base.trim_end_matches('/').to_owned();
        check_loopback(&base)?;
        let client = kit::Client::pooled(pool);
        Ok(Self {
            client,
            base,
            timeout,
        })
    }

    /// GET `path_and_query` with `headers`; transport failures and timeouts give status 0.
    pub(crate) async fn get(&self, path_and_query: &str, headers: &[(&str, &str)]) -> Reply {
        self.send(Method::GET, path_and_query, headers, Bytes::new())
            .await
    }

    /// Sends one request and reads the whole body.
    pub(crate) async fn send(
        &self,
        method: Method,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Reply {
        let failed = |e: String| Reply {
            status: 0,
            body: Bytes::from(e),
        };
        let mut req = Request::builder()
            .method(method)
            .uri(format!("{}{path_and_query}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = match req.body(Full::new(body)) {
            Ok(r) => r,
            Err(e) => return failed(format!("bad request: {e}")),
        };
        let call = async {
            let (status, _, body) = self.client.fetch(req).await?;
            Ok::<_, String>(Reply {
                status: status.as_u16(),
                body,
            })
        };
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => failed(e),
            Err(_) => failed(format!("timeout after {:?}", self.timeout)),
        }
    }
}

/// Errors unless `base` is `http://` on 127.0.0.0/8, `::1` or `localhost`.
pub(crate) fn check_loopback(base: &str) -> anyhow::Result<()> {
    let uri: Uri = base.parse().with_context(|| format!("bad URL {base:?}"))?;
    if uri.scheme_str() != Some("http") {
        bail!("{base}: only http:// targets are supported");
    }
    let host = uri.host().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        bail!("{base}: the load benchmark only targets loopback addresses");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_targets() {
        assert!(check_loopback("http://127.0.0.1:9428").is_ok());
        assert!(check_loopback("http://localhost:3100").is_ok());
        assert!(check_loopback("http://[::1]:3100").is_ok());
        assert!(check_loopback("http://10.0.0.1:9428").is_err());
        assert!(check_loopback("http://example.com").is_err());
        assert!(check_loopback("https://127.0.0.1").is_err());
    }
}
