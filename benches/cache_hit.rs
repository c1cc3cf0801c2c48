//! `cache/query_range_hit`: a `query_range` answered by the response cache,
//! measured from routing to response bytes through lokivl's whole router:
//! a hit is answered by the cache-hit front (`proxy::server::hit`) with
//! tenant resolution, admission, security headers, access log and metrics.
//!
//! The Go proxy's cache hit costs 118 µs and 600 allocations because it
//! re-parses the cached answer; lokivl serves the stored bytes as they are.
//!
//! The bench runs on mimalloc, the global allocator of the `lokivl` binary,
//! so it measures what ships (glibc's allocator made a hit about a third
//! slower).

use std::hint::black_box;

use axum::body::Body;
use criterion::{Criterion, criterion_group, criterion_main};
use http::Request;
use http_body_util::BodyExt;
use tower::ServiceExt;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// 100 VictoriaLogs rows in 2025, so the answer is for a closed range.
fn ndjson() -> String {
    (0..100)
        .map(|i| {
            format!(
                r#"{{"_time":"2025-01-15T10:{:02}:{:02}.{i:03}Z","_stream_id":"s","_stream":"{{app=\"api\",env=\"prod\"}}","_msg":"GET /v1/items/{i} 200 {i}ms","app":"api","env":"prod","trace_id":"t{i}"}}"#,
                i / 60,
                i % 60
            ) + "\n"
        })
        .collect()
}

fn cache_hit(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let body = ndjson();
    let addr = rt.block_on(async move {
        let app = axum::Router::new().fallback(move || {
            let body = body.clone();
            async move { body }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake VictoriaLogs");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        addr
    });
    let settings = proxy::config::Settings::new(&format!("http://{addr}")).expect("settings");
    let router = proxy::app::router(settings).expect("router");
    let uri = "/loki/api/v1/query_range?query=%7Bapp%3D%22api%22%7D\
               &start=1736935000000000000&end=1736938600000000000&limit=100&direction=backward";
    let request = || {
        Request::get(uri)
            .header("x-loki-response-encoding-flags", "categorize-labels")
            .body(Body::empty())
            .expect("request")
    };
    let fetch = || {
        rt.block_on(async {
            router
                .clone()
                .oneshot(request())
                .await
                .expect("infallible")
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes()
        })
    };
    // The first request misses and fills the entry; every later one is a hit.
    let first = fetch();
    assert!(first.len() > 10_000, "a real answer: {} bytes", first.len());
    c.bench_function("cache/query_range_hit", |b| {
        b.iter(|| {
            let bytes = fetch();
            debug_assert_eq!(bytes, first);
            black_box(bytes)
        })
    });
}

criterion_group!(benches, cache_hit);
criterion_main!(benches);
