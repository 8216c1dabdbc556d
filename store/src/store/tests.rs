use super::*;
use crate::ChunkKey;
use crate::prelude::*;
use amber_core::{MemoryType, Scope};

#[test]
fn idempotent_insert_stores_once() {
    let mut s = Store::open_in_memory().unwrap();
    let m = NewMemory::new("the build uses usearch").of_type(MemoryType::Discovery);
    let (a, new_a) = s.insert(&m, 10).unwrap();
    let (b, new_b) = s.insert(&m, 20).unwrap();
    assert!(new_a);
    assert!(!new_b);
    assert_eq!(a, b);
    assert_eq!(b.created_at, 10, "the second write leaves the first untouched");
    assert_eq!(s.count().unwrap(), 1);
    // the same content in another scope is another memory
    let (c, new_c) = s.insert(&m.clone().in_scope("other".parse().unwrap()), 30).unwrap();
    assert!(new_c);
    assert_ne!(c.id, a.id);
    assert_eq!(s.count().unwrap(), 2);
}

#[test]
fn batch_collapses_duplicates_and_keeps_order() {
    let mut s = Store::open_in_memory().unwrap();
    let batch = vec![NewMemory::new("a"), NewMemory::new("b"), NewMemory::new("a")];
    let out = s.insert_batch(&batch, 1).unwrap();
    assert_eq!(out.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![true, true, false]);
    assert_eq!(out[0].0.id, out[2].0.id);
    assert_eq!(s.count().unwrap(), 2);
    let seqs: Vec<u64> = vec![out[1].0.seq, 999, out[0].0.seq];
    let got = s.get_by_seqs(&seqs).unwrap();
    assert_eq!(got.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), vec!["b", "a"]);
}

#[test]
fn vectors_round_trip_bit_exact() {
    let mut s = Store::open_in_memory().unwrap();
    let (a, b): (Scope, Scope) = ("a".parse().unwrap(), "b".parse().unwrap());
    let key = |scope, byte| ChunkKey { scope, hash: [byte; 32] };
    let v = vec![0.1f32, -2.5, f32::MIN_POSITIVE, 1e30];
    s.put_vectors("m", &[(key(&a, 7), &v)]).unwrap();
    let got = s.cached_vectors("m", &[key(&a, 7), key(&a, 8), key(&b, 7)]).unwrap();
    // The local cache is one person's: a text is keyed by its hash whatever its scope.
    assert_eq!(got, vec![Some(v.clone()), None, Some(v)]);
    assert_eq!(s.cached_vectors("other-model", &[key(&a, 7)]).unwrap(), vec![None]);
}

#[test]
fn newer_schema_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amber.db");
    Store::open(&path).unwrap();
    {
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    }
    let err = Store::open(&path).err().expect("must refuse");
    assert!(matches!(err, Error::SchemaTooNew { found, .. } if found == SCHEMA_VERSION + 1), "{err}");
    let c = Connection::open(&path).unwrap();
    let v: i64 = c.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, SCHEMA_VERSION + 1);
}

#[test]
fn forget_hides_from_scans_and_purge_deletes_only_forgotten() {
    let mut s = Store::open_in_memory().unwrap();
    let mut in_session = NewMemory::new("c");
    in_session.session_id = Some("s1".into());
    let out = s.insert_batch(&[NewMemory::new("a"), NewMemory::new("b"), in_session], 1).unwrap();
    let (a, b, c) = (out[0].0.clone(), out[1].0.clone(), out[2].0.clone());
    assert_eq!(s.purge(&b.id).unwrap(), Purged::NotForgotten);
    let (gone, fresh) = s.forget(&b.id, 50).unwrap().unwrap();
    assert!(fresh);
    assert_eq!(gone.forgotten_at, Some(50));
    // idempotent: the first time is kept
    let (again, fresh) = s.forget(&b.id, 60).unwrap().unwrap();
    assert!(!fresh);
    assert_eq!(again.forgotten_at, Some(50));
    assert!(s.forget(&NewMemory::new("never").id(), 1).unwrap().is_none());

    assert_eq!(s.get(&b.id).unwrap().unwrap().forgotten_at, Some(50), "get returns it");
    let live: Vec<u64> = s.scan(0, u64::MAX, 10).unwrap().iter().map(|m| m.seq).collect();
    assert_eq!(live, vec![a.seq, c.seq]);
    assert_eq!(s.scan(0, a.seq, 10).unwrap().len(), 1, "through bounds the scan");
    let keys = s.scan_keys(0, 10).unwrap();
    let seqs: Vec<u64> = keys.iter().map(|k| k.seq).collect();
    assert_eq!(seqs, vec![a.seq, c.seq], "forgotten memories have no key");
    assert_eq!(keys[0].session_id, None);
    assert_eq!(keys[1].session_id.as_deref(), Some("s1"), "the engine's neighbour ranking reads it");
    assert_eq!(keys[1].time, 1);
    assert_eq!(s.scan_keys(a.seq, 10).unwrap().len(), 1, "after bounds the scan");
    assert_eq!(s.get_by_seqs(&[a.seq, b.seq, c.seq]).unwrap().len(), 2);
    assert_eq!((s.count().unwrap(), s.count_forgotten().unwrap()), (2, 1));
    assert_eq!(s.count_through(b.seq).unwrap(), 1);
    assert_eq!(s.forgotten_seqs().unwrap(), vec![b.seq]);
    assert_eq!(s.scope_counts().unwrap(), vec![(Scope::default().as_str().to_string(), 2)]);

    let (gone, _) = s.forget(&c.id, 70).unwrap().unwrap();
    assert_eq!(s.purge(&c.id).unwrap(), Purged::Deleted);
    assert_eq!(s.purge(&c.id).unwrap(), Purged::NotFound);
    assert!(s.get(&c.id).unwrap().is_none());
    assert_eq!(s.max_seq().unwrap(), gone.seq, "the highest seq ever assigned survives a purge");
    let (d, _) = s.insert(&NewMemory::new("d"), 80).unwrap();
    assert!(d.seq > gone.seq, "seqs are never reused");
}

#[test]
fn remembering_forgotten_content_files_it_anew() {
    let mut s = Store::open_in_memory().unwrap();
    let (a, _) = s.insert(&NewMemory::new("a"), 1).unwrap();
    s.insert(&NewMemory::new("b"), 2).unwrap();
    s.forget(&a.id, 3).unwrap();
    let out =
        s.insert_batch(&[NewMemory::new("a").of_type(MemoryType::Event), NewMemory::new("a")], 4).unwrap();
    assert_eq!(out.iter().map(|(_, n)| *n).collect::<Vec<_>>(), vec![true, false]);
    let back = &out[0].0;
    assert_eq!(back.id, a.id);
    assert!(back.seq > a.seq, "a new seq, so the indexes see a new memory");
    assert_eq!((back.created_at, back.forgotten_at, back.kind), (4, None, MemoryType::Event));
    assert_eq!(out[1].0, *back);
    assert_eq!((s.count().unwrap(), s.count_forgotten().unwrap()), (2, 0));
}

#[test]
fn a_version_1_store_is_migrated_keeping_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amber.db");
    {
        let c = Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute(
            "INSERT INTO memories (id, scope, content, kind, created_at, metadata)
             VALUES (?1, 'default', 'from v1', 'fact', 7, '{}')",
            [NewMemory::new("from v1").id().as_str()],
        )
        .unwrap();
    }
    let mut s = Store::open(&path).unwrap();
    let v: i64 = s.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, SCHEMA_VERSION);
    let m = s.get(&NewMemory::new("from v1").id()).unwrap().unwrap();
    assert_eq!((m.content.as_str(), m.created_at, m.forgotten_at), ("from v1", 7, None));
    assert_eq!(s.count().unwrap(), 1);
    assert!(s.forget(&m.id, 9).unwrap().unwrap().1);
    assert!(s.integrity_check().unwrap());
}

#[test]
fn a_reader_sees_commits_and_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amber.db");
    let mut w = Store::open(&path).unwrap();
    let r = Store::open_reader(&path).unwrap();
    let (a, _) = w.insert(&NewMemory::new("seen"), 1).unwrap();
    assert_eq!(r.get(&a.id).unwrap().unwrap().content, "seen");
    let err = r.conn.execute("DELETE FROM memories", []).unwrap_err();
    assert!(err.to_string().contains("readonly") || err.to_string().contains("read"), "{err}");
    assert!(Store::open_reader(&dir.path().join("absent.db")).is_err());
}

#[test]
fn reopen_keeps_data_and_passes_integrity_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amber.db");
    let id = {
        let mut s = Store::open(&path).unwrap();
        s.insert(&NewMemory::new("kept"), 5).unwrap().0.id
    };
    let s = Store::open(&path).unwrap();
    assert_eq!(s.get(&id).unwrap().unwrap().content, "kept");
    assert!(s.integrity_check().unwrap());
}

#[test]
fn live_keys_are_read_from_their_index_alone() {
    // The engine loads every live memory's key at start: the query walks the index of
    // migration 12, whose expressions (the same macro) SQLite reads instead of parsing
    // each memory's metadata again.
    let s = Store::open_in_memory().unwrap();
    let sql = format!(
        "EXPLAIN QUERY PLAN SELECT {SQLITE_KEY_COLUMNS} FROM memories
         WHERE seq > 0 AND forgotten_at IS NULL ORDER BY seq LIMIT 10"
    );
    let plan: Vec<String> = s
        .conn
        .prepare(&sql)
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap();
    assert!(plan.len() == 1 && plan[0].contains("INDEX memories_keys"), "{plan:?}");
}
