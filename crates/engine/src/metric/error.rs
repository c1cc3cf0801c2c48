//! Why a metric query could not be evaluated.

/// Why a metric query could not be evaluated; texts follow Loki's where Loki has one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// More series than `max_query_series` (Loki's exact text).
    #[error(
        "maximum number of series ({0}) reached for a single query; consider reducing query cardinality by adding more specific stream selectors, reducing the time range, or aggregating results with functions like sum(), count() or topk()"
    )]
    TooManySeries(usize),
    /// An unwrapped value failed Loki's conversion and no filter drops it.
    /// Loki's text ends with a newline (its `PipelineError` message does).
    #[error(
        "pipeline error: 'SampleExtractionErr' for series: '{0}'.\nUse a label filter to intentionally skip this error. (e.g | __error__!=\"SampleExtractionErr\").\nTo skip all potential errors you can match empty errors.(e.g __error__=\"\")\nThe label filter can also be specified after unwrap. (e.g | unwrap latency | __error__=\"\" )\n"
    )]
    SampleExtraction(String),
    /// A kept entry carries an error label (parser or conversion failure) and
    /// no filter drops it; Loki fails the query.
    #[error(
        "pipeline error: '{0}' for series: '{1}'.\nUse a label filter to intentionally skip this error. (e.g | __error__!=\"{0}\").\nTo skip all potential errors you can match empty errors.(e.g __error__=\"\")\nThe label filter can also be specified after unwrap. (e.g | unwrap latency | __error__=\"\" )\n"
    )]
    Pipeline(String, String),
    /// Vector matching found several series for one match group.
    #[error("found duplicate series for the match group {0} on the {1} side of the operation")]
    DuplicateMatch(String, &'static str),
    /// A construct the engine refuses rather than approximating.
    #[error("{0}")]
    Unsupported(String),
    /// VictoriaLogs sent an answer the engine cannot read.
    #[error("invalid stats answer from VictoriaLogs: {0}")]
    Backend(String),
    /// The request's deadline passed (or its client left) mid-way.
    #[error(transparent)]
    Stopped(#[from] crate::work::Stopped),
}
