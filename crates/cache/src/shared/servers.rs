//! `--shared-cache memcached://host:port[,host:port…]`: the server list.

use std::fmt;

/// Why a `--shared-cache` URL is unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shared-cache {url:?}: {reason}")]
pub struct ServersError {
    /// The URL as given (it holds no secret: memcached has no credentials).
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The memcached servers of the shared tier, sorted and without duplicates.
///
/// Sorted so every replica given the same servers in any order maps a key
/// to the same server (as dskit sorts before jump-hashing).
#[derive(Clone, PartialEq, Eq)]
pub struct Servers(Vec<String>);

impl fmt::Debug for Servers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.0).finish()
    }
}

/// At most this many servers: the list is read from a flag, and each one
/// gets a connection pool.
const MAX_SERVERS: usize = 64;

impl Servers {
    /// Parses `memcached://host:port[,host:port…]`.
    ///
    /// `redis://` is refused with its reason: Redis speaks another protocol
    /// (RESP), so it is not the same code.
    ///
    /// # Errors
    /// [`ServersError`] for another scheme, an empty list, a server without a
    /// port, a path, a query or credentials.
    pub fn parse(url: &str) -> Result<Self, ServersError> {
        let err = |reason: &str| ServersError {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let Some(list) = url.strip_prefix("memcached://") else {
            if url.starts_with("redis://") || url.starts_with("rediss://") {
                return Err(err(
                    "redis is not supported (it speaks RESP, not memcached's protocol); use memcached://",
                ));
            }
            return Err(err("must start with memcached://"));
        };
        let list = list.strip_suffix('/').unwrap_or(list);
        if list.contains(['/', '?', '#', '@']) {
            return Err(err(
                "only host:port pairs separated by commas (no path, query or credentials)",
            ));
        }
        let mut servers = Vec::new();
        for server in list.split(',').map(str::trim) {
            if server.is_empty() {
                return Err(err("empty server in the list"));
            }
            let Some((host, port)) = server.rsplit_once(':') else {
                return Err(err("every server needs a port (host:port)"));
            };
            let host_ok = !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
            if !host_ok {
                return Err(err("bad host name"));
            }
            if port.parse::<u16>().map_or(true, |p| p == 0) {
                return Err(err("bad port"));
            }
            servers.push(server.to_owned());
        }
        servers.sort();
        servers.dedup();
        if servers.len() > MAX_SERVERS {
            return Err(err("more than 64 servers"));
        }
        Ok(Self(servers))
    }

    /// The servers in their sorted order.
    pub fn addrs(&self) -> &[String] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_deduplicated() {
        let s = Servers::parse("memcached://b:11211,a:11211, b:11211").unwrap();
        assert_eq!(s.addrs(), ["a:11211", "b:11211"]);
        let one = Servers::parse("memcached://127.0.0.1:11211/").unwrap();
        assert_eq!(one.addrs(), ["127.0.0.1:11211"]);
        let v6 = Servers::parse("memcached://[::1]:11211").unwrap();
        assert_eq!(v6.addrs(), ["[::1]:11211"]);
    }

    #[test]
    fn refusals_say_why() {
        let reason = |u: &str| Servers::parse(u).unwrap_err().reason;
        assert!(reason("redis://r:6379").contains("redis is not supported"));
        assert_eq!(reason("http://a:1"), "must start with memcached://");
        assert_eq!(
            reason("memcached://a"),
            "every server needs a port (host:port)"
        );
        assert_eq!(reason("memcached://a:0"), "bad port");
        assert_eq!(reason("memcached://a:x"), "bad port");
        assert_eq!(reason("memcached://a:1,,b:2"), "empty server in the list");
        assert!(reason("memcached://u:p@a:1").contains("no path"));
        assert!(reason("memcached://a:1/x").contains("no path"));
        assert_eq!(reason("memcached:// b c:1"), "bad host name");
    }
}
