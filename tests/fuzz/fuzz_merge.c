/* fuzz_merge: libFuzzer target for `kcurate merge` reading a source database (curate/merge.c,
 * curate/db_check.c): sources come from other machines, so every value is untrusted. Input: a
 * SQL script run against a fresh database at our schema (schemas/kc.sql), as a tampered source
 * could have been made (statements run one after another; a failing one is skipped; ATTACH and
 * VACUUM INTO are refused, values are capped at 1 MB and a script at 300k SQLite steps). The
 * source is then merged into a fresh destination. Properties: no crash, UB or leak; a refused
 * merge says why and leaves the destination without a copied row; an accepted one leaves a
 * destination that passes every check of `kcurate verify-db`, and merging the source again adds
 * nothing. FUZZ_MERGE_VERBOSE=1 prints what merge said of each input. */
#include "common/error.h"
#include "curate/db_check.h"
#include "curate/merge.h"
#include "fuzz_common.h"

#include <unistd.h>

static char dir[64], src_path[96], dst_path[96], src_template[96], dst_template[96];

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    if (!in || !out)
        abort();
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            abort();
    fclose(in);
    fclose(out);
}

/* A database at our schema, closed (WAL checkpointed), to copy for every input. */
static void make_template(const char *path)
{
    sqlite3 *db;
    strbuf err = STRBUF_INIT;
    if (kc_db_open(path, KC_DB_CREATE, &db, &err) || kc_db_exec(db, "PRAGMA journal_mode = DELETE", &err)) {
        fprintf(stderr, "fuzz_merge: %s\n", err.buf);
        abort();
    }
    kc_db_close(db);
    sb_free(&err);
}

/* The scratch directory goes when the fuzzer exits (a crash leaves it, for the replay). */
static void remove_scratch(void)
{
    const char *files[] = {src_path, dst_path, src_template, dst_template};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        kc_db_remove_files(files[i]);
    rmdir(dir);
}

static void setup(void)
{
    if (dir[0])
        return;
    kc_set_progname("fuzz_merge");
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"; /* no disk syncs */
    snprintf(dir, sizeof dir, "%s/kcfuzz-merge-XXXXXX", tmp);
    if (!mkdtemp(dir))
        abort();
    snprintf(src_path, sizeof src_path, "%s/src.db", dir);
    snprintf(dst_path, sizeof dst_path, "%s/dst.db", dir);
    snprintf(src_template, sizeof src_template, "%s/src.template", dir);
    snprintf(dst_template, sizeof dst_template, "%s/dst.template", dir);
    make_template(src_template); /* two templates: two identities */
    make_template(dst_template);
    atexit(remove_scratch);
}

static int deny_files(void *ctx, int action, const char *a, const char *b, const char *c, const char *d)
{
    (void)ctx, (void)a, (void)b, (void)c, (void)d;
    return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

static int step_budget(void *ctx)
{
    return ++*(long *)ctx > 300; /* called every 1000 steps */
}

/* Runs the script's statements on the source, skipping the ones that fail. */
static void build_source(const char *script)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(src_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        abort();
    long steps = 0;
    sqlite3_set_authorizer(db, deny_files, NULL);
    sqlite3_progress_handler(db, 1000, step_budget, &steps);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
    sqlite3_exec(db, "PRAGMA synchronous = OFF", NULL, NULL, NULL);
    const char *tail = script;
    while (tail && *tail) {
        sqlite3_stmt *st = NULL;
        const char *next = NULL;
        if (sqlite3_prepare_v2(db, tail, -1, &st, &next) != SQLITE_OK || next == tail) {
            sqlite3_finalize(st);
            break;
        }
        while (st && sqlite3_step(st) == SQLITE_ROW)
            ;
        sqlite3_finalize(st);
        tail = next;
    }
    sqlite3_close(db);
}

/* Rows in the destination's tables other than its identity. */
static long long copied_rows(sqlite3 *db)
{
    return kc_db_query_int(db, "SELECT (SELECT count(*) FROM blobs) + (SELECT count(*) FROM problems)"
                               " + (SELECT count(*) FROM runs) + (SELECT count(*) FROM requests)"
                               " + (SELECT count(*) FROM candidates) + (SELECT count(*) FROM merge_map)"
                               " + (SELECT count(*) FROM response_cache)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    setenv("TMPDIR", dir, 1); /* merge's migrated copies of older sources */
    kc_db_remove_files(src_path);
    kc_db_remove_files(dst_path);
    copy_file(src_template, src_path);
    copy_file(dst_template, dst_path);
    char *script = fz_cstr(data, size);
    build_source(script);
    free(script);

    sqlite3 *dst;
    strbuf err = STRBUF_INIT;
    if (kc_db_open(dst_path, KC_DB_EXISTING, &dst, &err))
        abort();
    const char *paths[] = {src_path};
    curate_merge_counts counts = {0};
    int refused = curate_merge_all(dst, paths, 1, &counts, &err);
    if (getenv("FUZZ_MERGE_VERBOSE")) /* replaying one input: what merge said */
        fprintf(stderr, "fuzz_merge: %s\n", refused ? err.buf : "merged");
    if (refused) {
        FZ_CHECK(err.len > 0);
        FZ_CHECK(copied_rows(dst) == 0);
    } else {
        db_check_result r = {0};
        FZ_CHECK(db_check_attached(dst, "main", &r) == 0 || (fprintf(stderr, "%s\n", r.report.buf), 0));
        db_check_result_free(&r);
        curate_merge_counts again = {0};
        FZ_CHECK(curate_merge_all(dst, paths, 1, &again, &err) == 0);
        FZ_CHECK(again.rows_added == 0 && again.blobs_added == 0 && again.problems_added == 0);
    }
    kc_db_close(dst);
    sb_free(&err);
    return 0;
}
