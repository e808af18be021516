//! Sorting in place with little code: a heapsort for the few slices the
//! library sorts, and an insertion sort where ties must keep their order.
//!
//! core's `sort_unstable` and std's `sort` are fast but large: each element
//! type brings its own copy of their quicksort, small sorts and pivots
//! (about 3 KiB each, five of them in the release binary). These are a
//! tenth of that. Both take `less(a, b)`: `a` goes before `b`.

/// Sorts `v` by `less` (heapsort: O(n log n) comparisons, no allocation,
/// no recursion). Not stable: elements neither less than the other may
/// end in any order, so use it where ties are whole-equal or cannot
/// happen (a total order).
pub fn sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let n = v.len();
    for root in (0..n / 2).rev() {
        sift_down(v, root, n, &mut less);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end, &mut less);
    }
}

/// Moves `v[root]` down the max-heap `v[..end]` to where it belongs.
fn sift_down<T>(v: &mut [T], mut root: usize, end: usize, less: &mut impl FnMut(&T, &T) -> bool) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(&v[child], &v[child + 1]) {
            child += 1;
        }
        if !less(&v[root], &v[child]) {
            return;
        }
        v.swap(root, child);
        root = child;
    }
}

/// Sorts `v` by `less`, ties in their order (insertion sort: O(n²)
/// comparisons, for short slices).
pub fn sort_stable_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// A small deterministic sequence (xorshift), with repeats.
    fn numbers(n: usize, seed: u32) -> Vec<u32> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x % 50
            })
            .collect()
    }

    #[test]
    fn heapsort_sorts_as_core_does() {
        for n in [0, 1, 2, 3, 7, 20, 21, 100, 513] {
            let mut v = numbers(n, n as u32 + 7);
            let mut want = v.clone();
            want.sort_unstable();
            sort_by(&mut v, |a, b| a < b);
            assert_eq!(v, want, "n={n}");
            sort_by(&mut v, |a, b| a > b);
            want.reverse();
            assert_eq!(v, want, "n={n} descending");
        }
    }

    #[test]
    fn insertion_sort_keeps_ties_in_order() {
        let v = numbers(200, 3);
        let mut pairs: Vec<(u32, usize)> = v.iter().map(|&k| (k, 0)).collect();
        for (i, p) in pairs.iter_mut().enumerate() {
            p.1 = i;
        }
        let mut want = pairs.clone();
        want.sort_by_key(|a| a.0);
        sort_stable_by(&mut pairs, |a, b| a.0 < b.0);
        assert_eq!(pairs, want);
    }
}
