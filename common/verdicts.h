/* verdicts: the one table of the verifier's verdicts and the verdict classes kcurate labels them
 * with (names, order, class, kverify's exit code, who may say it, what it means). The worker's
 * validation, the service, kcurate, kexport and the schema test read it; schemas/kc.sql's CHECK
 * and verdict-class view, and schemas/record.schema.json's enum, must list the same names
 * (tests/unit/test_common_verdicts.c holds them to it). */
#ifndef KC_VERDICTS_H
#define KC_VERDICTS_H

typedef struct kc_verdict_info {
    const char *name;
    const char *verdict_class; /* a name of kc_verdict_classes */
    int exit_code;             /* kverify check's exit status: 0 ok, 1 wrong, 2 refused, 3 failed */
    int from_worker;           /* a GPU worker may report it (the rest come from the host) */
    const char *description;
} kc_verdict_info;

typedef struct kc_class_info {
    const char *name;
    int progress;    /* rank for "better than the previous turn" (kcurate's improved label) */
    int outcome;     /* rank for the best outcome of a plan's steps (kexport --format plan) */
    const char *description;
} kc_class_info;

#define KC_N_VERDICTS 10
#define KC_N_CLASSES 7

/* In the order reports and kexport list them. */
extern const kc_verdict_info kc_verdicts[KC_N_VERDICTS];
/* In the order export manifests count them. */
extern const kc_class_info kc_verdict_classes[KC_N_CLASSES];

/* The entry of a verdict or class name; NULL for an unknown one (or NULL). */
const kc_verdict_info *kc_verdict_find(const char *name);
const kc_class_info *kc_class_find(const char *name);
/* The class of a verdict: "unverified" for none (NULL or empty) or an unknown one. */
const char *kc_verdict_class_of(const char *verdict);
/* kverify's exit status for a verdict: 2 for an unknown one. */
int kc_verdict_exit_code(const char *verdict);

#endif
