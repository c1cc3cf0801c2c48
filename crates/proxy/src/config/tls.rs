//! TLS flags: the listener's certificate and client CA, and how lokivl
//! verifies (and authenticates to) an `https://` VictoriaLogs.

use std::path::PathBuf;
use std::sync::Arc;

use crate::backend::tls::{BackendTlsFiles, client_config};
use crate::server::tls::{ListenerTlsFiles, server_config};

/// `--tls-*` and `--backend-tls-*`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsFlags {
    /// PEM certificate chain for HTTPS on `--listen` (with `--tls-key-file`).
    #[arg(long, env = "LOKIVL_TLS_CERT_FILE")]
    pub tls_cert_file: Option<PathBuf>,
    /// PEM private key of `--tls-cert-file`.
    #[arg(long, env = "LOKIVL_TLS_KEY_FILE")]
    pub tls_key_file: Option<PathBuf>,
    /// PEM CA bundle: clients must present a certificate it signed (mutual TLS).
    #[arg(long, env = "LOKIVL_TLS_CLIENT_CA_FILE")]
    pub tls_client_ca_file: Option<PathBuf>,
    /// PEM CA bundle trusted for an `https://` backend instead of the system roots.
    #[arg(long, env = "LOKIVL_BACKEND_TLS_CA_FILE")]
    pub backend_tls_ca_file: Option<PathBuf>,
    /// PEM client certificate chain presented to VictoriaLogs (with `--backend-tls-key-file`).
    #[arg(long, env = "LOKIVL_BACKEND_TLS_CERT_FILE")]
    pub backend_tls_cert_file: Option<PathBuf>,
    /// PEM private key of `--backend-tls-cert-file`.
    #[arg(long, env = "LOKIVL_BACKEND_TLS_KEY_FILE")]
    pub backend_tls_key_file: Option<PathBuf>,
    /// Accept any VictoriaLogs certificate (testing only; the connection is then not authenticated).
    #[arg(
        long,
        env = "LOKIVL_BACKEND_TLS_INSECURE_SKIP_VERIFY",
        default_value_t = false
    )]
    pub backend_tls_insecure_skip_verify: bool,
}

/// The validated TLS settings.
#[derive(Debug, Clone, Default)]
pub struct TlsSettings {
    /// HTTPS on the API listener, when configured.
    pub listener: Option<Arc<rustls::ServerConfig>>,
    /// The client config for an `https://` backend (None for `http://`).
    pub backend: Option<Arc<rustls::ClientConfig>>,
}

impl TlsFlags {
    /// Reads the files and builds the rustls configs; `backend_https` says whether they are needed.
    ///
    /// # Errors
    /// A message naming the flag or file at fault.
    pub fn validate(&self, backend_https: bool) -> Result<TlsSettings, String> {
        let listener = match (&self.tls_cert_file, &self.tls_key_file) {
            (Some(cert), Some(key)) => Some(
                server_config(&ListenerTlsFiles {
                    cert_file: cert.clone(),
                    key_file: key.clone(),
                    client_ca_file: self.tls_client_ca_file.clone(),
                })
                .map_err(|e| format!("listener TLS: {e}"))?,
            ),
            (None, None) if self.tls_client_ca_file.is_some() => {
                return Err(
                    "--tls-client-ca-file needs --tls-cert-file and --tls-key-file".to_owned(),
                );
            }
            (None, None) => None,
            _ => return Err("--tls-cert-file and --tls-key-file go together".to_owned()),
        };
        let files = BackendTlsFiles {
            ca_file: self.backend_tls_ca_file.clone(),
            cert_file: self.backend_tls_cert_file.clone(),
            key_file: self.backend_tls_key_file.clone(),
            insecure_skip_verify: self.backend_tls_insecure_skip_verify,
        };
        if files.insecure_skip_verify && files.ca_file.is_some() {
            return Err(
                "--backend-tls-ca-file and --backend-tls-insecure-skip-verify contradict each other"
                    .to_owned(),
            );
        }
        let backend = if backend_https {
            Some(client_config(&files).map_err(|e| format!("backend TLS: {e}"))?)
        } else if files != BackendTlsFiles::default() {
            return Err("--backend-tls-* flags need an https:// --backend".to_owned());
        } else {
            None
        };
        Ok(TlsSettings { listener, backend })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_combinations() {
        let none = TlsFlags::default().validate(false).unwrap();
        assert!(none.listener.is_none() && none.backend.is_none());
        let half = TlsFlags {
            tls_cert_file: Some("/x.pem".into()),
            ..TlsFlags::default()
        };
        assert!(half.validate(false).unwrap_err().contains("go together"));
        let ca_only = TlsFlags {
            tls_client_ca_file: Some("/ca.pem".into()),
            ..TlsFlags::default()
        };
        assert!(
            ca_only
                .validate(false)
                .unwrap_err()
                .contains("--tls-client-ca-file needs")
        );
        let plain_backend = TlsFlags {
            backend_tls_insecure_skip_verify: true,
            ..TlsFlags::default()
        };
        assert!(
            plain_backend
                .validate(false)
                .unwrap_err()
                .contains("https://")
        );
        // Skipping verification needs no files at all.
        let skip = plain_backend.validate(true).unwrap();
        assert!(skip.backend.is_some());
        let both = TlsFlags {
            backend_tls_ca_file: Some("/ca.pem".into()),
            backend_tls_insecure_skip_verify: true,
            ..TlsFlags::default()
        };
        assert!(both.validate(true).unwrap_err().contains("contradict"));
        let missing = TlsFlags {
            tls_cert_file: Some("/nonexistent/cert.pem".into()),
            tls_key_file: Some("/nonexistent/key.pem".into()),
            ..TlsFlags::default()
        };
        let err = missing.validate(false).unwrap_err();
        assert!(err.contains("/nonexistent/cert.pem"), "{err}");
    }
}
