/* verify_cli: the kverify subcommands (cli_*.c), each taking argv from the
 * subcommand name on and returning the process exit status. */
#ifndef KC_VERIFY_CLI_H
#define KC_VERIFY_CLI_H
#include "common/cli.h"
#include "common/shard.h"
#include "verify/service/verify.h"

/* cli_usage.c: kverify's help, the whole and each command's. */
extern const char kverify_usage[], kverify_check_usage[], kverify_compile_usage[],
    kverify_problems_usage[], kverify_dump_usage[], kverify_import_usage[], kverify_run_usage[],
    kverify_reverify_usage[], kverify_gpus_usage[], kverify_warm_usage[];

int cli_check(int argc, char **argv, int compile_only_command);
int cli_problems(int argc, char **argv);
/* cli_warm.c: kverify warm (the references into the cubin cache). */
int cli_warm(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_run(int argc, char **argv);
/* cli_serve.c: kverify serve, the HTTP reward service. */
int cli_serve(int argc, char **argv);
/* cli_reverify.c: kverify reverify. */
int cli_reverify(int argc, char **argv);
/* cli_racecheck.c: kverify racecheck (the deferred race check of correct labels). */
int cli_racecheck(int argc, char **argv);
/* cli_gpu.c: the exit status of gpus and racecheck on a machine without a usable GPU (dump, which
 * makes files, reports it as the system error it is: 4). */
#define CLI_EXIT_NO_GPU KC_EXIT_KVERIFY_NO_GPU
/* cli_gpu.c: kverify gpus and kverify dump: their options checked here, then kverify-gpu run. */
int cli_gpus(int argc, char **argv);
int cli_dump(int argc, char **argv);
/* 0 when the NVIDIA driver loads; else prints the one "no NVIDIA driver found" message and
 * returns CLI_EXIT_NO_GPU. */
int cli_gpu_driver_check(void);
/* The names of the visible GPUs (kverify-gpu gpus), at most max; returns how many. */
int cli_gpu_names(char names[][128], int max);
/* cli_import.c: import --jsonl (third-party kernels with claimed labels). */
int cli_import_jsonl(const char *db_path, const char *file, const char *default_source);
/* cli_verify_common.c: verifies the candidates sql selects (columns id, problem_id, source_sha; ?1 is bound to the
 * limit, ?2 to pass_id) with many in flight, recording each result; a pass_id > 0 tags the new
 * verifications as that reverify pass's. Returns the exit status (0, 1 some failed, 4, or 130
 * when interrupted: what was not verified stays as it was). A shard (not NULL) keeps only
 * its own candidates (cli_shard.c); limit counts those. */
int cli_verify_selected(sqlite3 *db, kv_options *o, const char *sql, int64_t pass_id, int limit,
                        int threads, const char *what, const kc_shard *shard);
/* cli_shard.c: the option --shard I/N into opt->dest (a kc_shard); whether candidate_id
 * falls in shard s (always when s is NULL or unsharded). shard may be NULL above too. */
int cli_opt_shard(const kc_option *opt, const char *value, strbuf *err);
int cli_shard_holds(sqlite3 *db, const kc_shard *s, int64_t candidate_id, const char *problem_id);
/* Parses "1,2,3" into o->seeds; returns -1 on a malformed list. */
int cli_parse_seeds(const char *list, kv_options *o);
/* Prints a human-readable report of a result. */
void cli_print_report(const problem *p, const kv_result *r);

/* Option callbacks of check, run and serve (cli_check.c; opt->dest: the kv_options, for --seeds
 * too): --seeds S1,S2,.., --timing-noise PCT, --sanitizer MODE, --hidden-seed S. */
int cli_opt_seeds(const kc_option *opt, const char *value, strbuf *err);
int cli_opt_timing_noise(const kc_option *opt, const char *value, strbuf *err);
int cli_opt_sanitizer(const kc_option *opt, const char *value, strbuf *err);
int cli_opt_hidden_seed(const kc_option *opt, const char *value, strbuf *err);
/* --batch-memory MIB into kv_options.batch_bytes (0 to 1048576). */
int cli_opt_batch_memory(const kc_option *opt, const char *value, strbuf *err);
/* The verification options check, run and serve share (o: a kv_options *): --sanitizer
 * none|memcheck|all, --timing-noise PCT, --hidden N (dims sets drawn per verification, 0..8) and
 * --hidden-seed S (the draws' seed). */
#define CLI_VERIFY_OPTIONS(o)                                          \
    KC_OPT_FN("sanitizer", 0, cli_opt_sanitizer, (o), NULL),            \
    KC_OPT_FN("timing-noise", 0, cli_opt_timing_noise, (o), NULL),      \
    KC_OPT_INTEGER("hidden", 0, &(o)->n_hidden, 0, KV_MAX_HIDDEN),      \
    KC_OPT_FN("hidden-seed", 0, cli_opt_hidden_seed, (o), NULL)
/* The options of the commands that verify batches (run, reverify, serve; issue 37): --batch N
 * (at most N candidates of one problem share seeds, dims sets and reference runs; 1: none) and
 * --batch-memory MIB (what a GPU worker keeps of the batches' reference outputs). */
#define CLI_BATCH_OPTIONS(o)                                           \
    KC_OPT_INTEGER("batch", 0, &(o)->batch_max, 1, 1024),               \
    KC_OPT_FN("batch-memory", 0, cli_opt_batch_memory, (o), NULL)

#endif
