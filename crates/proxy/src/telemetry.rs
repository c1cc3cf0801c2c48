//! Prometheus metrics of the proxy itself, served on `/metrics`.
//!
//! One registry per [`Metrics`] value (not the global default) so tests and
//! several routers in one process do not share counters.

use std::sync::Arc;
use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// The proxy's metrics and the registry that serves them: one shared
/// pointer, so a request clones one `Arc`, not one per metric.
#[derive(Debug, Clone)]
pub struct Metrics(Arc<Registered>);

impl std::ops::Deref for Metrics {
    type Target = Registered;

    fn deref(&self) -> &Registered {
        &self.0
    }
}

/// The metrics behind a [`Metrics`] handle.
#[derive(Debug)]
pub struct Registered {
    registry: Registry,
    requests: IntCounterVec,
    request_duration: HistogramVec,
    backend_requests: IntCounterVec,
    backend_duration: HistogramVec,
    backend_load: IntGaugeVec,
    breaker_open: IntGauge,
    inflight: IntGauge,
    evaluations: IntGaugeVec,
    rejected: IntCounterVec,
    cache_requests: IntCounterVec,
    cache_state: IntGaugeVec,
    offset_rule: IntGaugeVec,
    parser_pushdown: IntCounterVec,
}

/// The result of one backend call, as a metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx with a complete body.
    Ok,
    /// Non-2xx status from VictoriaLogs.
    Status,
    /// Connection refused or reset.
    Unreachable,
    /// The deadline passed.
    Timeout,
    /// The body broke off, was garbage or too large.
    Body,
    /// lokivl refused the call itself (breaker open, queue full).
    Refused,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Status => "status",
            Self::Unreachable => "unreachable",
            Self::Timeout => "timeout",
            Self::Body => "body",
            Self::Refused => "refused",
        }
    }
}

/// Latency buckets from 1 ms to ~30 s: metadata calls are milliseconds, big log queries seconds.
const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

impl Metrics {
    /// Creates and registers every metric.
    ///
    /// # Errors
    /// [`prometheus::Error`] if a metric definition is invalid (a defect).
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "lokivl_http_requests_total",
                "HTTP requests served, by route and status code.",
            ),
            &["route", "status"],
        )?;
        let request_duration = HistogramVec::new(
            HistogramOpts::new(
                "lokivl_http_request_duration_seconds",
                "HTTP request latency by route.",
            )
            .buckets(BUCKETS.to_vec()),
            &["route"],
        )?;
        let backend_requests = IntCounterVec::new(
            Opts::new(
                "lokivl_backend_requests_total",
                "Calls to VictoriaLogs, by endpoint and outcome.",
            ),
            &["endpoint", "outcome"],
        )?;
        let backend_duration = HistogramVec::new(
            HistogramOpts::new(
                "lokivl_backend_request_duration_seconds",
                "VictoriaLogs call latency by endpoint.",
            )
            .buckets(BUCKETS.to_vec()),
            &["endpoint"],
        )?;
        let backend_load = IntGaugeVec::new(
            Opts::new(
                "lokivl_backend_calls",
                "Calls to VictoriaLogs now running or waiting for a slot.",
            ),
            &["state"],
        )?;
        let breaker_open = IntGauge::new(
            "lokivl_backend_circuit_open",
            "1 while the circuit breaker refuses calls to VictoriaLogs.",
        )?;
        let inflight = IntGauge::new("lokivl_inflight_requests", "HTTP requests being served.")?;
        let evaluations = IntGaugeVec::new(
            Opts::new(
                "lokivl_log_query_evaluations",
                "Log query evaluations (query_range misses of a log query) running, or waiting for a --max-concurrent-log-queries slot.",
            ),
            &["state"],
        )?;
        let rejected = IntCounterVec::new(
            Opts::new(
                "lokivl_rejected_requests_total",
                "Requests refused before reaching a handler, by reason.",
            ),
            &["reason"],
        )?;
        let cache_requests = IntCounterVec::new(
            Opts::new(
                "lokivl_cache_requests_total",
                "Cacheable requests by endpoint and outcome (hit, miss, coalesced, shared_hit, uncacheable).",
            ),
            &["endpoint", "outcome"],
        )?;
        let cache_state = IntGaugeVec::new(
            Opts::new(
                "lokivl_cache",
                "Response cache size and evictions: bytes, entries, evicted (since start).",
            ),
            &["kind"],
        )?;
        let offset_rule = IntGaugeVec::new(
            Opts::new(
                "lokivl_victorialogs_bucket_offset_rule",
                "1 for the time-bucket offset rule VictoriaLogs' answers showed: plus (v1.26) or minus (v1.51); none before the first informative answer.",
            ),
            &["rule"],
        )?;
        let parser_pushdown = IntCounterVec::new(
            Opts::new(
                "lokivl_parser_pushdown_total",
                "Range aggregations whose parser ran in VictoriaLogs (pushed), and those its guard sent back to lokivl (fallback).",
            ),
            &["outcome"],
        )?;
        registry.register(Box::new(parser_pushdown.clone()))?;
        registry.register(Box::new(offset_rule.clone()))?;
        registry.register(Box::new(cache_requests.clone()))?;
        registry.register(Box::new(cache_state.clone()))?;
        registry.register(Box::new(backend_load.clone()))?;
        registry.register(Box::new(breaker_open.clone()))?;
        registry.register(Box::new(inflight.clone()))?;
        registry.register(Box::new(evaluations.clone()))?;
        registry.register(Box::new(rejected.clone()))?;
        #[cfg(target_os = "linux")]
        registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(request_duration.clone()))?;
        registry.register(Box::new(backend_requests.clone()))?;
        registry.register(Box::new(backend_duration.clone()))?;
        Ok(Self(Arc::new(Registered {
            registry,
            requests,
            request_duration,
            backend_requests,
            backend_duration,
            backend_load,
            breaker_open,
            inflight,
            evaluations,
            rejected,
            cache_requests,
            cache_state,
            offset_rule,
            parser_pushdown,
        })))
    }
}

impl Registered {
    /// Sets the backend gate gauges.
    pub fn set_backend_load(&self, waiting: usize, running: usize) {
        let g = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
        self.backend_load
            .with_label_values(&["waiting"])
            .set(g(waiting));
        self.backend_load
            .with_label_values(&["running"])
            .set(g(running));
    }

    /// Marks `rule` (`plus` or `minus`) as the offset rule VictoriaLogs follows.
    pub fn set_offset_rule(&self, rule: &str) {
        for r in ["plus", "minus"] {
            self.offset_rule
                .with_label_values(&[r])
                .set(i64::from(r == rule));
        }
    }

    /// Sets the breaker gauge.
    pub fn set_breaker_open(&self, open: bool) {
        self.breaker_open.set(i64::from(open));
    }

    /// The in-flight request gauge (the server layer moves it).
    pub fn inflight(&self) -> &IntGauge {
        &self.inflight
    }

    /// The log-query evaluation gauges by `state` (`running`, `waiting`);
    /// the evaluation gate moves them.
    pub fn evaluations(&self, state: &str) -> IntGauge {
        self.evaluations.with_label_values(&[state])
    }

    /// Counts a request refused by a limit (`rate`, `inflight`, `url`, `headers`, `body`, `timeout`).
    pub fn reject(&self, reason: &str) {
        self.rejected.with_label_values(&[reason]).inc();
    }

    /// Counts a range aggregation whose parser ran in VictoriaLogs:
    /// `fallback` when its guard found rows to evaluate in lokivl.
    pub fn observe_parser_pushdown(&self, fallback: bool) {
        self.parser_pushdown
            .with_label_values(&[if fallback { "fallback" } else { "pushed" }])
            .inc();
    }

    /// Counts one cacheable request by endpoint and outcome.
    pub fn observe_cache(&self, endpoint: &str, outcome: &str) {
        self.cache_requests
            .with_label_values(&[endpoint, outcome])
            .inc();
    }

    /// Exports the shared cache tier of `cache` (`lokivl_shared_cache_*`),
    /// read at each scrape. Called once, when `--shared-cache` is set.
    pub fn register_shared_cache(&self, cache: cache::Cache) {
        match SharedCacheCollector::new(cache) {
            Ok(c) => {
                if let Err(e) = self.registry.register(Box::new(c)) {
                    tracing::warn!(error = %e, "shared cache metrics not registered");
                }
            }
            Err(e) => tracing::warn!(error = %e, "shared cache metrics not defined"),
        }
    }

    /// Publishes the response cache's size and eviction count.
    pub fn set_cache_state(&self, bytes: u64, entries: u64, evicted: u64) {
        let g = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.cache_state.with_label_values(&["bytes"]).set(g(bytes));
        self.cache_state
            .with_label_values(&["entries"])
            .set(g(entries));
        self.cache_state
            .with_label_values(&["evicted"])
            .set(g(evicted));
    }

    /// Records one served HTTP request.
    pub fn observe_request(&self, route: &str, status: u16, elapsed: Duration) {
        let mut buf = itoa::Buffer::new();
        self.requests
            .with_label_values(&[route, buf.format(status)])
            .inc();
        self.request_duration
            .with_label_values(&[route])
            .observe(elapsed.as_secs_f64());
    }

    /// Records one call to VictoriaLogs.
    pub fn observe_backend(&self, endpoint: &str, outcome: Outcome, elapsed: Duration) {
        self.backend_requests
            .with_label_values(&[endpoint, outcome.as_str()])
            .inc();
        self.backend_duration
            .with_label_values(&[endpoint])
            .observe(elapsed.as_secs_f64());
    }

    /// Renders the registry in the Prometheus text format.
    ///
    /// # Errors
    /// [`prometheus::Error`] if encoding fails (a defect).
    pub fn render(&self) -> Result<Vec<u8>, prometheus::Error> {
        let mut out = Vec::with_capacity(4096);
        TextEncoder::new().encode(&self.registry.gather(), &mut out)?;
        Ok(out)
    }
}

/// The `outcome` label of `lokivl_cache_requests_total` for a cache lookup.
pub fn cache_outcome(o: cache::Outcome) -> &'static str {
    match o {
        cache::Outcome::Hit => "hit",
        cache::Outcome::Miss => "miss",
        cache::Outcome::Coalesced => "coalesced",
        cache::Outcome::SharedHit => "shared_hit",
    }
}

/// Reads the shared cache tier's counters at each scrape: the cache crate
/// keeps plain atomics, so it needs no metrics library.
struct SharedCacheCollector {
    cache: cache::Cache,
    descs: Vec<prometheus::core::Desc>,
    /// Scrapes may run at once; one at a time sets and reads the copies below.
    copies: std::sync::Mutex<(IntCounterVec, IntGauge)>,
}

impl SharedCacheCollector {
    fn new(cache: cache::Cache) -> Result<Self, prometheus::Error> {
        let operations = IntCounterVec::new(
            Opts::new(
                "lokivl_shared_cache_operations_total",
                "Shared cache tier (memcached) operations by outcome: hit, miss, stored, error, timeout, skipped (circuit open), incompatible (another version's entry), too_large (kept local).",
            ),
            &["outcome"],
        )?;
        let open = IntGauge::new(
            "lokivl_shared_cache_open_circuits",
            "Shared cache servers skipped now after failing 3 times in a row.",
        )?;
        let descs = prometheus::core::Collector::desc(&operations)
            .into_iter()
            .chain(prometheus::core::Collector::desc(&open))
            .cloned()
            .collect();
        Ok(Self {
            cache,
            descs,
            copies: std::sync::Mutex::new((operations, open)),
        })
    }
}

impl prometheus::core::Collector for SharedCacheCollector {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        let stats = self.cache.shared_stats().unwrap_or_default();
        let copies = self
            .copies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (operations, open) = &*copies;
        for (outcome, value) in stats.outcomes() {
            let c = operations.with_label_values(&[outcome]);
            c.reset();
            c.inc_by(value);
        }
        open.set(i64::try_from(stats.open_circuits).unwrap_or(i64::MAX));
        let mut families = prometheus::core::Collector::collect(operations);
        families.extend(prometheus::core::Collector::collect(open));
        families
    }
}

/// One unit of a gauge, held from [`GaugeUnit::hold`] until dropped, so the
/// gauge is given back however the work it counts ends (answer, error,
/// timeout, a client that left).
pub struct GaugeUnit<'a>(&'a IntGauge);

impl<'a> GaugeUnit<'a> {
    /// Adds one to `g` until the returned value is dropped.
    pub fn hold(g: &'a IntGauge) -> Self {
        g.inc();
        Self(g)
    }
}

impl Drop for GaugeUnit<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_observations() {
        let m = Metrics::new().unwrap();
        m.observe_request("/loki/api/v1/labels", 200, Duration::from_millis(3));
        m.observe_backend(
            "stream_field_names",
            Outcome::Timeout,
            Duration::from_millis(5),
        );
        let text = String::from_utf8(m.render().unwrap()).unwrap();
        assert!(
            text.contains(
                r#"lokivl_http_requests_total{route="/loki/api/v1/labels",status="200"} 1"#
            )
        );
        assert!(text.contains(
            r#"lokivl_backend_requests_total{endpoint="stream_field_names",outcome="timeout"} 1"#
        ));
        assert!(text.contains("lokivl_http_request_duration_seconds_bucket"));
        #[cfg(target_os = "linux")]
        assert!(text.contains("process_resident_memory_bytes "), "{text}");
    }

    #[tokio::test]
    async fn shared_cache_outcomes_are_exported() {
        let m = Metrics::new().unwrap();
        // A port nothing listens on: every operation fails, none fails the caller.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = cache::SharedConfig {
            servers: cache::shared::Servers::parse(&format!("memcached://127.0.0.1:{port}"))
                .unwrap(),
            timeout: Duration::from_millis(500),
            circuit_open: Duration::from_secs(60),
            max_item_bytes: 1 << 20,
            pool_size: 2,
        };
        let lifetimes = cache::Lifetimes {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::ZERO,
            freshness: Duration::from_secs(600),
        };
        let c = cache::Cache::new(cache::Settings { max_bytes: 1 << 20 })
            .with_shared(cache::SharedTier::memcached(&config, lifetimes));
        m.register_shared_cache(c.clone());
        for i in 0..4 {
            let key = cache::CacheKey::new(
                "1:0",
                cache::Encoding::Identity,
                "",
                cache::CredentialFingerprint::none(),
                "/loki/api/v1/labels",
                format!("q={i}"),
            );
            let fetch = async {
                Ok::<_, std::convert::Infallible>(cache::Fetched::new(
                    bytes::Bytes::from_static(b"{}"),
                    Duration::ZERO,
                ))
            };
            let l = c.get_or_fetch(key, fetch).await.unwrap();
            assert_eq!(cache_outcome(l.outcome), "miss");
        }
        let text = String::from_utf8(m.render().unwrap()).unwrap();
        for line in [
            r#"lokivl_shared_cache_operations_total{outcome="error"} 3"#,
            r#"lokivl_shared_cache_operations_total{outcome="skipped"} 1"#,
            r#"lokivl_shared_cache_operations_total{outcome="hit"} 0"#,
            "lokivl_shared_cache_open_circuits 1",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in {text}");
        }
        assert_eq!(cache_outcome(cache::Outcome::SharedHit), "shared_hit");
    }
}
