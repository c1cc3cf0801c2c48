//! The canned mode: each path answered with a canned body (status, delay),
//! every request recorded, so a test can assert both lokivl's answer and the
//! exact requests it sent upstream. [`harness`] puts lokivl in front.

use std::time::Duration;

use axum::http::StatusCode;

use super::FakeVl;
use crate::support::lokivl::start_proxy;

/// A canned answer for one VictoriaLogs path.
#[derive(Debug, Clone)]
pub struct Canned {
    pub status: StatusCode,
    pub body: String,
    pub delay: Duration,
}

impl Canned {
    pub fn ok(body: &str) -> Self {
        Self {
            status: StatusCode::OK,
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }
}

/// The answer of VictoriaLogs v1.26 to lokivl's time-bucket offset probe
/// (`proxy::backend::dialect::PROBE`): a bucket starting at 1 (mod 3 ns).
pub const PROBE_V126: &str = "{\"_time\":\"1970-01-01T00:00:00.000000001Z\",\"n\":\"1\"}\n";
/// The answer of VictoriaLogs v1.51 to the probe: a bucket starting at 2 (mod 3 ns).
pub const PROBE_V151: &str = "{\"_time\":\"1970-01-01T00:00:00.000000002Z\",\"n\":\"1\"}\n";

/// Starts a fake VictoriaLogs answering `answers` (path → canned answer);
/// it answers the offset probe as VictoriaLogs v1.26 does.
pub async fn fake_vl(answers: Vec<(&str, Canned)>) -> FakeVl {
    fake_vl_release(answers, PROBE_V126).await
}

/// [`fake_vl`] answering the offset probe with `probe` ([`PROBE_V126`],
/// [`PROBE_V151`], or `""` for a server without entries).
pub async fn fake_vl_release(answers: Vec<(&str, Canned)>, probe: &str) -> FakeVl {
    FakeVl::builder()
        .answers(answers)
        .probe(probe)
        .start()
        .await
}

/// A fake VictoriaLogs plus lokivl in front of it.
pub struct Harness {
    pub base: String,
    pub vl: FakeVl,
}

pub async fn harness(answers: Vec<(&str, Canned)>) -> Harness {
    harness_release(answers, PROBE_V126).await
}

/// [`harness`] with the fake answering the offset probe with `probe` (see [`fake_vl_release`]).
pub async fn harness_release(answers: Vec<(&str, Canned)>, probe: &str) -> Harness {
    let vl = fake_vl_release(answers, probe).await;
    let settings = proxy::config::Settings::new(&vl.url).unwrap();
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

/// [`harness`] for a lokivl with Loki's default label discovery (the
/// binary's defaults; `Settings::new` synthesizes nothing), as Logs
/// Drilldown users run it.
pub async fn harness_discovering(answers: Vec<(&str, Canned)>) -> Harness {
    let vl = fake_vl_release(answers, PROBE_V126).await;
    let mut settings = proxy::config::Settings::new(&vl.url).unwrap();
    settings.discovery = engine::discovery::loki_defaults();
    let base = start_proxy(settings).await;
    Harness { base, vl }
}

/// The nanosecond timestamps every query test uses: 2026-08-22T10:00:00Z and one hour before.
pub const START_NS: i64 = 1_787_389_200_000_000_000;
pub const END_NS: i64 = 1_787_392_800_000_000_000;
