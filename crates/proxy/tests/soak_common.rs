//! A real VictoriaLogs process for the push and soak suites (`LOKIVL_VL_BIN`
//! or `victoria-logs` on PATH), plus a tiny HTTP client. Included with
//! `mod soak_common;`.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The VictoriaLogs binary, if this machine has one.
pub fn vl_binary() -> Option<PathBuf> {
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

/// A VictoriaLogs process on a free port, killed (and its data removed) on drop.
pub struct Vl {
    child: Child,
    pub url: String,
    dir: PathBuf,
}

impl Drop for Vl {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Vl {
    pub async fn start(bin: &std::path::Path, name: &str) -> Vl {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("lokivl-{name}-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let child = Command::new(bin)
            .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
            .arg(format!("-storageDataPath={}", dir.display()))
            .arg("-retentionPeriod=100y")
            .arg("-loggerLevel=ERROR")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start VictoriaLogs");
        let vl = Vl {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        };
        for _ in 0..100 {
            if let Ok((200, _)) = send("GET", &format!("{}/health", vl.url), &[], Vec::new()).await
            {
                return vl;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("VictoriaLogs did not become healthy at {}", vl.url);
    }

    /// Makes everything pushed so far searchable.
    pub async fn flush(&self) {
        let (s, _) = send(
            "GET",
            &format!("{}/internal/force_flush", self.url),
            &[],
            Vec::new(),
        )
        .await
        .unwrap();
        assert_eq!(s, 200);
    }
}

/// One request; status and body text.
pub async fn send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<(u16, String), String> {
    let client: Client<HttpConnector, Full<bytes::Bytes>> =
        Client::builder(TokioExecutor::new()).build(HttpConnector::new());
    send_with(&client, method, url, headers, body).await
}

/// One request on a shared client.
pub async fn send_with(
    client: &Client<HttpConnector, Full<bytes::Bytes>>,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<(u16, String), String> {
    let mut b = http::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b
        .body(Full::new(bytes::Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = client.request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// Starts lokivl in front of `backend` with `f` applied to its settings.
pub async fn start_lokivl(backend: &str, f: impl FnOnce(&mut proxy::config::Settings)) -> String {
    let mut s = proxy::config::Settings::new(backend).unwrap();
    f(&mut s);
    let router = proxy::app::router(s).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(proxy::app::serve(listener, router, std::future::pending()));
    format!("http://{addr}")
}
