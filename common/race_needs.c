/* race_needs: which correct labels need a race check, and which still wait for one (see
 * race_needs.h). */
#include "common/race_needs.h"
#include "common/error.h"

#include <ctype.h>
#include <jansson.h>
#include <string.h>

/* Source texts that mean shared memory or communication between threads or blocks. A plain
 * substring match, comments included: generous. */
static const struct {
    const char *text, *why;
    int whole_word; /* only as a word of its own ("asm", not "plasma") */
} source_signs[] = {
    {"__shared__", "shared memory (__shared__ in the source)", 0},
    {"atomic", "atomics", 0},
    {"__threadfence", "memory fences (__threadfence)", 0},
    {"volatile", "volatile accesses", 0},
    {"cooperative_groups", "cooperative groups", 0},
    {"this_grid", "grid-wide synchronisation (this_grid)", 0},
    {"grid_group", "grid-wide synchronisation (grid_group)", 0},
    {"__ldcv", "uncached loads (__ldcv)", 0},
    {"__ldcg", "L2-only loads (__ldcg)", 0},
    {"__stcg", "L2-only stores (__stcg)", 0},
    {"__stwt", "write-through stores (__stwt)", 0},
    {"__nanosleep", "spin waits (__nanosleep)", 0},
    {"asm", "inline PTX (asm)", 1},
};

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int has_word(const char *source, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(source, word); p; p = strstr(p + 1, word))
        if ((p == source || !word_char(p[-1])) && !word_char(p[n]))
            return 1;
    return 0;
}

static int source_sign(const char *source, strbuf *why)
{
    for (size_t i = 0; i < sizeof source_signs / sizeof source_signs[0]; i++) {
        int found = source_signs[i].whole_word ? has_word(source, source_signs[i].text)
                                               : strstr(source, source_signs[i].text) != NULL;
        if (found) {
            if (why)
                sb_adds(why, source_signs[i].why);
            return 1;
        }
    }
    return 0;
}

/* The launch configuration of one @launch line ("<<<grid, block[, smem]>>>"): whether a
 * third argument is there and is not a plain 0. Commas inside parentheses (dim3(x, y)) do not
 * count. */
static int launch_has_dynamic_smem(const char *line, const char *end)
{
    const char *p = strstr(line, "<<<");
    if (!p || p >= end)
        return 0;
    p += 3;
    int depth = 0, arg = 0;
    const char *third = NULL;
    for (; p < end && strncmp(p, ">>>", 3) != 0; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == ',' && depth == 0 && ++arg == 2)
            third = p + 1;
        else if (*p == ',' && depth == 0 && arg > 2)
            break;
    }
    if (!third)
        return 0;
    while (third < p && (*third == ' ' || *third == '\t'))
        third++;
    const char *stop = third;
    while (stop < p && *stop != ',')
        stop++;
    while (stop > third && (stop[-1] == ' ' || stop[-1] == '\t'))
        stop--;
    if (stop == third)
        return 0;
    for (const char *q = third; q < stop; q++)
        if (*q != '0')
            return 1;
    return 0; /* 0, 00, ... */
}

static int dynamic_smem(const char *source, strbuf *why)
{
    for (const char *line = source; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *tag = strstr(line, "@launch");
        if (tag && tag < end && launch_has_dynamic_smem(tag, end)) {
            if (why)
                sb_adds(why, "dynamic shared memory (a third <<<>>> argument on an @launch line)");
            return 1;
        }
        line = *end ? end + 1 : NULL;
    }
    return 0;
}

static int static_smem(const char *kernels_json, strbuf *why)
{
    json_t *kernels = kernels_json ? json_loads(kernels_json, 0, NULL) : NULL;
    int found = 0;
    for (size_t i = 0; i < json_array_size(kernels) && !found; i++) {
        json_t *k = json_array_get(kernels, i);
        json_int_t bytes = json_integer_value(json_object_get(k, "shared_bytes"));
        if (bytes > 0) {
            found = 1;
            const char *name = json_string_value(json_object_get(k, "name"));
            if (why)
                sb_addf(why, "static shared memory (kernel %s: %lld bytes)", name ? name : "?",
                        (long long)bytes);
        }
    }
    json_decref(kernels);
    return found;
}

int race_check_needed(const char *source, const char *kernels_json, strbuf *why)
{
    if (!source) {
        if (why)
            sb_adds(why, "the source is not known");
        return 1;
    }
    return static_smem(kernels_json, why) || source_sign(source, why) || dynamic_smem(source, why);
}

static void sql_race_check_needed(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *source = (const char *)sqlite3_value_text(argv[0]);
    const char *kernels = (const char *)sqlite3_value_text(argv[1]);
    sqlite3_result_int(ctx, race_check_needed(source, kernels, NULL));
}

int race_needs_register(sqlite3 *db, strbuf *err)
{
    if (sqlite3_create_function_v2(db, "kc_race_check_needed", 2,
                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                   sql_race_check_needed, NULL, NULL, NULL) != SQLITE_OK)
        return kc_fail(err, "database: %s", sqlite3_errmsg(db));
    return 0;
}

/* An inline racecheck (`--sanitizer all`) that ran and exited 0 is a clean check too. */
#define INLINE_CLEAN_RACECHECK                                                                   \
    "EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(v.evidence_json) THEN v.evidence_json" \
    " ELSE '{}' END, '$.sanitizer.runs') e WHERE json_extract(e.value, '$.tool') = 'racecheck'"  \
    " AND json_extract(e.value, '$.exit') = 0)"

const char race_unchecked_sql[] =
    "SELECT v.id, c.id, c.problem_id, c.source_sha, coalesce(v.seeds, ''), coalesce(cp.arch, '')"
    " FROM candidates c"
    " JOIN verifications v ON v.id = (SELECT max(id) FROM verifications w"
    "                                 WHERE w.candidate_id = c.id)"
    " JOIN blobs b ON b.sha256 = c.source_sha" /* a missing one: the blob checks name it */
    " LEFT JOIN compiles cp ON cp.id = (SELECT max(id) FROM compiles x"
    "                                   WHERE x.candidate_id = c.id AND x.ok)"
    " WHERE v.verdict = 'correct'"
    " AND NOT EXISTS (SELECT 1 FROM race_checks r WHERE r.verification_id = v.id"
    "                 AND r.result = 'clean')"
    " AND NOT " INLINE_CLEAN_RACECHECK
    " AND kc_race_check_needed(CAST(b.data AS TEXT), cp.kernels_json)"
    " ORDER BY c.problem_id, c.id LIMIT ?1";

long long race_unchecked_count(sqlite3 *db, strbuf *err)
{
    if (race_needs_register(db, err))
        return -1;
    strbuf sql = STRBUF_INIT;
    sb_addf(&sql, "SELECT count(*) FROM (%s)", race_unchecked_sql);
    sqlite3_stmt *st = NULL;
    long long n = -1;
    if (sqlite3_prepare_v2(db, sql.buf, -1, &st, NULL) != SQLITE_OK) {
        kc_fail(err, "database: %s", sqlite3_errmsg(db));
    } else {
        sqlite3_bind_int(st, 1, -1);
        if (sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        else
            kc_fail(err, "database: %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(st);
    sb_free(&sql);
    return n;
}
