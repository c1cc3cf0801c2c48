//! Latency percentiles.

/// The `p`-th percentile (0–100) of `sorted` by the nearest-rank method:
/// the smallest value with at least `p`% of the samples at or below it.
/// `None` for no samples.
pub(crate) fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// p50, p90 and p99 of `samples` (sorted in place).
pub(crate) fn summary(samples: &mut [f64]) -> [Option<f64>; 3] {
    samples.sort_by(f64::total_cmp);
    [50.0, 90.0, 99.0].map(|p| nearest_rank(samples, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_one_to_hundred() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 50.0), Some(50.0));
        assert_eq!(nearest_rank(&v, 90.0), Some(90.0));
        assert_eq!(nearest_rank(&v, 99.0), Some(99.0));
        assert_eq!(nearest_rank(&v, 100.0), Some(100.0));
        assert_eq!(nearest_rank(&v, 0.0), Some(1.0));
    }

    #[test]
    fn small_and_empty_samples() {
        assert_eq!(nearest_rank(&[], 50.0), None);
        assert_eq!(nearest_rank(&[7.0], 99.0), Some(7.0));
        // 10 samples: p99 is the largest, p90 the 9th, p50 the 5th.
        let mut v = vec![10.0, 1.0, 9.0, 2.0, 8.0, 3.0, 7.0, 4.0, 6.0, 5.0];
        assert_eq!(summary(&mut v), [Some(5.0), Some(9.0), Some(10.0)]);
    }
}
