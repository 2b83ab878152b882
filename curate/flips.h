/* flips: label flips between verifications of the same candidate and third-party claims our
 * verifier does not confirm, read from the v_label_flips and v_claim_checks views (schemas/kc.sql;
 * the rules are in docs/AUDIT.md), summarised by kind, by problem and by claim source. */
#ifndef KC_CURATE_FLIPS_H
#define KC_CURATE_FLIPS_H
#include "common/db.h"
#include <jansson.h>

/* The flips report as JSON: {pairs, flips: [...], by_kind: {}, by_problem: {}, claims: [...]}. */
json_t *curate_flips_json(sqlite3 *db, strbuf *err);
/* The same as readable text. */
int curate_flips_text(sqlite3 *db, strbuf *out, strbuf *err);

#endif
