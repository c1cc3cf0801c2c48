//! The end-to-end value checks, replayed against recorded VictoriaLogs answers.
//!
//! This serves the golden responses recorded by `e2e_victorialogs` from a
//! loopback stub, once per recorded VictoriaLogs release
//! ([`backend::VL_RELEASES`]), so the same value checks run on every
//! machine against each release's answers. A request the recording lacks
//! fails with a hint to re-record.

use crate::support;

use crate::support::backend::{self, Tap};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_match_the_recorded_victorialogs_responses() {
    for release in backend::VL_RELEASES {
        let golden = backend::read_golden(release).unwrap_or_else(|| {
            panic!(
                "{} is missing; record it with LOKIVL_VL_BIN=<VictoriaLogs {release}> \
                 LOKIVL_RECORD_GOLDEN=1 cargo test -p proxy --test e2e victorialogs::",
                backend::golden_path(release).display()
            )
        });
        let tap = Tap::replaying(golden).await;
        let lokivl = support::start_lokivl(&tap.url).await;
        println!("replaying VictoriaLogs {release}");
        support::checks::run_all(&lokivl).await;
    }
}
