/* config: what kexport writes: format, filters, sharding and packaging, and the canonical JSON of
 * the config recorded in the manifest (everything that shapes the output, nothing else). */
#ifndef KC_EXPORT_CONFIG_H
#define KC_EXPORT_CONFIG_H
#include "common/strbuf.h"

enum export_format { EXPORT_SFT, EXPORT_MULTITURN, EXPORT_RL, EXPORT_PREFERENCE, EXPORT_KERNELBENCH,
                     EXPORT_PLAN };
enum export_dedup { EXPORT_DEDUP_NONE, EXPORT_DEDUP_EXACT, EXPORT_DEDUP_NEAR };
/* Where an assistant turn's reasoning goes: a "reasoning_content" field on the message (null where
 * the model gave none), "<think>\n...\n</think>\n\n" before the content, or nowhere. */
enum export_reasoning { EXPORT_REASONING_FIELD, EXPORT_REASONING_THINK, EXPORT_REASONING_DROP };

typedef struct export_config {
    enum export_format format;
    int sft_every_turn;      /* sft: every correct turn instead of each trajectory's last correct */
    char *verdicts;          /* comma list; "any" for no filter [sft: correct; multiturn: any
                              * other value keeps solved trajectories; preference: restricts the
                              * rejected side, chosen is always correct; rl: not used] */
    double min_speedup;      /* eager speedup, 0 = no filter */
    char *splits;            /* comma list [train,valid,test] */
    char *levels;            /* comma list, NULL = all */
    enum export_dedup dedup; /* representatives only [near] */
    enum export_reasoning reasoning; /* sft, multiturn, preference, plan [field] */
    int max_pairs;           /* preference pairs per problem [64] */
    long long shard_bytes;   /* uncompressed bytes per shard [256 MiB] */
    int gzip, gzip_level;    /* [1, 6] */
    int tar;                 /* also write <out>.tar */
    int skip_bad_text;       /* leave out candidates whose kernel is not UTF-8 (else: fail) */
    char *system_prompt;     /* replaces the system message of every record; NULL: the one the
                              * model saw (recorded request), else kcollect's (prompt_text.h) */
    char *runs;              /* comma list of run ids (--run), NULL = all */
    char *models;            /* comma list of models (--model), NULL = all */
    int curate_first;        /* --curate: run kcurate first when labels are stale */
    int allow_stale;         /* --allow-stale: export stale labels (said in the manifest) */
    int no_racecheck;        /* --no-racecheck: export correct labels that need a race check and
                              * have none (said in the manifest) */
    int include_degenerate;  /* --include-degenerate: also problems marked "degenerate" */
    const char *out_dir, *db_path;
} export_config;

void export_config_defaults(export_config *c);
void export_config_free(export_config *c);
int export_format_parse(const char *s, enum export_format *f);
const char *export_format_name(enum export_format f);
int export_dedup_parse(const char *s, enum export_dedup *d);
const char *export_dedup_name(enum export_dedup d);
int export_reasoning_parse(const char *s, enum export_reasoning *r);
const char *export_reasoning_name(enum export_reasoning r);
/* Whether the problem pr (its manifest blob) is marked "degenerate": its output is trivial at
 * its inits (identically zero, saturated), so it teaches nothing and stays out of exports unless
 * --include-degenerate. A blob that is not JSON counts as not marked. */
#define EXPORT_DEGENERATE_SQL                                                                    \
    "(SELECT json_extract(CAST(b.data AS TEXT), '$.degenerate') FROM blobs b"                     \
    " WHERE b.sha256 = pr.manifest_sha AND json_valid(CAST(b.data AS TEXT))) IS NOT NULL"
/* Appends " AND NOT <degenerate>" to a query over problems pr, unless --include-degenerate. */
void export_degenerate_filter(const export_config *c, strbuf *where);
/* Canonical JSON of the settings that shape the output (not the paths). */
void export_config_json(const export_config *c, strbuf *out);

/* Filter values, checked before anything is read: an error names the option, the value and
 * the valid values. */
const char *const *export_verdict_names(void); /* NULL-terminated */
extern const char *const export_split_values[];
int export_check_list(const char *opt, const char *list, const char *const *valid, int allow_any,
                      strbuf *err);
int export_check_levels(const char *list, strbuf *err);
int export_parse_number(const char *opt, const char *v, double lo, double hi, double *out,
                        strbuf *err);

#endif
