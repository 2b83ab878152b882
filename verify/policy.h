/* policy: what a candidate's source may contain before it reaches the compiler.
 * Includes only from an allow-list of toolkit headers, written literally as
 * #include <name>; no __has_include probes, #include_next, #embed, #import,
 * digraph or trigraph directive forms; a size limit. The sandbox (sandbox.c)
 * stops whatever slips past this check. */
#ifndef KC_POLICY_H
#define KC_POLICY_H
#include "common/candidate.h" /* KC_MAX_SOURCE_BYTES */
#include "common/strbuf.h"

/* Returns 0 when allowed; otherwise -1 with "line N: ..." in err. */
int policy_check(const char *source, strbuf *err);
/* The allow-list, NULL-terminated. */
extern const char *const policy_allowed_includes[];

#endif
