/* db: SQLite database access shared by every tool (see db.h). */
#include "common/db.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char kc_schema_sql[]; /* generated from schemas/kc.sql */

static const char *migration_marker = "-- migration ";

/* Finds migration n's text in the schema; returns its start and sets *len. */
static const char *find_migration(int n, size_t *len)
{
    const char *p = kc_schema_sql;
    while ((p = strstr(p, migration_marker)) != NULL) {
        int num = atoi(p + strlen(migration_marker));
        const char *body = strchr(p, '\n');
        if (!body)
            return NULL;
        const char *next = strstr(body, migration_marker);
        if (num == n) {
            *len = next ? (size_t)(next - body) : strlen(body);
            return body;
        }
        p = body;
    }
    return NULL;
}

int kc_schema_newest_version(void)
{
    int n = 0;
    size_t len;
    while (find_migration(n + 1, &len))
        n++;
    return n;
}

int kc_db_exec(sqlite3 *db, const char *sql, strbuf *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        kc_fail(err, "database: %s", msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int kc_db_user_version(sqlite3 *db) { return (int)kc_db_query_int(db, "PRAGMA user_version"); }

long long kc_db_query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int apply_migration(sqlite3 *db, int n, strbuf *err)
{
    size_t len;
    const char *body = find_migration(n, &len);
    strbuf sql = STRBUF_INIT;
    sb_adds(&sql, "BEGIN IMMEDIATE;\n");
    sb_add(&sql, body, len);
    sb_addf(&sql, "\nPRAGMA user_version = %d;\nCOMMIT;\n", n);
    int rc = kc_db_exec(db, sql.buf, err);
    if (rc)
        kc_db_exec(db, "ROLLBACK", NULL);
    sb_free(&sql);
    return rc;
}

static int migrate(sqlite3 *db, enum kc_db_mode mode, const char *path, strbuf *err)
{
    int have = kc_db_user_version(db);
    int newest = kc_schema_newest_version();
    if (have < 0)
        return kc_fail(err, "'%s' is not a readable kcorpus database: %s", path,
                       sqlite3_errmsg(db));
    if (have > newest)
        return kc_fail(err, "'%s' has schema version %d, newer than this tool's %d", path, have,
                       newest);
    if (have == newest)
        return 0;
    if (mode == KC_DB_READONLY)
        return kc_fail(err, "'%s' has schema version %d; run a writing tool to migrate to %d",
                       path, have, newest);
    for (int n = have + 1; n <= newest; n++)
        if (apply_migration(db, n, err))
            return -1;
    return 0;
}

/* Ours: our tables and a user_version; an empty database (no table, version 0) only when the
 * command creates. Anything else is some other program's SQLite file: never touched. */
static int check_ours(sqlite3 *db, enum kc_db_mode mode, const char *path, strbuf *err)
{
    long long tables = kc_db_query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
    if (tables < 0) /* a text file, a truncated or encrypted database: SQLite's words */
        return kc_fail(err, "'%s' is not a kcorpus database (SQLite: %s)", path,
                       sqlite3_errmsg(db));
    int version = kc_db_user_version(db);
    if (tables == 0 && version == 0) {
        if (mode == KC_DB_CREATE)
            return 0;
        return kc_fail(err, "'%s' is empty, not a kcorpus database (kcollect and kverify import "
                            "create one)", path);
    }
    long long ours = kc_db_query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                         "AND name IN ('blobs', 'problems', 'candidates')");
    if (ours != 3) /* our tables with a wrong version: migrate() says which */
        return kc_fail(err, "'%s' is a SQLite database but not a kcorpus one (no kcorpus schema): "
                            "refusing to use it", path);
    return 0;
}

/* A file or directory we may not write (an archived corpus, a read-only mount): SQLite cannot
 * make the -shm file a WAL database needs, so the file is opened immutable (nobody changes it). */
static int cannot_write(const char *path)
{
    if (access(path, W_OK) != 0)
        return 1;
    strbuf dir = STRBUF_INIT;
    sb_adds(&dir, path);
    char *slash = strrchr(dir.buf, '/');
    if (!slash)
        sb_reset(&dir), sb_adds(&dir, ".");
    else
        sb_setlen(&dir, slash == dir.buf ? 1 : (size_t)(slash - dir.buf));
    int ro = access(dir.buf, W_OK) != 0;
    sb_free(&dir);
    return ro;
}

/* path as a SQLite URI filename ("file:" with %, ? and # escaped), query appended when not empty.
 * Every connection is opened with URI filenames on, so that an ATTACH can name its mode. */
static void path_uri(const char *path, const char *query, strbuf *uri)
{
    sb_adds(uri, path[0] == '/' ? "file://" : "file:"); /* an empty authority: "//x" stays a path */
    for (const char *p = path; *p; p++)
        if (*p == '%' || *p == '?' || *p == '#')
            sb_addf(uri, "%%%02X", (unsigned char)*p);
        else
            sb_addch(uri, *p);
    if (query && *query)
        sb_addf(uri, "?%s", query);
}

void kc_db_readonly_uri(const char *path, strbuf *uri)
{
    sb_reset(uri);
    path_uri(path, access(path, R_OK) == 0 && cannot_write(path) ? "immutable=1" : "mode=ro", uri);
}

int kc_db_open(const char *path, enum kc_db_mode mode, sqlite3 **out, strbuf *err)
{
    int flags = SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI;
    strbuf uri = STRBUF_INIT;
    if (mode == KC_DB_READONLY) {
        flags |= SQLITE_OPEN_READONLY;
        kc_db_readonly_uri(path, &uri);
    } else {
        flags |= SQLITE_OPEN_READWRITE | (mode == KC_DB_CREATE ? SQLITE_OPEN_CREATE : 0);
        path_uri(path, NULL, &uri);
    }
    const char *name = uri.buf;
    int existed = access(path, F_OK) == 0;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(name, &db, flags, NULL);
    sb_free(&uri);
    if (rc != SQLITE_OK) {
        kc_fail(err, "cannot open database '%s': %s", path, db ? sqlite3_errmsg(db) : "no memory");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 30000);
    if (mode != KC_DB_READONLY && existed && cannot_write(path)) {
        /* SQLite would open it read-only and fail at the first write ("attempt to write a
         * readonly database"); a WAL database also needs its directory writable */
        kc_fail(err, "'%s' is read-only to this user (the file or its directory is not writable), "
                     "and this command writes to the database; kcurate stats, report and kexport "
                     "read such a database, or copy it somewhere writable", path);
        sqlite3_close(db);
        return -1;
    }
    const char *pragmas = mode == KC_DB_READONLY
                              ? "PRAGMA foreign_keys = ON;"
                              : "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                                "PRAGMA foreign_keys = ON;";
    if (check_ours(db, mode, path, err) || kc_db_exec(db, pragmas, err) ||
        migrate(db, mode, path, err)) {
        sqlite3_close(db);
        if (!existed && mode == KC_DB_CREATE) /* a failed create leaves nothing behind */
            kc_db_remove_files(path);
        return -1;
    }
    *out = db;
    return 0;
}

int kc_db_file_version(const char *path)
{
    strbuf uri = STRBUF_INIT;
    kc_db_readonly_uri(path, &uri);
    sqlite3 *db = NULL;
    int v = -1;
    if (access(path, R_OK) == 0 &&
        sqlite3_open_v2(uri.buf, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK)
        v = kc_db_user_version(db);
    sqlite3_close(db);
    sb_free(&uri);
    return v;
}

void kc_db_remove_files(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    strbuf p = STRBUF_INIT;
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        sb_reset(&p);
        sb_addf(&p, "%s%s", path, suffix[i]);
        unlink(p.buf);
    }
    sb_free(&p);
}

void kc_db_close(sqlite3 *db)
{
    if (db)
        sqlite3_close(db);
}

int kc_db_begin(sqlite3 *db, strbuf *err) { return kc_db_exec(db, "BEGIN IMMEDIATE", err); }
int kc_db_commit(sqlite3 *db, strbuf *err) { return kc_db_exec(db, "COMMIT", err); }
void kc_db_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        kc_db_exec(db, "ROLLBACK", NULL);
}

sqlite3_stmt *kc_db_prepare(sqlite3 *db, const char *sql, strbuf *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        kc_fail(err, "database: %s (in: %.80s)", sqlite3_errmsg(db), sql);
        return NULL;
    }
    return st;
}

int kc_bind_text_or_null(sqlite3_stmt *st, int idx, const char *s)
{
    if (!s || !*s)
        return sqlite3_bind_null(st, idx);
    return sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT);
}

int kc_blob_put(sqlite3 *db, const void *data, size_t len, char *sha, strbuf *err)
{
    sha256_hex(data, len, sha);
    sqlite3_stmt *st =
        kc_db_prepare(db, "INSERT OR IGNORE INTO blobs(sha256, size, data) VALUES (?,?,?)", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)len);
    sqlite3_bind_blob64(st, 3, len ? data : "", (sqlite3_uint64)len, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: storing blob: %s",
                                                           sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

int kc_blob_put_str(sqlite3 *db, const char *s, char *sha, strbuf *err)
{
    return kc_blob_put(db, s, strlen(s), sha, err);
}

int kc_blob_get(sqlite3 *db, const char *sha, strbuf *out, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT data FROM blobs WHERE sha256 = ?", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        if (rc == SQLITE_DONE)
            return kc_fail(err, "missing blob %s", sha);
        return kc_fail(err, "database: reading blob %s: %s", sha, sqlite3_errmsg(db));
    }
    sb_reset(out);
    sb_add(out, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
    sqlite3_finalize(st);
    char check[SHA256_HEX_LEN + 1];
    sha256_hex(out->buf, out->len, check);
    if (strcmp(check, sha) != 0)
        return kc_fail(err, "blob %s is corrupt (content hashes to %s)", sha, check);
    return 0;
}
