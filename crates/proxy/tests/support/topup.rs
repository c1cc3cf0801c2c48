//! Topping up the golden VictoriaLogs exchanges: `LOKIVL_RECORD_GOLDEN=missing`.
//!
//! When lokivl's translation changes, it sends VictoriaLogs requests the
//! recordings lack, and the replays fail with "no golden VictoriaLogs
//! response". A full re-record rewrites every key (keys and bodies hold the
//! recording's base time) and needs a live Loki. A top-up needs only the
//! VictoriaLogs binary of one release (`LOKIVL_VL_BIN`): each replay test
//! starts it, pushes the suite's dataset at the golden's own `base_ns`
//! through the endpoint the live run uses (never to Loki), and runs lokivl
//! and every variant as the replay does through a tap that answers recorded
//! keys from the golden and fetches only the missing ones from
//! VictoriaLogs. The golden is then written back holding exactly the
//! exchanges this run used: recorded ones byte for byte, fetched ones
//! added, unused ones dropped (except when a run is cut short by a panic,
//! and in the Drilldown walk-through, whose replay leaves out the live
//! run's clock-dependent `windows-5m` variant: there nothing is dropped, so
//! an unchanged golden stays byte for byte). `loki.json` is never touched,
//! and the answers are judged as in the replay. Only the binary's release
//! is topped up (and judged); the other releases' replays are skipped in
//! that run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::backend::{self, Golden, Tap, VL_RELEASES, VictoriaLogs};
use super::differential::{self, VlGolden};

/// What `LOKIVL_RECORD_GOLDEN` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recording {
    /// Unset: live suites check, replays replay.
    Off,
    /// `missing`: the replays top up the release of `LOKIVL_VL_BIN`.
    Missing,
    /// Any other value: the live suites rewrite their goldens whole.
    Full,
}

/// The recording mode `LOKIVL_RECORD_GOLDEN` asks for.
pub fn recording() -> Recording {
    match std::env::var_os("LOKIVL_RECORD_GOLDEN") {
        None => Recording::Off,
        Some(v) if v == "missing" => Recording::Missing,
        Some(_) => Recording::Full,
    }
}

/// Whether a live suite records its goldens whole.
pub fn records_whole() -> bool {
    recording() == Recording::Full
}

/// True (after one printed line) when a live test should skip because the
/// run tops up the replays: the live suites would only repeat, slower, what
/// the replays check.
pub fn live_skips() -> bool {
    let skip = recording() == Recording::Missing;
    if skip {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: LOKIVL_RECORD_GOLDEN=missing tops up the replays only\n"),
        );
    }
    skip
}

/// The Loki and VictoriaLogs binaries of a live suite, as
/// [`differential::servers`]; `None` also when the run tops up.
pub fn servers() -> Option<(PathBuf, PathBuf)> {
    if live_skips() {
        return None;
    }
    differential::servers()
}

/// The VictoriaLogs binary and release a top-up run writes to; `None`
/// unless `LOKIVL_RECORD_GOLDEN=missing`. Panics without `LOKIVL_VL_BIN`
/// (or `victoria-logs` on PATH): a top-up needs the real server.
pub fn target() -> Option<(PathBuf, String)> {
    if recording() != Recording::Missing {
        return None;
    }
    let bin = backend::find_vl_binary().unwrap_or_else(|| {
        panic!("LOKIVL_RECORD_GOLDEN=missing needs a VictoriaLogs binary: set LOKIVL_VL_BIN")
    });
    let release = backend::release_of(&bin);
    assert!(
        VL_RELEASES.contains(&release.as_str()),
        "{} is VictoriaLogs {release}, which has no goldens to top up ({VL_RELEASES:?})",
        bin.display()
    );
    Some((bin, release))
}

/// The releases a replay test runs: every recorded one, or in a top-up run
/// only the binary's (the others are left to a plain replay).
pub fn releases() -> Vec<&'static str> {
    match target() {
        None => VL_RELEASES.to_vec(),
        Some((_, release)) => {
            println!("top-up run: replaying VictoriaLogs {release} only");
            VL_RELEASES
                .iter()
                .copied()
                .filter(|r| *r == release)
                .collect()
        }
    }
}

/// The golden written back: the recorded exchanges whose keys were `used`,
/// unchanged, plus the `fresh` ones fetched for missing keys; every other
/// recorded exchange is dropped. A fresh key the recording already holds
/// keeps the recorded exchange.
pub fn merge(recorded: &Golden, used: &BTreeSet<String>, fresh: Golden) -> Golden {
    let mut out: Golden = recorded
        .iter()
        .filter(|(k, _)| used.contains(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in fresh {
        out.entry(k).or_insert(v);
    }
    out
}

/// Where a replay's VictoriaLogs answers come from: the golden alone, or
/// in a top-up run the golden and a live VictoriaLogs holding the dataset.
pub struct Source {
    pub tap: Tap,
    /// The live server of a top-up.
    vl: Option<VictoriaLogs>,
    recorded: Golden,
}

impl Source {
    /// A replay of `golden` recorded from VictoriaLogs `release`, or when
    /// the run tops up that release, a tap in front of a fresh VictoriaLogs
    /// into which `push` has put the suite's dataset (as the live run does).
    pub async fn open(
        release: &str,
        golden: Golden,
        push: impl AsyncFnOnce(&VictoriaLogs),
    ) -> Source {
        match target() {
            Some((bin, r)) if r == release => {
                let vl = VictoriaLogs::start(&bin).await;
                push(&vl).await;
                let tap = Tap::topping_up(golden.clone(), &vl.url).await;
                Source {
                    tap,
                    vl: Some(vl),
                    recorded: golden,
                }
            }
            _ => Source {
                tap: Tap::replaying(golden).await,
                vl: None,
                recorded: Golden::new(),
            },
        }
    }

    /// In a top-up, writes the merged golden to `path`: wrapped with
    /// `base_ns` as the differential suites store it, or the bare exchange
    /// map (the e2e golden) when `None`. Recorded exchanges the run did not
    /// use are dropped only with `drop_unused`: false when the run stopped
    /// early, or when the replay asks less than the live run recorded.
    /// Stops the server. Nothing happens for a plain replay.
    pub fn finish(self, path: &Path, base_ns: Option<i64>, drop_unused: bool) {
        let Some(log) = self.tap.topped_up() else {
            return;
        };
        drop(self.vl);
        let asked = log.used.len();
        let used = if drop_unused {
            log.used
        } else {
            self.recorded.keys().cloned().collect()
        };
        let added = log.fresh.len();
        let dropped = self.recorded.len() - used.len();
        let unasked = used.len() - asked;
        let exchanges = merge(&self.recorded, &used, log.fresh);
        match base_ns {
            Some(base_ns) => write_pretty(path, &VlGolden { base_ns, exchanges }),
            None => write_pretty(path, &exchanges),
        }
        println!(
            "topped up {}: {asked} asked and kept, {unasked} unasked and kept, {added} added, \
             {dropped} dropped",
            path.display()
        );
    }
}

/// Writes `value` as every golden writer does: pretty JSON (maps sorted
/// by key) and a final newline, so an unchanged golden is written back
/// byte for byte.
pub fn write_pretty<T: Serialize>(path: &Path, value: &T) {
    let text = serde_json::to_string_pretty(value).expect("serialize golden");
    std::fs::write(path, text + "\n").expect("write golden file");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::backend::Exchange;

    fn ex(body: &str) -> Exchange {
        Exchange {
            status: 200,
            content_type: "application/json".to_owned(),
            body: body.to_owned(),
        }
    }

    #[test]
    fn merge_keeps_used_entries_adds_fresh_and_drops_unused() {
        let recorded: Golden = [
            ("/select/logsql/query a".to_owned(), ex("{\"old\":1}\n")),
            ("/select/logsql/query b".to_owned(), ex("{\"old\":2}\n")),
            ("/select/logsql/hits c".to_owned(), ex("{\"old\":3}\n")),
        ]
        .into();
        let used: BTreeSet<String> = ["/select/logsql/query a", "/select/logsql/hits c"]
            .map(str::to_owned)
            .into();
        let fresh: Golden = [
            ("/select/logsql/query d".to_owned(), ex("{\"new\":4}\n")),
            // A fetched key the recording has (two requests raced) keeps
            // the recorded bytes.
            ("/select/logsql/hits c".to_owned(), ex("{\"new\":3}\n")),
        ]
        .into();
        let out = merge(&recorded, &used, fresh);
        let keys: Vec<&str> = out.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "/select/logsql/hits c",
                "/select/logsql/query a",
                "/select/logsql/query d"
            ]
        );
        assert_eq!(out["/select/logsql/query a"].body, "{\"old\":1}\n");
        assert_eq!(out["/select/logsql/hits c"].body, "{\"old\":3}\n");
        assert_eq!(out["/select/logsql/query d"].body, "{\"new\":4}\n");
        assert!(!out.contains_key("/select/logsql/query b"));
    }

    #[test]
    fn an_unchanged_golden_is_written_back_byte_for_byte() {
        let recorded: Golden = [
            (
                "/select/logsql/query q=%7B%7D".to_owned(),
                ex("{\"a\":\"é\\n\"}\n"),
            ),
            ("/metrics ".to_owned(), ex("vm_app_version 1\n")),
        ]
        .into();
        let golden = VlGolden {
            base_ns: 1_795_000_000_000_000_000,
            exchanges: recorded.clone(),
        };
        let dir = std::env::temp_dir().join(format!("lokivl-topup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("victorialogs.json");
        write_pretty(&path, &golden);
        let before = std::fs::read(&path).unwrap();
        let text = String::from_utf8(before.clone()).unwrap();
        let read: VlGolden = serde_json::from_str(&text).unwrap();
        let used = read.exchanges.keys().cloned().collect();
        let exchanges = merge(&read.exchanges, &used, Golden::new());
        write_pretty(
            &path,
            &VlGolden {
                base_ns: read.base_ns,
                exchanges,
            },
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
