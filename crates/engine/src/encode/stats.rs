//! Loki's `stats` object.
//!
//! Current Loki always emits the full statistics tree, zeros when unknown.
//! Grafana reads `summary.*` (bytes/lines processed, exec time) and shows them
//! in Explore's query inspector, so the summary carries what the proxy knows
//! from the VictoriaLogs answer and everything else is zero. Key order follows
//! Loki's encoder (protobuf field order) so answers diff cleanly.

use super::json::{write_f64, write_key, write_u64};

/// The summary counters the proxy can fill in; everything else in the tree is
/// zero.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Bytes of log lines (plus structured metadata) VictoriaLogs returned.
    pub total_bytes_processed: u64,
    /// Rows VictoriaLogs returned.
    pub total_lines_processed: u64,
    /// Wall-clock time of the whole query, in seconds.
    pub exec_time_secs: f64,
    /// Time the query waited before running, in seconds.
    pub queue_time_secs: f64,
    /// Sub-queries the query was split into.
    pub subqueries: u64,
    /// Entries in the answer.
    pub total_entries_returned: u64,
    /// Time splits the query was run as.
    pub splits: u64,
    /// Shards the query was run as.
    pub shards: u64,
    /// Lines left after filtering (for the proxy: rows returned).
    pub total_post_filter_lines: u64,
    /// Bytes of structured metadata returned.
    pub total_structured_metadata_bytes_processed: u64,
}

impl Summary {
    fn per_second(&self, v: u64) -> u64 {
        if self.exec_time_secs > 0.0 && self.exec_time_secs.is_finite() {
            // Loki truncates: int64(float64(v) / execTime).
            (v as f64 / self.exec_time_secs) as u64
        } else {
            0
        }
    }
}

/// Writes `"stats":{…}` — the key and the whole tree — for `summary`.
pub fn write_stats_field(out: &mut Vec<u8>, summary: &Summary) {
    write_key(out, "stats");
    write_stats(out, summary);
}

/// Writes the full Loki `stats` object for `summary`.
pub fn write_stats(out: &mut Vec<u8>, s: &Summary) {
    out.extend_from_slice(b"{\"summary\":{");
    num(
        out,
        "bytesProcessedPerSecond",
        s.per_second(s.total_bytes_processed),
        true,
    );
    num(
        out,
        "linesProcessedPerSecond",
        s.per_second(s.total_lines_processed),
        false,
    );
    num(out, "totalBytesProcessed", s.total_bytes_processed, false);
    num(out, "totalLinesProcessed", s.total_lines_processed, false);
    out.push(b',');
    write_key(out, "execTime");
    write_f64(out, s.exec_time_secs);
    out.push(b',');
    write_key(out, "queueTime");
    write_f64(out, s.queue_time_secs);
    num(out, "subqueries", s.subqueries, false);
    num(out, "totalEntriesReturned", s.total_entries_returned, false);
    num(out, "splits", s.splits, false);
    num(out, "shards", s.shards, false);
    num(
        out,
        "totalPostFilterLines",
        s.total_post_filter_lines,
        false,
    );
    num(
        out,
        "totalStructuredMetadataBytesProcessed",
        s.total_structured_metadata_bytes_processed,
        false,
    );
    out.extend_from_slice(b"},\"querier\":{\"store\":");
    out.extend_from_slice(EMPTY_STORE.as_bytes());
    out.extend_from_slice(b",\"querierExecTime\":0},\"ingester\":");
    out.extend_from_slice(EMPTY_INGESTER.as_bytes());
    out.extend_from_slice(b",\"cache\":");
    out.extend_from_slice(EMPTY_CACHE.as_bytes());
    out.extend_from_slice(b",\"index\":");
    out.extend_from_slice(EMPTY_INDEX.as_bytes());
    out.push(b'}');
}

fn num(out: &mut Vec<u8>, key: &str, v: u64, first: bool) {
    if !first {
        out.push(b',');
    }
    write_key(out, key);
    write_u64(out, v);
}

macro_rules! store {
    () => {
        concat!(
            r#"{"totalChunksRef":0,"totalChunksDownloaded":0,"chunksDownloadTime":0,"#,
            r#""queryReferencedStructuredMetadata":false,"queryUsedV2Engine":false,"#,
            r#""chunk":{"headChunkBytes":0,"headChunkLines":0,"decompressedBytes":0,"decompressedLines":0,"#,
            r#""compressedBytes":0,"totalDuplicates":0,"postFilterLines":0,"headChunkStructuredMetadataBytes":0,"#,
            r#""decompressedStructuredMetadataBytes":0},"#,
            r#""chunkRefsFetchTime":0,"congestionControlLatency":0,"pipelineWrapperFilteredLines":0,"#,
            r#""dataobj":{"prePredicateDecompressedRows":0,"prePredicateDecompressedBytes":0,"#,
            r#""prePredicateDecompressedStructuredMetadataBytes":0,"postPredicateRows":0,"#,
            r#""postPredicateDecompressedBytes":0,"postPredicateStructuredMetadataBytes":0,"postFilterRows":0,"#,
            r#""pagesScanned":0,"pagesDownloaded":0,"pagesDownloadedBytes":0,"pageBatches":0,"#,
            r#""totalRowsAvailable":0,"totalPageDownloadTime":0,"wireBytesTransferred":0}}"#
        )
    };
}

macro_rules! cache {
    () => {
        r#"{"entriesFound":0,"entriesRequested":0,"entriesStored":0,"bytesReceived":0,"bytesSent":0,"requests":0,"downloadTime":0,"queryLengthServed":0}"#
    };
}

/// A zeroed `store` object (querier and ingester share the shape).
const EMPTY_STORE: &str = store!();

const EMPTY_INGESTER: &str = concat!(
    r#"{"totalReached":0,"totalChunksMatched":0,"totalBatches":0,"totalLinesSent":0,"store":"#,
    store!(),
    "}"
);

const EMPTY_CACHE: &str = concat!(
    r#"{"chunk":"#,
    cache!(),
    r#","index":"#,
    cache!(),
    r#","result":"#,
    cache!(),
    r#","statsResult":"#,
    cache!(),
    r#","volumeResult":"#,
    cache!(),
    r#","seriesResult":"#,
    cache!(),
    r#","labelResult":"#,
    cache!(),
    r#","instantMetricResult":"#,
    cache!(),
    r#","logResult":"#,
    cache!(),
    r#","taskResult":"#,
    cache!(),
    "}"
);

const EMPTY_INDEX: &str = r#"{"totalChunks":0,"postFilterChunks":0,"shardsDuration":0,"usedBloomFilters":false,"totalStreams":0,"chunkRefsLookupTime":0,"bloomFilterTime":0}"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(s: &Summary) -> serde_json::Value {
        let mut out = Vec::new();
        write_stats(&mut out, s);
        serde_json::from_slice(&out).unwrap_or_default()
    }

    #[test]
    fn summary_carries_known_counters() {
        let v = stats(&Summary {
            total_bytes_processed: 1000,
            total_lines_processed: 10,
            exec_time_secs: 0.5,
            total_entries_returned: 7,
            total_post_filter_lines: 10,
            ..Summary::default()
        });
        let s = &v["summary"];
        assert_eq!(s["bytesProcessedPerSecond"], 2000);
        assert_eq!(s["linesProcessedPerSecond"], 20);
        assert_eq!(s["totalBytesProcessed"], 1000);
        assert_eq!(s["totalLinesProcessed"], 10);
        assert_eq!(s["execTime"], 0.5);
        assert_eq!(s["totalEntriesReturned"], 7);
        assert_eq!(s["totalPostFilterLines"], 10);
        assert_eq!(s["queueTime"], 0);
        assert_eq!(s.as_object().map(|o| o.len()), Some(12));
    }

    #[test]
    fn zero_exec_time_gives_zero_rates() {
        let v = stats(&Summary {
            total_bytes_processed: 5,
            ..Summary::default()
        });
        assert_eq!(v["summary"]["bytesProcessedPerSecond"], 0);
    }

    #[test]
    fn tree_has_every_section_with_numeric_zeros() {
        let v = stats(&Summary::default());
        for section in ["summary", "querier", "ingester", "cache", "index"] {
            assert!(v.get(section).is_some(), "{section}");
        }
        let store = &v["querier"]["store"];
        assert_eq!(store["chunk"].as_object().map(|o| o.len()), Some(9));
        assert_eq!(store["dataobj"].as_object().map(|o| o.len()), Some(14));
        assert_eq!(store["queryReferencedStructuredMetadata"], false);
        assert_eq!(v["ingester"]["store"], *store);
        assert_eq!(v["ingester"]["totalReached"], 0);
        assert_eq!(v["cache"].as_object().map(|o| o.len()), Some(10));
        assert_eq!(
            v["cache"]["taskResult"].as_object().map(|o| o.len()),
            Some(8)
        );
        assert_eq!(v["index"].as_object().map(|o| o.len()), Some(7));
        assert_eq!(v["querier"]["querierExecTime"], 0);
    }
}
