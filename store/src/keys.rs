//! What the engine's filters and ranking need of a live memory, without its content:
//! [`Key`], read by both backends from the same columns (each in its own SQL).

use amber_core::filing::{Filing, Marks};
use amber_core::{MemoryType, Millis, Scope};

/// What the engine's filters and ranking need of a live memory, without its content.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// Its position in filing order.
    pub seq: u64,
    /// Where it lives.
    pub scope: Scope,
    /// The event time, else the filing time.
    pub time: Millis,
    /// The session it was filed in, if any.
    pub session_id: Option<String>,
    /// Its type.
    pub kind: MemoryType,
    /// How it was filed (read from the marks the daemon stamped in its metadata).
    pub filing: Filing,
}

impl Key {
    /// A key from its columns and its metadata's marks.
    pub(crate) fn new(
        seq: u64,
        scope: Scope,
        time: Millis,
        session_id: Option<String>,
        kind: MemoryType,
        marks: Marks,
    ) -> Key {
        let filing = Filing::from_marks(kind, session_id.is_some(), marks);
        Key { seq, scope, time, session_id, kind, filing }
    }

    /// A memory's key.
    pub fn of(m: &amber_core::Memory) -> Key {
        Key {
            seq: m.seq,
            scope: m.scope.clone(),
            time: m.time(),
            session_id: m.session_id.clone(),
            kind: m.kind,
            filing: Filing::of(m),
        }
    }
}

/// The columns SQLite's key queries read: seq, scope, time, session id, type, then the
/// metadata's `trust`, `captured`, whether `doc` and `skill` are objects, and
/// `trust_set.by`. A macro, so that the index that holds them (schema migration 12, for
/// a cold start that reads no row and parses no JSON) names the very same expressions:
/// SQLite reads an indexed expression from the index only when the query's is identical.
macro_rules! sqlite_key_columns {
    () => {
        "seq, scope, COALESCE(event_time, created_at), session_id, kind,
    json_extract(metadata, '$.trust'), IFNULL(json_extract(metadata, '$.captured') = 1, 0),
    IFNULL(json_type(metadata, '$.doc') = 'object', 0),
    IFNULL(json_type(metadata, '$.skill') = 'object' OR json_type(metadata, '$.skill_revision') = 'object', 0),
    json_extract(metadata, '$.trust_set.by')"
    };
}
pub(crate) use sqlite_key_columns;

/// [`sqlite_key_columns`] as a constant.
pub(crate) const SQLITE_KEY_COLUMNS: &str = sqlite_key_columns!();

/// The same columns on PostgreSQL.
#[cfg(feature = "team")]
pub(crate) const PG_KEY_COLUMNS: &str = "seq, scope, COALESCE(event_time, created_at), session_id, kind,
    metadata::jsonb ->> 'trust', COALESCE(metadata::jsonb ->> 'captured' = 'true', false),
    COALESCE(jsonb_typeof(metadata::jsonb -> 'doc') = 'object', false),
    COALESCE(jsonb_typeof(metadata::jsonb -> 'skill') = 'object'
             OR jsonb_typeof(metadata::jsonb -> 'skill_revision') = 'object', false),
    metadata::jsonb #>> '{trust_set,by}'";
