/* cli_audit: the auditing subcommands of kverify.
 *   reverify: verify stored candidates again with the current verifier and GPU, adding new
 *     verification rows (old ones kept) tagged with a pass; a pass freezes its selection when it
 *     starts, so an interrupted or --limit'ed pass resumes where it stopped.
 *   import --jsonl: someone else's kernels with their claimed labels (docs/THIRD_PARTY.md,
 *     schemas/third_party.schema.json); a malformed line is reported with its number and
 *     skipped, every good line is imported; every line is checked before the database is
 *     opened, so a file with no good line creates no database and changes none. */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/verify_cli.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- reverify ---- */

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

int cli_reverify(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"problems", required_argument, NULL, 'p'},
                                         {"verdict", required_argument, NULL, 'v'},
                                         {"compile-only", no_argument, NULL, 'c'},
                                         {"no-timing", no_argument, NULL, 'n'},
                                         {"limit", required_argument, NULL, 'l'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"shard", required_argument, NULL, 'N'},
                                         {NULL, 0, NULL, 0}};
    kv_options o;
    kv_options_default(&o);
    reverify_sel sel = {0};
    kc_shard shard = {0};
    const char *db_path = NULL;
    int limit = 0, threads = 0, c;
    optind = 1;
    while ((c = kc_getopt(argc, argv, "d:p:v:cnl:t:N:", opts)) != -1) {
        switch (c) {
        case 'N':
            if (cli_parse_shard(optarg, &shard))
                return 4;
            break;
        case 'd': db_path = optarg; break;
        case 'p': sel.problems = optarg; break;
        case 'v': sel.verdicts = optarg; break;
        case 'c': o.compile_only = 1; break;
        case 'n': o.no_timing = 1; break;
        case 'l': limit = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        default: return 4;
        }
    }
    if (!db_path || optind < argc)
        return error("usage: kverify reverify --db PATH [--problems SEL] [--verdict LIST] "
                     "[--compile-only] [--limit N] [--shard I/N]"), 4;
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

/* ---- import --jsonl ---- */

typedef struct claim_line {
    const char *problem_id, *text, *source;
    char external_id[128];
    int has_correct, claimed_correct;
    int has_speedup;
    double claimed_speedup;
} claim_line;

/* A problem id has no control characters: the cache of ids already found is line based. */
static int check_problem_id(const char *id, strbuf *err)
{
    for (const char *c = id; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return kc_fail(err, "problem id has a control character (byte 0x%02x)", (unsigned char)*c);
    return 0;
}

/* Checks one parsed line against the format; fills cl (pointers into j). */
static int check_claim(json_t *j, const char *default_source, claim_line *cl, strbuf *err)
{
    if (!json_is_object(j))
        return kc_fail(err, "a record must be a JSON object");
    memset(cl, 0, sizeof *cl);
    json_t *pid = json_object_get(j, "problem_id"), *code = json_object_get(j, "code"),
           *resp = json_object_get(j, "response"), *src = json_object_get(j, "source"),
           *cc = json_object_get(j, "claimed_correct"), *cs = json_object_get(j, "claimed_speedup"),
           *id = json_object_get(j, "id");
    if (!json_is_string(pid) || !*json_string_value(pid))
        return kc_fail(err, "'problem_id' is missing or not a string");
    cl->problem_id = json_string_value(pid);
    if (check_problem_id(cl->problem_id, err))
        return -1;
    if ((code && resp) || (!code && !resp))
        return kc_fail(err, "give exactly one of 'code' and 'response'");
    json_t *text = code ? code : resp;
    if (!json_is_string(text) || !*json_string_value(text))
        return kc_fail(err, "'%s' must be a non-empty string", code ? "code" : "response");
    size_t limit = code ? KC_MAX_SOURCE_BYTES : KC_MAX_RESPONSE_BYTES; /* the one size rule */
    if (json_string_length(text) > limit)
        return kc_fail(err, "'%s' is longer than %zu bytes (the limit)", code ? "code" : "response",
                       limit);
    cl->text = json_string_value(text);
    if (src && (!json_is_string(src) || !*json_string_value(src)))
        return kc_fail(err, "'source' must be a non-empty string");
    cl->source = src ? json_string_value(src) : default_source;
    if (!cl->source)
        return kc_fail(err, "'source' is missing (or give --source NAME)");
    if (cc && !json_is_null(cc)) {
        if (!json_is_boolean(cc))
            return kc_fail(err, "'claimed_correct' must be true, false or null");
        cl->has_correct = 1, cl->claimed_correct = json_is_true(cc);
    }
    if (cs && !json_is_null(cs)) {
        if (!json_is_number(cs) || json_number_value(cs) <= 0)
            return kc_fail(err, "'claimed_speedup' must be a number > 0 or null");
        cl->has_speedup = 1, cl->claimed_speedup = json_number_value(cs);
    }
    if (json_is_string(id))
        snprintf(cl->external_id, sizeof cl->external_id, "%s", json_string_value(id));
    else if (json_is_integer(id))
        snprintf(cl->external_id, sizeof cl->external_id, "%lld", (long long)json_integer_value(id));
    else if (id && !json_is_null(id))
        return kc_fail(err, "'id' must be a string or an integer");
    return 0;
}

/* Loads the problem a record names: the id must be the problem's own id (not another path to it,
 * e.g. "./level1/019_relu") and have no control characters (the known-id cache is line based). */
static int load_named_problem(const char *id, problem *p, strbuf *err)
{
    if (check_problem_id(id, err))
        return -1;
    strbuf e = STRBUF_INIT;
    int rc = 0;
    if (problem_load_by_id(id, p, &e)) {
        rc = kc_fail(err, "unknown problem '%s' (%s)", id, e.buf);
    } else if (strcmp(p->id, id)) {
        rc = kc_fail(err, "'%s' is not a problem id (the problem it names is '%s')", id, p->id);
        problem_free(p);
    }
    sb_free(&e);
    return rc;
}

/* Registers the problem the first time a file names it; fails for an unknown id. */
static int ensure_problem(sqlite3 *db, const char *id, strbuf *known, strbuf *err)
{
    strbuf tag = STRBUF_INIT;
    sb_addf(&tag, "\n%s\n", id);
    int rc = 0;
    if (!strstr(sb_str(known), tag.buf)) {
        problem p;
        rc = load_named_problem(id, &p, err);
        if (!rc) {
            rc = problem_register(db, &p, err);
            problem_free(&p);
            if (rc == 0)
                sb_add(known, tag.buf, tag.len);
        }
    }
    sb_free(&tag);
    return rc;
}

static int store_claim(sqlite3 *db, const claim_line *cl, json_t *j, const char *file, int line,
                       strbuf *err)
{
    char sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put_str(db, cl->text, sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO candidates(problem_id, source_sha, origin) VALUES (?, ?, 'import')", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, cl->problem_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sha, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc)
        return -1;
    int64_t cid = sqlite3_last_insert_rowid(db);
    json_t *meta = json_deep_copy(j);
    json_object_del(meta, "code");
    json_object_del(meta, "response");
    char *meta_s = json_dumps(meta, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(meta);
    st = kc_db_prepare(db, "INSERT INTO third_party_claims(candidate_id, source, external_id, "
                           "claimed_correct, claimed_speedup, file, line, record_json) "
                           "VALUES (?,?,?,?,?,?,?,?)", err);
    rc = st ? 0 : -1;
    if (st) {
        sqlite3_bind_int64(st, 1, cid);
        sqlite3_bind_text(st, 2, cl->source, -1, SQLITE_STATIC);
        kc_bind_text_or_null(st, 3, cl->external_id);
        if (cl->has_correct)
            sqlite3_bind_int(st, 4, cl->claimed_correct);
        if (cl->has_speedup)
            sqlite3_bind_double(st, 5, cl->claimed_speedup);
        sqlite3_bind_text(st, 6, file, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 7, line);
        sqlite3_bind_text(st, 8, meta_s, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = kc_fail(err, "database: %s", sqlite3_errmsg(db));
        sqlite3_finalize(st);
    }
    free(meta_s);
    return rc;
}

/* A line that passed every check of the first pass, kept parsed for the second. */
typedef struct good_line {
    json_t *j;
    int line;
} good_line;

/* Checks that the problem id names a problem (known: ids already found, "\nID\n" each). */
static int check_problem_exists(const char *id, strbuf *known, strbuf *err)
{
    strbuf tag = STRBUF_INIT;
    sb_addf(&tag, "\n%s\n", id);
    int rc = 0;
    if (!strstr(sb_str(known), tag.buf)) {
        problem p;
        rc = load_named_problem(id, &p, err);
        if (!rc)
            problem_free(&p), sb_add(known, tag.buf, tag.len);
    }
    sb_free(&tag);
    return rc;
}

/* First pass over one line: parse and check, without a database. Returns 1 for a blank line,
 * 0 good (*out holds the parsed record), -1 rejected (err). */
static int check_line(char *text, const char *default_source, strbuf *known, json_t **out,
                      strbuf *err)
{
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        text[--len] = '\0';
    if (!len)
        return 1;
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return kc_fail(err, "not valid JSON: %s (column %d)", je.text, je.column);
    claim_line cl;
    if (check_claim(j, default_source, &cl, err) || check_problem_exists(cl.problem_id, known, err)) {
        json_decref(j);
        return -1;
    }
    *out = j;
    return 0;
}

/* Second pass over one checked record: store it in its own savepoint. */
static int import_line(sqlite3 *db, json_t *j, const char *file, int line,
                       const char *default_source, strbuf *known, strbuf *err)
{
    claim_line cl;
    if (check_claim(j, default_source, &cl, err) || kc_db_exec(db, "SAVEPOINT claim", err))
        return -1;
    int rc = ensure_problem(db, cl.problem_id, known, err) ||
                     store_claim(db, &cl, j, file, line, err) ? -1 : 0;
    kc_db_exec(db, rc ? "ROLLBACK TO claim; RELEASE claim" : "RELEASE claim", NULL);
    return rc;
}

/* Reads and checks every line of f; the good ones go to *good. Returns the records seen. */
static int check_lines(FILE *f, const char *file, const char *default_source, good_line **good,
                       int *n_good, int *rejected)
{
    strbuf known = STRBUF_INIT, lerr = STRBUF_INIT;
    char *buf = NULL;
    size_t cap = 0;
    int line = 0, records = 0, n_cap = 0;
    while (getline(&buf, &cap, f) != -1) {
        line++;
        json_t *j = NULL;
        int rc = check_line(buf, default_source, &known, &j, &lerr);
        if (rc == 1)
            continue;
        records++;
        if (rc) {
            (*rejected)++, error("%s:%d: %s", file, line, lerr.buf);
            continue;
        }
        if (*n_good == n_cap)
            n_cap = n_cap ? 2 * n_cap : 64, *good = xrealloc(*good, (size_t)n_cap * sizeof **good);
        (*good)[(*n_good)++] = (good_line){j, line};
    }
    free(buf);
    sb_free(&known), sb_free(&lerr);
    return records;
}

/* Every line is read and checked before the database is opened: when no line would be imported,
 * no database is created and an existing one is not touched. */
int cli_import_jsonl(const char *db_path, const char *file, const char *default_source)
{
    strbuf err = STRBUF_INIT, known = STRBUF_INIT, lerr = STRBUF_INIT;
    sqlite3 *db = NULL;
    FILE *f = fopen(file, "r");
    if (!f)
        return error("cannot open %s: %m", file), 4;
    good_line *good = NULL;
    int n_good = 0, rejected = 0, imported = 0, status = 4, existed = 0;
    int records = check_lines(f, file, default_source, &good, &n_good, &rejected);
    fclose(f);
    if (n_good == 0) {
        printf("imported 0 of %d records from %s (%d rejected); nothing to import: %s was not "
               "created or changed\n", records, file, rejected, db_path);
        status = rejected ? 1 : 0;
        goto out;
    }
    existed = access(db_path, F_OK) == 0;
    if (kc_db_open(db_path, KC_DB_CREATE, &db, &err) || kc_db_begin(db, &err)) {
        error("%s", err.buf);
        goto out_db;
    }
    for (int i = 0; i < n_good; i++) {
        if (import_line(db, good[i].j, file, good[i].line, default_source, &known, &lerr) == 0)
            imported++;
        else
            rejected++, error("%s:%d: %s", file, good[i].line, lerr.buf);
    }
    status = kc_db_commit(db, &err) ? (error("%s", err.buf), 4) : rejected ? 1 : 0;
    if (status != 4)
        printf("imported %d of %d records from %s into %s (%d rejected); "
               "run `kverify run --db %s`, then `kcurate flips --db %s`\n",
               imported, records, file, db_path, rejected, db_path, db_path);
out_db:
    if (db)
        kc_db_rollback(db);
    kc_db_close(db);
    if (status == 4 && db && !existed) /* a database this failed import created */
        kc_db_remove_files(db_path);
out:
    for (int i = 0; i < n_good; i++)
        json_decref(good[i].j);
    free(good);
    sb_free(&err), sb_free(&known), sb_free(&lerr);
    return status;
}
