/* timing_stats: the statistics of a candidate's timing samples (verify/worker/worker_timing.c),
 * pure functions, so that they are tested without a GPU: quantiles, the median's robust noise,
 * the stopping criterion of the timed reps, and which samples stay when some were taken at
 * varied constants or on structured inputs. */
#ifndef KC_TIMING_STATS_H
#define KC_TIMING_STATS_H

#define KC_TIMING_MIN_REPS 5 /* then the noise criterion decides: every rep is checked, so reps are dear */
/* After samples of another workload were dropped (kc_timing_keep_plain), the plain ones left
 * need this many: each is a checked run on fresh inputs at the manifest's constants, and the
 * noise criterion still decides; 5 would cost a value-dependent kernel (the softcap attention
 * problems: one plain default sample) 4 extra checked reps of candidate and reference each. */
#define KC_TIMING_MIN_PLAIN 3

/* Sorts n values ascending. */
void kc_sort_doubles(double *v, int n);
/* The q-quantile (0..1) of n >= 1 sorted values, interpolated. */
double kc_quantile(const double *sorted, int n, double q);
/* Robust relative standard error of the median of n values, from the interquartile range. */
double kc_median_noise(const double *times, int n);
/* Whether n samples suffice: at least min_reps (KC_TIMING_MIN_REPS, or KC_TIMING_MIN_PLAIN
 * once other workloads' samples were dropped), and the median's noise below noise_target. */
int kc_timing_enough(const double *times, int n, int min_reps, double noise_target);
/* When the n samples (times, with their clocks) do not suffice (KC_TIMING_MIN_REPS and the
 * noise criterion), keeps only the plain ones
 * (plain[i] nonzero: the manifest's constants, unstructured inputs), in order, at the front;
 * returns how many remain (n when they suffice). */
int kc_timing_keep_plain(double *times, double *clocks, const int *plain, int n, double noise_target);

#endif
