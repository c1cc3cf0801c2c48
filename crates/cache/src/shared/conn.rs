//! One connection speaking memcached's text protocol: `get` and `set`.
//!
//! Only what the tier needs, and every read bounded: a reply line is at
//! most [`MAX_LINE`] bytes and a value at most the tier's item bound, so a
//! broken or hostile server cannot make lokivl allocate what it announces.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Longest reply line read (`VALUE <250-byte key> <flags> <bytes>` fits easily).
const MAX_LINE: usize = 512;

/// Why an operation on a connection failed; the connection is then dropped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnError {
    /// Connecting, reading or writing failed (or the server closed).
    #[error("memcached i/o: {0}")]
    Io(#[from] std::io::Error),
    /// The server answered something that is not memcached's protocol.
    #[error("memcached protocol: {0}")]
    Protocol(&'static str),
    /// The server announced a value larger than the bound.
    #[error("memcached value of {0} bytes is over the bound")]
    Oversized(usize),
}

/// How the server answered a `set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetReply {
    /// `STORED`.
    Stored,
    /// `SERVER_ERROR object too large for cache`.
    TooLarge,
    /// Another refusal the server gave in good health (`SERVER_ERROR out of
    /// memory …`, `NOT_STORED`).
    Refused,
}

/// One open connection to a memcached server.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: BufReader<TcpStream>,
}

impl Conn {
    /// Connects to `addr` (`host:port`).
    pub(crate) async fn connect(addr: &str) -> Result<Self, ConnError> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream: BufReader::with_capacity(16 * 1024, stream),
        })
    }

    /// `get key`: the value, or `None` when absent. A value over `max`
    /// bytes is an error (the connection must then be dropped: its unread
    /// bytes are still in the stream).
    pub(crate) async fn get(
        &mut self,
        key: &str,
        max: usize,
    ) -> Result<Option<Vec<u8>>, ConnError> {
        let mut cmd = Vec::with_capacity(key.len() + 6);
        cmd.extend_from_slice(b"get ");
        cmd.extend_from_slice(key.as_bytes());
        cmd.extend_from_slice(b"\r\n");
        self.stream.get_mut().write_all(&cmd).await?;
        let line = self.line().await?;
        if line == b"END" {
            return Ok(None);
        }
        let len = value_len(&line, key)?;
        if len > max {
            return Err(ConnError::Oversized(len));
        }
        let mut value = vec![0u8; len + 2];
        self.stream.read_exact(&mut value).await?;
        if !value.ends_with(b"\r\n") {
            return Err(ConnError::Protocol("value not followed by CRLF"));
        }
        value.truncate(len);
        if self.line().await? != b"END" {
            return Err(ConnError::Protocol("value not followed by END"));
        }
        Ok(Some(value))
    }

    /// `set key 0 exptime len` with the value `parts` concatenated.
    pub(crate) async fn set(
        &mut self,
        key: &str,
        exptime: u32,
        parts: &[&[u8]],
    ) -> Result<SetReply, ConnError> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let cmd = format!("set {key} 0 {exptime} {len}\r\n");
        let stream = self.stream.get_mut();
        stream.write_all(cmd.as_bytes()).await?;
        for part in parts {
            stream.write_all(part).await?;
        }
        stream.write_all(b"\r\n").await?;
        let line = self.line().await?;
        Ok(match line.as_slice() {
            b"STORED" => SetReply::Stored,
            b"NOT_STORED" => SetReply::Refused,
            l if l.starts_with(b"SERVER_ERROR object too large") => SetReply::TooLarge,
            l if l.starts_with(b"SERVER_ERROR") => SetReply::Refused,
            _ => return Err(ConnError::Protocol("unexpected reply to set")),
        })
    }

    /// One reply line without its CRLF, at most [`MAX_LINE`] bytes.
    async fn line(&mut self) -> Result<Vec<u8>, ConnError> {
        let mut line = Vec::with_capacity(64);
        loop {
            let buf = self.stream.fill_buf().await?;
            if buf.is_empty() {
                return Err(ConnError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            let (take, done) = match memchr_newline(buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if line.len() + take > MAX_LINE {
                return Err(ConnError::Protocol("reply line too long"));
            }
            line.extend_from_slice(&buf[..take]);
            self.stream.consume(take);
            if done {
                break;
            }
        }
        if !line.ends_with(b"\r\n") {
            return Err(ConnError::Protocol("reply line without CRLF"));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The byte count of `VALUE <key> <flags> <bytes>` for `key`.
fn value_len(line: &[u8], key: &str) -> Result<usize, ConnError> {
    let text = std::str::from_utf8(line).map_err(|_| ConnError::Protocol("reply is not text"))?;
    let mut words = text.split(' ');
    match (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) {
        (Some("VALUE"), Some(k), Some(_flags), Some(len), None) if k == key => len
            .parse()
            .map_err(|_| ConnError::Protocol("bad value length")),
        _ => Err(ConnError::Protocol("unexpected reply to get")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_lines_are_read_strictly() {
        assert_eq!(value_len(b"VALUE k 0 12", "k").unwrap(), 12);
        assert!(value_len(b"VALUE other 0 12", "k").is_err());
        assert!(value_len(b"VALUE k 0 -1", "k").is_err());
        assert!(value_len(b"VALUE k 0 12 99", "k").is_err());
        assert!(value_len(b"SERVER_ERROR x", "k").is_err());
    }
}
