//! The VictoriaLogs base URL, parsed once into what request URIs are built from.

use http::Uri;

use super::ConfigError;

/// The parts of the VictoriaLogs URL the client needs to build request URIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendUrl {
    /// `host:port`.
    pub authority: String,
    /// Path prefix such as `/vl` (empty when VictoriaLogs is served at the root).
    pub prefix: String,
    /// Whether VictoriaLogs is reached over TLS (`https://`).
    pub https: bool,
}

impl BackendUrl {
    /// Parses `http[s]://host[:port][/prefix]`.
    ///
    /// # Errors
    /// [`ConfigError::Backend`] for other schemes, a missing host, or a query string.
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        let bad = |reason: &str| ConfigError::Backend {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let uri: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        let https = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            Some(_) => return Err(bad("only http:// and https:// are supported")),
            None => return Err(bad("missing scheme, expected http://host:port")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| bad("missing host"))?
            .to_string();
        if uri.query().is_some() {
            return Err(bad("query strings are not allowed"));
        }
        let prefix = uri.path().trim_end_matches('/').to_owned();
        Ok(Self {
            authority,
            prefix,
            https,
        })
    }

    /// `scheme://authority/prefix`, the base every endpoint path is appended to.
    pub fn base(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.prefix)
    }
}
