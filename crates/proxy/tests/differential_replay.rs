//! The differential suite replayed from golden files, for CI.
//!
//! For each recorded VictoriaLogs release, serves the exchanges recorded by
//! `differential_loki` from a loopback tap, asks lokivl every query with the recorded dataset base
//! time, and compares with Loki's recorded answers value by value, against
//! the same known-gaps list; also through split windows, and a refreshed
//! metric query against the cache of closed windows.

mod common;

use common::backend::{Tap, VL_RELEASES};
use common::differential;
use common::variants;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lokivl_answers_like_the_recorded_loki() {
    for release in VL_RELEASES {
        let (loki, vl) = differential::MAIN.read_goldens(release);
        let tap = Tap::replaying(vl.exchanges).await;
        let lokivl = common::start_lokivl(&tap.url).await;
        let queries = differential::MAIN.queries();
        let answers = differential::ask_all(&lokivl, &queries, loki.base_ns).await;
        let windowed = variants::ask_all(&tap.url, &queries, loki.base_ns).await;
        let refresh = variants::refresh_failures(&tap, &queries, &loki.answers, loki.base_ns).await;
        let gaps = differential::MAIN.known_gaps();
        println!("VictoriaLogs {release}:");
        let mut verdict = differential::judge(&queries, &loki.answers, &answers, &gaps);
        verdict.failures.extend(variants::failures(
            &queries,
            &loki.answers,
            &windowed,
            &gaps,
        ));
        verdict.failures.extend(refresh);
        differential::enforce(&verdict);
    }
}
