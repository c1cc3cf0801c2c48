//! Reusing a vector's allocation across values of different lifetimes.
//!
//! A row loop that collects borrowed values (labels, metadata) per row would
//! allocate a vector per row; keeping one vector across rows does not type
//! check, since each row's borrows end with the row. [`recycle`] empties the
//! vector and hands back the same allocation typed for the next row.

/// An emptied vector with `v`'s allocation, for a type of the same layout
/// (in practice the same type with other lifetimes). The standard library
/// collects a `vec::IntoIter` adapter in place, so nothing is allocated.
pub(crate) fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allocation_is_kept() {
        let owned = String::from("x");
        let mut v: Vec<(&str, &str)> = Vec::with_capacity(64);
        v.push((&owned, "y"));
        let at = v.as_ptr() as usize;
        let u: Vec<(&'static str, &'static str)> = recycle(v);
        assert!(u.is_empty());
        assert!(u.capacity() >= 64);
        assert_eq!(u.as_ptr() as usize, at);
    }
}
