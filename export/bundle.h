/* bundle: one export end to end: records into staged shards, then the manifest (counts, sha256
 * of every shard, config, tool version, source database identity) and the export's own
 * datasheet, moved into the output directory only on success, and optionally a tar of it all
 * (libarchive, reproducible: fixed owner, mode and mtime). */
#ifndef KC_EXPORT_BUNDLE_H
#define KC_EXPORT_BUNDLE_H
#include "export/config.h"

typedef struct export_summary {
    long records;
    int shards;
    unsigned long long bytes_jsonl, bytes_written;
    double seconds;
    char manifest_path[4096], tar_path[4096];
    char *why_empty; /* when no record was written: why, and what flag would give records
                      * (export/explain.h); free()d by the caller */
} export_summary;

int export_run(const export_config *cfg, export_summary *out, strbuf *err);

#endif
