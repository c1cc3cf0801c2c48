//! A loopback tap between one lokivl and VictoriaLogs that logs every call
//! in the order lokivl sends it (the support `Tap` keys exchanges, so it
//! loses both the order and repeated calls): the test reads, per query,
//! whether the stats query ran `unpack_json` and whether a row query
//! followed it.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::support::client;

/// One call lokivl made: its path and its LogsQL (`query`, or `""`).
#[derive(Debug, Clone)]
pub(super) struct Call {
    pub(super) path: String,
    pub(super) logsql: String,
}

impl Call {
    /// A query that returns log rows: LogsQL ending in `| limit N`, no `stats`.
    pub(super) fn is_row_query(&self) -> bool {
        let last = self.logsql.rsplit('|').next().unwrap_or("").trim();
        self.path.starts_with("/select/")
            && !self.logsql.contains("stats")
            && last
                .strip_prefix("limit ")
                .is_some_and(|n| !n.is_empty() && n.trim().bytes().all(|b| b.is_ascii_digit()))
    }

    /// A query that runs VictoriaLogs' parser of `parser` (`json`, `logfmt`).
    pub(super) fn unpacks(&self, parser: &str) -> bool {
        self.logsql.contains(&format!("unpack_{parser}"))
    }
}

type Log = Arc<Mutex<Vec<Call>>>;

/// The tap: point lokivl at `url`.
pub(super) struct OrderedTap {
    pub(super) url: String,
    log: Log,
}

impl OrderedTap {
    /// Starts a tap that forwards to `upstream`.
    pub(super) async fn start(upstream: &str) -> OrderedTap {
        let log: Log = Arc::default();
        let app = axum::Router::new()
            .fallback(forward)
            .with_state((upstream.to_owned(), log.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind tap");
        let url = format!("http://{}", listener.local_addr().expect("tap addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        OrderedTap { url, log }
    }

    /// Calls logged so far.
    pub(super) fn len(&self) -> usize {
        self.log.lock().expect("tap log").len()
    }

    /// The calls logged from position `from` on.
    pub(super) fn since(&self, from: usize) -> Vec<Call> {
        self.log.lock().expect("tap log")[from..].to_vec()
    }
}

async fn forward(
    State((upstream, log)): State<(String, Log)>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let mut params: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        params.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    params.extend(form_urlencoded::parse(&body).into_owned());
    let logsql = params
        .iter()
        .find(|(k, _)| k == "query")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    log.lock().expect("tap log").push(Call {
        path: uri.path().to_owned(),
        logsql,
    });
    let url = format!("{upstream}{}", uri.path());
    let answer = if method == Method::GET && params.is_empty() {
        client::try_get(&url, &[]).await
    } else {
        let form = client::qs(
            &params
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
        );
        client::try_post(&url, "application/x-www-form-urlencoded", form.into_bytes()).await
    };
    match answer {
        Ok(a) => {
            let ct = a.content_type().to_owned();
            let status = StatusCode::from_u16(a.status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, [(axum::http::header::CONTENT_TYPE, ct)], a.body).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
    }
}
