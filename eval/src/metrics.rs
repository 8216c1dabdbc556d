//! The official LongMemEval retrieval metrics, reproduced from the benchmark's own evaluation
//! code (`src/retrieval/eval_utils.py` and `run_retrieval.py` of LongMemEval).
//!
//! A ranking is a slice of document ids, best first. The official code ranks *positions* of the
//! corpus, so a ranking may hold an id as often as it occurs in the corpus (13 LongMemEval_S
//! haystacks list one filler session twice); everything here works on ids position by position,
//! which gives the same numbers.
//!
//! - `recall_any@k`: 1 if any gold id is in the top k, else 0 (0 for an empty gold set).
//! - `recall_all@k`: 1 if every gold id is in the top k, else 0 (1 for an empty gold set).
//! - `ndcg_any@k`: binary relevance with the official DCG, `rel_1 + sum_{i>=2} rel_i / log2(i)`,
//!   so ranks 1 and 2 weigh the same (kept on purpose, to stay comparable). The ideal DCG is taken
//!   from the relevances of the whole corpus, sorted descending, first k; the score is 0 when the
//!   ideal is 0.
//! - Turn-level rankings scored at session level ([`turns_to_sessions`], [`score_question`]):
//!   the turn suffix is stripped and k is widened until the top turns cover k distinct sessions.

use std::collections::{BTreeMap, HashSet};

/// The cut-offs of the official scripts.
pub const KS: [usize; 6] = [1, 3, 5, 10, 30, 50];

/// The top `k` of a ranking (the whole ranking when it is shorter).
fn top(ranked: &[String], k: usize) -> &[String] {
    &ranked[..k.min(ranked.len())]
}

/// 1.0 if any gold id is among the top `k` of `ranked`, else 0.0; 0.0 for an empty gold set.
pub fn recall_any(ranked: &[String], gold: &[String], k: usize) -> f64 {
    let recalled: HashSet<&str> = top(ranked, k).iter().map(String::as_str).collect();
    if gold.iter().any(|g| recalled.contains(g.as_str())) { 1.0 } else { 0.0 }
}

/// 1.0 if every gold id is among the top `k` of `ranked`, else 0.0; 1.0 for an empty gold set
/// ("all of nothing", as in the official code).
pub fn recall_all(ranked: &[String], gold: &[String], k: usize) -> f64 {
    let recalled: HashSet<&str> = top(ranked, k).iter().map(String::as_str).collect();
    if gold.iter().all(|g| recalled.contains(g.as_str())) { 1.0 } else { 0.0 }
}

/// The official DCG of a relevance list cut at `k`: `rel_1 + sum_{i>=2} rel_i / log2(i)`.
fn dcg(relevances: impl IntoIterator<Item = f64>, k: usize) -> f64 {
    relevances
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(i, rel)| if i == 0 { rel } else { rel / ((i + 1) as f64).log2() })
        .sum()
}

/// The official `ndcg_any@k` with binary relevance (an id is relevant when it is in `gold`).
///
/// The ideal DCG comes from the relevances of every entry of `corpus_ids` (duplicates count),
/// sorted descending and cut at `k`; the score is 0.0 when that ideal is 0 (no gold in the corpus).
pub fn ndcg_any(ranked: &[String], gold: &[String], corpus_ids: &[String], k: usize) -> f64 {
    let gold: HashSet<&str> = gold.iter().map(String::as_str).collect();
    let rel = |id: &String| if gold.contains(id.as_str()) { 1.0 } else { 0.0 };
    let relevant_in_corpus = corpus_ids.iter().filter(|id| gold.contains(id.as_str())).count();
    let ideal = dcg(std::iter::repeat_n(1.0, relevant_in_corpus), k);
    if ideal == 0.0 {
        return 0.0;
    }
    dcg(top(ranked, k).iter().map(rel), k) / ideal
}

/// Strips the turn suffix of a turn id as the official code does: everything before the last
/// `_` (`"answer_ab12_3"` -> `"answer_ab12"`; an id without `_` becomes the empty string).
pub fn strip_turn_id(id: &str) -> &str {
    id.rsplit_once('_').map_or("", |(session, _)| session)
}

/// The official turn -> session conversion of a turn-level ranking for cut-off `k`.
///
/// Every turn id is stripped to its session id ([`strip_turn_id`]); the effective k starts at
/// `k` and grows until the top effective-k turns cover `k` distinct sessions or the list runs
/// out. As in the official loop (`while effective_k <= len and distinct < k: effective_k += 1`),
/// the effective k ends at `len + 1` when the list runs out first. Returns the stripped ranking
/// truncated at the effective k (duplicates kept, positions matter for nDCG) and the effective k.
pub fn turns_to_sessions(ranked_turns: &[String], k: usize) -> (Vec<String>, usize) {
    let stripped: Vec<String> = ranked_turns.iter().map(|id| strip_turn_id(id).to_owned()).collect();
    // distinct[m] = number of distinct sessions among the first m entries
    let mut distinct = Vec::with_capacity(stripped.len() + 1);
    let mut seen: HashSet<&str> = HashSet::new();
    distinct.push(0usize);
    for id in &stripped {
        seen.insert(id.as_str());
        distinct.push(seen.len());
    }
    let len = stripped.len();
    let mut effective_k = k;
    while effective_k <= len && distinct[effective_k] < k {
        effective_k += 1;
    }
    let mut list = stripped;
    list.truncate(effective_k);
    (list, effective_k)
}

/// All official retrieval metrics of one question: keys `recall_any@k`, `recall_all@k` and
/// `ndcg_any@k` for every k in [`KS`].
///
/// `ranked` is the retriever's ranking (best first), `gold` the gold ids and `corpus_ids` the ids
/// of the whole corpus, all at the same granularity (see `longmemeval::gold_ids` and
/// `longmemeval::corpus`).
///
/// With `turn_level`, the three are turn ids and the scores are the official *session-level*
/// scores of a turn-level ranking (`evaluate_retrieval_turn2session`):
/// - the official corpus renames the non-gold turns of an `answer_*` session to `noans_*`, so
///   retrieving such a turn does not count as retrieving the gold session. This is reproduced by
///   renaming `answer` to `noans` in every ranked or corpus id that is not in `gold`;
/// - gold ids are stripped to session ids and deduplicated; corpus ids are stripped but **not**
///   deduplicated (as in the official code), so the ideal DCG counts every gold turn;
/// - each cut-off k is widened with [`turns_to_sessions`] and the scores are taken at the
///   effective k.
///
/// For the plain turn-level scores, call it on the turn ids with `turn_level = false`.
pub fn score_question(
    ranked: &[String],
    gold: &[String],
    corpus_ids: &[String],
    turn_level: bool,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if !turn_level {
        for k in KS {
            insert_scores(&mut out, k, ranked, gold, corpus_ids, k);
        }
        return out;
    }
    let gold_set: HashSet<&str> = gold.iter().map(String::as_str).collect();
    let official_id =
        |id: &String| if gold_set.contains(id.as_str()) { id.clone() } else { id.replace("answer", "noans") };
    let ranked: Vec<String> = ranked.iter().map(official_id).collect();
    let corpus_sessions: Vec<String> =
        corpus_ids.iter().map(|id| strip_turn_id(&official_id(id)).to_owned()).collect();
    let mut gold_sessions: Vec<String> = Vec::new();
    for g in gold {
        let s = strip_turn_id(g);
        if !gold_sessions.iter().any(|x| x == s) {
            gold_sessions.push(s.to_owned());
        }
    }
    for k in KS {
        let (sessions, effective_k) = turns_to_sessions(&ranked, k);
        insert_scores(&mut out, k, &sessions, &gold_sessions, &corpus_sessions, effective_k);
    }
    out
}

/// Inserts the three scores named for cut-off `k`, computed at cut-off `at`.
fn insert_scores(
    out: &mut BTreeMap<String, f64>,
    k: usize,
    ranked: &[String],
    gold: &[String],
    corpus_ids: &[String],
    at: usize,
) {
    out.insert(format!("recall_any@{k}"), recall_any(ranked, gold, at));
    out.insert(format!("recall_all@{k}"), recall_all(ranked, gold, at));
    out.insert(format!("ndcg_any@{k}"), ndcg_any(ranked, gold, corpus_ids, at));
}

/// The per-key mean of several score maps. A key is averaged over the maps that have it; an
/// empty input gives an empty map.
pub fn mean(maps: &[BTreeMap<String, f64>]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for map in maps {
        for (key, value) in map {
            let entry = sums.entry(key.clone()).or_insert((0.0, 0));
            entry.0 += value;
            entry.1 += 1;
        }
    }
    sums.into_iter().map(|(key, (sum, n))| (key, sum / n as f64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn dcg_quirk_rank_two_weighs_like_rank_one() {
        let corpus = ids(&["a", "b", "c", "d", "e"]);
        let gold = ids(&["a"]);
        // hit at rank 1: DCG = 1, ideal = 1 -> 1
        assert!(close(ndcg_any(&ids(&["a", "b", "c", "d", "e"]), &gold, &corpus, 5), 1.0));
        // hit at rank 2: DCG = 1/log2(2) = 1, ideal = 1 -> 1 (the official quirk)
        assert!(close(ndcg_any(&ids(&["b", "a", "c", "d", "e"]), &gold, &corpus, 5), 1.0));
        // hit at rank 3: DCG = 1/log2(3) = 0.6309297535714575
        assert!(close(ndcg_any(&ids(&["b", "c", "a", "d", "e"]), &gold, &corpus, 5), 0.6309297535714575));
        // hit outside the top k
        assert!(close(ndcg_any(&ids(&["b", "c", "a", "d", "e"]), &gold, &corpus, 2), 0.0));
    }

    #[test]
    fn ndcg_ideal_from_whole_corpus() {
        let corpus = ids(&["a", "b", "c", "d", "e", "f"]);
        let gold = ids(&["a", "b", "c"]);
        // k = 1, ranking [a, ...]: DCG 1, ideal 1 -> 1
        assert!(close(ndcg_any(&ids(&["a", "d", "e", "f", "b", "c"]), &gold, &corpus, 1), 1.0));
        // k = 3, ranking [d, a, e]: DCG = 0 + 1/log2(2) + 0 = 1;
        // ideal = 1 + 1 + 1/log2(3) = 2.6309297535714578 -> 0.38009376671593426
        let r = ids(&["d", "a", "e", "b", "f", "c"]);
        assert!(close(ndcg_any(&r, &gold, &corpus, 3), 0.38009376671593426));
        // k = 5, ranking [a, d, e, f, b]: DCG = 1 + 1/log2(5) = 1.430676558073393;
        // the ideal counts all 3 gold of the corpus although only 2 are in the top 5:
        // 2.6309297535714578 -> 0.543791241910304
        let r = ids(&["a", "d", "e", "f", "b", "c"]);
        assert!(close(ndcg_any(&r, &gold, &corpus, 5), 0.543791241910304));
        // gold absent from the corpus: ideal 0 -> 0 even if the ranking names it
        assert!(close(ndcg_any(&ids(&["z"]), &ids(&["z"]), &corpus, 5), 0.0));
    }

    #[test]
    fn recall_all_with_two_gold() {
        let ranked = ids(&["a", "b", "c", "d"]);
        let gold = ids(&["a", "c"]);
        assert!(close(recall_any(&ranked, &gold, 1), 1.0));
        assert!(close(recall_all(&ranked, &gold, 1), 0.0));
        assert!(close(recall_all(&ranked, &gold, 2), 0.0));
        assert!(close(recall_all(&ranked, &gold, 3), 1.0));
        assert!(close(recall_all(&ranked, &gold, 50), 1.0));
        assert!(close(recall_any(&ids(&["b", "d", "a"]), &gold, 2), 0.0));
        assert!(close(recall_any(&ids(&["b", "d", "a"]), &gold, 3), 1.0));
    }

    #[test]
    fn empty_gold() {
        let ranked = ids(&["a", "b"]);
        let corpus = ids(&["a", "b", "c"]);
        let scores = score_question(&ranked, &[], &corpus, false);
        assert_eq!(scores.len(), 18);
        for k in KS {
            assert!(close(scores[&format!("recall_any@{k}")], 0.0));
            assert!(close(scores[&format!("recall_all@{k}")], 1.0));
            assert!(close(scores[&format!("ndcg_any@{k}")], 0.0));
        }
    }

    #[test]
    fn turn_widening() {
        let ranked = ids(&["s1_1", "s1_3", "s2_2", "s1_5", "s3_1", "s2_4", "s4_1"]);
        // k = 1: the first turn already covers one session
        assert_eq!(turns_to_sessions(&ranked, 1), (ids(&["s1"]), 1));
        // k = 3: top 3 cover {s1, s2}, top 4 too, top 5 cover {s1, s2, s3} -> effective k 5
        assert_eq!(turns_to_sessions(&ranked, 3), (ids(&["s1", "s1", "s2", "s1", "s3"]), 5));
        // k = 5: only 4 sessions exist, the loop runs past the end -> effective k = len + 1 = 8
        let (list, k) = turns_to_sessions(&ranked, 5);
        assert_eq!(k, 8);
        assert_eq!(list, ids(&["s1", "s1", "s2", "s1", "s3", "s2", "s4"]));
        // session ids with underscores keep everything but the last part
        assert_eq!(strip_turn_id("answer_sharegpt_hA7AkP3_0_12"), "answer_sharegpt_hA7AkP3_0");
    }

    #[test]
    fn turn_level_scores_at_session_level() {
        // answer_x has user turns 2, 4, 6; turns 4 and 6 have has_answer, turn 2 does not
        // (the official corpus names it noans_x_2).
        let corpus = ids(&["f1_1", "f1_3", "answer_x_2", "answer_x_4", "answer_x_6", "f2_1", "f3_1"]);
        let gold = ids(&["answer_x_4", "answer_x_6"]);
        let ranked = ids(&["f1_1", "answer_x_2", "f1_3", "answer_x_4", "f2_1", "answer_x_6", "f3_1"]);
        // as sessions: [f1, noans_x, f1, answer_x, f2, answer_x, f3]; gold {answer_x};
        // the corpus holds answer_x twice (two gold turns), so the ideal DCG at k >= 2 is 2.
        let s = score_question(&ranked, &gold, &corpus, true);
        // k = 1: effective k 1, [f1] -> all zero
        assert!(close(s["recall_any@1"], 0.0));
        assert!(close(s["recall_all@1"], 0.0));
        assert!(close(s["ndcg_any@1"], 0.0));
        // k = 3: top 3 = {f1, noans_x}, top 4 adds answer_x -> effective k 4;
        // DCG = 1/log2(4) = 0.5, ideal = 1 + 1 = 2 -> 0.25
        // (0.75 if the noans turn counted as a hit, 0.5 if the corpus were deduplicated)
        assert!(close(s["recall_any@3"], 1.0));
        assert!(close(s["recall_all@3"], 1.0));
        assert!(close(s["ndcg_any@3"], 0.25));
        // k = 5: 5 distinct sessions need all 7 turns -> effective k 7;
        // DCG = 1/log2(4) + 1/log2(6) = 0.886852807234541, ideal 2 -> 0.4434264036172708
        assert!(close(s["ndcg_any@5"], 0.4434264036172708));
        // k = 10: list exhausted, same list
        assert!(close(s["ndcg_any@10"], 0.4434264036172708));
        assert!(close(s["recall_all@50"], 1.0));
        // the plain turn-level scores of the same ranking: top 3 has no gold turn
        let t = score_question(&ranked, &gold, &corpus, false);
        assert!(close(t["recall_any@3"], 0.0));
        // top 5 has answer_x_4 only: any 1, all 0; DCG = 1/log2(4) = 0.5,
        // ideal = 1 + 1 = 2 -> 0.25
        assert!(close(t["recall_any@5"], 1.0));
        assert!(close(t["recall_all@5"], 0.0));
        assert!(close(t["ndcg_any@5"], 0.25));
    }

    #[test]
    fn duplicate_corpus_ids_count_in_ideal() {
        // a haystack listing session "a" twice: both positions are relevant
        let corpus = ids(&["a", "b", "a"]);
        let gold = ids(&["a"]);
        // ranking [a, b, a]: DCG = 1 + 0 + 1/log2(3); ideal = 1 + 1 -> 0.8154648767857288
        assert!(close(ndcg_any(&ids(&["a", "b", "a"]), &gold, &corpus, 3), 0.8154648767857288));
    }

    #[test]
    fn mean_per_key() {
        let a: BTreeMap<String, f64> = [("x".to_string(), 1.0), ("y".to_string(), 0.0)].into();
        let b: BTreeMap<String, f64> = [("x".to_string(), 0.0)].into();
        let c: BTreeMap<String, f64> = [("x".to_string(), 0.5), ("y".to_string(), 1.0)].into();
        let m = mean(&[a, b, c]);
        assert!(close(m["x"], 0.5));
        assert!(close(m["y"], 0.5));
        assert!(mean(&[]).is_empty());
    }
}
