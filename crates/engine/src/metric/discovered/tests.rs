use super::*;

fn on() -> Discovery {
    Discovery {
        service_name_labels: vec!["service".into(), "app".into()],
        log_levels: true,
    }
}

fn l(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn st(count: f64, min: f64) -> Stats {
    Stats {
        count,
        min,
        max: min,
        ..Stats::default()
    }
}

#[test]
fn needs_follow_the_settings() {
    let only = |x: &[&str]| Need::Only(x.iter().map(|s| (*s).to_owned()).collect());
    let d = on();
    assert_eq!(
        Derived::of(&only(&["service_name"]), &d),
        Derived {
            service_name: true,
            level: false
        }
    );
    assert_eq!(
        Derived::of(&only(&["detected_level", "app"]), &d),
        Derived {
            service_name: false,
            level: true
        }
    );
    assert_eq!(Derived::of(&only(&[]), &d), Derived::default());
    assert_eq!(
        Derived::of(&Need::All, &d),
        Derived {
            service_name: true,
            level: true
        }
    );
    assert_eq!(
        Derived::of(&Need::All, &Discovery::default()),
        Derived::default()
    );
}

#[test]
fn grouping_replaces_service_name_by_the_stream() {
    assert_eq!(
        stream_grouping(vec!["service_name".into(), "env".into()]),
        vec!["env".to_owned(), "_stream".to_owned()]
    );
}

#[test]
fn streams_map_to_service_names_and_merge() {
    let series = vec![
        // app=api and service=api both derive `api`: merged.
        BucketSeries {
            labels: l(&[("_stream", r#"{app="api",env="p"}"#)]),
            buckets: vec![(10, st(2.0, 5.0)), (20, st(1.0, 1.0))],
        },
        BucketSeries {
            labels: l(&[("_stream", r#"{service="api"}"#)]),
            buckets: vec![(10, st(3.0, 2.0))],
        },
        // `service` wins over `app`.
        BucketSeries {
            labels: l(&[("_stream", r#"{app="x",service="web"}"#)]),
            buckets: vec![(20, st(4.0, 7.0))],
        },
        // A stored service_name wins; no candidate gives unknown_service.
        BucketSeries {
            labels: l(&[("_stream", r#"{app="x",service_name="db"}"#)]),
            buckets: vec![(10, st(1.0, 1.0))],
        },
        BucketSeries {
            labels: l(&[("_stream", r#"{host="h"}"#)]),
            buckets: vec![(10, st(6.0, 1.0))],
        },
    ];
    let out = with_service_name(series, &on(), None).unwrap();
    type Got = Vec<(Labels, Vec<(i64, f64, f64)>)>;
    let got: Got = out
        .iter()
        .map(|s| {
            (
                s.labels.clone(),
                s.buckets
                    .iter()
                    .map(|b| (b.0, b.1.count, b.1.min))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                l(&[("service_name", "api")]),
                vec![(10, 5.0, 2.0), (20, 1.0, 1.0)]
            ),
            (l(&[("service_name", "db")]), vec![(10, 1.0, 1.0)]),
            (
                l(&[("service_name", "unknown_service")]),
                vec![(10, 6.0, 1.0)]
            ),
            (l(&[("service_name", "web")]), vec![(20, 4.0, 7.0)]),
        ]
    );
}

#[test]
fn other_labels_are_kept_and_range_grouping_applies() {
    let series = vec![
        BucketSeries {
            labels: l(&[("_stream", r#"{app="a",env="p"}"#), ("env", "p")]),
            buckets: vec![(10, st(1.0, 0.0))],
        },
        BucketSeries {
            labels: l(&[("_stream", r#"{app="a",env="q"}"#), ("env", "q")]),
            buckets: vec![(10, st(2.0, 0.0))],
        },
    ];
    let out = with_service_name(series.clone(), &on(), None).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].labels, l(&[("env", "p"), ("service_name", "a")]));
    let g = Grouping {
        without: false,
        labels: vec!["service_name".into()],
    };
    let out = with_service_name(series, &on(), Some(&g)).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].labels, l(&[("service_name", "a")]));
    assert_eq!(out[0].buckets, vec![(10, st(3.0, 0.0))]);
}

#[test]
fn bad_stream_is_a_backend_error() {
    let series = vec![BucketSeries {
        labels: l(&[("_stream", "{app=")]),
        buckets: Vec::new(),
    }];
    assert!(matches!(
        with_service_name(series, &on(), None),
        Err(EngineError::Backend(_))
    ));
}

#[test]
fn level_groups_map_to_detected_level() {
    let series = vec![
        // A metadata level field, normalized.
        BucketSeries {
            labels: l(&[("_stream", r#"{app="a"}"#), ("level", "ERR")]),
            buckets: vec![(10, st(2.0, 0.0))],
        },
        // A stream level label wins over metadata `level`… but a stored
        // detected_level metadata wins over both.
        BucketSeries {
            labels: l(&[
                ("_stream", r#"{app="a",lvl="warning"}"#),
                ("lvl", "warning"),
            ]),
            buckets: vec![(10, st(1.0, 0.0))],
        },
        BucketSeries {
            labels: l(&[
                ("_stream", r#"{app="b",lvl="warning"}"#),
                ("detected_level", "Error"),
                ("lvl", "warning"),
            ]),
            buckets: vec![(20, st(4.0, 0.0))],
        },
        // OTel severity.
        BucketSeries {
            labels: l(&[("_stream", r#"{app="b"}"#), ("severity_number", "10")]),
            buckets: vec![(10, st(3.0, 0.0))],
        },
    ];
    let derived = Derived {
        service_name: true,
        level: true,
    };
    let keep = vec!["detected_level".to_owned(), "service_name".to_owned()];
    let out = with_levels(series, &on(), derived, &keep).unwrap();
    let got: Vec<(Labels, Vec<(i64, f64)>)> = out
        .iter()
        .map(|s| {
            (
                s.labels.clone(),
                s.buckets.iter().map(|b| (b.0, b.1.count)).collect(),
            )
        })
        .collect();
    let ls = |lvl: &str, svc: &str| l(&[("detected_level", lvl), ("service_name", svc)]);
    assert_eq!(
        got,
        vec![
            (ls("error", "a"), vec![(10, 2.0)]),
            (ls("error", "b"), vec![(20, 4.0)]),
            (ls("info", "b"), vec![(10, 3.0)]),
            (ls("warn", "a"), vec![(10, 1.0)]),
        ]
    );
    // Only the level asked for: services merge, other fields dropped.
    let series = vec![
        BucketSeries {
            labels: l(&[("_stream", r#"{app="a"}"#), ("level", "info")]),
            buckets: vec![(10, st(2.0, 0.0))],
        },
        BucketSeries {
            labels: l(&[("_stream", r#"{app="b"}"#), ("level", "INFO")]),
            buckets: vec![(10, st(3.0, 0.0))],
        },
    ];
    let keep = vec!["detected_level".to_owned()];
    let derived = Derived {
        service_name: false,
        level: true,
    };
    let out = with_levels(series, &on(), derived, &keep).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].labels, l(&[("detected_level", "info")]));
    assert_eq!(out[0].buckets, vec![(10, st(5.0, 0.0))]);
}

/// Groups without a level field take the level VictoriaLogs computed
/// from the line; a level field wins over it; the residue and groups
/// without a computed level are left to the rows.
#[test]
fn line_levels_map_groups_without_level_fields() {
    let ll = LINE_LEVEL;
    let stream = ("_stream", r#"{app="a"}"#);
    assert!(!is_residue(&l(&[stream, (ll, "warn")])));
    assert!(is_residue(&l(&[stream, (ll, "residue")])));
    assert!(is_residue(&l(&[stream])));
    assert!(!is_residue(&l(&[
        stream,
        ("level", "info"),
        (ll, "residue")
    ])));
    let series = vec![
        BucketSeries {
            labels: l(&[stream, (ll, "warn")]),
            buckets: vec![(10, st(2.0, 0.0))],
        },
        BucketSeries {
            labels: l(&[stream, ("level", "ERR"), (ll, "info")]),
            buckets: vec![(10, st(3.0, 0.0))],
        },
        BucketSeries {
            labels: l(&[stream, (ll, "unknown")]),
            buckets: vec![(10, st(1.0, 0.0))],
        },
    ];
    let derived = Derived {
        service_name: false,
        level: true,
    };
    let keep = vec!["detected_level".to_owned()];
    let out = with_levels(series, &on(), derived, &keep).unwrap();
    let got: Vec<(Labels, f64)> = out
        .iter()
        .map(|s| (s.labels.clone(), s.buckets[0].1.count))
        .collect();
    let lv = |v: &str| l(&[("detected_level", v)]);
    assert_eq!(
        got,
        vec![(lv("error"), 3.0), (lv("unknown"), 1.0), (lv("warn"), 2.0)]
    );
    let by = line_level_grouping(&["detected_level".into(), "env".into()]);
    assert_eq!(by.first().map(String::as_str), Some("env"));
    assert_eq!(&by[by.len() - 2..], &[ll.to_owned(), "_stream".to_owned()]);
}

#[test]
fn level_fields_are_label_names() {
    let f = level_fields();
    assert_eq!(f[0], "detected_level");
    assert!(f.contains(&"level") && f.contains(&"severity_number"));
    assert!(!f.contains(&"log.level"));
    assert_eq!(
        level_grouping(&["detected_level".into(), "env".into()]).first(),
        Some(&"env".to_owned())
    );
    assert_eq!(
        level_grouping(&[]).last().map(String::as_str),
        Some("_stream")
    );
}

#[test]
fn groups_with_a_level_field() {
    let stream = ("_stream", r#"{app="api"}"#);
    assert!(has_level(&l(&[stream, ("level", "ERR")])));
    assert!(has_level(&l(&[("severity_number", "17"), stream])));
    assert!(has_level(&l(&[("detected_level", "info")])));
    // Other labels, a dotted level name (never a label) or nothing: the line decides.
    assert!(!has_level(&l(&[stream, ("env", "prod")])));
    assert!(!has_level(&l(&[("log.level", "warn")])));
    assert!(!has_level(&l(&[])));
}

#[test]
fn row_fields_keep_levels_and_needed_labels() {
    let f = row_fields(&["detected_level".into(), "service_name".into(), "env".into()]);
    assert_eq!(&f[..4], &["_time", "_msg", "_stream", "detected_level"]);
    assert!(f.contains(&"level".to_owned()) && f.contains(&"severity_number".to_owned()));
    assert_eq!(f.last().map(String::as_str), Some("env"));
    assert!(!f.contains(&"service_name".to_owned()));
}
