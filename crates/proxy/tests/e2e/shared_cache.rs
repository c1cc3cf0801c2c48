//! Issue 19: two lokivl processes sharing a memcached tier in front of one
//! real VictoriaLogs. A closed-range answer computed by replica A is served
//! by replica B with zero VictoriaLogs calls (VictoriaLogs' own
//! `vl_http_requests_total`) and byte-equal; two tenants, or replicas with
//! other discovery flags, never share an entry; with memcached stopped both
//! replicas keep answering the same bytes. Skipped (one printed line) when
//! `LOKIVL_VL_BIN` is unset or `memcached` is not installed.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support;
use crate::support::client;
use crate::support::lokivl::Lokivl;

/// A memcached on a free loopback port, killed on drop.
struct Memcached {
    child: Child,
    addr: String,
}

impl Memcached {
    async fn start() -> Option<Memcached> {
        let bin = ["/usr/bin/memcached", "/usr/local/bin/memcached"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let child = Command::new(bin)
            .args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"])
            .args(["-m", "64", "-u", "nobody"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start memcached");
        let m = Memcached {
            child,
            addr: format!("127.0.0.1:{port}"),
        };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(&m.addr).await.is_ok() {
                return Some(m);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("memcached did not listen on {}", m.addr);
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Query calls VictoriaLogs has served so far (`/select/…` paths).
///
/// VictoriaLogs renders `/metrics` at most once a second and serves that
/// page in between, so a count is taken once two pages more than a second
/// apart agree.
async fn vl_selects(vl: &str) -> u64 {
    let page = || async {
        let m = client::get(&format!("{vl}/metrics")).await;
        m.body
            .lines()
            .filter(|l| l.starts_with("vl_http_requests_total{path=\"/select/"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum::<u64>()
    };
    let mut last = page().await;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let now = page().await;
        if now == last {
            return now;
        }
        last = now;
    }
    panic!("VictoriaLogs' request counters never settled");
}

/// One counter of a lokivl's `/metrics`, 0 when absent.
async fn metric(base: &str, series: &str) -> u64 {
    let m = client::get(&format!("{base}/metrics")).await;
    m.body
        .lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse::<u64>().ok())
        .unwrap_or(0)
}

fn stored(base: &str) -> impl Future<Output = u64> + '_ {
    metric(
        base,
        "lokivl_shared_cache_operations_total{outcome=\"stored\"}",
    )
}

/// Waits until `base` wrote its shared entries (writes run after the
/// answer): the stored count is above `before` and steady.
async fn writes_settled(base: &str, before: u64) {
    let mut last = stored(base).await;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = stored(base).await;
        if now > before && now == last {
            return;
        }
        last = now;
    }
    panic!("{base} stored nothing in the shared tier (stored={last})");
}

async fn ask(base: &str, path: &str, pairs: &[(&str, &str)], tenant: &str) -> String {
    let a = client::get_with(
        &client::url(base, path, pairs),
        &[("X-Scope-OrgID", tenant)],
    )
    .await;
    assert_eq!(a.status, 200, "{path} {pairs:?}: {}", a.body);
    a.body
}

/// `(path, params)` of the requests asked of every replica.
fn requests(start: &str, end: &str) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    vec![
        (
            "/loki/api/v1/query_range",
            vec![
                ("query", r#"{app="shop"}"#.to_owned()),
                ("start", start.to_owned()),
                ("end", end.to_owned()),
                ("limit", "100".to_owned()),
            ],
        ),
        (
            "/loki/api/v1/query_range",
            vec![
                (
                    "query",
                    r#"sum by (level) (count_over_time({app="shop"}[5m]))"#.to_owned(),
                ),
                ("start", start.to_owned()),
                ("end", end.to_owned()),
                ("step", "60".to_owned()),
            ],
        ),
        (
            "/loki/api/v1/labels",
            vec![("start", start.to_owned()), ("end", end.to_owned())],
        ),
    ]
}

async fn ask_all(
    base: &str,
    reqs: &[(&'static str, Vec<(&'static str, String)>)],
    tenant: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, pairs) in reqs {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        out.push(ask(base, path, &pairs, tenant).await);
    }
    out
}

/// The values of answers, without the per-evaluation `stats` (execution
/// times differ between two evaluations of the same request).
fn values(bodies: &[String]) -> Vec<serde_json::Value> {
    bodies
        .iter()
        .map(|b| {
            let v: serde_json::Value = serde_json::from_str(b).unwrap();
            match &v["data"] {
                serde_json::Value::Object(d) => d["result"].clone(),
                other => other.clone(),
            }
        })
        .collect()
}

/// Log lines of a `query_range` answer, over all its streams.
fn lines(body: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let mut out: Vec<String> = v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["values"].as_array().unwrap().iter())
        .map(|e| e[1].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_closed_answers_through_memcached() {
    let Some(bin) = support::backend::find_vl_binary() else {
        // Past the test harness's capture: one line, also when the test passes.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"skipped: LOKIVL_VL_BIN is not set\n",
        );
        return;
    };
    let Some(mut memcached) = Memcached::start().await else {
        // Past the test harness's capture: one line, also when the test passes.
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), b"skipped: memcached not found\n");
        return;
    };
    let vl = support::backend::VictoriaLogs::start(&bin).await;
    // Three hours ago, on a minute: every range asked is closed.
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let base_s = (now_s - 3 * 3600) / 60 * 60;
    let ns = |s: u64| (s * 1_000_000_000) as i64;
    let push = |tenant: &str, text: &str, n: u64| {
        let values: Vec<serde_json::Value> = (0..n)
            .map(|i| serde_json::json!([ns(base_s + 60 * i).to_string(), format!("{text} {i}")]))
            .collect();
        let level = if tenant == "1" { "info" } else { "error" };
        serde_json::json!({"streams": [{"stream": {"app": "shop", "level": level}, "values": values}]})
            .to_string()
    };
    vl.ingest_as("1", push("1", "tenant one line", 20)).await;
    vl.ingest_as("2", push("2", "tenant two line", 7)).await;

    let shared = format!("memcached://{}", memcached.addr);
    let flags = ["--shared-cache", shared.as_str()];
    let a = Lokivl::start(&vl.url, &flags).await;
    let b = Lokivl::start(&vl.url, &flags).await;
    let start = ns(base_s - 60).to_string();
    let end = ns(base_s + 40 * 60).to_string();
    let reqs = requests(&start, &end);

    // A computes; its closed answers go to memcached.
    let before = vl_selects(&vl.url).await;
    let from_a = ask_all(&a.base, &reqs, "1").await;
    assert!(vl_selects(&vl.url).await > before, "A asked VictoriaLogs");
    writes_settled(&a.base, 0).await;
    let got = lines(&from_a[0]);
    assert_eq!(got.len(), 20, "{got:?}");
    assert!(got.iter().all(|l| l.starts_with("tenant one line")));
    assert!(from_a[1].contains(r#""level":"info""#), "{}", from_a[1]);
    assert!(from_a[2].contains("\"app\""), "{}", from_a[2]);

    // B answers the same requests with zero VictoriaLogs calls, byte-equal.
    let before = vl_selects(&vl.url).await;
    let from_b = ask_all(&b.base, &reqs, "1").await;
    assert_eq!(vl_selects(&vl.url).await, before, "B called VictoriaLogs");
    assert_eq!(from_b, from_a);
    let shared_hit =
        |e: &str| format!("lokivl_cache_requests_total{{endpoint=\"{e}\",outcome=\"shared_hit\"}}");
    assert_eq!(metric(&b.base, &shared_hit("query_range")).await, 2);
    assert_eq!(metric(&b.base, &shared_hit("labels")).await, 1);

    // Tenant 2 asking B the same requests is not served tenant 1's entries.
    let before = vl_selects(&vl.url).await;
    let from_b2 = ask_all(&b.base, &reqs, "2").await;
    assert!(
        vl_selects(&vl.url).await > before,
        "tenant 2 needs VictoriaLogs"
    );
    let got = lines(&from_b2[0]);
    assert_eq!(got.len(), 7, "{got:?}");
    assert!(got.iter().all(|l| l.starts_with("tenant two line")));
    assert!(from_b2[1].contains(r#""level":"error""#) && !from_b2[1].contains(r#""level":"info""#));

    // A replica with other discovery flags does not read A's answers.
    let c = Lokivl::start(
        &vl.url,
        &[
            "--shared-cache",
            shared.as_str(),
            "--discover-log-levels=false",
        ],
    )
    .await;
    let before = vl_selects(&vl.url).await;
    let from_c = ask_all(&c.base, &reqs[..1], "1").await;
    assert!(
        vl_selects(&vl.url).await > before,
        "C computed its own answer"
    );
    assert_eq!(lines(&from_c[0]), lines(&from_a[0]));
    drop(c);

    // A asks one more range, then memcached stops.
    let later_end = ns(base_s + 30 * 60).to_string();
    let later = requests(&start, &later_end);
    let stored_before = stored(&a.base).await;
    let later_a = ask_all(&a.base, &later[..2], "1").await;
    writes_settled(&a.base, stored_before).await;
    memcached.stop();

    // Both keep answering, right: B computes what A had shared (its own
    // evaluation: same values, its own stats), and a new range is the same
    // on both.
    let before = vl_selects(&vl.url).await;
    let later_b = ask_all(&b.base, &later[..2], "1").await;
    assert!(vl_selects(&vl.url).await > before, "B evaluated again");
    assert_eq!(values(&later_b), values(&later_a));
    assert_eq!(ask_all(&a.base, &reqs, "1").await, from_a);
    let fresh_end = ns(base_s + 20 * 60).to_string();
    let fresh = requests(&start, &fresh_end);
    let fresh_a = ask_all(&a.base, &fresh, "1").await;
    let fresh_b = ask_all(&b.base, &fresh, "1").await;
    assert_eq!(values(&fresh_a), values(&fresh_b));
    assert_eq!(lines(&fresh_a[0]).len(), 20);
    let failures = metric(
        &b.base,
        "lokivl_shared_cache_operations_total{outcome=\"error\"}",
    )
    .await
        + metric(
            &b.base,
            "lokivl_shared_cache_operations_total{outcome=\"skipped\"}",
        )
        .await;
    assert!(failures > 0, "B counted the dead memcached");
}
