/* db_check: what a kcorpus database must pass before it is trusted (`kcurate verify-db`, and
 * `kcurate merge` on each source before it copies a row). The checked database is attached to a
 * connection whose main database is at this build's schema, and everything read from it is
 * untrusted input: SQLite's integrity_check, the schema version, each table's columns against
 * this build's, foreign_key_check, the identity (db_info uuid), every value's type, NULLs and
 * lengths (keys that must be sha256 hashes, problem ids without control characters), and every
 * blob's hash. */
#ifndef KC_CURATE_DB_CHECK_H
#define KC_CURATE_DB_CHECK_H
#include "common/db.h"

typedef struct db_check_result {
    int problems;  /* checks that found something (0: the database passed) */
    strbuf report; /* one line per check */
    strbuf found;  /* the problems found, one a line, naming their table and row */
} db_check_result;

void db_check_result_free(db_check_result *r);
/* Registers the SQL functions the checks (and merge's blob copy) use on db: kc_sha256(data),
 * kc_is_sha256(text), kc_bad_id(text). */
int db_check_functions(sqlite3 *db, strbuf *err);
/* Checks the database attached to db as schema against db's main database (this build's
 * schema); fills r. Returns r->problems. */
int db_check_attached(sqlite3 *db, const char *schema, db_check_result *r);
/* Opens path read only and checks it (kcurate verify-db). -1 (err) when it cannot be attached. */
int db_check_file(const char *path, db_check_result *r, strbuf *err);

#endif
