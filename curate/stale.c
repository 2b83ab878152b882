/* stale: whether a database's labels are older than its data, and the kcurate command that
 * relabels it (see stale.h). */
#include "curate/stale.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "curate/params.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void push_arg(stale_labels *s, const char *a)
{
    s->argv = xrealloc(s->argv, (size_t)(s->argc + 2) * sizeof *s->argv);
    s->argv[s->argc++] = xstrdup(a);
    s->argv[s->argc] = NULL;
}

/* kcurate's flag for a parameter of curate_runs.params_json. */
static void flag_name(const char *key, strbuf *out)
{
    sb_reset(out);
    if (!strcmp(key, "suspicious_speedup")) {
        sb_adds(out, "--suspicious");
        return;
    }
    sb_adds(out, "--");
    for (const char *p = key; *p; p++)
        sb_addch(out, *p == '_' ? '-' : *p);
}

static void value_text(json_t *v, strbuf *out)
{
    sb_reset(out);
    if (json_is_string(v)) {
        sb_adds(out, json_string_value(v));
    } else if (json_is_integer(v)) {
        sb_addf(out, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        sb_addf(out, "%.15g", json_real_value(v));
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) sb_addf(out, "%s%s", i ? "," : "", json_string_value(e) ?: "");
    }
}

/* The kcurate command with every parameter of the last run that differs from kcurate's default. */
static void build_command(stale_labels *s, const char *db_path, const char *params_json)
{
    strbuf dir = STRBUF_INIT, exe = STRBUF_INIT, flag = STRBUF_INIT, val = STRBUF_INIT,
           def = STRBUF_INIT;
    if (self_exe_dir(&dir, NULL) == 0)
        path_join(&exe, dir.buf, "kcurate");
    else
        sb_adds(&exe, "kcurate");
    push_arg(s, exe.buf);
    push_arg(s, "run");
    push_arg(s, "--db");
    push_arg(s, db_path);
    curate_params p;
    curate_params_defaults(&p);
    curate_params_json(&p, &def);
    curate_params_free(&p);
    json_t *defaults = json_loads(def.buf, 0, NULL);
    json_t *used = params_json ? json_loads(params_json, 0, NULL) : NULL;
    const char *key;
    json_t *v;
    json_object_foreach(used, key, v) {
        json_t *d = json_object_get(defaults, key);
        if ((d && json_equal(d, v)) || (json_is_array(v) && json_array_size(v) == 0))
            continue;
        flag_name(key, &flag);
        value_text(v, &val);
        push_arg(s, flag.buf);
        push_arg(s, val.buf);
    }
    json_decref(defaults);
    json_decref(used);
    sb_free(&dir), sb_free(&exe), sb_free(&flag), sb_free(&val), sb_free(&def);
}

int curate_stale_count(sqlite3 *db, const char *db_path, stale_labels *s, strbuf *err)
{
    memset(s, 0, sizeof *s);
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT params_json, coalesce(max_candidate_id, 0),"
                                         " coalesce(max_verification_id, 0), id FROM curate_runs"
                                         " ORDER BY id DESC LIMIT 1", err);
    if (!st)
        return -1;
    char *params = NULL;
    long long max_candidate = 0, max_verification = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        s->curated = 1;
        params = xstrdup((const char *)sqlite3_column_text(st, 0));
        max_candidate = sqlite3_column_int64(st, 1);
        max_verification = sqlite3_column_int64(st, 2);
        s->curate_run = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    if (s->curated) {
        strbuf q = STRBUF_INIT;
        sb_addf(&q, "SELECT count(*) FROM candidates WHERE id > %lld", max_candidate);
        s->new_candidates = kc_db_query_int(db, q.buf);
        sb_reset(&q);
        sb_addf(&q, "SELECT count(DISTINCT candidate_id) FROM verifications WHERE id > %lld"
                    " AND candidate_id <= %lld", max_verification, max_candidate);
        s->reverified = kc_db_query_int(db, q.buf);
        sb_free(&q);
    }
    build_command(s, db_path, params);
    free(params);
    return 0;
}

int curate_stale_labels(const char *db_path, stale_labels *s, strbuf *err)
{
    sqlite3 *db;
    if (kc_db_open(db_path, KC_DB_READONLY, &db, err))
        return -1;
    int rc = curate_stale_count(db, db_path, s, err);
    kc_db_close(db);
    return rc;
}

void stale_command_line(const stale_labels *s, strbuf *out)
{
    sb_reset(out);
    for (int i = 0; i < s->argc; i++) {
        const char *a = s->argv[i];
        int plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789_./,:=+-") == strlen(a);
        if (i)
            sb_addch(out, ' ');
        if (plain) {
            sb_adds(out, a);
            continue;
        }
        sb_addch(out, '\'');
        for (; *a; a++)
            if (*a == '\'')
                sb_adds(out, "'\\''");
            else
                sb_addch(out, *a);
        sb_addch(out, '\'');
    }
}

void stale_labels_free(stale_labels *s)
{
    for (int i = 0; i < s->argc; i++)
        free(s->argv[i]);
    free(s->argv);
    memset(s, 0, sizeof *s);
}

