//! The end-to-end value checks, replayed against recorded VictoriaLogs answers.
//!
//! This serves the golden responses recorded by `e2e_victorialogs` from a
//! loopback stub, once per recorded VictoriaLogs release
//! ([`backend::VL_RELEASES`]), so the same value checks run on every
//! machine against each release's answers. A request the recording lacks
//! fails with a hint to top up; with `LOKIVL_RECORD_GOLDEN=missing` and
//! `LOKIVL_VL_BIN`, that release's file is topped up (`support::topup`).

use crate::support;

use crate::support::backend::{self, VictoriaLogs};
use crate::support::topup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_match_the_recorded_victorialogs_responses() {
    for release in topup::releases() {
        let golden = backend::read_golden(release).unwrap_or_else(|| {
            panic!(
                "{} is missing; record it with LOKIVL_VL_BIN=<VictoriaLogs {release}> \
                 LOKIVL_RECORD_GOLDEN=1 cargo test -p proxy --test e2e victorialogs::",
                backend::golden_path(release).display()
            )
        });
        let push = async |s: &VictoriaLogs| {
            s.ingest(support::dataset::push_body(&support::dataset::entries()))
                .await
        };
        let source = topup::Source::open(release, golden, push).await;
        let lokivl = support::start_lokivl(&source.tap.url).await;
        println!("replaying VictoriaLogs {release}");
        // A failing check stops the run: the top-up then drops nothing.
        let outcome = tokio::spawn(async move { support::checks::run_all(&lokivl).await }).await;
        source.finish(&backend::golden_path(release), None, outcome.is_ok());
        if let Err(e) = outcome {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}
