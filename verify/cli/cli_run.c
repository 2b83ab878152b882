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

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char pending_sql[] =
    "SELECT id, problem_id, source_sha FROM candidates WHERE status = 'pending' AND "
    "source_sha IS NOT NULL ORDER BY problem_id, id LIMIT ?1";

int cli_run(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"compile-only", no_argument, NULL, 'c'},
                                         {"limit", required_argument, NULL, 'l'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"no-timing", no_argument, NULL, 'n'},
                                         {"sanitizer", required_argument, NULL, 'S'},
                                         {"hidden", required_argument, NULL, 'H'},
                                         {"hidden-seed", required_argument, NULL, 'K'},
                                         {"shard", required_argument, NULL, 'N'},
                                         {"timing-noise", required_argument, NULL, 'T'},
                                         {NULL, 0, NULL, 0}};
    kv_options o;
    kv_options_default(&o);
    const char *db_path = NULL;
    kc_shard shard = {0};
    int limit = 0, threads = 0, c;
    optind = 1;
    while ((c = kc_getopt(argc, argv, "d:cl:t:nS:H:K:N:T:", opts)) != -1) {
        switch (c) {
        case 'N':
            if (cli_parse_shard(optarg, &shard))
                return 4;
            break;
        case 'd': db_path = optarg; break;
        case 'c': o.compile_only = 1; break;
        case 'l': limit = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'n': o.no_timing = 1; break;
        case 'H':
        case 'K':
        case 'S':
        case 'T':
            if (cli_parse_verify_option(c == 'H' ? "--hidden" : c == 'K' ? "--hidden-seed" :
                                        c == 'T' ? "--timing-noise" : "--sanitizer", optarg, &o))
                return 4;
            break;
        default: return 4;
        }
    }
    if (!db_path)
        return error("usage: kverify run --db PATH [--compile-only] [--limit N] [--sanitizer MODE] "
                     "[--shard I/N] [--timing-noise PCT]"), 4;
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
