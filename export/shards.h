/* shards: writes records as size-bounded JSONL shards per split (gzip through zlib by default)
 * into a staging directory, then names them <split>-00000-of-00008.jsonl[.gz] and moves them
 * into place only when the whole export succeeded: a failed export leaves no partial shard.
 * Compression, hashing and writing run on a writer thread, in the order the lines were given. */
#ifndef KC_EXPORT_SHARDS_H
#define KC_EXPORT_SHARDS_H
#include "common/strbuf.h"
#include <stdint.h>

typedef struct export_shard {
    char split[16];
    int index;         /* within its split */
    char *stage_path;  /* in the staging directory */
    char name[96];     /* final name, set by export_shards_finish */
    long records;
    uint64_t bytes_jsonl, bytes_file;
    char sha256[65];   /* of the file as written */
} export_shard;

typedef struct export_shard_result {
    char sha256[65];
    uint64_t bytes_file;
} export_shard_result;

typedef struct export_shards {
    char *stage_dir;
    long long shard_bytes;
    int gzip, gzip_level;
    export_shard *shards;
    int n;
    struct shard_chunk *chunk;   /* lines not yet handed to the writer thread */
    struct shard_writer *writer; /* the thread that compresses, hashes and writes */
    uint64_t total_jsonl;
} export_shards;

int export_shards_open(export_shards *w, const char *stage_dir, long long shard_bytes, int gzip,
                       int gzip_level, strbuf *err);
/* Appends one record (a JSON text and its newline: len bytes) to the current shard of split. */
int export_shards_write(export_shards *w, const char *split, const char *line, size_t len,
                        strbuf *err);
/* Closes the last shard and gives each its final name. */
int export_shards_finish(export_shards *w, strbuf *err);
void export_shards_free(export_shards *w);

#endif
