//! Schema and migrations. Each migration moves the schema one version forward and runs
//! in the same transaction as the `user_version` bump.

/// The newest schema version this binary knows.
pub const SCHEMA_VERSION: i64 = 13;

/// Migration `i` takes the schema from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 0 -> 1: memories, the embedding cache, key/value metadata.
    r#"
    CREATE TABLE memories (
        seq          INTEGER PRIMARY KEY AUTOINCREMENT,
        id           TEXT NOT NULL UNIQUE,
        scope        TEXT NOT NULL,
        content      TEXT NOT NULL,
        kind         TEXT NOT NULL,
        source       TEXT,
        author       TEXT,
        session_id   TEXT,
        created_at   INTEGER NOT NULL,
        event_time   INTEGER,
        metadata     TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX memories_scope ON memories(scope);
    CREATE TABLE embeddings (
        model       TEXT NOT NULL,
        chunk_hash  BLOB NOT NULL,
        vector      BLOB NOT NULL,
        PRIMARY KEY (model, chunk_hash)
    ) WITHOUT ROWID;
    CREATE TABLE meta (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 1 -> 2: forgetting. A forgotten memory keeps its row (and content) with the time it
    // was forgotten; the partial index keeps listing and counting them cheap.
    r#"
    ALTER TABLE memories ADD COLUMN forgotten_at INTEGER;
    CREATE INDEX memories_forgotten ON memories(seq) WHERE forgotten_at IS NOT NULL;
    "#,
    // 2 -> 3: sessions and curation. Links between memories (duplicates, related), keyed
    // by memory id; a session's record (what it was served and why, what it captured,
    // what curation did) as JSON; memories looked up by session.
    r#"
    CREATE INDEX memories_session ON memories(session_id) WHERE session_id IS NOT NULL;
    CREATE TABLE links (
        from_id     TEXT NOT NULL,
        to_id       TEXT NOT NULL,
        kind        TEXT NOT NULL,
        similarity  REAL NOT NULL,
        created_at  INTEGER NOT NULL,
        PRIMARY KEY (from_id, to_id, kind)
    ) WITHOUT ROWID;
    CREATE INDEX links_to ON links(to_id);
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        agent       TEXT NOT NULL,
        scope       TEXT NOT NULL,
        started_at  INTEGER NOT NULL,
        ended_at    INTEGER,
        record      TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX sessions_started ON sessions(started_at);
    "#,
    // 3 -> 4: the knowledge graph. Entities live in a scope; every name and alias of an
    // entity is a row of kg_names, unique within the scope by its normalized form. Facts
    // are never deleted: an invalidation ends their window and is logged. Mentions link
    // entities to the memories that name them (derived, rebuildable).
    r#"
    CREATE TABLE kg_entities (
        id          INTEGER PRIMARY KEY,
        scope       TEXT NOT NULL,
        name        TEXT NOT NULL,
        kind        TEXT,
        created_at  INTEGER NOT NULL
    );
    CREATE TABLE kg_names (
        scope   TEXT NOT NULL,
        norm    TEXT NOT NULL,
        entity  INTEGER NOT NULL REFERENCES kg_entities(id),
        name    TEXT NOT NULL,
        PRIMARY KEY (scope, norm)
    ) WITHOUT ROWID;
    CREATE INDEX kg_names_entity ON kg_names(entity);
    CREATE TABLE kg_facts (
        id              INTEGER PRIMARY KEY,
        subject         INTEGER NOT NULL REFERENCES kg_entities(id),
        predicate       TEXT NOT NULL,
        object          INTEGER REFERENCES kg_entities(id),
        literal         TEXT,
        valid_from      INTEGER,
        valid_to        INTEGER,
        recorded_at     INTEGER NOT NULL,
        invalidated_at  INTEGER,
        confidence      REAL NOT NULL,
        sources         TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX kg_facts_subject ON kg_facts(subject, predicate);
    CREATE INDEX kg_facts_object ON kg_facts(object, predicate) WHERE object IS NOT NULL;
    CREATE INDEX kg_facts_predicate ON kg_facts(predicate);
    CREATE INDEX kg_facts_time ON kg_facts(valid_from, valid_to);
    CREATE TABLE kg_invalidations (
        fact         INTEGER NOT NULL REFERENCES kg_facts(id),
        at           INTEGER NOT NULL,
        recorded_at  INTEGER NOT NULL,
        reason       TEXT
    );
    CREATE INDEX kg_invalidations_fact ON kg_invalidations(fact);
    CREATE TABLE kg_mentions (
        entity  INTEGER NOT NULL REFERENCES kg_entities(id),
        memory  TEXT NOT NULL,
        PRIMARY KEY (entity, memory)
    ) WITHOUT ROWID;
    CREATE INDEX kg_mentions_memory ON kg_mentions(memory);
    "#,
    // 4 -> 5: facts by subject and by object in id order, so a traversal reads an
    // entity's facts a page at a time (a hub's thousands of facts are not all read when
    // a few paths are asked for).
    r#"
    CREATE INDEX kg_facts_by_subject ON kg_facts(subject);
    CREATE INDEX kg_facts_by_object ON kg_facts(object) WHERE object IS NOT NULL;
    "#,
    // 5 -> 6: the scope model. Which project root a project scope stands for (noted
    // whenever a working directory is resolved), and where memories moved by
    // `scope_move` went (their ids derive from scope and content, so a move gives them
    // new ids; the old id is remembered here).
    r#"
    CREATE TABLE scope_roots (
        scope    TEXT PRIMARY KEY,
        root     TEXT NOT NULL,
        seen_at  INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE moved (
        old_id    TEXT PRIMARY KEY,
        new_id    TEXT NOT NULL,
        moved_at  INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 6 -> 7: outcomes and addressing. A memory's standing (its weight, derived from
    // the outcome log; when a session last relied on it; when it was archived and the
    // invalidation that superseded it), who it is for and what it answers. The outcome
    // log (every word on a memory, by seq: a move keeps the seq), supersession edges
    // (derived from the invalidations' `supersedes`), which memories each agent's inbox
    // has served, held threads, and the loop guard's decisions.
    r#"
    ALTER TABLE memories ADD COLUMN recipient TEXT;
    ALTER TABLE memories ADD COLUMN reply_to TEXT;
    ALTER TABLE memories ADD COLUMN supersedes TEXT;
    ALTER TABLE memories ADD COLUMN weight REAL NOT NULL DEFAULT 1.0;
    ALTER TABLE memories ADD COLUMN used_at INTEGER;
    ALTER TABLE memories ADD COLUMN archived_at INTEGER;
    ALTER TABLE memories ADD COLUMN superseded_by TEXT;
    ALTER TABLE memories ADD COLUMN successes INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE memories ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX memories_standing ON memories(seq)
        WHERE weight < 1.0 OR used_at IS NOT NULL OR archived_at IS NOT NULL;
    CREATE INDEX memories_recipient ON memories(recipient, seq) WHERE recipient IS NOT NULL;
    CREATE INDEX memories_reply_to ON memories(reply_to) WHERE reply_to IS NOT NULL;
    CREATE INDEX memories_supersedes ON memories(seq) WHERE supersedes IS NOT NULL;
    CREATE TABLE outcomes (
        n           INTEGER PRIMARY KEY,
        seq         INTEGER NOT NULL,
        kind        TEXT NOT NULL,
        result      TEXT,
        session_id  TEXT,
        agent       TEXT,
        note        TEXT,
        at          INTEGER NOT NULL
    );
    CREATE INDEX outcomes_seq ON outcomes(seq);
    CREATE INDEX outcomes_session ON outcomes(session_id) WHERE session_id IS NOT NULL;
    CREATE TABLE supersessions (
        by_seq  INTEGER NOT NULL,
        target  INTEGER NOT NULL,
        at      INTEGER NOT NULL,
        PRIMARY KEY (by_seq, target)
    ) WITHOUT ROWID;
    CREATE INDEX supersessions_target ON supersessions(target);
    CREATE TABLE inbox_served (
        agent  TEXT NOT NULL,
        seq    INTEGER NOT NULL,
        at     INTEGER NOT NULL,
        PRIMARY KEY (agent, seq)
    ) WITHOUT ROWID;
    CREATE TABLE thread_holds (
        thread       TEXT PRIMARY KEY,
        reason       TEXT NOT NULL,
        at           INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE guard_log (
        n         INTEGER PRIMARY KEY,
        agent     TEXT NOT NULL,
        trigger   TEXT NOT NULL,
        decision  TEXT NOT NULL,
        rule      TEXT NOT NULL,
        at        INTEGER NOT NULL
    );
    CREATE INDEX guard_log_agent ON guard_log(agent, trigger);
    "#,
    // 7 -> 8: runs and their rewards. A run's id derives from its content (scope, agent,
    // task, trace, used, outcome, advice), so the same runs give the same ids anywhere;
    // every reward is kept, the latest counts.
    r#"
    CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        scope       TEXT NOT NULL,
        agent       TEXT NOT NULL,
        task        TEXT NOT NULL,
        trace       TEXT NOT NULL,
        used        TEXT NOT NULL DEFAULT '[]',
        outcome     TEXT,
        advice      TEXT NOT NULL DEFAULT '[]',
        created_at  INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX runs_scope ON runs(scope, created_at);
    CREATE INDEX runs_agent ON runs(agent, created_at);
    CREATE TABLE run_rewards (
        n       INTEGER PRIMARY KEY,
        run_id  TEXT NOT NULL,
        reward  REAL NOT NULL,
        reason  TEXT,
        agent   TEXT NOT NULL,
        at      INTEGER NOT NULL
    );
    CREATE INDEX run_rewards_run ON run_rewards(run_id, n);
    CREATE INDEX run_rewards_agent ON run_rewards(agent, at);
    "#,
    // 8 -> 9: advice. Situations (a kind of task, with the line the router reads and
    // the keys merged into it), which situation each run was sorted under, advice notes
    // as versioned documents (one series per scope, situation and agent: '' for the
    // shared note), which note each session was served, and the model's judgements of
    // unrewarded runs (kept apart from rewards: a recorder's own reward wins).
    r#"
    CREATE TABLE advice_situations (
        scope       TEXT NOT NULL,
        key         TEXT NOT NULL,
        category    TEXT NOT NULL,
        line        TEXT NOT NULL,
        aliases     TEXT NOT NULL DEFAULT '[]',
        created_at  INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    CREATE TABLE advice_sorted (
        run_id     TEXT PRIMARY KEY,
        scope      TEXT NOT NULL,
        situation  TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX advice_sorted_situation ON advice_sorted(scope, situation);
    CREATE TABLE advice_notes (
        scope        TEXT NOT NULL,
        situation    TEXT NOT NULL,
        agent        TEXT NOT NULL DEFAULT '',
        version      INTEGER NOT NULL,
        text         TEXT NOT NULL,
        runs         TEXT NOT NULL DEFAULT '[]',
        run_count    INTEGER NOT NULL,
        wrong_count  INTEGER NOT NULL,
        agents       INTEGER NOT NULL,
        created_at   INTEGER NOT NULL,
        withheld     TEXT,
        PRIMARY KEY (scope, situation, agent, version)
    ) WITHOUT ROWID;
    CREATE TABLE advice_served (
        session_id  TEXT NOT NULL,
        scope       TEXT NOT NULL,
        situation   TEXT NOT NULL,
        agent       TEXT NOT NULL DEFAULT '',
        version     INTEGER NOT NULL,
        at          INTEGER NOT NULL,
        PRIMARY KEY (session_id, scope, situation)
    ) WITHOUT ROWID;
    CREATE TABLE run_judgements (
        run_id   TEXT PRIMARY KEY,
        verdict  INTEGER,
        reason   TEXT NOT NULL,
        model    TEXT NOT NULL,
        at       INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 9 -> 10: on what footing a word on a memory was given (`person`, `served`,
    // `unserved`; NULL for words logged before): an agent's word on a memory its session
    // was never served counts half and never archives.
    r#"
    ALTER TABLE outcomes ADD COLUMN basis TEXT;
    "#,
    // 10 -> 11: a file's memories by their source (`amber ingest` keeps a document's
    // chunks in step with the file).
    r#"
    CREATE INDEX memories_source ON memories(scope, source) WHERE source IS NOT NULL;
    "#,
    // 11 -> 12: words on served notes: per session and note, was it applied and did it
    // help (NULL: can't tell), from the judge or the person (the person's overrides),
    // and whose session it was (the voice a note's tally counts).
    r#"
    CREATE TABLE note_verdicts (
        session_id  TEXT NOT NULL,
        scope       TEXT NOT NULL,
        situation   TEXT NOT NULL,
        by          TEXT NOT NULL,
        agent       TEXT NOT NULL DEFAULT '',
        version     INTEGER NOT NULL,
        voice       TEXT NOT NULL,
        applied     INTEGER,
        helped      INTEGER,
        reason      TEXT NOT NULL DEFAULT '',
        model       TEXT,
        at          INTEGER NOT NULL,
        PRIMARY KEY (session_id, scope, situation, by)
    ) WITHOUT ROWID;
    CREATE INDEX note_verdicts_note ON note_verdicts(scope, situation);
    "#,
    // 12 -> 13: the live memories' keys (what the engine holds in memory of each: scope,
    // time, session, type and filing marks) in one index, so loading them at start reads
    // neither the rows (their content) nor parses their metadata.
    concat!(
        "CREATE INDEX memories_keys ON memories(",
        crate::keys::sqlite_key_columns!(),
        ") WHERE forgotten_at IS NULL;"
    ),
];
