//! The differential suite with Loki's default label discovery on both sides.
//!
//! Loki 3.7.8 runs with its default `discover_service_name` list and
//! `discover_log_levels: true`, so every stream carries `service_name` and
//! every entry `detected_level`, as Logs Drilldown sees them; lokivl runs
//! with the same defaults (`flags::loki_defaults`) in front of VictoriaLogs,
//! which stores what was pushed and has neither. Both get the dataset of
//! `differential_loki` and the queries of
//! `tests/data/differential_discovery_queries.txt`. With
//! `LOKIVL_RECORD_GOLDEN=1` the live test writes
//! `tests/golden/victorialogs-<release>/differential_discovery/`, which the
//! replay test (run in CI, for every recorded release) checks without servers.

mod common;

use common::backend::{Tap, VL_RELEASES, VictoriaLogs};
use common::differential::{self, DISCOVERY};
use common::loki::Loki;

async fn start_lokivl(backend: &str) -> String {
    common::start_lokivl_with(backend, |s| {
        s.discovery = proxy::drilldown::discovery::flags::loki_defaults();
    })
    .await
}

/// Loki's config with its discovery defaults instead of the suite's `off`.
fn with_discovery(config: String) -> String {
    config
        .replace("  discover_service_name: []\n", "")
        .replace("  discover_log_levels: false\n", "")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_a_real_loki() {
    let Some((loki_bin, vl_bin)) = differential::servers() else {
        return;
    };
    let base_ns = differential::base_ns();
    let (loki, vl) = tokio::join!(
        Loki::start_with(&loki_bin, with_discovery),
        VictoriaLogs::start(&vl_bin)
    );
    let body = common::dataset::push_body(&common::dataset::differential_entries(base_ns));
    loki.push(body.clone()).await;
    vl.ingest(body).await;

    let queries = DISCOVERY.queries();
    let tap = Tap::recording(&vl.url).await;
    let lokivl = start_lokivl(&tap.url).await;
    let (loki_answers, lokivl_answers) =
        differential::ask_both(&loki.url, &lokivl, &queries, base_ns).await;
    DISCOVERY.record_if_asked(&vl_bin, base_ns, &loki_answers, tap.recorded());
    drop(loki);
    drop(vl);
    let verdict = differential::judge(
        &queries,
        &loki_answers,
        &lokivl_answers,
        &DISCOVERY.known_gaps(),
    );
    differential::enforce(&verdict);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_the_recorded_loki() {
    for release in VL_RELEASES {
        let (loki, vl) = DISCOVERY.read_goldens(release);
        let tap = Tap::replaying(vl.exchanges).await;
        let lokivl = start_lokivl(&tap.url).await;
        let queries = DISCOVERY.queries();
        let answers = differential::ask_all(&lokivl, &queries, loki.base_ns).await;
        println!("VictoriaLogs {release}:");
        let verdict =
            differential::judge(&queries, &loki.answers, &answers, &DISCOVERY.known_gaps());
        differential::enforce(&verdict);
    }
}
