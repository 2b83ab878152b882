/* run: the kcurate labelling pass: streams candidates problem by problem (with their turn,
 * latest verification, timing and response facts), dedups them, labels candidates and
 * trajectories, assigns problem splits, and writes it all in one transaction. */
#include "curate/run.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "curate/dedup.h"
#include "curate/labels.h"
#include "curate/split.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *candidate_query =
    "SELECT c.id, c.problem_id, c.source_sha, b.data, b.sha256 IS NOT NULL,"
    "       t.trajectory_id, t.turn_index, v.verdict, v.flags,"
    "       tm.speedup_eager, tm.speedup_compile, r.finish_reason,"
    "       length(CAST(rb.data AS TEXT))" /* characters, as the exports count them */
    " FROM candidates c"
    " LEFT JOIN blobs b ON b.sha256 = c.source_sha"
    " LEFT JOIN turns t ON t.candidate_id = c.id"
    " LEFT JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w"
    "                                     WHERE w.candidate_id = c.id)"
    " LEFT JOIN timings tm ON tm.id = (SELECT max(id) FROM timings x WHERE x.verification_id = v.id)"
    " LEFT JOIN responses r ON r.id = t.response_id"
    " LEFT JOIN blobs rb ON rb.sha256 = r.reasoning_sha"
    " ORDER BY c.problem_id, c.id";

typedef struct pass {
    sqlite3 *db;
    const curate_params *p;
    curate_summary *sum;
    curate_dedup dedup;
    curate_item *items;
    size_t n, cap;
    char problem[256];
    sqlite3_stmt *ins_cand, *ins_traj;
    strbuf json;
} pass;

static void add_item(pass *ps, sqlite3_stmt *st)
{
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 1024;
        ps->items = xrealloc(ps->items, ps->cap * sizeof(*ps->items));
    }
    curate_item *it = &ps->items[ps->n++];
    memset(it, 0, sizeof(*it));
    it->candidate_id = sqlite3_column_int64(st, 0);
    it->trajectory_id = sqlite3_column_int64(st, 5);
    it->turn_index = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 6);
    const char *v = (const char *)sqlite3_column_text(st, 7);
    const char *f = (const char *)sqlite3_column_text(st, 8);
    snprintf(it->verdict, sizeof it->verdict, "%s", v ? v : "");
    snprintf(it->flags, sizeof it->flags, "%s", f ? f : "");
    it->speedup_eager = sqlite3_column_double(st, 9);
    it->speedup_compile = sqlite3_column_double(st, 10);
    const char *fin = (const char *)sqlite3_column_text(st, 11);
    /* cut by the token limit, or by kcollect --max-answer-bytes */
    it->truncated = fin && (!strcmp(fin, "length") || !strcmp(fin, "answer_cap"));
    it->reasoning_chars = sqlite3_column_int64(st, 12);
    curate_label_item(ps->p, it);
}

/* Reads the candidate's kernel into the dedup state; checks the blob exists and is intact. */
static int add_source(pass *ps, sqlite3_stmt *st, strbuf *err)
{
    const curate_item *it = &ps->items[ps->n - 1];
    const char *sha = (const char *)sqlite3_column_text(st, 2);
    int rank = curate_class_rank(it->verdict_class);
    double speed = !strcmp(it->verdict, "correct") ? it->speedup_eager : 0;
    if (!sha) {
        curate_dedup_add(&ps->dedup, NULL, 0, rank, speed);
        return 0;
    }
    if (!sqlite3_column_int(st, 4))
        return kc_fail(err, "candidate %lld: missing blob %s (its kernel source)",
                       (long long)it->candidate_id, sha);
    const char *data = sqlite3_column_blob(st, 3);
    size_t len = (size_t)sqlite3_column_bytes(st, 3);
    char check[SHA256_HEX_LEN + 1];
    sha256_hex(data ? data : "", len, check);
    if (strcmp(check, sha))
        return kc_fail(err, "candidate %lld: blob %s is corrupt (content hashes to %s)",
                       (long long)it->candidate_id, sha, check);
    curate_dedup_add(&ps->dedup, data ? data : "", len, rank, speed);
    ps->sum->with_source++;
    return 0;
}

static int compare_turns(const void *a, const void *b)
{
    const curate_item *x = *(curate_item *const *)a, *y = *(curate_item *const *)b;
    if (x->trajectory_id != y->trajectory_id)
        return x->trajectory_id < y->trajectory_id ? -1 : 1;
    if (x->turn_index != y->turn_index)
        return x->turn_index < y->turn_index ? -1 : 1;
    return x->candidate_id < y->candidate_id ? -1 : x->candidate_id > y->candidate_id;
}

static int step_done(pass *ps, sqlite3_stmt *st, strbuf *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(ps->db));
}

static void bind_opt_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_opt_int(sqlite3_stmt *st, int i, int v)
{
    if (v < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int(st, i, v);
}

static int write_trajectory(pass *ps, curate_item **turns, int n, const char *split, strbuf *err)
{
    curate_trajectory_labels tl;
    curate_label_trajectory(ps->p, turns, n, &tl);
    sqlite3_stmt *st = ps->ins_traj;
    sb_reset(&ps->json);
    sb_addf(&ps->json, "{\"suspicious_turns\":%d,\"total_reward\":%.6g,\"truncated_turns\":%d}",
            tl.suspicious_turns, tl.total_reward, tl.truncated_turns);
    sqlite3_bind_int64(st, 1, turns[0]->trajectory_id);
    sqlite3_bind_int64(st, 2, ps->sum->curate_run_id);
    sqlite3_bind_int(st, 3, tl.solved);
    bind_opt_int(st, 4, tl.first_correct_turn);
    sqlite3_bind_double(st, 5, tl.best_speedup_eager);
    sqlite3_bind_double(st, 6, tl.best_speedup_compile);
    sqlite3_bind_int(st, 7, tl.n_turns);
    sqlite3_bind_text(st, 8, split, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, ps->json.buf, -1, SQLITE_TRANSIENT);
    ps->sum->trajectories++;
    return step_done(ps, st, err);
}

static int label_trajectories(pass *ps, const char *split, strbuf *err)
{
    curate_item **order = xmalloc((ps->n ? ps->n : 1) * sizeof(*order));
    size_t m = 0;
    for (size_t i = 0; i < ps->n; i++)
        if (ps->items[i].trajectory_id)
            order[m++] = &ps->items[i];
    qsort(order, m, sizeof(*order), compare_turns);
    int rc = 0;
    for (size_t start = 0, end; start < m && !rc; start = end) {
        for (end = start + 1; end < m && order[end]->trajectory_id == order[start]->trajectory_id;
             end++)
            ;
        rc = write_trajectory(ps, order + start, (int)(end - start), split, err);
    }
    free(order);
    return rc;
}

static int write_candidate(pass *ps, size_t i, const char *split, strbuf *err)
{
    const curate_item *it = &ps->items[i];
    const curate_dedup *d = &ps->dedup;
    sqlite3_stmt *st = ps->ins_cand;
    sqlite3_bind_int64(st, 1, it->candidate_id);
    sqlite3_bind_int64(st, 2, ps->sum->curate_run_id);
    bind_opt_text(st, 3, d->normalized_sha[i][0] ? d->normalized_sha[i] : NULL);
    if (d->exact_rep[i] != SIZE_MAX) {
        sqlite3_bind_int64(st, 4, ps->items[d->exact_rep[i]].candidate_id);
        sqlite3_bind_int64(st, 5, ps->items[d->near_rep[i]].candidate_id);
        ps->sum->exact_duplicates += d->exact_rep[i] != i;
        ps->sum->near_duplicates += d->exact_rep[i] == i && d->near_rep[i] != i;
    }
    sqlite3_bind_text(st, 6, it->verdict_class, -1, SQLITE_STATIC);
    bind_opt_int(st, 7, it->correct_alt);
    if (it->speedup_eager > 0)
        sqlite3_bind_double(st, 8, it->speedup_eager);
    if (it->speedup_compile > 0)
        sqlite3_bind_double(st, 9, it->speedup_compile);
    bind_opt_text(st, 10, it->tier_eager);
    bind_opt_text(st, 11, it->tier_compile);
    bind_opt_int(st, 12, it->improved);
    sqlite3_bind_int(st, 13, it->truncated);
    sqlite3_bind_int(st, 14, it->suspicious);
    sqlite3_bind_int64(st, 15, it->reasoning_chars);
    sqlite3_bind_double(st, 16, it->reward);
    sqlite3_bind_double(st, 17, it->discounted_return);
    sb_reset(&ps->json);
    sb_addf(&ps->json, "{\"split\":\"%s\",\"turn_index\":%d,\"verdict\":\"%s\"}", split,
            it->turn_index, it->verdict);
    sqlite3_bind_text(st, 18, ps->json.buf, -1, SQLITE_TRANSIENT);
    return step_done(ps, st, err);
}

/* Labels and writes the candidates gathered for ps->problem. */
static int flush_problem(pass *ps, strbuf *err)
{
    if (!ps->n)
        return 0;
    double t0 = now_ms();
    curate_dedup_resolve(&ps->dedup);
    ps->sum->dedup_seconds += (now_ms() - t0) / 1000;
    const char *split = curate_split_of(ps->p, ps->problem);
    int rc = label_trajectories(ps, split, err);
    for (size_t i = 0; i < ps->n && !rc; i++)
        rc = write_candidate(ps, i, split, err);
    ps->sum->candidates += (long)ps->n;
    ps->n = 0;
    curate_dedup_reset(&ps->dedup);
    return rc;
}

static int stream_candidates(pass *ps, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(ps->db, candidate_query, err);
    if (!st)
        return -1;
    int rc = 0, step;
    ps->problem[0] = '\0';
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *pid = (const char *)sqlite3_column_text(st, 1);
        if (strcmp(pid, ps->problem)) {
            rc = flush_problem(ps, err);
            snprintf(ps->problem, sizeof ps->problem, "%s", pid);
        }
        if (!rc) {
            add_item(ps, st);
            double t0 = now_ms();
            rc = add_source(ps, st, err);
            ps->sum->dedup_seconds += (now_ms() - t0) / 1000;
        }
    }
    if (!rc && step != SQLITE_DONE)
        rc = kc_fail(err, "database: reading candidates: %s", sqlite3_errmsg(ps->db));
    sqlite3_finalize(st);
    return rc ? rc : flush_problem(ps, err);
}

static int label_problems(pass *ps, strbuf *err)
{
    sqlite3_stmt *sel = kc_db_prepare(ps->db, "SELECT id FROM problems ORDER BY id", err);
    sqlite3_stmt *ins = kc_db_prepare(ps->db, "INSERT INTO problem_labels(problem_id, curate_run_id,"
                                              " split, heldout) VALUES (?,?,?,?)", err);
    int rc = sel && ins ? 0 : -1;
    while (!rc && sqlite3_step(sel) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(sel, 0);
        sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(ins, 2, ps->sum->curate_run_id);
        sqlite3_bind_text(ins, 3, curate_split_of(ps->p, id), -1, SQLITE_STATIC);
        sqlite3_bind_int(ins, 4, curate_is_heldout(ps->p, id));
        rc = step_done(ps, ins, err);
        ps->sum->problems++;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    return rc;
}

static int start_run(pass *ps, strbuf *err)
{
    strbuf params = STRBUF_INIT;
    curate_params_json(ps->p, &params);
    int rc = kc_db_exec(ps->db, "DELETE FROM candidate_labels; DELETE FROM trajectory_labels;"
                                "DELETE FROM problem_labels;", err);
    sqlite3_stmt *st = rc ? NULL : kc_db_prepare(ps->db, "INSERT INTO curate_runs(params_json,"
                                                         " tool_version) VALUES (?, ?)", err);
    if (st) {
        sqlite3_bind_text(st, 1, params.buf, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, KC_VERSION, -1, SQLITE_STATIC);
        rc = step_done(ps, st, err);
        ps->sum->curate_run_id = sqlite3_last_insert_rowid(ps->db);
    } else {
        rc = -1;
    }
    sqlite3_finalize(st);
    sb_free(&params);
    return rc;
}

static int prepare_inserts(pass *ps, strbuf *err)
{
    ps->ins_cand = kc_db_prepare(
        ps->db,
        "INSERT INTO candidate_labels(candidate_id, curate_run_id, normalized_sha, exact_rep_id,"
        " near_rep_id, verdict_class, correct_alt, speedup_eager, speedup_compile, tier_eager,"
        " tier_compile, improved, truncated, suspicious, reasoning_chars, reward,"
        " discounted_return, labels_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    ps->ins_traj = kc_db_prepare(
        ps->db,
        "INSERT INTO trajectory_labels(trajectory_id, curate_run_id, solved, first_correct_turn,"
        " best_speedup_eager, best_speedup_compile, n_turns, split, labels_json)"
        " VALUES (?,?,?,?,?,?,?,?,?)",
        err);
    return ps->ins_cand && ps->ins_traj ? 0 : -1;
}

int curate_run(sqlite3 *db, const curate_params *p, curate_summary *sum, strbuf *err)
{
    if (curate_params_check(p, err))
        return -1;
    double t0 = now_ms();
    pass ps = {.db = db, .p = p, .sum = sum};
    memset(sum, 0, sizeof(*sum));
    curate_dedup_init(&ps.dedup, &p->minhash);
    /* mmap: pages are read from the OS cache without a copy (as far as SQLite maps: 2 GB) */
    int rc = kc_db_exec(db, "PRAGMA cache_size = -262144; PRAGMA mmap_size = 4294967296", err);
    if (!rc)
        rc = kc_db_begin(db, err);
    if (!rc) {
        rc = start_run(&ps, err);
        if (!rc)
            rc = prepare_inserts(&ps, err);
        if (!rc)
            rc = label_problems(&ps, err);
        if (!rc)
            rc = stream_candidates(&ps, err);
        if (!rc)
            rc = kc_db_commit(db, err);
        if (rc)
            kc_db_rollback(db);
    }
    sqlite3_finalize(ps.ins_cand);
    sqlite3_finalize(ps.ins_traj);
    curate_dedup_free(&ps.dedup);
    free(ps.items);
    sb_free(&ps.json);
    sum->total_seconds = (now_ms() - t0) / 1000;
    return rc;
}
