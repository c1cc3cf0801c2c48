//! TLS towards VictoriaLogs (`https://` backend URLs).
//!
//! rustls with the `ring` provider, chosen explicitly so the process never
//! depends on a global default provider. Server certificates are checked
//! against the system's trust store, or only against `--backend-tls-ca-file`
//! when one is given (a private CA), or not at all with
//! `--backend-tls-insecure-skip-verify` (handshake signatures are still
//! checked, so only the certificate's identity is taken on trust).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// Why a TLS setting cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// rustls refused the combination (bad key for the certificate, unusable CA).
    #[error("{0}")]
    Config(String),
}

/// The crypto provider every lokivl TLS config uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads every certificate of a PEM file; an empty file is an error.
///
/// # Errors
/// [`TlsError::File`].
pub fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |reason: String| TlsError::File {
        path: path.to_owned(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificate found".into()));
    }
    Ok(certs)
}

/// Reads the first private key (PKCS#8, PKCS#1 or SEC1) of a PEM file.
///
/// # Errors
/// [`TlsError::File`].
pub fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::File {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// A root store holding every certificate of `path`.
///
/// # Errors
/// [`TlsError`] when the file is unreadable or a certificate is not a usable CA.
pub fn read_roots(path: &Path) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    for cert in read_certs(path)? {
        roots.add(cert).map_err(|e| TlsError::File {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    Ok(roots)
}

/// How lokivl verifies VictoriaLogs and presents itself to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackendTlsFiles {
    /// Trust only this CA bundle instead of the system's roots.
    pub ca_file: Option<PathBuf>,
    /// Client certificate chain presented to VictoriaLogs (with `key_file`).
    pub cert_file: Option<PathBuf>,
    /// Key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// Accept any server certificate (testing only).
    pub insecure_skip_verify: bool,
}

/// Builds the client config for an `https://` backend.
///
/// # Errors
/// [`TlsError`] for unreadable files, a key that does not match, or no usable roots.
pub fn client_config(files: &BackendTlsFiles) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = if files.insecure_skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(SkipServerVerification(provider)))
    } else {
        let roots = match &files.ca_file {
            Some(path) => read_roots(path)?,
            None => native_roots()?,
        };
        builder.with_root_certificates(roots)
    };
    // No ALPN here: hyper-rustls sets it from the enabled HTTP versions (and refuses a preset one).
    let config = match (&files.cert_file, &files.key_file) {
        (Some(cert), Some(key)) => builder
            .with_client_auth_cert(read_certs(cert)?, read_key(key)?)
            .map_err(|e| TlsError::Config(format!("backend client certificate: {e}")))?,
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(TlsError::Config(
                "--backend-tls-cert-file and --backend-tls-key-file go together".into(),
            ));
        }
    };
    Ok(Arc::new(config))
}

/// A config for plain-HTTP backends: the connector needs one, it is never used.
pub fn unused_client_config() -> Arc<ClientConfig> {
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map(|b| {
            b.with_root_certificates(RootCertStore::empty())
                .with_no_client_auth()
        });
    match config {
        Ok(c) => Arc::new(c),
        // ring's provider supports the default versions; keep a usable value regardless.
        Err(_) => Arc::new(
            ClientConfig::builder()
                .with_root_certificates(RootCertStore::empty())
                .with_no_client_auth(),
        ),
    }
}

/// The operating system's trust store (what `curl` trusts on the same host).
fn native_roots() -> Result<RootCertStore, TlsError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none installed".to_owned(), ToString::to_string);
        return Err(TlsError::Config(format!(
            "no system CA certificates could be loaded ({why}); give --backend-tls-ca-file"
        )));
    }
    Ok(roots)
}

/// Whether a connection error is a refused certificate, and the hint to give then.
pub fn certificate_hint(e: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        let tls = rustls_error(err);
        if let Some(rustls::Error::InvalidCertificate(_)) = tls {
            return Some(
                "VictoriaLogs' certificate is not trusted; set --backend-tls-ca-file to the CA that signed it",
            );
        }
        cur = err.source();
    }
    None
}

/// The rustls error in `e`, looking into nested `io::Error`s (hyper-rustls wraps
/// tokio-rustls' `io::Error` in another one; `source()` skips such wrappers).
fn rustls_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    if let Some(tls) = e.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    let inner = e.downcast_ref::<std::io::Error>()?.get_ref()?;
    rustls_error(inner)
}

/// `--backend-tls-insecure-skip-verify`: any certificate, but a real handshake signature.
#[derive(Debug)]
struct SkipServerVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for SkipServerVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_empty_files_are_errors() {
        let dir = std::env::temp_dir().join(format!("lokivl-btls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let err = read_certs(&empty).unwrap_err();
        assert!(err.to_string().contains("no PEM certificate"), "{err}");
        let files = BackendTlsFiles {
            ca_file: Some(dir.join("absent.pem")),
            ..BackendTlsFiles::default()
        };
        let err = client_config(&files).unwrap_err();
        assert!(err.to_string().contains("absent.pem"), "{err}");
        let half = BackendTlsFiles {
            cert_file: Some(empty.clone()),
            insecure_skip_verify: true,
            ..BackendTlsFiles::default()
        };
        assert!(matches!(client_config(&half), Err(TlsError::Config(_))));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn hint_found_through_io_error() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::other(tls);
        assert!(certificate_hint(&io).is_some());
        let plain = std::io::Error::other("refused");
        assert!(certificate_hint(&plain).is_none());
        // Nested, as hyper-rustls wraps tokio-rustls' error.
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::Expired);
        let nested = std::io::Error::other(std::io::Error::other(tls));
        assert!(certificate_hint(&nested).is_some());
    }
}
