/* shard: which trajectories a shard of N holds, and the split a database records
 * (see shard.h). */
#include "common/shard.h"
#include "common/db.h"
#include "common/error.h"
#include "common/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define KC_SHARD_MAX 100000

static int parse_count(const char *s, const char *end, long *out)
{
    if (s == end || end - s > 6)
        return -1;
    long v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

int kc_shard_parse(const char *text, kc_shard *s, strbuf *err)
{
    const char *slash = strchr(text, '/');
    long i = 0, n = 0;
    if (!slash || parse_count(text, slash, &i) || parse_count(slash + 1, slash + strlen(slash), &n))
        return kc_fail(err, "'%s' is not a shard: give I/N, shard I (from 0) of N", text);
    if (n < 1 || n > KC_SHARD_MAX || i >= n)
        return kc_fail(err, "'%s': a shard I/N needs 0 <= I < N and 1 <= N <= %d", text,
                       KC_SHARD_MAX);
    s->index = (int)i;
    s->count = (int)n;
    return 0;
}

int kc_shard_of(const char *problem_id, long sample, int count, int by_problem)
{
    if (count <= 1)
        return 0;
    strbuf key = STRBUF_INIT;
    if (by_problem)
        sb_adds(&key, problem_id);
    else
        sb_addf(&key, "%s#%ld", problem_id, sample);
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(key.buf, key.len, hex);
    sb_free(&key);
    hex[16] = '\0';
    return (int)(strtoull(hex, NULL, 16) % (unsigned long long)count);
}

int kc_shard_holds(const kc_shard *s, const char *problem_id, long sample)
{
    return s->count == 0 || kc_shard_of(problem_id, sample, s->count, s->by_problem) == s->index;
}

void kc_shard_describe(const kc_shard *s, strbuf *out)
{
    if (s->count == 0)
        sb_adds(out, "unsharded");
    else
        sb_addf(out, "%d/%d%s", s->index, s->count, s->by_problem ? " by problem" : "");
}

/* The plan recorded for tool: 1 and *rec filled, 0 when none, -1 on a database error. */
static int read_plan(sqlite3 *db, const char *tool, kc_shard *rec, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT coalesce(shard_index, -1), shard_count, "
                                         "by_problem FROM shard_plans WHERE tool = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, tool, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        *rec = (kc_shard){sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
                          sqlite3_column_int(st, 2)};
    sqlite3_finalize(st);
    return found;
}

static int write_plan(sqlite3 *db, const char *tool, const kc_shard *s, int with_index, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "INSERT OR REPLACE INTO shard_plans(tool, shard_index, "
                                         "shard_count, by_problem) VALUES (?, ?, ?, ?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, tool, -1, SQLITE_STATIC);
    if (with_index)
        sqlite3_bind_int(st, 2, s->index);
    sqlite3_bind_int(st, 3, s->count);
    sqlite3_bind_int(st, 4, s->by_problem);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

static int collect_check(sqlite3 *db, const kc_shard *s, strbuf *err)
{
    kc_shard rec;
    int found = read_plan(db, "kcollect", &rec, err);
    if (found < 0)
        return -1;
    strbuf want = STRBUF_INIT, have = STRBUF_INIT;
    kc_shard_describe(s, &want);
    int rc = 0;
    if (found) {
        kc_shard_describe(&rec, &have);
        if (rec.index != s->index || rec.count != s->count || rec.by_problem != s->by_problem)
            rc = kc_fail(err, "this database holds shard %s of a sharded collection, not %s: "
                              "resume it with --shard %d/%d (a shard's database takes only its "
                              "own shard; a different count would split the work differently)",
                         have.buf, want.buf, rec.index, rec.count);
    } else if (s->count) {
        if (kc_db_query_int(db, "SELECT count(*) FROM trajectories") > 0)
            rc = kc_fail(err, "this database holds an unsharded collection: --shard %s needs a "
                              "database of its own", want.buf);
        else
            rc = write_plan(db, "kcollect", s, 1, err);
    }
    sb_free(&want), sb_free(&have);
    return rc;
}

int kc_shard_claim_collect(sqlite3 *db, const kc_shard *s, strbuf *err)
{
    if (kc_db_begin(db, err))
        return -1;
    int rc = collect_check(db, s, err);
    if (rc == 0)
        return kc_db_commit(db, err);
    kc_db_rollback(db);
    return -1;
}

static int verify_check(sqlite3 *db, const kc_shard *s, strbuf *err)
{
    kc_shard rec;
    int found = read_plan(db, "kverify run", &rec, err);
    if (found < 0)
        return -1;
    long long pending = kc_db_query_int(db, "SELECT count(*) FROM candidates WHERE status = "
                                            "'pending' AND source_sha IS NOT NULL");
    if (found && pending > 0 && rec.count != s->count)
        return kc_fail(err, "%lld candidates are pending under a split into %d shards: run "
                            "kverify run with --shard I/%d (each I from 0 to %d) until none "
                            "is pending", pending, rec.count, rec.count, rec.count - 1);
    if (found && pending == 0 && kc_db_exec(db, "DELETE FROM shard_plans WHERE tool = "
                                                "'kverify run'", err))
        return -1;
    if (s->count && (!found || pending == 0))
        return write_plan(db, "kverify run", s, 0, err);
    return 0;
}

int kc_shard_claim_verify(sqlite3 *db, const kc_shard *s, strbuf *err)
{
    if (kc_db_begin(db, err))
        return -1;
    int rc = verify_check(db, s, err);
    if (rc == 0)
        return kc_db_commit(db, err);
    kc_db_rollback(db);
    return -1;
}

static int pass_check(sqlite3 *db, int64_t pass, const kc_shard *s, strbuf *err)
{
    strbuf q = STRBUF_INIT;
    sb_addf(&q, "SELECT coalesce(shard_count, 0) FROM reverify_passes WHERE id = %lld",
            (long long)pass);
    long long recorded = kc_db_query_int(db, q.buf);
    sb_reset(&q);
    sb_addf(&q, "SELECT count(*) FROM verifications WHERE reverify_pass = %lld", (long long)pass);
    long long done = kc_db_query_int(db, q.buf);
    sb_reset(&q);
    int rc = 0;
    if (recorded == s->count)
        rc = 0;
    else if (recorded == 0 && done == 0) {
        sb_addf(&q, "UPDATE reverify_passes SET shard_count = %d WHERE id = %lld", s->count,
                (long long)pass);
        rc = kc_db_exec(db, q.buf, err);
    } else if (recorded == 0)
        rc = kc_fail(err, "reverify pass %lld started unsharded (%lld candidates re-verified): "
                          "resume it without --shard", (long long)pass, done);
    else
        rc = kc_fail(err, "reverify pass %lld is split into %lld shards: resume it with --shard "
                          "I/%lld", (long long)pass, recorded, recorded);
    sb_free(&q);
    return rc;
}

int kc_shard_claim_pass(sqlite3 *db, int64_t pass, const kc_shard *s, strbuf *err)
{
    if (kc_db_begin(db, err))
        return -1;
    int rc = pass_check(db, pass, s, err);
    if (rc == 0)
        return kc_db_commit(db, err);
    kc_db_rollback(db);
    return -1;
}
