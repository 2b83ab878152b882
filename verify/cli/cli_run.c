/* cli_run: `kverify run` (verify every pending candidate and record the results; many
 * compiles in flight keep the GPU workers fed: cli_verify_common.c). */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char pending_sql[] =
    "SELECT id, problem_id, source_sha FROM candidates WHERE status = 'pending' AND "
    "source_sha IS NOT NULL ORDER BY problem_id, id LIMIT ?1";

static const kc_command run_cmd = {"kverify", "run", kverify_run_usage, 0};

int cli_run(int argc, char **argv)
{
    kv_options o;
    kv_options_default(&o);
    const char *db_path = NULL;
    kc_shard shard = {0};
    int limit = 0, threads = 0;
    /* the short letters are the ones this command has always taken */
    const kc_option opts[] = {
        KC_OPT_STR("db", 'd', &db_path),
        KC_OPT_FLAG("compile-only", 'c', &o.compile_only),
        KC_OPT_INTEGER("limit", 'l', &limit, 0, 1 << 30),
        KC_OPT_INTEGER("threads", 't', &threads, 0, 4096),
        KC_OPT_FLAG("no-timing", 'n', &o.no_timing),
        KC_OPT_FN("shard", 'N', cli_opt_shard, &shard, NULL),
        KC_OPT_FN("seeds", 0, cli_opt_seeds, &o, NULL),
        CLI_VERIFY_OPTIONS(&o),
        CLI_BATCH_OPTIONS(&o),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&run_cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("run needs --db PATH");
    sqlite3 *db = NULL;
    strbuf err = STRBUF_INIT;
    int status = 4;
    /* --shard: every process on this database uses the same count while any is pending */
    if (kc_db_open(db_path, KC_DB_EXISTING, &db, &err) || kc_shard_claim_verify(db, &shard, &err))
        error("%s", err.buf);
    else
        status = cli_verify_selected(db, &o, pending_sql, 0, limit, threads, "pending", &shard);
    kc_db_close(db);
    if (kc_interrupted())
        kc_interrupt_print_resume(stdout);
    sb_free(&err);
    return status;
}
