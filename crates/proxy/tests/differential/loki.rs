//! Differential suite against a real Loki and a real VictoriaLogs.
//!
//! Starts Loki (`LOKIVL_LOKI_BIN` or `loki` on PATH) and VictoriaLogs
//! (`LOKIVL_VL_BIN` or `victoria-logs` on PATH) on loopback, pushes the same
//! dataset into both (one test per dataset of `support::realistic`: the
//! current one with `tests/data/differential_queries.txt`, stream labels only
//! and OTel with `differential_realistic_queries.txt`), asks Loki and lokivl (in front of VictoriaLogs through
//! the recording tap) every query of `tests/data/differential_queries.txt`
//! and compares the answers value by value, for the default set-up and for
//! split windows (`support::variants`), and checks that a refreshed metric
//! query reuses closed windows. With `LOKIVL_RECORD_GOLDEN=1` it writes
//! `tests/golden/victorialogs-<release>/differential[-<dataset>]/{loki,victorialogs}.json`
//! for the VictoriaLogs release under test, which `differential_replay`
//! uses in CI. Without both binaries it skips with one
//! line.

use crate::support;

use crate::support::differential::{self, MAIN, MAIN_OTEL, MAIN_STREAM_LABELS, Suite};
use crate::support::suite_run::{self, Setup};

fn setup(suite: Suite) -> Setup {
    Setup {
        suite,
        loki: |config| config,
        lokivl: |_| {},
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_a_real_loki() {
    suite_run::live(setup(MAIN)).await;
}

/// The stream-labels-only dataset (Promtail, Alloy, Fluent Bit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_a_real_loki_stream_labels() {
    suite_run::live(setup(MAIN_STREAM_LABELS)).await;
}

/// The OTel dataset (OTLP to both servers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_a_real_loki_otel() {
    suite_run::live(setup(MAIN_OTEL)).await;
}

/// Writes the dataset's push body (base: see [`base_ns`]) to `LOKIVL_DIFF_DUMP`,
/// for manual checks such as logcli against lokivl and Loki side by side:
/// `LOKIVL_DIFF_DUMP=/tmp/body.json cargo test -p proxy --test
/// differential_loki -- --ignored dump_dataset`.
#[test]
#[ignore = "manual helper: writes the dataset push body to LOKIVL_DIFF_DUMP"]
fn dump_dataset() {
    let Some(path) = std::env::var_os("LOKIVL_DIFF_DUMP") else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: set LOKIVL_DIFF_DUMP to a file path\n"),
        );
        return;
    };
    let base_ns = differential::base_ns();
    let body = support::dataset::push_body(&support::dataset::differential_entries(base_ns));
    std::fs::write(&path, body).expect("write the push body");
    println!("base_ns {base_ns}");
}
