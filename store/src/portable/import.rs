//! Writing export records into a store (docs/EXPORT.md): each record added once, matched
//! by what identifies it (a memory by its id, an entity by its name in its scope, a fact
//! by its subject, predicate, object and times), so importing twice changes nothing. A
//! record whose memory, run or entity is neither in the store nor earlier in the import
//! is left out with the reason.
//!
//! **A file cannot retire what it did not bring** (unless the person imports their own
//! export with `keep_trust`): its outcomes, supersessions, thread holds and links act
//! only on memories that came in from a file (`metadata.imported`), an invalidation's
//! `supersedes` keeps only those, rewards go only to runs the same call brought, and its
//! vectors are not taken (they would be trusted for any text of the same hash).

use std::collections::HashSet;
use std::str::FromStr;

use amber_core::graph::normalize_name;
use amber_core::portable::{ImportOptions, ImportTally};
use amber_core::{MAX_CONTENT_BYTES, MAX_METADATA_BYTES, MemoryId, MemoryType, Millis, Scope};
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::{Value, json};

use crate::{Error, Result, Store};

/// Why a record is left out.
type Skip = String;

/// A field of a record: text, a number, or absent.
struct Rec<'a>(&'a serde_json::Map<String, Value>);

impl Rec<'_> {
    fn str(&self, k: &str) -> std::result::Result<&str, Skip> {
        self.0.get(k).and_then(Value::as_str).ok_or_else(|| format!("no {k} (text)"))
    }
    fn opt_str(&self, k: &str) -> std::result::Result<Option<&str>, Skip> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("{k} is not text")),
        }
    }
    fn int(&self, k: &str) -> std::result::Result<i64, Skip> {
        self.0.get(k).and_then(Value::as_i64).ok_or_else(|| format!("no {k} (integer)"))
    }
    fn opt_int(&self, k: &str) -> std::result::Result<Option<i64>, Skip> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| format!("{k} is not an integer")),
        }
    }
    fn num(&self, k: &str) -> std::result::Result<f64, Skip> {
        self.0.get(k).and_then(Value::as_f64).ok_or_else(|| format!("no {k} (number)"))
    }
    /// A JSON field stored as text (`metadata`, `used`, …); `default` when absent.
    fn json_text(&self, k: &str, default: &str) -> String {
        match self.0.get(k) {
            None | Some(Value::Null) => default.to_string(),
            Some(v) => v.to_string(),
        }
    }
    fn opt_json_text(&self, k: &str) -> Option<String> {
        match self.0.get(k) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.to_string()),
        }
    }
    fn scope(&self) -> std::result::Result<Scope, Skip> {
        Scope::from_str(self.str("scope")?).map_err(|e| e.to_string())
    }
}

/// What one record did.
enum Did {
    Added,
    Present,
    /// Left out by a rule, not for a fault of the record (a guard, a move).
    LeftOut(String),
}

impl Store {
    /// Writes records in one transaction; returns what it did with each kind.
    pub(crate) fn import_records(
        &mut self,
        records: &[Value],
        opts: ImportOptions,
        now: Millis,
    ) -> Result<ImportTally> {
        let path = self.path.clone();
        let sql = |source| Error::Sqlite { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(sql)?;
        let mut tally = ImportTally::default();
        // Memories that took new outcomes but were in the store already: their standing
        // is recomputed from the log.
        let mut refresh: HashSet<i64> = HashSet::new();
        // Runs this call brought (a file's rewards go to them only).
        let mut runs: HashSet<String> = HashSet::new();
        for v in records {
            let Some(obj) = v.as_object() else {
                tally.skip("?", v.to_string().chars().take(80).collect::<String>(), "not a JSON object");
                continue;
            };
            let r = Rec(obj);
            let kind = obj.get("record").and_then(Value::as_str).unwrap_or("?");
            let what = describe(kind, &r);
            let did = match guard(&tx, kind, &r, opts, &runs).map_err(sql)? {
                Some(reason) => Ok(Ok(Did::LeftOut(reason))),
                None => match kind {
                    "memory" => memory(&tx, &r, opts, now),
                    "outcome" => outcome(&tx, &r, &mut refresh),
                    "supersession" => supersession(&tx, &r),
                    "link" => link(&tx, &r),
                    "moved" => moved(&tx, &r),
                    "thread_hold" => thread_hold(&tx, &r),
                    "entity" => entity(&tx, &r),
                    "fact" => fact(&tx, &r),
                    "run" => run(&tx, &r),
                    "reward" => reward(&tx, &r),
                    "session" => session(&tx, &r),
                    "embedding" => embedding(&tx, &r),
                    other => Ok(Err(format!("unknown record kind {other:?}"))),
                },
            }
            .map_err(sql)?;
            if kind == "run" && matches!(did, Ok(Did::Added)) {
                runs.extend(r.str("id").ok().map(str::to_string));
            }
            match did {
                Ok(Did::Added) => tally.add(kind),
                Ok(Did::Present) => tally.had(kind),
                Ok(Did::LeftOut(reason)) => tally.skip(kind, what, reason),
                Err(reason) => tally.fail(kind, what, reason),
            }
        }
        let mut out = Vec::new();
        for seq in refresh {
            crate::standing::refresh(&tx, seq as u64, now, &mut HashSet::new(), &mut out, &path)?;
        }
        tx.commit().map_err(sql)?;
        Ok(tally)
    }
}

/// Whether a memory came in from a file: `Some(true)` when its metadata says so,
/// `Some(false)` when it is in the store some other way, `None` when it is not there.
fn imported(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<Option<bool>> {
    tx.query_row(
        "SELECT json_extract(metadata, '$.imported') IS NOT NULL FROM memories WHERE id = ?1",
        [id],
        |r| r.get(0),
    )
    .optional()
}

/// Why a record of a file may not act on the store, when it may not (without
/// `keep_trust`): it names a memory that did not come from a file, a run this call did
/// not bring, or it is a vector.
fn guard(
    tx: &Transaction<'_>,
    kind: &str,
    r: &Rec<'_>,
    opts: ImportOptions,
    runs: &HashSet<String>,
) -> rusqlite::Result<Option<Skip>> {
    if opts.keep_trust {
        return Ok(None);
    }
    let not_from_a_file = |what: &str| {
        Some(format!(
            "{what} a memory that did not come from a file: an import cannot act on memories it did not bring \
             (--keep-trust for your own export)"
        ))
    };
    let fields: &[&str] = match kind {
        "outcome" => &["memory"],
        "supersession" => &["target"],
        "thread_hold" => &["thread"],
        "link" => &["from", "to"],
        "reward" => {
            let run = r.str("run").unwrap_or("");
            return Ok((!runs.contains(run)).then(|| {
                "a reward for a run this import did not bring: an import cannot reward runs it did not bring \
                 (--keep-trust for your own export)"
                    .to_string()
            }));
        }
        "embedding" => {
            return Ok(Some(
                "a vector from a file is taken only with --keep-trust (it would be trusted for any text of the same hash); \
                 the memories are embedded here"
                    .into(),
            ));
        }
        _ => &[],
    };
    for f in fields {
        if let Ok(id) = r.str(f)
            && imported(tx, id)? == Some(false)
        {
            return Ok(not_from_a_file(&format!("its {f} is")));
        }
    }
    Ok(None)
}

/// An imported invalidation's `supersedes`, kept only where it names memories that came
/// from a file (without `keep_trust`): what it names besides stays live.
fn supersedes_kept(
    tx: &Transaction<'_>,
    r: &Rec<'_>,
    opts: ImportOptions,
) -> rusqlite::Result<Option<String>> {
    let Some(Value::Array(ids)) = r.0.get("supersedes") else { return Ok(r.opt_json_text("supersedes")) };
    if opts.keep_trust {
        return Ok(r.opt_json_text("supersedes"));
    }
    let mut kept = Vec::new();
    for id in ids {
        if let Some(s) = id.as_str()
            && imported(tx, s)? == Some(true)
        {
            kept.push(id.clone());
        }
    }
    Ok((!kept.is_empty()).then(|| Value::Array(kept).to_string()))
}

/// A record in a few words, for a skip report.
fn describe(kind: &str, r: &Rec<'_>) -> String {
    let s = |k: &str| r.0.get(k).and_then(Value::as_str).unwrap_or("?").to_string();
    match kind {
        "memory" | "run" | "session" => s("id"),
        "outcome" => format!("{} on {}", s("kind"), s("memory")),
        "supersession" => format!("{} supersedes {}", s("by"), s("target")),
        "link" => format!("{} -> {}", s("from"), s("to")),
        "entity" => format!("{} in {}", s("name"), s("scope")),
        "fact" => format!("{} {} in {}", s("subject"), s("predicate"), s("scope")),
        "reward" => format!("reward of {}", s("run")),
        _ => String::new(),
    }
}

type Out = rusqlite::Result<std::result::Result<Did, Skip>>;

/// Early return of a skip from a record function.
macro_rules! field {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(skip) => return Ok(Err(skip)),
        }
    };
}

fn seq_of(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<Option<i64>> {
    tx.query_row("SELECT seq FROM memories WHERE id = ?1", [id], |r| r.get(0)).optional()
}

fn added(n: usize) -> std::result::Result<Did, Skip> {
    Ok(if n > 0 { Did::Added } else { Did::Present })
}

fn memory(tx: &Transaction<'_>, r: &Rec<'_>, opts: ImportOptions, now: Millis) -> Out {
    let id = field!(r.str("id"));
    let scope = field!(r.scope());
    let content = field!(r.str("content"));
    let kind = field!(MemoryType::from_str(field!(r.str("type"))).map_err(|e| e.to_string()));
    if content.trim().is_empty() || content.len() > MAX_CONTENT_BYTES {
        return Ok(Err(format!("content is empty or over {MAX_CONTENT_BYTES} bytes")));
    }
    if MemoryId::derive(&scope, content).as_str() != id {
        return Ok(Err("its id is not the one its scope and content give".into()));
    }
    if seq_of(tx, id)?.is_some() {
        return Ok(Ok(Did::Present));
    }
    if let Some(to) = tx
        .query_row("SELECT new_id FROM moved WHERE old_id = ?1", [id], |r| r.get::<_, String>(0))
        .optional()?
    {
        return Ok(Ok(Did::LeftOut(format!("the store moved it (now {to})"))));
    }
    let mut metadata = match r.0.get("metadata") {
        None | Some(Value::Null) => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Ok(Err("metadata is not an object".into())),
    };
    // The bound a memory filed any other way keeps (with room for the import's own mark).
    let size = metadata.to_string().len();
    if size > MAX_METADATA_BYTES - 256 {
        return Ok(Err(format!("metadata is {size} bytes of JSON, over the limit of {MAX_METADATA_BYTES}")));
    }
    if !opts.keep_trust {
        let obj = metadata.as_object_mut().expect("an object");
        let was = obj.get(amber_core::origin::TRUST_KEY).cloned().unwrap_or(Value::Null);
        obj.insert(amber_core::origin::TRUST_KEY.into(), json!("external"));
        obj.insert("imported".into(), json!({ "at": now, "trust": was }));
    }
    let n = tx.execute(
        "INSERT INTO memories (id, scope, content, kind, source, author, session_id, created_at, event_time,
             metadata, forgotten_at, recipient, reply_to, supersedes, weight, used_at, archived_at,
             superseded_by, successes, failures)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
        params![
            id,
            scope.as_str(),
            content,
            kind.as_str(),
            field!(r.opt_str("source")),
            field!(r.opt_str("author")),
            field!(r.opt_str("session_id")),
            field!(r.int("created_at")),
            field!(r.opt_int("event_time")),
            metadata.to_string(),
            field!(r.opt_int("forgotten_at")),
            field!(r.opt_str("to")),
            field!(r.opt_str("reply_to")),
            supersedes_kept(tx, r, opts)?,
            r.0.get("weight").and_then(Value::as_f64).unwrap_or(1.0),
            field!(r.opt_int("used_at")),
            field!(r.opt_int("archived_at")),
            field!(r.opt_str("superseded_by")),
            field!(r.opt_int("successes")).unwrap_or(0),
            field!(r.opt_int("failures")).unwrap_or(0),
        ],
    )?;
    Ok(added(n))
}

fn outcome(tx: &Transaction<'_>, r: &Rec<'_>, refresh: &mut HashSet<i64>) -> Out {
    let Some(seq) = seq_of(tx, field!(r.str("memory")))? else {
        return Ok(Err("its memory is not in the store".into()));
    };
    let (kind, at) = (field!(r.str("kind")), field!(r.int("at")));
    let (result, session, agent, note, basis) = (
        field!(r.opt_str("result")),
        field!(r.opt_str("session_id")),
        field!(r.opt_str("agent")),
        field!(r.opt_str("note")),
        field!(r.opt_str("basis")),
    );
    // The file's nth identical report is there when the store holds more than nth of them
    // (an export without `nth` counts each distinct report once).
    let nth = r.0.get("nth").and_then(Value::as_i64).unwrap_or(0).max(0);
    let held: i64 = tx.query_row(
        "SELECT COUNT(*) FROM outcomes WHERE seq = ?1 AND kind = ?2 AND at = ?3
             AND result IS ?4 AND session_id IS ?5 AND agent IS ?6 AND note IS ?7",
        params![seq, kind, at, result, session, agent, note],
        |row| row.get(0),
    )?;
    if held > nth {
        return Ok(Ok(Did::Present));
    }
    tx.execute(
        "INSERT INTO outcomes (seq, kind, result, session_id, agent, note, at, basis) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![seq, kind, result, session, agent, note, at, basis],
    )?;
    refresh.insert(seq);
    Ok(Ok(Did::Added))
}

fn supersession(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let (Some(by), Some(target)) = (seq_of(tx, field!(r.str("by")))?, seq_of(tx, field!(r.str("target")))?)
    else {
        return Ok(Err("a memory it names is not in the store".into()));
    };
    let n = tx.execute(
        "INSERT OR IGNORE INTO supersessions (by_seq, target, at) VALUES (?1, ?2, ?3)",
        params![by, target, field!(r.int("at"))],
    )?;
    Ok(added(n))
}

fn link(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let n = tx.execute(
        "INSERT OR IGNORE INTO links (from_id, to_id, kind, similarity, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            field!(r.str("from")),
            field!(r.str("to")),
            field!(r.str("kind")),
            field!(r.num("similarity")),
            field!(r.int("created_at"))
        ],
    )?;
    Ok(added(n))
}

fn moved(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let n = tx.execute(
        "INSERT OR IGNORE INTO moved (old_id, new_id, moved_at) VALUES (?1, ?2, ?3)",
        params![field!(r.str("old_id")), field!(r.str("new_id")), field!(r.int("moved_at"))],
    )?;
    Ok(added(n))
}

fn thread_hold(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let n = tx.execute(
        "INSERT OR IGNORE INTO thread_holds (thread, reason, at) VALUES (?1, ?2, ?3)",
        params![field!(r.str("thread")), field!(r.str("reason")), field!(r.int("at"))],
    )?;
    Ok(added(n))
}

/// An entity of a scope by one of its names.
fn entity_of(tx: &Transaction<'_>, scope: &Scope, name: &str) -> rusqlite::Result<Option<i64>> {
    tx.query_row(
        "SELECT entity FROM kg_names WHERE scope = ?1 AND norm = ?2",
        params![scope.as_str(), normalize_name(name)],
        |r| r.get(0),
    )
    .optional()
}

fn entity(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let scope = field!(r.scope());
    let name = field!(r.str("name"));
    if normalize_name(name).is_empty() {
        return Ok(Err("its name is empty".into()));
    }
    let mut names: Vec<String> = match r.0.get("names") {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    names.insert(0, name.to_string());
    for n in &names {
        if entity_of(tx, &scope, n)?.is_some() {
            return Ok(Ok(Did::Present));
        }
    }
    tx.execute(
        "INSERT INTO kg_entities (scope, name, kind, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![scope.as_str(), name, field!(r.opt_str("kind")), field!(r.int("created_at"))],
    )?;
    let id = tx.last_insert_rowid();
    for n in names.iter().filter(|n| !normalize_name(n).is_empty()) {
        tx.execute(
            "INSERT OR IGNORE INTO kg_names (scope, norm, entity, name) VALUES (?1, ?2, ?3, ?4)",
            params![scope.as_str(), normalize_name(n), id, n],
        )?;
    }
    Ok(Ok(Did::Added))
}

fn fact(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let scope = field!(r.scope());
    let Some(subject) = entity_of(tx, &scope, field!(r.str("subject")))? else {
        return Ok(Err("its subject is not an entity of the store".into()));
    };
    let object = match field!(r.opt_str("object")) {
        None => None,
        Some(o) => match entity_of(tx, &scope, o)? {
            Some(id) => Some(id),
            None => return Ok(Err("its object is not an entity of the store".into())),
        },
    };
    let predicate = field!(r.str("predicate"));
    let literal = field!(r.opt_str("literal"));
    let (from, to, recorded) =
        (field!(r.opt_int("valid_from")), field!(r.opt_int("valid_to")), field!(r.int("recorded_at")));
    let there: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM kg_facts WHERE subject = ?1 AND predicate = ?2 AND object IS ?3
             AND literal IS ?4 AND valid_from IS ?5 AND recorded_at = ?6)",
        params![subject, predicate, object, literal, from, recorded],
        |row| row.get(0),
    )?;
    if there {
        return Ok(Ok(Did::Present));
    }
    tx.execute(
        "INSERT INTO kg_facts (subject, predicate, object, literal, valid_from, valid_to, recorded_at,
             invalidated_at, confidence, sources) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            subject,
            predicate,
            object,
            literal,
            from,
            to,
            recorded,
            field!(r.opt_int("invalidated_at")),
            r.0.get("confidence").and_then(Value::as_f64).unwrap_or(1.0),
            r.json_text("sources", "[]"),
        ],
    )?;
    let fact = tx.last_insert_rowid();
    if let Some(Value::Array(invalidations)) = r.0.get("invalidations") {
        for i in invalidations.iter().filter_map(Value::as_object) {
            let i = Rec(i);
            tx.execute(
                "INSERT INTO kg_invalidations (fact, at, recorded_at, reason) VALUES (?1, ?2, ?3, ?4)",
                params![fact, field!(i.int("at")), field!(i.int("recorded_at")), field!(i.opt_str("reason"))],
            )?;
        }
    }
    Ok(Ok(Did::Added))
}

fn run(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let scope = field!(r.scope());
    let n = tx.execute(
        "INSERT OR IGNORE INTO runs (id, scope, agent, task, trace, used, outcome, advice, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            field!(r.str("id")),
            scope.as_str(),
            field!(r.str("agent")),
            field!(r.str("task")),
            field!(r.str("trace")),
            r.json_text("used", "[]"),
            field!(r.opt_str("outcome")),
            r.json_text("advice", "[]"),
            field!(r.int("created_at")),
        ],
    )?;
    Ok(added(n))
}

fn reward(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let run = field!(r.str("run"));
    let known: bool =
        tx.query_row("SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1)", [run], |row| row.get(0))?;
    if !known {
        return Ok(Err("its run is not in the store".into()));
    }
    let (reward, agent, at) = (field!(r.num("reward")), field!(r.str("agent")), field!(r.int("at")));
    let reason = field!(r.opt_str("reason"));
    let there: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM run_rewards WHERE run_id = ?1 AND reward = ?2 AND agent = ?3 AND at = ?4
             AND reason IS ?5)",
        params![run, reward, agent, at, reason],
        |row| row.get(0),
    )?;
    if there {
        return Ok(Ok(Did::Present));
    }
    tx.execute(
        "INSERT INTO run_rewards (run_id, reward, reason, agent, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![run, reward, reason, agent, at],
    )?;
    Ok(Ok(Did::Added))
}

fn session(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let scope = field!(r.scope());
    let n = tx.execute(
        "INSERT OR IGNORE INTO sessions (id, agent, scope, started_at, ended_at, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            field!(r.str("id")),
            field!(r.str("agent")),
            scope.as_str(),
            field!(r.int("started_at")),
            field!(r.opt_int("ended_at")),
            r.json_text("detail", "{}"),
        ],
    )?;
    Ok(added(n))
}

fn embedding(tx: &Transaction<'_>, r: &Rec<'_>) -> Out {
    let chunk = field!(hex::decode(field!(r.str("chunk"))).map_err(|e| format!("chunk: {e}")));
    let vector = field!(hex::decode(field!(r.str("vector"))).map_err(|e| format!("vector: {e}")));
    if chunk.len() != 32 || vector.is_empty() || vector.len() % 4 != 0 {
        return Ok(Err("not a chunk hash and a vector of f32".into()));
    }
    let n = tx.execute(
        "INSERT OR IGNORE INTO embeddings (model, chunk_hash, vector) VALUES (?1, ?2, ?3)",
        params![field!(r.str("model")), chunk, vector],
    )?;
    Ok(added(n))
}
