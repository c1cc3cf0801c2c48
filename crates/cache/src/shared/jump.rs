//! Jump consistent hashing (Lamping and Veach, "A Fast, Minimal Memory,
//! Consistent Hash Algorithm", 2014), the server choice of dskit's memcached
//! client that Loki uses: adding a server moves only `1/n` of the keys.

/// The bucket in `0..buckets` of `key`; 0 when there are no buckets.
pub(crate) fn jump(mut key: u64, buckets: usize) -> usize {
    let buckets = i64::try_from(buckets).unwrap_or(i64::MAX);
    let (mut b, mut j): (i64, i64) = (-1, 0);
    while j < buckets {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // The paper's arithmetic, in floating point on purpose.
        #[expect(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let next = ((b + 1) as f64 * ((1_i64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
        j = next;
    }
    usize::try_from(b).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values from an independent transcription of the paper's
    /// C++ code (Python, 64-bit wrapping arithmetic).
    #[test]
    fn matches_reference_values() {
        assert_eq!(jump(0, 1), 0);
        assert_eq!(jump(1, 2), 0);
        assert_eq!(jump(0xDEAD_BEEF, 10), 5);
        assert_eq!(jump(0x0123_4567_89ab_cdef, 3), 0);
        assert_eq!(jump(u64::MAX, 7), 2);
        assert_eq!(jump(42, 100), 43);
        assert_eq!(jump(1000, 1000), 93);
        assert_eq!(jump(7, 0), 0);
    }

    #[test]
    fn growing_moves_keys_only_to_the_new_bucket() {
        for key in 0..2000_u64 {
            let k = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (before, after) = (jump(k, 4), jump(k, 5));
            assert!(after == before || after == 4, "{k}: {before} -> {after}");
        }
    }
}
