//! Running a log query whose plan has proxy stages: fetch rows from
//! VictoriaLogs page by page in direction order, evaluate the pipeline, and
//! stop at `limit` kept entries, when the range is exhausted, or at a bound on
//! the rows read (then say so in `warnings`, never silently).
//!
//! Pages are cut at timestamps, not row counts, so no entry is lost or seen
//! twice when several share a timestamp: when a page is full, the rows at
//! its last timestamp are set aside, that one nanosecond is fetched whole
//! with its own request, and the next page starts past it.

use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use logsql_ast::LogPlan;

use engine::answer::LogAnswer;
use engine::direction::Direction;
use engine::encode::pipeline::{Entries, Processed, answer};
use engine::ndjson::Decoder;
use engine::ndjson::{Body, Source as _};
pub use engine::page::RunParams;
use engine::page::eval_page;
use engine::pipeline::Pipeline;

use crate::backend::{Backend, Request, Take};
use crate::context::RequestContext;
use crate::error::ApiError;
use crate::work::{Deadline, RowBudget, cpu};

/// Rows read from VictoriaLogs for one request before lokivl stops and warns
/// (the default of [`crate::work::WorkLimits::max_rows`]).
pub const MAX_ROWS_READ: usize = crate::work::budget::DEFAULT_MAX_ROWS;
/// The smallest page asked for; larger than `limit` so that selective
/// pipelines need few round trips.
const MIN_PAGE: usize = 1000;

/// The answer of a run.
#[derive(Debug)]
pub struct Answer {
    /// The entries, warnings and counters of the run.
    pub answer: LogAnswer,
    /// The row budget ended the walk (the answer says so in `warnings`).
    /// A window cut so depends on what the request's other windows read,
    /// so it must not be cached as the window's answer.
    pub cut: bool,
}

/// Fetches pages with `fetch(start, end, page_limit)` (inclusive bounds,
/// rows in any order, at most `page_limit` of them: the newest for
/// backward, the oldest for forward), runs `pipeline` and builds the answer.
/// Reads at most `p.max_rows` rows, without a deadline.
///
/// # Errors
/// Whatever `fetch` returns, and malformed NDJSON as a 502.
pub async fn run<F, Fut, B>(
    pipeline: &mut Pipeline,
    p: RunParams,
    fetch: F,
) -> Result<LogAnswer, ApiError>
where
    F: FnMut(i64, i64, usize) -> Fut,
    Fut: Future<Output = Result<B, ApiError>>,
    B: Into<Body>,
{
    let owned = std::mem::replace(pipeline, Pipeline::empty());
    let budget = RowBudget::new(p.max_rows);
    let (answer, back) = run_owned(owned, p, &budget, Deadline::NONE, fetch).await;
    if let Some(back) = back {
        *pipeline = back;
    }
    answer.map(|a| a.answer)
}

/// [`run`] with the request's shared row `budget` and `deadline`: every
/// page is evaluated off the async workers ([`cpu::run`]) and stops at the
/// deadline.
///
/// # Errors
/// As [`run`]; 504 ([`ApiError::QueryTimeout`]) past the deadline.
pub async fn run_bounded<F, Fut, B>(
    pipeline: Pipeline,
    p: RunParams,
    budget: &RowBudget,
    deadline: Deadline,
    fetch: F,
) -> Result<Answer, ApiError>
where
    F: FnMut(i64, i64, usize) -> Fut,
    Fut: Future<Output = Result<B, ApiError>>,
    B: Into<Body>,
{
    run_owned(pipeline, p, budget, deadline, fetch).await.0
}

/// The state a walk carries from page to page. It is shared with the page
/// jobs (which run on the blocking pool) and never locked across an await.
struct Walk {
    pipeline: Pipeline,
    decoder: Decoder,
    entries: Entries,
    processed: Processed,
}

fn lock(w: &Mutex<Walk>) -> MutexGuard<'_, Walk> {
    // A panicking page job resumes its panic in the caller; the state it
    // left is never read again.
    w.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs the walk and hands the pipeline back (unless a page job still
/// holds it, which only happens when this future is dropped mid-way).
async fn run_owned<F, Fut, B>(
    pipeline: Pipeline,
    p: RunParams,
    budget: &RowBudget,
    deadline: Deadline,
    fetch: F,
) -> (Result<Answer, ApiError>, Option<Pipeline>)
where
    F: FnMut(i64, i64, usize) -> Fut,
    Fut: Future<Output = Result<B, ApiError>>,
    B: Into<Body>,
{
    let walk = Arc::new(Mutex::new(Walk {
        pipeline,
        decoder: Decoder::new(),
        entries: Entries::with_capacity(p.limit.min(4096)),
        processed: Processed::default(),
    }));
    let result = walk_pages(&walk, p, budget, deadline, fetch).await;
    let Ok(walk) =
        Arc::try_unwrap(walk).map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
    else {
        return (
            Err(ApiError::Internal("a page job outlived its walk".into())),
            None,
        );
    };
    let answer = result.map(|cut| {
        let Walk {
            pipeline: _,
            decoder: _,
            mut entries,
            processed,
        } = walk;
        entries.truncate(p.limit);
        let warnings = if cut {
            vec![bound_warning(budget.max())]
        } else {
            Vec::new()
        };
        let answer = answer(&entries, p.categorize, &warnings, processed);
        Answer { answer, cut }
    });
    (answer, Some(walk.pipeline))
}

/// Walks the range page by page until `limit` entries are kept, the range
/// ends, or the budget is spent (then returns `true`).
async fn walk_pages<F, Fut, B>(
    walk: &Arc<Mutex<Walk>>,
    p: RunParams,
    budget: &RowBudget,
    deadline: Deadline,
    mut fetch: F,
) -> Result<bool, ApiError>
where
    F: FnMut(i64, i64, usize) -> Fut,
    Fut: Future<Output = Result<B, ApiError>>,
    B: Into<Body>,
{
    let (mut lo, mut hi) = (p.start, p.end);
    let page = p.limit.max(MIN_PAGE);
    let mut kept = 0;
    while lo <= hi && kept < p.limit {
        let remaining = budget.remaining();
        if remaining == 0 {
            return Ok(true);
        }
        let want = page.min(remaining);
        let body = fetch(lo, hi, want).await?;
        let (n, boundary);
        (n, boundary, kept) = eval(walk, body.into(), p, want, deadline).await?;
        budget.spend(n);
        if kept >= p.limit || n < want {
            break;
        }
        let Some(b) = boundary else { break };
        // The full page ended inside timestamp b: read b whole.
        let remaining = budget.remaining();
        if remaining == 0 {
            return Ok(true);
        }
        // The limit sent is the whole budget, not what is left of it: what is
        // left depends on how far parallel windows got, and a request must
        // not depend on that (cache keys, recorded exchanges). The shared
        // budget is enforced on what was read.
        let body = fetch(b, b, budget.max()).await?;
        let n;
        (n, _, kept) = eval(walk, body.into(), p, usize::MAX, deadline).await?;
        budget.spend(n);
        if n >= remaining && kept < p.limit {
            return Ok(true);
        }
        match p.direction {
            Direction::Backward => hi = b - 1,
            Direction::Forward => lo = b + 1,
        }
    }
    Ok(false)
}

/// Evaluates one page as a [`cpu`] job; returns the rows read, the
/// boundary (see [`eval_page`]) and the entries kept so far.
async fn eval(
    walk: &Arc<Mutex<Walk>>,
    body: Body,
    p: RunParams,
    want: usize,
    deadline: Deadline,
) -> Result<(usize, Option<i64>, usize), ApiError> {
    let size = lock(walk).pipeline.work_size(body.byte_len());
    let walk = Arc::clone(walk);
    cpu::run(deadline, size, move |stop| {
        let mut body = body;
        let mut w = lock(&walk);
        let Walk {
            pipeline,
            decoder,
            entries,
            processed,
        } = &mut *w;
        let (n, boundary) = eval_page(
            decoder, &mut body, pipeline, &p, want, entries, processed, stop,
        )?;
        Ok((n, boundary, entries.len()))
    })
    .await
}

/// Answers a log query whose plan has proxy stages: VictoriaLogs runs the
/// plan's query, the proxy the rest; `start`/`end` are Loki's `[start, end)`.
/// Reads at most [`MAX_ROWS_READ`] rows, without a deadline (the live tail's
/// history); requests use [`log_range_bounded`].
///
/// # Errors
/// An invalid pipeline (400), backend failures, malformed answers.
pub async fn log_range(
    backend: &Backend,
    ctx: &RequestContext,
    plan: &LogPlan,
    q: LogRange,
) -> Result<LogAnswer, ApiError> {
    let budget = RowBudget::new(MAX_ROWS_READ);
    log_range_bounded(backend, ctx, plan, q, &budget, Deadline::NONE)
        .await
        .map(|a| a.answer)
}

/// One log range to answer: Loki's `[start, end)`, `limit`, `direction`
/// and whether labels are categorized.
#[derive(Debug, Clone, Copy)]
pub struct LogRange {
    /// First nanosecond, inclusive.
    pub start: i64,
    /// End nanosecond, exclusive.
    pub end: i64,
    /// Entries wanted.
    pub limit: usize,
    /// Walk and answer order.
    pub direction: Direction,
    /// `categorize-labels` was requested.
    pub categorize: bool,
}

/// [`log_range`] reading from the request's shared row `budget` (one per
/// request, whatever its windows) and stopping at `deadline`.
///
/// # Errors
/// As [`log_range`]; 504 past the deadline.
pub async fn log_range_bounded(
    backend: &Backend,
    ctx: &RequestContext,
    plan: &LogPlan,
    q: LogRange,
    budget: &RowBudget,
    deadline: Deadline,
) -> Result<Answer, ApiError> {
    let pipeline = Pipeline::new(&plan.proxy_stages)
        .map_err(|e| ApiError::BadRequest(e.to_string()))?
        .discovering(plan.discovery.clone());
    let direction = q.direction;
    let p = RunParams {
        start: q.start,
        // Loki's log range is [start, end); VictoriaLogs' is [start, end].
        end: q.end - 1,
        limit: q.limit,
        direction,
        categorize: q.categorize,
        max_rows: budget.max(),
    };
    run_bounded(pipeline, p, budget, deadline, |lo, hi, n| {
        let take = match direction {
            Direction::Backward => Take::Newest(n),
            Direction::Forward => Take::Oldest(n),
        };
        let req = Request::query(plan.query.clone(), lo, hi).take(take);
        async move { Ok(backend.send_rows(ctx, &req).await?) }
    })
    .await
}

/// The answer for an empty range.
pub fn empty_answer(categorize: bool) -> LogAnswer {
    answer(&Entries::default(), categorize, &[], Processed::default())
}

fn bound_warning(max: usize) -> String {
    format!(
        "lokivl stopped after reading {max} entries from VictoriaLogs while evaluating the pipeline; \
         the answer may hold fewer entries than the limit. Narrow the time range or the stream selector."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;

    fn pipeline(q: &str) -> Pipeline {
        let logql_parser::Expr::Log(e) = logql_parser::parse(q).unwrap() else {
            panic!()
        };
        Pipeline::new(&e.pipeline).unwrap()
    }

    /// A fake VictoriaLogs over rows `(ts, line)` of one stream.
    fn fake(
        data: &[(i64, &str)],
        dir: Direction,
        calls: &std::cell::RefCell<Vec<(i64, i64, usize)>>,
        lo: i64,
        hi: i64,
        limit: usize,
    ) -> BytesMut {
        calls.borrow_mut().push((lo, hi, limit));
        let mut sel: Vec<(i64, &str)> = data
            .iter()
            .copied()
            .filter(|(t, _)| *t >= lo && *t <= hi)
            .collect();
        match dir {
            Direction::Backward => sel.sort_by_key(|(t, _)| std::cmp::Reverse(*t)),
            Direction::Forward => sel.sort_by_key(|(t, _)| *t),
        }
        sel.truncate(limit);
        let mut out = String::new();
        for (t, l) in sel {
            let secs = t / 1_000_000_000;
            let ns = t % 1_000_000_000;
            let dt = time::OffsetDateTime::from_unix_timestamp(secs).unwrap();
            out.push_str(&format!(
                "{{\"_time\":\"{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z\",\"_stream\":\"{{app=\\\"a\\\"}}\",\"_msg\":\"{}\",\"app\":\"a\"}}\n",
                dt.year(), dt.month() as u8, dt.day(), dt.hour(), dt.minute(), dt.second(), ns, l
            ));
        }
        BytesMut::from(out.as_bytes())
    }

    fn json(a: &LogAnswer) -> serde_json::Value {
        let mut out = Vec::new();
        engine::answer::encode::write_streams(a, std::time::Instant::now(), &mut out);
        serde_json::from_slice(&out).unwrap()
    }

    fn values(out: &LogAnswer) -> Vec<String> {
        let v = json(out);
        let mut r = Vec::new();
        for s in v["data"]["result"].as_array().unwrap() {
            for e in s["values"].as_array().unwrap() {
                r.push(format!(
                    "{}:{}",
                    e[0].as_str().unwrap(),
                    e[1].as_str().unwrap()
                ));
            }
        }
        r
    }

    fn go(
        data: &[(i64, &str)],
        q: &str,
        limit: usize,
        dir: Direction,
        max_rows: usize,
    ) -> (LogAnswer, usize) {
        let calls = std::cell::RefCell::new(Vec::new());
        let mut pl = pipeline(q);
        let p = RunParams {
            start: 0,
            end: 1_000_000,
            limit,
            direction: dir,
            categorize: false,
            max_rows,
        };
        let fut = run(&mut pl, p, |lo, hi, n| {
            let b = fake(data, dir, &calls, lo, hi, n);
            async move { Ok(b) }
        });
        let out = futures_lite(fut).unwrap();
        let n = calls.borrow().len();
        (out, n)
    }

    fn futures_lite<T>(f: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn pages_past_filtered_rows_without_losing_equal_timestamps() {
        // 2500 rows; only every 100th matches; several share timestamps.
        let lines: Vec<String> = (0..2500)
            .map(|i| {
                if i % 100 == 0 {
                    format!("hit {i}")
                } else {
                    format!("miss {i}")
                }
            })
            .collect();
        let data: Vec<(i64, &str)> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| ((i / 3) as i64 + 1, l.as_str()))
            .collect();
        let (out, calls) = go(
            &data,
            r#"{app="a"} |> "hit <_>""#,
            20,
            Direction::Backward,
            MAX_ROWS_READ,
        );
        let got = values(&out);
        assert_eq!(got.len(), 20);
        assert_eq!(got[0], "801:hit 2400");
        assert_eq!(got[19], "167:hit 500");
        assert!(calls >= 3, "needed more than one page ({calls})");
        let (out, _) = go(
            &data,
            r#"{app="a"} |> "hit <_>""#,
            3,
            Direction::Forward,
            MAX_ROWS_READ,
        );
        assert_eq!(values(&out), vec!["1:hit 0", "34:hit 100", "67:hit 200"]);
        // every row exactly once
        let (out, _) = go(
            &data,
            r#"{app="a"} |> "<_> <_>""#,
            5000,
            Direction::Forward,
            MAX_ROWS_READ,
        );
        assert_eq!(values(&out).len(), 2500);
    }

    #[test]
    fn the_row_bound_warns() {
        let lines: Vec<String> = (0..3000).map(|i| format!("miss {i}")).collect();
        let data: Vec<(i64, &str)> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| (i as i64 + 1, l.as_str()))
            .collect();
        let (out, _) = go(
            &data,
            r#"{app="a"} |> "hit <_>""#,
            10,
            Direction::Backward,
            1500,
        );
        let v = json(&out);
        assert!(
            v["warnings"][0]
                .as_str()
                .unwrap()
                .contains("stopped after reading 1500")
        );
        assert_eq!(values(&out).len(), 0);
    }

    #[test]
    fn runs_sharing_a_budget_read_at_most_it_in_total() {
        // Two windows of 900 rows each, one budget of 1500 rows.
        let lines: Vec<String> = (0..1800).map(|i| format!("miss {i}")).collect();
        let data: Vec<(i64, &str)> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| (i as i64 + 1, l.as_str()))
            .collect();
        let budget = RowBudget::new(1500);
        let window = |start: i64, end: i64| {
            let calls = std::cell::RefCell::new(Vec::new());
            let p = RunParams {
                start,
                end,
                limit: 10,
                direction: Direction::Forward,
                categorize: false,
                max_rows: usize::MAX,
            };
            let fut = run_bounded(
                pipeline(r#"{app="a"} |> "hit <_>""#),
                p,
                &budget,
                Deadline::NONE,
                |lo, hi, n| {
                    let b = fake(&data, Direction::Forward, &calls, lo, hi, n);
                    async move { Ok(b) }
                },
            );
            futures_lite(fut).unwrap()
        };
        let first = window(1, 900);
        assert!(!first.cut, "900 rows fit in 1500");
        let second = window(901, 1800);
        assert!(second.cut);
        let v = json(&second.answer);
        assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 600);
        assert!(
            v["warnings"][0]
                .as_str()
                .unwrap()
                .contains("stopped after reading 1500 entries")
        );
        assert_eq!(budget.remaining(), 0);
        // A spent budget reads nothing more.
        let third = window(1, 1800);
        assert!(third.cut);
        let v = json(&third.answer);
        assert_eq!(v["data"]["stats"]["summary"]["totalLinesProcessed"], 0);
    }

    #[test]
    fn a_page_stops_at_the_deadline() {
        let data = [(1, "a"), (2, "b")];
        let calls = std::cell::RefCell::new(Vec::new());
        let p = RunParams {
            start: 0,
            end: 10,
            limit: 10,
            direction: Direction::Forward,
            categorize: false,
            max_rows: usize::MAX,
        };
        // A deadline that has passed by the time the page is evaluated.
        let deadline = Deadline::after(std::time::Duration::ZERO);
        let budget = RowBudget::new(100);
        let fut = run_bounded(
            pipeline(r#"{app="a"} |> "<_>""#),
            p,
            &budget,
            deadline,
            |lo, hi, n| {
                let b = fake(&data, Direction::Forward, &calls, lo, hi, n);
                async move { Ok(b) }
            },
        );
        let err = futures_lite(fut).unwrap_err();
        assert_eq!(err.status(), http::StatusCode::GATEWAY_TIMEOUT);
        assert!(err.to_string().starts_with("request timed out"), "{err}");
    }

    #[test]
    fn synthesized_labels_reach_the_stages_and_the_answer() {
        let data = [(1, "info start"), (2, "error boom"), (3, "level=error x")];
        let calls = std::cell::RefCell::new(Vec::new());
        let mut pl = pipeline(r#"{app="a"} | detected_level="error" | service_name="a""#)
            .discovering(logsql_ast::Discovery {
                service_name_labels: vec!["app".into()],
                log_levels: true,
            });
        let p = RunParams {
            start: 0,
            end: 1_000_000,
            limit: 10,
            direction: Direction::Forward,
            categorize: true,
            max_rows: MAX_ROWS_READ,
        };
        let fut = run(&mut pl, p, |lo, hi, n| {
            let b = fake(&data, Direction::Forward, &calls, lo, hi, n);
            async move { Ok(b) }
        });
        let out = futures_lite(fut).unwrap();
        assert_eq!(values(&out), vec!["2:error boom", "3:level=error x"]);
        let v = json(&out);
        let s = &v["data"]["result"][0];
        assert_eq!(
            s["stream"],
            serde_json::json!({"app": "a", "service_name": "a"})
        );
        assert_eq!(
            s["values"][0][2],
            serde_json::json!({"structuredMetadata": {"detected_level": "error"}})
        );
    }
}
