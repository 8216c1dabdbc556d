//! The team's embedding cache (schema 7) with real roles: a vector is kept per scope,
//! read under the scope's read grant, written under its write grant only, insert-only,
//! and keyed by HMAC-SHA256 under the team's secret, so a role learns nothing about the
//! text of a scope it may not read. What a role does is done as that role, logged in.

use super::*;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

const MODEL: &str = "model";

/// The SHA-256 of a text: what the old cache was keyed by, and what the engine hands the
/// store.
fn sha(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The key a text has in `scope` under `secret`, computed here as a role holding the
/// secret would (HMAC-SHA256 of the scope, a NUL and the text's SHA-256).
fn keyed(secret: &[u8], scope: &str, text: &str) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).unwrap();
    mac.update(scope.as_bytes());
    mac.update(&[0]);
    mac.update(&sha(text));
    mac.finalize().into_bytes().to_vec()
}

/// The cache secret as this connection's role reads it (None: no row visible).
fn secret_as(c: &mut postgres::Client) -> Option<Vec<u8>> {
    c.query_opt("SELECT secret FROM amber_cache_secret", &[]).unwrap().map(|r| r.get(0))
}

/// Rows of `embeddings` with this key in this scope, as this connection sees them.
fn rows_with(c: &mut postgres::Client, scope: &str, key: &[u8]) -> i64 {
    c.query_one("SELECT COUNT(*) FROM embeddings WHERE scope = $1 AND chunk_key = $2", &[&scope, &key])
        .unwrap()
        .get(0)
}

/// The attack: agent_b, with no grant on `team/a/`, guesses at the text of a
/// memory filed there, by every means a role has (reading the cache by the bare SHA-256
/// as before, by the key it can compute with the secret it reads, through its store, and
/// by inserting over the key to see whether it clashes). At schema 6 it confirmed 25 of
/// 31 guesses; now none, while the owner, who may read the scope, confirms the right one
/// with the same lookups (so the lookups would find it if they could).
#[test]
fn a_role_without_a_grant_on_a_scope_reads_none_of_its_vectors_and_confirms_no_guess() {
    let (db, [mut admin, mut a, b]) = two_agents();
    let truth = "the acquisition target is Initech; nobody outside legal knows";
    let (memory, _) = insert(a.as_mut(), &NewMemory::new(truth).in_scope(scope("team/a/x")), 1);
    let sa = memory.scope.clone();
    a.put_vectors(MODEL, &[(ChunkKey { scope: &sa, hash: sha(truth) }, &[0.5, 0.25][..])]).unwrap();
    let shared = scope("team/shared/x");
    let open = "the deploy freeze starts on friday";
    admin.put_vectors(MODEL, &[(ChunkKey { scope: &shared, hash: sha(open) }, &[1.0, 2.0][..])]).unwrap();
    let mut guesses: Vec<String> = [
        "Globex",
        "Hooli",
        "Umbrella",
        "Acme",
        "Soylent",
        "Cyberdyne",
        "Tyrell",
        "Wonka",
        "Stark",
        "Wayne",
        "Oscorp",
        "Aperture",
        "Massive Dynamic",
        "Vandelay",
        "Dunder Mifflin",
        "Pied Piper",
        "Gringotts",
        "Monarch",
        "Virtucon",
        "Nakatomi",
        "Weyland",
        "Yutani",
        "Ollivander",
        "Sirius",
        "Buy n Large",
        "Prestige",
        "Duff",
        "Krusty",
        "Planet Express",
        "Bluth",
    ]
    .iter()
    .map(|name| format!("the acquisition target is {name}; nobody outside legal knows"))
    .collect();
    guesses.insert(17, truth.to_string());
    assert_eq!(guesses.len(), 31);

    let mut owner = db.sql();
    let secret = secret_as(&mut owner).expect("the schema made the team's secret");
    assert_eq!(secret.len(), 32);
    let mut as_b = postgres::Client::connect(&db.url_as("agent_b"), postgres::NoTls).unwrap();
    // agent_b has grants, so it reads the secret (its store needs it to read the scopes it
    // may read): what protects team/a is that its rows are not agent_b's to see or make.
    assert_eq!(secret_as(&mut as_b).as_deref(), Some(secret.as_slice()));
    let seen: Vec<String> =
        as_b.query("SELECT scope FROM embeddings", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(seen, vec!["team/shared/x".to_string()], "the rows of the scopes it may read, no other");
    assert_eq!(
        b.cached_vectors(MODEL, &[ChunkKey { scope: &shared, hash: sha(open) }]).unwrap(),
        vec![Some(vec![1.0, 2.0])],
        "its store reads a scope it has a read grant on"
    );

    let mut confirmed_by_owner = Vec::new();
    let mut confirmed_by_b = Vec::new();
    let mut b_answers = std::collections::BTreeSet::new();
    for (i, guess) in guesses.iter().enumerate() {
        let key = keyed(&secret, "team/a/x", guess);
        // The old oracle: the bare SHA-256 is no key any more, for anyone.
        let bare: i64 = owner
            .query_one("SELECT COUNT(*) FROM embeddings WHERE chunk_key = $1", &[&&sha(guess)[..]])
            .unwrap()
            .get(0);
        assert_eq!(bare, 0, "{guess}: a row keyed by the text's bare SHA-256");
        if rows_with(&mut owner, "team/a/x", &key) > 0 {
            confirmed_by_owner.push(i);
        }
        // agent_b: by the key, through its store, and by trying to insert over the key.
        let by_key = rows_with(&mut as_b, "team/a/x", &key);
        let by_store = b.cached_vectors(MODEL, &[ChunkKey { scope: &sa, hash: sha(guess) }]).unwrap();
        let by_insert = try_as(
            &mut as_b,
            &format!(
                "INSERT INTO embeddings (model, scope, chunk_key, vector) VALUES ('{MODEL}', 'team/a/x', '\\x{}', '\\x0000803f')
                 ON CONFLICT DO NOTHING",
                hex::encode(&key)
            ),
        );
        if by_key > 0 || by_store[0].is_some() || by_insert == "0 rows" {
            confirmed_by_b.push(i);
        }
        b_answers.insert(format!("{by_key} {by_store:?} {by_insert}"));
    }
    assert_eq!(confirmed_by_owner, vec![17], "the owner's lookups find the one right guess");
    assert_eq!(confirmed_by_b, Vec::<usize>::new(), "agent_b confirmed a guess");
    assert_eq!(
        b_answers.into_iter().collect::<Vec<_>>(),
        vec!["0 [None] refused 42501".to_string()],
        "agent_b gets one answer for the right guess and the wrong ones"
    );
    let count: i64 = owner.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get(0);
    assert_eq!(count, 2, "agent_b's inserts added nothing");
    assert_eq!(b.cached_vector_count(MODEL).unwrap(), 1, "agent_b counts the rows it may read");
    assert_eq!(admin.cached_vector_count(MODEL).unwrap(), 2);
}

/// The other attack at the store: a read-only role may not seed a vector in the
/// scope it reads, by SQL or through its store (left out, no error); a role that may
/// write the scope can still seed one for a text nobody embedded yet (the server cannot
/// run the model), and a row that is no vector is then left out when read, with no
/// error, so the engine embeds the text itself (`daemon/tests/team.rs` files it on real
/// nodes).
#[test]
fn a_read_only_role_seeds_no_vector_and_a_row_that_is_no_vector_is_left_out() {
    let (db, [admin, mut a, mut b]) = two_agents();
    let (shared, own, sa) = (scope("team/shared/x"), scope("team/b"), scope("team/a/x"));
    let text = "the quarterly board deck lives in the finance share";
    let mut as_b = postgres::Client::connect(&db.url_as("agent_b"), postgres::NoTls).unwrap();
    let secret = secret_as(&mut as_b).unwrap();
    let three_bytes = format!(
        "INSERT INTO embeddings (model, scope, chunk_key, vector) VALUES ('{MODEL}', 'team/shared/x', '\\x{}', '\\x010203')",
        hex::encode(keyed(&secret, "team/shared/x", text))
    );
    assert_eq!(try_as(&mut as_b, &three_bytes), "refused 42501", "agent_b only reads team/shared/");
    b.put_vectors(MODEL, &[(ChunkKey { scope: &shared, hash: sha(text) }, &[9.0, 9.0][..])]).unwrap();
    b.put_vectors(MODEL, &[(ChunkKey { scope: &own, hash: sha(text) }, &[1.0, 0.0][..])]).unwrap();
    let mut owner = db.sql();
    let rows: Vec<(String, String)> = owner
        .query("SELECT scope, written_by::TEXT FROM embeddings ORDER BY scope", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        rows,
        vec![("team/b".to_string(), "agent_b".to_string())],
        "its store cached in the scope it writes, and left the read-only one out"
    );
    assert_eq!(
        admin.cached_vectors(MODEL, &[ChunkKey { scope: &shared, hash: sha(text) }]).unwrap(),
        vec![None]
    );

    // agent_a may write team/a/: it can seed rows for a text not embedded yet there.
    let mut as_a = postgres::Client::connect(&db.url_as("agent_a"), postgres::NoTls).unwrap();
    let seeded = [(text, "\\x010203"), ("the release train leaves at noon", "\\x0000803f")];
    for (t, bytes) in seeded {
        let sql = format!(
            "INSERT INTO embeddings (model, scope, chunk_key, vector) VALUES ('{MODEL}', 'team/a/x', '\\x{}', '{bytes}')",
            hex::encode(keyed(&secret, "team/a/x", t))
        );
        assert_eq!(try_as(&mut as_a, &sql), "1 rows");
    }
    let keys: Vec<ChunkKey<'_>> = seeded.iter().map(|(t, _)| ChunkKey { scope: &sa, hash: sha(t) }).collect();
    for (who, s) in [("owner", &admin), ("agent_a", &a)] {
        // Three bytes are no vector: left out, no error. One float is a vector; that it
        // is not this model's (one dimension) is the engine's to see.
        assert_eq!(s.cached_vectors(MODEL, &keys).unwrap(), vec![None, Some(vec![1.0])], "{who}");
    }
    // The store's own write does not replace the seeded row (insert-only): the engine
    // embeds that text again wherever it needs it, and the owner can remove the role's
    // rows by `written_by`.
    a.put_vectors(MODEL, &[(keys[0], &[0.5, 0.5][..])]).unwrap();
    assert_eq!(a.cached_vectors(MODEL, &keys[..1]).unwrap(), vec![None]);
    assert_eq!(owner.execute("DELETE FROM embeddings WHERE written_by = 'agent_a'", &[]).unwrap(), 2);
    a.put_vectors(MODEL, &[(keys[0], &[0.5, 0.5][..])]).unwrap();
    assert_eq!(a.cached_vectors(MODEL, &keys[..1]).unwrap(), vec![Some(vec![0.5, 0.5])]);
}

/// Insert-only for everyone, within a scope too: a second role that may write the same
/// scope neither replaces nor deletes a vector the first cached; each row says who wrote
/// it, so the owner can remove one role's vectors.
#[test]
fn a_role_cannot_overwrite_a_vector_another_role_cached() {
    let (db, [admin, mut a, _b]) = two_agents();
    agent_role(&db, "agent_c", &[("team/a/", true)]);
    let mut c = PgBackend::new(&db.url_as("agent_c")).open_writer().unwrap();
    let sa = scope("team/a/x");
    let (first, second) = (chunk(&sa, 9), chunk(&sa, 10));
    a.put_vectors(MODEL, &[(first, &[0.25, 0.5][..])]).unwrap();
    // agent_c's store writes another vector for the same chunk: ignored, no error
    c.put_vectors(MODEL, &[(first, &[-1.0, -1.0][..]), (second, &[3.0, 4.0][..])]).unwrap();
    for (who, s) in [("owner", &admin), ("agent_a", &a), ("agent_c", &c)] {
        let got = s.cached_vectors(MODEL, &[first, second]).unwrap();
        assert_eq!(got, vec![Some(vec![0.25, 0.5]), Some(vec![3.0, 4.0])], "{who}");
    }
    // ... and in SQL it can neither update nor delete it
    let mut as_c = postgres::Client::connect(&db.url_as("agent_c"), postgres::NoTls).unwrap();
    assert_eq!(as_c.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get::<_, i64>(0), 2);
    let n = as_c.execute("UPDATE embeddings SET vector = '\\x00000000'", &[]).unwrap();
    let m = as_c.execute("DELETE FROM embeddings", &[]).unwrap();
    assert_eq!((n, m), (0, 0));
    assert_eq!(a.cached_vectors(MODEL, &[first]).unwrap(), vec![Some(vec![0.25, 0.5])]);
    let mut sql = db.sql();
    let writers: Vec<String> = sql
        .query("SELECT written_by::TEXT FROM embeddings ORDER BY written_by", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(writers, vec!["agent_a".to_string(), "agent_c".to_string()]);
    assert_eq!(sql.execute("DELETE FROM embeddings WHERE written_by = 'agent_c'", &[]).unwrap(), 1);
    assert_eq!(admin.cached_vectors(MODEL, &[second]).unwrap(), vec![None]);
}

/// A team store at schema 6 (the cache keyed by the bare SHA-256, readable by all) is
/// migrated by the owner's node: the old rows cannot be rekeyed (the store never sees a
/// chunk's text or scope), so the cache is emptied, to be filled again by embedding; a
/// secret of its own is made; the roles keep their privileges on `embeddings`. The new
/// secret's table needs the setup's GRANT once more: until then a role's node works
/// without the cache, with no error.
#[test]
fn a_schema_6_cache_is_emptied_at_7_and_a_role_works_without_the_cache_until_granted() {
    let db = Db::new();
    drop(db.writer());
    agent_role(&db, "agent_a", &[("team/a/", true)]);
    let mut owner = db.sql();
    owner.batch_execute(BACK_TO_6).unwrap();
    let mut as_a = postgres::Client::connect(&db.url_as("agent_a"), postgres::NoTls).unwrap();
    let old = "the staging database migrates on deploy";
    as_a.execute(
        "INSERT INTO embeddings (model, chunk_hash, vector) VALUES ($1, $2, '\\x0000803f')",
        &[&MODEL, &&sha(old)[..]],
    )
    .unwrap();
    let visible: i64 = as_a.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get(0);
    assert_eq!(visible, 1, "at schema 6 every role reads every vector, by its bare SHA-256");
    drop(as_a);

    drop(db.writer()); // the owner's node migrates
    let version: i64 = owner.query_one("SELECT version FROM amber_schema", &[]).unwrap().get(0);
    let cached: i64 = owner.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get(0);
    assert_eq!((version, cached), (8, 0), "migrated through 7 to the newest");
    let secret = secret_as(&mut owner).unwrap();
    let other = Db::new();
    drop(other.writer());
    assert_ne!(Some(secret), secret_as(&mut other.sql()), "each team store makes its own secret");

    // agent_a's privileges on `embeddings` were kept, but the secret's table is new.
    let sa = scope("team/a/x");
    let key = ChunkKey { scope: &sa, hash: sha(old) };
    let mut a = PgBackend::new(&db.url_as("agent_a")).open_writer().unwrap();
    a.put_vectors(MODEL, &[(key, &[1.0][..])]).unwrap();
    assert_eq!(a.cached_vectors(MODEL, &[key]).unwrap(), vec![None], "no cache, no error");
    let cached: i64 = owner.query_one("SELECT COUNT(*) FROM embeddings", &[]).unwrap().get(0);
    assert_eq!(cached, 0);
    owner
        .batch_execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO agent_a")
        .unwrap();
    let mut a = PgBackend::new(&db.url_as("agent_a")).open_writer().unwrap();
    a.put_vectors(MODEL, &[(key, &[1.0][..])]).unwrap();
    assert_eq!(a.cached_vectors(MODEL, &[key]).unwrap(), vec![Some(vec![1.0])]);
}
