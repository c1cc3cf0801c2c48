//! Drain log-pattern mining (He et al., ICWS 2017) with the defaults of
//! Loki's pattern ingester (grafana/loki `pkg/pattern/drain`): a prefix tree
//! keyed by token count then by the first tokens (depth 30 − 2), at most 15
//! children per node (tokens with digits go to the `<_>` child), similarity
//! threshold 0.3, at most 300 clusters; lines of fewer than 4 or more than 80
//! tokens, or longer than 3000 bytes, are not mined (as in Loki).
//!
//! Tokens are the line split on spaces; a template keeps the tokens every
//! member shares and `<_>` elsewhere, with runs of `<_>` collapsed.
//! Each cluster counts its lines per step exactly.

use std::collections::{BTreeMap, HashMap};

/// The placeholder of a variable token.
pub const PARAM: &str = "<_>";
const DEPTH: usize = 30 - 2;
const SIM_TH: f64 = 0.3;
const MAX_CHILDREN: usize = 15;
/// Clusters kept per miner; lines that would open more are not mined.
pub const MAX_CLUSTERS: usize = 300;
const MIN_TOKENS: usize = 4;
const MAX_TOKENS: usize = 80;
const MAX_LINE: usize = 3000;

#[derive(Debug, Default)]
struct Node {
    children: HashMap<String, Node>,
    clusters: Vec<usize>,
}

/// One pattern: its template tokens and its lines per step.
#[derive(Debug, Clone)]
pub struct Cluster {
    tokens: Vec<String>,
    /// Lines per step start (ns), exact.
    pub counts: BTreeMap<i64, u64>,
}

impl Cluster {
    /// The pattern text: tokens joined by spaces, runs of `<_>` collapsed.
    pub fn pattern(&self) -> String {
        let mut out = String::new();
        let mut prev_param = false;
        for (i, t) in self.tokens.iter().enumerate() {
            let is_param = t == PARAM;
            if is_param && prev_param {
                continue;
            }
            if i > 0 {
                out.push(' ');
            }
            out.push_str(t);
            prev_param = is_param;
        }
        out
    }
}

/// A Drain miner.
#[derive(Debug, Default)]
pub struct Drain {
    root: HashMap<usize, Node>,
    clusters: Vec<Cluster>,
    /// Lines not mined (too short, too long, or the cluster cap reached).
    pub skipped: u64,
}

fn has_digit(s: &str) -> bool {
    s.chars().any(|c| c.is_numeric())
}

impl Drain {
    /// Creates an empty miner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The clusters found so far.
    pub fn clusters(&self) -> &[Cluster] {
        &self.clusters
    }

    /// Mines one line at `bucket` (a step start); returns whether it was mined.
    pub fn train(&mut self, line: &str, bucket: i64) -> bool {
        if line.len() > MAX_LINE {
            self.skipped += 1;
            return false;
        }
        let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.len() < MIN_TOKENS || tokens.len() > MAX_TOKENS {
            self.skipped += 1;
            return false;
        }
        let id = match self.search(&tokens) {
            Some(id) => {
                let c = &mut self.clusters[id];
                for (t, new) in c.tokens.iter_mut().zip(&tokens) {
                    if t != new {
                        *t = PARAM.to_owned();
                    }
                }
                id
            }
            None => {
                if self.clusters.len() >= MAX_CLUSTERS {
                    self.skipped += 1;
                    return false;
                }
                let id = self.clusters.len();
                self.clusters.push(Cluster {
                    tokens: tokens.iter().map(|t| (*t).to_owned()).collect(),
                    counts: BTreeMap::new(),
                });
                self.insert(&tokens, id);
                id
            }
        };
        *self.clusters[id].counts.entry(bucket).or_insert(0) += 1;
        true
    }

    fn search(&self, tokens: &[&str]) -> Option<usize> {
        let mut node = self.root.get(&tokens.len())?;
        for t in tokens
            .iter()
            .take(DEPTH.min(tokens.len().saturating_sub(1)))
        {
            node = node.children.get(*t).or_else(|| node.children.get(PARAM))?;
        }
        let mut best: Option<(f64, usize, usize)> = None;
        for &id in &node.clusters {
            let c = &self.clusters[id];
            let (mut same, mut params) = (0usize, 0usize);
            for (a, b) in c.tokens.iter().zip(tokens) {
                if a == PARAM {
                    params += 1;
                } else if a == b {
                    same += 1;
                }
            }
            let sim = same as f64 / c.tokens.len() as f64;
            if best.is_none_or(|(s, p, _)| sim > s || (sim == s && params > p)) {
                best = Some((sim, params, id));
            }
        }
        best.filter(|(s, _, _)| *s >= SIM_TH).map(|(_, _, id)| id)
    }

    fn insert(&mut self, tokens: &[&str], id: usize) {
        let mut node = self.root.entry(tokens.len()).or_default();
        for (depth, t) in (1..).zip(tokens.iter()) {
            if depth >= DEPTH || depth >= tokens.len() {
                break;
            }
            let key = if node.children.contains_key(*t) {
                (*t).to_owned()
            } else if has_digit(t) {
                PARAM.to_owned()
            } else if node.children.contains_key(PARAM) {
                if node.children.len() < MAX_CHILDREN {
                    (*t).to_owned()
                } else {
                    PARAM.to_owned()
                }
            } else if node.children.len() + 1 < MAX_CHILDREN {
                (*t).to_owned()
            } else {
                PARAM.to_owned()
            };
            node = node.children.entry(key).or_default();
        }
        node.clusters.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_lines_with_variable_tokens() {
        let mut d = Drain::new();
        for (i, u) in ["alice", "bob", "carol"].iter().enumerate() {
            assert!(d.train(
                &format!("user logged in from 10.0.0.{i} as {u}"),
                (i as i64) * 10
            ));
        }
        assert!(d.train("payment failed for order 42", 0));
        assert!(d.train("payment failed for order 43", 0));
        assert!(!d.train("too short", 0));
        assert_eq!(d.skipped, 1);
        let pats: Vec<String> = d.clusters().iter().map(Cluster::pattern).collect();
        assert_eq!(
            pats,
            [
                "user logged in from <_> as <_>",
                "payment failed for order <_>"
            ]
        );
        let c = &d.clusters()[0];
        assert_eq!(c.counts.values().sum::<u64>(), 3);
        assert_eq!(d.clusters()[1].counts.get(&0), Some(&2));
    }

    #[test]
    fn collapses_placeholder_runs() {
        let c = Cluster {
            tokens: ["a", PARAM, PARAM, "b", PARAM]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            counts: BTreeMap::new(),
        };
        assert_eq!(c.pattern(), "a <_> b <_>");
    }
}
