/* shards: JSONL shard writer with deterministic gzip (zlib, no name, mtime 0). The caller's
 * thread decides which shard each line goes to and batches lines into chunks; a writer thread
 * does the rest (deflate, sha256 of the file bytes, write), so that records are built while the
 * previous ones are compressed and written. */
#include "export/shards.h"
#include "common/error.h"
#include "common/hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK_BYTES (1 << 20) /* lines are handed over in chunks of about this size */
#define MAX_QUEUED 8          /* chunks waiting for the writer */

/* A run of lines of one shard; the first chunk of a shard names the file to create. */
typedef struct shard_chunk {
    int shard;
    char *open_path;
    strbuf data;
    struct shard_chunk *next;
} shard_chunk;

/* What only the writer thread touches while it runs. */
typedef struct shard_writer {
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    shard_chunk *head, *tail, *spare;
    int queued, closing, failed;
    strbuf err;
    /* writer side */
    FILE *file;
    z_stream *z;
    sha256_stream *hash;
    strbuf zbuf;
    int open_shard, gzip, gzip_level;
    char *open_path;
    export_shard_result *results;
    int n_results;
} shard_writer;

static int write_out(shard_writer *sw, const void *data, size_t len, strbuf *err)
{
    if (!len)
        return 0;
    if (fwrite(data, 1, len, sw->file) != len)
        return kc_fail(err, "cannot write shard '%s': %s", sw->open_path, strerror(errno));
    sha256_update(sw->hash, data, len);
    sw->results[sw->open_shard].bytes_file += len;
    return 0;
}

/* Feeds bytes through deflate (or straight to the file). */
static int put(shard_writer *sw, const void *data, size_t len, int finish, strbuf *err)
{
    if (!sw->gzip)
        return write_out(sw, data, len, err);
    z_stream *z = sw->z;
    z->next_in = (Bytef *)data;
    z->avail_in = (uInt)len;
    int zrc;
    do {
        sb_grow(&sw->zbuf, 1 << 18);
        z->next_out = (Bytef *)sw->zbuf.buf;
        z->avail_out = (uInt)(sw->zbuf.cap - 1);
        zrc = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (zrc == Z_STREAM_ERROR)
            return kc_fail(err, "gzip: deflate failed");
        if (write_out(sw, sw->zbuf.buf, (sw->zbuf.cap - 1) - z->avail_out, err))
            return -1;
    } while (z->avail_out == 0 || (finish && zrc != Z_STREAM_END));
    return 0;
}

static int close_current(shard_writer *sw, strbuf *err)
{
    if (!sw->file)
        return 0;
    int rc = 0;
    if (sw->gzip) {
        rc = put(sw, "", 0, 1, err);
        deflateEnd(sw->z);
        free(sw->z);
        sw->z = NULL;
    }
    if (fclose(sw->file) != 0 && !rc)
        rc = kc_fail(err, "cannot write shard '%s': %s", sw->open_path, strerror(errno));
    sw->file = NULL;
    sha256_finish(sw->hash, sw->results[sw->open_shard].sha256);
    sw->hash = NULL;
    return rc;
}

static int open_file(shard_writer *sw, int shard, const char *path, strbuf *err)
{
    if (close_current(sw, err))
        return -1;
    free(sw->open_path);
    sw->open_path = xstrdup(path);
    sw->open_shard = shard;
    if (shard >= sw->n_results) {
        sw->results = xrealloc(sw->results, (size_t)(shard + 1) * sizeof(*sw->results));
        memset(sw->results + sw->n_results, 0,
               (size_t)(shard + 1 - sw->n_results) * sizeof(*sw->results));
        sw->n_results = shard + 1;
    }
    if (!(sw->file = fopen(path, "wb")))
        return kc_fail(err, "cannot create '%s': %s", path, strerror(errno));
    setvbuf(sw->file, NULL, _IOFBF, 1 << 20);
    sw->hash = sha256_begin();
    if (sw->gzip) {
        z_stream *z = xcalloc(1, sizeof(*z));
        /* windowBits 15 + 16: a gzip wrapper with no name and mtime 0, so output is reproducible */
        if (deflateInit2(z, sw->gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(z);
            return kc_fail(err, "gzip: cannot initialise deflate");
        }
        sw->z = z;
    }
    return 0;
}

static void *writer_main(void *arg)
{
    shard_writer *sw = arg;
    strbuf err = STRBUF_INIT;
    int failed = 0;
    for (;;) {
        pthread_mutex_lock(&sw->lock);
        while (!sw->head && !sw->closing)
            pthread_cond_wait(&sw->changed, &sw->lock);
        shard_chunk *c = sw->head;
        if (c) {
            sw->head = c->next;
            if (!sw->head)
                sw->tail = NULL;
            sw->queued--;
        }
        pthread_mutex_unlock(&sw->lock);
        if (!c)
            break;
        if (!failed && c->open_path)
            failed = open_file(sw, c->shard, c->open_path, &err);
        if (!failed)
            failed = put(sw, c->data.buf, c->data.len, 0, &err);
        free(c->open_path);
        c->open_path = NULL;
        sb_reset(&c->data);
        pthread_mutex_lock(&sw->lock);
        c->next = sw->spare;
        sw->spare = c;
        if (failed && !sw->failed) {
            sw->failed = 1;
            sb_reset(&sw->err);
            sb_add(&sw->err, err.buf, err.len);
        }
        pthread_cond_broadcast(&sw->changed);
        pthread_mutex_unlock(&sw->lock);
    }
    if (!failed && close_current(sw, &err)) {
        pthread_mutex_lock(&sw->lock);
        sw->failed = 1;
        sb_reset(&sw->err);
        sb_add(&sw->err, err.buf, err.len);
        pthread_mutex_unlock(&sw->lock);
    }
    sb_free(&err);
    return NULL;
}

int export_shards_open(export_shards *w, const char *stage_dir, long long shard_bytes, int gzip,
                       int gzip_level, strbuf *err)
{
    memset(w, 0, sizeof(*w));
    w->stage_dir = xstrdup(stage_dir);
    w->shard_bytes = shard_bytes;
    w->gzip = gzip;
    w->gzip_level = gzip_level;
    shard_writer *sw = xcalloc(1, sizeof(*sw));
    w->writer = sw;
    sw->gzip = gzip;
    sw->gzip_level = gzip_level;
    pthread_mutex_init(&sw->lock, NULL);
    pthread_cond_init(&sw->changed, NULL);
    if (pthread_create(&sw->thread, NULL, writer_main, sw) != 0)
        return kc_fail(err, "cannot start the shard writer thread");
    sw->started = 1;
    return 0;
}

/* Hands the current chunk to the writer; waits while too many are queued. */
static int submit(export_shards *w, strbuf *err)
{
    shard_writer *sw = w->writer;
    shard_chunk *c = w->chunk;
    w->chunk = NULL;
    pthread_mutex_lock(&sw->lock);
    while (sw->queued >= MAX_QUEUED && !sw->failed)
        pthread_cond_wait(&sw->changed, &sw->lock);
    int failed = sw->failed;
    if (failed) {
        kc_fail(err, "%s", sw->err.buf);
        c->next = sw->spare;
        sw->spare = c;
        free(c->open_path);
        c->open_path = NULL;
    } else {
        c->next = NULL;
        if (sw->tail)
            sw->tail->next = c;
        else
            sw->head = c;
        sw->tail = c;
        sw->queued++;
        pthread_cond_broadcast(&sw->changed);
    }
    pthread_mutex_unlock(&sw->lock);
    return failed ? -1 : 0;
}

/* A chunk for shard (from the spare list when there is one). */
static void new_chunk(export_shards *w, int shard, const char *open_path)
{
    shard_writer *sw = w->writer;
    pthread_mutex_lock(&sw->lock);
    shard_chunk *c = sw->spare;
    if (c)
        sw->spare = c->next;
    pthread_mutex_unlock(&sw->lock);
    if (!c)
        c = xcalloc(1, sizeof(*c));
    c->shard = shard;
    c->open_path = open_path ? xstrdup(open_path) : NULL;
    c->next = NULL;
    sb_grow(&c->data, CHUNK_BYTES + 65536);
    w->chunk = c;
}

static void open_shard(export_shards *w, const char *split)
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
}

int export_shards_write(export_shards *w, const char *split, const char *line, size_t len,
                        strbuf *err)
{
    export_shard *cur = w->n ? &w->shards[w->n - 1] : NULL;
    int same_split = cur && !strcmp(cur->split, split);
    if (!same_split || (cur->records > 0 && cur->bytes_jsonl + len > (uint64_t)w->shard_bytes)) {
        if (w->chunk && submit(w, err))
            return -1;
        open_shard(w, split);
        cur = &w->shards[w->n - 1];
        new_chunk(w, w->n - 1, cur->stage_path);
    } else if (w->chunk->data.len + len > CHUNK_BYTES) {
        if (submit(w, err))
            return -1;
        new_chunk(w, w->n - 1, NULL);
    }
    sb_add(&w->chunk->data, line, len);
    cur->records++;
    cur->bytes_jsonl += len;
    w->total_jsonl += len;
    return 0;
}

/* Stops the writer thread once it has written everything queued. */
static void stop_writer(export_shards *w)
{
    shard_writer *sw = w->writer;
    if (!sw || !sw->started)
        return;
    pthread_mutex_lock(&sw->lock);
    sw->closing = 1;
    pthread_cond_broadcast(&sw->changed);
    pthread_mutex_unlock(&sw->lock);
    pthread_join(sw->thread, NULL);
    sw->started = 0;
}

int export_shards_finish(export_shards *w, strbuf *err)
{
    shard_writer *sw = w->writer;
    if (w->chunk && submit(w, err))
        return -1;
    stop_writer(w);
    if (sw->failed)
        return kc_fail(err, "%s", sw->err.buf);
    for (int i = 0; i < w->n; i++) {
        export_shard *s = &w->shards[i];
        if (i < sw->n_results) {
            s->bytes_file = sw->results[i].bytes_file;
            memcpy(s->sha256, sw->results[i].sha256, sizeof s->sha256);
        }
        int of = 0;
        for (int j = 0; j < w->n; j++)
            of += !strcmp(w->shards[j].split, s->split);
        snprintf(s->name, sizeof s->name, "%s-%05d-of-%05d.jsonl%s", s->split, s->index, of,
                 w->gzip ? ".gz" : "");
    }
    return 0;
}

static void free_chunks(shard_chunk *c)
{
    while (c) {
        shard_chunk *next = c->next;
        free(c->open_path);
        sb_free(&c->data);
        free(c);
        c = next;
    }
}

void export_shards_free(export_shards *w)
{
    shard_writer *sw = w->writer;
    if (sw) {
        if (sw->started) { /* a failed export: drop what is queued, then stop */
            pthread_mutex_lock(&sw->lock);
            free_chunks(sw->head);
            sw->head = sw->tail = NULL;
            sw->queued = 0;
            pthread_mutex_unlock(&sw->lock);
            stop_writer(w);
        }
        if (sw->file)
            fclose(sw->file);
        if (sw->z) {
            deflateEnd(sw->z);
            free(sw->z);
        }
        if (sw->hash) {
            char scrap[65];
            sha256_finish(sw->hash, scrap);
        }
        free_chunks(sw->spare);
        free(sw->open_path);
        free(sw->results);
        sb_free(&sw->zbuf);
        sb_free(&sw->err);
        pthread_mutex_destroy(&sw->lock);
        pthread_cond_destroy(&sw->changed);
        free(sw);
    }
    if (w->chunk)
        free_chunks(w->chunk);
    for (int i = 0; i < w->n; i++)
        free(w->shards[i].stage_path);
    free(w->shards);
    free(w->stage_dir);
    memset(w, 0, sizeof(*w));
}
