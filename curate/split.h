/* split: assigns problems (never records) to train / valid / test by a salted hash of the problem
 * id, so a problem's split never changes when others are added; problems on the decontamination
 * list are "heldout" and never reach train. */
#ifndef KC_CURATE_SPLIT_H
#define KC_CURATE_SPLIT_H
#include "curate/params.h"

/* 1 when the id matches an entry of the held-out list (exact id or fnmatch glob). */
int curate_is_heldout(const curate_params *p, const char *problem_id);
/* "train", "valid", "test" or "heldout". */
const char *curate_split_of(const curate_params *p, const char *problem_id);

#endif
