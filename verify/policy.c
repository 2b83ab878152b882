/* policy: source checks applied before compilation (see policy.h). */
#include "verify/policy.h"
#include "common/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const policy_allowed_includes[] = {
    "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h", "cuda_pipeline.h",
    "cuda_pipeline_primitives.h", "cuda_awbarrier.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "cooperative_groups/scan.h", "cooperative_groups/memcpy_async.h",
    "cuda/barrier", "cuda/pipeline", "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits",
    "cuda/std/utility", "cuda/std/array", "cuda/std/cmath", NULL};

/* Copies source with comments blanked (newlines kept) and line continuations
 * removed, keeping a map from each output byte to its original line. */
static void logical_text(const char *src, strbuf *out, int **line_of, size_t *n)
{
    size_t len = strlen(src);
    *line_of = xmalloc((len + 1) * sizeof(int));
    sb_reset(out);
    int line = 1;
    enum { CODE, LINE_COMMENT, BLOCK_COMMENT, STRING, CHAR } state = CODE;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c == '\\' && src[i + 1] == '\n') { /* continuation: joins lines */
            line++;
            i++;
            continue;
        }
        if (c == '\\' && src[i + 1] == '\r' && src[i + 2] == '\n') {
            line++;
            i += 2;
            continue;
        }
        char emit = c;
        switch (state) {
        case CODE:
            if (c == '/' && src[i + 1] == '/')
                state = LINE_COMMENT, emit = ' ';
            else if (c == '/' && src[i + 1] == '*')
                state = BLOCK_COMMENT, emit = ' ', i++;
            else if (c == '"')
                state = STRING;
            else if (c == '\'')
                state = CHAR;
            break;
        case LINE_COMMENT:
            if (c == '\n')
                state = CODE;
            else
                emit = ' ';
            break;
        case BLOCK_COMMENT:
            if (c == '*' && src[i + 1] == '/')
                state = CODE, i++;
            if (c != '\n')
                emit = ' ';
            break;
        case STRING:
        case CHAR:
            if (c == '\\' && src[i + 1])
                sb_addch(out, c), (*line_of)[out->len - 1] = line, c = src[++i], emit = c;
            else if ((state == STRING && c == '"') || (state == CHAR && c == '\'') || c == '\n')
                state = CODE;
            break;
        }
        sb_addch(out, emit);
        (*line_of)[out->len - 1] = line;
        if (c == '\n')
            line++;
    }
    *n = out->len;
}

static int is_allowed(const char *name, size_t len)
{
    for (int i = 0; policy_allowed_includes[i]; i++)
        if (strlen(policy_allowed_includes[i]) == len &&
            strncmp(policy_allowed_includes[i], name, len) == 0)
            return 1;
    return 0;
}

static int check_include(const char *p, int line, strbuf *err)
{
    while (*p == ' ' || *p == '\t')
        p++;
    char close = *p == '<' ? '>' : *p == '"' ? '"' : 0;
    if (!close)
        return kc_fail(err, "line %d: #include must name a header literally, as #include <cuda_fp16.h>",
                       line);
    const char *end = strchr(p + 1, close);
    const char *nl = strchr(p + 1, '\n');
    if (!end || (nl && nl < end))
        return kc_fail(err, "line %d: unterminated #include", line);
    if (!is_allowed(p + 1, (size_t)(end - p - 1)))
        return kc_fail(err, "line %d: #include %.*s is not allowed (allowed: toolkit headers such as "
                            "cuda_fp16.h, cuda_bf16.h, mma.h, cooperative_groups.h, cuda/pipeline)",
                       line, (int)(end - p + 1), p);
    return 0;
}

/* Checks one directive starting after '#'. */
static int check_directive(const char *p, int line, strbuf *err)
{
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_')
        n++;
    if (n == 7 && strncmp(p, "include", 7) == 0)
        return check_include(p + 7, line, err);
    static const char *banned[] = {"include_next", "import", "embed", NULL};
    for (int i = 0; banned[i]; i++)
        if (strlen(banned[i]) == n && strncmp(p, banned[i], n) == 0)
            return kc_fail(err, "line %d: #%s is not allowed", line, banned[i]);
    return 0;
}

static int check_forbidden_tokens(const char *text, const int *line_of, strbuf *err)
{
    static const struct {
        const char *token, *why;
    } rules[] = {
        {"__has_include", "__has_include probes are not allowed"},
        {"%:", "digraph preprocessor forms (%:) are not allowed"},
        {"?\?=", "trigraphs are not allowed"},
    };
    for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
        const char *hit = strstr(text, rules[r].token);
        if (hit)
            return kc_fail(err, "line %d: %s", line_of[hit - text], rules[r].why);
    }
    return 0;
}

int policy_check(const char *source, strbuf *err)
{
    size_t len = strlen(source);
    if (len > KC_MAX_SOURCE_BYTES)
        return kc_fail(err, "the source is %zu bytes; the limit is %d", len, KC_MAX_SOURCE_BYTES);
    if (memchr(source, '\0', len) != NULL && strlen(source) != len)
        return kc_fail(err, "the source contains NUL bytes");
    strbuf text = STRBUF_INIT;
    int *line_of = NULL;
    size_t n = 0;
    logical_text(source, &text, &line_of, &n);
    int rc = check_forbidden_tokens(sb_str(&text), line_of, err);
    /* Directives: '#' first on a line (after blanks). */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i > 0 && text.buf[i - 1] != '\n')
            continue;
        size_t j = i;
        while (j < n && (text.buf[j] == ' ' || text.buf[j] == '\t'))
            j++;
        if (j < n && text.buf[j] == '#')
            rc = check_directive(text.buf + j + 1, line_of[j], err);
    }
    free(line_of);
    sb_free(&text);
    return rc;
}
