/* record: kcollect's rows in the database. Runs (found again by their run
 * key), trajectories, the response cache (each response stored the moment it
 * arrives, before it is verified), and turns. Callers serialise access to the
 * connection and own the per-turn transaction. */
#ifndef KC_RECORD_H
#define KC_RECORD_H
#include "collect/llm.h"
#include "collect/prompt.h"
#include "common/db.h"
#include <stdint.h>

/* What a run is: its key (sha256 of identity_json), its settings and where its answers come
 * from (server: the synthetic server's name, or NULL for a real endpoint). */
typedef struct run_record {
    const char *run_key, *identity_json, *config_json, *model, *endpoint, *api, *server;
} run_record;

/* Finds the run with this identity or creates it; *resumed says which. A run recorded before
 * identities were stored (identity_json NULL) is found by the identity of its config_json and
 * gets the key and identity now. Sets the status back to running. */
int rec_run_open(sqlite3 *db, const run_record *r, int64_t *run_id, int *resumed, strbuf *err);
/* The newest other kcollect run (id and identity_json, or 0 and ""), for saying why a run is new. */
int64_t rec_run_previous(sqlite3 *db, int64_t run_id, strbuf *identity);
int rec_run_close(sqlite3 *db, int64_t run_id, const char *status, strbuf *err);

typedef struct trajectory_state {
    int64_t id;
    int done;          /* status done */
    int n_turns;
    turn_history *turns; /* n_turns, oldest first */
    long tokens;       /* in + out over its turns */
    double wall_ms;    /* over its turns */
    int any_correct;
    double best_speedup;
} trajectory_state;

/* Finds or creates the trajectory (run, problem, sample) and loads its turns. */
int rec_trajectory_load(sqlite3 *db, int64_t run_id, const char *problem_id, int sample,
                        trajectory_state *t, strbuf *err);
void trajectory_state_free(trajectory_state *t);
int rec_trajectory_finish(sqlite3 *db, int64_t traj_id, const char *stop_reason, strbuf *err);

/* Response cache: 1 and the response id when the hash is cached, 0 when not. */
int rec_cache_lookup(sqlite3 *db, const char *request_hash, int64_t *response_id, strbuf *err);
/* Loads a stored response into r (content, reasoning, finish, tokens). */
int rec_response_load(sqlite3 *db, int64_t response_id, llm_reply *r, strbuf *err);
/* 1 when a turn already points at the response. */
int rec_response_used(sqlite3 *db, int64_t response_id);

typedef struct response_record {
    const char *request_hash;
    const char *endpoint;   /* URL or 'bundled-fake-llm'; never a key */
    const char *api;
    const char *model;
    const char *body;       /* as sent, minus secrets (keys only ever go in headers) */
    const llm_reply *reply;
    double cost_usd;
    int from_cache;
} response_record;

/* Stores request, response and cache entry in one transaction (its own). */
int rec_store_response(sqlite3 *db, const response_record *rr, int64_t *request_id,
                       int64_t *response_id, strbuf *err);
/* The request id a response answers. */
int64_t rec_response_request(sqlite3 *db, int64_t response_id);

/* A candidate row for an answer (origin 'turn'); kv_record fills the rest. */
int rec_candidate(sqlite3 *db, const char *problem_id, const char *source,
                  const char *extract_error, int64_t *candidate_id, strbuf *err);

typedef struct turn_record {
    int64_t trajectory_id;
    int turn_index;
    const char *prompt;
    int64_t request_id, response_id, candidate_id;
    const char *feedback;
    long tokens_in, tokens_out;
    double latency_ms, cost_usd, wall_ms;
    const char *started_at;
    const char *action, *plan_json; /* mtmc (migration 10); NULL for the loop */
    int step;                       /* mtmc step turns; 0: NULL */
} turn_record;

/* candidate_id 0 (an mtmc planning turn) is recorded as NULL. */
int rec_turn(sqlite3 *db, const turn_record *t, strbuf *err);

/* An answer's bytes as received (already redacted), committed in their own transaction the
 * moment the answer has arrived, before anything else is done with it. */
int rec_answer_received(sqlite3 *db, const char *request_hash, const char *endpoint,
                        const char *api, int stream, const strbuf *raw, strbuf *err);
/* Forgets it once its response is stored (the blob too when no response keeps it: a capped
 * answer's full bytes). */
int rec_answer_received_drop(sqlite3 *db, const char *request_hash, strbuf *err);
/* 1 with the answer committed under this request hash by rec_answer_received, 0 when none. */
int rec_answer_received_load(sqlite3 *db, const char *request_hash, strbuf *endpoint,
                             enum llm_api *api, int *stream, strbuf *raw, strbuf *err);

#endif
