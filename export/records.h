/* records: the context of one export (export_ctx: the database, the configuration, the shard
 * writer, the counts and caches) and what every record format shares (records_internal.h) to
 * build the records of a curated database, applying the filters, in a deterministic order, and
 * hand each to the shard writer; the formats are one file each (formats.h), and dispatch.c runs
 * the one asked for. The prompt of a record is the one its model saw: the system and
 * first user message of its trajectory's first recorded request; candidates without one
 * (imported) and rl prompts get the prompt kcollect builds (common/prompt_text.h). The
 * --system-prompt override replaces the system message. Every record carries an id (sha256 of its content) and its
 * provenance: problem, trajectory and turn, run, model and sampling, verifier, GPU, seeds and the
 * evidence behind its label. */
#ifndef KC_EXPORT_RECORDS_H
#define KC_EXPORT_RECORDS_H
#include "common/db.h"
#include "common/verdicts.h"
#include "export/config.h"
#include "export/shards.h"

/* The verdict classes of common/verdicts.c in their order, then "other" (EXPORT_N_CLASSES). */
#define EXPORT_N_CLASSES (KC_N_CLASSES + 1)

typedef struct export_counts {
    long records;
    long by_split[4];        /* train valid test heldout */
    long by_class[EXPORT_N_CLASSES]; /* verdict classes of the (chosen) candidate */
    long problems;
    double sum_speedup;      /* over records with a speedup */
    long with_speedup;
    /* each record counted once, when it is emitted (export_emit), by what it draws on: */
    long synthetic;          /* records drawing on a run whose answers a test server wrote */
    long several_runs;       /* records drawing on more than one run (rl: a problem's runs) */
    long without_run;        /* records drawing on no kcollect run (imported kernels) */
    long with_kernels;       /* records with a kernel's label behind them */
    long on_gpu;             /* ... of them with a kernel verified on a GPU (not compile-only) */
    long suspicious;         /* records with a kernel flagged suspicious */
} export_counts;

/* What the record being built draws on (export_note_run, export_note_kernel): counted once
 * into export_counts and the runs' record counts when it is emitted. */
typedef struct export_record_facts {
    int64_t *runs;
    int n_runs, cap;
    int kernels, on_gpu, suspicious;
} export_record_facts;

/* The reasoning the records carry (or, with --reasoning drop, would carry): records with some,
 * reasoning texts written, those cut, and the length of each in characters. */
typedef struct export_reasoning_stats {
    long records, texts, truncated;
    long *chars;
    size_t cap;
    int in_record; /* the record being built carries reasoning */
} export_reasoning_stats;

/* The last JSON text column converted (verifier evidence, a run's sampling settings). */
typedef struct export_json_cache {
    int valid, was_null, bad_utf8;
    strbuf in, out;
} export_json_cache;

/* A prompt: its system message (when any) and first user message, as texts and encoded as two
 * chat messages (with a null "reasoning_content" each when reasoning_key). */
typedef struct export_prompt {
    int valid, has_system, bad_utf8, reasoning_key;
    strbuf system, user, encoded;
} export_prompt;

typedef struct export_ctx {
    sqlite3 *db;
    const export_config *cfg;
    export_shards *shards;
    char db_uuid[64];
    export_counts counts;
    export_reasoning_stats reasoning_stats;
    /* caches */
    char **spec_problem, **spec_text;
    int n_specs;
    sqlite3_stmt *blob_stmt, *source_stmt, *response_stmt, *feedback_stmt, *first_request_stmt,
        *mtmc_stmt;
    strbuf scratch, blob, reasoning;
    /* the current problem's object, encoded */
    strbuf problem_part;
    int parts_ready, parts_bad_utf8;
    /* the current record's prompt; prompt_key says whose it is: a trajectory id, 0 for the
     * problem's own prompt (candidates without a trajectory), -1 for none; sent: the prompt of the
     * last request body parsed, as sent (before --system-prompt) */
    export_prompt prompt, sent;
    int64_t prompt_key;
    export_json_cache evidence_cache, sampling_cache;
    /* the runs the records drew on (ids, records of each, synthetic or not), for the manifest */
    int64_t *run_ids;
    long *run_records;
    int *run_synthetic;
    int n_runs;
    export_record_facts record; /* of the record being built */
    long stale_candidates; /* exported with --allow-stale: candidates whose labels are stale */
    long race_unchecked;   /* exported with --no-racecheck: correct labels without a race check */
    long skipped_bad_text; /* --skip-bad-text: candidates left out, their kernel not UTF-8 */
} export_ctx;

extern const char *const export_split_names[4];
const char *export_class_name(int i);

void export_ctx_free(export_ctx *x);

#endif
