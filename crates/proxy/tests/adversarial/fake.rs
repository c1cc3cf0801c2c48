//! The kit's fake VictoriaLogs as every adversarial case starts it: `/health`,
//! row queries answered from a dataset that honours `start`, `end` and the
//! row limits lokivl asks for (per VictoriaLogs tenant; one account can be
//! made slow or queries made to fail), empty answers on the other select
//! endpoints, the offset probe answered as by a server without entries, and
//! a `/select/logsql/tail` whose behaviour the case chooses (silent until it
//! sets one: flooding, or one endless line).

use crate::support::fake_vl::{Dataset, FakeVl, Recorded, Tail};

/// Starts the fake, serving `rows` to every tenant, every call recorded.
pub(crate) async fn start(rows: Dataset) -> FakeVl {
    start_with(rows, true).await
}

/// Like [`start`]; `record` keeps every call for [`calls`] (off for cases
/// that make hundreds of thousands of calls).
pub(crate) async fn start_with(rows: Dataset, record: bool) -> FakeVl {
    FakeVl::builder()
        .rows(rows)
        .tail(Tail::Silent)
        .probe("")
        .recording(record)
        .start()
        .await
}

/// Recorded calls other than `/health` (which `/ready` makes all along).
pub(crate) fn calls(fake: &FakeVl) -> usize {
    fake.count(|r: &Recorded| r.path != "/health")
}
