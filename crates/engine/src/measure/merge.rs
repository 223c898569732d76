//! Merging what the partitions of a split run recorded (`world::partition`)
//! into one set of results: time-ordered logs are interleaved by time, the
//! rows of one partition before another's at the same key, so that the
//! merged log is what one recorder would have kept but for the order of
//! events at the same instant in two partitions.

/// Which of two key-sorted logs each row of their merge comes from: true
/// for `a`. At equal keys `a`'s rows come first.
pub fn order<K: Ord>(a: &[K], b: &[K]) -> Vec<bool> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let take_a = j == b.len() || (i < a.len() && a[i] <= b[j]);
        out.push(take_a);
        if take_a {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// One column of the merge that `order` describes.
pub fn weave<T>(a: Vec<T>, b: Vec<T>, order: &[bool]) -> Vec<T> {
    debug_assert_eq!(a.len() + b.len(), order.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    (order.iter())
        .map(|&from_a| {
            let next = if from_a { a.next() } else { b.next() };
            next.expect("order counts each log's rows")
        })
        .collect()
}

/// `a` and `b`, two key-sorted logs, merged into `a` by `order`.
pub fn weave_into<T>(a: &mut Vec<T>, b: Vec<T>, order: &[bool]) {
    *a = weave(std::mem::take(a), b, order);
}

/// Merges the named column fields of `$b` into `$a`'s by `$order`.
macro_rules! weave_fields {
    ($order:expr, $a:expr, $b:expr, [$($f:ident),+]) => {
        $($crate::measure::merge::weave_into(&mut $a.$f, std::mem::take(&mut $b.$f), $order);)+
    };
}

/// Cuts the named column fields of `$a` to `$n` rows.
macro_rules! truncate_fields {
    ($a:expr, $n:expr, [$($f:ident),+]) => {
        $($a.$f.truncate($n);)+
    };
}

pub(crate) use {truncate_fields, weave_fields};

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge of two sorted logs is sorted, holds every row once, and
    /// puts the first log's rows first among equal keys.
    #[test]
    fn merges_sorted_logs_stably() {
        let a = vec![(1, 'a'), (3, 'b'), (3, 'c'), (9, 'd')];
        let b = vec![(0, 'w'), (3, 'x'), (4, 'y')];
        let keys = |v: &[(i32, char)]| v.iter().map(|r| r.0).collect::<Vec<_>>();
        let o = order(&keys(&a), &keys(&b));
        let m = weave(a, b, &o);
        let names: String = m.iter().map(|r| r.1).collect();
        assert_eq!(names, "wabcxyd");
        assert_eq!(order::<u8>(&[], &[]), Vec::<bool>::new());
        assert_eq!(order(&[5], &[]), vec![true]);
        assert_eq!(order(&[], &[5]), vec![false]);
        let mut into = vec![1, 4];
        weave_into(&mut into, vec![2, 3], &order(&[1, 4], &[2, 3]));
        assert_eq!(into, [1, 2, 3, 4]);
    }
}
