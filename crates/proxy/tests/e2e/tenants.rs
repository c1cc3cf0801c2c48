//! Two tenants in a real VictoriaLogs never see each other's lines, labels,
//! label values or series through lokivl; `a|b` sees both, labelled
//! `__tenant_id__`. Skipped (one printed line) when `LOKIVL_VL_BIN` is unset.

use crate::support;

use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::client;

async fn push(vl: &str, account: &str, app: &str, secret_label: &str, line: &str, ts: i64) {
    let body = serde_json::json!({"streams": [{
        "stream": {"app": app, secret_label: "yes"},
        "values": [[ts.to_string(), line]]
    }]})
    .to_string();
    let a = client::send(
        "POST",
        &format!("{vl}/insert/loki/api/v1/push?disable_message_parsing=1"),
        &[
            ("content-type", "application/json"),
            ("AccountID", account),
            ("ProjectID", "0"),
        ],
        body.into_bytes(),
    )
    .await
    .unwrap();
    assert!(a.status.is_success(), "{}", a.status);
}

fn data(body: &str) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(body).unwrap()["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_are_isolated() {
    if std::env::var_os("LOKIVL_VL_BIN").is_none() {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("skipped: LOKIVL_VL_BIN is not set\n"),
        );
        return;
    }
    let bin = support::backend::find_vl_binary().expect("LOKIVL_VL_BIN points to a file");
    let vl = support::backend::VictoriaLogs::start(&bin).await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    push(
        &vl.url,
        "1",
        "alpha",
        "only_a",
        "line of tenant a",
        now - 60_000_000_000,
    )
    .await;
    push(
        &vl.url,
        "2",
        "beta",
        "only_b",
        "line of tenant b",
        now - 50_000_000_000,
    )
    .await;
    client::try_get(&format!("{}/internal/force_flush", vl.url), &[])
        .await
        .map(client::Answer::parts)
        .unwrap();

    let dir = std::env::temp_dir().join(format!("lokivl-e2e-tenants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("tenants.yaml");
    std::fs::write(&map, "team-a: {account_id: 1}\nteam-b: {account_id: 2}\n").unwrap();
    let mut s = proxy::config::Settings::new(&vl.url).unwrap();
    s.tenant.map = Some(map);
    let base = crate::support::lokivl::start_proxy(s).await;

    let (start, end) = ((now - 3_600_000_000_000).to_string(), (now + 1).to_string());
    let range = [("start", start.as_str()), ("end", end.as_str())];
    let get = |path: &str, extra: &[(&str, &str)], tenant: &str| {
        let mut params: Vec<(&str, &str)> = range.to_vec();
        params.extend_from_slice(extra);
        let url = client::url(&base, path, &params);
        let tenant = tenant.to_owned();
        async move {
            let (status, _, body) = client::try_get(&url, &[("X-Scope-OrgID", tenant.as_str())])
                .await
                .map(client::Answer::parts)
                .unwrap();
            assert_eq!(status, 200, "{url}: {body}");
            data(&body)
        }
    };
    let any = [("query", r#"{app=~".+"}"#)];
    // Wait until both pushes are searchable (force_flush is not instant).
    for _ in 0..50 {
        let a = get("/loki/api/v1/query_range", &any, "team-a").await;
        let b = get("/loki/api/v1/query_range", &any, "team-b").await;
        if !a["result"].as_array().unwrap().is_empty()
            && !b["result"].as_array().unwrap().is_empty()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for (tenant, mine, theirs, label, other_label) in [
        ("team-a", "alpha", "beta", "only_a", "only_b"),
        ("team-b", "beta", "alpha", "only_b", "only_a"),
    ] {
        let lines = get("/loki/api/v1/query_range", &any, tenant).await;
        let result = lines["result"].as_array().unwrap();
        assert_eq!(result.len(), 1, "{tenant}: {lines}");
        assert_eq!(result[0]["stream"]["app"], mine);
        assert!(
            !lines.to_string().contains(theirs),
            "{tenant} sees {theirs}"
        );

        let labels = get("/loki/api/v1/labels", &[], tenant).await;
        let labels: Vec<&str> = labels
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            labels.contains(&label) && !labels.contains(&other_label),
            "{tenant}: {labels:?}"
        );

        let values = get("/loki/api/v1/label/app/values", &[], tenant).await;
        assert_eq!(values, serde_json::json!([mine]), "{tenant}");

        let series = get(
            "/loki/api/v1/series",
            &[("match[]", r#"{app=~".+"}"#)],
            tenant,
        )
        .await;
        assert_eq!(series.as_array().unwrap().len(), 1, "{tenant}: {series}");
        assert_eq!(series[0]["app"], mine);

        // Volumes and index stats (Drilldown) are per tenant too.
        let mut params: Vec<(&str, &str)> = range.to_vec();
        params.push(("query", r#"{app=~".+"}"#));
        for path in ["/loki/api/v1/index/volume", "/loki/api/v1/index/stats"] {
            let url = client::url(&base, path, &params);
            let (status, _, body) = client::try_get(&url, &[("X-Scope-OrgID", tenant)])
                .await
                .map(client::Answer::parts)
                .unwrap();
            assert_eq!(status, 200, "{url}: {body}");
            assert!(
                !body.contains(theirs),
                "{tenant} sees {theirs} in {path}: {body}"
            );
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            if path.ends_with("volume") {
                assert!(body.contains(mine), "{tenant}: {body}");
            } else {
                assert_eq!(v["streams"], 1, "{tenant}: {body}");
                assert_eq!(v["entries"], 1, "{tenant}: {body}");
            }
        }
    }
    // The default tenant (0:0) holds nothing.
    let (status, _, body) = client::try_get(
        &client::url(&base, "/loki/api/v1/label/app/values", &range),
        &[],
    )
    .await
    .map(client::Answer::parts)
    .unwrap();
    assert_eq!(status, 200, "{body}");
    let d = data(&body);
    assert!(d.is_null() || d == serde_json::json!([]), "{body}");

    // Both at once: each stream labelled with its tenant.
    let both = get("/loki/api/v1/query_range", &any, "team-a|team-b").await;
    let mut seen: Vec<(String, String)> = both["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["stream"]["__tenant_id__"].as_str().unwrap().to_owned(),
                s["values"][0][1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("team-a".to_owned(), "line of tenant a".to_owned()),
            ("team-b".to_owned(), "line of tenant b".to_owned())
        ]
    );
    let ids = get(
        "/loki/api/v1/label/__tenant_id__/values",
        &[],
        "team-a|team-b",
    )
    .await;
    assert_eq!(ids, serde_json::json!(["team-a", "team-b"]));
    let _ = std::fs::remove_dir_all(&dir);
}
