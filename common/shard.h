/* shard: one shard of N of a collection or verification (Slurm job arrays, one task per GPU).
 * The unit dealt out is a trajectory, (problem id, sample index): it belongs to shard
 * first-8-bytes-of-sha256("<problem id>#<sample>") as a big-endian integer, mod N. The split
 * depends on nothing but those two (not on timing, the selection or its order), so N shards
 * together are exactly one unsharded run, and a problem or sample added later lands in the
 * same shard on every machine. With a per-problem budget the unit is the problem (sample
 * left out of the key), so that one process holds each problem's shared clock.
 * A database records the split it was worked under (table shard_plans) and a shard refuses
 * one that disagrees. */
#ifndef KC_SHARD_H
#define KC_SHARD_H
#include "common/strbuf.h"

#include <sqlite3.h>
#include <stdint.h>

typedef struct kc_shard {
    int index, count; /* count 0: not sharded (everything) */
    int by_problem;   /* the unit is the problem, not the (problem, sample) trajectory */
} kc_shard;

/* Parses "I/N" (0 <= I < N, N <= 100000) into s; -1 with the reason in err. */
int kc_shard_parse(const char *text, kc_shard *s, strbuf *err);
/* Which of count shards a trajectory belongs to. */
int kc_shard_of(const char *problem_id, long sample, int count, int by_problem);
/* Whether s holds the trajectory (always, when s is not sharded). */
int kc_shard_holds(const kc_shard *s, const char *problem_id, long sample);
/* "2/4" or "2/4 by problem" into out. */
void kc_shard_describe(const kc_shard *s, strbuf *out);

/* kcollect (one database per shard): records s in db on first use; refuses (-1, err) when the
 * database was collected under another split, or unsharded (it has trajectories but no plan)
 * when s is a shard, or as a shard when s is not. */
int kc_shard_claim_collect(sqlite3 *db, const kc_shard *s, strbuf *err);
/* kverify run (shards share one database): while candidates are pending, every process must
 * use the same count; the first sharded one records it, a run that finds nothing pending
 * clears it. -1 with err when s disagrees. */
int kc_shard_claim_verify(sqlite3 *db, const kc_shard *s, strbuf *err);
/* kverify reverify: a pass records the count of its first shard (reverify_passes.shard_count);
 * resuming it with another count, or unsharded when it was sharded (and the reverse once it has
 * verified something), is refused. */
int kc_shard_claim_pass(sqlite3 *db, int64_t pass, const kc_shard *s, strbuf *err);

#endif
