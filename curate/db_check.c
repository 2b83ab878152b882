/* db_check: the integrity checks of a kcorpus database read as untrusted input (see db_check.h).
 * Every check reads the attached database through SQL whose rules come from this build's schema
 * (the connection's main database), never from the checked database's own declarations. */
#include "curate/db_check.h"
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ID_BYTES 256
#define MAX_SHOWN 3 /* problems of one check named in the report */

void db_check_result_free(db_check_result *r)
{
    sb_free(&r->report);
    sb_free(&r->found);
}

/* ---- SQL functions ---- */

static void fn_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int t = sqlite3_value_type(argv[0]);
    if (t != SQLITE_BLOB && t != SQLITE_TEXT) {
        sqlite3_result_null(ctx);
        return;
    }
    const void *data = t == SQLITE_BLOB ? sqlite3_value_blob(argv[0])
                                        : (const void *)sqlite3_value_text(argv[0]);
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(data ? data : "", (size_t)sqlite3_value_bytes(argv[0]), hex);
    sqlite3_result_text(ctx, hex, SHA256_HEX_LEN, SQLITE_TRANSIENT);
}

static int is_sha256_hex(const unsigned char *s, int len)
{
    if (!s || len != SHA256_HEX_LEN)
        return 0;
    for (int i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static void fn_is_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int ok = sqlite3_value_type(argv[0]) == SQLITE_TEXT &&
             is_sha256_hex(sqlite3_value_text(argv[0]), sqlite3_value_bytes(argv[0]));
    sqlite3_result_int(ctx, ok);
}

/* An id (problem id, database uuid): text of 1 to MAX_ID_BYTES bytes without control characters. */
static void fn_bad_id(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    int bad = sqlite3_value_type(argv[0]) != SQLITE_TEXT;
    const unsigned char *s = bad ? NULL : sqlite3_value_text(argv[0]);
    int len = bad ? 0 : sqlite3_value_bytes(argv[0]);
    bad = bad || !s || len == 0 || len > MAX_ID_BYTES;
    for (int i = 0; !bad && i < len; i++)
        bad = s[i] < 0x20 || s[i] == 0x7f;
    sqlite3_result_int(ctx, bad);
}

int db_check_functions(sqlite3 *db, strbuf *err)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY;
    if (sqlite3_create_function(db, "kc_sha256", 1, flags, NULL, fn_sha256, NULL, NULL) ||
        sqlite3_create_function(db, "kc_is_sha256", 1, flags, NULL, fn_is_sha256, NULL, NULL) ||
        sqlite3_create_function(db, "kc_bad_id", 1, flags, NULL, fn_bad_id, NULL, NULL))
        return kc_fail(err, "database: registering check functions: %s", sqlite3_errmsg(db));
    return 0;
}

/* ---- reporting ---- */

/* Appends s with control characters shown as '?' (values come from the checked database). */
static void add_shown(strbuf *out, const char *s)
{
    for (; s && *s; s++)
        sb_addch(out, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* One line of the report; a problem (bad) is counted and the first one kept. */
static void report_line(db_check_result *r, int bad, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report_line(db_check_result *r, int bad, const char *fmt, ...)
{
    strbuf line = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&line, fmt, ap);
    va_end(ap);
    add_shown(&r->report, line.buf);
    sb_addch(&r->report, '\n');
    if (bad) {
        if (r->problems++)
            sb_addch(&r->found, '\n');
        add_shown(&r->found, line.buf);
    }
    sb_free(&line);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "NULL";
}

/* ---- the checks ---- */

static void check_integrity(sqlite3 *db, const char *schema, db_check_result *r)
{
    strbuf sql = STRBUF_INIT, found = STRBUF_INIT;
    sb_addf(&sql, "PRAGMA %s.integrity_check(%d)", schema, MAX_SHOWN);
    sqlite3_stmt *st = NULL;
    int n = 0, rc = sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        if (strcmp(col_text(st, 0), "ok"))
            sb_addf(&found, "%s%s", n++ ? "; " : "", col_text(st, 0));
    if (rc != SQLITE_OK || sqlite3_errcode(db) == SQLITE_CORRUPT || sqlite3_errcode(db) == SQLITE_NOTADB)
        report_line(r, 1, "integrity_check: cannot run: %s", sqlite3_errmsg(db));
    else if (n)
        report_line(r, 1, "integrity_check: %s", found.buf);
    else
        report_line(r, 0, "integrity_check: ok");
    sqlite3_finalize(st);
    sb_free(&sql), sb_free(&found);
}

static void check_version(sqlite3 *db, const char *schema, db_check_result *r)
{
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "PRAGMA %s.user_version", schema);
    long long have = kc_db_query_int(db, sql.buf);
    int want = kc_schema_newest_version();
    if (have == want)
        report_line(r, 0, "schema version: %lld (this build: %d)", have, want);
    else
        report_line(r, 1, "schema version: %lld, this build expects %d%s", have, want,
                    have >= 1 && have < want ? " (older: a writing command migrates it; merge "
                                               "migrates a copy)" : "");
    sb_free(&sql);
}

/* A table's columns as "name type notnull pk, ..." in schema. */
static void table_signature(sqlite3 *db, const char *schema, const char *table, strbuf *out)
{
    sqlite3_stmt *st = NULL;
    sb_reset(out);
    sqlite3_prepare_v2(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1, ?2) "
                           "ORDER BY cid", -1, &st, NULL);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
    while (st && sqlite3_step(st) == SQLITE_ROW)
        sb_addf(out, "%s%s %s %s %s", out->len ? ", " : "", col_text(st, 0), col_text(st, 1),
                col_text(st, 2), col_text(st, 3));
    sqlite3_finalize(st);
}

/* The kind of object (table, view, ...) named table in schema; "" when absent. */
static void object_type(sqlite3 *db, const char *schema, const char *table, strbuf *out)
{
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT type FROM %s.sqlite_master WHERE name = ?1 COLLATE NOCASE", schema);
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sb_reset(out);
    if (st && sqlite3_step(st) == SQLITE_ROW)
        sb_adds(out, col_text(st, 0));
    sqlite3_finalize(st);
    sb_free(&sql);
}

/* Whether table in schema has every column this build's has. */
static int has_columns(sqlite3 *db, const char *schema, const char *table)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1, 'main') m WHERE NOT EXISTS "
                           "(SELECT 1 FROM pragma_table_info(?1, ?2) s WHERE s.name = m.name)",
                       -1, &st, NULL);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, schema, -1, SQLITE_STATIC);
    int all = st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
    sqlite3_finalize(st);
    return all;
}

/* Compares each of this build's tables with the checked database's; the names of those with
 * every column of ours go to good ("\nname\n" each), to have their values checked. */
static void check_tables(sqlite3 *db, const char *schema, db_check_result *r, strbuf *good)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "SELECT name FROM main.sqlite_master WHERE type = 'table' AND "
                           "name NOT LIKE 'sqlite_%' ORDER BY name", -1, &st, NULL);
    strbuf want = STRBUF_INIT, have = STRBUF_INIT, type = STRBUF_INIT;
    int tables = 0, bad = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *t = col_text(st, 0);
        tables++;
        object_type(db, schema, t, &type);
        table_signature(db, "main", t, &want);
        table_signature(db, schema, t, &have);
        if (strcmp(type.buf ? type.buf : "", "table")) {
            bad++, report_line(r, 1, "schema: table '%s' is %s%s, not a table", t,
                               type.len ? "a " : "", type.len ? type.buf : "missing");
            continue;
        }
        if (strcmp(sb_str(&want), sb_str(&have)))
            bad++, report_line(r, 1, "schema: table '%s' is declared otherwise than in this build "
                                     "(%.300s; expected %.300s)", t, sb_str(&have), sb_str(&want));
        if (has_columns(db, schema, t)) /* its values are checked by this build's rules */
            sb_addf(good, "\n%s\n", t);
    }
    sqlite3_finalize(st);
    if (!bad)
        report_line(r, 0, "schema: %d tables as this build's", tables);
    sb_free(&want), sb_free(&have), sb_free(&type);
}

static void check_foreign_keys(sqlite3 *db, const char *schema, db_check_result *r)
{
    strbuf sql = STRBUF_INIT, first = STRBUF_INIT;
    sb_addf(&sql, "PRAGMA %s.foreign_key_check", schema);
    sqlite3_stmt *st = NULL;
    int n = 0, rc = sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        if (!n++)
            sb_addf(&first, "table %s row %s refers to a missing %s row", col_text(st, 0),
                    sqlite3_column_type(st, 1) == SQLITE_NULL ? "(without rowid)" : col_text(st, 1),
                    col_text(st, 2));
    if (rc != SQLITE_OK)
        report_line(r, 1, "foreign_key_check: cannot run: %s", sqlite3_errmsg(db));
    else if (n)
        report_line(r, 1, "foreign_key_check: %d violation(s); first: %s", n, first.buf);
    else
        report_line(r, 0, "foreign_key_check: ok");
    sqlite3_finalize(st);
    sb_free(&sql), sb_free(&first);
}

static void check_identity(sqlite3 *db, const char *schema, db_check_result *r)
{
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT value, typeof(value), kc_bad_id(value) FROM %s.db_info "
                  "WHERE key = 'uuid'", schema);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL) != SQLITE_OK)
        report_line(r, 1, "identity: cannot read: %s", sqlite3_errmsg(db));
    else if (sqlite3_step(st) != SQLITE_ROW)
        report_line(r, 1, "identity: database has no identity (table db_info has no row 'uuid')");
    else if (sqlite3_column_int(st, 2))
        report_line(r, 1, "identity: database has no identity (table db_info row 'uuid': value "
                          "is %s, not an id)", col_text(st, 1));
    else
        report_line(r, 0, "identity: %s", col_text(st, 0));
    sqlite3_finalize(st);
    sb_free(&sql);
}

/* ---- values: each column's rules, from this build's declaration of it ---- */

typedef struct column_info {
    const char *table, *name, *type;
    int notnull, pk, refs_blob;
} column_info;

static int is_hash_column(const column_info *c)
{
    return c->refs_blob || (!strcmp(c->table, "blobs") && !strcmp(c->name, "sha256")) ||
           !strcmp(c->name, "request_hash");
}

static int is_id_column(const column_info *c)
{
    return !strcmp(c->name, "problem_id") || (!strcmp(c->table, "problems") && !strcmp(c->name, "id")) ||
           !strcmp(c->name, "origin_uuid");
}

/* The CASE branches that name what is wrong with a value of column c (in row s). */
static void column_rules(const column_info *c, strbuf *cases)
{
    const char *n = c->name;
    if (c->notnull || c->pk)
        sb_addf(cases, " WHEN s.\"%s\" IS NULL THEN '%s is NULL'", n, n);
    const char *types = !strcmp(c->type, "INTEGER") ? "'integer'"
                        : !strcmp(c->type, "REAL")  ? "'integer','real'"
                        : !strcmp(c->type, "TEXT")  ? "'text'"
                        : !strcmp(c->type, "BLOB")  ? "'blob'" : NULL;
    if (types)
        sb_addf(cases, " WHEN s.\"%s\" IS NOT NULL AND typeof(s.\"%s\") NOT IN (%s) THEN "
                       "'%s is ' || typeof(s.\"%s\") || ', not %s'", n, n, types, n, n, c->type);
    if (is_hash_column(c))
        sb_addf(cases, " WHEN s.\"%s\" IS NOT NULL AND NOT kc_is_sha256(s.\"%s\") THEN "
                       "'%s is not a sha256 hash (64 lowercase hex digits)'", n, n, n);
    if (is_id_column(c))
        sb_addf(cases, " WHEN s.\"%s\" IS NOT NULL AND kc_bad_id(s.\"%s\") THEN '%s is not an id "
                       "(empty, over %d bytes, or control characters)'", n, n, n, MAX_ID_BYTES);
    if (!strcmp(c->table, "blobs") && !strcmp(n, "size"))
        sb_adds(cases, " WHEN s.size IS NOT length(s.data) THEN 'size is not the length of data'");
    if (!strcmp(c->table, "merge_map") && !strcmp(n, "tbl"))
        sb_adds(cases, " WHEN s.tbl NOT IN ('runs','trajectories','requests','responses',"
                       "'candidates','turns','compiles','verifications','timings','race_checks') THEN "
                       "'tbl is not a merged table'");
}

/* Whether column name of table references blobs(sha256). */
static int references_blob(sqlite3 *db, const char *table, const char *name)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_foreign_key_list(?1, 'main') "
                           "WHERE \"from\" = ?2 AND \"table\" = 'blobs'", -1, &st, NULL);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    int yes = st && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* The query listing (row key, what is wrong) for every bad row of table in schema; 0 when the
 * table has no rule. */
static int build_value_query(sqlite3 *db, const char *schema, const char *table, strbuf *sql)
{
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1, 'main') "
                           "ORDER BY cid", -1, &st, NULL);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    strbuf cases = STRBUF_INIT, key = STRBUF_INIT;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        column_info c = {table, col_text(st, 0), col_text(st, 1), sqlite3_column_int(st, 2),
                         sqlite3_column_int(st, 3), 0};
        c.refs_blob = references_blob(db, table, c.name);
        column_rules(&c, &cases);
        if (c.pk)
            sb_addf(&key, "%s'%s=' || CASE WHEN typeof(s.\"%s\") IN ('integer', 'real') "
                          "THEN s.\"%s\" ELSE coalesce(quote(substr(s.\"%s\", 1, 80)), 'NULL') END",
                    key.len ? " || ' ' || " : "", c.name, c.name, c.name, c.name);
    }
    sqlite3_finalize(st);
    sb_reset(sql);
    if (cases.len)
        sb_addf(sql, "SELECT k, why FROM (SELECT %s AS k, CASE%s END AS why FROM %s.\"%s\" s) "
                     "WHERE why IS NOT NULL", key.len ? key.buf : "'rowid=' || s.rowid",
                cases.buf, schema, table);
    sb_free(&cases), sb_free(&key);
    return sql->len > 0;
}

/* Checks one table's values; returns the bad rows (first ones named in the report). */
static int check_table_values(sqlite3 *db, const char *schema, const char *table,
                              db_check_result *r)
{
    strbuf sql = STRBUF_INIT;
    if (!build_value_query(db, schema, table, &sql)) {
        sb_free(&sql);
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int bad = 0;
    if (sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL) != SQLITE_OK) {
        report_line(r, 1, "values: table %s cannot be read: %s", table, sqlite3_errmsg(db));
        bad = 1;
    }
    int rc;
    while (st && (rc = sqlite3_step(st)) == SQLITE_ROW)
        if (bad++ < MAX_SHOWN)
            report_line(r, 1, "values: table %s row %s: %s", table, col_text(st, 0), col_text(st, 1));
    if (st && rc != SQLITE_DONE)
        report_line(r, 1, "values: table %s cannot be read: %s", table, sqlite3_errmsg(db)), bad++;
    else if (bad > MAX_SHOWN)
        report_line(r, 0, "values: table %s: %d more bad row(s)", table, bad - MAX_SHOWN);
    sqlite3_finalize(st);
    sb_free(&sql);
    return bad;
}

static void check_values(sqlite3 *db, const char *schema, const strbuf *good, db_check_result *r)
{
    int tables = 0, bad = 0;
    const char *p = sb_str(good);
    while (*p == '\n' && p[1]) {
        const char *end = strchr(p + 1, '\n');
        char *table = xstrndup(p + 1, (size_t)(end - p - 1));
        bad += check_table_values(db, schema, table, r);
        tables++;
        free(table);
        p = end + 1;
        if (*p != '\n')
            break;
    }
    if (!bad)
        report_line(r, 0, "values: every value of %d tables has its type, no NULL where one is "
                          "not allowed, hashes and ids well formed", tables);
}

static void check_blobs(sqlite3 *db, const char *schema, const strbuf *good, db_check_result *r)
{
    if (!strstr(sb_str(good), "\nblobs\n"))
        return;
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT quote(substr(sha256, 1, 80)), kc_sha256(data) IS sha256, kc_sha256(data) "
                  "FROM %s.blobs", schema);
    sqlite3_stmt *st = NULL;
    long n = 0, bad = 0;
    int rc = sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL) == SQLITE_OK ? SQLITE_ROW : SQLITE_ERROR;
    while (rc == SQLITE_ROW && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        n++;
        if (!sqlite3_column_int(st, 1) && bad++ < MAX_SHOWN)
            report_line(r, 1, "blobs: table blobs row sha256=%s: its data hashes to %s (the key "
                              "is not the sha256 of the data)", col_text(st, 0), col_text(st, 2));
    }
    if (rc != SQLITE_DONE)
        report_line(r, 1, "blobs: cannot be read: %s", sqlite3_errmsg(db));
    else if (bad)
        report_line(r, 1, "blobs: %ld of %ld rows' keys are not the sha256 of their data", bad, n);
    else
        report_line(r, 0, "blobs: %ld checked, every key is the sha256 of its data", n);
    sqlite3_finalize(st);
    sb_free(&sql);
}

/* An empty file (no table, user_version 0): one problem, said once, instead of every table
 * missing. */
static int is_empty(sqlite3 *db, const char *schema)
{
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT count(*) FROM %s.sqlite_master", schema);
    long long objects = kc_db_query_int(db, sql.buf);
    sb_reset(&sql);
    sb_addf(&sql, "PRAGMA %s.user_version", schema);
    long long version = kc_db_query_int(db, sql.buf);
    sb_free(&sql);
    return objects == 0 && version == 0;
}

int db_check_attached(sqlite3 *db, const char *schema, db_check_result *r)
{
    if (is_empty(db, schema)) {
        report_line(r, 1, "empty: no tables, not a kcorpus database (kcollect, kverify import "
                          "and kcurate merge -o create one)");
        return r->problems;
    }
    strbuf good = STRBUF_INIT;
    check_integrity(db, schema, r);
    check_version(db, schema, r);
    check_tables(db, schema, r, &good);
    check_foreign_keys(db, schema, r);
    check_identity(db, schema, r);
    check_values(db, schema, &good, r);
    check_blobs(db, schema, &good, r);
    sb_free(&good);
    return r->problems;
}

int db_check_file(const char *path, db_check_result *r, strbuf *err)
{
    sqlite3 *db = NULL;
    strbuf uri = STRBUF_INIT;
    if (access(path, R_OK) != 0)
        return kc_fail(err, "cannot read '%s': %s", path, strerror(errno));
    if (kc_db_open(":memory:", KC_DB_CREATE, &db, err) || db_check_functions(db, err))
        return kc_db_close(db), -1;
    kc_db_readonly_uri(path, &uri);
    sqlite3_stmt *att = kc_db_prepare(db, "ATTACH DATABASE ? AS checked", err);
    int rc = att ? 0 : -1;
    if (att) {
        sqlite3_bind_text(att, 1, uri.buf, -1, SQLITE_STATIC);
        if (sqlite3_step(att) != SQLITE_DONE)
            rc = kc_fail(err, "'%s' is not a kcorpus database (SQLite: %s)", path,
                         sqlite3_errmsg(db));
        sqlite3_finalize(att);
    }
    if (!rc)
        db_check_attached(db, "checked", r);
    kc_db_close(db);
    sb_free(&uri);
    return rc;
}
