//! The shared shape of a workload: request pairs (the Loki API call and the
//! VictoriaLogs call that computes the same answer), and the constants and
//! builders the workload files write them with.

/// Nanoseconds per minute.
pub(super) const MIN: i64 = 60_000_000_000;
/// Nanoseconds per hour.
pub(super) const HOUR: i64 = 60 * MIN;

/// Grafana's header on data queries.
const CATEGORIZE: (&str, &str) = ("X-Loki-Response-Encoding-Flags", "categorize-labels");
/// Logs Drilldown's query tag.
pub(super) const DRILLDOWN: (&str, &str) = ("X-Query-Tags", "Source=grafana-lokiexplore-app");

/// One HTTP GET: a path, query parameters (values may hold placeholders) and headers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    /// Path, e.g. `/loki/api/v1/query_range`.
    pub(crate) path: &'static str,
    /// Query parameters.
    pub(crate) params: &'static [(&'static str, &'static str)],
    /// Extra request headers.
    pub(crate) headers: &'static [(&'static str, &'static str)],
}

/// A request template: the same question asked of lokivl and of VictoriaLogs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Template {
    /// Short name, unique in its workload.
    pub(crate) name: &'static str,
    /// Relative frequency in the workload.
    pub(crate) weight: u32,
    /// Length of the time window, nanoseconds.
    pub(crate) window_ns: i64,
    /// The Loki API call (to lokivl).
    pub(crate) loki: Call,
    /// The equivalent VictoriaLogs call.
    pub(crate) direct: Call,
    /// What the direct side leaves to the client, or how it differs.
    pub(crate) note: &'static str,
}

/// A named workload.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workload {
    /// Name used on the command line and in reports.
    pub(crate) name: &'static str,
    /// Templates, picked at random by weight.
    pub(crate) templates: &'static [Template],
}

impl Workload {
    /// The longest window of any template.
    pub(crate) fn max_window(&self) -> i64 {
        self.templates
            .iter()
            .map(|t| t.window_ns)
            .max()
            .unwrap_or(0)
    }

    /// Picks a template for a random number `r`, by weight.
    pub(crate) fn pick(&self, r: u64) -> &'static Template {
        let total: u64 = self.templates.iter().map(|t| u64::from(t.weight)).sum();
        let mut x = r % total.max(1);
        for t in self.templates {
            if x < u64::from(t.weight) {
                return t;
            }
            x -= u64::from(t.weight);
        }
        &self.templates[0]
    }
}

pub(super) const fn loki(
    path: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Call {
    Call {
        path,
        params,
        headers: &[],
    }
}

pub(super) const fn data(
    path: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Call {
    Call {
        path,
        params,
        headers: &[CATEGORIZE],
    }
}

pub(super) const fn drill(
    path: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Call {
    Call {
        path,
        params,
        headers: &[CATEGORIZE, DRILLDOWN],
    }
}

pub(super) const fn vl(
    path: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Call {
    Call {
        path,
        params,
        headers: &[],
    }
}

/// Loki's range query path.
pub(super) const QR: &str = "/loki/api/v1/query_range";
/// VictoriaLogs' log query path.
pub(super) const VQ: &str = "/select/logsql/query";
/// VictoriaLogs' range stats path.
pub(super) const VSR: &str = "/select/logsql/stats_query_range";
