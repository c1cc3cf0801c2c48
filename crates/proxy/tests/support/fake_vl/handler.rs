//! The one request handler of the HTTP modes. In order: a slow tenant
//! waits; lokivl's offset probe gets the release's answer (not recorded);
//! the request is recorded; then the first mode that knows the path
//! answers: a canned answer, the rows, the tail, the empty answers of a
//! VictoriaLogs with rows; anything else is a 404 naming the path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::{Recorded, Shared};

pub(super) const QUERY: &str = "/select/logsql/query";
pub(super) const TAIL: &str = "/select/logsql/tail";

pub(super) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

async fn handle(
    State(st): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    st.requests.fetch_add(1, Ordering::SeqCst);
    let mut form: Vec<(String, String)> = Vec::new();
    if let Some(q) = uri.query() {
        form.extend(form_urlencoded::parse(q.as_bytes()).into_owned());
    }
    form.extend(form_urlencoded::parse(&body).into_owned());
    let call = Recorded {
        method,
        path: uri.path().to_owned(),
        form,
        account: header(&headers, "accountid"),
        project: header(&headers, "projectid"),
    };
    if let Some(delay) = st.rows.delay_for(call.account_or_default()) {
        tokio::time::sleep(delay).await;
    }
    if call.path == QUERY
        && call
            .form
            .iter()
            .any(|(k, v)| k == "query" && v == proxy::backend::dialect::PROBE)
    {
        st.probes.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::OK, st.probe.clone()).into_response();
    }
    if st.record {
        st.log.lock().unwrap().push(call.clone());
    }
    if let Some(c) = st.answers.get(&call.path) {
        if !c.delay.is_zero() {
            tokio::time::sleep(c.delay).await;
        }
        return (c.status, c.body.clone()).into_response();
    }
    if call.path == QUERY
        && let Some(r) = st.rows.answer(&call)
    {
        return r;
    }
    if call.path == TAIL
        && let Some(r) = st.tails.answer(&call)
    {
        return r;
    }
    if st.rows.on() {
        return empty(&call.path);
    }
    (
        StatusCode::NOT_FOUND,
        format!("fake VictoriaLogs has no answer for {}", call.path),
    )
        .into_response()
}

/// What a VictoriaLogs whose rows match nothing answers on `path`.
fn empty(path: &str) -> Response {
    let json = |body: &'static str| {
        (StatusCode::OK, [("content-type", "application/json")], body).into_response()
    };
    match path {
        "/health" => (StatusCode::OK, "OK").into_response(),
        "/select/logsql/hits" => json(r#"{"hits":[]}"#),
        "/select/logsql/stats_query_range" => {
            json(r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#)
        }
        "/select/logsql/stats_query" => {
            json(r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#)
        }
        _ => json(r#"{"values":[]}"#),
    }
}
