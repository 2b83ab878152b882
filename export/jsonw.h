/* jsonw: a streaming JSON writer into a strbuf, for kexport's hot path. It writes what jansson's
 * json_dumps(JSON_COMPACT | JSON_REAL_PRECISION(12)) would write for the same values (same
 * escapes, same number forms), without building a tree: commas are placed by the writer, strings
 * are escaped in runs and checked to be UTF-8 (a record that is not valid UTF-8 is an error, as
 * it was with jansson). */
#ifndef KC_EXPORT_JSONW_H
#define KC_EXPORT_JSONW_H
#include "common/strbuf.h"
#include <stddef.h>

#define JSONW_MAX_DEPTH 32

typedef struct jsonw {
    strbuf *out;
    int depth;
    unsigned char first[JSONW_MAX_DEPTH]; /* nothing written yet in this container */
    int bad_utf8;                         /* set when a string was not valid UTF-8 */
} jsonw;

void jw_init(jsonw *w, strbuf *out);
void jw_object(jsonw *w);       /* { */
void jw_array(jsonw *w);        /* [ */
void jw_end_object(jsonw *w);   /* } */
void jw_end_array(jsonw *w);    /* ] */
void jw_key(jsonw *w, const char *key); /* "key": (key is plain ASCII, not escaped) */
void jw_string(jsonw *w, const char *s, size_t len);
void jw_cstring(jsonw *w, const char *s); /* null when s is NULL */
void jw_int(jsonw *w, long long v);
void jw_real(jsonw *w, double v);        /* null when not finite */
void jw_bool(jsonw *w, int v);
void jw_null(jsonw *w);
void jw_raw(jsonw *w, const char *json, size_t len); /* an already encoded value */

/* Appends s as a JSON string literal (quotes included); returns -1 when s is not valid UTF-8. */
int jw_escape(strbuf *out, const char *s, size_t len);
/* The same without the quotes (a part of a longer string). */
int jw_escape_part(strbuf *out, const char *s, size_t len);
/* Appends v as jansson writes a real with precision 12 ("1.0", "1e-7", "0.333333333333"). */
void jw_format_real(strbuf *out, double v);

#endif
