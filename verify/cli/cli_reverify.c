/* cli_reverify: `kverify reverify`, the auditing subcommand of kverify: verify stored
 * candidates again with the current verifier and GPU, adding new verification rows (old ones
 * kept) tagged with a pass; a pass freezes its selection when it starts, so an interrupted or
 * --limit'ed pass resumes where it stopped. */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct reverify_sel {
    const char *problems; /* selector (suite, id, glob, list) or NULL: all */
    const char *verdicts; /* comma separated latest verdicts, or NULL: all */
    char **ids;
    int n_ids;
} reverify_sel;

static int in_list(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && !memcmp(p, item, n))
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int id_selected(const reverify_sel *sel, const char *id)
{
    if (!sel->problems)
        return 1;
    for (int i = 0; i < sel->n_ids; i++)
        if (!strcmp(sel->ids[i], id))
            return 1;
    return 0;
}

static void selection_json(const reverify_sel *sel, const kv_options *o, strbuf *out)
{
    json_t *j = json_pack("{s:s?, s:s?, s:b, s:b}", "problems", sel->problems, "verdicts",
                          sel->verdicts, "compile_only", o->compile_only, "no_timing",
                          o->no_timing);
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    sb_adds(out, s);
    free(s);
    json_decref(j);
}

/* Fills reverify_items of a new pass: verified candidates with a kernel, selected by problem and
 * latest verdict. */
static int fill_pass(sqlite3 *db, int64_t pass, const reverify_sel *sel, int *n, strbuf *err)
{
    sqlite3_stmt *q = kc_db_prepare(db,
        "SELECT c.id, c.problem_id, coalesce(v.verdict, '') FROM candidates c "
        "LEFT JOIN v_latest_verification v ON v.candidate_id = c.id "
        "WHERE c.status <> 'pending' AND c.source_sha IS NOT NULL ORDER BY c.problem_id, c.id", err);
    sqlite3_stmt *ins = q ? kc_db_prepare(db,
        "INSERT INTO reverify_items(pass_id, candidate_id) VALUES (?, ?)", err) : NULL;
    int rc = q && ins ? 0 : -1;
    *n = 0;
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        const char *pid = (const char *)sqlite3_column_text(q, 1);
        const char *verdict = (const char *)sqlite3_column_text(q, 2);
        if (!id_selected(sel, pid) || (sel->verdicts && !in_list(sel->verdicts, verdict)))
            continue;
        sqlite3_bind_int64(ins, 1, pass);
        sqlite3_bind_int64(ins, 2, sqlite3_column_int64(q, 0));
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = kc_fail(err, "database: %s", sqlite3_errmsg(db));
        sqlite3_reset(ins);
        (*n)++;
    }
    sqlite3_finalize(q);
    sqlite3_finalize(ins);
    return rc;
}

/* The unfinished pass of the same selection, or a new one. */
static int open_pass(sqlite3 *db, const reverify_sel *sel, const kv_options *o, int64_t *pass,
                     int *resumed, strbuf *err)
{
    strbuf json = STRBUF_INIT;
    selection_json(sel, o, &json);
    char key[SHA256_HEX_LEN + 1];
    sha256_hex(json.buf, json.len, key);
    int rc = kc_db_begin(db, err);
    sqlite3_stmt *st = rc ? NULL : kc_db_prepare(db,
        "SELECT id FROM reverify_passes WHERE selection_key = ? AND finished_at IS NULL "
        "ORDER BY id DESC LIMIT 1", err);
    if (!st)
        rc = -1;
    *pass = 0;
    if (st) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            *pass = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    *resumed = *pass > 0;
    if (rc == 0 && !*pass) {
        st = kc_db_prepare(db, "INSERT INTO reverify_passes(selection_key, selection_json, "
                               "compile_only, verifier_version) VALUES (?, ?, ?, ?)", err);
        rc = st ? 0 : -1;
        if (st) {
            sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, json.buf, -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 3, o->compile_only);
            sqlite3_bind_text(st, 4, KC_VERSION, -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = kc_fail(err, "database: %s", sqlite3_errmsg(db));
            sqlite3_finalize(st);
            *pass = sqlite3_last_insert_rowid(db);
        }
        int n = 0;
        if (rc == 0)
            rc = fill_pass(db, *pass, sel, &n, err);
    }
    rc = rc || kc_db_commit(db, err);
    if (rc)
        kc_db_rollback(db);
    sb_free(&json);
    return rc ? -1 : 0;
}

static const char pass_todo_sql[] =
    "SELECT c.id, c.problem_id, c.source_sha FROM reverify_items i "
    "JOIN candidates c ON c.id = i.candidate_id WHERE i.pass_id = ?2 AND NOT EXISTS "
    "(SELECT 1 FROM verifications v WHERE v.candidate_id = c.id AND v.reverify_pass = ?2) "
    "ORDER BY c.problem_id, c.id LIMIT ?1";

static long long pass_count(sqlite3 *db, int64_t pass, const char *sql)
{
    strbuf q = STRBUF_INIT;
    sb_addf(&q, sql, (long long)pass, (long long)pass);
    long long n = kc_db_query_int(db, q.buf);
    sb_free(&q);
    return n;
}

/* Marks the pass finished when nothing is left and prints where it stands. */
static void close_pass(sqlite3 *db, const char *db_path, int64_t pass)
{
    long long items = pass_count(db, pass,
        "SELECT count(*) FROM reverify_items WHERE pass_id = %lld /* %lld */");
    long long done = pass_count(db, pass,
        "SELECT count(DISTINCT candidate_id) FROM verifications WHERE reverify_pass = %lld /* %lld */");
    long long flips = pass_count(db, pass,
        "SELECT count(*) FROM v_label_flips f JOIN verifications v ON v.id = f.after_id "
        "WHERE v.reverify_pass = %lld /* %lld */");
    if (done >= items) {
        strbuf q = STRBUF_INIT;
        sb_addf(&q, "UPDATE reverify_passes SET finished_at = strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ',"
                    "'now') WHERE id = %lld", (long long)pass);
        kc_db_exec(db, q.buf, NULL);
        sb_free(&q);
    }
    printf("reverify pass %lld: %lld of %lld candidates re-verified%s; %lld label flip%s "
           "(kcurate flips --db %s)\n", (long long)pass, done, items,
           done >= items ? " (pass finished)" : " (run the same command again to resume)", flips,
           flips == 1 ? "" : "s", db_path);
}

static const kc_command reverify_cmd = {"kverify", "reverify", kverify_reverify_usage, 0};

int cli_reverify(int argc, char **argv)
{
    kv_options o;
    kv_options_default(&o);
    reverify_sel sel = {0};
    kc_shard shard = {0};
    const char *db_path = NULL;
    int limit = 0, threads = 0;
    /* the short letters are the ones this command has always taken */
    const kc_option opts[] = {
        KC_OPT_STR("db", 'd', &db_path),
        KC_OPT_STR("problems", 'p', &sel.problems),
        KC_OPT_STR("verdict", 'v', &sel.verdicts),
        KC_OPT_FLAG("compile-only", 'c', &o.compile_only),
        KC_OPT_FLAG("no-timing", 'n', &o.no_timing),
        KC_OPT_INTEGER("limit", 'l', &limit, 0, 1 << 30),
        KC_OPT_INTEGER("threads", 't', &threads, 0, 4096),
        KC_OPT_FN("shard", 'N', cli_opt_shard, &shard, NULL),
        CLI_BATCH_OPTIONS(&o),
        KC_OPT_END_OF_TABLE};
    kc_parse_options(&reverify_cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("reverify needs --db PATH");
    strbuf err = STRBUF_INIT, root = STRBUF_INIT;
    sqlite3 *db = NULL;
    int status = 4, resumed = 0;
    int64_t pass = 0;
    problems_root(&root);
    if (sel.problems && problems_select(root.buf, sel.problems, &sel.ids, &sel.n_ids, &err))
        goto out;
    if (kc_db_open(db_path, KC_DB_EXISTING, &db, &err) ||
        open_pass(db, &sel, &o, &pass, &resumed, &err) ||
        kc_shard_claim_pass(db, pass, &shard, &err)) /* a pass keeps its shard count */
        goto out;
    printf("%s reverify pass %lld (verifier %s%s)\n", resumed ? "resuming" : "starting",
           (long long)pass, KC_VERSION, o.compile_only ? ", compile only" : "");
    fflush(stdout);
    status = cli_verify_selected(db, &o, pass_todo_sql, pass, limit, threads, "selected", &shard);
    close_pass(db, db_path, pass);
    if (kc_interrupted())
        kc_interrupt_print_resume(stdout);
out:
    if (status == 4 && err.len)
        error("%s", err.buf);
    kc_db_close(db);
    problems_free_ids(sel.ids, sel.n_ids);
    sb_free(&err), sb_free(&root);
    return status;
}
