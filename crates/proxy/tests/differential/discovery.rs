//! The differential suite with Loki's default label discovery on both sides.
//!
//! Loki 3.7.8 runs with its default `discover_service_name` list and
//! `discover_log_levels: true`, so every stream carries `service_name` and
//! every entry `detected_level`, as Logs Drilldown sees them; lokivl runs
//! with the same defaults (`flags::loki_defaults`) in front of VictoriaLogs,
//! which stores what was pushed and has neither. Both get each dataset of
//! `support::realistic` (one test each) and the queries of
//! `tests/data/differential_discovery_queries.txt`, and lokivl is also asked
//! through split and live windows and with the cache off. With
//! `LOKIVL_RECORD_GOLDEN=1` the live test writes
//! `tests/golden/victorialogs-<release>/differential_discovery[-<dataset>]/`, which the
//! replay test (run in CI, for every recorded release) checks without servers.

use crate::support::differential::{DISCOVERY, DISCOVERY_OTEL, DISCOVERY_STREAM_LABELS, Suite};
use crate::support::suite_run::{self, Setup};

/// Loki's config with its discovery defaults instead of the suite's `off`.
fn with_discovery(config: String) -> String {
    config
        .replace("  discover_service_name: []\n", "")
        .replace("  discover_log_levels: false\n", "")
}

fn setup(suite: Suite) -> Setup {
    Setup {
        suite,
        loki: with_discovery,
        lokivl: |s| s.discovery = engine::discovery::loki_defaults(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_a_real_loki() {
    suite_run::live(setup(DISCOVERY)).await;
}

/// The stream-labels-only dataset: every `service_name` and
/// `detected_level` is discovered, none is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_a_real_loki_stream_labels() {
    suite_run::live(setup(DISCOVERY_STREAM_LABELS)).await;
}

/// The OTel dataset: `service.name` and severity fields as OTLP stores them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_a_real_loki_otel() {
    suite_run::live(setup(DISCOVERY_OTEL)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_the_recorded_loki() {
    suite_run::replay(setup(DISCOVERY)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_the_recorded_loki_stream_labels() {
    suite_run::replay(setup(DISCOVERY_STREAM_LABELS)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_answers_like_the_recorded_loki_otel() {
    suite_run::replay(setup(DISCOVERY_OTEL)).await;
}
