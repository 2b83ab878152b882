/* fsutil: reading and atomically writing files, directories, temp dirs. */
#ifndef KC_FSUTIL_H
#define KC_FSUTIL_H
#include "common/strbuf.h"
#include <stddef.h>

int read_file(const char *path, strbuf *out, strbuf *err);
/* Writes to path.tmp.<pid>.<n> (a new file per call) then renames: readers never see a partial
 * file, and threads writing one path at once never write into each other's. */
int write_file_atomic(const char *path, const void *data, size_t len, strbuf *err);
int mkdir_p(const char *path, strbuf *err);
/* Removes a directory tree (used for temp dirs only). */
int remove_tree(const char *path);
/* Directory part of path ("." when none), into out. */
void path_dirname(const char *path, strbuf *out);
/* Joins a and b with one '/'. */
void path_join(strbuf *out, const char *a, const char *b);
int file_exists(const char *path);
/* Directory holding the running executable. */
int self_exe_dir(strbuf *out, strbuf *err);
/* A program beside the running one: $ENV_VAR when set, else <exe dir>/name. */
void sibling_exe_path(const char *env_var, const char *name, strbuf *out);
double now_ms(void);      /* monotonic clock, milliseconds */
double wall_time_s(void); /* seconds since the epoch */
void iso8601_now(strbuf *out);

#endif
