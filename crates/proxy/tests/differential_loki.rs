//! Differential suite against a real Loki and a real VictoriaLogs.
//!
//! Starts Loki (`LOKIVL_LOKI_BIN` or `loki` on PATH) and VictoriaLogs
//! (`LOKIVL_VL_BIN` or `victoria-logs` on PATH) on loopback, pushes the same
//! dataset into both, asks Loki and lokivl (in front of VictoriaLogs through
//! the recording tap) every query of `tests/data/differential_queries.txt`
//! and compares the answers value by value, for the default set-up and for
//! split windows (`common::variants`), and checks that a refreshed metric
//! query reuses closed windows. With `LOKIVL_RECORD_GOLDEN=1` it writes
//! `tests/golden/victorialogs-<release>/differential/{loki,victorialogs}.json`
//! for the VictoriaLogs release under test, which `differential_replay`
//! uses in CI. Without both binaries it skips with one
//! line.

mod common;

use common::backend::{Tap, VictoriaLogs};
use common::differential;
use common::loki::Loki;
use common::variants;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_a_real_loki() {
    let Some((loki_bin, vl_bin)) = differential::servers() else {
        return;
    };
    // Loki in this set-up only answers for recent data: the dataset starts
    // about two hours ago, and the golden files keep the base.
    let base_ns = differential::base_ns();

    let (loki, vl) = tokio::join!(Loki::start(&loki_bin), VictoriaLogs::start(&vl_bin));
    let body = common::dataset::push_body(&common::dataset::differential_entries(base_ns));
    loki.push(body.clone()).await;
    vl.ingest(body).await;

    let queries = differential::MAIN.queries();
    let tap = Tap::recording(&vl.url).await;
    let lokivl = common::start_lokivl(&tap.url).await;
    let (loki_answers, lokivl_answers) =
        differential::ask_both(&loki.url, &lokivl, &queries, base_ns).await;
    let windowed = variants::ask_all(&tap.url, &queries, base_ns).await;
    let refresh = variants::refresh_failures(&tap, &queries, &loki_answers, base_ns).await;

    differential::MAIN.record_if_asked(&vl_bin, base_ns, &loki_answers, tap.recorded());
    drop(loki);
    drop(vl);
    let gaps = differential::MAIN.known_gaps();
    let mut verdict = differential::judge(&queries, &loki_answers, &lokivl_answers, &gaps);
    verdict.failures.extend(variants::failures(
        &queries,
        &loki_answers,
        &windowed,
        &gaps,
    ));
    verdict.failures.extend(refresh);
    differential::enforce(&verdict);
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
    let body = common::dataset::push_body(&common::dataset::differential_entries(base_ns));
    std::fs::write(&path, body).expect("write the push body");
    println!("base_ns {base_ns}");
}
