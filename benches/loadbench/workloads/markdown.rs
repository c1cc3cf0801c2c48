//! The request pairs as Markdown, for docs/benchmarks.md.

use super::WORKLOADS;
use super::pair::{Call, HOUR, MIN};

/// The request pairs of every workload as Markdown, for the documentation.
pub(crate) fn pairs_markdown() -> String {
    let mut out = String::new();
    for w in WORKLOADS {
        out.push_str(&format!("\n**{}**\n\n| template | weight | window | Loki API (lokivl) | LogsQL (direct) | note |\n|---|---:|---:|---|---|---|\n", w.name));
        for t in w.templates {
            let show = |c: &Call| {
                let q = c
                    .params
                    .iter()
                    .find(|(k, _)| *k == "query" || *k == "match[]")
                    .map_or(String::new(), |(k, v)| format!(" {k}=`{v}`"));
                let extra: Vec<String> = c
                    .params
                    .iter()
                    .filter(|(k, _)| matches!(*k, "limit" | "step" | "field"))
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("`{}`{q} {}", c.path, extra.join(" ")).replace('|', "\\|")
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                t.name,
                t.weight,
                humantime_ns(t.window_ns),
                show(&t.loki),
                show(&t.direct),
                t.note
            ));
        }
    }
    out
}

fn humantime_ns(ns: i64) -> String {
    if ns % HOUR == 0 {
        format!("{}h", ns / HOUR)
    } else {
        format!("{}m", ns / MIN)
    }
}
