//! Connection-level bounds of the listeners: how many connections are open
//! at once, how long a request head may take, how long an idle keep-alive
//! connection is kept and how long a write may stall.
//!
//! Request-level limits ([`super::protect`]) only start once a whole head
//! has arrived; these cover the time before and after, where a client that
//! trickles its head, idles or stops reading would otherwise hold a socket
//! (and its buffers) forever. [`io::Watched`] enforces the timeouts on the
//! socket, [`service::Tracked`] tells it when a request is being served.

pub mod activity;
pub mod io;
pub mod service;

use std::time::Duration;

/// `--http-max-connections`, `--http-header-read-timeout`, `--http-idle-timeout`, `--http-write-timeout`.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnFlags {
    /// Connections served at once per listener; more wait in the kernel's accept backlog (0 = unlimited).
    #[arg(long, env = "LOKIVL_HTTP_MAX_CONNECTIONS", default_value_t = 4096)]
    pub http_max_connections: usize,
    /// Time a client has to send a whole request head, from its first byte (from accept on a new connection).
    #[arg(long, env = "LOKIVL_HTTP_HEADER_READ_TIMEOUT", default_value = "10s", value_parser = humantime::parse_duration)]
    pub http_header_read_timeout: Duration,
    /// An idle keep-alive connection is closed after this long without a new request.
    #[arg(long, env = "LOKIVL_HTTP_IDLE_TIMEOUT", default_value = "2m", value_parser = humantime::parse_duration)]
    pub http_idle_timeout: Duration,
    /// A write to a client that makes no progress for this long closes the connection.
    #[arg(long, env = "LOKIVL_HTTP_WRITE_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration)]
    pub http_write_timeout: Duration,
}

/// Validated connection bounds, shared by the API and the metrics listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Connections served at once (0 = unlimited).
    pub max_connections: usize,
    /// Deadline for a whole request head.
    pub header_read_timeout: Duration,
    /// Longest wait for the next request on a keep-alive connection.
    pub idle_timeout: Duration,
    /// Longest stall of one write (no byte accepted by the socket).
    pub write_timeout: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            write_timeout: Duration::from_secs(30),
        }
    }
}

impl ConnFlags {
    /// Checks the values once.
    ///
    /// # Errors
    /// The reason, as text, for a zero timeout (it would close every connection).
    pub fn validate(&self) -> Result<ConnLimits, String> {
        for (name, d) in [
            ("--http-header-read-timeout", self.http_header_read_timeout),
            ("--http-idle-timeout", self.http_idle_timeout),
            ("--http-write-timeout", self.http_write_timeout),
        ] {
            if d.is_zero() {
                return Err(format!("{name} must be greater than zero"));
            }
        }
        Ok(ConnLimits {
            max_connections: self.http_max_connections,
            header_read_timeout: self.http_header_read_timeout,
            idle_timeout: self.http_idle_timeout,
            write_timeout: self.http_write_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> ConnFlags {
        ConnFlags {
            http_max_connections: 0,
            http_header_read_timeout: Duration::from_secs(10),
            http_idle_timeout: Duration::from_secs(120),
            http_write_timeout: Duration::from_secs(30),
        }
    }

    #[test]
    fn zero_timeouts_are_refused() {
        assert_eq!(flags().validate().unwrap().max_connections, 0);
        let mut f = flags();
        f.http_idle_timeout = Duration::ZERO;
        assert_eq!(
            f.validate().unwrap_err(),
            "--http-idle-timeout must be greater than zero"
        );
    }
}
