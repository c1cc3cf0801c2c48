//! The VictoriaLogs base URL, parsed once into what request URIs are built from.
//!
//! Credentials written into the URL (`http://user:pass@vl:9428`) are split
//! off here: they become the basic-auth header ([`userinfo`]), and neither
//! the stored authority nor any text built from the URL ([`redact`]) carries
//! the password, so errors, logs and the startup line never show it.

use http::Uri;

/// A backend URL lokivl cannot use; [`crate::config::ConfigError::Backend`]
/// at startup. Its text holds the URL with the password masked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid backend URL {url:?}: {reason}")]
pub struct BackendUrlError {
    /// The URL as given, password masked.
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The parts of the VictoriaLogs URL the client needs to build request URIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendUrl {
    /// `host:port`, without any `user:pass@` (it is printed in errors).
    pub authority: String,
    /// Path prefix such as `/vl` (empty when VictoriaLogs is served at the root).
    pub prefix: String,
    /// Whether VictoriaLogs is reached over TLS (`https://`).
    pub https: bool,
}

impl BackendUrl {
    /// Parses `http[s]://[user[:pass]@]host[:port][/prefix]`; the credentials
    /// are dropped (read them with [`userinfo`]).
    ///
    /// # Errors
    /// [`BackendUrlError`] for other schemes, a missing host, or a query
    /// string; its text holds the URL with the password masked.
    pub fn parse(url: &str) -> Result<Self, BackendUrlError> {
        let bad = |reason: &str| BackendUrlError {
            url: redact(url),
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
        let authority = uri.authority().ok_or_else(|| bad("missing host"))?.as_str();
        let authority = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host)
            .to_owned();
        if authority.is_empty() {
            return Err(bad("missing host"));
        }
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

/// The byte range of the `user[:pass]` part of `url`, if it has one.
fn userinfo_span(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..end].rfind('@')?;
    Some((start, start + at))
}

/// `url` with its password replaced by `xxxxx` (as Go's `url.Redacted`),
/// for any text that shows the URL; URLs without a password are unchanged.
pub(crate) fn redact(url: &str) -> String {
    let Some((from, to)) = userinfo_span(url) else {
        return url.to_owned();
    };
    match url[from..to].split_once(':') {
        Some((user, _)) => format!("{}{user}:xxxxx{}", &url[..from], &url[to..]),
        None => url.to_owned(),
    }
}

/// The percent-decoded `(user, password)` written into `url`, if any (an
/// absent password is empty, as curl reads `user@host`).
pub(crate) fn userinfo(url: &str) -> Option<(String, String)> {
    let (from, to) = userinfo_span(url)?;
    let (user, pass) = url[from..to]
        .split_once(':')
        .unwrap_or((&url[from..to], ""));
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    Some((decode(user), decode(pass)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_split_off_and_masked() {
        let u = BackendUrl::parse("https://lokivl:s3cr%40t@vl.example:9443/vl/").unwrap();
        assert_eq!(u.authority, "vl.example:9443");
        assert_eq!(u.base(), "https://vl.example:9443/vl");
        assert_eq!(
            userinfo("https://lokivl:s3cr%40t@vl.example:9443/vl/"),
            Some(("lokivl".to_owned(), "s3cr@t".to_owned()))
        );
        assert_eq!(userinfo("http://vl:9428/a@b"), None);
        assert_eq!(
            userinfo("http://only@vl:9428"),
            Some(("only".to_owned(), String::new()))
        );
        assert_eq!(
            redact("http://u:p4ss@vl:9428/x"),
            "http://u:xxxxx@vl:9428/x"
        );
        assert_eq!(redact("http://vl:9428/a@b"), "http://vl:9428/a@b");
        // Unparseable URLs are masked too: their text is in the startup error.
        assert_eq!(redact("u:p4ss@vl:9428"), "u:xxxxx@vl:9428");
        let err = BackendUrl::parse("ftp://u:p4ss@vl:21").unwrap_err();
        assert!(!err.to_string().contains("p4ss"), "{err}");
        assert!(err.to_string().contains("ftp://u:xxxxx@vl:21"), "{err}");
        let err = BackendUrl::parse("u:p4ss@vl:9428").unwrap_err();
        assert!(!err.to_string().contains("p4ss"), "{err}");
        let err = BackendUrl::parse("http://u:p4ss@vl:9428/?a=b").unwrap_err();
        assert!(!err.to_string().contains("p4ss"), "{err}");
    }
}
