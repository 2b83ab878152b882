/* filters: kexport's --run, --model and --level values checked against the database before
 * anything is written: a value that matches nothing is an error naming it (issue 24). */
#ifndef KC_EXPORT_FILTERS_H
#define KC_EXPORT_FILTERS_H

#include "common/strbuf.h"
#include "export/config.h"

/* 0 when every value of every given filter matches something in the database; -1 with err
 * naming the first that matches nothing, what there is, and how to list it. */
int export_check_filters(const export_config *c, strbuf *err);

#endif
