//! `--tenant-map`: tenant names to VictoriaLogs tenants, reloaded when the file changes.
//!
//! The file is YAML (JSON is accepted too, being YAML):
//!
//! ```yaml
//! team-a: {account_id: 1, project_id: 0}
//! team-b: {account_id: 2}          # project_id defaults to 0
//! ```
//!
//! Reloading polls the file's modification time and size at most once per
//! `reload_interval`, on the request path (one `stat`, no background task).
//! A file that no longer parses is logged and the previous map kept, so a
//! bad edit cannot open or close every tenant at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use super::VlTenant;

/// Why the map file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// The file could not be read.
    #[error("cannot read tenant map {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// The file is not a mapping of names to `{account_id, project_id}`.
    #[error("tenant map {path}: {reason}")]
    Syntax {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    account_id: u32,
    #[serde(default)]
    project_id: u32,
}

/// Parses the map text; `path` only names the file in errors.
///
/// # Errors
/// [`MapError::Syntax`] for bad YAML, unknown keys or names Loki would refuse.
pub fn parse(text: &str, path: &str) -> Result<HashMap<String, VlTenant>, MapError> {
    let bad = |reason: String| MapError::Syntax {
        path: path.to_owned(),
        reason,
    };
    if text.trim().is_empty() {
        return Ok(HashMap::new());
    }
    let raw: HashMap<String, Entry> =
        serde_yaml_ng::from_str(text).map_err(|e| bad(e.to_string()))?;
    let mut out = HashMap::with_capacity(raw.len());
    for (name, e) in raw {
        if let Err(reason) = super::resolve::check_id(&name) {
            return Err(bad(format!("name {name:?}: {reason}")));
        }
        out.insert(
            name,
            VlTenant {
                account_id: e.account_id,
                project_id: e.project_id,
            },
        );
    }
    Ok(out)
}

/// What identifies a version of the file.
type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.modified().ok(), m.len()))
}

/// A loaded map that reloads itself when its file changes; clones share it.
#[derive(Debug, Clone)]
pub struct TenantMap {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    interval: Duration,
    map: RwLock<Arc<HashMap<String, VlTenant>>>,
    /// When the file was last looked at, and what it looked like.
    checked: Mutex<(Instant, Option<Stamp>)>,
    reloading: AtomicBool,
}

impl TenantMap {
    /// Loads `path`; it is looked at again at most every `interval`.
    ///
    /// # Errors
    /// [`MapError`] when the file cannot be read or parsed at startup.
    pub fn load(path: &Path, interval: Duration) -> Result<Self, MapError> {
        let st = stamp(path);
        let map = read(path)?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                interval,
                map: RwLock::new(Arc::new(map)),
                checked: Mutex::new((Instant::now(), st)),
                reloading: AtomicBool::new(false),
            }),
        })
    }

    /// Looks `name` up, reloading the file first when it is due and changed.
    pub fn get(&self, name: &str) -> Option<VlTenant> {
        self.maybe_reload();
        let map = match self.inner.map.read() {
            Ok(m) => Arc::clone(&m),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        };
        map.get(name).copied()
    }

    /// Number of names currently mapped.
    pub fn len(&self) -> usize {
        self.inner.map.read().map_or(0, |m| m.len())
    }

    /// Whether no name is mapped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn maybe_reload(&self) {
        let inner = &self.inner;
        let due = inner
            .checked
            .lock()
            .map(|c| c.0.elapsed() >= inner.interval)
            .unwrap_or(true);
        // One request does the check; the others keep using the current map.
        if !due || inner.reloading.swap(true, Ordering::AcqRel) {
            return;
        }
        let st = stamp(&inner.path);
        let changed = inner.checked.lock().map_or(true, |c| c.1 != st);
        if changed {
            match read(&inner.path) {
                Ok(map) => {
                    tracing::info!(path = %inner.path.display(), tenants = map.len(), "tenant map reloaded");
                    if let Ok(mut m) = inner.map.write() {
                        *m = Arc::new(map);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "tenant map not reloaded; keeping the previous one")
                }
            }
        }
        if let Ok(mut c) = inner.checked.lock() {
            *c = (Instant::now(), st);
        }
        inner.reloading.store(false, Ordering::Release);
    }
}

fn read(path: &Path) -> Result<HashMap<String, VlTenant>, MapError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MapError::Read {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    parse(&text, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_and_json() {
        let m = parse(
            "team-a: {account_id: 1, project_id: 2}\nteam-b:\n  account_id: 3\n",
            "f",
        )
        .unwrap();
        assert_eq!(
            m["team-a"],
            VlTenant {
                account_id: 1,
                project_id: 2
            }
        );
        assert_eq!(m["team-b"].project_id, 0);
        let j = parse(r#"{"x": {"account_id": 7, "project_id": 8}}"#, "f").unwrap();
        assert_eq!(j["x"].account_id, 7);
        assert!(parse("", "f").unwrap().is_empty());
    }

    #[test]
    fn bad_files_are_refused() {
        for bad in [
            "a: {account_id: -1}",
            "a: {accountid: 1}",
            "a: 3",
            "\"a b\": {account_id: 1}",
            "- a",
        ] {
            assert!(parse(bad, "f").is_err(), "{bad}");
        }
    }

    #[test]
    fn reloads_on_change_and_keeps_old_map_on_error() {
        let dir = std::env::temp_dir().join(format!("lokivl-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("map.yaml");
        std::fs::write(&path, "a: {account_id: 1}\n").unwrap();
        let m = TenantMap::load(&path, Duration::ZERO).unwrap();
        assert_eq!(m.get("a").unwrap().account_id, 1);
        assert!(m.get("b").is_none());
        std::fs::write(
            &path,
            "a: {account_id: 1}\nb: {account_id: 22, project_id: 3}\n",
        )
        .unwrap();
        assert_eq!(
            m.get("b"),
            Some(VlTenant {
                account_id: 22,
                project_id: 3
            })
        );
        std::fs::write(&path, "b: [not, a, mapping]\n").unwrap();
        assert_eq!(m.get("b").unwrap().account_id, 22);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
