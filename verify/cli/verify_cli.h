/* verify_cli: the kverify subcommands (cli_*.c), each taking argv from the
 * subcommand name on and returning the process exit status. */
#ifndef KC_VERIFY_CLI_H
#define KC_VERIFY_CLI_H
#include "common/shard.h"
#include "verify/service/verify.h"

int cli_check(int argc, char **argv, int compile_only_command);
int cli_problems(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_run(int argc, char **argv);
/* cli_serve.c: kverify serve, the HTTP reward service. */
int cli_serve(int argc, char **argv);
/* cli_reverify.c: kverify reverify. */
int cli_reverify(int argc, char **argv);
/* cli_racecheck.c: kverify racecheck (the deferred race check of correct labels). */
int cli_racecheck(int argc, char **argv);
/* cli_gpu.c: the exit status of a GPU subcommand on a machine without a usable GPU (gpus, dump,
 * racecheck). */
#define CLI_EXIT_NO_GPU 3
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
/* cli_shard.c: --shard I/N into s (0, or -1 with the error printed); whether candidate_id
 * falls in shard s (always when s is NULL or unsharded). shard may be NULL above too. */
int cli_parse_shard(const char *value, kc_shard *s);
int cli_shard_holds(sqlite3 *db, const kc_shard *s, int64_t candidate_id, const char *problem_id);
/* Parses "1,2,3" into o->seeds; returns -1 on a malformed list. */
int cli_parse_seeds(const char *list, kv_options *o);
/* Prints a human-readable report of a result. */
void cli_print_report(const problem *p, const kv_result *r);

/* --sanitizer MODE, --timing-noise PCT, --hidden N or --hidden-seed S into o (cli_check.c); 0 or
 * -1 with the error printed. */
int cli_parse_verify_option(const char *option, const char *value, kv_options *o);

#endif
