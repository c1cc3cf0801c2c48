//! One differential suite on one dataset, live and replayed: the steps the
//! main and discovery suites share.
//!
//! Live: start Loki and VictoriaLogs, push the suite's dataset to both (each
//! through its shipper's endpoint), ask Loki and lokivl every query, then
//! every lokivl variant (split and live windows, cache off) and a refreshed
//! metric query through cached windows; record the goldens when asked.
//! Replay: the same against every recorded release without servers, or
//! with `LOKIVL_RECORD_GOLDEN=missing` a top-up of one release's
//! VictoriaLogs exchanges (see [`super::topup`]).

use super::backend::{Tap, VictoriaLogs};
use super::differential::{self, Suite};
use super::loki::Loki;
use super::topup;
use super::variants;

/// A suite with the settings both servers run with.
#[derive(Clone, Copy)]
pub struct Setup {
    pub suite: Suite,
    /// Edits Loki's rendered config (discovery on, …).
    pub loki: fn(String) -> String,
    /// Tunes lokivl's settings (discovery on, …), before any variant's.
    pub lokivl: fn(&mut proxy::config::Settings),
}

/// The live run; skips with one line without both binaries.
pub async fn live(setup: Setup) {
    let Some((loki_bin, vl_bin)) = topup::servers() else {
        return;
    };
    let suite = setup.suite;
    // Loki in this set-up only answers for recent data: the dataset starts
    // about two hours ago, and the golden files keep the base.
    let base_ns = differential::base_ns();
    let (loki, vl) = tokio::join!(
        Loki::start_with(&loki_bin, setup.loki),
        VictoriaLogs::start(&vl_bin)
    );
    suite.dataset.push(base_ns, &loki, &vl).await;

    let queries = suite.queries();
    let tap = Tap::recording(&vl.url).await;
    let lokivl = super::start_lokivl_with(&tap.url, setup.lokivl).await;
    let (loki_answers, lokivl_answers) =
        differential::ask_both(&loki.url, &lokivl, &queries, base_ns).await;
    let windowed = variants::ask_all_on(&tap.url, &queries, base_ns, setup.lokivl).await;
    let refresh =
        variants::refresh_failures_on(&tap, &queries, &loki_answers, base_ns, setup.lokivl).await;
    suite.record_if_asked(&vl_bin, base_ns, &loki_answers, tap.recorded());
    drop(loki);
    drop(vl);
    println!("dataset {}:", suite.dataset.name());
    let gaps = suite.known_gaps(&super::backend::release_of(&vl_bin));
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

/// The replay against every recorded VictoriaLogs release; in a top-up run
/// against the binary's release only, topping up its exchanges.
pub async fn replay(setup: Setup) {
    let suite = setup.suite;
    // Every release is judged before the test fails, so one run lists the
    // differences of all of them.
    let mut all = differential::Verdict {
        report: String::new(),
        failures: Vec::new(),
    };
    for release in topup::releases() {
        let (loki, vl) = suite.read_goldens(release);
        let push = async |s: &VictoriaLogs| suite.dataset.push_victorialogs(vl.base_ns, s).await;
        let source = topup::Source::open(release, vl.exchanges, push).await;
        let tap = &source.tap;
        let lokivl = super::start_lokivl_with(&tap.url, setup.lokivl).await;
        let queries = suite.queries();
        let answers = differential::ask_all(&lokivl, &queries, loki.base_ns).await;
        let windowed = variants::ask_all_on(&tap.url, &queries, loki.base_ns, setup.lokivl).await;
        let refresh =
            variants::refresh_failures_on(tap, &queries, &loki.answers, loki.base_ns, setup.lokivl)
                .await;
        source.finish(&suite.vl_golden_path(release), Some(vl.base_ns), true);
        let gaps = suite.known_gaps(release);
        println!("VictoriaLogs {release}, dataset {}:", suite.dataset.name());
        let mut verdict = differential::judge(&queries, &loki.answers, &answers, &gaps);
        verdict.failures.extend(variants::failures(
            &queries,
            &loki.answers,
            &windowed,
            &gaps,
        ));
        verdict.failures.extend(refresh);
        println!("{}", verdict.report);
        all.failures.extend(
            verdict
                .failures
                .into_iter()
                .map(|f| format!("{release}: {f}")),
        );
    }
    differential::enforce(&all);
}
