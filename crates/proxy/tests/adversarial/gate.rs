//! What the adversarial cases share beyond the kit: the run gate (two
//! permits, CPU-heavy cases take both), temp files, the verdict on a hostile
//! request's answer, and the kit's client with a deadline on every request.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use crate::support::client::{self, Answer};

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

/// GET with the case's deadline.
pub async fn get(url: &str, deadline: Duration) -> Result<Answer, String> {
    client::get_within(url, &[], deadline).await
}

/// GET with headers and the case's deadline.
pub async fn get_with(
    url: &str,
    headers: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    client::get_within(url, headers, deadline).await
}

/// POSTs `pairs` as a form, with the case's deadline.
pub async fn post_form(
    url: &str,
    pairs: &[(&str, &str)],
    deadline: Duration,
) -> Result<Answer, String> {
    client::post_form_within(url, pairs, deadline).await
}

/// Whether the answer is one lokivl may give to a hostile request: 200, or a
/// 4xx refusal. A 5xx, a dropped connection or no answer is a failure.
pub fn assert_handled(case: &str, what: &str, r: &Result<Answer, String>) {
    match r {
        Ok(a) if a.status == 200 || a.status.is_client_error() => {}
        Ok(a) => panic!("{case}: {what}: expected 200 or a 4xx, got {}", a.short()),
        Err(e) => panic!("{case}: {what}: {e}"),
    }
}
