//! End-to-end checks against a real VictoriaLogs.
//!
//! Starts the binary from `LOKIVL_VL_BIN` (or `victoria-logs` on PATH) on a
//! free loopback port, ingests the dataset through VictoriaLogs' Loki push
//! endpoint with messages kept raw, and checks lokivl's answers value by
//! value. With `LOKIVL_RECORD_GOLDEN=1` it rewrites the golden file of the
//! binary's release (`tests/golden/victorialogs-<release>/e2e/`) that
//! `golden_replay` serves in CI (with `LOKIVL_RECORD_GOLDEN=missing` this
//! test skips and `golden_replay` tops that file up instead). Without a
//! binary it skips with one line.

use crate::support;

use crate::support::backend::{self, Tap, VictoriaLogs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_match_the_data_in_a_real_victorialogs() {
    if support::topup::live_skips() {
        return;
    }
    let Some(bin) = backend::find_vl_binary() else {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!(
                "skipped: no VictoriaLogs binary (set LOKIVL_VL_BIN or put victoria-logs on PATH)\n"
            ),
        );
        return;
    };
    let vl = VictoriaLogs::start(&bin).await;
    vl.ingest(support::dataset::push_body(&support::dataset::entries()))
        .await;

    let tap = Tap::recording(&vl.url).await;
    let lokivl = support::start_lokivl(&tap.url).await;
    // Record what VictoriaLogs answered even when a check fails: the golden
    // file holds VictoriaLogs' data, not lokivl's verdicts.
    let outcome = tokio::spawn(async move { support::checks::run_all(&lokivl).await }).await;
    if support::topup::records_whole() {
        let release = backend::release_of(&bin);
        backend::write_golden(&release, &tap.recorded());
        println!("recorded {}", backend::golden_path(&release).display());
    }
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}
