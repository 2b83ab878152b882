/* timing_stats: the statistics of a candidate's timing samples (verify/worker/worker_timing.c),
 * pure functions, so that they are tested without a GPU: quantiles, the median's robust noise,
 * the stopping criterion of the timed reps, and which samples stay when some were taken at
 * varied constants or on structured inputs. */
#ifndef KC_TIMING_STATS_H
#define KC_TIMING_STATS_H

#define KC_TIMING_MIN_REPS 5 /* then the noise criterion decides: every rep is checked, so reps are dear */

/* Sorts n values ascending. */
void kc_sort_doubles(double *v, int n);
/* The q-quantile (0..1) of n >= 1 sorted values, interpolated. */
double kc_quantile(const double *sorted, int n, double q);
/* Robust relative standard error of the median of n values, from the interquartile range. */
double kc_median_noise(const double *times, int n);
/* Whether n samples suffice: at least KC_TIMING_MIN_REPS, and the median's noise below
 * noise_target. */
int kc_timing_enough(const double *times, int n, double noise_target);
/* When the n samples (times, with their clocks) do not suffice, keeps only the plain ones
 * (plain[i] nonzero: the manifest's constants, unstructured inputs), in order, at the front;
 * returns how many remain (n when they suffice). */
int kc_timing_keep_plain(double *times, double *clocks, const int *plain, int n, double noise_target);

#endif
