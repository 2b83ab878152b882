/* cli_shard: `kverify run|reverify --shard I/N` (common/shard.h): parsing the option and
 * whether a stored candidate falls in the shard. A candidate of a kcollect turn is dealt out
 * with its trajectory (problem, sample), as kcollect --shard deals it; one without a trajectory
 * (imported) as (problem, -1 - its candidate id), which is fixed for the database. */
#include "common/error.h"
#include "verify/cli/verify_cli.h"

int cli_opt_shard(const kc_option *opt, const char *value, strbuf *err)
{
    strbuf why = STRBUF_INIT;
    int rc = kc_shard_parse(value, opt->dest, &why);
    char name[64];
    if (rc)
        kc_fail(err, "%s: %s", kc_option_name(opt, name, sizeof name), why.buf);
    sb_free(&why);
    return rc;
}

static long candidate_sample(sqlite3 *db, int64_t candidate_id)
{
    sqlite3_stmt *st = NULL;
    long sample = -1 - (long)candidate_id;
    if (sqlite3_prepare_v2(db, "SELECT tr.sample_index FROM turns t JOIN trajectories tr ON "
                               "tr.id = t.trajectory_id WHERE t.candidate_id = ? LIMIT 1", -1,
                           &st, NULL) != SQLITE_OK)
        return sample;
    sqlite3_bind_int64(st, 1, candidate_id);
    if (sqlite3_step(st) == SQLITE_ROW)
        sample = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return sample;
}

int cli_shard_holds(sqlite3 *db, const kc_shard *s, int64_t candidate_id, const char *problem_id)
{
    if (!s || s->count == 0)
        return 1;
    return kc_shard_holds(s, problem_id, candidate_sample(db, candidate_id));
}
