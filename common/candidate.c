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
    strbuf answer = STRBUF_INIT;
    strip_thinking(response, &answer);
    struct block blocks[64];
    int n = find_blocks(answer.buf ? answer.buf : "", blocks, 64);
    int pick = -1;
    /* The last block with launch lines wins (a revision usually ends with the final version). */
    for (int i = 0; i < n; i++)
        if (has_launch(&blocks[i]))
            pick = i;
    if (pick < 0)
        for (int i = 0; i < n; i++)
            if (blocks[i].cuda_lang)
                pick = i;
    int rc = 0;
    if (pick < 0) {
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

/* Splits s on top-level commas (outside parentheses). Returns count or -1. */
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
            return -1;
        if (c == ',' && depth == 0) {
            if (n >= max)
                return -1;
            strbuf a = STRBUF_INIT;
            sb_add(&a, s + start, i - start);
            sb_trim(&a);
            out[n++] = sb_detach(&a);
            start = i + 1;
        }
    }
    return depth == 0 ? n : -1;
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

int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
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
