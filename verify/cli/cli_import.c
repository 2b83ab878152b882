/* cli_import: `kverify import`: candidate files into a database (pending), and with --jsonl
 * someone else's kernels with their claimed labels (docs/THIRD_PARTY.md,
 * schemas/third_party.schema.json); a malformed line is reported with its number and
 * skipped, every good line is imported; every line is checked before the database is
 * opened, so a file with no good line creates no database and changes none. */
#include "common/candidate.h"
#include "common/cli.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/problem.h"
#include "verify/cli/verify_cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int insert_candidate(sqlite3 *db, const char *problem_id, const char *source, strbuf *err)
{
    char sha[SHA256_HEX_LEN + 1];
    if (kc_blob_put_str(db, source, sha, err))
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO candidates(problem_id, source_sha, origin) VALUES (?, ?, 'import')", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sha, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

/* Reads files[0..n) into texts and checks each under the one candidate rule (candidate_source:
 * UTF-8 text, exactly one ```cuda block or a bare .cu file with // @launch lines), so that a
 * file `kverify run` could only call an extract_error is refused here. */
static int read_candidates(char **files, int n, strbuf *texts, strbuf *err)
{
    for (int i = 0; i < n; i++) {
        if (read_file(files[i], &texts[i], err))
            return -1;
        strbuf why = STRBUF_INIT, code = STRBUF_INIT;
        /* the whole file first: candidate_source reads a C string and would stop at a NUL */
        int bad = candidate_check_text(texts[i].buf, texts[i].len, &why) ||
                  candidate_source(texts[i].buf, &code, &why);
        if (bad)
            kc_fail(err, "%s: %s; nothing imported (a candidate file holds one kc-cuda v1 "
                         "candidate: exactly one ```cuda block, or a .cu file with // @launch "
                         "lines, in UTF-8 text)", files[i], why.buf);
        sb_free(&why), sb_free(&code);
        if (bad)
            return -1;
    }
    return 0;
}

static const kc_command import_cmd = {"kverify", "import", kverify_import_usage, KC_ANY_OPERANDS};

int cli_import(int argc, char **argv)
{
    const char *db_path = NULL, *problem_id = NULL, *jsonl = NULL, *source = NULL;
    /* the short letters are the ones this command has always taken */
    const kc_option opts[] = {
        KC_OPT_STR("db", 'd', &db_path),
        KC_OPT_STR("problem", 'p', &problem_id),
        KC_OPT_STR("jsonl", 'j', &jsonl),
        KC_OPT_STR("source", 's', &source),
        KC_OPT_END_OF_TABLE};
    int n = kc_parse_options(&import_cmd, opts, argc, argv);
    if (!db_path)
        kc_usage_error("import needs --db PATH");
    if (jsonl) {
        if (problem_id || n)
            kc_usage_error("--jsonl FILE takes no --problem and no candidate files (each line "
                           "names its problem)");
        return cli_import_jsonl(db_path, jsonl, source);
    }
    if (!problem_id)
        kc_usage_error("import needs --problem ID and candidate files, or --jsonl FILE");
    if (!n)
        kc_usage_error("import --problem %s needs candidate files", problem_id);
    char **files = argv + 1;
    strbuf err = STRBUF_INIT;
    problem p;
    sqlite3 *db = NULL;
    int status = 4, existed = 0;
    strbuf *texts = xcalloc((size_t)n, sizeof(*texts));
    if (problem_load_by_id(problem_id, &p, &err))
        goto out;
    /* every file is read and checked before the database is opened: a refused import creates
     * no database and leaves an existing one untouched */
    if (read_candidates(files, n, texts, &err))
        goto out_problem;
    existed = access(db_path, F_OK) == 0;
    if (kc_db_open(db_path, KC_DB_CREATE, &db, &err) || kc_db_begin(db, &err) ||
        problem_register(db, &p, &err))
        goto out_db;
    for (int i = 0; i < n; i++)
        if (insert_candidate(db, p.id, texts[i].buf, &err))
            goto out_db;
    if (kc_db_commit(db, &err))
        goto out_db;
    printf("imported %d candidates for %s into %s\n", n, p.id, db_path);
    status = 0;
out_db:
    if (db)
        kc_db_rollback(db);
    kc_db_close(db);
    if (status && db && !existed) /* a database this refused import created */
        kc_db_remove_files(db_path);
out_problem:
    problem_free(&p);
out:
    if (status)
        error("%s", err.buf);
    for (int i = 0; i < n; i++)
        sb_free(&texts[i]);
    free(texts);
    sb_free(&err);
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
