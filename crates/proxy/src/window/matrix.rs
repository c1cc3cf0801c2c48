//! Evaluating the windows of one metric `query_range`: a few in parallel,
//! each through the byte cache as a typed matrix, concatenated into the
//! request's grid.
//!
//! Every step is evaluated by the same engine as an unsplit query, over the
//! same logs, so the concatenation is the unsplit answer: same series, same
//! timestamps, same values. The handler sorts the merged series and checks
//! the series limit, as for an unsplit query.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use cache::{CacheKey, Encoding};

use super::WindowContext;
use super::extent;
use super::fill;
use super::metric_split::MetricWindow;
use super::task::WindowTask;
use crate::context::RequestContext;
use crate::error::ApiError;
use engine::answer::matrix_codec;
use engine::metric::{Grid, Labels, Matrix, Point, Series};

/// The cache label of metric window entries in `lokivl_cache_requests_total`.
const METRIC_WINDOW_ENDPOINT: &str = "query_range_metric_window";
/// The key route of metric window entries (never a real path).
const METRIC_WINDOW_ROUTE: &str = "/loki/api/v1/query_range#metric-window";

/// Everything besides the steps that makes two metric windows answer differently.
#[derive(Debug, Clone)]
pub struct MetricWindowQuery {
    /// The query in Loki's canonical printing.
    pub query: String,
    /// The request's context (tenant, credentials, discovery, limits): part
    /// of the key, and what the windows are evaluated under.
    pub request: RequestContext,
}

/// Evaluates `windows` with `eval` (which answers the series of the query
/// over one window's steps) and returns the series over `grid`: steps of
/// closed windows outside the request are dropped, and series without a
/// step in the request are left out.
///
/// Live windows keep their steps at or before `closed_before` (the same
/// bound that closes windows) as an [`extent`] and evaluate only the steps
/// after it.
///
/// # Errors
/// The first failing window's error.
pub async fn run<F, Fut>(
    ctx: &WindowContext,
    q: &MetricWindowQuery,
    grid: Grid,
    windows: Vec<MetricWindow>,
    closed_before: i64,
    eval: F,
) -> Result<Matrix, ApiError>
where
    F: Fn(RequestContext, Grid) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Matrix, ApiError>> + Send + 'static,
{
    let eval = Arc::new(eval);
    let q = Arc::new(q.clone());
    let mut pending = windows.into_iter();
    let mut inflight: VecDeque<(Grid, WindowTask<Result<Matrix, ApiError>>)> = VecDeque::new();
    let mut merged = Merged::new(grid);
    let result = loop {
        while inflight.len() < ctx.settings.parallelism {
            let Some(w) = pending.next() else { break };
            let task = spawn_window(ctx, &q, w, closed_before, Arc::clone(&eval));
            inflight.push_back((w.grid, task));
        }
        let Some((wgrid, next)) = inflight.pop_front() else {
            break Ok(());
        };
        match next.await {
            Ok(Ok(m)) => merged.push(&wgrid, m),
            Ok(Err(e)) => break Err(e),
            Err(e) => break Err(ApiError::Internal(format!("window task failed: {e}"))),
        }
    };
    // On an error the other windows are not needed: dropping them stops them.
    drop(inflight);
    result?;
    Ok(merged.finish())
}

fn spawn_window<F, Fut>(
    ctx: &WindowContext,
    q: &Arc<MetricWindowQuery>,
    w: MetricWindow,
    closed_before: i64,
    eval: Arc<F>,
) -> WindowTask<Result<Matrix, ApiError>>
where
    F: Fn(RequestContext, Grid) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Matrix, ApiError>> + Send + 'static,
{
    let ctx = ctx.clone();
    let q = Arc::clone(q);
    let task = async move {
        if !w.closed {
            // The held steps from the extent, the fresh tail evaluated (and
            // shared with identical refreshes in flight).
            let tail = |g: Grid| cached(&ctx, &q, g, ctx.lifetimes.live_ttl, Arc::clone(&eval));
            return extent::assemble(&ctx, &q, w.grid, Some(closed_before), tail).await;
        }
        let key = window_key(&q, w.grid);
        let fill = || {
            let (ctx, q, eval) = (ctx.clone(), Arc::clone(&q), Arc::clone(&eval));
            async move {
                // A window that just closed still has its extent: only the
                // steps after it are evaluated.
                let tail = |g: Grid| eval(q.request.clone(), g);
                let m = extent::assemble(&ctx, &q, w.grid, None, tail).await?;
                Ok(encode(&m))
            }
        };
        let body = fill::cached(&ctx, METRIC_WINDOW_ENDPOINT, key, ctx.lifetimes.ttl, fill).await?;
        decode(&body)
    };
    WindowTask::spawn(task)
}

/// The series of `eval` over `g` through the byte cache, kept for `ttl`.
async fn cached<F, Fut>(
    ctx: &WindowContext,
    q: &Arc<MetricWindowQuery>,
    g: Grid,
    ttl: std::time::Duration,
    eval: Arc<F>,
) -> Result<Matrix, ApiError>
where
    F: Fn(RequestContext, Grid) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Matrix, ApiError>> + Send + 'static,
{
    let fill = || {
        // The evaluation gets the request's context by value.
        let matrix = eval(q.request.clone(), g);
        async move { Ok(encode(&matrix.await?)) }
    };
    let body = fill::cached(ctx, METRIC_WINDOW_ENDPOINT, window_key(q, g), ttl, fill).await?;
    decode(&body)
}

fn encode(m: &Matrix) -> Bytes {
    let mut out = Vec::new();
    matrix_codec::encode(m, &mut out);
    Bytes::from(out)
}

fn decode(body: &[u8]) -> Result<Matrix, ApiError> {
    matrix_codec::decode(body).map_err(|e| ApiError::Internal(e.to_string()))
}

/// The cache key of one metric window: the tenant, the credentials, the
/// query and the window's steps.
fn window_key(q: &MetricWindowQuery, g: Grid) -> CacheKey {
    CacheKey::new(
        q.request.cache_scope(),
        Encoding::Identity,
        "",
        q.request.credentials(),
        METRIC_WINDOW_ROUTE,
        format!("{}\n{}\n{}\n{}", q.query, g.step, g.start, g.len),
    )
}

/// Series of the request grid, filled window by window in time order.
pub(super) struct Merged {
    grid: Grid,
    index: std::collections::HashMap<Labels, usize, foldhash::fast::RandomState>,
    series: Matrix,
}

impl Merged {
    pub(super) fn new(grid: Grid) -> Self {
        Self {
            grid,
            index: std::collections::HashMap::default(),
            series: Vec::new(),
        }
    }

    /// Adds one window's series; windows come oldest first and never overlap,
    /// so points stay ascending.
    pub(super) fn push(&mut self, wgrid: &Grid, m: Matrix) {
        let (first, last) = (self.grid.start, self.grid.last());
        for s in m {
            let mut points = s.points.iter().filter_map(|p| {
                let t = wgrid.time(p.step);
                (first..=last).contains(&t).then(|| Point {
                    step: u32::try_from((t - first) / self.grid.step).unwrap_or(u32::MAX),
                    v: p.v,
                })
            });
            let Some(p0) = points.next() else { continue };
            let i = match self.index.get(&s.labels) {
                Some(&i) => i,
                None => {
                    self.index.insert(s.labels.clone(), self.series.len());
                    self.series.push(Series {
                        labels: s.labels,
                        points: Vec::new(),
                    });
                    self.series.len() - 1
                }
            };
            let dst = &mut self.series[i].points;
            dst.push(p0);
            dst.extend(points);
        }
    }

    pub(super) fn finish(self) -> Matrix {
        self.series
    }
}

#[cfg(test)]
mod tests {
    use cache::CredentialFingerprint;

    use super::*;

    fn series(labels: &[(&str, &str)], points: &[(u32, f64)]) -> Series {
        Series {
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            points: points.iter().map(|&(step, v)| Point { step, v }).collect(),
        }
    }

    #[test]
    fn merge_rebases_steps_and_drops_steps_outside_the_request() {
        // Request steps 30..=150 every 10; windows [0, 100) and [100, 200).
        let grid = Grid::range(30, 150, 10);
        let w1 = Grid {
            start: 0,
            step: 10,
            len: 10,
        };
        let w2 = Grid {
            start: 100,
            step: 10,
            len: 10,
        };
        let mut m = Merged::new(grid);
        m.push(
            &w1,
            vec![
                series(&[("a", "1")], &[(0, 1.0), (3, 2.0), (9, 3.0)]),
                // Only before the request: never appears.
                series(&[("a", "early")], &[(1, 9.0)]),
            ],
        );
        m.push(
            &w2,
            vec![
                series(&[("a", "1")], &[(0, 4.0), (5, 5.0), (6, 6.0)]),
                series(&[("a", "2")], &[(2, 7.0)]),
            ],
        );
        let out = m.finish();
        assert_eq!(
            out,
            vec![
                // 30 → 0, 90 → 6, 100 → 7, 150 → 12; 160 is past the end.
                series(&[("a", "1")], &[(0, 2.0), (6, 3.0), (7, 4.0), (12, 5.0)]),
                series(&[("a", "2")], &[(9, 7.0)]),
            ]
        );
    }

    #[test]
    fn keys_separate_tenants_credentials_queries_and_steps() {
        let request = |credentials, discovery| {
            let one = crate::tenant::Member {
                name: "a".into(),
                vl: crate::tenant::VlTenant::default(),
            };
            RequestContext::new(
                crate::tenant::Tenant::resolved(vec![one]),
                credentials,
                &crate::context::ContextSettings::new(discovery, Default::default()),
            )
        };
        let q = |query: &str| MetricWindowQuery {
            query: query.to_owned(),
            request: request(CredentialFingerprint::none(), Default::default()),
        };
        let g = Grid {
            start: 0,
            step: 10,
            len: 6,
        };
        let a = window_key(&q("x"), g);
        assert_eq!(a, window_key(&q("x"), g));
        assert_ne!(a, window_key(&q("y"), g));
        assert_ne!(a, window_key(&q("x"), Grid { len: 5, ..g }));
        assert_ne!(
            a,
            window_key(
                &q("x"),
                Grid {
                    step: 5,
                    len: 12,
                    ..g
                }
            )
        );
        let mut other = q("x");
        other.request = request(
            CredentialFingerprint::of([b"Basic abc".as_slice()]),
            Default::default(),
        );
        assert_ne!(a, window_key(&other, g));
        // Discovery changes answers: another setting is another entry.
        other.request = request(
            CredentialFingerprint::none(),
            engine::discovery::loki_defaults(),
        );
        assert_ne!(a, window_key(&other, g));
        // A log window over the same span is never the same entry.
        assert_ne!(
            a,
            CacheKey::new(
                "",
                Encoding::Identity,
                "",
                CredentialFingerprint::none(),
                "/loki/api/v1/query_range",
                "x\n10\n0\n6".to_owned()
            )
        );
    }
}
