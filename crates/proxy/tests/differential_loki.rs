//! Differential suite against a real Loki and a real VictoriaLogs.
//!
//! Starts Loki (`LOKIVL_LOKI_BIN` or `loki` on PATH) and VictoriaLogs
//! (`LOKIVL_VL_BIN` or `victoria-logs` on PATH) on loopback, pushes the same
//! dataset into both, asks Loki and lokivl (in front of VictoriaLogs through
//! the recording tap) every query of `tests/data/differential_queries.txt`
//! and compares the answers value by value, for the default set-up and for
//! split windows (`common::variants`), and checks that a refreshed metric
//! query reuses closed windows. With `LOKIVL_RECORD_GOLDEN=1` it
//! writes `tests/golden/differential/{loki,victorialogs}.json`, which
//! `differential_replay` uses in CI. Without both binaries it skips with one
//! line.

mod common;

use common::backend::{self, Tap, VictoriaLogs};
use common::differential::{self, LokiGolden, VlGolden};
use common::loki::{self, Loki};
use common::variants;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_a_real_loki() {
    let loki_bin = loki::find_loki_binary();
    let vl_bin = backend::find_vl_binary();
    let (Some(loki_bin), Some(vl_bin)) = (loki_bin.clone(), vl_bin.clone()) else {
        let mut missing = Vec::new();
        if loki_bin.is_none() {
            missing.push("Loki (set LOKIVL_LOKI_BIN or put loki on PATH)");
        }
        if vl_bin.is_none() {
            missing.push("VictoriaLogs (set LOKIVL_VL_BIN or put victoria-logs on PATH)");
        }
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: missing {}\n", missing.join(" and ")),
        );
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
    let loki_answers = differential::ask_all(&loki.url, &queries, base_ns).await;

    let tap = Tap::recording(&vl.url).await;
    let lokivl = common::start_lokivl(&tap.url).await;
    let lokivl_answers = differential::ask_all(&lokivl, &queries, base_ns).await;
    let loki_answers = differential::settle_random_picks(
        &loki.url,
        &queries,
        loki_answers,
        &lokivl_answers,
        base_ns,
    )
    .await;
    let windowed = variants::ask_all(&tap.url, &queries, base_ns).await;
    let refresh = variants::refresh_failures(&tap, &queries, &loki_answers, base_ns).await;

    // Record even when comparisons fail: the golden files hold the servers' data.
    if std::env::var_os("LOKIVL_RECORD_GOLDEN").is_some() {
        differential::MAIN.write_goldens(
            &LokiGolden {
                base_ns,
                answers: loki_answers.clone(),
            },
            &VlGolden {
                base_ns,
                exchanges: tap.recorded(),
            },
        );
        println!(
            "recorded {} and {}",
            differential::MAIN.loki_golden_path().display(),
            differential::MAIN.vl_golden_path().display()
        );
    }
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
