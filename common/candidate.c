/* candidate: extraction of the code block from a response and parsing of the
 * kc-cuda v1 launch and scratch lines (see candidate.h). */
#include "common/candidate.h"
#include "common/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- extraction ---- */

/* Removes <think>...</think> sections; a closing tag with no opening one drops
 * everything before it (some servers strip the opening tag). */
static void strip_thinking(const char *in, strbuf *out)
{
    sb_reset(out);
    const char *close = strstr(in, "</think>");
    const char *open = strstr(in, "<think>");
    if (close && (!open || close < open)) {
        in = close + strlen("</think>");
    }
    while (*in) {
        const char *o = strstr(in, "<think>");
        if (!o) {
            sb_adds(out, in);
            return;
        }
        sb_add(out, in, (size_t)(o - in));
        const char *c = strstr(o, "</think>");
        if (!c)
            return; /* unterminated thinking: nothing after it is an answer */
        in = c + strlen("</think>");
    }
}

struct block {
    const char *start;
    size_t len;
    int closed;
    int cuda_lang;
};

static int is_cuda_lang(const char *lang, size_t n)
{
    static const char *names[] = {"cuda", "cu", "c++", "cpp", "c", "cuh", NULL};
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && strncasecmp(lang, names[i], n) == 0)
            return 1;
    return 0;
}

/* Finds the fenced blocks (``` at a line start). */
static int find_blocks(const char *text, struct block *blocks, int max)
{
    int n = 0;
    const char *p = text;
    while (n < max) {
        const char *f = strstr(p, "```");
        if (!f)
            break;
        if (f != text && f[-1] != '\n' && f[-1] != ' ' && f[-1] != '\t') {
            p = f + 3;
            continue;
        }
        const char *lang = f + 3;
        const char *eol = strchr(lang, '\n');
        if (!eol)
            break;
        size_t ln = (size_t)(eol - lang);
        while (ln && isspace((unsigned char)lang[ln - 1]))
            ln--;
        struct block *b = &blocks[n++];
        b->start = eol + 1;
        b->cuda_lang = is_cuda_lang(lang, ln);
        const char *end = strstr(b->start, "\n```");
        if (b->start[0] == '`' && strncmp(b->start, "```", 3) == 0)
            end = b->start - 1;
        if (!end) {
            b->len = strlen(b->start);
            b->closed = 0;
            break;
        }
        b->len = (size_t)(end + 1 - b->start);
        b->closed = 1;
        p = end + 4;
    }
    return n;
}

static int has_launch(const struct block *b)
{
    const char *needle = "@launch";
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= b->len; i++)
        if (memcmp(b->start + i, needle, k) == 0)
            return 1;
    return 0;
}

int candidate_extract(const char *response, strbuf *code, strbuf *err)
{
    size_t size = strnlen(response, KC_MAX_RESPONSE_BYTES + 1);
    if (size > KC_MAX_RESPONSE_BYTES)
        return kc_fail(err, "the answer is longer than %d bytes (the limit)", KC_MAX_RESPONSE_BYTES);
    strbuf answer = STRBUF_INIT;
    strip_thinking(response, &answer);
    struct block blocks[64];
    int n = find_blocks(answer.buf ? answer.buf : "", blocks, 64);
    /* Exactly one code block (the format says so): a second one is not guessed between. */
    int pick = -1, n_code = 0;
    for (int i = 0; i < n; i++)
        if (blocks[i].cuda_lang || has_launch(&blocks[i]))
            pick = i, n_code++;
    int rc = 0;
    if (n_code > 1) {
        rc = kc_fail(err, "the answer has %d ```cuda code blocks; the format takes exactly one: put "
                          "the whole kernel, with its // @launch lines, in a single ```cuda block", n_code);
    } else if (pick < 0) {
        rc = kc_fail(err, n ? "no ```cuda code block with @launch lines in the answer"
                            : "no fenced ```cuda code block in the answer");
    } else if (!blocks[pick].closed) {
        rc = kc_fail(err, "the ```cuda code block is not closed (answer truncated?)");
    } else {
        sb_reset(code);
        sb_add(code, blocks[pick].start, blocks[pick].len);
    }
    sb_free(&answer);
    return rc;
}

static int has_launch_line(const char *text)
{
    for (const char *p = strstr(text, "@launch"); p; p = strstr(p + 1, "@launch")) {
        const char *q = p;
        while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
            q--;
        if (q - text >= 2 && q[-1] == '/' && q[-2] == '/')
            return 1;
    }
    return 0;
}

int candidate_source(const char *text, strbuf *code, strbuf *err)
{
    if (strstr(text, "```")) {
        if (candidate_extract(text, code, err))
            return -1;
    } else if (has_launch_line(text)) {
        sb_reset(code);
        sb_adds(code, text);
    } else {
        return kc_fail(err, "no ```cuda code block in the answer: the kernel goes in one ```cuda "
                            "block with its // @launch lines");
    }
    if (code->len > KC_MAX_SOURCE_BYTES) /* the one size rule: check_sizes and the policy's */
        return kc_fail(err, "the code is longer than %d bytes (the limit)", KC_MAX_SOURCE_BYTES);
    return candidate_check_text(code->buf, code->len, err);
}

/* Length of the UTF-8 sequence at s (n bytes left), 0 when it is not one (overlong forms,
 * surrogates and code points above U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!k || k > n || (k == 2 && c < 0xC2) || (k == 4 && c > 0xF4))
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (k == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)))
        return 0;
    if (k == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
        return 0;
    return k;
}

int candidate_check_text(const char *s, size_t len, strbuf *err)
{
    const unsigned char *u = (const unsigned char *)s;
    int line = 1;
    for (size_t i = 0; i < len;) {
        if (u[i] == 0)
            return kc_fail(err, "line %d: a NUL byte: a candidate must be UTF-8 text", line);
        size_t k = utf8_seq(u + i, len - i);
        if (!k)
            return kc_fail(err, "line %d: byte 0x%02X is not valid UTF-8: a candidate must be UTF-8 "
                                "text (write non-ASCII characters as UTF-8, or leave them out)",
                           line, u[i]);
        line += u[i] == '\n';
        i += k;
    }
    return 0;
}

/* ---- launch and scratch lines ---- */

struct lctx {
    int line;
    const problem *p;
    launch_unit *u;
    strbuf *err;
};

static int lfail(struct lctx *c, const char *fmt, const char *a, const char *b)
{
    strbuf m = STRBUF_INIT;
    sb_addf(&m, fmt, a, b);
    kc_fail(c->err, "line %d: %s", c->line, m.buf);
    sb_free(&m);
    return -1;
}

/* Frees the n parts split so far; returns -1. */
static int split_fail(char **out, int n)
{
    for (int i = 0; i < n; i++)
        free(out[i]);
    return -1;
}

/* Splits s on top-level commas (outside parentheses). Returns count, or -1 with nothing
 * left allocated. */
static int split_args(const char *s, size_t len, char **out, int max)
{
    int n = 0, depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? s[i] : ',';
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        if (depth < 0)
            return split_fail(out, n);
        if (c == ',' && depth == 0) {
            if (n >= max)
                return split_fail(out, n);
            strbuf a = STRBUF_INIT;
            sb_add(&a, s + start, i - start);
            sb_trim(&a);
            out[n++] = sb_detach(&a);
            start = i + 1;
        }
    }
    return depth == 0 ? n : split_fail(out, n);
}

static void free_strs(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
}

static int scratch_index(const launch_unit *u, const char *name)
{
    for (int i = 0; i < u->n_scratch; i++)
        if (strcmp(u->scratch[i].name, name) == 0)
            return i;
    return -1;
}

static int is_dim(const problem *p, const char *name)
{
    int64_t v;
    return dimset_get(&p->dims_default, name, &v);
}

static void describe_names(const problem *p, const launch_unit *u, strbuf *out)
{
    sb_adds(out, "tensors:");
    for (int i = 0; i < p->n_inputs; i++)
        sb_addf(out, " %s", p->inputs[i].name);
    for (int i = 0; i < p->n_outputs; i++)
        sb_addf(out, " %s", p->outputs[i].name);
    for (int i = 0; i < u->n_scratch; i++)
        sb_addf(out, " %s", u->scratch[i].name);
    sb_adds(out, "; dims:");
    for (int i = 0; i < p->dims_default.n; i++)
        sb_addf(out, " %s", p->dims_default.names[i]);
    if (p->n_params) {
        sb_adds(out, "; params:");
        for (int i = 0; i < p->n_params; i++)
            sb_addf(out, " %s", p->params[i].name);
    }
}

/* Checks that every name in an integer expression is a dim. */
static int check_int_expr(struct lctx *c, const char *expr, const char *what, const char *kernel)
{
    char names[32][64];
    strbuf e = STRBUF_INIT;
    int n = expr_names(expr, names, 32, &e);
    if (n < 0) {
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "%s in %s of launch of %s", e.buf, what, kernel);
        kc_fail(c->err, "line %d: %s", c->line, m.buf);
        sb_free(&m), sb_free(&e);
        return -1;
    }
    sb_free(&e);
    for (int i = 0; i < n; i++) {
        if (is_dim(c->p, names[i]))
            continue;
        strbuf m = STRBUF_INIT, known = STRBUF_INIT;
        describe_names(c->p, c->u, &known);
        int is_tensor = problem_tensor(c->p, names[i], NULL) || scratch_index(c->u, names[i]) >= 0;
        sb_addf(&m, "%s '%s' in %s of launch of %s (%s)",
                is_tensor ? "tensor used in an integer expression:" : "unknown name", names[i],
                what, kernel, known.buf);
        kc_fail(c->err, "line %d: %s", c->line, m.buf);
        sb_free(&m), sb_free(&known);
        return -1;
    }
    return 0;
}

static int tensor_index(const problem *p, const launch_unit *u, const char *name)
{
    for (int i = 0; i < p->n_inputs; i++)
        if (strcmp(p->inputs[i].name, name) == 0)
            return i;
    for (int i = 0; i < p->n_outputs; i++)
        if (strcmp(p->outputs[i].name, name) == 0)
            return p->n_inputs + i;
    int s = scratch_index(u, name);
    return s < 0 ? -1 : p->n_inputs + p->n_outputs + s;
}

static int is_identifier(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static int is_float_literal(const char *s, double *v)
{
    if (!strpbrk(s, ".eE") && !(strlen(s) > 1 && (s[strlen(s) - 1] == 'f')))
        return 0;
    if (strncmp(s, "0x", 2) == 0 || strncmp(s, "0X", 2) == 0)
        return 0;
    char *end;
    *v = strtod(s, &end);
    if (end == s)
        return 0;
    if (*end == 'f' || *end == 'F')
        end++;
    return *end == '\0';
}

static int parse_arg(struct lctx *c, launch *l, const char *text, int idx)
{
    launch_arg *a = &l->args[idx];
    a->text = xstrdup(text);
    double fv;
    if (is_identifier(text)) {
        int t = tensor_index(c->p, c->u, text);
        if (t >= 0) {
            a->kind = KC_ARG_TENSOR;
            a->tensor = t;
            return 0;
        }
        for (int i = 0; i < c->p->n_params; i++)
            if (strcmp(c->p->params[i].name, text) == 0) {
                a->kind = KC_ARG_PARAM;
                a->param = i;
                return 0;
            }
        if (!is_dim(c->p, text)) {
            strbuf known = STRBUF_INIT, m = STRBUF_INIT;
            describe_names(c->p, c->u, &known);
            sb_addf(&m, "line %d: unknown tensor '%s' in launch of %s (%s)", c->line, text,
                    l->kernel, known.buf);
            kc_fail(c->err, "%s", m.buf);
            sb_free(&known), sb_free(&m);
            return -1;
        }
    }
    if (is_float_literal(text, &fv)) {
        a->kind = KC_ARG_FLOAT;
        a->fval = fv;
        return 0;
    }
    a->kind = KC_ARG_INT;
    strbuf what = STRBUF_INIT;
    sb_addf(&what, "argument %d", idx + 1);
    int rc = check_int_expr(c, text, what.buf, l->kernel);
    sb_free(&what);
    return rc;
}

/* grid or block: "expr" or "dim3(x[, y[, z]])" */
static int parse_geometry(struct lctx *c, launch *l, const char *text, char *out[3],
                          const char *what)
{
    out[0] = out[1] = out[2] = NULL;
    const char *inner = text;
    size_t len = strlen(text);
    if (strncmp(text, "dim3", 4) == 0) {
        const char *open = strchr(text, '(');
        if (!open || text[len - 1] != ')')
            return lfail(c, "malformed dim3(...) for %s of %s", what, l->kernel);
        inner = open + 1;
        len = (size_t)(text + len - 1 - inner);
    }
    char *parts[4];
    int n = split_args(inner, len, parts, 4);
    if (n < 1 || n > 3 || (n > 1 && inner == text)) {
        if (n > 0)
            free_strs(parts, n);
        return lfail(c, "%s of %s must be an expression or dim3(x, y, z)", what, l->kernel);
    }
    for (int i = 0; i < 3; i++)
        out[i] = i < n ? parts[i] : xstrdup("1");
    for (int i = 0; i < n; i++)
        if (check_int_expr(c, out[i], what, l->kernel))
            return -1;
    return 0;
}

/* "name<<<grid, block[, smem]>>>(args);" */
static int parse_launch(struct lctx *c, const char *text)
{
    if (c->u->n_launches >= KC_MAX_LAUNCHES)
        return lfail(c, "too many launches (at most %s)%s", "16", "");
    launch *l = &c->u->launches[c->u->n_launches++];
    memset(l, 0, sizeof(*l));
    l->line = c->line;
    const char *lt = strstr(text, "<<<");
    const char *gt = lt ? strstr(lt, ">>>") : NULL;
    if (!lt || !gt)
        return lfail(c, "expected '@launch kernel<<<grid, block[, smem]>>>(args);'%s%s", "", "");
    strbuf name = STRBUF_INIT;
    sb_add(&name, text, (size_t)(lt - text));
    sb_trim(&name);
    l->kernel = sb_detach(&name);
    if (!is_identifier(l->kernel))
        return lfail(c, "bad kernel name '%s' in @launch%s", l->kernel, "");
    char *cfg[4];
    int n = split_args(lt + 3, (size_t)(gt - lt - 3), cfg, 4);
    if (n < 2 || n > 3) {
        if (n > 0)
            free_strs(cfg, n);
        return lfail(c, "launch of %s needs <<<grid, block[, shared bytes]>>>%s", l->kernel, "");
    }
    int rc = parse_geometry(c, l, cfg[0], l->grid, "grid") ||
             parse_geometry(c, l, cfg[1], l->block, "block");
    l->smem = n == 3 ? xstrdup(cfg[2]) : xstrdup("0");
    free_strs(cfg, n);
    if (rc || check_int_expr(c, l->smem, "shared memory size", l->kernel))
        return -1;
    const char *open = gt + 3;
    while (isspace((unsigned char)*open))
        open++;
    const char *close = strrchr(open, ')');
    if (*open != '(' || !close)
        return lfail(c, "launch of %s needs an argument list (...)%s", l->kernel, "");
    const char *tail = close + 1;
    while (isspace((unsigned char)*tail) || *tail == ';')
        tail++;
    if (*tail)
        return lfail(c, "unexpected text after the arguments of %s: '%s'", l->kernel, tail);
    char *args[KC_MAX_ARGS];
    size_t alen = (size_t)(close - open - 1);
    int na = 0;
    strbuf trimmed = STRBUF_INIT;
    sb_add(&trimmed, open + 1, alen);
    sb_trim(&trimmed);
    if (trimmed.len)
        na = split_args(open + 1, alen, args, KC_MAX_ARGS);
    sb_free(&trimmed);
    if (na < 0)
        return lfail(c, "cannot split the arguments of %s (unbalanced parentheses or more than 32)%s",
                     l->kernel, "");
    for (int i = 0; i < na; i++) {
        if (!rc && !*args[i])
            rc = lfail(c, "empty argument in launch of %s%s", l->kernel, "");
        if (!rc)
            rc = parse_arg(c, l, args[i], i);
        l->n_args = i + 1;
    }
    free_strs(args, na);
    return rc;
}

/* "name dtype[count]" */
static int parse_scratch(struct lctx *c, const char *text)
{
    if (c->u->n_scratch >= KC_MAX_SCRATCH)
        return lfail(c, "too many scratch buffers (at most %s)%s", "8", "");
    char name[64], dtype[16];
    int consumed = 0;
    if (sscanf(text, "%63[A-Za-z0-9_] %15[a-z0-9] [%n", name, dtype, &consumed) != 2 || !consumed)
        return lfail(c, "expected '@scratch name dtype[count]', e.g. '@scratch partial f32[B*64]'%s%s",
                     "", "");
    const char *close = strrchr(text, ']');
    if (!close || close < text + consumed)
        return lfail(c, "scratch %s: missing ']'%s", name, "");
    scratch_spec *s = &c->u->scratch[c->u->n_scratch];
    memset(s, 0, sizeof(*s));
    if (dtype_parse(dtype, &s->dtype))
        return lfail(c, "scratch %s: unknown dtype '%s'", name, dtype);
    if (tensor_index(c->p, c->u, name) >= 0 || problem_param(c->p, name) || is_dim(c->p, name))
        return lfail(c, "scratch name '%s' is already used by the problem%s", name, "");
    s->line = c->line;
    s->name = xstrdup(name);
    s->count = xstrndup(text + consumed, (size_t)(close - text - consumed));
    c->u->n_scratch++;
    return check_int_expr(c, s->count, "scratch size", name);
}

/* Returns the text after "// @word" on this line, or NULL. */
static const char *directive(const char *line, size_t len, const char *word, strbuf *rest)
{
    const char *p = line, *end = line + len;
    while (p < end && isspace((unsigned char)*p))
        p++;
    if (end - p < 2 || p[0] != '/' || p[1] != '/')
        return NULL;
    p += 2;
    while (p < end && isspace((unsigned char)*p))
        p++;
    size_t wl = strlen(word);
    if ((size_t)(end - p) < wl || strncmp(p, word, wl) != 0 ||
        (p + wl < end && !isspace((unsigned char)p[wl])))
        return NULL;
    sb_reset(rest);
    sb_add(rest, p + wl, (size_t)(end - p - wl));
    sb_trim(rest);
    return rest->buf;
}

/* The limits checked before any line is parsed: source size, directive line lengths and
 * counts. */
static int check_sizes(const char *source, strbuf *err)
{
    size_t size = strnlen(source, KC_MAX_SOURCE_BYTES + 1);
    if (size > KC_MAX_SOURCE_BYTES)
        return kc_fail(err, "the code is longer than %d bytes (the limit)", KC_MAX_SOURCE_BYTES);
    strbuf rest = STRBUF_INIT;
    int line_no = 0, launches = 0, scratch = 0, rc = 0;
    for (const char *line = source; *line && !rc;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        line_no++;
        int is_launch = directive(line, len, "@launch", &rest) != NULL;
        int is_scratch = !is_launch && directive(line, len, "@scratch", &rest) != NULL;
        launches += is_launch, scratch += is_scratch;
        if ((is_launch || is_scratch) && len > KC_MAX_DIRECTIVE_LINE)
            rc = kc_fail(err, "line %d: the %s line is %zu bytes long; the limit is %d", line_no,
                         is_launch ? "@launch" : "@scratch", len, KC_MAX_DIRECTIVE_LINE);
        else if (launches > KC_MAX_LAUNCHES)
            rc = kc_fail(err, "line %d: too many launches (at most %d)", line_no, KC_MAX_LAUNCHES);
        else if (scratch > KC_MAX_SCRATCH)
            rc = kc_fail(err, "line %d: too many scratch buffers (at most %d)", line_no,
                         KC_MAX_SCRATCH);
        line = nl ? nl + 1 : line + len;
    }
    sb_free(&rest);
    return rc;
}

/* ---- values under the problem's dims ---- */

struct dims_ctx {
    const dimset *dims;
    const char *label; /* "default", "small", "alt[0]" */
    strbuf *err;
};

static void describe_dims(const struct dims_ctx *d, strbuf *out)
{
    sb_addf(out, "dims %s (", d->label);
    for (int i = 0; i < d->dims->n; i++)
        sb_addf(out, "%s%s=%lld", i ? ", " : "", d->dims->names[i], (long long)d->dims->values[i]);
    sb_adds(out, ")");
}

/* Evaluates expr under d; on failure or outside [lo, hi] fails naming line and what. */
static int eval_in_range(const struct dims_ctx *d, int line, const char *what, const char *expr,
                         int64_t lo, int64_t hi, int64_t *out)
{
    strbuf e = STRBUF_INIT, where = STRBUF_INIT;
    int64_t v = 0;
    int rc = expr_eval(expr, d->dims, &v, &e);
    describe_dims(d, &where);
    if (rc)
        kc_fail(d->err, "line %d: %s at %s: %s", line, what, where.buf, e.buf);
    else if (v < lo || v > hi)
        rc = kc_fail(d->err, "line %d: %s is %lld at %s; it must lie in [%lld, %lld]", line, what,
                     (long long)v, where.buf, (long long)lo, (long long)hi);
    if (out)
        *out = v;
    sb_free(&e), sb_free(&where);
    return rc;
}

static int check_launch_values(const struct dims_ctx *d, const launch *l)
{
    static const char *axis[3] = {"x", "y", "z"};
    const int64_t grid_max[3] = {KC_MAX_GRID_X, KC_MAX_GRID_YZ, KC_MAX_GRID_YZ};
    const int64_t block_max[3] = {KC_MAX_BLOCK_XY, KC_MAX_BLOCK_XY, KC_MAX_BLOCK_Z};
    int64_t block[3], threads = 1;
    strbuf what = STRBUF_INIT;
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        sb_reset(&what), sb_addf(&what, "grid.%s of %s", axis[k], l->kernel);
        rc = eval_in_range(d, l->line, what.buf, l->grid[k], 0, grid_max[k], NULL);
        sb_reset(&what), sb_addf(&what, "block.%s of %s", axis[k], l->kernel);
        if (!rc)
            rc = eval_in_range(d, l->line, what.buf, l->block[k], 1, block_max[k], &block[k]);
        threads *= rc ? 1 : block[k]; /* each factor is at most 1024: no overflow */
    }
    if (!rc && threads > KC_MAX_BLOCK_THREADS) {
        sb_reset(&what), describe_dims(d, &what);
        rc = kc_fail(d->err, "line %d: a block of %s has %lld threads at %s; the limit is %lld",
                     l->line, l->kernel, (long long)threads, what.buf, KC_MAX_BLOCK_THREADS);
    }
    sb_reset(&what), sb_addf(&what, "dynamic shared memory of %s", l->kernel);
    if (!rc)
        rc = eval_in_range(d, l->line, what.buf, l->smem, 0, KC_MAX_DYNAMIC_SMEM, NULL);
    for (int i = 0; i < l->n_args && !rc; i++) {
        if (l->args[i].kind != KC_ARG_INT)
            continue;
        sb_reset(&what), sb_addf(&what, "argument %d of %s", i + 1, l->kernel);
        rc = eval_in_range(d, l->line, what.buf, l->args[i].text, INT64_MIN, INT64_MAX, NULL);
    }
    sb_free(&what);
    return rc;
}

static int check_scratch_values(const struct dims_ctx *d, const launch_unit *u)
{
    int64_t total = 0;
    for (int i = 0; i < u->n_scratch; i++) {
        const scratch_spec *s = &u->scratch[i];
        int64_t n, bytes;
        strbuf what = STRBUF_INIT;
        sb_addf(&what, "the element count of scratch %s", s->name);
        int rc = eval_in_range(d, s->line, what.buf, s->count, 0, INT64_MAX, &n);
        sb_free(&what);
        if (rc)
            return -1;
        if (__builtin_mul_overflow(n, (int64_t)dtype_size(s->dtype), &bytes) ||
            __builtin_add_overflow(total, bytes, &total) || total > KC_MAX_SCRATCH_BYTES) {
            strbuf where = STRBUF_INIT;
            describe_dims(d, &where);
            kc_fail(d->err, "line %d: scratch %s: %lld elements of %s take the scratch of this "
                            "candidate past %lld bytes (16 GiB) at %s", s->line, s->name,
                    (long long)n, dtype_name(s->dtype), KC_MAX_SCRATCH_BYTES, where.buf);
            sb_free(&where);
            return -1;
        }
    }
    return 0;
}

/* Every value a launch unit computes, under every dim set the worker may use. */
static int check_values(const problem *p, const launch_unit *u, strbuf *err)
{
    struct dims_ctx sets[2 + KC_MAX_ALT] = {{&p->dims_default, "default", err},
                                            {&p->dims_small, "small", err}};
    char labels[KC_MAX_ALT][16];
    int n = 2;
    for (int i = 0; i < p->n_alt; i++) {
        snprintf(labels[i], sizeof(labels[i]), "alt[%d]", i);
        sets[n++] = (struct dims_ctx){&p->dims_alt[i], labels[i], err};
    }
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < u->n_launches; i++)
            if (check_launch_values(&sets[k], &u->launches[i]))
                return -1;
        if (check_scratch_values(&sets[k], u))
            return -1;
    }
    return 0;
}

int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
    if (check_sizes(source, err))
        return -1;
    struct lctx c = {.p = p, .u = out, .err = err};
    strbuf rest = STRBUF_INIT;
    int rc = 0;
    /* Pass 1: scratch lines (launches may name scratch declared anywhere). */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        c.line = 0;
        for (const char *line = source; *line && !rc;) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            c.line++;
            const char *text = directive(line, len, pass == 0 ? "@scratch" : "@launch", &rest);
            if (text)
                rc = pass == 0 ? parse_scratch(&c, text) : parse_launch(&c, text);
            line = nl ? nl + 1 : line + len;
        }
    }
    if (!rc && out->n_launches == 0)
        rc = kc_fail(err, "no '// @launch kernel<<<grid, block>>>(args);' line in the code");
    if (!rc)
        rc = check_values(p, out, err);
    sb_free(&rest);
    return rc;
}

void launch_unit_free(launch_unit *u)
{
    for (int i = 0; i < u->n_launches; i++) {
        launch *l = &u->launches[i];
        free(l->kernel), free(l->smem);
        for (int k = 0; k < 3; k++)
            free(l->grid[k]), free(l->block[k]);
        for (int a = 0; a < l->n_args; a++)
            free(l->args[a].text);
    }
    for (int i = 0; i < u->n_scratch; i++)
        free(u->scratch[i].name), free(u->scratch[i].count);
    memset(u, 0, sizeof(*u));
}

int launch_geometry(const launch *l, const dimset *dims, int64_t grid[3], int64_t block[3],
                    int64_t *smem, strbuf *err)
{
    for (int i = 0; i < 3; i++)
        if (expr_eval(l->grid[i], dims, &grid[i], err) || expr_eval(l->block[i], dims, &block[i], err))
            return -1;
    return expr_eval(l->smem, dims, smem, err);
}
