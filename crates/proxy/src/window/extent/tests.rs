use std::sync::Mutex;
use std::time::Duration;

use cache::{Cache, CredentialFingerprint};

use super::*;
use crate::context::RequestContext;
use crate::window::WindowSettings;
use engine::metric::Point;

const STEP: i64 = 10;

fn ctx() -> WindowContext {
    WindowContext {
        settings: WindowSettings::default(),
        cache: Some(Cache::new(cache::Settings { max_bytes: 1 << 20 })),
        lifetimes: cache::Lifetimes {
            ttl: Duration::from_secs(3600),
            live_ttl: Duration::ZERO,
            freshness: Duration::from_secs(600),
        },
        metrics: crate::telemetry::Metrics::new().expect("metrics"),
    }
}

fn query(q: &str) -> MetricWindowQuery {
    let one = crate::tenant::Member {
        name: "a".into(),
        vl: crate::tenant::VlTenant::default(),
    };
    MetricWindowQuery {
        query: q.to_owned(),
        request: RequestContext::new(
            crate::tenant::Tenant::resolved(vec![one]),
            CredentialFingerprint::none(),
            &crate::context::ContextSettings::new(Default::default(), Default::default()),
        ),
    }
}

/// The query's true answer over `g`: series `all` has `t / 10` at every
/// step, series `odd` only at odd multiples of 10 (a series with gaps), and
/// series `late` only from t = 70 on.
fn truth(g: Grid) -> Matrix {
    let mut all = Vec::new();
    let mut odd = Vec::new();
    let mut late = Vec::new();
    for i in 0..g.len {
        let t = g.time(i);
        let v = t as f64 / 10.0;
        all.push(Point { step: i, v });
        if (t / STEP) % 2 == 1 {
            odd.push(Point { step: i, v: -v });
        }
        if t >= 70 {
            late.push(Point {
                step: i,
                v: 2.0 * v,
            });
        }
    }
    let series = |name: &str, points: Vec<Point>| Series {
        labels: vec![("s".to_owned(), name.to_owned())],
        points,
    };
    [("all", all), ("odd", odd), ("late", late)]
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(n, p)| series(n, p))
        .collect()
}

fn sorted(mut m: Matrix) -> Matrix {
    m.sort_by(|a, b| a.labels.cmp(&b.labels));
    m
}

/// Runs `assemble` over `window`, recording the grids it evaluated.
async fn refresh(
    ctx: &WindowContext,
    q: &MetricWindowQuery,
    window: Grid,
    closed_before: Option<i64>,
    asked: &Mutex<Vec<Grid>>,
) -> Matrix {
    let eval = |g: Grid| {
        asked.lock().expect("lock").push(g);
        async move { Ok(truth(g)) }
    };
    let m = assemble(ctx, q, window, closed_before, eval)
        .await
        .expect("assemble");
    sorted(m)
}

async fn stored(ctx: &WindowContext, q: &MetricWindowQuery, window: Grid) -> Option<Extent> {
    let cache = ctx.cache.as_ref()?;
    decode(&cache.get(&extent_key(q, window)).await?, window)
}

#[tokio::test]
async fn the_extent_grows_by_exactly_the_new_closed_steps() {
    let (ctx, q) = (ctx(), query("rate"));
    let asked = Mutex::new(Vec::new());
    // First refresh: steps 0..=100, closed up to 55.
    let w1 = Grid::range(0, 100, STEP);
    assert_eq!(
        refresh(&ctx, &q, w1, Some(55), &asked).await,
        sorted(truth(w1))
    );
    assert_eq!(asked.lock().unwrap().as_slice(), &[w1]);
    let e = stored(&ctx, &q, w1).await.expect("extent written");
    assert_eq!(e.grid, Grid::range(0, 50, STEP));
    assert_eq!(sorted(e.series), sorted(truth(e.grid)));

    // Second refresh, later: steps 0..=120, closed up to 89. Only the steps
    // after the extent are evaluated, and the answer is the unsplit one.
    asked.lock().unwrap().clear();
    let w2 = Grid::range(0, 120, STEP);
    assert_eq!(
        refresh(&ctx, &q, w2, Some(89), &asked).await,
        sorted(truth(w2))
    );
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        &[Grid::range(60, 120, STEP)]
    );
    let e = stored(&ctx, &q, w2).await.expect("extent grown");
    assert_eq!(e.grid, Grid::range(0, 80, STEP));
    assert_eq!(sorted(e.series), sorted(truth(e.grid)));

    // A refresh with no new closed step evaluates the tail, stores nothing new.
    asked.lock().unwrap().clear();
    let w3 = Grid::range(0, 130, STEP);
    assert_eq!(
        refresh(&ctx, &q, w3, Some(85), &asked).await,
        sorted(truth(w3))
    );
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        &[Grid::range(90, 130, STEP)]
    );
    assert_eq!(
        stored(&ctx, &q, w3).await.map(|e| e.grid),
        Some(Grid::range(0, 80, STEP))
    );
}

#[tokio::test]
async fn nothing_newer_than_the_freshness_bound_is_stored() {
    let (ctx, q) = (ctx(), query("rate"));
    let asked = Mutex::new(Vec::new());
    let w = Grid::range(100, 200, STEP);
    // Nothing closed yet: nothing stored.
    refresh(&ctx, &q, w, Some(99), &asked).await;
    assert_eq!(stored(&ctx, &q, w).await, None);
    // A bound between steps: the step at 140 is the last one kept.
    refresh(&ctx, &q, w, Some(149), &asked).await;
    let e = stored(&ctx, &q, w).await.expect("extent");
    assert_eq!(e.grid.last(), 140);
    let newest = e
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| e.grid.time(p.step))
        .max();
    assert_eq!(newest, Some(140));
    // A closed window (no bound) never writes an extent.
    let other = query("other");
    refresh(&ctx, &other, w, None, &asked).await;
    assert_eq!(stored(&ctx, &other, w).await, None);
}

#[tokio::test]
async fn another_grid_or_format_does_not_use_the_extent() {
    let (ctx, q) = (ctx(), query("rate"));
    let asked = Mutex::new(Vec::new());
    refresh(&ctx, &q, Grid::range(0, 100, STEP), Some(100), &asked).await;
    // Another step over the same span: evaluated whole.
    asked.lock().unwrap().clear();
    let fine = Grid::range(0, 100, 5);
    assert_eq!(
        refresh(&ctx, &q, fine, Some(0), &asked).await,
        sorted(truth(fine))
    );
    assert_eq!(asked.lock().unwrap().as_slice(), &[fine]);
    // Another start (the window clipped elsewhere): evaluated whole.
    asked.lock().unwrap().clear();
    let later = Grid::range(20, 100, STEP);
    assert_eq!(
        refresh(&ctx, &q, later, Some(0), &asked).await,
        sorted(truth(later))
    );
    assert_eq!(asked.lock().unwrap().as_slice(), &[later]);
    // The body of another grid or format under the key is ignored.
    let w = Grid::range(0, 100, STEP);
    let e = stored(&ctx, &q, w).await.expect("extent");
    assert_eq!(decode(&encode(&e), Grid { step: 5, ..w }), None);
    assert_eq!(decode(&encode(&e), Grid { start: 10, ..w }), None);
    let mut old = encode(&e).to_vec();
    old[3] = b'0';
    assert_eq!(decode(&old, w), None);
    // A point past the steps it claims: corrupt, ignored.
    let bad = Extent {
        grid: Grid::range(0, 20, STEP),
        series: truth(w),
    };
    assert_eq!(decode(&encode(&bad), w), None);
    let cache = ctx.cache.as_ref().unwrap();
    cache
        .insert(
            extent_key(&q, w),
            Fetched::new(Bytes::from_static(b"garbage"), Duration::from_secs(60)),
        )
        .await;
    asked.lock().unwrap().clear();
    assert_eq!(
        refresh(&ctx, &q, w, Some(0), &asked).await,
        sorted(truth(w))
    );
    assert_eq!(asked.lock().unwrap().as_slice(), &[w]);
}

#[tokio::test]
async fn a_request_ending_inside_the_extent_is_served_from_it_alone() {
    let (ctx, q) = (ctx(), query("rate"));
    let asked = Mutex::new(Vec::new());
    refresh(&ctx, &q, Grid::range(0, 100, STEP), Some(100), &asked).await;
    asked.lock().unwrap().clear();
    let short = Grid::range(0, 40, STEP);
    assert_eq!(
        refresh(&ctx, &q, short, Some(100), &asked).await,
        sorted(truth(short))
    );
    assert!(asked.lock().unwrap().is_empty());
    // It does not shrink the extent.
    assert_eq!(
        stored(&ctx, &q, short).await.map(|e| e.grid),
        Some(Grid::range(0, 100, STEP))
    );
}

#[tokio::test]
async fn keys_separate_queries_tenants_and_grids_but_not_ends() {
    let q = query("rate");
    let w = Grid::range(0, 100, STEP);
    assert_eq!(extent_key(&q, w), extent_key(&q, Grid { len: 3, ..w }));
    assert_ne!(extent_key(&q, w), extent_key(&query("other"), w));
    assert_ne!(extent_key(&q, w), extent_key(&q, Grid { step: 5, ..w }));
    assert_ne!(extent_key(&q, w), extent_key(&q, Grid { start: 10, ..w }));
    let mut other = query("rate");
    other.request = RequestContext::for_tenant(
        crate::tenant::VlTenant {
            account_id: 7,
            project_id: 0,
        },
        logsql_ast::Discovery::default(),
    );
    assert_ne!(extent_key(&q, w), extent_key(&other, w));
}

#[test]
fn closed_steps_stop_at_the_bound_and_the_window() {
    let w = Grid::range(100, 200, STEP);
    assert_eq!(closed_steps(w, 99), None);
    assert_eq!(closed_steps(w, 100), Some(Grid::range(100, 100, STEP)));
    assert_eq!(closed_steps(w, 159), Some(Grid::range(100, 150, STEP)));
    assert_eq!(closed_steps(w, 10_000), Some(w));
    assert_eq!(tail(w, 3), Grid::range(130, 200, STEP));
    assert_eq!(tail(w, 11).len, 0);
    assert_eq!(tail(w, 40).len, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refreshes_at_once_leave_one_valid_extent() {
    let (ctx, q) = (ctx(), query("rate"));
    let w = Grid::range(0, 200, STEP);
    let bounds = [35, 95, 155, 65, 125, 185];
    let mut tasks = Vec::new();
    for before in bounds {
        let (ctx, q) = (ctx.clone(), q.clone());
        tasks.push(tokio::spawn(async move {
            let eval = |g: Grid| async move {
                tokio::task::yield_now().await;
                Ok(truth(g))
            };
            let m = assemble(&ctx, &q, w, Some(before), eval).await;
            sorted(m.expect("assemble"))
        }));
    }
    for t in tasks {
        assert_eq!(t.await.expect("task"), sorted(truth(w)));
    }
    // Whichever write came last, the extent is one a refresh wrote: whole
    // closed steps, the true values.
    let e = stored(&ctx, &q, w).await.expect("extent");
    assert!(bounds.iter().any(|b| closed_steps(w, *b) == Some(e.grid)));
    assert_eq!(sorted(e.series), sorted(truth(e.grid)));
    // And the next refresh uses it.
    let asked = Mutex::new(Vec::new());
    assert_eq!(
        refresh(&ctx, &q, w, Some(199), &asked).await,
        sorted(truth(w))
    );
    assert_eq!(
        asked.lock().unwrap().as_slice(),
        &[Grid {
            start: e.grid.last() + STEP,
            step: STEP,
            len: w.len - e.grid.len,
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_refresh_evaluates_only_steps_after_the_extents() {
    use crate::window::matrix::run;
    use crate::window::metric_split::metric_windows;
    use std::sync::Arc;

    let (ctx, q) = (ctx(), query("rate"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let refresh = |grid: Grid, closed_before: i64| {
        let (ctx, q, asked) = (ctx.clone(), q.clone(), Arc::clone(&asked));
        async move {
            let w = metric_windows(grid, 100, closed_before).expect("split");
            let eval = move |_: RequestContext, g: Grid| {
                asked.lock().expect("lock").push(g);
                async move { Ok(truth(g)) }
            };
            let m = run(&ctx, &q, grid, w, closed_before, eval).await;
            sorted(m.expect("run"))
        }
    };
    let taken = |asked: &Mutex<Vec<Grid>>| {
        let mut v = std::mem::take(&mut *asked.lock().expect("lock"));
        v.sort_by_key(|g| g.start);
        v
    };
    // Windows of 100: steps 0..=90 closed, 100..=190 and 200..=290 live.
    let g1 = Grid::range(0, 290, STEP);
    assert_eq!(refresh(g1, 150).await, sorted(truth(g1)));
    assert_eq!(
        taken(&asked),
        vec![
            Grid::range(0, 90, STEP),
            Grid::range(100, 190, STEP),
            Grid::range(200, 290, STEP)
        ]
    );
    // Later: 100..=190 has closed and is built from its extent (100..=150)
    // and the steps after it; 200..=290 had no closed step, 300..=310 is new.
    let g2 = Grid::range(0, 310, STEP);
    assert_eq!(refresh(g2, 250).await, sorted(truth(g2)));
    assert_eq!(
        taken(&asked),
        vec![
            Grid::range(160, 190, STEP),
            Grid::range(200, 290, STEP),
            Grid::range(300, 310, STEP)
        ]
    );
    // Again: only the steps after the extent of 200..=290 (200..=250) and
    // the newest window.
    let g3 = Grid::range(0, 320, STEP);
    assert_eq!(refresh(g3, 259).await, sorted(truth(g3)));
    assert_eq!(
        taken(&asked),
        vec![Grid::range(260, 290, STEP), Grid::range(300, 320, STEP)]
    );
}
