//! Reciprocal-rank fusion (Cormack, Clarke and Büttcher, 2009).
//!
//! Each list contributes `weight / (k + rank)` to every item it holds (rank 1-based,
//! first occurrence only). Items are ordered by the summed score, ties by key, so the
//! result does not depend on the order of the input lists.

use std::collections::HashMap;
use std::hash::Hash;

/// The RRF constant used when none is configured: 5, measured on the dev splits
/// (docs/EVAL.md, "RRF k and session neighbours"). The paper's 60 flattens the top of
/// each list so much that a memory ranked first by BM25 alone loses to one ranked third
/// by both; with 5 a clear first place counts.
pub const DEFAULT_K: f32 = 5.0;

/// One fused item.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    /// The item.
    pub key: K,
    /// The fused score.
    pub score: f32,
    /// Its 1-based rank in each input list, in input order (None where absent).
    pub ranks: Vec<Option<usize>>,
}

/// Fuses ranked lists of keys, each with a weight, with RRF constant `k`.
pub fn reciprocal_rank_fusion<K>(lists: &[(&[K], f32)], k: f32) -> Vec<Fused<K>>
where
    K: Clone + Eq + Hash + Ord,
{
    let mut ranks: HashMap<&K, Vec<Option<usize>>> = HashMap::new();
    for (i, (list, _)) in lists.iter().enumerate() {
        for (pos, key) in list.iter().enumerate() {
            let r = ranks.entry(key).or_insert_with(|| vec![None; lists.len()]);
            if r[i].is_none() {
                r[i] = Some(pos + 1);
            }
        }
    }
    let mut out: Vec<(f64, Fused<K>)> = ranks
        .into_iter()
        .map(|(key, r)| {
            // Sum the contributions in a canonical order so that the score is bit-identical
            // whatever the order of the input lists (float addition is not associative).
            let mut parts: Vec<f64> = r
                .iter()
                .zip(lists)
                .filter_map(|(rank, (_, w))| rank.map(|rank| f64::from(*w) / (f64::from(k) + rank as f64)))
                .collect();
            parts.sort_by(f64::total_cmp);
            let score: f64 = parts.iter().sum();
            (score, Fused { key: key.clone(), score: score as f32, ranks: r })
        })
        .collect();
    out.sort_by(|(sa, a), (sb, b)| sb.total_cmp(sa).then_with(|| a.key.cmp(&b.key)));
    out.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn keys<K: Clone>(f: &[Fused<K>]) -> Vec<K> {
        f.iter().map(|x| x.key.clone()).collect()
    }

    #[test]
    fn worked_example() {
        // a: 1/61 + 1/63 ; b: 1/62 + 1/61 ; c: 1/63 + 1/62 -> b > a > c
        let l1 = [1, 2, 3];
        let l2 = [2, 3, 1];
        let f = reciprocal_rank_fusion(&[(&l1[..], 1.0), (&l2[..], 1.0)], 60.0);
        assert_eq!(keys(&f), vec![2, 1, 3]);
        assert!((f[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-7);
        assert_eq!(f[0].ranks, vec![Some(2), Some(1)]);
    }

    #[test]
    fn weights_and_single_list() {
        let l1 = [1, 2];
        let l2 = [2, 1];
        let f = reciprocal_rank_fusion(&[(&l1[..], 2.0), (&l2[..], 1.0)], 60.0);
        assert_eq!(keys(&f), vec![1, 2]);
        let only: [(&[i32], f32); 1] = [(&l1[..], 1.0)];
        assert_eq!(keys(&reciprocal_rank_fusion(&only, 60.0)), vec![1, 2]);
    }

    fn list() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..40, 0..30)
    }

    proptest! {
        #[test]
        fn no_duplicates_and_every_key_kept(a in list(), b in list(), c in list()) {
            let f = reciprocal_rank_fusion(&[(&a[..], 1.0), (&b[..], 0.5), (&c[..], 1.0)], 60.0);
            let mut seen = std::collections::HashSet::new();
            for x in &f { prop_assert!(seen.insert(x.key)); }
            let all: std::collections::HashSet<u8> = a.iter().chain(&b).chain(&c).copied().collect();
            prop_assert_eq!(seen, all);
            for w in f.windows(2) { prop_assert!(w[0].score >= w[1].score); }
        }

        #[test]
        fn input_order_does_not_matter(a in list(), b in list(), c in list()) {
            let f1 = reciprocal_rank_fusion(&[(&a[..], 1.0), (&b[..], 1.0), (&c[..], 1.0)], 60.0);
            let f2 = reciprocal_rank_fusion(&[(&c[..], 1.0), (&a[..], 1.0), (&b[..], 1.0)], 60.0);
            prop_assert_eq!(keys(&f1), keys(&f2));
            let s1: Vec<f32> = f1.iter().map(|x| x.score).collect();
            let s2: Vec<f32> = f2.iter().map(|x| x.score).collect();
            prop_assert_eq!(s1, s2);
        }

        #[test]
        fn ties_break_by_key(keys in Just((0u16..40).collect::<Vec<_>>()).prop_shuffle()) {
            // The second list swaps each adjacent pair of the first, so the two members
            // of a pair get the same score: the smaller key must come first.
            let a = keys.clone();
            let mut b = keys.clone();
            for pair in b.chunks_mut(2) { pair.reverse(); }
            let f = reciprocal_rank_fusion(&[(&a[..], 1.0), (&b[..], 1.0)], 60.0);
            let pos = |k: u16| f.iter().position(|x| x.key == k).unwrap();
            for pair in a.chunks(2) {
                if let [x, y] = pair {
                    prop_assert_eq!(f[pos(*x)].score, f[pos(*y)].score);
                    let (lo, hi) = if x < y { (*x, *y) } else { (*y, *x) };
                    prop_assert!(pos(lo) < pos(hi));
                }
            }
        }

        #[test]
        fn above_in_every_list_stays_above(
            perms in proptest::collection::vec(Just((0u8..30).collect::<Vec<_>>()).prop_shuffle(), 1..4),
            drop_b in proptest::collection::vec(any::<bool>(), 4),
            k in 1f32..100.0,
        ) {
            // Force key 100 above key 200 in every list; 200 may be missing from some lists.
            let lists: Vec<Vec<u8>> = perms.iter().enumerate().map(|(i, p)| {
                let mut l = p.clone();
                let at = l.len() / 2;
                l.insert(at, 100);
                if !drop_b[i] { l.insert(at + 1 + (i % 3), 200); }
                l
            }).collect();
            let refs: Vec<(&[u8], f32)> = lists.iter().map(|l| (&l[..], 1.0)).collect();
            let f = reciprocal_rank_fusion(&refs, k);
            let pa = f.iter().position(|x| x.key == 100).unwrap();
            if let Some(pb) = f.iter().position(|x| x.key == 200) { prop_assert!(pa < pb); }
        }
    }
}
