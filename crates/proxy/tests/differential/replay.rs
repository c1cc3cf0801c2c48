//! The differential suite replayed from golden files, for CI.
//!
//! For each recorded VictoriaLogs release, serves the exchanges recorded by
//! `differential_loki` (one test per dataset) from a loopback tap, asks lokivl every query with the recorded dataset base
//! time, and compares with Loki's recorded answers value by value, against
//! the same known-gaps list; also through split windows, and a refreshed
//! metric query against the cache of closed windows.

use crate::support::differential::{MAIN, MAIN_OTEL, MAIN_STREAM_LABELS, Suite};
use crate::support::suite_run::{self, Setup};

fn setup(suite: Suite) -> Setup {
    Setup {
        suite,
        loki: |config| config,
        lokivl: |_| {},
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_the_recorded_loki() {
    suite_run::replay(setup(MAIN)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_the_recorded_loki_stream_labels() {
    suite_run::replay(setup(MAIN_STREAM_LABELS)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_the_recorded_loki_otel() {
    suite_run::replay(setup(MAIN_OTEL)).await;
}
