/* error: the one error path. Library functions that can fail return -1 and
 * describe the failure in a caller-supplied strbuf (kc_fail); tools report
 * with error()/die() in one voice: "<tool>: error: <message>" (die and the
 * allocators: common/die.h, beneath strbuf). */
#ifndef KC_ERROR_H
#define KC_ERROR_H
#include "common/die.h"
#include "common/strbuf.h"

int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replaces err's content with the message and returns -1 (err may be NULL). */
int kc_fail(strbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
