/* race_needs: which `correct` labels need a race check (compute-sanitizer racecheck) before
 * they may be exported. A candidate needs one when its launch unit uses shared memory (static,
 * from the compile's per-kernel stats; dynamic, a third <<<>>> argument on an @launch line; or
 * __shared__ anywhere in the source) or may communicate across threads and blocks (atomics,
 * fences, volatile, uncached loads, cooperative groups, inline PTX). Generous on purpose: a
 * false "needs" costs one racecheck run, a false "does not need" lets a race through.
 * Also the SQL function and the query that `kverify racecheck` (verify/cli/cli_racecheck.c)
 * and kexport (export/bundle.c) share: the correct labels still waiting for a check. */
#ifndef KC_RACE_NEEDS_H
#define KC_RACE_NEEDS_H
#include "common/strbuf.h"
#include <sqlite3.h>

/* 1 when the candidate needs a race check, else 0. source may be NULL (unknown: needs);
 * kernels_json is the compile's [{"name", "shared_bytes", ...}] or NULL when not recorded (the
 * source alone decides). why (may be NULL) gets the first reason found. */
int race_check_needed(const char *source, const char *kernels_json, strbuf *why);

/* Registers the SQL function kc_race_check_needed(source TEXT, kernels_json TEXT) on db. */
int race_needs_register(sqlite3 *db, strbuf *err);

/* The correct labels waiting for a race check: candidates whose latest verification is correct,
 * that need one, and that have no clean one for that verification (a race_checks row, or an
 * inline racecheck of `--sanitizer all` that exited 0 in its evidence). Columns: verification
 * id, candidate id, problem id, source sha, seeds, arch of the last good compile (or '').
 * A candidate whose source blob is missing is left out: kexport and kcurate verify-db fail on
 * it by name;
 * ?1 is a limit (-1: none). Needs race_needs_register. */
extern const char race_unchecked_sql[];

/* How many rows race_unchecked_sql has (registers the function); -1 with err set on failure. */
long long race_unchecked_count(sqlite3 *db, strbuf *err);

#endif
