/* merge: idempotent merge of kcorpus databases through ATTACH and the merge_map table. */
#include "curate/merge.h"
#include "common/error.h"
#include "curate/db_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tables copied row by row, parents first, with their foreign keys. */
typedef struct fk {
    const char *column, *table;
} fk;
typedef struct table_plan {
    const char *name;
    fk fks[4];
} table_plan;

static const table_plan plans[] = {
    {"runs", {{0}}},
    {"trajectories", {{"run_id", "runs"}}},
    {"requests", {{0}}},
    {"responses", {{"request_id", "requests"}}},
    {"candidates", {{0}}},
    {"turns", {{"trajectory_id", "trajectories"}, {"request_id", "requests"},
               {"response_id", "responses"}, {"candidate_id", "candidates"}}},
    {"compiles", {{"candidate_id", "candidates"}}},
    {"verifications", {{"candidate_id", "candidates"}}},
    {"timings", {{"verification_id", "verifications"}}},
    {"race_checks", {{"verification_id", "verifications"},
                     {"new_verification_id", "verifications"}}},
};

typedef struct merger {
    sqlite3 *db;
    strbuf src_uuid, dst_uuid;
    sqlite3_stmt *src_origin, *dst_lookup, *remember, *map_put;
    sqlite3_stmt *pre_lookup, *apart_lookup; /* the same run collected twice (below) */
    sqlite3_stmt *copy_apart;                /* a trajectory kept apart, into its run (?2) */
    curate_merge_counts *counts;
} merger;

int curate_db_uuid(sqlite3 *db, const char *schema, strbuf *out, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT value FROM %s.db_info WHERE key = 'uuid'", schema);
    sqlite3_stmt *st = kc_db_prepare(db, sql.buf, err);
    sb_free(&sql);
    if (!st)
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : kc_fail(err, "database has no identity (db_info)");
    const char *uuid = rc ? NULL : (const char *)sqlite3_column_text(st, 0);
    if (!rc && (sqlite3_column_type(st, 0) != SQLITE_TEXT || !uuid || !*uuid))
        rc = kc_fail(err, "database has no identity (table db_info row 'uuid' has no text value)");
    if (!rc) {
        sb_reset(out);
        sb_adds(out, uuid);
    }
    sqlite3_finalize(st);
    return rc;
}

static int step_done(merger *m, sqlite3_stmt *st, strbuf *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(m->db));
}

/* The SELECT that reads one source row with its foreign keys translated to destination ids;
 * bound_col (NULL: none) takes parameter 2 instead (a trajectory kept apart: its run; the run
 * that keeps it: its key). */
static int build_copy_sql(merger *m, const table_plan *t, const char *bound_col, strbuf *sql,
                          strbuf *err)
{
    strbuf cols = STRBUF_INIT, vals = STRBUF_INIT, q = STRBUF_INIT;
    sb_addf(&q, "PRAGMA main.table_info(%s)", t->name);
    sqlite3_stmt *st = kc_db_prepare(m->db, q.buf, err);
    sb_free(&q);
    if (!st)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 1);
        if (!strcmp(c, "id"))
            continue;
        const char *ref = NULL;
        for (int i = 0; i < 4 && t->fks[i].column; i++)
            if (!strcmp(t->fks[i].column, c))
                ref = t->fks[i].table;
        sb_addf(&cols, "%s%s", cols.len ? ", " : "", c);
        if (bound_col && !strcmp(c, bound_col))
            sb_addf(&vals, "%s?2", vals.len ? ", " : "");
        else if (ref)
            sb_addf(&vals, "%s(SELECT dst_id FROM temp.merge_ids WHERE tbl = '%s' AND src_id = s.%s)",
                    vals.len ? ", " : "", ref, c);
        else
            sb_addf(&vals, "%ss.%s", vals.len ? ", " : "", c);
    }
    sqlite3_finalize(st);
    sb_reset(sql);
    sb_addf(sql, "INSERT INTO main.%s (%s) SELECT %s FROM src.%s s WHERE s.id = ?1", t->name,
            cols.buf, vals.buf, t->name);
    sb_free(&cols);
    sb_free(&vals);
    return 0;
}

/* Where a source row was born: the source's own merge_map, else the source itself. */
static int origin_of(merger *m, const char *tbl, sqlite3_int64 id, strbuf *uuid,
                     sqlite3_int64 *origin_id, strbuf *err)
{
    sqlite3_bind_text(m->src_origin, 1, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(m->src_origin, 2, id);
    sb_reset(uuid);
    int rc = 0;
    if (sqlite3_step(m->src_origin) == SQLITE_ROW) {
        const char *origin = (const char *)sqlite3_column_text(m->src_origin, 0);
        if (sqlite3_column_type(m->src_origin, 0) != SQLITE_TEXT || !origin || !*origin ||
            sqlite3_column_type(m->src_origin, 1) != SQLITE_INTEGER)
            rc = kc_fail(err, "table merge_map row (tbl '%s', local_id %lld): no origin_uuid or "
                              "origin_id", tbl, (long long)id);
        else
            sb_adds(uuid, origin), *origin_id = sqlite3_column_int64(m->src_origin, 1);
    } else {
        sb_adds(uuid, m->src_uuid.buf);
        *origin_id = id;
    }
    sqlite3_reset(m->src_origin);
    return rc;
}

/* Whether the destination knows a row born elsewhere: *id its destination id, or 0 for a row
 * merged before and deliberately not copied (the destination has its own: a trajectory collected
 * twice with the same content). */
static int known_as(merger *m, const char *tbl, const char *uuid, sqlite3_int64 oid,
                    sqlite3_int64 *id)
{
    *id = 0;
    if (!strcmp(uuid, m->dst_uuid.buf)) {
        *id = oid;
        return 1;
    }
    sqlite3_bind_text(m->dst_lookup, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(m->dst_lookup, 2, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(m->dst_lookup, 3, oid);
    int known = sqlite3_step(m->dst_lookup) == SQLITE_ROW;
    if (known)
        *id = sqlite3_column_int64(m->dst_lookup, 0);
    sqlite3_reset(m->dst_lookup);
    return known;
}

/* A run with the same run_key already in the destination is the same run (resumed elsewhere). */
static sqlite3_int64 same_run(merger *m, sqlite3_int64 src_id)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(m->db, "SELECT d.id FROM main.runs d JOIN src.runs s ON s.run_key = d.run_key"
                              " WHERE s.id = ?", -1, &st, NULL);
    sqlite3_bind_int64(st, 1, src_id);
    sqlite3_int64 id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return id;
}

/* ---- the same run collected twice ----
 * Two databases that ran the same collection (the same run identity: the same command on two
 * machines) hold the same trajectories, (run, problem, sample), each collected twice. A source
 * trajectory the destination has under the same run, problem and sample, born apart from it (no
 * merge_map says it is the destination's), is compared by content: its turns in order (prompt,
 * answer, reasoning, kernel, action, latest verdict) and its status. The same content is the
 * same trajectory: it and its turns, requests, responses and candidates are the destination's,
 * and the source's compiles, verifications, timings and race checks of those candidates are not
 * copied (the destination has its own): merging is idempotent. Other content is another sample
 * of the same problem under the same settings: it is kept apart, in a run of its own whose
 * identity is the run's plus "collected_again" (the run key and the source database), so both
 * answers stay, labelled, and `kexport --run` can keep them apart. */

/* A trajectory's content in schema S as one text (NULL when it has no turn). */
static void content_sql(strbuf *sql, const char *S, const char *traj)
{
    sb_addf(sql, "(SELECT group_concat(x, '|') FROM (SELECT t.turn_index || ':' ||"
                 " coalesce(t.prompt_sha, '') || ':' || coalesce(r.content_sha, '') || ':' ||"
                 " coalesce(r.reasoning_sha, '') || ':' || coalesce(c.source_sha, '') || ':' ||"
                 " coalesce(t.action, '') || ':' || coalesce((SELECT v.verdict FROM %s.verifications v"
                 " WHERE v.candidate_id = c.id ORDER BY v.id DESC LIMIT 1), '') AS x FROM %s.turns t"
                 " LEFT JOIN %s.responses r ON r.id = t.response_id LEFT JOIN %s.candidates c ON"
                 " c.id = t.candidate_id WHERE t.trajectory_id = %s ORDER BY t.turn_index))"
                 " || (SELECT '#' || status || ':' || coalesce(stop_reason, '') FROM %s.trajectories"
                 " WHERE id = %s)", S, S, S, S, traj, S, traj);
}

/* temp.merge_twice: the source trajectories collected twice (same: the same content). */
static int find_twice(merger *m, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    sb_adds(&sql, "INSERT INTO temp.merge_twice SELECT s.id, d.id, s.run_id, ");
    content_sql(&sql, "src", "s.id");
    sb_adds(&sql, " IS ");
    content_sql(&sql, "main", "d.id");
    sb_adds(&sql, " FROM src.trajectories s JOIN src.runs sr ON sr.id = s.run_id"
                  " JOIN main.runs dr ON dr.run_key = sr.run_key JOIN main.trajectories d ON"
                  " d.run_id = dr.id AND d.problem_id = s.problem_id AND d.sample_index = s.sample_index"
                  /* born apart: neither the destination's own row nor one merged before */
                  " WHERE NOT EXISTS (SELECT 1 FROM (SELECT coalesce((SELECT origin_uuid FROM"
                  " src.merge_map WHERE tbl = 'trajectories' AND local_id = s.id), ?1) AS ou,"
                  " coalesce((SELECT origin_id FROM src.merge_map WHERE tbl = 'trajectories' AND"
                  " local_id = s.id), s.id) AS oi) o WHERE o.ou = ?2 OR EXISTS (SELECT 1 FROM"
                  " main.merge_map k WHERE k.origin_uuid = o.ou AND k.tbl = 'trajectories' AND"
                  " k.origin_id = o.oi))");
    sqlite3_stmt *st = kc_db_prepare(m->db, sql.buf, err);
    sb_free(&sql);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, m->src_uuid.buf, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, m->dst_uuid.buf, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(m->db));
    sqlite3_finalize(st);
    return rc;
}

/* temp.merge_pre: the rows of trajectories collected twice with the same content, mapped to the
 * destination's (dst_id 0: not copied). */
static int map_same_content(merger *m, strbuf *err)
{
    static const char *const sql =
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'trajectories', src_id, dst_id"
        "  FROM temp.merge_twice WHERE same;"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'turns', st.id, dt.id FROM temp.merge_twice w"
        "  JOIN src.turns st ON st.trajectory_id = w.src_id JOIN main.turns dt ON"
        "  dt.trajectory_id = w.dst_id AND dt.turn_index = st.turn_index WHERE w.same;"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'requests', st.request_id, dt.request_id"
        "  FROM temp.merge_pre p JOIN src.turns st ON st.id = p.src_id JOIN main.turns dt ON"
        "  dt.id = p.dst_id WHERE p.tbl = 'turns' AND st.request_id IS NOT NULL AND dt.request_id IS NOT NULL;"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'responses', st.response_id, dt.response_id"
        "  FROM temp.merge_pre p JOIN src.turns st ON st.id = p.src_id JOIN main.turns dt ON"
        "  dt.id = p.dst_id WHERE p.tbl = 'turns' AND st.response_id IS NOT NULL AND dt.response_id IS NOT NULL;"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'candidates', st.candidate_id, dt.candidate_id"
        "  FROM temp.merge_pre p JOIN src.turns st ON st.id = p.src_id JOIN main.turns dt ON"
        "  dt.id = p.dst_id WHERE p.tbl = 'turns' AND st.candidate_id IS NOT NULL AND dt.candidate_id IS NOT NULL;"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'compiles', c.id, 0 FROM src.compiles c"
        "  WHERE c.candidate_id IN (SELECT src_id FROM temp.merge_pre WHERE tbl = 'candidates');"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'verifications', v.id, 0 FROM src.verifications v"
        "  WHERE v.candidate_id IN (SELECT src_id FROM temp.merge_pre WHERE tbl = 'candidates');"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'timings', x.id, 0 FROM src.timings x"
        "  WHERE x.verification_id IN (SELECT src_id FROM temp.merge_pre WHERE tbl = 'verifications');"
        "INSERT OR IGNORE INTO temp.merge_pre SELECT 'race_checks', r.id, 0 FROM src.race_checks r"
        "  WHERE r.verification_id IN (SELECT src_id FROM temp.merge_pre WHERE tbl = 'verifications')"
        "  OR r.new_verification_id IN (SELECT src_id FROM temp.merge_pre WHERE tbl = 'verifications');";
    return kc_db_exec(m->db, sql, err);
}

static int prepare_twice(merger *m, strbuf *err)
{
    if (kc_db_exec(m->db, "CREATE TEMP TABLE IF NOT EXISTS merge_twice (src_id INTEGER PRIMARY KEY,"
                          " dst_id INTEGER, src_run INTEGER, same INTEGER); DELETE FROM temp.merge_twice;"
                          "CREATE TEMP TABLE IF NOT EXISTS merge_pre (tbl TEXT, src_id INTEGER,"
                          " dst_id INTEGER, PRIMARY KEY (tbl, src_id)); DELETE FROM temp.merge_pre;"
                          "CREATE TEMP TABLE IF NOT EXISTS merge_apart_runs (src_run INTEGER PRIMARY KEY,"
                          " dst_run INTEGER); DELETE FROM temp.merge_apart_runs", err) ||
        find_twice(m, err) || map_same_content(m, err))
        return -1;
    m->counts->trajectories_same += kc_db_query_int(m->db, "SELECT count(*) FROM temp.merge_twice WHERE same");
    m->pre_lookup = kc_db_prepare(m->db, "SELECT dst_id FROM temp.merge_pre WHERE tbl = ? AND src_id = ?", err);
    m->apart_lookup = kc_db_prepare(m->db, "SELECT src_run FROM temp.merge_twice WHERE src_id = ? AND NOT same", err);
    return m->pre_lookup && m->apart_lookup ? 0 : -1;
}

/* Whether a source row is mapped by the content comparison: *dst_id the destination's row, 0
 * for a row not copied. */
static int pre_mapped(merger *m, const char *tbl, sqlite3_int64 src_id, sqlite3_int64 *dst_id)
{
    sqlite3_bind_text(m->pre_lookup, 1, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(m->pre_lookup, 2, src_id);
    int found = sqlite3_step(m->pre_lookup) == SQLITE_ROW;
    if (found)
        *dst_id = sqlite3_column_int64(m->pre_lookup, 0);
    sqlite3_reset(m->pre_lookup);
    return found;
}

/* The source run of a trajectory collected twice with other content (0: none). */
static sqlite3_int64 apart_run_of(merger *m, sqlite3_int64 src_traj)
{
    sqlite3_bind_int64(m->apart_lookup, 1, src_traj);
    sqlite3_int64 run = sqlite3_step(m->apart_lookup) == SQLITE_ROW ? sqlite3_column_int64(m->apart_lookup, 0) : 0;
    sqlite3_reset(m->apart_lookup);
    return run;
}

/* The run that keeps src_run's twice-collected trajectories apart: its row with the identity
 * plus "collected_again" (run key and source database) and that identity's key; made once. */
static int apart_run(merger *m, sqlite3_int64 src_run, sqlite3_int64 *dst_run, strbuf *err)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT dst_run FROM temp.merge_apart_runs WHERE src_run = %lld",
             (long long)src_run);
    if ((*dst_run = kc_db_query_int(m->db, sql)) > 0)
        return 0;
    sqlite3_stmt *id = kc_db_prepare(m->db,
        "SELECT i, kc_sha256(i) FROM (SELECT json_set(coalesce(CASE WHEN json_valid(identity_json)"
        " THEN identity_json END, '{}'), '$.collected_again', json_object('run_key', run_key,"
        " 'database', ?2)) AS i FROM src.runs WHERE id = ?1)", err);
    if (!id)
        return -1;
    sqlite3_bind_int64(id, 1, src_run);
    sqlite3_bind_text(id, 2, m->src_uuid.buf, -1, SQLITE_STATIC);
    int rc = sqlite3_step(id) == SQLITE_ROW ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(m->db));
    char *identity = rc ? NULL : xstrdup((const char *)sqlite3_column_text(id, 0));
    char *key = rc ? NULL : xstrdup((const char *)sqlite3_column_text(id, 1));
    sqlite3_finalize(id);
    strbuf q = STRBUF_INIT, copy = STRBUF_INIT;
    if (!rc) {
        char *k = sqlite3_mprintf("SELECT id FROM main.runs WHERE run_key = %Q", key);
        *dst_run = kc_db_query_int(m->db, k);
        sqlite3_free(k);
    }
    if (!rc && *dst_run <= 0 && !(rc = build_copy_sql(m, &plans[0], "run_key", &copy, err))) {
        sqlite3_stmt *ins = kc_db_prepare(m->db, copy.buf, err);
        if (ins) {
            sqlite3_bind_int64(ins, 1, src_run);
            sqlite3_bind_text(ins, 2, key, -1, SQLITE_STATIC);
            rc = step_done(m, ins, err);
            sqlite3_finalize(ins);
        } else {
            rc = -1;
        }
        *dst_run = sqlite3_last_insert_rowid(m->db);
        char *u = sqlite3_mprintf("UPDATE main.runs SET identity_json = %Q WHERE id = %lld",
                                  identity, (long long)*dst_run);
        if (!rc)
            rc = kc_db_exec(m->db, u, err);
        sqlite3_free(u);
        if (!rc)
            m->counts->runs_apart++;
    }
    if (!rc) {
        sb_addf(&q, "INSERT INTO temp.merge_apart_runs VALUES (%lld, %lld)", (long long)src_run,
                (long long)*dst_run);
        rc = kc_db_exec(m->db, q.buf, err);
        sb_addf(&m->counts->apart, "%srun %lld", m->counts->apart.len ? ", " : "", (long long)*dst_run);
    }
    free(identity), free(key);
    sb_free(&q), sb_free(&copy);
    return rc;
}

static int map_row(merger *m, const char *tbl, sqlite3_int64 src_id, sqlite3_int64 dst_id,
                   strbuf *err)
{
    sqlite3_bind_text(m->map_put, 1, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(m->map_put, 2, src_id);
    sqlite3_bind_int64(m->map_put, 3, dst_id);
    return step_done(m, m->map_put, err);
}

/* Records in the destination's merge_map where a row born elsewhere went (0: not copied). */
static int remember(merger *m, const char *tbl, const char *uuid, sqlite3_int64 oid,
                    sqlite3_int64 dst_id, strbuf *err)
{
    if (!strcmp(uuid, m->dst_uuid.buf))
        return 0;
    sqlite3_bind_text(m->remember, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(m->remember, 2, tbl, -1, SQLITE_STATIC);
    sqlite3_bind_int64(m->remember, 3, oid);
    sqlite3_bind_int64(m->remember, 4, dst_id);
    return step_done(m, m->remember, err);
}

static int copy_row(merger *m, const table_plan *t, sqlite3_stmt *copy, sqlite3_int64 src_id,
                    strbuf *err)
{
    strbuf uuid = STRBUF_INIT;
    sqlite3_int64 oid = 0, dst_id;
    if (origin_of(m, t->name, src_id, &uuid, &oid, err)) {
        sb_free(&uuid);
        return -1;
    }
    int known = known_as(m, t->name, uuid.buf, oid, &dst_id);
    if (!known && !strcmp(t->name, "runs"))
        dst_id = same_run(m, src_id);
    int skip = known ? !dst_id : !dst_id && pre_mapped(m, t->name, src_id, &dst_id) && !dst_id;
    int rc = 0;
    if (skip) { /* the destination has its own (the same content, collected twice) */
        m->counts->rows_known++;
        if (!known)
            rc = remember(m, t->name, uuid.buf, oid, 0, err);
        sb_free(&uuid);
        return rc;
    }
    sqlite3_int64 apart = !dst_id && !strcmp(t->name, "trajectories") ? apart_run_of(m, src_id) : 0;
    if (dst_id) {
        m->counts->rows_known++;
    } else {
        sqlite3_int64 run = 0;
        if (apart && !(rc = apart_run(m, apart, &run, err)))
            m->counts->trajectories_apart++;
        sqlite3_stmt *ins = apart ? m->copy_apart : copy;
        sqlite3_bind_int64(ins, 1, src_id);
        if (apart)
            sqlite3_bind_int64(ins, 2, run);
        if (!rc && (rc = step_done(m, ins, err)))
            kc_fail(err, "merging %s row %lld: %s", t->name, (long long)src_id,
                    sqlite3_errmsg(m->db));
        dst_id = sqlite3_last_insert_rowid(m->db);
        m->counts->rows_added++;
    }
    if (!rc)
        rc = remember(m, t->name, uuid.buf, oid, dst_id, err);
    if (!rc)
        rc = map_row(m, t->name, src_id, dst_id, err);
    sb_free(&uuid);
    return rc;
}

static int merge_table(merger *m, const table_plan *t, strbuf *err)
{
    strbuf sql = STRBUF_INIT;
    if (!strcmp(t->name, "trajectories")) { /* one kept apart goes into its own run */
        if (build_copy_sql(m, t, "run_id", &sql, err) ||
            !(m->copy_apart = kc_db_prepare(m->db, sql.buf, err))) {
            sb_free(&sql);
            return -1;
        }
    }
    if (build_copy_sql(m, t, NULL, &sql, err)) {
        sb_free(&sql);
        return -1;
    }
    sqlite3_stmt *copy = kc_db_prepare(m->db, sql.buf, err);
    sb_reset(&sql);
    sb_addf(&sql, "SELECT id FROM src.%s ORDER BY id", t->name);
    sqlite3_stmt *ids = copy ? kc_db_prepare(m->db, sql.buf, err) : NULL;
    int rc = ids ? 0 : -1;
    while (!rc && sqlite3_step(ids) == SQLITE_ROW)
        rc = copy_row(m, t, copy, sqlite3_column_int64(ids, 0), err);
    sqlite3_finalize(ids);
    sqlite3_finalize(copy);
    sb_free(&sql);
    return rc;
}

static int merge_keyed_tables(merger *m, strbuf *err)
{
    /* Only rows whose key is the sha256 of their data: one planted under another content's key
     * would make every later write of that content a no-op (the checks refuse such a source
     * before this; the copy holds to it even if the source changed since). */
    long planted = (long)kc_db_query_int(m->db, "SELECT count(*) FROM src.blobs WHERE "
                                                "typeof(data) <> 'blob' OR kc_sha256(data) IS NOT sha256");
    if (planted)
        return kc_fail(err, "table blobs: %ld row(s) whose key is not the sha256 of their data; "
                            "nothing was copied", planted);
    long before = (long)sqlite3_total_changes(m->db);
    if (kc_db_exec(m->db, "INSERT OR IGNORE INTO main.blobs(sha256, size, data) SELECT sha256, "
                          "length(data), data FROM src.blobs WHERE typeof(data) = 'blob' AND "
                          "kc_sha256(data) = sha256", err))
        return -1;
    m->counts->blobs_added += (long)sqlite3_total_changes(m->db) - before;
    long conflicts = (long)kc_db_query_int(
        m->db, "SELECT count(*) FROM src.problems s JOIN main.problems d ON d.id = s.id"
               " WHERE d.manifest_sha <> s.manifest_sha OR d.reference_sha <> s.reference_sha");
    if (conflicts > 0) {
        m->counts->problem_conflicts += conflicts;
        warning("%ld problem(s) differ between the databases (same id, other manifest or "
                "reference); keeping the destination's", conflicts);
    }
    before = (long)sqlite3_total_changes(m->db);
    if (kc_db_exec(m->db, "INSERT OR IGNORE INTO main.problems SELECT * FROM src.problems", err))
        return -1;
    m->counts->problems_added += (long)sqlite3_total_changes(m->db) - before;
    return 0;
}

static int prepare_merger(merger *m, strbuf *err)
{
    if (curate_db_uuid(m->db, "main", &m->dst_uuid, err) ||
        curate_db_uuid(m->db, "src", &m->src_uuid, err))
        return -1;
    if (!strcmp(m->src_uuid.buf, m->dst_uuid.buf))
        return kc_fail(err, "cannot merge a database into itself");
    if (kc_db_exec(m->db, "CREATE TEMP TABLE IF NOT EXISTS merge_ids (tbl TEXT, src_id INTEGER,"
                          " dst_id INTEGER, PRIMARY KEY (tbl, src_id)); DELETE FROM temp.merge_ids",
                   err))
        return -1;
    m->src_origin = kc_db_prepare(m->db, "SELECT origin_uuid, origin_id FROM src.merge_map"
                                         " WHERE tbl = ? AND local_id = ?", err);
    m->dst_lookup = kc_db_prepare(m->db, "SELECT local_id FROM main.merge_map WHERE origin_uuid = ?"
                                         " AND tbl = ? AND origin_id = ?", err);
    m->remember = kc_db_prepare(m->db, "INSERT OR IGNORE INTO main.merge_map(origin_uuid, tbl,"
                                       " origin_id, local_id) VALUES (?,?,?,?)", err);
    m->map_put = kc_db_prepare(m->db, "INSERT OR REPLACE INTO temp.merge_ids VALUES (?,?,?)", err);
    return m->src_origin && m->dst_lookup && m->remember && m->map_put ? 0 : -1;
}

static int merge_attached(merger *m, strbuf *err)
{
    int rc = prepare_merger(m, err);
    if (!rc)
        rc = kc_db_begin(m->db, err);
    if (rc)
        return -1;
    rc = merge_keyed_tables(m, err);
    if (!rc)
        rc = prepare_twice(m, err);
    for (size_t i = 0; !rc && i < sizeof(plans) / sizeof(plans[0]); i++)
        rc = merge_table(m, &plans[i], err);
    if (!rc)
        rc = kc_db_exec(m->db, "INSERT OR IGNORE INTO main.response_cache(request_hash, response_id)"
                               " SELECT s.request_hash, i.dst_id FROM src.response_cache s"
                               " JOIN temp.merge_ids i ON i.tbl = 'responses'"
                               " AND i.src_id = s.response_id", err);
    if (!rc)
        rc = kc_db_commit(m->db, err);
    if (rc)
        kc_db_rollback(m->db);
    return rc;
}

/* A source at an older schema (with an identity: version 2 on) is migrated in a copy made by
 * VACUUM INTO from a read-only connection; the copy's path goes into copy and dir. */
static int migrated_copy(const char *src_path, int version, strbuf *dir, strbuf *copy, strbuf *err)
{
    if (version < 2)
        return kc_fail(err, "'%s' has schema version %d, from before databases had an identity to "
                            "merge by; migrate a copy of it first (any writing command, e.g. "
                            "`kcurate run --db COPY`) and merge the copy", src_path, version);
    const char *tmp = getenv("TMPDIR");
    sb_addf(dir, "%s/kcurate-merge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir->buf))
        return kc_fail(err, "cannot make a temporary directory %s: %s", dir->buf, strerror(errno));
    sb_addf(copy, "%s/source.db", dir->buf);
    strbuf uri = STRBUF_INIT;
    kc_db_readonly_uri(src_path, &uri);
    sqlite3 *ro = NULL, *db = NULL;
    int rc = sqlite3_open_v2(uri.buf, &ro, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK
                 ? 0 : kc_fail(err, "cannot open '%s': %s", src_path, sqlite3_errmsg(ro));
    sqlite3_stmt *st = rc ? NULL : kc_db_prepare(ro, "VACUUM INTO ?", err);
    if (st) {
        sqlite3_bind_text(st, 1, copy->buf, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = kc_fail(err, "copying '%s' to migrate it: %s", src_path, sqlite3_errmsg(ro));
        sqlite3_finalize(st);
    } else {
        rc = -1;
    }
    sqlite3_close(ro);
    sb_free(&uri);
    if (!rc)
        rc = kc_db_open(copy->buf, KC_DB_EXISTING, &db, err); /* migrates the copy only */
    kc_db_close(db);
    return rc;
}

static void remove_copy(strbuf *dir, strbuf *copy)
{
    if (copy->len)
        kc_db_remove_files(copy->buf);
    if (dir->len)
        rmdir(dir->buf);
    sb_free(dir), sb_free(copy);
}

/* A source as merge reads it: the file itself, or a migrated temporary copy of it. */
typedef struct merge_source {
    const char *path;
    strbuf dir, copy, uri;
} merge_source;

/* The source is only read: attached read only (immutable where it cannot be written); one at
 * an older schema is migrated in a temporary copy, never in place. */
static int open_source(merge_source *s, strbuf *err)
{
    int version = kc_db_file_version(s->path);
    sqlite3 *src = NULL;
    if (version >= 1 && version < kc_schema_newest_version()) {
        if (migrated_copy(s->path, version, &s->dir, &s->copy, err))
            return -1;
    } else if (kc_db_open(s->path, KC_DB_READONLY, &src, err)) { /* ours, at this version */
        return -1;
    }
    kc_db_close(src);
    kc_db_readonly_uri(s->copy.len ? s->copy.buf : s->path, &s->uri);
    return 0;
}

static void close_source(merge_source *s)
{
    remove_copy(&s->dir, &s->copy);
    sb_free(&s->uri);
}

static int attach_source(sqlite3 *dst, merge_source *s, strbuf *err)
{
    sqlite3_stmt *att = kc_db_prepare(dst, "ATTACH DATABASE ? AS src", err);
    int rc = att ? 0 : -1;
    if (att) {
        sqlite3_bind_text(att, 1, s->uri.buf, -1, SQLITE_STATIC);
        if (sqlite3_step(att) != SQLITE_DONE)
            rc = kc_fail(err, "cannot attach: %s", sqlite3_errmsg(dst));
        sqlite3_finalize(att);
    }
    return rc;
}

/* Runs the checks of `kcurate verify-db` on the attached source; any problem refuses it, and
 * the message lists them (one an indented line). */
static int check_source(sqlite3 *dst, strbuf *err)
{
    db_check_result r = {0};
    int rc = 0;
    if (db_check_attached(dst, "src", &r)) {
        strbuf lines = STRBUF_INIT;
        for (const char *c = r.found.buf; *c; c++)
            sb_adds(&lines, *c == '\n' ? "\n  " : (char[]){*c, 0});
        rc = kc_fail(err, "refused, nothing was copied (%d problem(s), as `kcurate verify-db` "
                          "reports them):\n  %s", r.problems, lines.buf);
        sb_free(&lines);
    }
    db_check_result_free(&r);
    return rc;
}

static int merge_source_into(sqlite3 *dst, merge_source *s, curate_merge_counts *counts, strbuf *err)
{
    if (attach_source(dst, s, err))
        return -1;
    merger m = {.db = dst, .counts = counts};
    int rc = merge_attached(&m, err);
    sqlite3_finalize(m.src_origin), sqlite3_finalize(m.dst_lookup);
    sqlite3_finalize(m.remember), sqlite3_finalize(m.map_put);
    sqlite3_finalize(m.pre_lookup), sqlite3_finalize(m.apart_lookup), sqlite3_finalize(m.copy_apart);
    kc_db_exec(dst, "DETACH DATABASE src", NULL);
    sb_free(&m.src_uuid);
    sb_free(&m.dst_uuid);
    return rc;
}

/* Names the source in err. */
static int source_failed(const char *path, strbuf *err)
{
    if (err && !strstr(sb_str(err), path)) {
        strbuf msg = STRBUF_INIT;
        sb_addf(&msg, "merging '%s': %s", path, sb_str(err));
        kc_fail(err, "%s", msg.buf);
        sb_free(&msg);
    }
    return -1;
}

int curate_merge_all(sqlite3 *dst, const char *const *paths, int n, curate_merge_counts *counts,
                     strbuf *err)
{
    if (db_check_functions(dst, err))
        return -1;
    merge_source *s = xcalloc((size_t)n, sizeof(*s));
    int rc = 0;
    /* every source is checked before anything is written */
    for (int i = 0; !rc && i < n; i++) {
        s[i].path = paths[i];
        rc = open_source(&s[i], err) || attach_source(dst, &s[i], err) ? -1 : 0;
        if (!rc) {
            rc = check_source(dst, err);
            kc_db_exec(dst, "DETACH DATABASE src", NULL);
        }
        if (rc)
            source_failed(paths[i], err);
    }
    for (int i = 0; !rc && i < n; i++)
        if (merge_source_into(dst, &s[i], counts, err))
            rc = source_failed(paths[i], err);
    for (int i = 0; i < n; i++)
        close_source(&s[i]);
    free(s);
    return rc;
}
