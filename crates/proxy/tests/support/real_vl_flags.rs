//! A real VictoriaLogs process for the cases that ingest hostile lines:
//! found through `LOKIVL_VL_BIN` (or `victoria-logs` on `PATH`); without one
//! the case prints one line and passes.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::http;

/// The VictoriaLogs binary, if there is one.
pub fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LOKIVL_VL_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("victoria-logs"))
            .find(|p| p.is_file())
    })
}

/// A VictoriaLogs on a free loopback port with a fresh data directory, killed on drop.
pub struct RealVl {
    child: Child,
    pub url: String,
    data: PathBuf,
}

impl Drop for RealVl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

impl RealVl {
    /// Starts VictoriaLogs with `flags` added and waits for `/health`.
    pub async fn start(bin: &PathBuf, flags: &[&str]) -> RealVl {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let data = std::env::temp_dir().join(format!(
            "lokivl-adversarial-vl-{}-{port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&data);
        let child = Command::new(bin)
            .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
            .arg(format!("-storageDataPath={}", data.display()))
            .arg("-retentionPeriod=100y")
            .arg("-loggerLevel=ERROR")
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start VictoriaLogs");
        let vl = RealVl {
            child,
            url: format!("http://127.0.0.1:{port}"),
            data,
        };
        for _ in 0..200 {
            if let Ok(a) = http::get(&format!("{}/health", vl.url), Duration::from_secs(1)).await
                && a.status == 200
            {
                return vl;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("VictoriaLogs did not become healthy at {}", vl.url);
    }

    /// Pushes `lines` (time, text) of stream `{app="<app>"}` through
    /// VictoriaLogs' Loki push endpoint, messages kept raw, and makes them searchable.
    pub async fn push(&self, app: &str, lines: &[(i64, String)]) {
        let values: Vec<serde_json::Value> = lines
            .iter()
            .map(|(t, l)| serde_json::json!([t.to_string(), l]))
            .collect();
        let body = serde_json::json!({"streams": [{"stream": {"app": app}, "values": values}]})
            .to_string();
        let a = http::send(
            "POST",
            &format!(
                "{}/insert/loki/api/v1/push?disable_message_parsing=1",
                self.url
            ),
            &[("content-type", "application/json")],
            body.into_bytes(),
            Duration::from_secs(60),
        )
        .await
        .expect("push to VictoriaLogs");
        assert!(
            a.status == 200 || a.status == 204,
            "push failed: {}",
            a.short()
        );
        let f = http::get(
            &format!("{}/internal/force_flush", self.url),
            Duration::from_secs(60),
        )
        .await
        .expect("flush VictoriaLogs");
        assert_eq!(f.status, 200, "flush: {}", f.short());
    }
}
