/* records_internal: what records.c shares with the formats, one file each (records_sft.c,
 * records_kernelbench.c, records_multiturn.c, records_rl.c, records_preference.c,
 * records_plan.c): the candidate query and its filters, a row's values, labels and provenance,
 * prompts, blobs and specs, emitting a record, and the counts. */
#ifndef KC_EXPORT_RECORDS_INTERNAL_H
#define KC_EXPORT_RECORDS_INTERNAL_H
#include "export/records.h"
#include "export/jsonw.h"
#include <jansson.h>

/* The columns every candidate-level query selects (records.c's CANDIDATE_COLUMNS), in order. */
enum {
    COL_ID, COL_PROBLEM, COL_LEVEL, COL_TITLE, COL_SPLIT, COL_TRAJ, COL_TURN, COL_SRC_SHA,
    COL_VERDICT, COL_FLAGS, COL_MESSAGE, COL_EVIDENCE, COL_SEEDS,
    COL_MAX_ABS, COL_MAX_REL, COL_REL_L2, COL_VERIFIER, COL_GPU, COL_DRIVER, COL_CUDA, COL_NVRTC,
    COL_MEDIAN, COL_EAGER, COL_COMPILE_MS, COL_SPEEDUP_E, COL_SPEEDUP_C, COL_TIMING_N, COL_CLASS,
    COL_CORRECT_ALT, COL_TIER_E, COL_TIER_C, COL_IMPROVED, COL_TRUNCATED, COL_SUSPICIOUS,
    COL_REASONING, COL_REWARD, COL_RETURN, COL_EXACT_REP, COL_NEAR_REP, COL_RUN_KEY, COL_MODEL,
    COL_RUN_CONFIG, COL_TOOL_VERSION, COL_ORIGIN, COL_RESPONSE, COL_RUN_ID, COL_SYNTHETIC,
    COL_SERVER, COL_ACTION, COL_PLAN, COL_REASONING_SHA, COL_REASONING_STATE
};

/* An answer's reasoning as exported: text NULL when the model gave none. */
typedef struct export_reasoning_text {
    const char *text;
    size_t len;
    int truncated; /* its state is 'truncated' */
} export_reasoning_text;

/* Which rows a --verdict list applies to. */
enum verdict_scope { VERDICTS_OF_ALL, VERDICTS_OF_REJECTED };

/* Called for each row of a problem, and after each problem (export_for_each_problem). */
typedef int (*row_fn)(export_ctx *x, sqlite3_stmt *st, void *arg, strbuf *err);
typedef int (*problem_done_fn)(export_ctx *x, void *arg, strbuf *err);

/* ---- a row's columns and values, labels, provenance and messages, written with jsonw ---- */
const char *export_col_text(sqlite3_stmt *st, int col);
int export_col_is_null(sqlite3_stmt *st, int col);
int export_split_index(const char *s);
int export_class_index(const char *s);
void export_put_text(jsonw *w, const char *key, sqlite3_stmt *st, int col);
void export_put_int(jsonw *w, const char *key, sqlite3_stmt *st, int col);
void export_put_json_column(jsonw *w, const char *key, sqlite3_stmt *st, int col,
                            export_json_cache *cache, const char *member);
/* The plan an mtmc turn implements (turns.plan_json of the planning turn before it: a list of
 * {"action", "arg", "text"}), re-encoded; null for the default strategy (and a plan that does not
 * parse, which kcollect never writes). */
void export_put_plan_text(jsonw *w, const char *plan);
/* Labels of a candidate row. */
void export_put_labels(jsonw *w, sqlite3_stmt *st);
/* A run's synthetic marker: "synthetic" (true when its answers came from a test server, not a
 * model) and "server" (that server's name, else ""; a string always, since a field null in every
 * record of a list of structs, as in multiturn turns, breaks pyarrow's loading). */
void export_put_synthetic(jsonw *w, sqlite3_stmt *st);
/* Remembers a run behind the record being built (the manifest lists them); a record counts
 * once for each run it draws on, however often it is noted. */
void export_note_run(export_ctx *x, int64_t run_id);
/* Remembers a kernel label behind the record being built: verified on a GPU (gpu: the
 * verification's GPU name, NULL or "" for compile-only), flagged suspicious or not. */
void export_note_kernel(export_ctx *x, const char *gpu, int suspicious);
int64_t export_row_run(sqlite3_stmt *st);
/* Where a candidate row comes from and the evidence behind its label. */
void export_put_provenance(export_ctx *x, jsonw *w, sqlite3_stmt *st);
/* A message of an exported conversation under --reasoning: with field, every message carries
 * "reasoning_content" (the reasoning, null where r is NULL or has no text); with think, an
 * assistant's content starts with "<think>\n" reasoning "\n</think>\n\n" (an answer that is
 * empty because its reasoning was cut keeps the open tag alone: what the model produced); with
 * drop, {role, content} only. r: the reasoning of an assistant message, NULL for the others. */
void export_put_turn_message(const export_ctx *x, jsonw *w, const char *role, const char *content,
                             size_t len, const export_reasoning_text *r);
/* An answer's content as export_put_turn_message writes it (the reasoning before it under think),
 * as text into out. */
void export_answer_text(const export_ctx *x, const char *content, size_t len,
                        const export_reasoning_text *r, strbuf *out);
/* The kernel as the assistant would answer it: one ```cuda block, escaped straight from the row,
 * with its turn's reasoning as export_put_turn_message puts it. */
void export_put_kernel_message(const export_ctx *x, jsonw *w, const char *src, size_t len,
                               const export_reasoning_text *r);
/* Reads the reasoning of the row's response (COL_REASONING_SHA, checked like every blob) into
 * x->reasoning; r->text is NULL when it has none. Valid until the next call. */
int export_row_reasoning(export_ctx *x, sqlite3_stmt *st, export_reasoning_text *r, strbuf *err);
/* The same for a response's reasoning blob sha (NULL: none) and state. */
int export_reasoning_of(export_ctx *x, const char *sha, const char *state,
                        export_reasoning_text *r, strbuf *err);
/* Counts a reasoning text written into the current record (nothing when r has none), and then
 * the record itself once emitted: the datasheet's share of records with reasoning, its median. */
void export_count_reasoning(export_ctx *x, const export_reasoning_text *r);
/* The same for a text of chars characters (< 0: none). */
void export_count_reasoning_chars(export_ctx *x, long chars, int truncated);
void export_count_reasoning_record(export_ctx *x);
/* Characters (Unicode code points) of UTF-8 text. */
long export_utf8_chars(const char *s, size_t len);

/* ---- blobs, specs, prompts and the per-problem parts ---- */
/* Reads a blob by sha, checking that it exists and hashes to its name. */
int export_get_blob(export_ctx *x, const char *sha, strbuf *out, strbuf *err);
/* The problem's spec as kcollect shows it (cached). */
const char *export_problem_spec(export_ctx *x, const char *problem_id, strbuf *err);
/* The system message of the prompts kexport builds (--system-prompt or kcollect's). */
const char *export_built_system(const export_ctx *x);
/* Makes x->prompt the prompt of the row's record: per trajectory for collected candidates,
 * per problem for the others (imported ones). */
int export_row_prompt(export_ctx *x, sqlite3_stmt *st, strbuf *err);
/* Encodes the problem object of the row's problem, once per problem. */
void export_problem_parts(export_ctx *x, sqlite3_stmt *st);
int export_row_source(export_ctx *x, sqlite3_stmt *st, const char **src, size_t *len, strbuf *err);

/* ---- records: open, emit, count ---- */
void export_count_record(export_ctx *x, sqlite3_stmt *st);
/* Opens a record's object with the keys every format starts with: format, split, problem (the
 * problem part is JSON already). */
void export_open_record(export_ctx *x, jsonw *w, const char *format, const char *split,
                        const strbuf *problem_json);
/* Puts the content id (sha256 of the body) first and writes the line to its split's shard. */
int export_emit(export_ctx *x, const char *split, const jsonw *w, const char *what, strbuf *err);
/* Emits a jansson record (taken over) to its split's shard with its content id. */
int export_emit_json(export_ctx *x, const char *split, json_t *record, strbuf *err);

/* ---- the candidate query, its filters, and one query per problem ---- */
int export_no_filter(const char *list);
/* Appends " AND col IN (?,...)" for a comma list ('any' or empty: nothing) and its binds. */
void export_add_in_filter(strbuf *where, const char *col, const char *list, char ***binds, int *n);
/* --run and --model: only candidates of those runs (and of runs of those models). */
void export_run_filter(const export_config *c, strbuf *where, char ***binds, int *n);
/* The same for a subquery over candidates c (rl): " AND c.id IN (candidates of those runs)". */
void export_candidate_run_filter(const export_config *c, strbuf *where, char ***binds, int *n);
/* Prepares sql and binds the values from parameter first on (frees binds). */
sqlite3_stmt *export_prepare_with_binds(export_ctx *x, const char *sql, char **binds, int n,
                                        int first, strbuf *err);
/* The candidate query of one problem (parameter 1): columns, joins, filters, then more (extra
 * conditions and the ORDER BY within the problem). */
sqlite3_stmt *export_candidate_query(export_ctx *x, const char *verdicts, enum verdict_scope scope,
                                     int dedup, const char *more, strbuf *err);
/* Runs the candidate query once per exported problem, in output order (split, problem id),
 * calling row for each row and done after each problem. */
int export_for_each_problem(export_ctx *x, sqlite3_stmt *cand, row_fn row, problem_done_fn done,
                            void *arg, strbuf *err);

#endif
