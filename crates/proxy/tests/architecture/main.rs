//! The shape of the tree, checked: the import graph of every crate's
//! `src` has no cycle through more than two files, the proxy's modules
//! import only from their own layer or below, and the engine builds
//! without the async stack.
//!
//! The graph is read from `use` paths (`crate::…`, `super::…`),
//! resolved to the longest prefix that names a module file; see
//! `imports.rs` beside this file. Run alone with `cargo test -p proxy --test architecture`.

mod imports;

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const CRATES: [&str; 6] = [
    "go",
    "logql-parser",
    "logsql-ast",
    "engine",
    "cache",
    "proxy",
];

#[test]
fn no_import_cycle_runs_through_more_than_two_files() {
    let mut long = Vec::new();
    for name in CRATES {
        let g = imports::read_crate(&workspace().join("crates").join(name).join("src"));
        assert!(g.files.len() > 3, "{name}: no sources read");
        for cycle in imports::cycles(&g) {
            if cycle.len() > 2 {
                long.push(format!("{name}: {cycle:?}"));
            }
        }
    }
    assert!(long.is_empty(), "import cycles:\n{}", long.join("\n"));
}

/// The proxy's top-level modules from the edge down. A module may import
/// from its own layer and from the layers below it, never from above:
/// handlers call the query orchestration, which calls the backend client,
/// never the other way round.
const PROXY_LAYERS: &[&[&str]] = &[
    // The process and the HTTP edge: configuration, listeners, the route
    // table, the response cache around the handlers, the app that wires them.
    &["app", "config", "server", "route", "response_cache"],
    // The handlers, thin: read parameters, call the orchestration, answer.
    &["handler", "push"],
    // Fetch orchestration: log and Drilldown queries, windows, live tail.
    &["query", "window", "tail"],
    // The request context, tenants and the VictoriaLogs client.
    &["context", "tenant", "backend"],
    // What every layer uses: parameters, errors, bounds, the CPU pool and
    // the proxy's own metrics.
    &["params", "error", "limits", "work", "telemetry"],
];

fn layer_of(module: &str) -> Option<usize> {
    PROXY_LAYERS.iter().position(|l| l.contains(&module))
}

fn top_module(file: &Path) -> String {
    let first = file.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

#[test]
fn proxy_modules_import_only_from_their_layer_or_below() {
    let g = imports::read_crate(&workspace().join("crates/proxy/src"));
    let mut unknown = Vec::new();
    let mut upward = Vec::new();
    for (file, targets) in &g.edges {
        let from = top_module(file);
        if from == "lib" {
            continue;
        }
        let Some(lf) = layer_of(&from) else {
            unknown.push(from);
            continue;
        };
        for t in targets {
            let to = top_module(t);
            match layer_of(&to) {
                Some(lt) if lt < lf => {
                    upward.push(format!("{} -> {}", file.display(), t.display()))
                }
                Some(_) => {}
                None if to == "lib" => {}
                None => unknown.push(to),
            }
        }
    }
    unknown.sort();
    unknown.dedup();
    assert!(
        unknown.is_empty(),
        "modules missing from PROXY_LAYERS: {unknown:?}"
    );
    assert!(
        upward.is_empty(),
        "imports from a layer above:\n{}",
        upward.join("\n")
    );
}

/// The engine is the part of lokivl that computes answers; it has no
/// runtime, no HTTP and no service state, so it can be tested, fuzzed and
/// benchmarked alone.
#[test]
fn engine_and_go_stay_free_of_the_service() {
    for (name, forbidden) in [
        ("engine", &["tokio", "axum", "hyper", "proxy", "cache"][..]),
        (
            "go",
            &[
                "tokio",
                "axum",
                "hyper",
                "proxy",
                "engine",
                "logql-parser",
                "logsql-ast",
                "cache",
            ][..],
        ),
    ] {
        let manifest =
            std::fs::read_to_string(workspace().join("crates").join(name).join("Cargo.toml"))
                .unwrap();
        for dep in forbidden {
            assert!(
                !manifest
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{dep} "))
                        || l.trim_start().starts_with(&format!("{dep}."))
                        || l.trim_start().starts_with(&format!("{dep}="))),
                "crates/{name} depends on {dep}"
            );
        }
    }
}
