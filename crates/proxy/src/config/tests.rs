use super::*;
use clap::Parser;

#[test]
fn defaults() {
    let s = Config::try_parse_from(["lokivl"])
        .unwrap()
        .validate()
        .unwrap();
    assert_eq!(s.listen, "0.0.0.0:3100".parse().unwrap());
    assert_eq!(
        s.backend,
        BackendUrl {
            authority: "127.0.0.1:9428".into(),
            prefix: String::new(),
            https: false,
        }
    );
    assert_eq!(s.backend_timeout, Duration::from_secs(60));
    assert_eq!(s.log_format, LogFormat::Text);
}

#[test]
fn flags() {
    let s = Config::try_parse_from([
        "lokivl",
        "--listen",
        "127.0.0.1:8080",
        "--backend",
        "http://vl:9428/prefix/",
        "--backend-timeout",
        "1m 30s",
        "--log-format",
        "json",
    ])
    .unwrap()
    .validate()
    .unwrap();
    assert_eq!(s.listen.port(), 8080);
    assert_eq!(
        s.backend,
        BackendUrl {
            authority: "vl:9428".into(),
            prefix: "/prefix".into(),
            https: false,
        }
    );
    assert_eq!(s.backend_timeout, Duration::from_secs(90));
    assert_eq!(s.log_format, LogFormat::Json);
}

#[test]
fn rejects_bad_backend() {
    assert!(matches!(
        Settings::new("ftp://vl:9428"),
        Err(ConfigError::Backend { .. })
    ));
    let https = BackendUrl::parse("https://vl:9443/vl/").unwrap();
    assert!(https.https);
    assert_eq!(https.base(), "https://vl:9443/vl");
    assert_eq!(
        BackendUrl::parse("http://vl:9428").unwrap().base(),
        "http://vl:9428"
    );
    assert!(matches!(
        Settings::new("vl:9428"),
        Err(ConfigError::Backend { .. })
    ));
    assert!(matches!(
        Settings::new("http://vl:9428/?a=b"),
        Err(ConfigError::Backend { .. })
    ));
    assert!(Settings::new("http://127.0.0.1:1").is_ok());
}

#[test]
fn rejects_zero_timeout() {
    let c = Config::try_parse_from(["lokivl", "--backend-timeout", "0s"]).unwrap();
    assert_eq!(c.validate().unwrap_err(), ConfigError::ZeroTimeout);
}

#[test]
fn backend_credentials_from_files() {
    let dir = std::env::temp_dir().join(format!("lokivl-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pass = dir.join("pass");
    std::fs::write(&pass, "pa55\n").unwrap();
    let s = Config::try_parse_from([
        "lokivl",
        "--backend-user",
        "user",
        "--backend-password-file",
        pass.to_str().unwrap(),
    ])
    .unwrap()
    .validate()
    .unwrap();
    let auth = s.backend_options.authorization.unwrap();
    assert_eq!(auth, "Basic dXNlcjpwYTU1");
    assert!(auth.is_sensitive());
    let both = Config::try_parse_from([
        "lokivl",
        "--backend-user",
        "u",
        "--backend-bearer-token-file",
        pass.to_str().unwrap(),
    ])
    .unwrap();
    assert!(matches!(both.validate(), Err(ConfigError::Auth(_))));
    let token = Config::try_parse_from([
        "lokivl",
        "--backend-bearer-token-file",
        pass.to_str().unwrap(),
    ])
    .unwrap()
    .validate()
    .unwrap();
    assert_eq!(token.backend_options.authorization.unwrap(), "Bearer pa55");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn url_credentials_become_basic_auth_and_are_never_shown() {
    let s = Config::try_parse_from(["lokivl", "--backend", "http://user:pa55@vl:9428/vl"])
        .unwrap()
        .validate()
        .unwrap();
    assert_eq!(s.backend.authority, "vl:9428");
    assert_eq!(s.backend.base(), "http://vl:9428/vl");
    let auth = s.backend_options.authorization.clone().unwrap();
    assert_eq!(auth, "Basic dXNlcjpwYTU1");
    assert!(auth.is_sensitive());
    assert!(!format!("{s:?}").contains("pa55"));
    // Settings::new (tests, embedding) reads the URL the same way.
    let embedded = Settings::new("http://user:pa55@vl:9428").unwrap();
    assert_eq!(embedded.backend.authority, "vl:9428");
    assert_eq!(
        embedded.backend_options.authorization.unwrap(),
        "Basic dXNlcjpwYTU1"
    );
    let both = Config::try_parse_from([
        "lokivl",
        "--backend",
        "http://user:pa55@vl:9428",
        "--backend-user",
        "other",
    ])
    .unwrap()
    .validate()
    .unwrap_err();
    assert!(matches!(both, ConfigError::Auth(_)), "{both}");
    assert!(!both.to_string().contains("pa55"), "{both}");
    let bad = Config::try_parse_from(["lokivl", "--backend", "http://user:pa55@vl:9428/?x=1"])
        .unwrap()
        .validate()
        .unwrap_err();
    assert_eq!(
        bad.to_string(),
        r#"invalid backend URL "http://user:xxxxx@vl:9428/?x=1": query strings are not allowed"#
    );
}

#[test]
fn limits_flags() {
    let s = Config::try_parse_from([
        "lokivl",
        "--query-timeout",
        "30s",
        "--tenant-rate",
        "5",
        "--max-url-bytes",
        "1000",
    ])
    .unwrap()
    .validate()
    .unwrap();
    assert_eq!(s.limits.query_timeout, Duration::from_secs(30));
    assert_eq!(s.limits.tenant_rate, 5.0);
    assert_eq!(s.limits.max_url_bytes, 1000);
    assert_eq!(s.backend_options.breaker_failures, 5);
    let neg = Config::try_parse_from(["lokivl", "--tenant-rate=-1"]).unwrap();
    assert_eq!(neg.validate().unwrap_err(), ConfigError::Rate);
}

#[test]
fn trust_flags() {
    let s = Config::try_parse_from(["lokivl"])
        .unwrap()
        .validate()
        .unwrap();
    assert!(s.tenant.numeric);
    assert!(!s.tenant.require_header);
    let s = Config::try_parse_from([
        "lokivl",
        "--tenant-numeric=false",
        "--require-tenant-header",
    ])
    .unwrap()
    .validate()
    .unwrap();
    assert!(!s.tenant.numeric);
    assert!(s.tenant.require_header);
    let dir = std::env::temp_dir().join(format!("lokivl-trust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lokivl.yaml");
    std::fs::write(
        &path,
        "tenant_numeric: false
require_tenant_header: true
",
    )
    .unwrap();
    let c = Config::load(["lokivl", "--config-file", path.to_str().unwrap()]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!c.tenancy.tenant_numeric);
    assert!(c.tenancy.require_tenant_header);
}

#[test]
fn config_file_fills_only_unset_settings() {
    let dir = std::env::temp_dir().join(format!("lokivl-yaml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lokivl.yaml");
    std::fs::write(
        &path,
        "listen: 127.0.0.1:4100\nbackend_timeout: 2m\nenable-push: true\ntenant_rate: 2.5\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let c = Config::load(["lokivl", "--config-file", p, "--backend-timeout", "5s"]).unwrap();
    assert_eq!(c.listen.port(), 4100);
    // The flag beats the file.
    assert_eq!(c.backend_timeout, Duration::from_secs(5));
    assert!(c.enable_push);
    assert_eq!(c.tenant_rate, 2.5);
    std::fs::write(&path, "listn: x\n").unwrap();
    let err = Config::load(["lokivl", "--config-file", p]).unwrap_err();
    assert!(
        err.to_string().contains("unknown setting \"listn\""),
        "{err}"
    );
    std::fs::write(&path, "enable_push: maybe\n").unwrap();
    assert!(Config::load(["lokivl", "--config-file", p]).is_err());
    std::fs::write(&path, "max_inflight: many\n").unwrap();
    assert!(Config::load(["lokivl", "--config-file", p]).is_err());
    let _ = std::fs::remove_dir_all(dir);
}

/// The settings file shipped for the systemd unit loads and validates.
#[test]
fn packaged_settings_file_is_valid() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../packaging/lokivl.yaml");
    let s = Config::load(["lokivl", "--config-file", path])
        .unwrap()
        .validate()
        .unwrap();
    assert_eq!(s.listen.port(), 3100);
    assert_eq!(s.metrics_listen, Some("127.0.0.1:9101".parse().unwrap()));
    assert!(!s.enable_push);
}

/// `docs/configuration.md` has exactly one row per flag, with its variable and default.
#[test]
fn configuration_doc_matches_the_cli() {
    use clap::CommandFactory as _;
    let doc = include_str!("../../../../docs/configuration.md");
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `--")).collect();
    let cmd = Config::command();
    let mut documented = 0;
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if matches!(long, "help" | "version") {
            continue;
        }
        let flag = format!("`--{long}");
        let row = rows
            .iter()
            .find(|r| r.starts_with(&format!("| {flag} ")) || r.starts_with(&format!("| {flag}`")))
            .unwrap_or_else(|| panic!("docs/configuration.md has no row for --{long}"));
        let cells: Vec<&str> = row.split(" | ").collect();
        let env = arg.get_env().and_then(|e| e.to_str()).unwrap_or("");
        assert_eq!(
            cells[1],
            format!("`{env}`"),
            "environment variable of --{long}"
        );
        let default = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(",");
        let want = if default.is_empty() {
            "none".to_owned()
        } else {
            format!("`{default}`")
        };
        assert_eq!(cells[2], want, "default of --{long}");
        documented += 1;
    }
    assert_eq!(
        rows.len(),
        documented,
        "docs/configuration.md lists flags the CLI does not have"
    );
}

#[test]
fn rejects_bad_duration() {
    assert!(Config::try_parse_from(["lokivl", "--backend-timeout", "soon"]).is_err());
}
