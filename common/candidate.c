/* candidate: extraction of the code block from a response and parsing of the
 * kc-cuda v1 launch, scratch, loop and layer lines (see candidate.h), with their values checked
 * under every dims set over the expanded schedule (common/schedule.c). */
#include "common/candidate.h"
#include "common/error.h"
#include "common/schedule.h"

#include <ctype.h>
#include <stdarg.h>
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
    int depth;                            /* @for blocks open at this line */
    int open[KC_MAX_LOOP_DEPTH];          /* their loops, outermost first */
    int launches_in[KC_MAX_LOOP_DEPTH];   /* @launch lines inside each so far */
};

static enum kc_dtype buffer_dtype(const problem *p, const launch_unit *u, int t);

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

/* Splits s on top-level commas (outside parentheses and brackets). Returns count, or -1 with
 * nothing left allocated. */
static int split_args(const char *s, size_t len, char **out, int max)
{
    int n = 0, depth = 0, brackets = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = i < len ? s[i] : ',';
        depth += (c == '(') - (c == ')');
        brackets += (c == '[') - (c == ']');
        if (depth < 0 || brackets < 0)
            return split_fail(out, n);
        if (c == ',' && depth == 0 && brackets == 0) {
            if (n >= max)
                return split_fail(out, n);
            strbuf a = STRBUF_INIT;
            sb_add(&a, s + start, i - start);
            sb_trim(&a);
            out[n++] = sb_detach(&a);
            start = i + 1;
        }
    }
    return depth == 0 && brackets == 0 ? n : split_fail(out, n);
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

/* The depth of the open loop whose variable is name, or -1. */
static int open_loop_var(const struct lctx *c, const char *name)
{
    for (int d = 0; d < c->depth; d++)
        if (strcmp(c->u->loops[c->open[d]].var, name) == 0)
            return d;
    return -1;
}

static void describe_names(const struct lctx *c, strbuf *out)
{
    const problem *p = c->p;
    const launch_unit *u = c->u;
    sb_adds(out, "tensors:");
    for (int i = 0; i < p->n_inputs; i++)
        sb_addf(out, " %s", p->inputs[i].name);
    for (int i = 0; i < p->n_outputs; i++)
        sb_addf(out, " %s", p->outputs[i].name);
    for (int i = 0; i < u->n_scratch; i++)
        sb_addf(out, " %s", u->scratch[i].name);
    if (problem_has_views(p)) { /* a network's parameters: the first few names */
        sb_adds(out, "; views:");
        int shown = 0, total = 0;
        for (int i = 0; i < p->n_inputs; i++)
            for (int k = 0; k < p->inputs[i].n_views; k++, total++)
                if (shown < 24)
                    sb_addf(out, " %s", p->inputs[i].views[k].name), shown++;
        if (total > shown)
            sb_addf(out, " (and %d more)", total - shown);
    }
    sb_adds(out, "; dims:");
    for (int i = 0; i < p->dims_default.n; i++)
        sb_addf(out, " %s", p->dims_default.names[i]);
    if (p->n_params) {
        sb_adds(out, "; params:");
        for (int i = 0; i < p->n_params; i++)
            sb_addf(out, " %s", p->params[i].name);
    }
    if (c->depth) {
        sb_adds(out, "; loop variables:");
        for (int d = 0; d < c->depth; d++)
            sb_addf(out, " %s", u->loops[c->open[d]].var);
    }
}

/* Checks that every name in an integer expression is a dim or, where loops_ok, the variable
 * of an open loop; where says which expression ("grid of launch of k"). */
static int check_names(struct lctx *c, const char *expr, const char *where, int loops_ok)
{
    char names[32][64];
    strbuf e = STRBUF_INIT;
    int n = expr_names(expr, names, 32, &e);
    if (n < 0) {
        kc_fail(c->err, "line %d: %s in %s", c->line, e.buf, where);
        sb_free(&e);
        return -1;
    }
    sb_free(&e);
    for (int i = 0; i < n; i++) {
        int loop_var = open_loop_var(c, names[i]) >= 0;
        if (is_dim(c->p, names[i]) || (loop_var && loops_ok))
            continue;
        if (loop_var)
            return kc_fail(c->err, "line %d: loop variable '%s' in %s: bounds are expressions over "
                                   "dims, evaluated once per dims set", c->line, names[i], where);
        strbuf known = STRBUF_INIT;
        describe_names(c, &known);
        int is_tensor = problem_tensor(c->p, names[i], NULL) || scratch_index(c->u, names[i]) >= 0 ||
                        problem_view(c->p, names[i], NULL);
        kc_fail(c->err, "line %d: %s '%s' in %s (%s)", c->line,
                is_tensor ? "tensor used in an integer expression:" : "unknown name", names[i],
                where, known.buf);
        sb_free(&known);
        return -1;
    }
    return 0;
}

/* An expression of a launch (or scratch) line: dims and the open loops' variables. */
static int check_int_expr(struct lctx *c, const char *expr, const char *what, const char *kernel)
{
    strbuf where = STRBUF_INIT;
    sb_addf(&where, "%s of launch of %s", what, kernel);
    int rc = check_names(c, expr, where.buf, 1);
    sb_free(&where);
    return rc;
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

/* Whether an argument has the form NAME[EXPR] (a pointer into a tensor). */
static int is_offset_form(const char *text)
{
    size_t len = strlen(text);
    const char *open = strchr(text, '[');
    return open && open > text && len && text[len - 1] == ']';
}

/* "NAME[EXPR]": the address of element EXPR of tensor NAME (input, output or scratch). */
static int parse_offset_arg(struct lctx *c, launch *l, launch_arg *a, int idx)
{
    const char *open = strchr(a->text, '[');
    strbuf name = STRBUF_INIT, what = STRBUF_INIT;
    sb_add(&name, a->text, (size_t)(open - a->text));
    sb_trim(&name);
    int t = is_identifier(name.buf) ? tensor_index(c->p, c->u, name.buf) : -1;
    const tensor_spec *view = t < 0 && is_identifier(name.buf) ? problem_view(c->p, name.buf, &t)
                                                               : NULL;
    int rc = 0;
    if (t < 0) {
        strbuf known = STRBUF_INIT;
        describe_names(c, &known);
        rc = kc_fail(c->err, "line %d: argument %d of %s, '%s': NAME[INDEX] takes a tensor's name, "
                             "not '%s' (%s)", c->line, idx + 1, l->kernel, a->text, name.buf,
                     known.buf);
        sb_free(&known);
    } else {
        strbuf index = STRBUF_INIT;
        sb_add(&index, open + 1, strlen(open + 1) - 1);
        sb_trim(&index);
        a->kind = KC_ARG_OFFSET;
        a->tensor = t;
        a->view = view;
        a->offset = sb_detach(&index);
        sb_addf(&what, "the index of argument %d", idx + 1);
        rc = check_int_expr(c, a->offset, what.buf, l->kernel);
    }
    sb_free(&name), sb_free(&what);
    return rc;
}

static int parse_arg(struct lctx *c, launch *l, const char *text, int idx)
{
    launch_arg *a = &l->args[idx];
    a->text = xstrdup(text);
    double fv;
    if (is_offset_form(text))
        return parse_offset_arg(c, l, a, idx);
    if (is_identifier(text)) {
        int t = tensor_index(c->p, c->u, text);
        if (t >= 0) {
            a->kind = KC_ARG_TENSOR;
            a->tensor = t;
            return 0;
        }
        const tensor_spec *view = problem_view(c->p, text, &t);
        if (view) { /* a view of a packed input: a pointer to its first element, VIEW[0] */
            a->kind = KC_ARG_OFFSET;
            a->tensor = t;
            a->view = view;
            a->offset = xstrdup("0");
            return 0;
        }
        for (int i = 0; i < c->p->n_params; i++)
            if (strcmp(c->p->params[i].name, text) == 0) {
                a->kind = KC_ARG_PARAM;
                a->param = i;
                return 0;
            }
        if (!is_dim(c->p, text) && open_loop_var(c, text) < 0) {
            strbuf known = STRBUF_INIT, m = STRBUF_INIT;
            describe_names(c, &known);
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
        return kc_fail(c->err, "line %d: too many launches (at most %d)", c->line, KC_MAX_LAUNCHES);
    launch *l = &c->u->launches[c->u->n_launches++];
    memset(l, 0, sizeof(*l));
    l->line = c->line;
    c->u->steps[c->u->n_steps++] = (kc_step){KC_STEP_LAUNCH, c->u->n_launches - 1};
    for (int d = 0; d < c->depth; d++)
        c->launches_in[d]++;
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
        return lfail(c, "cannot split the arguments of %s (unbalanced parentheses or brackets, or "
                        "more than 32)%s", l->kernel, "");
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
        return kc_fail(c->err, "line %d: too many scratch buffers (at most %d)", c->line,
                       KC_MAX_SCRATCH);
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
    if (tensor_index(c->p, c->u, name) >= 0 || problem_param(c->p, name) || is_dim(c->p, name) ||
        problem_view(c->p, name, NULL))
        return lfail(c, "scratch name '%s' is already used by the problem%s", name, "");
    s->line = c->line;
    s->name = xstrdup(name);
    s->count = xstrndup(text + consumed, (size_t)(close - text - consumed));
    c->u->n_scratch++;
    return check_int_expr(c, s->count, "scratch size", name);
}

/* ---- loops: "// @for VAR in FIRST..END" ... "// @end" ---- */

static const char for_usage[] = "expected '// @for VAR in FIRST..END', e.g. '// @for l in 0..L' "
                                "(VAR takes FIRST, FIRST+1, ..., END-1)";

/* Splits "VAR in FIRST..END"; 0 on success (the parts trimmed). */
static int split_for(const char *text, strbuf *var, strbuf *first, strbuf *end)
{
    const char *p = text;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    sb_add(var, text, (size_t)(p - text));
    if (!var->len || !isspace((unsigned char)*p))
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "in", 2) != 0 || !isspace((unsigned char)p[2]))
        return -1;
    const char *range = p + 3, *dots = strstr(range, "..");
    if (!dots)
        return -1;
    sb_add(first, range, (size_t)(dots - range));
    sb_adds(end, dots + 2);
    sb_trim(first), sb_trim(end);
    return 0;
}

/* A loop variable must be a new name: not the problem's, a scratch buffer's, a function's or
 * an open loop's. */
static int check_loop_var(struct lctx *c, const char *var)
{
    const char *taken = NULL;
    if (!is_identifier(var) || strlen(var) > KC_EXPR_MAX_NAME)
        return lfail(c, "loop variable '%s' is not a name (letters, digits and _, at most 63)%s",
                     var, "");
    if (tensor_index(c->p, c->u, var) >= 0)
        taken = "a tensor";
    else if (problem_view(c->p, var, NULL))
        taken = "a view of a packed input";
    else if (problem_param(c->p, var))
        taken = "a param of the problem";
    else if (is_dim(c->p, var))
        taken = "a dim of the problem";
    else if (!strcmp(var, "cdiv") || !strcmp(var, "min") || !strcmp(var, "max"))
        taken = "a function of expressions";
    if (taken)
        return lfail(c, "loop variable '%s' is already %s: pick another name", var, taken);
    int d = open_loop_var(c, var);
    if (d >= 0)
        return kc_fail(c->err, "line %d: loop variable '%s' is already the variable of the @for "
                               "at line %d around it: pick another name", c->line, var,
                       c->u->loops[c->open[d]].line);
    return 0;
}

static int parse_for(struct lctx *c, const char *text)
{
    if (c->depth >= KC_MAX_LOOP_DEPTH)
        return kc_fail(c->err, "line %d: a @for inside %d others; loops nest at most %d deep",
                       c->line, c->depth, KC_MAX_LOOP_DEPTH);
    if (c->u->n_loops >= KC_MAX_LOOPS)
        return kc_fail(c->err, "line %d: too many @for loops (at most %d)", c->line, KC_MAX_LOOPS);
    strbuf var = STRBUF_INIT, first = STRBUF_INIT, end = STRBUF_INIT, where = STRBUF_INIT;
    int rc = split_for(text, &var, &first, &end);
    if (rc)
        kc_fail(c->err, "line %d: %s, not '// @for %s'", c->line, for_usage, text);
    if (!rc)
        rc = check_loop_var(c, var.buf);
    sb_addf(&where, "the bounds of @for %s", var.buf);
    if (!rc && (check_names(c, first.buf, where.buf, 0) || check_names(c, end.buf, where.buf, 0)))
        rc = -1;
    if (!rc) {
        loop_spec *l = &c->u->loops[c->u->n_loops];
        memset(l, 0, sizeof(*l));
        l->line = c->line;
        l->var = sb_detach(&var);
        l->first = sb_detach(&first);
        l->end = sb_detach(&end);
        l->depth = c->depth;
        l->body = c->u->n_steps + 1;
        c->u->steps[c->u->n_steps++] = (kc_step){KC_STEP_FOR, c->u->n_loops};
        c->open[c->depth] = c->u->n_loops++;
        c->launches_in[c->depth++] = 0;
    }
    sb_free(&var), sb_free(&first), sb_free(&end), sb_free(&where);
    return rc;
}

static int parse_end(struct lctx *c, const char *text)
{
    if (*text)
        return lfail(c, "'// @end' closes the innermost @for and takes nothing after it, not "
                        "'%s'%s", text, "");
    if (!c->depth)
        return lfail(c, "@end without a @for to close%s%s", "", "");
    loop_spec *l = &c->u->loops[c->open[c->depth - 1]];
    if (!c->launches_in[c->depth - 1])
        return kc_fail(c->err, "line %d: @for %s (line %d) has no @launch line before its @end",
                       c->line, l->var, l->line);
    l->end_line = c->line;
    l->close = c->u->n_steps;
    c->u->steps[c->u->n_steps++] = (kc_step){KC_STEP_END, c->open[c->depth - 1]};
    c->depth--;
    return 0;
}

/* ---- layer points: "// @layer NAME BUFFER[INDEX] DTYPE[COUNT]" ---- */

static const char layer_usage[] = "expected '// @layer NAME BUFFER[INDEX] DTYPE[COUNT]', e.g. "
                                  "'// @layer features.0 a0[0] f32[B*64*55*55]'";

/* Where the bracket opened at s[0] closes (nesting counted), or NULL. */
static const char *closing_bracket(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        depth += (*s == '[') - (*s == ']');
        if (!depth)
            return s;
    }
    return NULL;
}

/* A name character outside {expr} parts: PyTorch module names are dotted identifiers. */
static int is_name_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_' || ch == '.';
}

/* NAME: name characters and {expr} parts (not nested, expressions over dims and open loops'
 * variables). */
static int check_layer_name(struct lctx *c, const char *name)
{
    size_t n = 0;
    for (const char *p = name; *p; p++, n++) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            const char *inner = strchr(p + 1, '{');
            if (!close || (inner && inner < close) || close == p + 1)
                return lfail(c, "@layer %s: a {expr} part of a name is one expression over dims "
                                "and loop variables in braces, not nested%s", name, "");
            strbuf e = STRBUF_INIT;
            sb_add(&e, p + 1, (size_t)(close - p - 1));
            int rc = check_names(c, e.buf, "a {expr} part of a @layer name", 1);
            sb_free(&e);
            if (rc)
                return -1;
            p = close;
        } else if (!is_name_char(*p)) {
            return lfail(c, "@layer name '%s': a name is letters, digits, '_' and '.', with {expr} "
                            "parts over loop variables%s", name, "");
        }
    }
    if (n > KC_MAX_LAYER_NAME)
        return kc_fail(c->err, "line %d: a @layer name is at most %d bytes; this one has %zu",
                       c->line, KC_MAX_LAYER_NAME, n);
    return 0;
}

/* Splits "NAME BUFFER[INDEX] DTYPE[COUNT]" into its five parts (trimmed); 0 on success. */
static int split_layer(const char *text, strbuf part[5])
{
    const char *p = text;
    int braces = 0;
    while (*p && (braces || !isspace((unsigned char)*p)))
        braces += (*p == '{') - (*p == '}'), p++;
    sb_add(&part[0], text, (size_t)(p - text));
    for (int k = 1; k < 5; k += 2) {
        while (isspace((unsigned char)*p))
            p++;
        const char *open = strchr(p, '[');
        const char *close = open ? closing_bracket(open) : NULL;
        if (!open || !close)
            return -1;
        sb_add(&part[k], p, (size_t)(open - p));
        sb_add(&part[k + 1], open + 1, (size_t)(close - open - 1));
        p = close + 1;
    }
    for (int k = 0; k < 5; k++)
        sb_trim(&part[k]);
    while (isspace((unsigned char)*p))
        p++;
    return *p || !part[0].len || !part[2].len || !part[4].len ? -1 : 0;
}

/* BUFFER must be an output or a scratch buffer of dtype DTYPE. */
static int check_layer_buffer(struct lctx *c, const char *name, const char *buffer,
                              const char *dtype, layer_spec *l)
{
    l->tensor = tensor_index(c->p, c->u, buffer);
    if (l->tensor < 0 || l->tensor < c->p->n_inputs) {
        strbuf known = STRBUF_INIT;
        describe_names(c, &known);
        kc_fail(c->err, "line %d: @layer %s: '%s' is not an output or a scratch buffer: a layer's "
                        "output is read where the launches wrote it (%s)", c->line, name, buffer,
                known.buf);
        sb_free(&known);
        return -1;
    }
    if (dtype_parse(dtype, &l->dtype))
        return lfail(c, "@layer %s: unknown dtype '%s'", name, dtype);
    if (l->dtype != buffer_dtype(c->p, c->u, l->tensor))
        return kc_fail(c->err, "line %d: @layer %s: %s is %s, not %s", c->line, name, buffer,
                       dtype_name(buffer_dtype(c->p, c->u, l->tensor)), dtype);
    return 0;
}

static int parse_layer(struct lctx *c, const char *text)
{
    if (c->u->n_layers >= KC_MAX_LAYER_LINES)
        return kc_fail(c->err, "line %d: too many @layer lines (at most %d)", c->line,
                       KC_MAX_LAYER_LINES);
    strbuf part[5] = {STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT};
    layer_spec *l = &c->u->layers[c->u->n_layers];
    memset(l, 0, sizeof(*l));
    int rc = split_layer(text, part);
    if (rc)
        kc_fail(c->err, "line %d: %s, not '// @layer %s'", c->line, layer_usage, text);
    rc = rc || check_layer_name(c, part[0].buf) ||
         check_layer_buffer(c, part[0].buf, part[1].buf, part[3].buf, l) ||
         check_names(c, part[2].buf, "the index of a @layer line", 1) ||
         check_names(c, part[4].buf, "the count of a @layer line", 1);
    if (!rc) {
        l->line = c->line;
        l->name = sb_detach(&part[0]);
        l->index = sb_detach(&part[2]);
        l->count = sb_detach(&part[4]);
        c->u->steps[c->u->n_steps++] = (kc_step){KC_STEP_LAYER, c->u->n_layers++};
    }
    for (int k = 0; k < 5; k++)
        sb_free(&part[k]);
    return rc ? -1 : 0;
}

/* At the end of the code: every @for closed. */
static int check_loops_closed(struct lctx *c)
{
    if (!c->depth)
        return 0;
    const loop_spec *l = &c->u->loops[c->open[c->depth - 1]];
    return kc_fail(c->err, "line %d: @for %s is not closed: put '// @end' after its last @launch "
                           "line", l->line, l->var);
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
 * counts (@end lines need a @for each, so they are as few). */
static int check_sizes(const char *source, strbuf *err)
{
    size_t size = strnlen(source, KC_MAX_SOURCE_BYTES + 1);
    if (size > KC_MAX_SOURCE_BYTES)
        return kc_fail(err, "the code is longer than %d bytes (the limit)", KC_MAX_SOURCE_BYTES);
    static const char *const words[] = {"@launch", "@scratch", "@for", "@end", "@layer"};
    strbuf rest = STRBUF_INIT;
    int line_no = 0, count[5] = {0}, rc = 0;
    for (const char *line = source; *line && !rc;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        line_no++;
        int w = 0;
        while (w < 5 && !directive(line, len, words[w], &rest))
            w++;
        count[w < 5 ? w : 0] += w < 5;
        if (w < 5 && len > KC_MAX_DIRECTIVE_LINE)
            rc = kc_fail(err, "line %d: the %s line is %zu bytes long; the limit is %d", line_no,
                         words[w], len, KC_MAX_DIRECTIVE_LINE);
        else if (count[0] > KC_MAX_LAUNCHES)
            rc = kc_fail(err, "line %d: too many launches (at most %d)", line_no, KC_MAX_LAUNCHES);
        else if (count[1] > KC_MAX_SCRATCH)
            rc = kc_fail(err, "line %d: too many scratch buffers (at most %d)", line_no,
                         KC_MAX_SCRATCH);
        else if (count[2] > KC_MAX_LOOPS)
            rc = kc_fail(err, "line %d: too many @for loops (at most %d)", line_no, KC_MAX_LOOPS);
        else if (count[4] > KC_MAX_LAYER_LINES)
            rc = kc_fail(err, "line %d: too many @layer lines (at most %d)", line_no,
                         KC_MAX_LAYER_LINES);
        line = nl ? nl + 1 : line + len;
    }
    sb_free(&rest);
    return rc;
}

/* ---- values under the problem's dims ---- */

/* One dims set, and the names an expression sees: env is the dims (its first n_dims names),
 * then the variables of the loops around the launch being checked. */
struct dims_ctx {
    const dimset *env;
    int n_dims;
    const char *label; /* "default", "small", "alt[0]" */
    strbuf *err;
    const problem *p;
    const launch_unit *u;
    const int64_t *numel; /* of every buffer (candidate.h's order), where offsets need it */
};

static void describe_dims(const struct dims_ctx *d, strbuf *out)
{
    launch_describe_dims(d->label, d->env, d->n_dims, out);
}

/* The expressions of a launch compiled under one dims set, at its first launch of the walk:
 * its loop variables then sit in the env where they sit at every later launch of it. */
struct launch_progs {
    int ready;
    expr_prog grid[3], block[3], smem, args[KC_MAX_ARGS]; /* args: integers and offsets */
    /* offsets into views: the view's start and size under the dims set (-1: did not evaluate) */
    int64_t view_start[KC_MAX_ARGS], view_numel[KC_MAX_ARGS];
};

static void compile_launch(const launch *l, const dimset *env, struct launch_progs *lp)
{
    strbuf e = STRBUF_INIT; /* a failure leaves the program empty: the evaluator says why */
    for (int k = 0; k < 3; k++) {
        expr_compile(l->grid[k], env, &lp->grid[k], &e);
        expr_compile(l->block[k], env, &lp->block[k], &e);
    }
    expr_compile(l->smem, env, &lp->smem, &e);
    for (int i = 0; i < l->n_args; i++) {
        const launch_arg *a = &l->args[i];
        if (a->kind == KC_ARG_INT || a->kind == KC_ARG_OFFSET)
            expr_compile(a->kind == KC_ARG_INT ? a->text : a->offset, env, &lp->args[i], &e);
        lp->view_start[i] = lp->view_numel[i] = -1;
        if (a->view && view_extent(a->view, env, &lp->view_start[i], &lp->view_numel[i], &e))
            lp->view_start[i] = lp->view_numel[i] = -1;
    }
    lp->ready = 1;
    sb_free(&e);
}

static void free_launch_progs(struct launch_progs *lp)
{
    for (int k = 0; k < 3; k++)
        expr_prog_free(&lp->grid[k]), expr_prog_free(&lp->block[k]);
    expr_prog_free(&lp->smem);
    for (int i = 0; i < KC_MAX_ARGS; i++)
        expr_prog_free(&lp->args[i]);
    lp->ready = 0;
}

/* expr's value under d: its compiled program where it has one and it runs, else (and for every
 * failure, whose message goes in e) the evaluator. */
static int value_of(const struct dims_ctx *d, const char *expr, const expr_prog *prog,
                    int64_t *v, strbuf *e)
{
    if (prog && prog->ops && expr_run(prog, d->env->values, v) == 0)
        return 0;
    return expr_eval(expr, d->env, v, e);
}

/* Evaluates expr (compiled as prog, or NULL) under d; on failure or outside [lo, hi] fails
 * naming the line and what the value is (printf-style: formatted only on failure). */
__attribute__((format(printf, 8, 9)))
static int eval_in_range(const struct dims_ctx *d, int line, const char *expr,
                         const expr_prog *prog, int64_t lo, int64_t hi, int64_t *out,
                         const char *what_fmt, ...)
{
    strbuf e = STRBUF_INIT;
    int64_t v = 0;
    int rc = value_of(d, expr, prog, &v, &e);
    if (out)
        *out = v;
    if (!rc && v >= lo && v <= hi) {
        sb_free(&e);
        return 0;
    }
    strbuf what = STRBUF_INIT, where = STRBUF_INIT;
    va_list ap;
    va_start(ap, what_fmt);
    sb_vaddf(&what, what_fmt, ap);
    va_end(ap);
    describe_dims(d, &where);
    if (rc)
        kc_fail(d->err, "line %d: %s at %s: %s", line, what.buf, where.buf, e.buf);
    else
        kc_fail(d->err, "line %d: %s is %lld at %s; it must lie in [%lld, %lld]", line, what.buf,
                (long long)v, where.buf, (long long)lo, (long long)hi);
    sb_free(&e), sb_free(&what), sb_free(&where);
    return -1;
}

static enum kc_dtype buffer_dtype(const problem *p, const launch_unit *u, int t)
{
    if (t < p->n_inputs)
        return p->inputs[t].dtype;
    if (t < p->n_inputs + p->n_outputs)
        return p->outputs[t - p->n_inputs].dtype;
    return u->scratch[t - p->n_inputs - p->n_outputs].dtype;
}

/* Argument i, NAME[INDEX] (compiled as prog): the index within [0, numel of NAME] (of the view,
 * for a view of a packed input). */
static int check_offset(const struct dims_ctx *d, const launch *l, int i,
                        const struct launch_progs *lp)
{
    const launch_arg *a = &l->args[i];
    const expr_prog *prog = &lp->args[i];
    enum kc_dtype dtype = buffer_dtype(d->p, d->u, a->tensor);
    int64_t index, bytes, numel = d->numel[a->tensor];
    int64_t start = a->view ? lp->view_start[i] : 0, limit = a->view ? lp->view_numel[i] : numel;
    if (prog->ops && start >= 0 && expr_run(prog, d->env->values, &index) == 0 && index >= 0 &&
        index <= limit && start + index <= numel &&
        !__builtin_mul_overflow(start + index, (int64_t)dtype_size(dtype), &bytes))
        return 0;
    strbuf e = STRBUF_INIT;
    int rc = launch_offset_bytes(a, d->env, numel, dtype, &bytes, &e);
    if (rc) {
        strbuf where = STRBUF_INIT;
        describe_dims(d, &where);
        kc_fail(d->err, "line %d: argument %d of %s at %s: %s", l->line, i + 1, l->kernel,
                where.buf, e.buf);
        sb_free(&where);
    }
    sb_free(&e);
    return rc;
}

static int check_launch_values(const struct dims_ctx *d, const launch *l,
                               const struct launch_progs *lp)
{
    static const char *axis[3] = {"x", "y", "z"};
    const int64_t grid_max[3] = {KC_MAX_GRID_X, KC_MAX_GRID_YZ, KC_MAX_GRID_YZ};
    const int64_t block_max[3] = {KC_MAX_BLOCK_XY, KC_MAX_BLOCK_XY, KC_MAX_BLOCK_Z};
    int64_t block[3], threads = 1;
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        rc = eval_in_range(d, l->line, l->grid[k], &lp->grid[k], 0, grid_max[k], NULL,
                           "grid.%s of %s", axis[k], l->kernel);
        if (!rc)
            rc = eval_in_range(d, l->line, l->block[k], &lp->block[k], 1, block_max[k], &block[k],
                               "block.%s of %s", axis[k], l->kernel);
        threads *= rc ? 1 : block[k]; /* each factor is at most 1024: no overflow */
    }
    if (!rc && threads > KC_MAX_BLOCK_THREADS) {
        strbuf where = STRBUF_INIT;
        describe_dims(d, &where);
        rc = kc_fail(d->err, "line %d: a block of %s has %lld threads at %s; the limit is %lld",
                     l->line, l->kernel, (long long)threads, where.buf, KC_MAX_BLOCK_THREADS);
        sb_free(&where);
    }
    if (!rc)
        rc = eval_in_range(d, l->line, l->smem, &lp->smem, 0, KC_MAX_DYNAMIC_SMEM, NULL,
                           "dynamic shared memory of %s", l->kernel);
    for (int i = 0; i < l->n_args && !rc; i++) {
        if (l->args[i].kind == KC_ARG_INT)
            rc = eval_in_range(d, l->line, l->args[i].text, &lp->args[i], INT64_MIN, INT64_MAX,
                               NULL, "argument %d of %s", i + 1, l->kernel);
        else if (l->args[i].kind == KC_ARG_OFFSET)
            rc = check_offset(d, l, i, lp);
    }
    return rc;
}

static int check_scratch_values(const struct dims_ctx *d, const launch_unit *u)
{
    int64_t total = 0;
    for (int i = 0; i < u->n_scratch; i++) {
        const scratch_spec *s = &u->scratch[i];
        int64_t n, bytes;
        if (eval_in_range(d, s->line, s->count, NULL, 0, INT64_MAX, &n,
                          "the element count of scratch %s", s->name))
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

static int has_offsets(const launch_unit *u)
{
    for (int i = 0; i < u->n_launches; i++)
        for (int a = 0; a < u->launches[i].n_args; a++)
            if (u->launches[i].args[a].kind == KC_ARG_OFFSET)
                return 1;
    return 0;
}

/* The element count of every buffer under d (offsets are checked against them). */
static int buffer_sizes(const struct dims_ctx *d, int64_t *numel)
{
    const problem *p = d->p;
    strbuf e = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; i < p->n_inputs + p->n_outputs && !rc; i++) {
        const tensor_spec *t = i < p->n_inputs ? &p->inputs[i] : &p->outputs[i - p->n_inputs];
        if (tensor_numel(t, d->env, &numel[i], &e))
            rc = kc_fail(d->err, "tensor %s: %s", t->name, e.buf);
    }
    for (int i = 0; i < d->u->n_scratch && !rc; i++) {
        const scratch_spec *s = &d->u->scratch[i];
        rc = eval_in_range(d, s->line, s->count, NULL, 0, INT64_MAX,
                           &numel[p->n_inputs + p->n_outputs + i],
                           "the element count of scratch %s", s->name);
    }
    sb_free(&e);
    return rc;
}

/* A layer point under d: its name evaluates and its region lies inside its buffer. */
static int check_layer_values(const struct dims_ctx *d, const layer_spec *l)
{
    strbuf name = STRBUF_INIT, e = STRBUF_INIT;
    int64_t index, count;
    int rc = layer_name(l, d->env, &name, &e) ||
             layer_region(l, d->env, d->numel[l->tensor], &index, &count, &e);
    if (rc) {
        strbuf where = STRBUF_INIT;
        describe_dims(d, &where);
        kc_fail(d->err, "line %d: @layer %s at %s: %s", l->line, l->name, where.buf, e.buf);
        sb_free(&where);
    }
    sb_free(&name), sb_free(&e);
    return rc ? -1 : 0;
}

/* One dims set: every launch of the expanded schedule, in the order it runs (its loop
 * variables bound), then the scratch sizes. Each launch's expressions are compiled once. */
static int check_set(const struct dims_ctx *d)
{
    int64_t numel[2 * KC_MAX_TENSORS + KC_MAX_SCRATCH];
    if ((has_offsets(d->u) || d->u->n_layers) && buffer_sizes(d, numel))
        return -1;
    launch_iter it;
    if (launch_iter_start(&it, d->u, d->env, d->label, d->err))
        return -1;
    struct dims_ctx in = *d;
    in.env = &it.env;
    in.numel = numel;
    struct launch_progs *progs = xcalloc(KC_MAX_LAUNCHES, sizeof(*progs));
    int i, rc = 0, is_layer = 0;
    while (!rc && (i = launch_iter_step(&it, &is_layer)) >= 0) {
        if (is_layer) {
            rc = check_layer_values(&in, &d->u->layers[i]);
            continue;
        }
        if (!progs[i].ready)
            compile_launch(&d->u->launches[i], &it.env, &progs[i]);
        rc = check_launch_values(&in, &d->u->launches[i], &progs[i]);
    }
    for (int k = 0; k < d->u->n_launches; k++)
        free_launch_progs(&progs[k]);
    free(progs);
    launch_iter_free(&it);
    return rc || check_scratch_values(d, d->u) ? -1 : 0;
}

/* Every value a launch unit computes, under every dim set the worker may use. */
static int check_values(const problem *p, const launch_unit *u, strbuf *err)
{
    const dimset *sets[2 + KC_MAX_ALT] = {&p->dims_default, &p->dims_small};
    char labels[2 + KC_MAX_ALT][24] = {"default", "small"};
    int n = 2;
    for (int i = 0; i < p->n_alt; i++) {
        snprintf(labels[n], sizeof(labels[n]), "alt[%d]", i);
        sets[n++] = &p->dims_alt[i];
    }
    for (int k = 0; k < n; k++) {
        struct dims_ctx d = {sets[k], sets[k]->n, labels[k], err, p, u, NULL};
        if (check_set(&d))
            return -1;
    }
    return 0;
}

/* A line of the second pass: launches and loops, in order. */
static int parse_schedule_line(struct lctx *c, const char *line, size_t len, strbuf *rest)
{
    const char *text;
    if ((text = directive(line, len, "@launch", rest)))
        return parse_launch(c, text);
    if ((text = directive(line, len, "@for", rest)))
        return parse_for(c, text);
    if ((text = directive(line, len, "@end", rest)))
        return parse_end(c, text);
    if ((text = directive(line, len, "@layer", rest)))
        return parse_layer(c, text);
    if (c->depth && directive(line, len, "@scratch", rest))
        return kc_fail(c->err, "line %d: @scratch inside @for %s: a scratch buffer is sized once "
                               "per dims set; declare it outside the loop and pass each trip its "
                               "slice as NAME[INDEX]", c->line, c->u->loops[c->open[0]].var);
    return 0;
}

int candidate_parse(const char *source, const problem *p, launch_unit *out, strbuf *err)
{
    memset(out, 0, sizeof(*out));
    if (check_sizes(source, err))
        return -1;
    out->launches = xcalloc(KC_MAX_LAUNCHES, sizeof(*out->launches));
    out->layers = xcalloc(KC_MAX_LAYER_LINES, sizeof(*out->layers));
    struct lctx c = {.p = p, .u = out, .err = err};
    strbuf rest = STRBUF_INIT;
    int rc = 0;
    /* Pass 1: scratch lines (launches may name scratch declared anywhere); pass 2: launches
     * and loops. */
    for (int pass = 0; pass < 2 && !rc; pass++) {
        c.line = 0;
        for (const char *line = source; *line && !rc;) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            c.line++;
            const char *text = pass == 0 ? directive(line, len, "@scratch", &rest) : NULL;
            if (text)
                rc = parse_scratch(&c, text);
            else if (pass == 1)
                rc = parse_schedule_line(&c, line, len, &rest);
            line = nl ? nl + 1 : line + len;
        }
    }
    if (!rc)
        rc = check_loops_closed(&c);
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
            free(l->args[a].text), free(l->args[a].offset);
    }
    for (int i = 0; i < u->n_scratch; i++)
        free(u->scratch[i].name), free(u->scratch[i].count);
    for (int i = 0; i < u->n_loops; i++)
        free(u->loops[i].var), free(u->loops[i].first), free(u->loops[i].end);
    for (int i = 0; i < u->n_layers; i++)
        free(u->layers[i].name), free(u->layers[i].index), free(u->layers[i].count);
    free(u->launches);
    free(u->layers);
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

int launch_offset_bytes(const launch_arg *a, const dimset *dims, int64_t numel,
                        enum kc_dtype dtype, int64_t *bytes, strbuf *err)
{
    int64_t index;
    if (expr_eval(a->offset, dims, &index, err))
        return -1;
    if (a->view) {
        int64_t start, count;
        if (view_extent(a->view, dims, &start, &count, err))
            return -1;
        if (index < 0 || index > count)
            return kc_fail(err, "%s is element %lld of view %s of %lld elements; the index must "
                                "lie in [0, %lld]", a->text, (long long)index, a->view->name,
                           (long long)count, (long long)count);
        if (__builtin_add_overflow(start, index, &index))
            return kc_fail(err, "%s: the offset overflows", a->text);
    }
    if (index < 0 || index > numel)
        return kc_fail(err, "%s is element %lld of a tensor of %lld elements; the index must lie in "
                            "[0, %lld]", a->text, (long long)index, (long long)numel,
                       (long long)numel);
    if (__builtin_mul_overflow(index, (int64_t)dtype_size(dtype), bytes))
        return kc_fail(err, "%s: the byte offset overflows", a->text);
    return 0;
}

int layer_name(const layer_spec *l, const dimset *env, strbuf *out, strbuf *err)
{
    sb_reset(out);
    for (const char *p = l->name; *p; p++) {
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            sb_add(out, p, 1);
            continue;
        }
        strbuf e = STRBUF_INIT;
        int64_t v;
        sb_add(&e, p + 1, (size_t)(close - p - 1));
        int rc = expr_eval(e.buf, env, &v, err);
        sb_free(&e);
        if (rc)
            return -1;
        sb_addf(out, "%lld", (long long)v);
        p = close;
    }
    if (out->len > KC_MAX_LAYER_NAME)
        return kc_fail(err, "the name is %zu bytes long; the limit is %d", out->len,
                       KC_MAX_LAYER_NAME);
    return 0;
}

int layer_region(const layer_spec *l, const dimset *env, int64_t numel, int64_t *index,
                 int64_t *count, strbuf *err)
{
    if (expr_eval(l->index, env, index, err) || expr_eval(l->count, env, count, err))
        return -1;
    if (*index < 0 || *index > numel || *count < 1 || *count > numel - *index)
        return kc_fail(err, "the region [%s, %s + %s) is elements [%lld, %lld + %lld) of a buffer "
                            "of %lld; it must hold at least one element and lie inside",
                       l->index, l->index, l->count, (long long)*index, (long long)*index,
                       (long long)*count, (long long)numel);
    return 0;
}
