/* problem_db: registering a problem in the database (manifest, reference and
 * spec stored as blobs), shared by every tool that adds candidates. */
#include "common/db.h"
#include "common/error.h"
#include "common/problem.h"
#include "common/prompt_text.h"

int problem_register(sqlite3 *db, const problem *p, strbuf *err)
{
    char manifest_sha[SHA256_HEX_LEN + 1], ref_sha[SHA256_HEX_LEN + 1], spec_sha[SHA256_HEX_LEN + 1];
    strbuf spec = STRBUF_INIT;
    problem_spec_text(p, &spec);
    int rc = kc_blob_put(db, p->manifest_text.buf, p->manifest_text.len, manifest_sha, err) ||
             kc_blob_put(db, sb_str(&p->reference_source), p->reference_source.len, ref_sha, err) ||
             kc_blob_put(db, spec.buf, spec.len, spec_sha, err);
    sb_free(&spec);
    if (rc)
        return -1;
    sqlite3_stmt *st = kc_db_prepare(db,
        "INSERT INTO problems(id, suite, level, title, manifest_sha, reference_sha, spec_sha) "
        "VALUES (?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET manifest_sha = excluded.manifest_sha, "
        "reference_sha = excluded.reference_sha, spec_sha = excluded.spec_sha, "
        "title = excluded.title", err);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, p->suite, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, p->level);
    sqlite3_bind_text(st, 4, p->title, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, manifest_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, ref_sha, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, spec_sha, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? 0 : kc_fail(err, "database: %s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return rc;
}

int problem_load_by_id(const char *id, problem *p, strbuf *err)
{
    strbuf root = STRBUF_INIT, path = STRBUF_INIT;
    problems_root(&root);
    int rc = problem_manifest_path(root.buf, id, &path, err) || problem_load(path.buf, p, err);
    sb_free(&root), sb_free(&path);
    return rc ? -1 : 0;
}
