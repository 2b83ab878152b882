/* loop: the closed loop in bulk. A trajectory is (problem, sample); its turns
 * are prompt -> response -> candidate -> verification -> feedback. Worker
 * threads (--concurrency) take trajectories from a queue; each turn is
 * recorded in one transaction after its response was stored (and cached) the
 * moment it arrived, so kill -9 at any point and the same command again
 * finishes the run with no turn lost or duplicated and no request paid twice. */
#ifndef KC_LOOP_H
#define KC_LOOP_H
#include "collect/config.h"
#include "common/db.h"
#include "common/shard.h"
#include <signal.h>
#include <stdio.h>

typedef struct collect_summary {
    /* problems: those this command works on (a shard's: --shard I/N), of problems_selected */
    int problems, problems_selected;
    kc_shard shard; /* --shard I/N (count 0: unsharded) */
    int trajectories, trajectories_done, trajectories_failed, trajectories_errored;
    int problems_solved, trajectories_solved;
    long turns, turns_cached, requests_sent;
    long tokens_in, tokens_out, tokens_reasoning;
    double cost_usd;
    double wall_s, llm_s, verify_s, record_s, overhead_s;
    double best_speedup;
    int fatal;        /* a run-fatal LLM error (auth, quota, model) stopped the run */
    int interrupted;  /* a signal stopped the run */
    int compile_only; /* solved means compiled (never run on a GPU): the summary says so */
} collect_summary;

/* Runs the whole collection described by cfg (already finished by
 * config_finish) against the database at cfg->db_path. endpoint_label is what
 * the runs table names the endpoint ('bundled-fake-llm' or the URL); urls are
 * the endpoints actually contacted. Returns 0 when every trajectory is done. */
int collect_run(const collect_config *cfg, const char *endpoint_label, char **urls, int n_urls,
                volatile sig_atomic_t *cancel, collect_summary *sum, strbuf *err);

/* Prints the system prompt and the first problem's first request (--dry-run). */
int collect_dry_run(const collect_config *cfg, strbuf *out, strbuf *err);
/* What can fail before anything starts (the bundled server included): the problem selector
 * matches, the NVIDIA driver is there unless --compile-only, and the database is a kcorpus one
 * (or can be created: its directory is writable). */
int collect_preflight(const collect_config *cfg, strbuf *err);

void collect_summary_print(const collect_summary *s, FILE *out);

#endif
