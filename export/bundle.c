/* bundle: staging, manifest, datasheet, final move and tar of an export (see bundle.h). */
#include "export/bundle.h"
#include "common/db.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/hash.h"
#include "common/race_needs.h"
#include "export/card.h"
#include "export/datasheet.h"
#include "export/dispatch.h"
#include "export/explain.h"
#include "export/provenance.h"
#include "export/reasoning.h"
#include "export/records.h"
#include "export/shards.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The source database's identity: its uuid and what its content was when exported. */
static json_t *source_identity(sqlite3 *db, const char *uuid)
{
    long long run = kc_db_query_int(db, "SELECT coalesce(max(id), 0) FROM curate_runs");
    json_t *params = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT params_json FROM curate_runs WHERE id = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_int64(st, 1, run);
        if (sqlite3_step(st) == SQLITE_ROW)
            params = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    }
    sqlite3_finalize(st);
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o}", "database_uuid", uuid,
                     "schema_version", (json_int_t)kc_db_user_version(db), "candidates",
                     (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM candidates"),
                     "max_candidate_id",
                     (json_int_t)kc_db_query_int(db, "SELECT coalesce(max(id), 0) FROM candidates"),
                     "verifications",
                     (json_int_t)kc_db_query_int(db, "SELECT count(*) FROM verifications"),
                     "curate_run_id", (json_int_t)run, "curate_params",
                     params ? params : json_null());
}

static json_t *counts_json(const export_counts *c)
{
    json_t *splits = json_object(), *classes = json_object();
    for (int i = 0; i < 4; i++)
        if (c->by_split[i])
            json_object_set_new(splits, export_split_names[i], json_integer(c->by_split[i]));
    for (int i = 0; i < EXPORT_N_CLASSES; i++)
        if (c->by_class[i])
            json_object_set_new(classes, export_class_name(i), json_integer(c->by_class[i]));
    return json_pack("{s:I, s:o, s:o, s:f}", "records", (json_int_t)c->records, "by_split", splits,
                     "by_verdict_class", classes, "mean_speedup_eager",
                     c->with_speedup ? c->sum_speedup / (double)c->with_speedup : 0.0);
}

static json_t *shards_json(const export_shards *w)
{
    json_t *a = json_array();
    for (int i = 0; i < w->n; i++) {
        const export_shard *s = &w->shards[i];
        json_array_append_new(a, json_pack("{s:s, s:s, s:I, s:I, s:I, s:s}", "name", s->name,
                                           "split", s->split, "records", (json_int_t)s->records,
                                           "bytes_jsonl", (json_int_t)s->bytes_jsonl, "bytes",
                                           (json_int_t)s->bytes_file, "sha256", s->sha256));
    }
    return a;
}

static int write_manifest_and_datasheet(const export_config *c, export_ctx *x, sqlite3 *db,
                                        const export_shards *w, const char *stage, strbuf *err)
{
    json_t *source = source_identity(db, x->db_uuid);
    strbuf ds = STRBUF_INIT, cfg = STRBUF_INIT, path = STRBUF_INIT;
    json_t *prov = provenance_json(db, x); /* runs, models, synthetic answers: said up front */
    json_t *reasoning = export_reasoning_json(x, prov);
    export_datasheet(x, source, reasoning, prov, w, &ds);
    provenance_warn(prov);
    if (x->stale_candidates)
        json_object_set_new(prov, "stale_labels",
                            json_pack("{s:I, s:s}", "candidates", (json_int_t)x->stale_candidates,
                                      "exported_with", "--allow-stale"));
    if (c->no_racecheck)
        json_object_set_new(prov, "race_checks",
                            json_pack("{s:b, s:I, s:s}", "skipped", 1, "candidates_without",
                                      (json_int_t)x->race_unchecked, "exported_with",
                                      "--no-racecheck"));
    char ds_sha[SHA256_HEX_LEN + 1];
    sha256_hex(ds.buf, ds.len, ds_sha);
    export_config_json(c, &cfg);
    json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:{s:s, s:s}}", "format",
                          "kcorpus-export v2", "tool", "kexport", "tool_version", KC_VERSION,
                          "record_format", export_format_name(c->format), "config",
                          json_loads(cfg.buf, 0, NULL), "source", source, "counts",
                          counts_json(&x->counts), "shards", shards_json(w), "datasheet", "name",
                          "DATASHEET.md", "sha256", ds_sha);
    json_object_set_new(m, "reasoning", reasoning);
    json_object_set_new(m, "provenance", prov);
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(m);
    path_join(&path, stage, "DATASHEET.md");
    int rc = write_file_atomic(path.buf, ds.buf, ds.len, err);
    strbuf card = STRBUF_INIT;
    export_card(c, w, x->counts.records, ds.buf, &card);
    path_join(&path, stage, "README.md");
    if (!rc)
        rc = write_file_atomic(path.buf, card.buf, card.len, err);
    sb_free(&card);
    path_join(&path, stage, "manifest.json");
    strbuf body = STRBUF_INIT;
    sb_adds(&body, text);
    sb_addch(&body, '\n');
    if (!rc)
        rc = write_file_atomic(path.buf, body.buf, body.len, err);
    free(text);
    sb_free(&ds), sb_free(&cfg), sb_free(&path), sb_free(&body);
    return rc;
}

/* Removes shards of an earlier export from the output directory. */
static void remove_old_shards(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    strbuf path = STRBUF_INIT;
    while ((e = readdir(d)))
        if (fnmatch("*-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9].jsonl*", e->d_name,
                    0) == 0) {
            path_join(&path, dir, e->d_name);
            unlink(path.buf);
        }
    closedir(d);
    sb_free(&path);
}

static int move_into_place(const export_shards *w, const char *stage, const char *out, strbuf *err)
{
    strbuf from = STRBUF_INIT, to = STRBUF_INIT;
    int rc = 0;
    remove_old_shards(out);
    path_join(&from, stage, "kernelbench"); /* --format kernelbench: the modules */
    path_join(&to, out, "kernelbench");
    remove_tree(to.buf);
    if (file_exists(from.buf) && rename(from.buf, to.buf) != 0)
        rc = kc_fail(err, "cannot move '%s' to '%s': %s", from.buf, to.buf, strerror(errno));
    static const char *const extra[] = {"DATASHEET.md", "README.md", "manifest.json"};
    for (int i = 0; i < w->n + 3 && !rc; i++) {
        const char *name = i < w->n ? w->shards[i].name : extra[i - w->n];
        if (i < w->n)
            sb_reset(&from), sb_adds(&from, w->shards[i].stage_path);
        else
            path_join(&from, stage, name);
        path_join(&to, out, name);
        if (rename(from.buf, to.buf) != 0)
            rc = kc_fail(err, "cannot move '%s' to '%s': %s", from.buf, to.buf, strerror(errno));
    }
    sb_free(&from), sb_free(&to);
    return rc;
}

static int tar_add_file(struct archive *a, const char *dir, const char *name, strbuf *err)
{
    strbuf path = STRBUF_INIT, data = STRBUF_INIT;
    path_join(&path, dir, name);
    int rc = read_file(path.buf, &data, err);
    if (!rc) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, name);
        archive_entry_set_size(e, (la_int64_t)data.len);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_mtime(e, 0, 0);
        archive_entry_set_uname(e, "kcorpus");
        archive_entry_set_gname(e, "kcorpus");
        if (archive_write_header(a, e) != ARCHIVE_OK ||
            archive_write_data(a, data.buf, data.len) != (la_ssize_t)data.len)
            rc = kc_fail(err, "tar: %s", archive_error_string(a));
        archive_entry_free(e);
    }
    sb_free(&path), sb_free(&data);
    return rc;
}

/* <out>.tar with the manifest, the datasheet and every shard, written then renamed. */
static int write_tar(const export_shards *w, const char *out, char *tar_path, size_t n, strbuf *err)
{
    strbuf tmp = STRBUF_INIT;
    snprintf(tar_path, n, "%s.tar", out);
    sb_addf(&tmp, "%s.tmp.%ld", tar_path, (long)getpid());
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    int rc = archive_write_open_filename(a, tmp.buf) == ARCHIVE_OK
                 ? 0 : kc_fail(err, "cannot create '%s': %s", tmp.buf, archive_error_string(a));
    if (!rc)
        rc = tar_add_file(a, out, "manifest.json", err);
    if (!rc)
        rc = tar_add_file(a, out, "DATASHEET.md", err);
    if (!rc)
        rc = tar_add_file(a, out, "README.md", err);
    for (int i = 0; i < w->n && !rc; i++)
        rc = tar_add_file(a, out, w->shards[i].name, err);
    if (archive_write_close(a) != ARCHIVE_OK && !rc)
        rc = kc_fail(err, "tar: %s", archive_error_string(a));
    archive_write_free(a);
    if (!rc && rename(tmp.buf, tar_path) != 0)
        rc = kc_fail(err, "cannot write '%s': %s", tar_path, strerror(errno));
    if (rc)
        unlink(tmp.buf);
    sb_free(&tmp);
    return rc;
}

static int read_uuid(sqlite3 *db, char *out, size_t n, strbuf *err)
{
    sqlite3_stmt *st = kc_db_prepare(db, "SELECT value FROM db_info WHERE key = 'uuid'", err);
    if (!st)
        return -1;
    int rc = sqlite3_step(st) == SQLITE_ROW ? 0 : kc_fail(err, "the database has no identity");
    if (!rc)
        snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return rc;
}

static int export_staged(const export_config *c, sqlite3 *db, const char *stage, long stale,
                         long race_unchecked, export_summary *sum, strbuf *err)
{
    export_shards w;
    export_ctx x = {.db = db, .cfg = c, .shards = &w, .prompt_key = -1, .stale_candidates = stale,
                    .race_unchecked = race_unchecked};
    int rc = export_shards_open(&w, stage, c->shard_bytes, c->gzip, c->gzip_level, err);
    if (!rc)
        rc = read_uuid(db, x.db_uuid, sizeof x.db_uuid, err);
    if (!rc)
        rc = export_records(&x, err);
    if (!rc && !x.counts.records) {
        strbuf why = STRBUF_INIT;
        export_explain_empty(db, c, &why);
        sum->why_empty = sb_detach(&why);
    }
    if (!rc)
        rc = export_shards_finish(&w, err);
    /* nothing exported: no manifest, card or bundle describing shards that do not exist */
    int empty = !x.counts.records;
    if (!rc && !empty)
        rc = write_manifest_and_datasheet(c, &x, db, &w, stage, err);
    if (!rc && !empty)
        rc = move_into_place(&w, stage, c->out_dir, err);
    if (!rc && !empty && c->tar)
        rc = write_tar(&w, c->out_dir, sum->tar_path, sizeof sum->tar_path, err);
    sum->records = x.counts.records;
    sum->shards = w.n;
    sum->bytes_jsonl = w.total_jsonl;
    for (int i = 0; i < w.n; i++)
        sum->bytes_written += w.shards[i].bytes_file;
    export_ctx_free(&x);
    export_shards_free(&w);
    return rc;
}

/* No export from stale labels: candidates collected or verified after the last kcurate run
 * would be missing or mislabelled. Refuses with the kcurate command to run, runs it (--curate),
 * or goes on and says so (--allow-stale: *stale gets the count for the manifest). */
static int check_labels(const export_config *c, long *stale, strbuf *err)
{
    stale_labels s;
    if (provenance_stale(c->db_path, &s, err))
        return -1;
    long n = s.new_candidates + s.reverified;
    strbuf line = STRBUF_INIT, what = STRBUF_INIT;
    provenance_command_line(&s, &line);
    sb_addf(&what, "%ld candidate(s) collected and %ld verified again since the last kcurate run",
            s.new_candidates, s.reverified);
    int rc = 0;
    if (c->curate_first && (n > 0 || !s.curated)) {
        fprintf(stderr, "kexport: %s: running %s\n", s.curated ? what.buf : "no labels yet",
                line.buf);
        rc = provenance_curate(&s, err);
    } else if (n > 0 && !c->allow_stale) {
        rc = kc_fail(err, "the labels are stale: %s; this export would miss or mislabel them. "
                          "Relabel first:\n    %s\n(or kexport --curate to run it now, or "
                          "--allow-stale to export the old labels anyway)", what.buf, line.buf);
    } else if (n > 0) {
        warning("exporting stale labels (--allow-stale): %s", what.buf);
        *stale = n;
    }
    sb_free(&line), sb_free(&what);
    stale_labels_free(&s);
    return rc;
}

/* No correct label without its race check: a candidate labelled correct whose kernel uses shared
 * memory or cross-block communication (common/race_needs.h) needs a clean racecheck of that
 * verification, `kverify racecheck` (or `kverify run --sanitizer all`). Refuses with the command
 * to run, or goes on and says so (--no-racecheck: *unchecked gets the count for the manifest). */
static int check_races(const export_config *c, sqlite3 *db, long *unchecked, strbuf *err)
{
    long long n = race_unchecked_count(db, err);
    if (n < 0)
        return -1;
    if (n > 0 && !c->no_racecheck)
        return kc_fail(err, "%lld correct label%s need%s a race check (shared memory or cross-block "
                            "communication) and %s none: run `kverify racecheck --db %s` first "
                            "(or --no-racecheck to export without)", n, n == 1 ? "" : "s",
                       n == 1 ? "s" : "", n == 1 ? "has" : "have", c->db_path);
    if (n > 0)
        warning("exporting %lld correct label%s without the race check %s need%s "
                "(--no-racecheck)", n, n == 1 ? "" : "s", n == 1 ? "it" : "they", n == 1 ? "s" : "");
    *unchecked = n;
    return 0;
}

int export_run(const export_config *c, export_summary *sum, strbuf *err)
{
    double t0 = now_ms();
    memset(sum, 0, sizeof(*sum));
    long stale = 0, race_unchecked = 0;
    if (check_labels(c, &stale, err))
        return -1;
    provenance_clean_stages(c->out_dir);
    sqlite3 *db;
    if (kc_db_open(c->db_path, KC_DB_READONLY, &db, err))
        return -1;
    strbuf stage = STRBUF_INIT;
    sb_addf(&stage, "%s/.kexport-stage-%ld", c->out_dir, (long)getpid());
    /* mmap: pages are read from the OS cache without a copy (as far as SQLite maps: 2 GB) */
    int rc = kc_db_exec(db, "PRAGMA cache_size = -262144; PRAGMA mmap_size = 4294967296; BEGIN",
                        err);
    if (!rc)
        rc = check_races(c, db, &race_unchecked, err);
    if (!rc)
        rc = mkdir_p(stage.buf, err);
    if (!rc)
        rc = export_staged(c, db, stage.buf, stale, race_unchecked, sum, err);
    remove_tree(stage.buf);
    if (!sum->records)
        rmdir(c->out_dir); /* made for this export and left empty; one with files stays */
    kc_db_exec(db, "COMMIT", NULL);
    kc_db_close(db);
    snprintf(sum->manifest_path, sizeof sum->manifest_path, "%s/manifest.json", c->out_dir);
    sb_free(&stage);
    sum->seconds = (now_ms() - t0) / 1000;
    return rc;
}
