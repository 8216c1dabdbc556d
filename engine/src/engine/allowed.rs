//! The memories a query's filters admit, as the sorted lists of seqs of the in-memory
//! view (one a scope), asked by binary search: a scope filter is never gathered into one
//! set. A recall in a scope of a million memories copies its list, where it used to look
//! up each memory's time, sort them all and hash them into a set (225 ms a recall at 1M,
//! docs/PERFORMANCE.md "A million memories"); a caller that holds the view borrows the
//! lists. A time filter alone still gathers the memories in its window.

use std::borrow::Cow;

use amber_core::{Query, Scope};

use super::docs::Docs;
use super::{Engine, read};

/// The memories a query's filters admit: the union of sorted, disjoint lists of seqs,
/// borrowed from the in-memory view or copied out of it.
#[derive(Debug)]
pub(crate) struct Allowed<'a> {
    lists: Vec<Cow<'a, [u64]>>,
    len: usize,
}

impl<'a> Allowed<'a> {
    fn new(lists: Vec<Cow<'a, [u64]>>) -> Allowed<'a> {
        let lists: Vec<Cow<'a, [u64]>> = lists.into_iter().filter(|l| !l.is_empty()).collect();
        let len = lists.iter().map(|l| l.len()).sum();
        Allowed { lists, len }
    }

    /// The same memories, owning their lists (to outlive the view's lock).
    fn into_owned(self) -> Allowed<'static> {
        let lists = self.lists.into_iter().map(|l| Cow::Owned(l.into_owned())).collect();
        Allowed { lists, len: self.len }
    }

    /// Memories admitted.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when none is.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether memory `seq` is admitted (a binary search a list).
    pub(crate) fn contains(&self, seq: u64) -> bool {
        self.lists.iter().any(|l| l.binary_search(&seq).is_ok())
    }

    /// Every admitted seq, list by list (not in one order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.lists.iter().flat_map(|l| l.iter()).copied()
    }

    /// The memories of `docs` that pass the query's filters (its scopes and the scopes
    /// under them, its time window), borrowing the view's lists; None when it has none.
    pub(super) fn of(docs: &'a Docs, q: &Query) -> Option<Allowed<'a>> {
        let scopes = q.scopes();
        if scopes.is_empty() && q.since.is_none() && q.until.is_none() {
            return None;
        }
        let timed = q.since.is_some() || q.until.is_some();
        let in_time = |seq: &u64| {
            let t = docs.time.get(seq).copied().unwrap_or(0);
            q.since.is_none_or(|s| t >= s) && q.until.is_none_or(|u| t <= u)
        };
        if scopes.is_empty() {
            let mut all: Vec<u64> = docs.time.keys().copied().filter(in_time).collect();
            all.sort_unstable();
            return Some(Allowed::new(vec![Cow::Owned(all)]));
        }
        // A scope within another one listed is already covered by it.
        let mut roots: Vec<&Scope> = Vec::new();
        for s in &scopes {
            if !scopes.iter().any(|o| o != s && s.is_within(o)) && !roots.contains(s) {
                roots.push(s);
            }
        }
        // Each scope's list is increasing (`Docs::add`) and a memory is in one scope, so
        // the lists are sorted and disjoint as they are.
        let lists = roots
            .into_iter()
            .flat_map(|scope| {
                docs.scopes
                    .range(scope.clone()..)
                    .take_while(|(s, _)| s.as_str().starts_with(scope.as_str()))
                    .filter(|(s, _)| s.is_within(scope))
                    .map(|(_, seqs)| match timed {
                        true => Cow::Owned(seqs.iter().copied().filter(in_time).collect()),
                        false => Cow::Borrowed(seqs.as_slice()),
                    })
            })
            .collect();
        Some(Allowed::new(lists))
    }
}

impl Engine {
    /// [`Allowed::of`] the in-memory view, copied out of its lock.
    pub(crate) fn allowed(&self, q: &Query) -> Option<Allowed<'static>> {
        Allowed::of(&read(&self.docs), q).map(Allowed::into_owned)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Allowed;

    #[test]
    fn lists_are_asked_by_binary_search_and_counted_once() {
        let lists: Vec<Vec<u64>> = vec![vec![2, 5, 9], Vec::new(), vec![3, 4, 100]];
        let a = Allowed::new(lists.iter().map(|l| Cow::Borrowed(l.as_slice())).collect());
        assert_eq!(a.len(), 6);
        assert!(!a.is_empty());
        for seq in [2, 3, 4, 5, 9, 100] {
            assert!(a.contains(seq), "{seq}");
        }
        for seq in [0, 1, 6, 10, 99, 101] {
            assert!(!a.contains(seq), "{seq}");
        }
        let mut all: Vec<u64> = a.iter().collect();
        all.sort_unstable();
        assert_eq!(all, vec![2, 3, 4, 5, 9, 100]);
        assert!(Allowed::new(vec![Cow::Owned(Vec::new())]).is_empty());
        let owned = a.into_owned();
        assert_eq!(owned.len(), 6);
        assert!(owned.contains(100) && !owned.contains(6));
    }
}
