//! The task that owns a tail's WebSocket: it writes what the session
//! queues, each message under `--tail-write-timeout`, and reads (and drops)
//! what the client sends.
//!
//! The session never awaits a write itself, so its pings, its
//! `tail_max_duration` deadline and its VictoriaLogs reader keep running
//! while a client is slow. A client that does not read is disconnected once
//! either is true for the write timeout:
//! - a write stalls (the socket buffers are full);
//! - a ping stays unanswered: RFC 6455 has every endpoint answer a ping
//!   with a pong as it reads it (browsers, gorilla as Grafana and logcli use
//!   it, tungstenite), so a client that reads nothing is found even when
//!   nothing else is sent, without first filling megabytes of buffers.
//!
//! The pump then ends, which closes the session's outbox
//! ([`tokio::sync::mpsc::Sender::closed`]) and so ends the session and
//! frees its slot.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// WebSocket close code for a server-side failure (Loki's `CloseInternalServerErr`).
pub const CLOSE_INTERNAL: u16 = 1011;
/// WebSocket close code for a client message over the inbound limit (gorilla's read limit sends it too).
pub const CLOSE_TOO_BIG: u16 = 1009;
/// Largest message (and frame) a client may send on the tail socket. Loki
/// reads and discards them; nothing a client sends means anything.
pub const MAX_CLIENT_MESSAGE: usize = 64 << 10;
/// Longest close reason a WebSocket close frame can carry.
const MAX_REASON: usize = 123;

/// A close frame with `code` and `reason`, cut to what a close frame holds.
pub fn close_message(code: u16, reason: &str) -> Message {
    let mut end = reason.len().min(MAX_REASON);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame {
        code,
        reason: reason[..end].to_owned().into(),
    }))
}

/// Runs until the client leaves, a write stalls or a ping stays unanswered
/// for `write_timeout`, a close frame has been written, or the session
/// drops its outbox.
pub async fn pump(
    mut socket: WebSocket,
    mut outbox: mpsc::Receiver<Message>,
    write_timeout: Duration,
) {
    // When the oldest ping the client has not answered (nor sent anything since) went out.
    let mut unanswered: Option<Instant> = None;
    loop {
        let answer_by = unanswered.unwrap_or_else(Instant::now) + write_timeout;
        tokio::select! {
            msg = socket.recv() => match msg {
                Some(Ok(Message::Close(_))) | None => return,
                Some(Ok(_)) => unanswered = None,
                Some(Err(e)) => {
                    // tungstenite's `CapacityError::MessageTooLong`, past `MAX_CLIENT_MESSAGE`.
                    if e.to_string().contains("Message too long") {
                        let close = close_message(CLOSE_TOO_BIG, "message too big");
                        let _ = tokio::time::timeout(write_timeout, socket.send(close)).await;
                    }
                    return;
                }
            },
            () = tokio::time::sleep_until(answer_by), if unanswered.is_some() => {
                tracing::debug!(?write_timeout, "tail: the client did not answer a ping within the write timeout; disconnected");
                return;
            }
            next = outbox.recv() => {
                let Some(m) = next else { return };
                let (ping, last) = (matches!(m, Message::Ping(_)), matches!(m, Message::Close(_)));
                match tokio::time::timeout(write_timeout, socket.send(m)).await {
                    Ok(Ok(())) if last => return,
                    Ok(Ok(())) => {
                        if ping && unanswered.is_none() {
                            unanswered = Some(Instant::now());
                        }
                    }
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "tail: writing to the client failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(?write_timeout, "tail: a write to the client stalled for the write timeout; disconnected");
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_reason_is_cut_on_a_char_boundary() {
        let Message::Close(Some(f)) = close_message(CLOSE_INTERNAL, &"é".repeat(100)) else {
            panic!("close frame expected")
        };
        assert_eq!(f.code, CLOSE_INTERNAL);
        assert_eq!(f.reason.len(), 122);
    }
}
