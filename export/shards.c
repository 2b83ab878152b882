/* shards: JSONL shard writer with deterministic gzip (zlib, no name, mtime 0). */
#include "export/shards.h"
#include "common/error.h"
#include "common/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int export_shards_open(export_shards *w, const char *stage_dir, long long shard_bytes, int gzip,
                       int gzip_level, strbuf *err)
{
    (void)err;
    memset(w, 0, sizeof(*w));
    w->stage_dir = xstrdup(stage_dir);
    w->shard_bytes = shard_bytes;
    w->gzip = gzip;
    w->gzip_level = gzip_level;
    return 0;
}

static int write_out(export_shards *w, const void *data, size_t len, strbuf *err)
{
    if (!len)
        return 0;
    export_shard *s = &w->shards[w->n - 1];
    if (fwrite(data, 1, len, w->file) != len)
        return kc_fail(err, "cannot write shard '%s': %s", s->stage_path, strerror(errno));
    sha256_update(w->hash, data, len);
    s->bytes_file += len;
    return 0;
}

/* Feeds bytes through deflate (or straight to the file). */
static int put(export_shards *w, const void *data, size_t len, int finish, strbuf *err)
{
    if (!w->gzip)
        return write_out(w, data, len, err);
    z_stream *z = w->zstream;
    z->next_in = (Bytef *)data;
    z->avail_in = (uInt)len;
    int zrc;
    do {
        sb_grow(&w->zbuf, 1 << 18);
        z->next_out = (Bytef *)w->zbuf.buf;
        z->avail_out = (uInt)(w->zbuf.cap - 1);
        zrc = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (zrc == Z_STREAM_ERROR)
            return kc_fail(err, "gzip: deflate failed");
        if (write_out(w, w->zbuf.buf, (w->zbuf.cap - 1) - z->avail_out, err))
            return -1;
    } while (z->avail_out == 0 || (finish && zrc != Z_STREAM_END));
    return 0;
}

static int close_current(export_shards *w, strbuf *err)
{
    if (!w->file)
        return 0;
    int rc = 0;
    if (w->gzip) {
        rc = put(w, "", 0, 1, err);
        deflateEnd(w->zstream);
        free(w->zstream);
        w->zstream = NULL;
    }
    export_shard *s = &w->shards[w->n - 1];
    if (fclose(w->file) != 0 && !rc)
        rc = kc_fail(err, "cannot write shard '%s': %s", s->stage_path, strerror(errno));
    w->file = NULL;
    sha256_finish(w->hash, s->sha256);
    w->hash = NULL;
    return rc;
}

static int open_shard(export_shards *w, const char *split, strbuf *err)
{
    int index = 0;
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->shards[i].split, split))
            index++;
    w->shards = xrealloc(w->shards, (size_t)(w->n + 1) * sizeof(*w->shards));
    export_shard *s = &w->shards[w->n++];
    memset(s, 0, sizeof(*s));
    snprintf(s->split, sizeof s->split, "%s", split);
    s->index = index;
    strbuf path = STRBUF_INIT;
    sb_addf(&path, "%s/%s.%05d.part", w->stage_dir, split, index);
    s->stage_path = sb_detach(&path);
    if (!(w->file = fopen(s->stage_path, "wb")))
        return kc_fail(err, "cannot create '%s': %s", s->stage_path, strerror(errno));
    w->hash = sha256_begin();
    if (w->gzip) {
        z_stream *z = xcalloc(1, sizeof(*z));
        /* windowBits 15 + 16: a gzip wrapper with no name and mtime 0, so output is reproducible */
        if (deflateInit2(z, w->gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(z);
            return kc_fail(err, "gzip: cannot initialise deflate");
        }
        w->zstream = z;
    }
    return 0;
}

int export_shards_write(export_shards *w, const char *split, const char *json, size_t len,
                        strbuf *err)
{
    export_shard *cur = w->n ? &w->shards[w->n - 1] : NULL;
    int same_split = cur && w->file && !strcmp(cur->split, split);
    if (!same_split || (cur->records > 0 && cur->bytes_jsonl + len + 1 > (uint64_t)w->shard_bytes)) {
        if (close_current(w, err) || open_shard(w, split, err))
            return -1;
        cur = &w->shards[w->n - 1];
    }
    if (put(w, json, len, 0, err) || put(w, "\n", 1, 0, err))
        return -1;
    cur->records++;
    cur->bytes_jsonl += len + 1;
    w->total_jsonl += len + 1;
    return 0;
}

int export_shards_finish(export_shards *w, strbuf *err)
{
    if (close_current(w, err))
        return -1;
    for (int i = 0; i < w->n; i++) {
        export_shard *s = &w->shards[i];
        int of = 0;
        for (int j = 0; j < w->n; j++)
            of += !strcmp(w->shards[j].split, s->split);
        snprintf(s->name, sizeof s->name, "%s-%05d-of-%05d.jsonl%s", s->split, s->index, of,
                 w->gzip ? ".gz" : "");
    }
    return 0;
}

void export_shards_free(export_shards *w)
{
    if (w->file)
        fclose(w->file);
    if (w->zstream) {
        deflateEnd(w->zstream);
        free(w->zstream);
    }
    if (w->hash) {
        char scrap[65];
        sha256_finish(w->hash, scrap);
    }
    for (int i = 0; i < w->n; i++)
        free(w->shards[i].stage_path);
    free(w->shards);
    free(w->stage_dir);
    sb_free(&w->zbuf);
    memset(w, 0, sizeof(*w));
}
