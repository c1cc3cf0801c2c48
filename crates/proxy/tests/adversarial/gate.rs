//! Harness of the adversarial suite (`tests/adversarial.rs`): lokivl as a
//! real process and the three survival assertions, a fake VictoriaLogs with
//! row datasets and tail behaviours, a real VictoriaLogs when
//! `LOKIVL_VL_BIN` names one, and the HTTP and WebSocket clients the attacks use.
#![allow(dead_code, unreachable_pub, missing_docs)]

pub mod fake;
pub mod http;
pub mod process;
pub mod real_vl;
pub mod rows;
pub mod ws;

use std::path::PathBuf;

use tokio::sync::{Semaphore, SemaphorePermit};

/// The cases share two cores with the rest of `cargo test`: at most two run
/// at once, and a CPU-heavy case takes both permits.
static GATE: Semaphore = Semaphore::const_new(2);

/// Waits for `weight` (1 or 2) of the suite's two run permits.
pub async fn gate(weight: u32) -> SemaphorePermit<'static> {
    GATE.acquire_many(weight)
        .await
        .expect("gate is never closed")
}

/// A file in the temp directory, removed when dropped (also when the case fails).
pub struct TempFile(pub PathBuf);

impl TempFile {
    /// Writes `text` to a fresh file named after `name` and this process.
    pub fn new(name: &str, text: &str) -> TempFile {
        let path =
            std::env::temp_dir().join(format!("lokivl-adversarial-{name}-{}", std::process::id()));
        std::fs::write(&path, text).expect("write a temp file");
        TempFile(path)
    }

    pub fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
