//! The Loki side of the differential suite: a real Loki process on loopback.
//!
//! The suite compares lokivl with Loki itself, so it starts the binary from
//! `LOKIVL_LOKI_BIN` (or `loki` on PATH) with the committed config
//! `tests/data/loki.yaml`, pushes the dataset and asks it the same queries.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::client;

/// Finds the Loki binary: `LOKIVL_LOKI_BIN`, else `loki` on PATH.
pub fn find_loki_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LOKIVL_LOKI_BIN") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("loki"))
            .find(|p| p.is_file())
    })
}

/// A Loki process with a fresh data directory, killed on drop.
pub struct Loki {
    child: Child,
    pub url: String,
    dir: PathBuf,
}

impl Drop for Loki {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// The committed Loki configuration template.
pub fn config_template() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/loki.yaml");
    std::fs::read_to_string(&path).expect("tests/data/loki.yaml is readable")
}

impl Loki {
    /// Starts Loki and waits until `/ready` answers 200 (about 17 s).
    pub async fn start(bin: &Path) -> Loki {
        Self::start_with(bin, |config| config).await
    }

    /// Like [`Loki::start`], with `edit` applied to the rendered config
    /// (suites that need other Loki settings override them here).
    pub async fn start_with(bin: &Path, edit: impl FnOnce(String) -> String) -> Loki {
        let http_port = free_port();
        let grpc_port = free_port();
        let dir = std::env::temp_dir().join(format!(
            "lokivl-diff-loki-{}-{http_port}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create Loki dir");
        let config = edit(
            config_template()
                .replace("__DIR__", &dir.display().to_string())
                .replace("__HTTP_PORT__", &http_port.to_string())
                .replace("__GRPC_PORT__", &grpc_port.to_string()),
        );
        let config_path = dir.join("loki.yaml");
        std::fs::write(&config_path, config).expect("write Loki config");
        let log = std::fs::File::create(dir.join("loki.log")).expect("create Loki log");
        let child = Command::new(bin)
            .arg(format!("-config.file={}", config_path.display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start Loki");
        let loki = Loki {
            child,
            url: format!("http://127.0.0.1:{http_port}"),
            dir,
        };
        for _ in 0..240 {
            if let Ok((200, _, _)) = client::try_get(&format!("{}/ready", loki.url), &[])
                .await
                .map(client::Answer::parts)
            {
                return loki;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let log = std::fs::read_to_string(loki.dir.join("loki.log")).unwrap_or_default();
        let tail: String = log.lines().rev().take(20).collect::<Vec<_>>().join("\n");
        panic!(
            "Loki did not become ready at {} within 60 s; log tail:\n{tail}",
            loki.url
        );
    }

    /// POSTs a JSON body to `path`; the status, or 0 when Loki cannot be reached.
    pub async fn post(&self, path: &str, body: String) -> u16 {
        client::try_post(
            &format!("{}{path}", self.url),
            "application/json",
            body.into_bytes(),
        )
        .await
        .map(client::Answer::parts)
        .map(|a| a.0)
        .unwrap_or(0)
    }

    /// POSTs `body` as `content_type` to `path`; the status, or 0 when
    /// Loki cannot be reached (the OTLP push of the OTel dataset).
    pub async fn post_bytes(&self, path: &str, content_type: &str, body: Vec<u8>) -> u16 {
        client::try_post(&format!("{}{path}", self.url), content_type, body)
            .await
            .map(client::Answer::parts)
            .map(|a| a.0)
            .unwrap_or(0)
    }

    /// Pushes a Loki JSON push body.
    pub async fn push(&self, body: String) {
        let (status, _, text) = client::try_post(
            &format!("{}/loki/api/v1/push", self.url),
            "application/json",
            body.into_bytes(),
        )
        .await
        .map(client::Answer::parts)
        .expect("push to Loki");
        assert!(
            status == 204 || status == 200,
            "Loki push failed: {status} {text}"
        );
    }
}
