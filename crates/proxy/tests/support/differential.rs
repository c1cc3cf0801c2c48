//! The differential harness: the same LogQL queries asked of Loki and of
//! lokivl, compared value by value.
//!
//! Queries live in `tests/data/differential_queries.txt`, one per line:
//! `<id> <range|instant> [start=<off>] [end=<off>] [time=<off>] [step=<s>]
//! [dir=<d>] [limit=<n>] [cat] :: <LogQL>`. Offsets (`-1m`, `+11m`, `90s`)
//! are relative to the dataset base time; `cat` sends the categorize-labels
//! encoding flag. The id's prefix before the first `.` names the feature for
//! the per-feature table. Queries lokivl does not answer like Loki yet are
//! listed in `tests/data/differential_known_gaps.txt` (`<id> <reason>`); the
//! suite fails on an unlisted difference and on a listed query that passes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::backend::Golden;
use super::client;
pub use super::compare::compare;
pub use super::realistic::Dataset;

/// Default start of a range query, relative to the base time.
const DEFAULT_START: &str = "-1m";
/// Default end of a range query: after the last entry (base + ~10 min).
const DEFAULT_END: &str = "+11m";
/// Default evaluation time of an instant query.
const DEFAULT_TIME: &str = "+10m";

/// The endpoint a line of the list asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `query_range`.
    Range,
    /// `query`.
    Instant,
    /// `labels`, with the LogQL (if any) as `query=`.
    Labels,
    /// `label/<name>/values`, with the LogQL (if any) as `query=`.
    Values(String),
    /// `series`, with the LogQL as `match[]=`.
    Series,
}

/// One line of the query list.
#[derive(Debug, Clone)]
pub struct Query {
    pub id: String,
    pub kind: Kind,
    pub params: BTreeMap<String, String>,
    pub categorize: bool,
    pub logql: String,
    /// Moves `start`/`end` (or `time`) by this many nanoseconds (a refresh).
    pub shift_ns: i64,
}

impl Query {
    /// The feature group: the id up to the first `.`.
    pub fn feature(&self) -> &str {
        self.id.split('.').next().unwrap_or(&self.id)
    }

    /// Endpoint path and form parameters for a dataset starting at `base_ns`.
    pub fn request(&self, base_ns: i64) -> (String, Vec<(String, String)>) {
        let mut out = Vec::new();
        let at = |key: &str, default: &str| {
            let off = self.params.get(key).map(String::as_str).unwrap_or(default);
            (base_ns + self.shift_ns + parse_offset_ns(off).expect("offset checked at parse time"))
                .to_string()
        };
        let query = ("query".to_string(), self.logql.clone());
        let range = |out: &mut Vec<(String, String)>| {
            out.push(("start".into(), at("start", DEFAULT_START)));
            out.push(("end".into(), at("end", DEFAULT_END)));
        };
        let path = match &self.kind {
            Kind::Range => {
                out.push(query);
                range(&mut out);
                "/loki/api/v1/query_range".to_owned()
            }
            Kind::Instant => {
                out.push(query);
                out.push(("time".into(), at("time", DEFAULT_TIME)));
                "/loki/api/v1/query".to_owned()
            }
            Kind::Labels | Kind::Values(_) => {
                if !self.logql.is_empty() {
                    out.push(query);
                }
                range(&mut out);
                match &self.kind {
                    Kind::Values(name) => format!("/loki/api/v1/label/{name}/values"),
                    _ => "/loki/api/v1/labels".to_owned(),
                }
            }
            Kind::Series => {
                out.push(("match[]".into(), self.logql.clone()));
                range(&mut out);
                "/loki/api/v1/series".to_owned()
            }
        };
        for (key, name) in [("step", "step"), ("dir", "direction"), ("limit", "limit")] {
            if let Some(v) = self.params.get(key) {
                out.push((name.to_string(), v.clone()));
            }
        }
        (path, out)
    }

    /// The request as one stable string, stored next to Loki's answer so a
    /// changed query line is noticed at replay.
    pub fn request_text(&self, base_ns: i64) -> String {
        let (path, params) = self.request(base_ns);
        let pairs: Vec<(&str, &str)> = params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut text = client::url("", &path, &pairs);
        if self.categorize {
            text.push_str(" [categorize-labels]");
        }
        text
    }
}

/// `-1m`, `+90s`, `2h`, `+3m30s`, `0s`, `+1s500ms1ns` → nanoseconds.
pub fn parse_offset_ns(s: &str) -> Option<i64> {
    let (sign, mut rest) = match s.as_bytes().first()? {
        b'-' => (-1, &s[1..]),
        b'+' => (1, &s[1..]),
        _ => (1, s),
    };
    let mut total = 0i64;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit())?;
        let n: i64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, len) = if rest.starts_with("ns") {
            (1, 2)
        } else if rest.starts_with("ms") {
            (1_000_000, 2)
        } else if rest.starts_with('s') {
            (1_000_000_000, 1)
        } else if rest.starts_with('m') {
            (60_000_000_000, 1)
        } else if rest.starts_with('h') {
            (3_600_000_000_000, 1)
        } else {
            return None;
        };
        total += n * unit;
        rest = &rest[len..];
    }
    Some(sign * total)
}

fn data_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Parses the query list text.
pub fn parse_queries(text: &str) -> Result<Vec<Query>, String> {
    let mut out: Vec<Query> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |m: &str| format!("differential_queries.txt:{}: {m}: {line}", n + 1);
        let (head, logql) = line
            .split_once(" :: ")
            .or_else(|| line.strip_suffix(" ::").map(|h| (h, "")))
            .ok_or_else(|| err("missing ` :: `"))?;
        let mut words = head.split_whitespace();
        let id = words.next().ok_or_else(|| err("missing id"))?.to_string();
        let kind = match words.next() {
            Some("range") => Kind::Range,
            Some("instant") => Kind::Instant,
            Some("labels") => Kind::Labels,
            Some("series") => Kind::Series,
            Some(w) if w.starts_with("values=") => Kind::Values(w["values=".len()..].to_owned()),
            _ => {
                return Err(err(
                    "kind must be `range`, `instant`, `labels`, `values=<name>` or `series`",
                ));
            }
        };
        let mut params = BTreeMap::new();
        let mut categorize = false;
        for w in words {
            if w == "cat" {
                categorize = true;
                continue;
            }
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| err("parameter without `=`"))?;
            if !matches!(k, "start" | "end" | "time" | "step" | "dir" | "limit") {
                return Err(err("unknown parameter"));
            }
            if matches!(k, "start" | "end" | "time") && parse_offset_ns(v).is_none() {
                return Err(err("bad time offset"));
            }
            params.insert(k.to_string(), v.to_string());
        }
        if out.iter().any(|q| q.id == id) {
            return Err(err("duplicate id"));
        }
        out.push(Query {
            id,
            kind,
            params,
            categorize,
            logql: logql.trim().to_string(),
            shift_ns: 0,
        });
    }
    Ok(out)
}

/// A differential suite: its query list and known gaps (in `tests/data`),
/// the dataset it pushes and its golden directory (in `tests/golden`).
#[derive(Debug, Clone, Copy)]
pub struct Suite {
    pub queries: &'static str,
    pub gaps: &'static str,
    pub golden: &'static str,
    pub dataset: Dataset,
}

/// Loki and lokivl with label discovery off (`differential_loki`).
pub const MAIN: Suite = Suite {
    queries: "differential_queries.txt",
    gaps: "differential_known_gaps.txt",
    golden: "differential",
    dataset: Dataset::Current,
};

/// The main suite on the stream-labels-only dataset: the queries of
/// `differential_realistic_queries.txt`, which name the labels Promtail
/// and OTel collectors store.
pub const MAIN_STREAM_LABELS: Suite = Suite {
    queries: "differential_realistic_queries.txt",
    gaps: "differential_stream-labels_known_gaps.txt",
    golden: "differential-stream-labels",
    dataset: Dataset::StreamLabels,
};

/// The main suite on the OTel dataset (same queries as
/// [`MAIN_STREAM_LABELS`]).
pub const MAIN_OTEL: Suite = Suite {
    queries: "differential_realistic_queries.txt",
    gaps: "differential_otel_known_gaps.txt",
    golden: "differential-otel",
    dataset: Dataset::Otel,
};

/// Loki and lokivl with Loki's default label discovery
/// (`differential_discovery`): `service_name` and `detected_level`.
pub const DISCOVERY: Suite = Suite {
    queries: "differential_discovery_queries.txt",
    gaps: "differential_discovery_known_gaps.txt",
    golden: "differential_discovery",
    dataset: Dataset::Current,
};

/// The discovery suite on the stream-labels-only dataset, where every
/// `service_name` and `detected_level` must be discovered.
pub const DISCOVERY_STREAM_LABELS: Suite = Suite {
    queries: "differential_discovery_queries.txt",
    gaps: "differential_discovery_stream-labels_known_gaps.txt",
    golden: "differential_discovery-stream-labels",
    dataset: Dataset::StreamLabels,
};

/// The discovery suite on the OTel dataset (`service.name`, severity fields).
pub const DISCOVERY_OTEL: Suite = Suite {
    queries: "differential_discovery_queries.txt",
    gaps: "differential_discovery_otel_known_gaps.txt",
    golden: "differential_discovery-otel",
    dataset: Dataset::Otel,
};

impl Suite {
    /// The committed query list.
    pub fn queries(&self) -> Vec<Query> {
        let text = std::fs::read_to_string(data_path(self.queries))
            .unwrap_or_else(|e| panic!("tests/data/{} is readable: {e}", self.queries));
        parse_queries(&text)
            .unwrap_or_else(|e| panic!("{}", e.replace("differential_queries.txt", self.queries)))
    }

    /// The committed known gaps that apply to VictoriaLogs `release`: an id
    /// written `<id>@<release>` is a gap of that release only (a difference
    /// that comes from what the release stores, not from the translation).
    pub fn known_gaps(&self, release: &str) -> BTreeMap<String, String> {
        read_known_gaps(self.gaps, release)
    }

    /// The golden directory of this suite for VictoriaLogs `release`.
    pub fn golden_dir(&self, release: &str) -> PathBuf {
        super::backend::golden_root(release).join(self.golden)
    }

    /// Path of Loki's recorded answers (recorded next to `release`'s exchanges).
    pub fn loki_golden_path(&self, release: &str) -> PathBuf {
        self.golden_dir(release).join("loki.json")
    }

    /// Path of the VictoriaLogs exchanges recorded from `release`.
    pub fn vl_golden_path(&self, release: &str) -> PathBuf {
        self.golden_dir(release).join("victorialogs.json")
    }

    /// Writes both golden files of `release`. Loki's answers go one compact
    /// line per query, which keeps the file small and re-recordings
    /// reviewable line by line.
    pub fn write_goldens(&self, release: &str, loki: &LokiGolden, vl: &VlGolden) {
        std::fs::create_dir_all(self.golden_dir(release)).expect("create golden dir");
        let mut text = format!("{{\n\"base_ns\": {},\n\"answers\": {{", loki.base_ns);
        for (i, (id, answer)) in loki.answers.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let id = serde_json::to_string(id).expect("serialize id");
            let answer = serde_json::to_string(answer).expect("serialize answer");
            let _ = write!(text, "{sep}\n{id}: {answer}");
        }
        text.push_str("\n}\n}\n");
        std::fs::write(self.loki_golden_path(release), text).expect("write golden file");
        write_json(&self.vl_golden_path(release), vl);
    }

    /// With `LOKIVL_RECORD_GOLDEN` set (not to `missing`), writes Loki's answers and the
    /// exchanges with the VictoriaLogs `vl_bin` to that release's
    /// directory; recorded even when comparisons fail, since the golden
    /// files hold the servers' data, not lokivl's verdicts.
    pub fn record_if_asked(
        &self,
        vl_bin: &Path,
        base_ns: i64,
        answers: &BTreeMap<String, Compared>,
        exchanges: Golden,
    ) {
        if !super::topup::records_whole() {
            return;
        }
        let release = super::backend::release_of(vl_bin);
        self.write_goldens(
            &release,
            &LokiGolden {
                base_ns,
                answers: answers.clone(),
            },
            &VlGolden { base_ns, exchanges },
        );
        println!("recorded {}", self.golden_dir(&release).display());
    }

    /// Reads both golden files of `release`, failing the test with how to
    /// record them when one is missing.
    pub fn read_goldens(&self, release: &str) -> (LokiGolden, VlGolden) {
        fn missing<T>(path: &Path, release: &str) -> T {
            panic!(
                "{} is missing; record it with LOKIVL_LOKI_BIN=... \
                 LOKIVL_VL_BIN=<VictoriaLogs {release}> LOKIVL_RECORD_GOLDEN=1 \
                 cargo test -p proxy --test <the live suite> (docs/testing.md)",
                path.display()
            )
        }
        let (lp, vp) = (self.loki_golden_path(release), self.vl_golden_path(release));
        let loki: LokiGolden = read_json(&lp).unwrap_or_else(|| missing(&lp, release));
        let vl: VlGolden = read_json(&vp).unwrap_or_else(|| missing(&vp, release));
        assert_eq!(
            loki.base_ns, vl.base_ns,
            "the two golden files of {release} come from different recordings; re-record"
        );
        (loki, vl)
    }
}

/// The known gaps of `tests/data/<file>` that apply to VictoriaLogs
/// `release`: an id written `<id>@<release>` is a gap of that release only.
pub fn read_known_gaps(file: &str, release: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(data_path(file))
        .unwrap_or_else(|e| panic!("tests/data/{file} is readable: {e}"));
    let all = parse_known_gaps(&text).unwrap_or_else(|e| panic!("{e}"));
    all.into_iter()
        .filter_map(|(id, reason)| match id.split_once('@') {
            None => Some((id, reason)),
            Some((id, r)) if r == release => Some((id.to_owned(), reason)),
            Some(_) => None,
        })
        .collect()
}

/// Parses the known-gaps text: `<id> <reason>` per line, `#` comments.
pub fn parse_known_gaps(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (id, reason) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("differential_known_gaps.txt:{}: missing reason", n + 1))?;
        if out
            .insert(id.to_string(), reason.trim().to_string())
            .is_some()
        {
            return Err(format!(
                "differential_known_gaps.txt:{}: duplicate id {id}",
                n + 1
            ));
        }
    }
    Ok(out)
}

/// One answer, as compared: status plus the JSON body without `data.stats`
/// (stats change on every run and are not compared), or the raw text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    /// The request that produced it (see [`Query::request_text`]).
    pub request: String,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Compared {
    pub(crate) fn from_http(request: String, status: u16, body: &str) -> Compared {
        match serde_json::from_str::<Value>(body) {
            Ok(mut v) if v.is_object() => {
                if let Some(data) = v.get_mut("data").and_then(Value::as_object_mut) {
                    data.remove("stats");
                }
                Compared {
                    request,
                    status,
                    json: Some(v),
                    text: None,
                }
            }
            _ => Compared {
                request,
                status,
                json: None,
                text: Some(body.to_string()),
            },
        }
    }
}

/// Asks `base_url` (Loki or lokivl) one query.
pub async fn ask(base_url: &str, q: &Query, base_ns: i64) -> Compared {
    let (path, params) = q.request(base_ns);
    let pairs: Vec<(&str, &str)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let url = client::url(base_url, &path, &pairs);
    let headers: &[(&str, &str)] = if q.categorize {
        &[("X-Loki-Response-Encoding-Flags", "categorize-labels")]
    } else {
        &[]
    };
    let request = q.request_text(base_ns);
    match client::try_get(&url, headers)
        .await
        .map(client::Answer::parts)
    {
        Ok((status, _, body)) => Compared::from_http(request, status, &body),
        Err(e) => Compared {
            request,
            status: 0,
            json: None,
            text: Some(format!("transport error: {e}")),
        },
    }
}

/// Asks every query, in list order.
pub async fn ask_all(
    base_url: &str,
    queries: &[Query],
    base_ns: i64,
) -> BTreeMap<String, Compared> {
    let mut out = BTreeMap::new();
    for q in queries {
        out.insert(q.id.clone(), ask(base_url, q, base_ns).await);
    }
    out
}

/// Loki's recorded answers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LokiGolden {
    /// Dataset base time in nanoseconds.
    pub base_ns: i64,
    pub answers: BTreeMap<String, Compared>,
}

/// VictoriaLogs exchanges recorded while lokivl answered the queries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VlGolden {
    /// Dataset base time in nanoseconds (the data VictoriaLogs held).
    pub base_ns: i64,
    pub exchanges: Golden,
}

fn write_json<T: Serialize>(path: &Path, value: &T) {
    let text = serde_json::to_string_pretty(value).expect("serialize golden");
    std::fs::write(path, text + "\n").expect("write golden file");
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(serde_json::from_str(&text).expect("golden file is valid JSON"))
}

/// The dataset base time: 15 minutes past the hour that began two hours
/// ago. Loki's query frontend splits range queries at hour boundaries
/// (`split_queries_by_interval`), and merging the parts orders a series
/// whose labels are a prefix of another's (`{a="1"}` and `{a="1", b="2"}`)
/// after it instead of before; every query window (base − 1 m to base +
/// 30 m) stays inside one hour, so Loki answers from one unsplit query.
pub fn base_ns() -> i64 {
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs() as i64;
    let hour = now_s - now_s.rem_euclid(3600);
    (hour - 2 * 3600 + 15 * 60) * 1_000_000_000
}

/// Loki names one failing series in a `pipeline error` in Go map order, so
/// the same query asked twice may name different series. Where Loki's
/// answer is such an error and differs from lokivl's, Loki is asked again
/// (up to 60 times) and the first answer equal to lokivl's is kept: it is
/// one of the answers Loki really gives, and recordings stop depending on
/// luck. An answer Loki never gives stays a difference.
pub async fn settle_random_picks(
    loki_url: &str,
    queries: &[Query],
    mut loki: std::collections::BTreeMap<String, Compared>,
    lokivl: &std::collections::BTreeMap<String, Compared>,
    base_ns: i64,
) -> std::collections::BTreeMap<String, Compared> {
    for q in queries {
        let (Some(l), Some(v)) = (loki.get(&q.id), lokivl.get(&q.id)) else {
            continue;
        };
        let random = l
            .text
            .as_deref()
            .is_some_and(|t| t.starts_with("pipeline error: ") && t.contains(" for series: "));
        if !random || compare(l, v).is_none() {
            continue;
        }
        for _ in 0..60 {
            let again = ask(loki_url, q, base_ns).await;
            if compare(&again, v).is_none() {
                loki.insert(q.id.clone(), again);
                break;
            }
        }
    }
    loki
}

/// The Loki and VictoriaLogs binaries of a live suite; `None` after one
/// printed line naming what is missing (the suite then skips).
pub fn servers() -> Option<(PathBuf, PathBuf)> {
    let loki_bin = super::loki::find_loki_binary();
    let vl_bin = super::backend::find_vl_binary();
    if let (Some(l), Some(v)) = (&loki_bin, &vl_bin) {
        return Some((l.clone(), v.clone()));
    }
    let mut missing = Vec::new();
    if loki_bin.is_none() {
        missing.push("Loki (set LOKIVL_LOKI_BIN or put loki on PATH)");
    }
    if vl_bin.is_none() {
        missing.push("VictoriaLogs (set LOKIVL_VL_BIN or put victoria-logs on PATH)");
    }
    let _ = std::io::Write::write_fmt(
        &mut std::io::stderr(),
        format_args!("skipped: missing {}\n", missing.join(" and ")),
    );
    None
}

/// Asks Loki and lokivl every query; Loki's random picks among failing
/// series are settled against lokivl's answers ([`settle_random_picks`]).
/// Returns `(loki, lokivl)`.
pub async fn ask_both(
    loki_url: &str,
    lokivl_url: &str,
    queries: &[Query],
    base_ns: i64,
) -> (BTreeMap<String, Compared>, BTreeMap<String, Compared>) {
    let loki = ask_all(loki_url, queries, base_ns).await;
    let lokivl = ask_all(lokivl_url, queries, base_ns).await;
    let loki = settle_random_picks(loki_url, queries, loki, &lokivl, base_ns).await;
    (loki, lokivl)
}

/// Outcome of a whole run: the printable report and the failures.
pub struct Verdict {
    pub report: String,
    pub failures: Vec<String>,
}

/// Compares every query and checks the result against the known gaps.
pub fn judge(
    queries: &[Query],
    loki: &BTreeMap<String, Compared>,
    lokivl: &BTreeMap<String, Compared>,
    gaps: &BTreeMap<String, String>,
) -> Verdict {
    let mut report = String::new();
    let mut failures = Vec::new();
    let mut features: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut by_reason: BTreeMap<&str, usize> = BTreeMap::new();
    let mut equal = 0;
    let mut loki_has_data = 0;
    for q in queries {
        let Some(l) = loki.get(&q.id) else {
            failures.push(format!("{}: no recorded Loki answer; re-record", q.id));
            continue;
        };
        let v = &lokivl[&q.id];
        if l.request != v.request {
            failures.push(format!(
                "{}: Loki's answer was recorded for another request ({}); re-record",
                q.id, l.request
            ));
            continue;
        }
        if l.status == 200 && has_data(l) {
            loki_has_data += 1;
        }
        let diff = compare(l, v);
        // `LOKIVL_DIFF_SHOW=id1,id2` prints both answers of those queries whole.
        if std::env::var("LOKIVL_DIFF_SHOW").is_ok_and(|v| v.split(',').any(|x| x == q.id)) {
            for (who, a) in [("loki", l), ("lokivl", v)] {
                let body = a.json.as_ref().map_or_else(
                    || a.text.clone().unwrap_or_default(),
                    serde_json::Value::to_string,
                );
                eprintln!("DUMP {} {who} {} {body}", q.id, a.status);
            }
        }
        let entry = features.entry(q.feature()).or_default();
        entry.1 += 1;
        match (&diff, gaps.get(&q.id)) {
            (None, None) => {
                equal += 1;
                entry.0 += 1;
                let _ = writeln!(report, "PASS {}", q.id);
            }
            (None, Some(_)) => {
                equal += 1;
                entry.0 += 1;
                let _ = writeln!(report, "PASS {} (listed as a known gap!)", q.id);
                failures.push(format!(
                    "{}: now equals Loki; remove it from tests/data/differential_known_gaps.txt",
                    q.id
                ));
            }
            (Some(d), Some(reason)) => {
                *by_reason.entry(reason.as_str()).or_default() += 1;
                let _ = writeln!(report, "GAP  {} [{reason}]\n     {d}", q.id);
            }
            (Some(d), None) => {
                let _ = writeln!(report, "FAIL {}: {}\n     {d}", q.id, q.logql);
                failures.push(format!("{}: differs from Loki: {d}", q.id));
            }
        }
    }
    for id in gaps.keys() {
        if !queries.iter().any(|q| &q.id == id) {
            failures.push(format!(
                "{id}: listed as a known gap but not in the query list"
            ));
        }
    }
    let _ = writeln!(report, "\n{:<14} {:>5} {:>5}", "feature", "equal", "total");
    for (f, (ok, total)) in &features {
        let _ = writeln!(report, "{f:<14} {ok:>5} {total:>5}");
    }
    let _ = writeln!(report, "\nknown gaps by reason:");
    for (reason, n) in &by_reason {
        let _ = writeln!(report, "  {n:>3}  {reason}");
    }
    let _ = writeln!(
        report,
        "\nLoki returned non-empty data for {loki_has_data} of {} queries",
        queries.len()
    );
    let _ = writeln!(report, "parity: {equal}/{} equal", queries.len());
    Verdict { report, failures }
}

fn has_data(a: &Compared) -> bool {
    a.json
        .as_ref()
        .and_then(|v| v.pointer("/data/result"))
        .is_some_and(|r| match r {
            Value::Array(items) => !items.is_empty(),
            Value::Null => false,
            _ => true,
        })
}

/// Prints the verdict and fails the test on unexpected differences.
pub fn enforce(verdict: &Verdict) {
    println!("{}", verdict.report);
    assert!(
        verdict.failures.is_empty(),
        "{} differential failure(s):\n{}",
        verdict.failures.len(),
        verdict.failures.join("\n")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_lines_parse_with_defaults_and_flags() {
        let qs = parse_queries(
            "# c\nlf.01 range limit=5 dir=forward cat :: {app=\"a\"} |= \"x\"\nm.01 instant time=+5m :: sum(rate({app=\"a\"}[1m]))\n",
        )
        .unwrap();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].feature(), "lf");
        assert!(qs[0].categorize);
        let (path, params) = qs[0].request(1_000_000_000_000);
        assert_eq!(path, "/loki/api/v1/query_range");
        assert!(params.contains(&("start".into(), "940000000000".into())));
        assert!(params.contains(&("direction".into(), "forward".into())));
        let (path, params) = qs[1].request(0);
        assert_eq!(path, "/loki/api/v1/query");
        assert!(params.contains(&("time".into(), "300000000000".into())));
        assert_eq!(parse_offset_ns("+3m30s"), Some(210_000_000_000));
        assert_eq!(parse_offset_ns("-1m"), Some(-60_000_000_000));
        assert_eq!(parse_offset_ns("+1s500ms1ns"), Some(1_500_000_001));
        assert_eq!(parse_offset_ns("5"), None);
        assert!(parse_queries("x range :: a\nx range :: b").is_err());
        assert!(parse_queries("x range bogus=1 :: a").is_err());
    }

    #[test]
    fn metadata_lines_ask_their_endpoints() {
        let qs = parse_queries(
            "m.01 labels ::\nm.02 values=pod :: {a=\"b\"}\nm.03 series start=+1m :: {a=~\"b|c\"}\n",
        )
        .unwrap();
        let (path, params) = qs[0].request(0);
        assert_eq!(path, "/loki/api/v1/labels");
        assert!(params.iter().all(|(k, _)| k != "query"), "{params:?}");
        let (path, params) = qs[1].request(0);
        assert_eq!(path, "/loki/api/v1/label/pod/values");
        assert!(params.contains(&("query".into(), "{a=\"b\"}".into())));
        let (path, params) = qs[2].request(0);
        assert_eq!(path, "/loki/api/v1/series");
        assert!(params.contains(&("match[]".into(), "{a=~\"b|c\"}".into())));
        assert!(params.contains(&("start".into(), "60000000000".into())));
        assert!(parse_queries("m.04 bogus :: {}").is_err());
    }
}
