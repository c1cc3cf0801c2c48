//! `window/*`: what a long log range costs per window once the windows are
//! in the cache (the usual case under load: the middle windows of a range
//! are shared across requests).
//!
//! - `read_copy`: the stored bytes decoded into a `LogAnswer` of its own
//!   (`LogAnswer::from_bytes`), what the merge used to do for every hit.
//! - `read_in_place`: the bytes checked and viewed where they lie
//!   (`StoredLog::new` + `view`), what it does now.
//! - `merge_4`: four such windows merged into the first 5,000 entries.
//!
//! Windows look like loki-bench's `{app="api-gateway"}` answers: 5,000
//! entries in 50 streams of 19 labels, JSON lines of about 250 bytes.
//! Runs on mimalloc, the allocator the `lokivl` binary ships with.

use std::hint::black_box;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use engine::answer::{LogAnswer, StoredLog, StoredView};
use engine::direction::Direction;
use proxy::window::merge::merge;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ENTRIES: usize = 5_000;
const STREAMS: usize = 50;

/// One window's stored answer: hour `w` (a larger `w` is newer).
fn window(w: i64) -> Bytes {
    let mut a = LogAnswer::new(false);
    let per = ENTRIES / STREAMS;
    for s in 0..STREAMS {
        a.begin_stream();
        for l in 0..19 {
            a.push_stream_label(&format!("label_{l:02}"), &format!("value-{s}-{l}"));
        }
        for i in 0..per {
            let ts = (w * 3_600 + (per - i) as i64) * 1_000_000_000 + s as i64;
            a.push_entry(
                ts,
                &format!(
                    r#"{{"ts":"2026-11-28T10:00:{i:02}Z","level":"info","msg":"request done","method":"GET","path":"/api/v1/orders/{i}","status":200,"latency_ms":{s},"bytes":1234,"trace_id":"0123456789abcdef0123456789abcdef"}}"#
                ),
            );
        }
    }
    a.to_bytes()
}

fn bench(c: &mut Criterion) {
    let stored = window(4);
    let mut g = c.benchmark_group("window");
    g.throughput(Throughput::Bytes(stored.len() as u64));
    g.bench_function("read_copy_5000", |b| {
        b.iter(|| black_box(LogAnswer::from_bytes(black_box(&stored))));
    });
    g.bench_function("read_in_place_5000", |b| {
        b.iter(|| {
            let log = StoredLog::new(black_box(stored.clone()));
            black_box(log.map(|l| l.view().map(|v| v.len())))
        });
    });
    let windows: Vec<StoredLog> = (0..4)
        .rev()
        .filter_map(|w| StoredLog::new(window(w)).ok())
        .collect();
    g.bench_function("merge_4x5000_limit_5000", |b| {
        b.iter_batched(
            || (),
            |()| {
                let views: Vec<StoredView<'_>> =
                    windows.iter().filter_map(|w| w.view().ok()).collect();
                black_box(merge(&views, ENTRIES, Direction::Backward, false))
            },
            BatchSize::SmallInput,
        );
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
