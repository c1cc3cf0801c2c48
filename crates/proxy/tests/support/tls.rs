//! The TLS mode of the kit: a test-time PKI (a self-signed CA, a server
//! certificate for 127.0.0.1/localhost and a client certificate, written as
//! PEM files), the HTTPS side of the client ([`https_get`], answering the
//! kit's one [`Answer`]). The fake VictoriaLogs serves HTTPS with it
//! ([`super::fake_vl::Builder::tls`]).

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::client::{Answer, error_chain};

/// PEM files of one test PKI, in a directory removed on drop.
pub struct Pki {
    pub dir: PathBuf,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A second CA that signed nothing here (for "wrong CA" cases).
    pub other_ca: PathBuf,
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ca(name: &str) -> (CertificateParams, KeyPair, String) {
    let key = KeyPair::generate().unwrap();
    let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, name);
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let pem = p.self_signed(&key).unwrap().pem();
    (p, key, pem)
}

/// Generates the PKI under a fresh temporary directory named after `tag`.
pub fn pki(tag: &str) -> Pki {
    let dir = std::env::temp_dir().join(format!("lokivl-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ca_params, ca_key, ca_pem) = ca("lokivl test CA");
    let (_, _, other_pem) = ca("some other CA");
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate().unwrap();
    let mut sp =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    sp.distinguished_name
        .push(DnType::CommonName, "lokivl test server");
    sp.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server = sp.signed_by(&server_key, &issuer).unwrap();

    let client_key = KeyPair::generate().unwrap();
    let mut cp = CertificateParams::new(Vec::<String>::new()).unwrap();
    cp.distinguished_name.push(DnType::CommonName, "grafana");
    cp.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client = cp.signed_by(&client_key, &issuer).unwrap();

    let write = |name: &str, pem: &str| {
        let p = dir.join(name);
        std::fs::write(&p, pem).unwrap();
        p
    };
    Pki {
        ca: write("ca.pem", &ca_pem),
        other_ca: write("other-ca.pem", &other_pem),
        server_cert: write("server.pem", &server.pem()),
        server_key: write("server.key", &server_key.serialize_pem()),
        client_cert: write("client.pem", &client.pem()),
        client_key: write("client.key", &client_key.serialize_pem()),
        dir,
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls client config trusting `ca`, presenting `client` (cert, key) when given.
pub fn client_config(ca: &PathBuf, client: Option<(&PathBuf, &PathBuf)>) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let b = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            b.with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(key).unwrap())
                .unwrap()
        }
        None => b.with_no_client_auth(),
    }
}

/// GET `url` over HTTPS with `config`; `Err` carries the connection error chain.
pub async fn https_get(config: rustls::ClientConfig, url: &str) -> Result<Answer, String> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .wrap_connector(http);
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let req = http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let t0 = std::time::Instant::now();
    let resp = client.request(req).await.map_err(|e| error_chain(&e))?;
    let (head, body) = resp.into_parts();
    let body = body.collect().await.map_err(|e| e.to_string())?;
    Ok(Answer::from_parts(
        head.status,
        head.headers,
        &body.to_bytes(),
        t0,
    ))
}
