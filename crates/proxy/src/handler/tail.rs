//! `GET /loki/api/v1/tail`: the live-tail WebSocket (see [`crate::tail`]).
//!
//! Everything Loki checks before the upgrade is answered as plain-text 400
//! (`query`, `limit`, `start`, `delay_for`); the per-tenant tail limit is,
//! as in Loki, reported after the upgrade as close code 1011, and so is
//! lokivl's cap over all tenants.

use std::time::Duration;

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{Extension, State, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode};
use logql_parser::Expr;

use crate::context::RequestContext;
use crate::error::{ApiError, text_response};
use crate::params::{self, Form, timestamp};
use crate::tail::TailState;
use crate::tail::frame::Encoder;
use crate::tail::pump::MAX_CLIENT_MESSAGE;
use crate::tail::session::{self, Session};
use crate::tail::slots::Caps;

/// Loki's `maxDelayForInTailing`, in seconds.
const MAX_DELAY_FOR: i64 = 5;
/// The header asking for categorized labels.
const ENCODING_FLAGS: &str = "x-loki-response-encoding-flags";

/// `GET /loki/api/v1/tail`.
pub async fn tail(
    State(state): State<TailState>,
    Extension(ctx): Extension<RequestContext>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    form: Form,
) -> Response {
    if !crate::tail::origin::allowed(&headers, &state.settings.allowed_origins) {
        return text_response(
            StatusCode::FORBIDDEN,
            "websocket origin not allowed; see --tail-allowed-origins".to_owned(),
        );
    }
    let sess = match parse(&form, &headers, &ctx) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let ws = match ws {
        // Clients send nothing meaningful on a tail: a small bound instead of axum's 64 MiB.
        Ok(ws) => ws
            .max_message_size(MAX_CLIENT_MESSAGE)
            .max_frame_size(MAX_CLIENT_MESSAGE),
        Err(rejection) => return rejection.into_response(),
    };
    let caps = Caps {
        per_tenant: state.settings.max_concurrent,
        total: state.settings.max_concurrent_total,
    };
    let slot = state.slots.acquire(ctx.tenant().as_str(), caps);
    // The session owns the request context: the socket task needs nothing ambient.
    ws.on_upgrade(move |socket| session::run(socket, state, slot, sess))
}

/// Loki's `ParseTailQuery`, plus lowering the query for VictoriaLogs.
fn parse(form: &Form, headers: &HeaderMap, ctx: &RequestContext) -> Result<Session, ApiError> {
    let now = timestamp::now_ns();
    let query = form.logql("query")?;
    let expr = logql_parser::parse_query(query)?;
    engine::pipeline::validate::check(&expr).map_err(ApiError::BadRequest)?;
    let limit = params::limit(form)?;
    params::check_max_entries(ctx.limits(), limit)?;
    let start = timestamp::parse_timestamp(form.get("start"), now - params::DEFAULT_SINCE_NS)
        .map_err(|e| {
            ApiError::BadRequest(
                params::ParamError::Bound {
                    param: "start",
                    reason: e.to_string(),
                }
                .to_string(),
            )
        })?;
    let delay = match form.get("delay_for") {
        "" => 0,
        raw => go::strconv::atoi(raw).map_err(|e| ApiError::BadRequest(e.to_string()))?,
    };
    if delay < 0 {
        return Err(ApiError::BadRequest(format!(
            "delay_for value {delay} is out of range [0, {}]",
            u32::MAX
        )));
    }
    if delay > MAX_DELAY_FOR {
        return Err(ApiError::BadRequest(format!(
            "delay_for can't be greater than {MAX_DELAY_FOR}"
        )));
    }
    let Expr::Log(log) = expr else {
        return Err(ApiError::BadRequest(
            "only log selector is supported".to_owned(),
        ));
    };
    if ctx.tenant().is_multi() {
        return Err(ApiError::Unsupported(
            "tailing several tenants at once (X-Scope-OrgID a|b) is not supported by lokivl"
                .to_owned(),
        ));
    }
    // As a log query: selectors and filters see the labels discovery
    // synthesizes, and the plan carries the settings to the encoders.
    let plan = logsql_ast::lower_log(&log, ctx.discovery())?;
    let categorize = headers
        .get_all(ENCODING_FLAGS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|f| f.trim() == "categorize-labels");
    let encoder = Encoder::new(&plan, categorize)
        .map_err(ApiError::BadRequest)?
        .bare_selector(log.pipeline.is_empty());
    Ok(Session {
        ctx: ctx.clone(),
        plan,
        encoder,
        limit,
        start,
        delay_for: Duration::from_secs(delay as u64),
    })
}
