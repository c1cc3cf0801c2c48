//! The one route table: every path lokivl serves, the handler behind it, the
//! methods it accepts and how the response cache treats it.
//!
//! The router ([`crate::app`]), the response cache ([`crate::response_cache`])
//! and the cache-hit front ([`crate::server::hit`]) all read [`ROUTES`], so a
//! route's path, its metric label and its cache policy are written once.

/// How the response cache treats a route's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePolicy {
    /// Never cached or coalesced (tail, push, status pages).
    Never,
    /// Keyed by the raw parameters; a stored `GET` is answered in front of
    /// the routed stack ([`crate::server::hit`]).
    Raw,
    /// Metadata keyed (and fetched) by its time range widened to a bucket,
    /// so refreshes share an entry; needs the decoded range, so hits go
    /// through the cache layer, not the front.
    Bucketed,
}

/// The methods a route answers (others get axum's 405).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Methods {
    /// `GET` and `POST` (form body), as Loki's query endpoints.
    GetPost,
    /// `GET` only.
    Get,
    /// Any method (push decides itself).
    Any,
}

/// Which handler answers a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handler {
    /// `query_range`.
    QueryRange,
    /// `query`.
    Query,
    /// `labels`.
    Labels,
    /// `label/{name}/values`.
    LabelValues,
    /// `series`.
    Series,
    /// `format_query`.
    FormatQuery,
    /// `status/buildinfo`.
    BuildInfo,
    /// `index/stats`.
    IndexStats,
    /// `index/volume`.
    IndexVolume,
    /// `index/volume_range`.
    IndexVolumeRange,
    /// `detected_labels`.
    DetectedLabels,
    /// `detected_fields`.
    DetectedFields,
    /// `detected_field/{name}/values`.
    DetectedFieldValues,
    /// `patterns`.
    Patterns,
    /// `drilldown-limits`.
    DrilldownLimits,
    /// `tail` (WebSocket).
    Tail,
    /// `push` (passthrough or refusal).
    Push,
    /// `/ready`.
    Ready,
    /// `/health`.
    Health,
    /// `/metrics` (on the admin listener when `--metrics-listen` is set).
    Metrics,
}

/// One route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The axum path template; also the `route` label of the access log.
    pub path: &'static str,
    /// The handler.
    pub handler: Handler,
    /// The methods it answers.
    pub methods: Methods,
    /// The response cache's treatment.
    pub cache: CachePolicy,
    /// The `endpoint` label of the cache metrics.
    pub name: &'static str,
}

const fn route(
    path: &'static str,
    handler: Handler,
    methods: Methods,
    cache: CachePolicy,
    name: &'static str,
) -> Route {
    Route {
        path,
        handler,
        methods,
        cache,
        name,
    }
}

use CachePolicy::{Bucketed, Never, Raw};
use Methods::{Any, Get, GetPost};

/// Every route, in the order the router registers them.
pub const ROUTES: &[Route] = &[
    route(
        "/loki/api/v1/query_range",
        Handler::QueryRange,
        GetPost,
        Raw,
        "query_range",
    ),
    route("/loki/api/v1/query", Handler::Query, GetPost, Raw, "query"),
    route(
        "/loki/api/v1/labels",
        Handler::Labels,
        GetPost,
        Bucketed,
        "labels",
    ),
    route(
        "/loki/api/v1/label/{name}/values",
        Handler::LabelValues,
        GetPost,
        Bucketed,
        "label_values",
    ),
    route(
        "/loki/api/v1/series",
        Handler::Series,
        GetPost,
        Bucketed,
        "series",
    ),
    route(
        "/loki/api/v1/format_query",
        Handler::FormatQuery,
        GetPost,
        Never,
        "format_query",
    ),
    route(
        "/loki/api/v1/status/buildinfo",
        Handler::BuildInfo,
        Get,
        Never,
        "buildinfo",
    ),
    route(
        "/loki/api/v1/index/stats",
        Handler::IndexStats,
        GetPost,
        Raw,
        "index_stats",
    ),
    route(
        "/loki/api/v1/index/volume",
        Handler::IndexVolume,
        GetPost,
        Raw,
        "index_volume",
    ),
    route(
        "/loki/api/v1/index/volume_range",
        Handler::IndexVolumeRange,
        GetPost,
        Raw,
        "index_volume_range",
    ),
    route(
        "/loki/api/v1/detected_labels",
        Handler::DetectedLabels,
        Get,
        Raw,
        "detected_labels",
    ),
    route(
        "/loki/api/v1/detected_fields",
        Handler::DetectedFields,
        Get,
        Raw,
        "detected_fields",
    ),
    route(
        "/loki/api/v1/detected_field/{name}/values",
        Handler::DetectedFieldValues,
        Get,
        Raw,
        "detected_field_values",
    ),
    route(
        "/loki/api/v1/patterns",
        Handler::Patterns,
        Get,
        Raw,
        "patterns",
    ),
    route(
        "/loki/api/v1/drilldown-limits",
        Handler::DrilldownLimits,
        Get,
        Never,
        "drilldown_limits",
    ),
    route("/loki/api/v1/tail", Handler::Tail, Get, Never, "tail"),
    route("/loki/api/v1/push", Handler::Push, Any, Never, "push"),
    route("/ready", Handler::Ready, Get, Never, "ready"),
    route("/health", Handler::Health, Get, Never, "health"),
    route("/metrics", Handler::Metrics, Get, Never, "metrics"),
];

/// The route whose template matches `path` (`{name}` is one non-empty segment).
pub fn find(path: &str) -> Option<&'static Route> {
    ROUTES.iter().find(|r| matches(r.path, path))
}

/// The cached route `path` names, or `None` for routes never cached.
pub fn cached(path: &str) -> Option<&'static Route> {
    find(path).filter(|r| r.cache != CachePolicy::Never)
}

fn matches(template: &str, path: &str) -> bool {
    let mut t = template.split('/');
    let mut p = path.split('/');
    loop {
        match (t.next(), p.next()) {
            (None, None) => return true,
            (Some(ts), Some(ps)) if ts.starts_with('{') => {
                if ps.is_empty() {
                    return false;
                }
            }
            (Some(ts), Some(ps)) if ts == ps => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_find_their_routes() {
        assert_eq!(
            cached("/loki/api/v1/query_range").map(|r| r.name),
            Some("query_range")
        );
        assert_eq!(
            cached("/loki/api/v1/label/app/values").map(|r| (r.name, r.cache)),
            Some(("label_values", CachePolicy::Bucketed))
        );
        assert_eq!(
            cached("/loki/api/v1/detected_field/level/values").map(|r| r.path),
            Some("/loki/api/v1/detected_field/{name}/values")
        );
        assert_eq!(
            cached("/loki/api/v1/index/volume").map(|r| r.name),
            Some("index_volume")
        );
        for never in [
            "/loki/api/v1/push",
            "/loki/api/v1/tail",
            "/loki/api/v1/format_query",
            "/metrics",
            "/loki/api/v1/label//values",
            "/loki/api/v1/query_range/x",
        ] {
            assert_eq!(cached(never), None, "{never}");
        }
        assert_eq!(find("/nope"), None);
    }

    #[test]
    fn names_and_paths_are_unique() {
        for (i, a) in ROUTES.iter().enumerate() {
            for b in &ROUTES[i + 1..] {
                assert_ne!(a.path, b.path);
                assert_ne!(a.name, b.name);
            }
        }
    }
}
