//! Runs Loki's LogQL corpus (`tests/data/logql-corpus.jsonl`, queries from
//! Loki's parser tests with Loki's verdict and error text): valid queries must
//! parse and print stably, invalid ones must fail with Loki's exact text. A
//! missing corpus is a failure, not a skip. Known gaps are listed in
//! `tests/data/corpus-gaps.txt` (one JSON string per line); the list may only
//! shrink: a listed query that starts passing fails the test too.

use std::collections::BTreeSet;
use std::path::Path;

use logql_parser::parse;

#[derive(serde::Deserialize)]
struct Case {
    query: String,
    valid: bool,
    error: Option<String>,
}

/// Why a case does not behave like Loki, or `None` when it does.
fn check(c: &Case) -> Option<String> {
    match (parse(&c.query), c.valid) {
        (Ok(e), true) => {
            let printed = e.to_string();
            match parse(&printed) {
                Ok(again) if again.to_string() == printed => None,
                Ok(again) => Some(format!("print not stable: {printed} -> {again}")),
                Err(err) => Some(format!("printed form {printed:?} does not parse: {err}")),
            }
        }
        (Err(err), true) => Some(format!("rejected: {err}")),
        (Ok(e), false) => Some(format!("accepted as {e}")),
        (Err(err), false) => {
            let want = c.error.clone().unwrap_or_default();
            (err.to_string() != want).then(|| format!("error {:?}, want {want:?}", err.to_string()))
        }
    }
}

#[test]
fn corpus_matches_loki() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join("tests/data/logql-corpus.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the corpus is test data of this crate: {}: {e}",
            path.display()
        )
    });
    let gaps_path = dir.join("tests/data/corpus-gaps.txt");
    let gaps_text = std::fs::read_to_string(&gaps_path).unwrap_or_else(|e| {
        panic!(
            "the gap list is test data of this crate: {}: {e}",
            gaps_path.display()
        )
    });
    let gaps: BTreeSet<String> = gaps_text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<String>(l).expect("gap lines are JSON strings"))
        .collect();
    let (mut pass, mut failures, mut fixed) = (0usize, Vec::new(), Vec::new());
    let mut total = 0usize;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let c: Case = serde_json::from_str(line).expect("corpus line is JSON");
        total += 1;
        let listed = gaps.contains(&c.query);
        match (check(&c), listed) {
            (None, false) => pass += 1,
            (None, true) => fixed.push(c.query.clone()),
            (Some(_), true) => {}
            (Some(why), false) => failures.push(format!(
                "{}\n    {why}",
                serde_json::to_string(&c.query).unwrap_or_default()
            )),
        }
    }
    println!(
        "corpus: {total} cases, {pass} match Loki, {} listed gaps",
        gaps.len()
    );
    assert!(
        failures.is_empty(),
        "{} unlisted mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "listed gaps now pass, remove them:\n{}",
        fixed.join("\n")
    );
}
