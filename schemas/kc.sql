-- kc.sql: the kcorpus SQLite schema, the single source of truth for every stage.
-- Migrations are applied in order by common/db.c; each starts with a line
-- "-- migration N" and runs in one transaction, after which PRAGMA user_version = N.
-- Large texts (prompts, responses, sources, logs) live once in `blobs`, addressed by sha256.
-- API keys are never stored: requests are recorded as sent minus their auth headers.

-- migration 1
CREATE TABLE blobs (
    sha256      TEXT PRIMARY KEY,           -- hex sha256 of data
    size        INTEGER NOT NULL,
    data        BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE problems (
    id              TEXT PRIMARY KEY,       -- 'level1/019_relu'
    suite           TEXT NOT NULL,          -- 'level1'
    level           INTEGER NOT NULL,
    title           TEXT NOT NULL,
    manifest_sha    TEXT NOT NULL REFERENCES blobs(sha256),
    reference_sha   TEXT NOT NULL REFERENCES blobs(sha256),
    spec_sha        TEXT REFERENCES blobs(sha256),  -- the spec as shown to the model
    added_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    run_key         TEXT NOT NULL UNIQUE,   -- hash of the run's identity (config minus secrets)
    tool            TEXT NOT NULL,          -- 'kcollect', 'kverify'
    tool_version    TEXT NOT NULL,
    config_json     TEXT NOT NULL,          -- flags and config as used, secrets removed
    model           TEXT,
    endpoint        TEXT,                   -- base URL, never a key
    api             TEXT,                   -- 'openai' | 'anthropic' | 'none'
    host            TEXT,
    status          TEXT NOT NULL DEFAULT 'running',  -- running | finished | interrupted
    started_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at     TEXT
);

CREATE TABLE trajectories (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs(id),
    problem_id      TEXT NOT NULL REFERENCES problems(id),
    sample_index    INTEGER NOT NULL,
    status          TEXT NOT NULL DEFAULT 'open',     -- open | done
    stop_reason     TEXT,           -- first_correct | first_compiled (compile-only) | target_speedup | turns | minutes | tokens |
                                    -- problem_minutes | problem_tokens | error
    started_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at     TEXT,
    UNIQUE (run_id, problem_id, sample_index)
);

CREATE TABLE requests (
    id              INTEGER PRIMARY KEY,
    request_hash    TEXT NOT NULL,          -- sha256 of the canonical request (cache key)
    endpoint        TEXT NOT NULL,
    api             TEXT NOT NULL,
    model           TEXT NOT NULL,
    body_sha        TEXT NOT NULL REFERENCES blobs(sha256),  -- request JSON as sent, minus secrets
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX requests_by_hash ON requests(request_hash);

CREATE TABLE responses (
    id              INTEGER PRIMARY KEY,
    request_id      INTEGER NOT NULL REFERENCES requests(id),
    http_status     INTEGER,
    raw_sha         TEXT REFERENCES blobs(sha256),   -- raw body (or SSE stream) as received
    content_sha     TEXT REFERENCES blobs(sha256),   -- the answer text
    reasoning_sha   TEXT REFERENCES blobs(sha256),   -- reasoning kept apart from the answer
    finish_reason   TEXT,                            -- stop | length | ... ; 'length' is labelled truncated
    prompt_tokens   INTEGER,
    completion_tokens INTEGER,
    reasoning_tokens INTEGER,
    latency_ms      REAL,
    cost_usd        REAL,
    attempts        INTEGER NOT NULL DEFAULT 1,
    from_cache      INTEGER NOT NULL DEFAULT 0,
    error           TEXT,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX responses_by_request ON responses(request_id);

-- The response cache: request hash -> the response that answered it.
CREATE TABLE response_cache (
    request_hash    TEXT PRIMARY KEY,
    response_id     INTEGER NOT NULL REFERENCES responses(id)
) WITHOUT ROWID;

CREATE TABLE candidates (
    id              INTEGER PRIMARY KEY,
    problem_id      TEXT NOT NULL REFERENCES problems(id),
    source_sha      TEXT REFERENCES blobs(sha256),   -- extracted kernel (NULL on extract_error)
    origin          TEXT NOT NULL,                   -- turn | import | reference
    status          TEXT NOT NULL DEFAULT 'pending', -- pending | compiled | verified
    extract_error   TEXT,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX candidates_by_status ON candidates(status);
CREATE INDEX candidates_by_problem ON candidates(problem_id);

CREATE TABLE turns (
    id              INTEGER PRIMARY KEY,
    trajectory_id   INTEGER NOT NULL REFERENCES trajectories(id),
    turn_index      INTEGER NOT NULL,
    prompt_sha      TEXT REFERENCES blobs(sha256),   -- the new user message of this turn
    request_id      INTEGER REFERENCES requests(id),
    response_id     INTEGER REFERENCES responses(id),
    candidate_id    INTEGER REFERENCES candidates(id),
    feedback_sha    TEXT REFERENCES blobs(sha256),   -- feedback text sent on the next turn
    tokens_in       INTEGER,
    tokens_out      INTEGER,
    latency_ms      REAL,
    cost_usd        REAL,
    started_at      TEXT,
    finished_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    UNIQUE (trajectory_id, turn_index)
);

CREATE TABLE compiles (
    id              INTEGER PRIMARY KEY,
    candidate_id    INTEGER NOT NULL REFERENCES candidates(id),
    ok              INTEGER NOT NULL,
    stage           TEXT NOT NULL,          -- parse | policy | compile
    log_sha         TEXT REFERENCES blobs(sha256),
    duration_ms     REAL,
    arch            TEXT,
    nvrtc_version   TEXT,
    kernels_json    TEXT,                   -- per kernel: registers, shared bytes, local (spill) bytes
    cubin_sha       TEXT REFERENCES blobs(sha256),
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX compiles_by_candidate ON compiles(candidate_id);

CREATE TABLE verifications (
    id              INTEGER PRIMARY KEY,
    candidate_id    INTEGER NOT NULL REFERENCES candidates(id),
    verdict         TEXT NOT NULL CHECK (verdict IN ('extract_error','policy_violation',
                        'compile_error','launch_error','runtime_error','timeout','mismatch',
                        'unsafe','correct','compiled')),
    flags           TEXT NOT NULL DEFAULT '',   -- comma separated: alt_shape_fail,nondeterministic,...
    message         TEXT,                       -- one line saying what happened
    evidence_json   TEXT,                       -- per seed/dims: errors, worst index, checksums
    seeds           TEXT,                       -- comma separated seeds used
    max_abs_err     REAL,
    max_rel_err     REAL,
    rel_l2_err      REAL,
    verifier_version TEXT NOT NULL,
    gpu_name        TEXT,
    driver_version  TEXT,
    cuda_version    TEXT,
    nvrtc_version   TEXT,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX verifications_by_candidate ON verifications(candidate_id);

CREATE TABLE timings (
    id              INTEGER PRIMARY KEY,
    verification_id INTEGER NOT NULL REFERENCES verifications(id),
    median_ms       REAL NOT NULL,
    mean_ms         REAL,
    stdev_ms        REAL,
    min_ms          REAL,
    p10_ms          REAL,
    p90_ms          REAL,
    n               INTEGER,
    cupti_ms        REAL,                   -- sum of per-kernel device time (median)
    gbps            REAL,
    tflops          REAL,
    eager_ms        REAL,
    compile_ms      REAL,
    speedup_eager   REAL,
    speedup_compile REAL
);
CREATE INDEX timings_by_verification ON timings(verification_id);

CREATE TABLE curate_runs (
    id              INTEGER PRIMARY KEY,
    params_json     TEXT NOT NULL,
    tool_version    TEXT NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

CREATE TABLE candidate_labels (
    candidate_id    INTEGER PRIMARY KEY REFERENCES candidates(id),
    curate_run_id   INTEGER NOT NULL REFERENCES curate_runs(id),
    normalized_sha  TEXT,
    exact_rep_id    INTEGER REFERENCES candidates(id),  -- representative of the exact-dup cluster
    near_rep_id     INTEGER REFERENCES candidates(id),  -- representative of the near-dup cluster
    verdict_class   TEXT,
    correct_alt     INTEGER,
    speedup_eager   REAL,
    speedup_compile REAL,
    tier_eager      TEXT,                   -- fast_0 | fast_1 | fast_1.5 | fast_2
    tier_compile    TEXT,
    improved        INTEGER,                -- better than the previous turn
    truncated       INTEGER,
    suspicious      INTEGER,
    reasoning_chars INTEGER,
    reward          REAL,
    discounted_return REAL,
    labels_json     TEXT
);

CREATE TABLE trajectory_labels (
    trajectory_id   INTEGER PRIMARY KEY REFERENCES trajectories(id),
    curate_run_id   INTEGER NOT NULL REFERENCES curate_runs(id),
    solved          INTEGER,
    first_correct_turn INTEGER,
    best_speedup_eager REAL,
    best_speedup_compile REAL,
    n_turns         INTEGER,
    split           TEXT,                   -- train | valid | test | heldout
    labels_json     TEXT
);

CREATE TABLE exports (
    id              INTEGER PRIMARY KEY,
    format          TEXT NOT NULL,
    config_json     TEXT NOT NULL,
    out_dir         TEXT NOT NULL,
    manifest_sha    TEXT REFERENCES blobs(sha256),
    records         INTEGER NOT NULL,
    created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);

-- Auditing views: answer questions from the sqlite3 shell, Datasette or DuckDB.
CREATE VIEW v_blob_text AS
    SELECT sha256, size, CAST(data AS TEXT) AS text FROM blobs;

CREATE VIEW v_latest_verification AS
    SELECT v.* FROM verifications v
    WHERE v.id = (SELECT max(id) FROM verifications w WHERE w.candidate_id = v.candidate_id);

CREATE VIEW v_candidate_audit AS
    SELECT c.id AS candidate_id, c.problem_id, c.origin, c.status,
           t.trajectory_id, t.turn_index,
           CAST(pb.data AS TEXT) AS prompt,
           CAST(rb.data AS TEXT) AS response,
           CAST(sb.data AS TEXT) AS source,
           cp.ok AS compiled_ok, CAST(lb.data AS TEXT) AS compile_log, cp.kernels_json,
           v.verdict, v.flags, v.message, v.max_abs_err, v.max_rel_err, v.rel_l2_err,
           v.seeds, v.gpu_name, v.verifier_version,
           tm.median_ms, tm.gbps, tm.tflops, tm.speedup_eager, tm.speedup_compile,
           CAST(fb.data AS TEXT) AS feedback
    FROM candidates c
    LEFT JOIN turns t ON t.candidate_id = c.id
    LEFT JOIN blobs pb ON pb.sha256 = t.prompt_sha
    LEFT JOIN responses r ON r.id = t.response_id
    LEFT JOIN blobs rb ON rb.sha256 = r.content_sha
    LEFT JOIN blobs sb ON sb.sha256 = c.source_sha
    LEFT JOIN compiles cp ON cp.id = (SELECT max(id) FROM compiles WHERE candidate_id = c.id)
    LEFT JOIN blobs lb ON lb.sha256 = cp.log_sha
    LEFT JOIN v_latest_verification v ON v.candidate_id = c.id
    LEFT JOIN timings tm ON tm.verification_id = v.id
    LEFT JOIN blobs fb ON fb.sha256 = t.feedback_sha;

CREATE VIEW v_trajectory_summary AS
    SELECT tr.id AS trajectory_id, tr.run_id, tr.problem_id, tr.sample_index, tr.status,
           tr.stop_reason, count(t.id) AS turns,
           sum(v.verdict = 'correct') AS correct_turns,
           min(CASE WHEN v.verdict = 'correct' THEN t.turn_index END) AS first_correct_turn,
           max(tm.speedup_eager) AS best_speedup_eager,
           sum(t.tokens_in) AS tokens_in, sum(t.tokens_out) AS tokens_out,
           sum(t.cost_usd) AS cost_usd
    FROM trajectories tr
    LEFT JOIN turns t ON t.trajectory_id = tr.id
    LEFT JOIN v_latest_verification v ON v.candidate_id = t.candidate_id
    LEFT JOIN timings tm ON tm.verification_id = v.id
    GROUP BY tr.id;

CREATE VIEW v_verdict_counts AS
    SELECT c.problem_id, v.verdict, count(*) AS n
    FROM candidates c JOIN v_latest_verification v ON v.candidate_id = c.id
    GROUP BY c.problem_id, v.verdict;

-- migration 2
-- kcurate/kexport: a database identity (random, set once) for merges and export manifests,
-- problem-level labels (the split lives here: splits are by problem, never by record), and the
-- merge map that makes `kcurate merge` idempotent: every row copied from another database
-- remembers where it first came from (origin database uuid, table, id there).
CREATE TABLE db_info (
    key             TEXT PRIMARY KEY,
    value           TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO db_info(key, value) VALUES ('uuid', lower(hex(randomblob(16))));

CREATE TABLE problem_labels (
    problem_id      TEXT PRIMARY KEY REFERENCES problems(id),
    curate_run_id   INTEGER NOT NULL REFERENCES curate_runs(id),
    split           TEXT NOT NULL,          -- train | valid | test | heldout
    heldout         INTEGER NOT NULL DEFAULT 0,  -- on the decontamination list
    labels_json     TEXT
) WITHOUT ROWID;

CREATE TABLE merge_map (
    origin_uuid     TEXT NOT NULL,          -- db_info uuid of the database the row was born in
    tbl             TEXT NOT NULL,
    origin_id       INTEGER NOT NULL,
    local_id        INTEGER NOT NULL,
    PRIMARY KEY (origin_uuid, tbl, origin_id)
) WITHOUT ROWID;
CREATE INDEX merge_map_by_local ON merge_map(tbl, local_id);

-- migration 3
-- kcollect: each turn's wall time (per-trajectory minute budgets survive a resume) and
-- answers cut by the token limit labelled as truncated (finish_reason 'length').
ALTER TABLE turns ADD COLUMN wall_ms REAL;
ALTER TABLE responses ADD COLUMN truncated INTEGER NOT NULL DEFAULT 0;

-- migration 4
-- kcurate/kexport: a candidate's turn is looked up by candidate id (every curate and export query,
-- and v_candidate_audit); without this index SQLite builds a temporary one per statement.
CREATE INDEX turns_by_candidate ON turns(candidate_id);

-- migration 5
-- kverify: what the timed runs were checked against. check_device_ms is the candidate's CUPTI
-- device time in the checking runs (median), to compare with cupti_ms of the timed runs;
-- checked_reps is how many timed reps had their output compared with the reference.
ALTER TABLE timings ADD COLUMN check_device_ms REAL;
ALTER TABLE timings ADD COLUMN checked_reps INTEGER;

-- migration 6
-- kcollect hardening (issue 15). answers_received: an answer's bytes as received, committed the
-- moment the answer has completely arrived (before it is parsed, checked or verified), keyed by
-- the request hash; a run killed before it recorded the response finds the answer here on resume
-- instead of buying it again. responses.answer_bytes: set when the answer's text passed
-- kcollect's --max-answer-bytes: how many bytes had arrived (the stored answer and raw record
-- keep the first max-answer-bytes; the response is marked truncated, finish_reason 'answer_cap').
CREATE TABLE answers_received (
    request_hash    TEXT PRIMARY KEY,
    endpoint        TEXT NOT NULL,                   -- URL or 'bundled-fake-llm'; never a key
    api             TEXT NOT NULL,
    stream          INTEGER NOT NULL,                -- raw is an SSE stream
    raw_sha         TEXT NOT NULL REFERENCES blobs(sha256),
    received_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
) WITHOUT ROWID;
ALTER TABLE responses ADD COLUMN answer_bytes INTEGER;

-- migration 7
-- Provenance (issue 16). A run says whether its answers are synthetic (written by the bundled
-- test server, never a real model) and which server wrote them, and keeps its identity as JSON
-- (model, normalised endpoints, sampling settings, prompt format: what makes two kcollect
-- commands the same run). A curate run remembers the newest candidate and verification that
-- existed when it labelled, so kexport can tell when labels are stale.
ALTER TABLE runs ADD COLUMN synthetic INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN server TEXT;          -- the synthetic server's name, NULL for a real endpoint
ALTER TABLE runs ADD COLUMN identity_json TEXT;   -- what run_key hashes (NULL: recorded before migration 7)
UPDATE runs SET synthetic = 1, server = 'bundled-fake-llm' WHERE endpoint = 'bundled-fake-llm';
ALTER TABLE curate_runs ADD COLUMN max_candidate_id INTEGER;
ALTER TABLE curate_runs ADD COLUMN max_verification_id INTEGER;
UPDATE curate_runs SET
    max_candidate_id = (SELECT coalesce(max(candidate_id), 0) FROM candidate_labels),
    max_verification_id = (SELECT coalesce(max(id), 0) FROM verifications v
                           WHERE v.created_at <= curate_runs.created_at);
CREATE TRIGGER curate_runs_snapshot AFTER INSERT ON curate_runs
BEGIN
    UPDATE curate_runs SET
        max_candidate_id = (SELECT coalesce(max(id), 0) FROM candidates),
        max_verification_id = (SELECT coalesce(max(id), 0) FROM verifications)
    WHERE id = NEW.id;
END;

-- migration 8
-- Audit (issue 13): re-verification passes, third-party claimed labels, the per-problem budget
-- clock of kcollect, and the flip views.
-- A reverify pass freezes its selection (reverify_items) when it starts; a verification it adds
-- carries its id, so an interrupted pass resumes with the items that have none yet.
CREATE TABLE reverify_passes (
    id              INTEGER PRIMARY KEY,
    selection_key   TEXT NOT NULL,          -- sha256 of the selection (problems, verdicts, mode)
    selection_json  TEXT NOT NULL,
    compile_only    INTEGER NOT NULL DEFAULT 0,
    verifier_version TEXT NOT NULL,
    started_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')),
    finished_at     TEXT
);
CREATE TABLE reverify_items (
    pass_id         INTEGER NOT NULL REFERENCES reverify_passes(id),
    candidate_id    INTEGER NOT NULL REFERENCES candidates(id),
    PRIMARY KEY (pass_id, candidate_id)
) WITHOUT ROWID;
ALTER TABLE verifications ADD COLUMN reverify_pass INTEGER REFERENCES reverify_passes(id);

-- Someone else's label for an imported kernel (`kverify import --jsonl`, docs/THIRD_PARTY.md).
CREATE TABLE third_party_claims (
    candidate_id    INTEGER PRIMARY KEY REFERENCES candidates(id),
    source          TEXT NOT NULL,          -- who labelled it (dataset, lab, model)
    external_id     TEXT,                   -- their id of the record, when given
    claimed_correct INTEGER,                -- 1 / 0 / NULL (no claim)
    claimed_speedup REAL,                   -- over PyTorch eager on their GPU; NULL: no claim
    file            TEXT NOT NULL,          -- the JSONL file and line it came from
    line            INTEGER NOT NULL,
    record_json     TEXT NOT NULL           -- the line as given, code and response left out
);

-- kcollect --problem-budget: the problem's clock (wall time of its samples together, since its
-- first turn) and its tokens at the end of each turn; solve rate at any smaller budget follows.
ALTER TABLE turns ADD COLUMN problem_elapsed_ms REAL;
ALTER TABLE turns ADD COLUMN problem_tokens INTEGER;

-- Every verification with the one before it of the same candidate, with timing noise terms.
CREATE VIEW v_verification_pairs AS
    WITH seq AS (
        SELECT v.id, v.candidate_id, v.verdict, v.flags, v.verifier_version, v.gpu_name,
               v.driver_version, tm.median_ms, tm.stdev_ms, tm.n, tm.speedup_eager,
               CASE WHEN v.verdict = 'correct' THEN 'correct'
                    WHEN v.verdict = 'mismatch' THEN 'incorrect'
                    WHEN v.verdict IN ('launch_error','runtime_error','timeout','unsafe') THEN 'runtime_fail'
                    WHEN v.verdict = 'compile_error' THEN 'compile_fail'
                    WHEN v.verdict IN ('extract_error','policy_violation') THEN 'format_fail'
                    ELSE v.verdict END AS class,
               lag(v.id) OVER w AS prev_id
        FROM verifications v
        LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings WHERE verification_id = v.id)
        WINDOW w AS (PARTITION BY v.candidate_id ORDER BY v.id))
    SELECT c.problem_id, b.candidate_id,
           a.id AS before_id, b.id AS after_id,
           a.verdict AS before_verdict, b.verdict AS after_verdict,
           a.class AS before_class, b.class AS after_class,
           a.flags AS before_flags, b.flags AS after_flags,
           a.median_ms AS before_ms, b.median_ms AS after_ms,
           a.speedup_eager AS before_speedup, b.speedup_eager AS after_speedup,
           a.verifier_version AS before_verifier, b.verifier_version AS after_verifier,
           a.gpu_name AS before_gpu, b.gpu_name AS after_gpu,
           a.driver_version AS before_driver, b.driver_version AS after_driver,
           -- 'compiled' (compile-only) against a verdict that implies a compile: a refinement
           (a.class = 'compiled') + (b.class = 'compiled') = 1 AND
               (CASE WHEN a.class = 'compiled' THEN b.class ELSE a.class END)
               IN ('correct','incorrect','runtime_fail') AS refinement,
           -- the speedup rule (docs/AUDIT.md): the medians differ by more than 3 standard errors
           -- of the difference (SE of a median = 1.2533 stdev / sqrt(n)) and by more than 2%
           a.median_ms IS NOT NULL AND b.median_ms IS NOT NULL AND
               (b.median_ms - a.median_ms) * (b.median_ms - a.median_ms) >
                   9 * 1.5708 * (coalesce(a.stdev_ms * a.stdev_ms / max(a.n, 1), 0) +
                                 coalesce(b.stdev_ms * b.stdev_ms / max(b.n, 1), 0)) AND
               abs(b.median_ms - a.median_ms) > 0.02 * min(a.median_ms, b.median_ms)
               AS speedup_changed
    FROM seq b JOIN seq a ON a.id = b.prev_id
    JOIN candidates c ON c.id = b.candidate_id;

-- A third-party claim against our latest verification: NULL where it cannot be checked yet.
CREATE VIEW v_claim_checks AS
    SELECT cl.candidate_id, c.problem_id, cl.source, cl.external_id, cl.claimed_correct,
           cl.claimed_speedup, v.id AS verification_id, v.verdict, tm.speedup_eager,
           CASE WHEN v.verdict IS NULL OR v.verdict = 'compiled' OR cl.claimed_correct IS NULL
                THEN NULL ELSE (v.verdict = 'correct') = (cl.claimed_correct <> 0) END
               AS correct_holds,
           CASE WHEN v.verdict IS NULL OR v.verdict = 'compiled' OR cl.claimed_speedup IS NULL
                THEN NULL
                WHEN v.verdict <> 'correct' OR tm.speedup_eager IS NULL THEN 0
                ELSE abs(tm.speedup_eager - cl.claimed_speedup) <= 0.10 * cl.claimed_speedup END
               AS speedup_holds
    FROM third_party_claims cl
    JOIN candidates c ON c.id = cl.candidate_id
    LEFT JOIN v_latest_verification v ON v.candidate_id = cl.candidate_id
    LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings WHERE verification_id = v.id);

-- Label flips: one row per change between consecutive verifications of a candidate (kind
-- verdict_class, verdict, flags, speedup) and per third-party claim our verifier does not
-- confirm (claim_correct, claim_speedup). `kcurate flips` prints the same rows.
CREATE VIEW v_label_flips AS
    SELECT problem_id, candidate_id, 'verdict_class' AS kind, before_class AS before,
           after_class AS after, before_id, after_id, before_verifier, after_verifier,
           before_gpu, after_gpu, before_verdict || ' -> ' || after_verdict AS detail
    FROM v_verification_pairs WHERE before_class <> after_class AND NOT refinement
    UNION ALL
    SELECT problem_id, candidate_id, 'verdict', before_verdict, after_verdict, before_id, after_id,
           before_verifier, after_verifier, before_gpu, after_gpu, NULL
    FROM v_verification_pairs WHERE before_class = after_class AND before_verdict <> after_verdict
    UNION ALL
    SELECT problem_id, candidate_id, 'flags', before_flags, after_flags, before_id, after_id,
           before_verifier, after_verifier, before_gpu, after_gpu,
           before_verdict || ' -> ' || after_verdict
    FROM v_verification_pairs
    WHERE before_flags <> after_flags AND before_class <> 'compiled' AND after_class <> 'compiled'
    UNION ALL
    SELECT problem_id, candidate_id, 'speedup', printf('%.4f ms', before_ms),
           printf('%.4f ms', after_ms), before_id, after_id, before_verifier, after_verifier,
           before_gpu, after_gpu,
           printf('eager speedup %.3fx -> %.3fx', before_speedup, after_speedup)
    FROM v_verification_pairs
    WHERE before_verdict = 'correct' AND after_verdict = 'correct' AND speedup_changed
    UNION ALL
    SELECT problem_id, candidate_id, 'claim_correct',
           CASE claimed_correct WHEN 0 THEN 'incorrect' ELSE 'correct' END, verdict, NULL,
           verification_id, 'claim: ' || source, NULL, NULL, NULL, external_id
    FROM v_claim_checks WHERE correct_holds = 0
    UNION ALL
    SELECT problem_id, candidate_id, 'claim_speedup', printf('%.3fx', claimed_speedup),
           CASE WHEN speedup_eager IS NULL THEN verdict ELSE printf('%.3fx', speedup_eager) END,
           NULL, verification_id, 'claim: ' || source, NULL, NULL, NULL, external_id
    FROM v_claim_checks WHERE speedup_holds = 0;

-- migration 9
-- (reserved: dataset formats, issue 14)

-- migration 10
-- kcollect --strategy mtmc (issue 27): the plan and the action each turn implements. A planning
-- turn (action 'plan', or 'revise' when a step could not be made correct) has no candidate and
-- keeps the plan it parsed as plan_json ([{"action","arg","text"}], NULL when the answer was not
-- a plan); a step turn keeps its action line ("tile 32 -- 32x32 output tiles") and its 1-based
-- step in the plan in force. All three are NULL for the default strategy (the loop). An mtmc
-- trajectory whose plan's last step succeeded ends with stop_reason 'plan_done'.
ALTER TABLE turns ADD COLUMN action TEXT;
ALTER TABLE turns ADD COLUMN step INTEGER;
ALTER TABLE turns ADD COLUMN plan_json TEXT;

-- migration 11
-- Sharded work (issue 26: Slurm job arrays, one task per GPU; common/shard.h). shard_plans: the
-- split a database is worked under, per tool. kcollect (one database per shard): this database
-- is shard shard_index of shard_count, and takes no other. kverify run (shards share one
-- database): shard_count while candidates are pending (shard_index NULL). by_problem: the unit
-- dealt out is the problem (kcollect --problem-budget), else the (problem, sample) trajectory.
-- A reverify pass records the shard count it is split into (NULL: unsharded).
CREATE TABLE shard_plans (
    tool            TEXT PRIMARY KEY,       -- 'kcollect' | 'kverify run'
    shard_index     INTEGER,
    shard_count     INTEGER NOT NULL,
    by_problem      INTEGER NOT NULL DEFAULT 0,
    recorded_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
) WITHOUT ROWID;
ALTER TABLE reverify_passes ADD COLUMN shard_count INTEGER;

-- migration 12
-- Race checks (issue 34, docs/INTEGRITY.md "Races"). A correct label whose launch unit uses
-- shared memory or cross-block communication (common/race_needs.h) gets compute-sanitizer
-- racecheck before kexport exports it as correct: inline (`kverify run --sanitizer all`, in the
-- verification's evidence) or deferred (`kverify racecheck --db`, one row here per check of
-- the verification it names). result: clean (no hazard: the label may be exported), hazard (a
-- new verification of the candidate, verdict 'unsafe', the report in its evidence under
-- "racecheck", is new_verification_id: every view, kcurate and kexport see the candidate as
-- unsafe from then on), error (no check: the tool could not run or ended otherwise, or the
-- candidate failed under it, which records a new verification 'timeout' or 'runtime_error'
-- like a hazard; without a new verification the same command tries again).
CREATE TABLE race_checks (
    id              INTEGER PRIMARY KEY,
    verification_id INTEGER NOT NULL REFERENCES verifications(id),   -- the correct label checked
    tool            TEXT NOT NULL,          -- 'compute-sanitizer racecheck'
    result          TEXT NOT NULL CHECK (result IN ('clean','hazard','error')),
    report          TEXT,                   -- the tool's report (bounded) or why there was no check
    new_verification_id INTEGER REFERENCES verifications(id),  -- the label it recorded, if any
    seed            TEXT,                   -- of the inputs (the checked verification's first seed)
    dims            TEXT NOT NULL DEFAULT 'small',
    duration_ms     REAL,                   -- the tool's run, its start-up included
    gpu_name        TEXT,
    verifier_version TEXT NOT NULL,
    checked_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now'))
);
CREATE INDEX race_checks_by_verification ON race_checks(verification_id);
