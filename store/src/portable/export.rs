//! Reading a store out as export records (docs/EXPORT.md), a page at a time: sections
//! in [`amber_core::portable::RECORD_KINDS`] order, each read by its own query. The
//! cursor names a section and a position in it (the last key, or an offset where a
//! table has no integer key).

use amber_core::portable::{ExportFilter, ExportPage};
use rusqlite::types::ValueRef;
use rusqlite::{Row, Statement};
use serde_json::{Map, Value, json};

use crate::{Error, Result, Store};

/// How a section pages: after its last key, or by offset.
#[derive(Clone, Copy, PartialEq)]
enum Paging {
    Key,
    Offset,
}

/// One kind of record: its query (named parameters `:scope`, `:since`, `:model`, `:pos`,
/// `:limit`, each optional) and how a row becomes a record. With [`Paging::Key`] the
/// query's first column is the key and is not part of the record.
struct Section {
    kind: &'static str,
    paging: Paging,
    sql: &'static str,
    /// Column names of the record, in the query's order (after the key). A name ending
    /// in `~` holds JSON text and is written as JSON; `#` a blob, written as hex.
    fields: &'static [&'static str],
}

const SECTIONS: &[Section] = &[
    Section {
        kind: "memory",
        paging: Paging::Key,
        sql: "SELECT seq, id, scope, content, kind, source, author, session_id, created_at, event_time,
                     metadata, forgotten_at, recipient, reply_to, supersedes, weight, used_at, archived_at,
                     superseded_by, successes, failures
              FROM memories
              WHERE (:scope IS NULL OR scope = :scope) AND (:since IS NULL OR created_at >= :since)
                AND seq > :pos ORDER BY seq LIMIT :limit",
        fields: &[
            "id", "scope", "content", "type", "source", "author", "session_id", "created_at", "event_time",
            "metadata~", "forgotten_at", "to", "reply_to", "supersedes~", "weight", "used_at", "archived_at",
            "superseded_by", "successes", "failures",
        ],
    },
    Section {
        kind: "outcome",
        paging: Paging::Key,
        // `nth`: how many identical reports came before this one (two failures reported
        // in one millisecond are two reports), so an import keeps both and twice keeps two.
        sql: "SELECT o.n, m.id, o.kind, o.result, o.session_id, o.agent, o.note, o.at, o.basis,
                     (SELECT COUNT(*) FROM outcomes p WHERE p.seq = o.seq AND p.n < o.n AND p.kind = o.kind
                        AND p.at = o.at AND p.result IS o.result AND p.session_id IS o.session_id
                        AND p.agent IS o.agent AND p.note IS o.note)
              FROM outcomes o JOIN memories m ON m.seq = o.seq
              WHERE (:scope IS NULL OR m.scope = :scope) AND (:since IS NULL OR o.at >= :since)
                AND o.n > :pos ORDER BY o.n LIMIT :limit",
        fields: &["memory", "kind", "result", "session_id", "agent", "note", "at", "basis", "nth"],
    },
    Section {
        kind: "supersession",
        paging: Paging::Offset,
        sql: "SELECT b.id, t.id, s.at
              FROM supersessions s JOIN memories b ON b.seq = s.by_seq JOIN memories t ON t.seq = s.target
              WHERE (:scope IS NULL OR b.scope = :scope) AND (:since IS NULL OR s.at >= :since)
              ORDER BY s.by_seq, s.target LIMIT :limit OFFSET :pos",
        fields: &["by", "target", "at"],
    },
    Section {
        kind: "link",
        paging: Paging::Offset,
        sql: "SELECT l.from_id, l.to_id, l.kind, l.similarity, l.created_at
              FROM links l JOIN memories m ON m.id = l.from_id
              WHERE (:scope IS NULL OR m.scope = :scope) AND (:since IS NULL OR l.created_at >= :since)
              ORDER BY l.from_id, l.to_id, l.kind LIMIT :limit OFFSET :pos",
        fields: &["from", "to", "kind", "similarity", "created_at"],
    },
    Section {
        kind: "moved",
        paging: Paging::Offset,
        sql: "SELECT mv.old_id, mv.new_id, mv.moved_at
              FROM moved mv LEFT JOIN memories m ON m.id = mv.new_id
              WHERE (:scope IS NULL OR m.scope = :scope) AND (:since IS NULL OR mv.moved_at >= :since)
              ORDER BY mv.old_id LIMIT :limit OFFSET :pos",
        fields: &["old_id", "new_id", "moved_at"],
    },
    Section {
        kind: "thread_hold",
        paging: Paging::Offset,
        sql: "SELECT h.thread, h.reason, h.at
              FROM thread_holds h LEFT JOIN memories m ON m.id = h.thread
              WHERE (:scope IS NULL OR m.scope = :scope) AND (:since IS NULL OR h.at >= :since)
              ORDER BY h.thread LIMIT :limit OFFSET :pos",
        fields: &["thread", "reason", "at"],
    },
    Section {
        kind: "entity",
        paging: Paging::Key,
        sql: "SELECT e.id, e.scope, e.name, e.kind, e.created_at,
                     (SELECT json_group_array(name) FROM kg_names WHERE entity = e.id)
              FROM kg_entities e
              WHERE (:scope IS NULL OR e.scope = :scope) AND (:since IS NULL OR e.created_at >= :since)
                AND e.id > :pos ORDER BY e.id LIMIT :limit",
        fields: &["scope", "name", "kind", "created_at", "names~"],
    },
    Section {
        kind: "fact",
        paging: Paging::Key,
        sql: "SELECT f.id, s.scope, s.name, f.predicate, o.name, f.literal, f.valid_from, f.valid_to,
                     f.recorded_at, f.invalidated_at, f.confidence, f.sources,
                     (SELECT json_group_array(json_object('at', at, 'recorded_at', recorded_at, 'reason', reason))
                      FROM kg_invalidations WHERE fact = f.id)
              FROM kg_facts f JOIN kg_entities s ON s.id = f.subject LEFT JOIN kg_entities o ON o.id = f.object
              WHERE (:scope IS NULL OR s.scope = :scope) AND (:since IS NULL OR f.recorded_at >= :since)
                AND f.id > :pos ORDER BY f.id LIMIT :limit",
        fields: &[
            "scope", "subject", "predicate", "object", "literal", "valid_from", "valid_to", "recorded_at",
            "invalidated_at", "confidence", "sources~", "invalidations~",
        ],
    },
    Section {
        kind: "run",
        paging: Paging::Offset,
        sql: "SELECT id, scope, agent, task, trace, used, outcome, advice, created_at FROM runs
              WHERE (:scope IS NULL OR scope = :scope) AND (:since IS NULL OR created_at >= :since)
              ORDER BY created_at, id LIMIT :limit OFFSET :pos",
        fields: &["id", "scope", "agent", "task", "trace", "used~", "outcome", "advice~", "created_at"],
    },
    Section {
        kind: "reward",
        paging: Paging::Key,
        sql: "SELECT w.n, w.run_id, w.reward, w.reason, w.agent, w.at
              FROM run_rewards w JOIN runs r ON r.id = w.run_id
              WHERE (:scope IS NULL OR r.scope = :scope) AND (:since IS NULL OR w.at >= :since)
                AND w.n > :pos ORDER BY w.n LIMIT :limit",
        fields: &["run", "reward", "reason", "agent", "at"],
    },
    Section {
        kind: "session",
        paging: Paging::Offset,
        sql: "SELECT id, agent, scope, started_at, ended_at, record FROM sessions
              WHERE (:scope IS NULL OR scope = :scope) AND (:since IS NULL OR started_at >= :since)
              ORDER BY started_at, id LIMIT :limit OFFSET :pos",
        fields: &["id", "agent", "scope", "started_at", "ended_at", "detail~"],
    },
    Section {
        kind: "embedding",
        paging: Paging::Offset,
        sql: "SELECT model, chunk_hash, vector FROM embeddings WHERE model = :model
              ORDER BY chunk_hash LIMIT :limit OFFSET :pos",
        fields: &["model", "chunk#", "vector#"],
    },
];

/// A cursor: the section's index and its position.
fn parse_cursor(cursor: Option<&str>) -> Result<(usize, i64)> {
    let Some(c) = cursor else { return Ok((0, 0)) };
    let bad = || Error::Unsupported(format!("not an export cursor: {c:?}"));
    let (kind, pos) = c.split_once(':').ok_or_else(bad)?;
    let section = SECTIONS.iter().position(|s| s.kind == kind).ok_or_else(bad)?;
    Ok((section, pos.parse().map_err(|_| bad())?))
}

impl Store {
    /// Up to `limit` records of the export after `cursor`, and the cursor after them.
    pub(crate) fn export_records(
        &self,
        filter: &ExportFilter,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ExportPage> {
        let (mut section, mut pos) = parse_cursor(cursor)?;
        let mut records = Vec::new();
        while section < SECTIONS.len() && records.len() < limit {
            let s = &SECTIONS[section];
            let wanted = limit - records.len();
            let skip = s.kind == "embedding" && (filter.embeddings.is_none() || filter.scope.is_some());
            let (got, last) =
                if skip { (Vec::new(), pos) } else { self.section_page(s, filter, pos, wanted)? };
            let n = got.len();
            records.extend(got);
            pos = match s.paging {
                Paging::Key => last,
                Paging::Offset => pos + n as i64,
            };
            if n < wanted {
                section += 1;
                pos = 0;
            }
        }
        let next = (section < SECTIONS.len()).then(|| format!("{}:{pos}", SECTIONS[section].kind));
        Ok(ExportPage { records, next })
    }

    /// One section's records from `pos`; with the last key read (paging by key).
    fn section_page(
        &self,
        s: &Section,
        f: &ExportFilter,
        pos: i64,
        limit: usize,
    ) -> Result<(Vec<Value>, i64)> {
        let mut stmt = self.conn.prepare_cached(s.sql).map_err(self.sql())?;
        bind(&mut stmt, f, pos, limit).map_err(self.sql())?;
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        let mut last = pos;
        while let Some(row) = rows.next().map_err(self.sql())? {
            let first = if s.paging == Paging::Key {
                last = row.get(0).map_err(self.sql())?;
                1
            } else {
                0
            };
            out.push(
                record(s, row, first).map_err(|detail| Error::Corrupt { path: self.path.clone(), detail })?,
            );
        }
        Ok((out, last))
    }
}

/// Binds the named parameters a section's query uses.
fn bind(stmt: &mut Statement<'_>, f: &ExportFilter, pos: i64, limit: usize) -> rusqlite::Result<()> {
    let scope = f.scope.as_ref().map(|s| s.as_str().to_string());
    let values: [(&str, rusqlite::types::Value); 5] = [
        (":scope", scope.into()),
        (":since", f.since.into()),
        (":model", f.embeddings.clone().into()),
        (":pos", pos.into()),
        (":limit", (limit as i64).into()),
    ];
    for (name, v) in values {
        if let Some(i) = stmt.parameter_index(name)? {
            stmt.raw_bind_parameter(i, v)?;
        }
    }
    Ok(())
}

/// A row as a record of its section.
fn record(s: &Section, row: &Row<'_>, first: usize) -> std::result::Result<Value, String> {
    let mut obj = Map::new();
    obj.insert("record".into(), json!(s.kind));
    for (i, field) in s.fields.iter().enumerate() {
        let v = row.get_ref(first + i).map_err(|e| format!("{}: {e}", s.kind))?;
        let (name, value) = if let Some(name) = field.strip_suffix('~') {
            let text = match v {
                ValueRef::Null => None,
                ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                _ => return Err(format!("{}.{name}: not text", s.kind)),
            };
            let parsed = match text {
                None => Value::Null,
                Some(t) => {
                    serde_json::from_str(&t).map_err(|e| format!("{}.{name}: not JSON: {e}", s.kind))?
                }
            };
            (name, parsed)
        } else if let Some(name) = field.strip_suffix('#') {
            match v {
                ValueRef::Blob(b) => (name, json!(hex::encode(b))),
                _ => return Err(format!("{}.{name}: not a blob", s.kind)),
            }
        } else {
            (*field, plain(v))
        };
        obj.insert(name.to_string(), value);
    }
    Ok(Value::Object(obj))
}

/// A column's value as JSON (text as text, numbers as numbers, a blob as hex).
fn plain(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) => json!(f),
        ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => json!(hex::encode(b)),
    }
}
