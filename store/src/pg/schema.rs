//! The team store's schema: the local store's tables (at its version 8) in PostgreSQL
//! types, a seq counter, the grants and the row-level security policies. Versioned by
//! the one row of `amber_schema`; each migration runs in the transaction that bumps it.

use super::{MIGRATE_LOCK, PgStore, Q};
use crate::{Error, Result};

/// The newest team schema version this binary knows.
pub(crate) const PG_SCHEMA_VERSION: i64 = 8;

/// Whether a grant to the current role covers a scope (`$scope` is the column).
macro_rules! granted {
    ($scope:literal, $write:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM amber_grants g WHERE g.role = current_user",
            $write,
            " AND (starts_with(",
            $scope,
            ", g.prefix) OR ",
            $scope,
            " = rtrim(g.prefix, '/')))"
        )
    };
}

/// Turns row-level security on for a table, with its read policy: rows for which the
/// condition holds.
macro_rules! readable_when {
    ($table:literal, [$($readable:tt)*]) => {
        concat!(
            "ALTER TABLE ",
            $table,
            " ENABLE ROW LEVEL SECURITY;\n",
            "CREATE POLICY amber_read ON ",
            $table,
            " FOR SELECT USING (",
            $($readable)*,
            ");\n",
        )
    };
}

/// Read and write policies on a table with a scope column.
macro_rules! scoped_policies {
    ($table:literal) => {
        concat!(
            readable_when!($table, [granted!("scope", "")]),
            "CREATE POLICY amber_insert ON ",
            $table,
            " FOR INSERT WITH CHECK (",
            granted!("scope", " AND g.can_write"),
            ");\n",
            "CREATE POLICY amber_update ON ",
            $table,
            " FOR UPDATE USING (",
            granted!("scope", " AND g.can_write"),
            ") WITH CHECK (",
            granted!("scope", " AND g.can_write"),
            ");\n",
            "CREATE POLICY amber_delete ON ",
            $table,
            " FOR DELETE USING (",
            granted!("scope", " AND g.can_write"),
            ");\n",
        )
    };
}

/// Read and write policies on a table whose rows belong to another table's row: readable
/// when `$from` (`<table> <alias> WHERE <join to this row>`) finds it readable, writable
/// under a write grant on `$scope` (that row's scope column).
macro_rules! belongs_to {
    ($table:literal, $from:literal, $scope:literal) => {
        concat!(
            readable_when!($table, [concat!("EXISTS (SELECT 1 FROM ", $from, ")")]),
            "CREATE POLICY amber_write ON ",
            $table,
            " FOR ALL USING (EXISTS (SELECT 1 FROM ",
            $from,
            " AND ",
            granted!($scope, " AND g.can_write"),
            ")) WITH CHECK (EXISTS (SELECT 1 FROM ",
            $from,
            " AND ",
            granted!($scope, " AND g.can_write"),
            "));\n",
        )
    };
}

/// Policies on a reader's own books (what its inbox served, the guard's log, holds,
/// servings of advice): a role reads and writes them when it reads what they are about,
/// the row `$from` finds (`<table> <alias> WHERE <join to this row>`) or, with `scope:`,
/// the scope in that column; so a read-only grant still keeps them.
macro_rules! seen_through {
    ($table:literal, scope: $scope:literal) => {
        seen_through!(@ $table, [granted!($scope, "")])
    };
    ($table:literal, $from:literal) => {
        seen_through!(@ $table, [concat!("EXISTS (SELECT 1 FROM ", $from, ")")])
    };
    (@ $table:literal, [$($readable:tt)*]) => {
        concat!(
            "ALTER TABLE ",
            $table,
            " ENABLE ROW LEVEL SECURITY;\n",
            "CREATE POLICY amber_seen ON ",
            $table,
            " FOR ALL USING (",
            $($readable)*,
            ") WITH CHECK (",
            $($readable)*,
            ");\n",
        )
    };
}

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    concat!(
        r#"
    CREATE TABLE amber_seq (
        one  BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
        seq  BIGINT NOT NULL
    );
    INSERT INTO amber_seq (one, seq) VALUES (TRUE, 0);
    CREATE TABLE memories (
        seq            BIGINT PRIMARY KEY,
        id             TEXT NOT NULL UNIQUE,
        scope          TEXT NOT NULL,
        content        TEXT NOT NULL,
        kind           TEXT NOT NULL,
        source         TEXT,
        author         TEXT,
        session_id     TEXT,
        created_at     BIGINT NOT NULL,
        event_time     BIGINT,
        metadata       TEXT NOT NULL DEFAULT '{}',
        forgotten_at   BIGINT,
        recipient      TEXT,
        reply_to       TEXT,
        supersedes     TEXT,
        weight         DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        used_at        BIGINT,
        archived_at    BIGINT,
        superseded_by  TEXT,
        successes      BIGINT NOT NULL DEFAULT 0,
        failures       BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX memories_scope ON memories(scope text_pattern_ops);
    CREATE INDEX memories_forgotten ON memories(seq) WHERE forgotten_at IS NOT NULL;
    CREATE INDEX memories_session ON memories(session_id) WHERE session_id IS NOT NULL;
    CREATE INDEX memories_standing ON memories(seq)
        WHERE weight < 1.0 OR used_at IS NOT NULL OR archived_at IS NOT NULL;
    CREATE INDEX memories_recipient ON memories(recipient, seq) WHERE recipient IS NOT NULL;
    CREATE INDEX memories_reply_to ON memories(reply_to) WHERE reply_to IS NOT NULL;
    CREATE INDEX memories_supersedes ON memories(seq) WHERE supersedes IS NOT NULL;
    CREATE TABLE embeddings (
        model       TEXT NOT NULL,
        chunk_hash  BYTEA NOT NULL,
        vector      BYTEA NOT NULL,
        PRIMARY KEY (model, chunk_hash)
    );
    CREATE TABLE meta (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    );
    CREATE TABLE links (
        from_id     TEXT NOT NULL,
        to_id       TEXT NOT NULL,
        kind        TEXT NOT NULL,
        similarity  DOUBLE PRECISION NOT NULL,
        created_at  BIGINT NOT NULL,
        PRIMARY KEY (from_id, to_id, kind)
    );
    CREATE INDEX links_to ON links(to_id);
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        agent       TEXT NOT NULL,
        scope       TEXT NOT NULL,
        started_at  BIGINT NOT NULL,
        ended_at    BIGINT,
        record      TEXT NOT NULL
    );
    CREATE INDEX sessions_started ON sessions(started_at);
    CREATE TABLE kg_entities (
        id          BIGSERIAL PRIMARY KEY,
        scope       TEXT NOT NULL,
        name        TEXT NOT NULL,
        kind        TEXT,
        created_at  BIGINT NOT NULL
    );
    CREATE TABLE kg_names (
        scope   TEXT NOT NULL,
        norm    TEXT NOT NULL,
        entity  BIGINT NOT NULL REFERENCES kg_entities(id),
        name    TEXT NOT NULL,
        PRIMARY KEY (scope, norm)
    );
    CREATE INDEX kg_names_entity ON kg_names(entity);
    CREATE TABLE kg_facts (
        id              BIGSERIAL PRIMARY KEY,
        subject         BIGINT NOT NULL REFERENCES kg_entities(id),
        predicate       TEXT NOT NULL,
        object          BIGINT REFERENCES kg_entities(id),
        literal         TEXT,
        valid_from      BIGINT,
        valid_to        BIGINT,
        recorded_at     BIGINT NOT NULL,
        invalidated_at  BIGINT,
        confidence      DOUBLE PRECISION NOT NULL,
        sources         TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX kg_facts_subject ON kg_facts(subject, predicate);
    CREATE INDEX kg_facts_object ON kg_facts(object, predicate) WHERE object IS NOT NULL;
    CREATE INDEX kg_facts_predicate ON kg_facts(predicate);
    CREATE INDEX kg_facts_time ON kg_facts(valid_from, valid_to);
    CREATE INDEX kg_facts_by_subject ON kg_facts(subject, id);
    CREATE INDEX kg_facts_by_object ON kg_facts(object, id) WHERE object IS NOT NULL;
    CREATE TABLE kg_invalidations (
        n            BIGSERIAL PRIMARY KEY,
        fact         BIGINT NOT NULL REFERENCES kg_facts(id),
        at           BIGINT NOT NULL,
        recorded_at  BIGINT NOT NULL,
        reason       TEXT
    );
    CREATE INDEX kg_invalidations_fact ON kg_invalidations(fact);
    CREATE TABLE kg_mentions (
        entity  BIGINT NOT NULL REFERENCES kg_entities(id),
        memory  TEXT NOT NULL,
        PRIMARY KEY (entity, memory)
    );
    CREATE INDEX kg_mentions_memory ON kg_mentions(memory);
    CREATE TABLE scope_roots (
        scope    TEXT PRIMARY KEY,
        root     TEXT NOT NULL,
        seen_at  BIGINT NOT NULL
    );
    CREATE TABLE moved (
        old_id    TEXT PRIMARY KEY,
        new_id    TEXT NOT NULL,
        moved_at  BIGINT NOT NULL
    );
    CREATE TABLE outcomes (
        n           BIGSERIAL PRIMARY KEY,
        seq         BIGINT NOT NULL,
        kind        TEXT NOT NULL,
        result      TEXT,
        session_id  TEXT,
        agent       TEXT,
        note        TEXT,
        at          BIGINT NOT NULL
    );
    CREATE INDEX outcomes_seq ON outcomes(seq);
    CREATE INDEX outcomes_session ON outcomes(session_id) WHERE session_id IS NOT NULL;
    CREATE TABLE supersessions (
        by_seq  BIGINT NOT NULL,
        target  BIGINT NOT NULL,
        at      BIGINT NOT NULL,
        PRIMARY KEY (by_seq, target)
    );
    CREATE INDEX supersessions_target ON supersessions(target);
    CREATE TABLE inbox_served (
        agent  TEXT NOT NULL,
        seq    BIGINT NOT NULL,
        at     BIGINT NOT NULL,
        PRIMARY KEY (agent, seq)
    );
    CREATE TABLE thread_holds (
        thread  TEXT PRIMARY KEY,
        reason  TEXT NOT NULL,
        at      BIGINT NOT NULL
    );
    CREATE TABLE guard_log (
        n         BIGSERIAL PRIMARY KEY,
        agent     TEXT NOT NULL,
        trigger   TEXT NOT NULL,
        decision  TEXT NOT NULL,
        rule      TEXT NOT NULL,
        at        BIGINT NOT NULL
    );
    CREATE INDEX guard_log_agent ON guard_log(agent, trigger);
    CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        scope       TEXT NOT NULL,
        agent       TEXT NOT NULL,
        task        TEXT NOT NULL,
        trace       TEXT NOT NULL,
        used        TEXT NOT NULL DEFAULT '[]',
        outcome     TEXT,
        advice      TEXT NOT NULL DEFAULT '[]',
        created_at  BIGINT NOT NULL
    );
    CREATE INDEX runs_scope ON runs(scope, created_at);
    CREATE INDEX runs_agent ON runs(agent, created_at);
    CREATE TABLE run_rewards (
        n       BIGSERIAL PRIMARY KEY,
        run_id  TEXT NOT NULL,
        reward  DOUBLE PRECISION NOT NULL,
        reason  TEXT,
        agent   TEXT NOT NULL,
        at      BIGINT NOT NULL
    );
    CREATE INDEX run_rewards_run ON run_rewards(run_id, n);
    CREATE INDEX run_rewards_agent ON run_rewards(agent, at);
    CREATE TABLE amber_grants (
        role       NAME NOT NULL,
        prefix     TEXT NOT NULL,
        can_write  BOOLEAN NOT NULL DEFAULT FALSE,
        PRIMARY KEY (role, prefix)
    );
    "#,
        scoped_policies!("memories"),
        scoped_policies!("runs"),
        scoped_policies!("sessions"),
        belongs_to!("outcomes", "memories m WHERE m.seq = outcomes.seq", "m.scope"),
    ),
    // 1 -> 2: advice (the local store's 8 -> 9): situations, sorted runs, versioned notes,
    // servings, and judgements; the scoped tables under the same grants.
    concat!(
        r#"
    CREATE TABLE advice_situations (
        scope       TEXT NOT NULL,
        key         TEXT NOT NULL,
        category    TEXT NOT NULL,
        line        TEXT NOT NULL,
        aliases     TEXT NOT NULL DEFAULT '[]',
        created_at  BIGINT NOT NULL,
        PRIMARY KEY (scope, key)
    );
    CREATE TABLE advice_sorted (
        run_id     TEXT PRIMARY KEY,
        scope      TEXT NOT NULL,
        situation  TEXT NOT NULL
    );
    CREATE INDEX advice_sorted_situation ON advice_sorted(scope, situation);
    CREATE TABLE advice_notes (
        scope        TEXT NOT NULL,
        situation    TEXT NOT NULL,
        agent        TEXT NOT NULL DEFAULT '',
        version      BIGINT NOT NULL,
        text         TEXT NOT NULL,
        runs         TEXT NOT NULL DEFAULT '[]',
        run_count    BIGINT NOT NULL,
        wrong_count  BIGINT NOT NULL,
        agents       BIGINT NOT NULL,
        created_at   BIGINT NOT NULL,
        withheld     TEXT,
        PRIMARY KEY (scope, situation, agent, version)
    );
    CREATE TABLE advice_served (
        session_id  TEXT NOT NULL,
        scope       TEXT NOT NULL,
        situation   TEXT NOT NULL,
        agent       TEXT NOT NULL DEFAULT '',
        version     BIGINT NOT NULL,
        at          BIGINT NOT NULL,
        PRIMARY KEY (session_id, scope, situation)
    );
    CREATE TABLE run_judgements (
        run_id   TEXT PRIMARY KEY,
        verdict  SMALLINT,
        reason   TEXT NOT NULL,
        model    TEXT NOT NULL,
        at       BIGINT NOT NULL
    );
    "#,
        scoped_policies!("advice_situations"),
        scoped_policies!("advice_sorted"),
        scoped_policies!("advice_notes"),
        scoped_policies!("advice_served"),
    ),
    // 2 -> 3: the change log: a memory forgotten or moved to another scope by one node
    // is noted here (numbered in commit order under the seq lock), so every other node
    // takes it out of (or re-files it in) its derived indexes. And the knowledge graph
    // under the grants: entities and names by their scope, facts by their subject's,
    // invalidations by their fact's, mentions by their entity's.
    concat!(
        r#"
    ALTER TABLE amber_seq ADD COLUMN changes BIGINT NOT NULL DEFAULT 0;
    CREATE TABLE amber_changes (
        change  BIGINT PRIMARY KEY,
        seq     BIGINT NOT NULL,
        scope   TEXT NOT NULL
    );
    "#,
        scoped_policies!("amber_changes"),
        scoped_policies!("kg_entities"),
        scoped_policies!("kg_names"),
        belongs_to!("kg_facts", "kg_entities e WHERE e.id = kg_facts.subject", "e.scope"),
        belongs_to!("kg_mentions", "kg_entities e WHERE e.id = kg_mentions.entity", "e.scope"),
        belongs_to!(
            "kg_invalidations",
            "kg_facts f JOIN kg_entities e ON e.id = f.subject WHERE f.id = kg_invalidations.fact",
            "e.scope"
        ),
    ),
    // 3 -> 4: the rest of the team tables that say something about a scope's memories or
    // runs, under the same grants: moves by the scope the memory went to (a new column),
    // project roots by scope, curation links through their memory, supersessions through
    // the superseding memory, rewards through their run, judgements through their run or
    // session; and the inbox, holds and the guard's log readable and writable by whoever
    // reads their memory, and servings of advice by whoever reads the scope (a read-only
    // grant keeps its own books). A reference to a moved memory's old id is seen through
    // `moved`, so a scope move by a role re-points it.
    concat!(
        r#"
    ALTER TABLE moved ADD COLUMN scope TEXT;
    UPDATE moved v SET scope = m.scope FROM memories m WHERE m.id = v.new_id;
    "#,
        scoped_policies!("moved"),
        scoped_policies!("scope_roots"),
        belongs_to!(
            "links",
            "memories m WHERE (m.id = links.from_id
               OR m.id = (SELECT v.new_id FROM moved v WHERE v.old_id = links.from_id))",
            "m.scope"
        ),
        belongs_to!("supersessions", "memories m WHERE m.seq = supersessions.by_seq", "m.scope"),
        belongs_to!("run_rewards", "runs r WHERE r.id = run_rewards.run_id", "r.scope"),
        belongs_to!(
            "run_judgements",
            "(SELECT r.scope FROM runs r WHERE r.id = run_judgements.run_id
              UNION ALL SELECT s.scope FROM sessions s
              WHERE run_judgements.run_id LIKE 'session:%' AND s.id = substr(run_judgements.run_id, 9)) o
             WHERE TRUE",
            "o.scope"
        ),
        seen_through!("inbox_served", "memories m WHERE m.seq = inbox_served.seq"),
        seen_through!(
            "thread_holds",
            "memories m WHERE (m.id = thread_holds.thread
               OR m.id = (SELECT v.new_id FROM moved v WHERE v.old_id = thread_holds.thread))"
        ),
        seen_through!(
            "guard_log",
            "memories m WHERE (m.id = guard_log.trigger
               OR m.id = (SELECT v.new_id FROM moved v WHERE v.old_id = guard_log.trigger))"
        ),
        "DROP POLICY amber_read ON advice_served; DROP POLICY amber_insert ON advice_served;
         DROP POLICY amber_update ON advice_served; DROP POLICY amber_delete ON advice_served;\n",
        seen_through!("advice_served", scope: "scope"),
    ),
    // 4 -> 5: on what footing a word on a memory was given (the local store's 9 -> 10).
    "ALTER TABLE outcomes ADD COLUMN basis TEXT;\n",
    // 5 -> 6: the tables every scope shares, under row-level security too, so a role
    // (whatever table privileges it was given) changes none of them behind the others:
    // the schema version and the metadata are read by all and written by the owner
    // (and a new metadata key by anyone); the seq counter only counts up, one at a time,
    // and is never deleted; an embedding is insert-only (a role neither replaces nor
    // deletes a vector, its own included) and says which role wrote it; a role reads
    // only its own grants and writes none.
    r#"
    ALTER TABLE amber_schema ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON amber_schema FOR SELECT USING (TRUE);
    ALTER TABLE meta ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON meta FOR SELECT USING (TRUE);
    CREATE POLICY amber_insert ON meta FOR INSERT WITH CHECK (TRUE);
    ALTER TABLE amber_seq ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON amber_seq FOR SELECT USING (TRUE);
    CREATE POLICY amber_count ON amber_seq FOR UPDATE USING (TRUE) WITH CHECK (TRUE);
    CREATE FUNCTION amber_seq_counts_up() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.seq NOT IN (OLD.seq, OLD.seq + 1) OR NEW.changes NOT IN (OLD.changes, OLD.changes + 1) THEN
            RAISE EXCEPTION 'amber_seq only counts up, one at a time'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$;
    CREATE TRIGGER amber_seq_counts_up BEFORE UPDATE ON amber_seq
        FOR EACH ROW EXECUTE FUNCTION amber_seq_counts_up();
    ALTER TABLE embeddings ADD COLUMN written_by NAME;
    ALTER TABLE embeddings ALTER COLUMN written_by SET DEFAULT current_user;
    ALTER TABLE embeddings ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON embeddings FOR SELECT USING (TRUE);
    CREATE POLICY amber_insert ON embeddings FOR INSERT WITH CHECK (written_by = current_user);
    ALTER TABLE amber_grants ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON amber_grants FOR SELECT USING (role = current_user);
    "#,
    // 6 -> 7: the embedding cache under the scopes' grants, and no guessing oracle: a
    // vector is kept per scope, readable where the scope is, written only under a write
    // grant on it, keyed by HMAC-SHA256 of the scope and the chunk's SHA-256 under the
    // team's secret (store/src/pg/vectors.rs), which every role with a grant reads and
    // none writes. The old rows (keyed by the bare SHA-256, with no scope) cannot be
    // rekeyed here: the cache is derived, so they go, and are embedded again.
    concat!(
        r#"
    TRUNCATE embeddings;
    ALTER TABLE embeddings DROP CONSTRAINT embeddings_pkey;
    ALTER TABLE embeddings RENAME COLUMN chunk_hash TO chunk_key;
    ALTER TABLE embeddings ADD COLUMN scope TEXT NOT NULL;
    ALTER TABLE embeddings ADD PRIMARY KEY (model, scope, chunk_key);
    DROP POLICY amber_read ON embeddings;
    DROP POLICY amber_insert ON embeddings;
    CREATE TABLE amber_cache_secret (
        one     BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
        secret  BYTEA NOT NULL CHECK (length(secret) = 32)
    );
    INSERT INTO amber_cache_secret (secret)
        VALUES (sha256(convert_to(gen_random_uuid()::TEXT || gen_random_uuid()::TEXT, 'UTF8')));
    ALTER TABLE amber_cache_secret ENABLE ROW LEVEL SECURITY;
    CREATE POLICY amber_read ON amber_cache_secret
        FOR SELECT USING (EXISTS (SELECT 1 FROM amber_grants g WHERE g.role = current_user));
    "#,
        readable_when!("embeddings", [granted!("scope", "")]),
        "CREATE POLICY amber_insert ON embeddings FOR INSERT WITH CHECK (written_by = current_user AND ",
        granted!("scope", " AND g.can_write"),
        ");\n",
    ),
    // 7 -> 8: words on served notes (the local store's 11 -> 12), kept like servings of
    // advice: by whoever reads the note's scope.
    concat!(
        r#"
    CREATE TABLE note_verdicts (
        session_id  TEXT NOT NULL,
        scope       TEXT NOT NULL,
        situation   TEXT NOT NULL,
        by          TEXT NOT NULL,
        agent       TEXT NOT NULL DEFAULT '',
        version     BIGINT NOT NULL,
        voice       TEXT NOT NULL,
        applied     BOOLEAN,
        helped      BOOLEAN,
        reason      TEXT NOT NULL DEFAULT '',
        model       TEXT,
        at          BIGINT NOT NULL,
        PRIMARY KEY (session_id, scope, situation, by)
    );
    CREATE INDEX note_verdicts_note ON note_verdicts(scope, situation);
    "#,
        seen_through!("note_verdicts", scope: "scope"),
    ),
];

impl PgStore {
    /// The schema version in the database (0 when it has no Amber schema).
    fn version(c: &mut impl postgres::GenericClient) -> Q<i64> {
        let exists: bool = c.query_one("SELECT to_regclass('amber_schema') IS NOT NULL", &[])?.try_get(0)?;
        if !exists {
            return Ok(0);
        }
        let row = c.query_opt("SELECT version FROM amber_schema", &[])?;
        Ok(match row {
            Some(r) => r.try_get(0)?,
            None => 0,
        })
    }

    /// Creates or migrates the schema; a newer schema is refused untouched.
    pub(crate) fn migrate(&self) -> Result<()> {
        let location = self.location.clone();
        self.write(|c| {
            let mut tx = c.transaction()?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
            let found = Self::version(&mut tx)?;
            if found > PG_SCHEMA_VERSION {
                return Err(Error::SchemaTooNewAt {
                    location: location.clone(),
                    found,
                    known: PG_SCHEMA_VERSION,
                }
                .into());
            }
            if found == PG_SCHEMA_VERSION {
                return Ok(());
            }
            if found == 0 {
                tx.batch_execute("CREATE TABLE amber_schema (version BIGINT NOT NULL)")?;
                tx.execute("INSERT INTO amber_schema (version) VALUES (0)", &[])?;
            }
            for (version, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
                tx.batch_execute(migration)?;
                tx.execute("UPDATE amber_schema SET version = $1", &[&(version as i64 + 1)])?;
            }
            tx.commit()?;
            tracing::info!(location = %location, to = PG_SCHEMA_VERSION, "migrated team store schema");
            Ok(())
        })
    }

    /// Checks a reader's database is at this binary's version.
    pub(crate) fn check_version(&self) -> Result<()> {
        let found = self.read(Self::version)?;
        if found > PG_SCHEMA_VERSION {
            return Err(Error::SchemaTooNewAt {
                location: self.location.clone(),
                found,
                known: PG_SCHEMA_VERSION,
            });
        }
        if found != PG_SCHEMA_VERSION {
            return Err(Error::Corrupt {
                path: self.path().to_path_buf(),
                detail: format!("a reader found team schema version {found}, expected {PG_SCHEMA_VERSION}"),
            });
        }
        Ok(())
    }
}
