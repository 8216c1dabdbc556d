//! BM25 over memory content with tantivy.

use std::collections::HashSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use amber_core::{Millis, Scope};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::{Error, Result};

/// Bumped when the schema or the analyzers change, so an old index is rebuilt.
const FORMAT: u32 = 2;
/// The indexing memory budget; tantivy's floor is 15 MB per thread.
const WRITER_BUDGET_BYTES: usize = 50_000_000;
/// One memory as the BM25 index sees it.
#[derive(Debug, Clone, Copy)]
pub struct Bm25Doc<'a> {
    /// The memory's sequence number.
    pub seq: u64,
    /// Its scope.
    pub scope: &'a Scope,
    /// Its time (event time, else filing time).
    pub time: Millis,
    /// Its content.
    pub content: &'a str,
}

/// Restrictions on a BM25 search.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bm25Filter<'a> {
    /// Only memories within one of these scopes (empty: every scope).
    pub scopes: &'a [&'a Scope],
    /// Only memories at or after this time.
    pub since: Option<Millis>,
    /// Only memories at or before this time.
    pub until: Option<Millis>,
}

/// A tantivy index of memory content.
///
/// Shareable across threads: searches run concurrently with each other and with
/// indexing (they see the last commit); writes go through one internal writer.
///
/// The writer is opened with the index when it can be, else at the next write, and is
/// dropped after any failed write: tantivy's writer is unusable once one of its threads
/// failed (a full disk, for one: "An index writer was killed"), so the next write opens
/// a fresh one. Searches never need it: an index whose writer cannot be opened (no space
/// for its lock file or a new segment) still answers from its last commit.
pub struct Bm25Index {
    index: Index,
    writer: Mutex<Option<IndexWriter>>,
    reader: IndexReader,
    path: PathBuf,
    seq: Field,
    scope: Field,
    time: Field,
    content: Field,
    code: Field,
    watermark: Mutex<Option<u64>>,
}

/// Locks a mutex, going on after a panic elsewhere: the guarded values here stay usable
/// (an uncommitted tantivy batch is simply committed or dropped later).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Payload {
    format: u32,
    watermark: u64,
}

fn schema() -> Schema {
    let mut b = Schema::builder();
    b.add_u64_field("seq", INDEXED | FAST);
    b.add_text_field("scope", STRING);
    b.add_i64_field("time", INDEXED | FAST);
    let text = |tokenizer: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
    };
    b.add_text_field("content", text("amber_en"));
    b.add_text_field("code", text("amber_code"));
    b.build()
}

fn new_writer(index: &Index) -> tantivy::Result<IndexWriter> {
    index.writer_with_num_threads(1, WRITER_BUDGET_BYTES)
}

impl Bm25Index {
    /// Opens the index in `dir`, creating it when the folder is empty or absent.
    /// An index of another format, or one that does not open, is an error: the caller
    /// rebuilds it from the store.
    pub fn open_or_create(dir: &Path) -> Result<Bm25Index> {
        let err = |source| Error::Bm25 { path: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
        let exists = dir.join("meta.json").exists();
        let index = if exists {
            Index::open_in_dir(dir).map_err(err)?
        } else {
            Index::create_in_dir(dir, schema()).map_err(err)?
        };
        Self::init(index, dir.to_path_buf())
    }

    /// An index held in RAM.
    pub fn create_in_ram() -> Result<Bm25Index> {
        Self::init(Index::create_in_ram(schema()), PathBuf::new())
    }

    fn init(index: Index, path: PathBuf) -> Result<Bm25Index> {
        let err = |source| Error::Bm25 { path: path.clone(), source };
        if index.schema() != schema() {
            return Err(err(tantivy::TantivyError::SchemaError("the index has another schema".into())));
        }
        crate::analysis::register(&index).map_err(err)?;
        let payload = index.load_metas().map_err(err)?.payload;
        let watermark = match payload.as_deref().map(serde_json::from_str::<Payload>) {
            None => None,
            Some(Ok(p)) if p.format == FORMAT => Some(p.watermark),
            Some(_) => {
                return Err(err(tantivy::TantivyError::SchemaError("the index has another format".into())));
            }
        };
        let writer = match new_writer(&index) {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::warn!(path = %path.display(), cause = %e, "the bm25 index is read-only until its writer can be opened");
                None
            }
        };
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(err)?;
        let field = |name| index.schema().get_field(name).map_err(err);
        Ok(Bm25Index {
            seq: field("seq")?,
            scope: field("scope")?,
            time: field("time")?,
            content: field("content")?,
            code: field("code")?,
            index,
            writer: Mutex::new(writer),
            reader,
            path: path.clone(),
            watermark: Mutex::new(watermark),
        })
    }

    fn err(&self) -> impl Fn(tantivy::TantivyError) -> Error + '_ {
        move |source| Error::Bm25 { path: self.path.clone(), source }
    }

    /// Runs `f` on the writer, opening one when there is none. A failure drops the
    /// writer, and with it whatever was not committed.
    fn with_writer<R>(&self, f: impl FnOnce(&mut IndexWriter) -> tantivy::Result<R>) -> Result<R> {
        let mut guard = lock(&self.writer);
        let writer = match guard.as_mut() {
            Some(w) => w,
            None => guard.insert(new_writer(&self.index).map_err(self.err())?),
        };
        let out = f(writer);
        if out.is_err() {
            *guard = None;
        }
        out.map_err(self.err())
    }

    /// True when a writer is open (false after a failed write, until the next write
    /// opens one).
    pub fn writable(&self) -> bool {
        lock(&self.writer).is_some()
    }

    /// Adds (or replaces) a memory. Visible to searches after [`Bm25Index::commit`].
    pub fn add(&self, doc: &Bm25Doc<'_>) -> Result<()> {
        let mut d = TantivyDocument::new();
        d.add_u64(self.seq, doc.seq);
        for p in doc.scope.prefixes() {
            d.add_text(self.scope, p);
        }
        d.add_i64(self.time, doc.time);
        d.add_text(self.content, doc.content);
        d.add_text(self.code, doc.content);
        self.with_writer(|w| {
            w.delete_term(Term::from_field_u64(self.seq, doc.seq));
            w.add_document(d)
        })?;
        Ok(())
    }

    /// Removes the memory with this seq, if indexed. Visible after the next commit.
    pub fn delete(&self, seq: u64) -> Result<()> {
        self.with_writer(|w| Ok(w.delete_term(Term::from_field_u64(self.seq, seq))))?;
        Ok(())
    }

    /// Removes every document. Visible after the next commit: until then searches see
    /// the last commit, so a rebuild (clear, add everything, commit) swaps atomically.
    pub fn clear(&self) -> Result<()> {
        self.with_writer(|w| w.delete_all_documents())?;
        Ok(())
    }

    /// Commits what was added, recording `watermark` (the highest seq indexed) with the
    /// commit, and makes it visible to searches. On failure nothing since the last
    /// commit is kept.
    pub fn commit(&self, watermark: u64) -> Result<()> {
        let payload = serde_json::to_string(&Payload { format: FORMAT, watermark }).unwrap_or_default();
        self.with_writer(|w| {
            let mut prepared = w.prepare_commit()?;
            prepared.set_payload(&payload);
            prepared.commit()
        })?;
        self.reader.reload().map_err(self.err())?;
        *lock(&self.watermark) = Some(watermark);
        Ok(())
    }

    /// Drops what was added, deleted or cleared since the last commit (with the writer:
    /// the next write opens another).
    pub fn rollback(&self) -> Result<()> {
        lock(&self.writer).take();
        Ok(())
    }

    /// The highest seq recorded by the last commit (None for a new index).
    pub fn watermark(&self) -> Option<u64> {
        *lock(&self.watermark)
    }

    /// Documents visible to searches.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn terms(&self, field: Field, text: &str) -> Result<Vec<Term>> {
        let mut analyzer = self.index.tokenizer_for_field(field).map_err(self.err())?;
        let mut stream = analyzer.token_stream(text);
        let mut seen = HashSet::new();
        let mut terms = Vec::new();
        while stream.advance() {
            let t = &stream.token().text;
            if seen.insert(t.clone()) {
                terms.push(Term::from_field_text(field, t));
            }
        }
        Ok(terms)
    }

    /// The best `limit` memories for `text` by BM25 over the stemmed words and the
    /// whole identifiers, as (seq, score), best first. Query text is never parsed as
    /// syntax: any string is a bag of words.
    pub fn search(&self, text: &str, filter: &Bm25Filter<'_>, limit: usize) -> Result<Vec<(u64, f32)>> {
        let mut terms = self.terms(self.content, text)?;
        terms.extend(self.terms(self.code, text)?);
        self.run(terms, filter, limit)
    }

    /// The best `limit` memories that contain the query's identifiers exactly (tokens
    /// with a letter and a digit, `_`, `.`, `/` or `:`, such as `XK-4471`,
    /// `parse_frame_header` or `src/main.rs`), by BM25 over those tokens alone. Empty
    /// when the query has none: plain words and numbers are not identifiers.
    pub fn search_identifiers(
        &self,
        text: &str,
        filter: &Bm25Filter<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f32)>> {
        let terms = self
            .terms(self.code, text)?
            .into_iter()
            .filter(|t| t.value().as_str().is_some_and(crate::analysis::is_identifier))
            .collect();
        self.run(terms, filter, limit)
    }

    /// The best `limit` memories holding every stemmed word of `text` (stop words
    /// aside): candidates for a phrase, to be checked against the content. Empty when
    /// `text` has only stop words.
    pub fn search_all_words(
        &self,
        text: &str,
        filter: &Bm25Filter<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f32)>> {
        let terms = self.terms(self.content, text)?;
        self.run_with(terms, Occur::Must, filter, limit)
    }

    fn run(&self, terms: Vec<Term>, filter: &Bm25Filter<'_>, limit: usize) -> Result<Vec<(u64, f32)>> {
        self.run_with(terms, Occur::Should, filter, limit)
    }

    fn run_with(
        &self,
        terms: Vec<Term>,
        occur: Occur,
        filter: &Bm25Filter<'_>,
        limit: usize,
    ) -> Result<Vec<(u64, f32)>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .map(|t| (occur, Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)) as Box<dyn Query>))
            .collect();
        let mut must: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        // Filters must not change the BM25 score: boost them to zero.
        let zero = |q: Box<dyn Query>| -> Box<dyn Query> { Box::new(BoostQuery::new(q, 0.0)) };
        if !filter.scopes.is_empty() {
            let any: Vec<(Occur, Box<dyn Query>)> = filter
                .scopes
                .iter()
                .map(|scope| {
                    let t = Term::from_field_text(self.scope, scope.as_str());
                    (Occur::Should, Box::new(TermQuery::new(t, IndexRecordOption::Basic)) as Box<dyn Query>)
                })
                .collect();
            must.push((Occur::Must, zero(Box::new(BooleanQuery::new(any)))));
        }
        if filter.since.is_some() || filter.until.is_some() {
            let bound = |v: Option<Millis>| match v {
                Some(v) => Bound::Included(Term::from_field_i64(self.time, v)),
                None => Bound::Unbounded,
            };
            must.push((
                Occur::Must,
                zero(Box::new(RangeQuery::new(bound(filter.since), bound(filter.until)))),
            ));
        }
        let query = BooleanQuery::new(must);
        let searcher = self.reader.searcher();
        let top =
            searcher.search(&query, &TopDocs::with_limit(limit).order_by_score()).map_err(self.err())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let col =
                searcher.segment_reader(addr.segment_ord).fast_fields().u64("seq").map_err(self.err())?;
            if let Some(seq) = col.first(addr.doc_id) {
                out.push((seq, score));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(docs: &[(&str, &str, i64)]) -> Bm25Index {
        let ix = Bm25Index::create_in_ram().unwrap();
        for (i, (scope, content, time)) in docs.iter().enumerate() {
            let scope: Scope = scope.parse().unwrap();
            ix.add(&Bm25Doc { seq: i as u64 + 1, scope: &scope, time: *time, content }).unwrap();
        }
        ix.commit(docs.len() as u64).unwrap();
        ix
    }

    fn seqs(hits: Vec<(u64, f32)>) -> Vec<u64> {
        hits.into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn stems_and_keeps_identifiers_whole() {
        let ix = index(&[
            ("p", "The parser was running slowly on big inputs", 0),
            ("p", "call parse_frame_header in src/frame.rs to fix E0502", 0),
            ("p", "nothing relevant here at all", 0),
        ]);
        let none = Bm25Filter::default();
        assert_eq!(seqs(ix.search("runs", &none, 10).unwrap()), vec![1]);
        assert_eq!(seqs(ix.search("parse_frame_header", &none, 10).unwrap()), vec![2]);
        assert_eq!(seqs(ix.search("where is src/frame.rs", &none, 10).unwrap()), vec![2]);
        assert_eq!(seqs(ix.search("e0502", &none, 10).unwrap()), vec![2]);
        // the parts of an identifier are searchable too
        assert_eq!(seqs(ix.search("frame header", &none, 10).unwrap()), vec![2]);
        assert_eq!(seqs(ix.search_identifiers("who wrote parse_frame_header?", &none, 10).unwrap()), vec![2]);
        assert!(ix.search_identifiers("parser running 2023 follow-up", &none, 10).unwrap().is_empty());
        // syntax characters are just text
        assert!(ix.search("\"unbalanced (quote AND OR:", &none, 10).is_ok());
        assert!(ix.search("the of and", &none, 10).unwrap().is_empty(), "stop words alone match nothing");
    }

    #[test]
    fn filters_by_scope_prefix_and_time_without_changing_scores() {
        let ix = index(&[
            ("a/x", "kafka consumer lag", 10),
            ("a/y", "kafka consumer lag again kafka", 20),
            ("b", "kafka consumer lag", 30),
            ("ab", "kafka", 40),
        ]);
        let a: Scope = "a".parse().unwrap();
        let f = Bm25Filter { scopes: &[&a], ..Default::default() };
        let mut got = seqs(ix.search("kafka", &f, 10).unwrap());
        got.sort();
        assert_eq!(got, vec![1, 2]);
        let f = Bm25Filter { since: Some(15), until: Some(30), ..Default::default() };
        let mut got = seqs(ix.search("kafka", &f, 10).unwrap());
        got.sort();
        assert_eq!(got, vec![2, 3]);
        let all = ix.search("kafka consumer", &Bm25Filter::default(), 10).unwrap();
        let scoped =
            ix.search("kafka consumer", &Bm25Filter { scopes: &[&a], ..Default::default() }, 10).unwrap();
        let score = |v: &[(u64, f32)], s| v.iter().find(|(q, _)| *q == s).unwrap().1;
        assert_eq!(score(&all, 1), score(&scoped, 1));
        // Two scopes: a memory within either passes, scores unchanged.
        let b: Scope = "b".parse().unwrap();
        let both =
            ix.search("kafka consumer", &Bm25Filter { scopes: &[&a, &b], ..Default::default() }, 10).unwrap();
        let mut got = seqs(both.clone());
        got.sort();
        assert_eq!(got, vec![1, 2, 3], "`ab` is not within `a`");
        assert_eq!(score(&all, 3), score(&both, 3));
    }

    #[test]
    fn replace_and_reopen_with_watermark() {
        let dir = tempfile::tempdir().unwrap();
        {
            let ix = Bm25Index::open_or_create(dir.path()).unwrap();
            assert_eq!(ix.watermark(), None);
            let s: Scope = "s".parse().unwrap();
            ix.add(&Bm25Doc { seq: 7, scope: &s, time: 0, content: "alpha" }).unwrap();
            ix.add(&Bm25Doc { seq: 7, scope: &s, time: 0, content: "alpha beta" }).unwrap();
            ix.commit(7).unwrap();
            assert_eq!(ix.num_docs(), 1);
        }
        let ix = Bm25Index::open_or_create(dir.path()).unwrap();
        assert_eq!(ix.watermark(), Some(7));
        assert_eq!(seqs(ix.search("beta", &Bm25Filter::default(), 5).unwrap()), vec![7]);
        ix.delete(7).unwrap();
        ix.rollback().unwrap();
        ix.commit(7).unwrap();
        assert_eq!(ix.num_docs(), 1, "a rolled back delete is gone");
        ix.delete(7).unwrap();
        assert_eq!(ix.num_docs(), 1, "a delete is visible after the commit");
        ix.commit(7).unwrap();
        assert_eq!(ix.num_docs(), 0);
        assert!(ix.search("beta", &Bm25Filter::default(), 5).unwrap().is_empty());
    }

    #[test]
    fn searches_run_while_another_thread_indexes() {
        let ix = index(&[("p", "alpha beta", 0)]);
        let s: Scope = "p".parse().unwrap();
        std::thread::scope(|t| {
            t.spawn(|| {
                for seq in 2..200u64 {
                    ix.add(&Bm25Doc { seq, scope: &s, time: 0, content: "gamma alpha" }).unwrap();
                    if seq % 20 == 0 {
                        ix.commit(seq).unwrap();
                    }
                }
                ix.commit(199).unwrap();
            });
            for _ in 0..2 {
                t.spawn(|| {
                    for _ in 0..200 {
                        let hits = ix.search("alpha", &Bm25Filter::default(), 500).unwrap();
                        assert!(hits.iter().any(|(seq, _)| *seq == 1));
                    }
                });
            }
        });
        assert_eq!(ix.num_docs(), 199);
        assert_eq!(ix.watermark(), Some(199));
    }
}
