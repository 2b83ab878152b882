/* passk: the sampling metrics of the field, computed per suite, model and strategy (kcurate stats,
 * the report). A sample is a trajectory; it is correct when one of its turns is (latest verdict
 * 'correct'), and its speedup is the best eager speedup of its correct turns (0 when none).
 *  - pass@k: the unbiased estimator over n samples with c correct, 1 - C(n-c,k)/C(n,k), as the
 *    product 1 - prod_{i=n-c+1..n} (1 - k/i) (no big binomials), for k = 1, 5, 10 where n >= k;
 *  - fast_p@k: the same with c = samples correct and faster than p x eager (p = 0: correct), for
 *    p in {0, 1, 1.5, 2} (KernelBench's fast_p, as @k over samples);
 *  - speedup@k: the expected best speedup among k samples drawn without replacement, exactly:
 *    with the speedups sorted v_1 <= ... <= v_n, sum_{i=k..n} v_i C(i-1,k-1)/C(n,k), the weights
 *    formed by the ratio w_n = k/n, w_{i-1} = w_i (i-k)/(i-1).
 * Each is averaged over the group's problems with n >= k. Runs made with --compile-only are groups
 * of their own: a kernel that compiled and was never run on a GPU (verdict 'compiled') is neither
 * correct nor wrong, so a group with such a sample is not measured: its metrics and counts of
 * correct samples are null (text: '-'), never 0. */
#ifndef KC_CURATE_PASSK_H
#define KC_CURATE_PASSK_H
#include "common/db.h"
#include <jansson.h>

/* 1 - C(n-c,k)/C(n,k); -1 when k < 1 or n < k (undefined). */
double passk_estimate(int n, int c, int k);
/* The expected maximum of k of the n values drawn without replacement; -1 when n < k. Sorts v. */
double speedupk_estimate(double *v, int n, int k);

/* The metrics of every (suite, model, strategy) group of the database's trajectories:
 * [{"suite","model","strategy","compile_only" (the runs' --compile-only),"measured" (false: a
 *   sample compiled and was never run; the metrics below are null),"problems","samples",
 *   "solved_problems" (with a correct sample),
 *   "solved_samples","mean_turns" (per sample),"k":{"1": problems with n >= 1, ...},
 *   "pass_at_k":{"1":..},"fast_p_at_k":{"0":{"1":..},"1":..,"1.5":..,"2":..},
 *   "speedup_at_k":{"1":..}}], sorted by suite, model, strategy (strategies side by side),
 *   compile-only last.
 * NULL on a database error. */
json_t *passk_metrics(sqlite3 *db, strbuf *err);
/* The same as text rows for kcurate stats. */
void passk_text(json_t *metrics, strbuf *out);

#endif
