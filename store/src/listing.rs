//! What a person browses (the web view, `amber list`): a scope's memories kept by
//! filing, type and trust and counted, its document files, one file's sections. The
//! filter is written here once as SQL over the `memories` columns, for both backends:
//! only how each reads a JSON field of `metadata` differs ([`Dialect`]).
//!
//! A memory's filing and trust are read from its metadata as
//! [`amber_core::filing::Filing::of`] and [`amber_core::origin::trust_of`] read them
//! (the store's tests check the SQL against them, on both backends), so a filter keeps
//! exactly what those functions would say, and the page and the count are each one query.

use amber_core::filing::Filing;
use amber_core::origin::Trust;
use amber_core::{MemoryType, Millis};

/// What a scope's listing keeps ([`crate::Scopes::scope_page`],
/// [`crate::Scopes::scope_tally`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only memories of these filings (empty: every filing).
    pub filings: Vec<Filing>,
    /// Only memories of this type.
    pub kind: Option<MemoryType>,
    /// Only memories trusted this far.
    pub trust: Option<Trust>,
    /// Forgotten and archived memories too.
    pub include_forgotten: bool,
}

/// One ingested file of a scope ([`crate::Documents::document_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocFile {
    /// The file's absolute path (its chunks' `source`).
    pub path: String,
    /// The path shown (relative to its project root when under it).
    pub label: String,
    /// Its live sections (chunks).
    pub sections: u64,
    /// When its newest live section was filed.
    pub filed: Millis,
}

/// The SQL dialect of a backend: how it reads a JSON field of the `metadata` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Without the team feature only SQLite is built (`cargo clippy -p amber-store` alone).
#[cfg_attr(not(feature = "team"), allow(dead_code))]
pub(crate) enum Dialect {
    /// SQLite's JSON functions over the text column.
    Sqlite,
    /// PostgreSQL's jsonb operators over `j`, the column cast once per row (the query
    /// joins `LATERAL (SELECT metadata::jsonb AS j)`).
    Postgres,
}

impl Dialect {
    /// True when the field at `path` is a JSON object.
    fn is_object(self, path: &[&str]) -> String {
        match self {
            Dialect::Sqlite => format!("json_type(metadata, '$.{}') = 'object'", path.join(".")),
            Dialect::Postgres => format!("jsonb_typeof(j{}) = 'object'", arrows(path)),
        }
    }

    /// True when the field at `path` is JSON `true`.
    fn is_true(self, path: &[&str]) -> String {
        match self {
            Dialect::Sqlite => format!("json_type(metadata, '$.{}') = 'true'", path.join(".")),
            Dialect::Postgres => format!("(j{}) = 'true'::jsonb", arrows(path)),
        }
    }

    /// True when the field at `path` is the JSON string `word` (a fixed word of ours).
    fn is_text(self, path: &[&str], word: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "json_type(metadata, '$.{p}') = 'text' AND json_extract(metadata, '$.{p}') = '{word}'",
                p = path.join(".")
            ),
            Dialect::Postgres => format!("(j{}) = '\"{word}\"'::jsonb", arrows(path)),
        }
    }

    /// The rows a listing reads: `memories`, and on PostgreSQL the metadata as jsonb.
    #[cfg_attr(not(feature = "team"), allow(dead_code))]
    pub(crate) fn from(self) -> &'static str {
        match self {
            Dialect::Sqlite => "memories",
            Dialect::Postgres => "memories, LATERAL (SELECT metadata::jsonb AS j) AS m",
        }
    }

    /// A chunk's first line as filed (`doc.lines[0]`), as an integer.
    pub(crate) fn first_line(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CAST(json_extract(metadata, '$.doc.lines[0]') AS INTEGER)",
            Dialect::Postgres => {
                "(CASE WHEN jsonb_typeof(j -> 'doc' -> 'lines' -> 0) = 'number' \
                 THEN (j -> 'doc' -> 'lines' ->> 0)::numeric::bigint END)"
            }
        }
    }

    /// A chunk's label (`doc.label`).
    pub(crate) fn label(self) -> &'static str {
        match self {
            Dialect::Sqlite => "json_extract(metadata, '$.doc.label')",
            Dialect::Postgres => "(j -> 'doc' ->> 'label')",
        }
    }

    /// True for a document chunk.
    pub(crate) fn is_chunk(self) -> String {
        self.is_object(&["doc"])
    }
}

/// ` -> 'a' -> 'b'` for the keys of `path`.
fn arrows(path: &[&str]) -> String {
    path.iter().map(|k| format!(" -> '{k}'")).collect()
}

/// A memory's trust, as [`amber_core::origin::trust_of`] reads it: its `trust` word, else
/// `external` for a capture, else `agent`.
pub(crate) fn trust_sql(d: Dialect) -> String {
    let word = |w: &str| d.is_text(&["trust"], w);
    format!(
        "(CASE WHEN {} THEN 'person' WHEN {} THEN 'agent' WHEN {} THEN 'external' \
         WHEN {} THEN 'external' ELSE 'agent' END)",
        word("person"),
        word("agent"),
        word("external"),
        d.is_true(&["captured"]),
    )
}

/// A memory's filing, as [`Filing::of`] reads it (`Filing::from_marks`, in its order).
pub(crate) fn filing_sql(d: Dialect) -> String {
    let person = d.is_text(&["trust"], "person");
    let chunk = d.is_chunk();
    format!(
        "(CASE WHEN {} OR {} THEN 'skill' WHEN {chunk} AND {} = 'external' THEN 'reference' \
         WHEN {chunk} THEN 'document' \
         WHEN {person} AND {} THEN 'promoted' \
         WHEN kind = 'event' AND (session_id IS NOT NULL OR {}) THEN 'raw' \
         WHEN {person} THEN 'person' ELSE 'agent' END)",
        d.is_object(&[amber_core::skill::SKILL_KEY]),
        d.is_object(&[amber_core::skill::REVISION_KEY]),
        trust_sql(d),
        d.is_text(&["trust_set", "by"], "person"),
        d.is_true(&["captured"]),
    )
}

/// The conditions of `f` (beside the scope's, which the caller binds), joined by `AND`,
/// each starting with ` AND `. Every value put in is one of our own enums' fixed words.
pub(crate) fn where_sql(d: Dialect, f: &ListFilter, with_filings: bool) -> String {
    let mut w = String::new();
    if !f.include_forgotten {
        w.push_str(" AND forgotten_at IS NULL AND archived_at IS NULL");
    }
    if let Some(k) = f.kind {
        w.push_str(&format!(" AND kind = '{}'", k.as_str()));
    }
    if let Some(t) = f.trust {
        w.push_str(&format!(" AND {} = '{}'", trust_sql(d), t.as_str()));
    }
    if with_filings && !f.filings.is_empty() {
        let list: Vec<String> = f.filings.iter().map(|x| format!("'{}'", x.as_str())).collect();
        w.push_str(&format!(" AND {} IN ({})", filing_sql(d), list.join(", ")));
    }
    w
}

/// The counts of a tally's rows `(filing word, count)`, in [`Filing::ALL`] order, every
/// filing present (zero when none).
pub(crate) fn tally(rows: Vec<(String, i64)>) -> Vec<(Filing, u64)> {
    Filing::ALL
        .iter()
        .map(|f| {
            let n = rows.iter().filter(|(w, _)| w == f.as_str()).map(|(_, n)| *n).sum::<i64>();
            (*f, n.max(0) as u64)
        })
        .collect()
}
