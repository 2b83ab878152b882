/* db: opening the kcorpus SQLite database (WAL, foreign keys, busy timeout),
 * applying schemas/kc.sql migrations by PRAGMA user_version, transactions and
 * the content-addressed blob store. */
#ifndef KC_DB_H
#define KC_DB_H
#include "common/hash.h"
#include "common/strbuf.h"
#include <sqlite3.h>

enum kc_db_mode {
    KC_DB_CREATE,   /* create if missing, migrate to the newest schema */
    KC_DB_EXISTING, /* must exist; migrate if older */
    KC_DB_READONLY  /* must exist and be at the newest schema; read only */
};

/* Refuses a SQLite file that is not a kcorpus database (an empty one only in KC_DB_CREATE);
 * KC_DB_READONLY opens a file or directory it cannot write immutable (archives, read-only
 * mounts); a failed KC_DB_CREATE of a new file removes it. */
int kc_db_open(const char *path, enum kc_db_mode mode, sqlite3 **out, strbuf *err);
/* The URI (SQLite URI filenames are on in every connection kc_db_open makes) that opens path
 * read only: mode=ro, or immutable=1 where the file or its directory cannot be written. */
void kc_db_readonly_uri(const char *path, strbuf *uri);
/* The schema version (PRAGMA user_version) of an existing file, read without writing it; -1 when
 * it cannot be read. */
int kc_db_file_version(const char *path);
/* Removes the database file and its -wal, -shm and -journal files. */
void kc_db_remove_files(const char *path);
void kc_db_close(sqlite3 *db);
int kc_db_exec(sqlite3 *db, const char *sql, strbuf *err);
int kc_db_begin(sqlite3 *db, strbuf *err);   /* BEGIN IMMEDIATE */
int kc_db_commit(sqlite3 *db, strbuf *err);
void kc_db_rollback(sqlite3 *db);
sqlite3_stmt *kc_db_prepare(sqlite3 *db, const char *sql, strbuf *err);
int kc_db_user_version(sqlite3 *db);
int kc_schema_newest_version(void);
/* The state of the reasoning of a response (r: the alias of a responses row, all NULL for none),
 * as kcurate stats and kexport tell it: 'none' (the model gave none, or there is no response),
 * 'truncated' (cut by the token limit before any answer text came, so the reasoning itself was
 * cut; or by kcollect's answer cap, which may have cut it) or 'complete'. */
#define KC_REASONING_STATE_SQL(r)                                                                \
    "CASE WHEN " r ".reasoning_sha IS NULL THEN 'none'"                                          \
    " WHEN " r ".finish_reason = 'answer_cap' OR (" r ".finish_reason = 'length' AND"            \
    " (SELECT size FROM blobs WHERE sha256 = " r ".content_sha) = 0) THEN 'truncated'"           \
    " ELSE 'complete' END"
/* Stores data once; writes its hex sha256 into sha (65 bytes). */
int kc_blob_put(sqlite3 *db, const void *data, size_t len, char *sha, strbuf *err);
int kc_blob_put_str(sqlite3 *db, const char *s, char *sha, strbuf *err);
/* Fails with "missing blob <sha>" when absent, and checks the content hash. */
int kc_blob_get(sqlite3 *db, const char *sha, strbuf *out, strbuf *err);
/* Binds text or NULL when s is NULL or empty. */
int kc_bind_text_or_null(sqlite3_stmt *st, int idx, const char *s);
/* Runs a one-row query returning an integer; -1 on error or no row. */
long long kc_db_query_int(sqlite3 *db, const char *sql);

#endif
