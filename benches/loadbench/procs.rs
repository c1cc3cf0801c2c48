//! Starting VictoriaLogs and lokivl, or attaching to running ones.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::client::Target;

/// Marks a data directory as created by loadbench, so it may be wiped.
const MARKER: &str = ".loadbench";

/// A process under test: started by us (killed on drop) or attached by pid.
#[derive(Debug)]
pub(crate) struct Proc {
    /// Name in reports.
    pub(crate) name: &'static str,
    /// Base URL.
    pub(crate) url: String,
    /// Pid for `/proc` readings, if known.
    pub(crate) pid: Option<u32>,
    child: Option<Child>,
}

impl Proc {
    /// A process started elsewhere.
    pub(crate) fn attached(name: &'static str, url: String, pid: Option<u32>) -> Self {
        Self {
            name,
            url,
            pid,
            child: None,
        }
    }

    /// Starts `bin` with `args`, output discarded, killed when dropped.
    ///
    /// # Errors
    /// The binary cannot be started.
    pub(crate) fn start(
        name: &'static str,
        url: String,
        bin: &Path,
        args: &[String],
    ) -> anyhow::Result<Self> {
        let child = Command::new(bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        Ok(Self {
            name,
            url,
            pid: Some(child.id()),
            child: Some(child),
        })
    }

    /// Waits until `path` answers 200, up to `limit`; fails at once if a
    /// process we started has exited (so a port taken by someone else is
    /// never mistaken for our process).
    ///
    /// # Errors
    /// The process exited or did not get ready in time.
    pub(crate) async fn wait_ready(
        &mut self,
        target: &Target,
        path: &str,
        limit: Duration,
    ) -> anyhow::Result<()> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                bail!("{} exited during start-up: {status}", self.name);
            }
            if target.get(path, &[]).await.status == 200 {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("{} at {} not ready after {limit:?}", self.name, self.url)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Resolves a listen address: `auto` picks a free loopback port; an explicit
/// address must be free now, so a process already listening there is never
/// measured (or written to) by mistake.
///
/// # Errors
/// The address is in use or does not parse.
pub(crate) fn listen_addr(flag: &str) -> anyhow::Result<String> {
    let want = if flag == "auto" { "127.0.0.1:0" } else { flag };
    let l = std::net::TcpListener::bind(want)
        .with_context(|| format!("{want} is not free; pick another address or `auto`"))?;
    Ok(l.local_addr()?.to_string())
}

/// Prepares an empty data directory: creates it, or wipes it when an
/// earlier loadbench run left its marker there. Refuses any other non-empty directory.
///
/// # Errors
/// A foreign non-empty directory, or I/O failures.
pub(crate) fn fresh_data_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)?.next().is_none();
        if !empty {
            if !dir.join(MARKER).exists() {
                bail!(
                    "{} is not empty and was not created by loadbench; pick another --data-dir",
                    dir.display()
                );
            }
            std::fs::remove_dir_all(dir).with_context(|| format!("wiping {}", dir.display()))?;
        }
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(MARKER), "created by loadbench\n")?;
    Ok(())
}
