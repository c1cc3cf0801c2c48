//! The end-to-end value checks, replayed against recorded VictoriaLogs answers.
//!
//! CI has no VictoriaLogs; this serves the golden responses recorded by
//! `e2e_victorialogs` from a loopback stub, so the same value checks run on
//! every machine. A request the recording lacks fails with a hint to re-record.

mod common;

use common::backend::{self, Tap};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_match_the_recorded_victorialogs_responses() {
    let golden = backend::read_golden().expect(
        "tests/golden/victorialogs.json is missing; record it with \
         LOKIVL_VL_BIN=... LOKIVL_RECORD_GOLDEN=1 cargo test -p proxy --test e2e_victorialogs",
    );
    let tap = Tap::replaying(golden).await;
    let lokivl = common::start_lokivl(&tap.url).await;
    common::checks::run_all(&lokivl).await;
}
