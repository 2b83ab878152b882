/* expr: recursive-descent evaluator for dim expressions (see expr.h). The same parser collects
 * names (expr_names) and compiles to a postfix program (expr_compile, run by expr_run with the
 * evaluator's semantics). */
#include "common/expr.h"
#include "common/error.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dimset_free(dimset *d)
{
    for (int i = 0; i < d->n; i++)
        free(d->names[i]);
    d->n = 0;
}

void dimset_copy(dimset *dst, const dimset *src)
{
    dimset_free(dst);
    for (int i = 0; i < src->n; i++)
        dimset_set(dst, src->names[i], src->values[i]);
}

int dimset_set(dimset *d, const char *name, int64_t value)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->names[i], name) == 0) {
            d->values[i] = value;
            return 0;
        }
    if (d->n >= KC_MAX_DIMS)
        return -1;
    d->names[d->n] = xstrdup(name);
    d->values[d->n++] = value;
    return 0;
}

int dimset_get(const dimset *d, const char *name, int64_t *value)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->names[i], name) == 0) {
            *value = d->values[i];
            return 1;
        }
    return 0;
}

struct parser {
    const char *text;
    const char *p;
    const dimset *env;
    strbuf *err;
    int failed;
    int depth; /* current nesting (parentheses, calls, unary minus) */
    /* name collection mode */
    char (*names)[64];
    int max_names, n_names;
    /* compile mode: the program so far (room for one op per byte of text) */
    struct expr_op *ops;
    int n_ops;
};

enum expr_opcode { OP_PUSH, OP_LOAD, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_CDIV, OP_MIN,
                   OP_MAX, OP_NEG };

struct expr_op {
    enum expr_opcode code;
    int64_t arg; /* OP_PUSH: the literal; OP_LOAD: the position of the name in the env */
};

/* Appends an op in compile mode; values in compile mode mean nothing (0). */
static int64_t emit(struct parser *ps, enum expr_opcode code, int64_t arg)
{
    ps->ops[ps->n_ops++] = (struct expr_op){code, arg};
    return 0;
}

static int64_t fail(struct parser *ps, const char *fmt, const char *arg)
{
    if (!ps->failed) {
        strbuf msg = STRBUF_INIT;
        sb_addf(&msg, fmt, arg);
        kc_fail(ps->err, "%s in expression '%.200s%s'", msg.buf, ps->text,
                strlen(ps->text) > 200 ? "..." : "");
        sb_free(&msg);
    }
    ps->failed = 1;
    return 0;
}

static void skip_space(struct parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static int accept(struct parser *ps, char c)
{
    skip_space(ps);
    if (*ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

static int64_t parse_sum(struct parser *ps);

enum arith { ADD, SUB, MUL };

static int64_t arith(struct parser *ps, enum arith op, int64_t a, int64_t b)
{
    if (ps->names)
        return 1; /* name collection has no values (names are 1, '/' is skipped): no overflow */
    if (ps->ops)
        return emit(ps, op == ADD ? OP_ADD : op == SUB ? OP_SUB : OP_MUL, 0);
    int64_t out = 0;
    int overflow = op == ADD   ? __builtin_add_overflow(a, b, &out)
                   : op == SUB ? __builtin_sub_overflow(a, b, &out)
                               : __builtin_mul_overflow(a, b, &out);
    if (overflow)
        return fail(ps, "%sinteger overflow", "");
    return out;
}

/* a / b, a % b and cdiv(a, b) for b != 0; INT64_MIN / -1 overflows, INT64_MIN % -1 is 0. */
static int64_t divide(struct parser *ps, char op, int64_t a, int64_t b)
{
    if (b == 0)
        return fail(ps, "%s", op == 'c' ? "division by zero in cdiv" : "division by zero");
    if (b == -1) {
        if (op == '%')
            return 0;
        return arith(ps, SUB, 0, a); /* fails on INT64_MIN */
    }
    if (op == '/')
        return a / b;
    if (op == '%')
        return a % b;
    /* ceiling: a/b truncates toward zero; round up when the exact quotient is positive */
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
}

static int64_t apply_call(struct parser *ps, const char *name, int64_t a, int64_t b)
{
    if (ps->ops)
        return emit(ps, !strcmp(name, "min") ? OP_MIN : !strcmp(name, "max") ? OP_MAX : OP_CDIV, 0);
    if (strcmp(name, "min") == 0)
        return a < b ? a : b;
    if (strcmp(name, "max") == 0)
        return a > b ? a : b;
    if (ps->names)
        return 1;
    return divide(ps, 'c', a, b);
}

static int64_t parse_call(struct parser *ps, const char *name)
{
    if (strcmp(name, "cdiv") && strcmp(name, "min") && strcmp(name, "max"))
        return fail(ps, "unknown function '%s'", name);
    int64_t a = parse_sum(ps);
    if (!accept(ps, ','))
        return fail(ps, "expected ',' in %s()", name);
    int64_t b = parse_sum(ps);
    if (!accept(ps, ')'))
        return fail(ps, "expected ')' closing %s()", name);
    if (ps->failed)
        return 0;
    return apply_call(ps, name, a, b);
}

static int64_t lookup_name(struct parser *ps, const char *name)
{
    if (ps->names) {
        for (int i = 0; i < ps->n_names; i++)
            if (strcmp(ps->names[i], name) == 0)
                return 1;
        if (ps->n_names >= ps->max_names)
            return fail(ps, "more than %s distinct names", "32");
        snprintf(ps->names[ps->n_names++], 64, "%s", name);
        return 1;
    }
    for (int i = 0; ps->ops && i < ps->env->n; i++)
        if (strcmp(ps->env->names[i], name) == 0)
            return emit(ps, OP_LOAD, i);
    int64_t v;
    if (!dimset_get(ps->env, name, &v))
        return fail(ps, "unknown name '%s'", name);
    return v;
}

static int64_t parse_primary(struct parser *ps);

/* Parses what follows an opening parenthesis, unary minus or call, one level deeper. */
static int64_t nested(struct parser *ps, int64_t (*parse)(struct parser *))
{
    if (++ps->depth > KC_EXPR_MAX_DEPTH)
        return fail(ps, "nested deeper than %s levels", "32");
    int64_t v = parse(ps);
    ps->depth--;
    return v;
}

static int64_t parse_literal(struct parser *ps)
{
    char *end;
    errno = 0;
    long long v = strtoll(ps->p, &end, 0);
    if (errno)
        return fail(ps, "%sliteral out of range (at most 9223372036854775807)", "");
    ps->p = end;
    while (*ps->p == 'L' || *ps->p == 'l' || *ps->p == 'u' || *ps->p == 'U')
        ps->p++;
    if (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
        return fail(ps, "%smalformed integer literal", "");
    return ps->ops ? emit(ps, OP_PUSH, v) : v;
}

static int64_t parse_primary(struct parser *ps)
{
    skip_space(ps);
    if (accept(ps, '(')) {
        int64_t v = nested(ps, parse_sum);
        if (!accept(ps, ')'))
            return fail(ps, "%sexpected ')'", "");
        return v;
    }
    if (accept(ps, '-')) {
        int64_t v = nested(ps, parse_primary);
        return ps->ops && !ps->failed ? emit(ps, OP_NEG, 0) : arith(ps, SUB, 0, v);
    }
    if (isdigit((unsigned char)*ps->p))
        return parse_literal(ps);
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        char name[KC_EXPR_MAX_NAME + 1];
        size_t n = 0;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
            if (n == KC_EXPR_MAX_NAME)
                return fail(ps, "%sname longer than 63 characters", "");
            name[n++] = *ps->p++;
        }
        name[n] = '\0';
        if (accept(ps, '(')) {
            if (++ps->depth > KC_EXPR_MAX_DEPTH)
                return fail(ps, "nested deeper than %s levels", "32");
            int64_t v = parse_call(ps, name);
            ps->depth--;
            return v;
        }
        return lookup_name(ps, name);
    }
    if (!*ps->p)
        return fail(ps, "%sunexpected end", "");
    char tok[2] = {*ps->p, 0};
    return fail(ps, "unexpected '%s'", tok);
}

static int64_t parse_product(struct parser *ps)
{
    int64_t v = parse_primary(ps);
    for (;;) {
        skip_space(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        ps->p++;
        int64_t r = parse_primary(ps);
        if (ps->failed)
            return 0;
        if (op == '*')
            v = arith(ps, MUL, v, r);
        else if (ps->ops)
            v = emit(ps, op == '/' ? OP_DIV : OP_MOD, 0);
        else if (!ps->names)
            v = divide(ps, op, v, r);
    }
}

static int64_t parse_sum(struct parser *ps)
{
    int64_t v = parse_product(ps);
    for (;;) {
        if (accept(ps, '+'))
            v = arith(ps, ADD, v, parse_product(ps));
        else if (accept(ps, '-'))
            v = arith(ps, SUB, v, parse_product(ps));
        else
            return v;
        if (ps->failed)
            return 0;
    }
}

/* The limits checked before parsing: length, and nesting of parentheses. */
static int check_size(struct parser *ps)
{
    size_t len = strnlen(ps->text, KC_EXPR_MAX_LEN + 1);
    if (len > KC_EXPR_MAX_LEN)
        return kc_fail(ps->err, "expression longer than %d bytes: '%.40s...'", KC_EXPR_MAX_LEN,
                       ps->text);
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        depth += ps->text[i] == '(';
        depth -= ps->text[i] == ')';
        if (depth > KC_EXPR_MAX_DEPTH)
            return kc_fail(ps->err, "expression nested deeper than %d levels: '%.40s...'",
                           KC_EXPR_MAX_DEPTH, ps->text);
    }
    return 0;
}

static int run_parser(struct parser *ps, int64_t *out)
{
    if (check_size(ps))
        return -1;
    int64_t v = parse_sum(ps);
    skip_space(ps);
    if (!ps->failed && *ps->p)
        fail(ps, "unexpected trailing text '%s'", ps->p);
    if (ps->failed)
        return -1;
    if (out)
        *out = v;
    return 0;
}

int expr_eval(const char *text, const dimset *env, int64_t *out, strbuf *err)
{
    struct parser ps = {.text = text, .p = text, .env = env, .err = err};
    return run_parser(&ps, out);
}

int expr_compile(const char *text, const dimset *env, expr_prog *out, strbuf *err)
{
    size_t len = strnlen(text, KC_EXPR_MAX_LEN + 1);
    struct parser ps = {.text = text, .p = text, .env = env, .err = err,
                        .ops = xmalloc((len + 1) * sizeof(struct expr_op))};
    out->n = 0;
    out->ops = NULL;
    if (run_parser(&ps, NULL)) {
        free(ps.ops);
        return -1;
    }
    out->n = ps.n_ops;
    out->ops = ps.ops;
    return 0;
}

/* One operator on the two values under the top of the stack, as the evaluator computes it. */
static int run_binary(enum expr_opcode code, int64_t a, int64_t b, int64_t *out)
{
    switch (code) {
    case OP_ADD: return __builtin_add_overflow(a, b, out) ? -1 : 0;
    case OP_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
    case OP_MUL: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
    case OP_MIN: *out = a < b ? a : b; return 0;
    case OP_MAX: *out = a > b ? a : b; return 0;
    default: break;
    }
    if (b == 0)
        return -1;
    if (b == -1) { /* INT64_MIN / -1 overflows; INT64_MIN % -1 is 0 */
        *out = 0;
        return code == OP_MOD ? 0 : __builtin_sub_overflow(0, a, out) ? -1 : 0;
    }
    *out = code == OP_DIV   ? a / b
           : code == OP_MOD ? a % b
                            : a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
    return 0;
}

int expr_run(const expr_prog *prog, const int64_t *values, int64_t *out)
{
    int64_t stack[KC_EXPR_MAX_LEN + 1];
    int top = 0;
    for (int i = 0; i < prog->n; i++) {
        const struct expr_op *op = &prog->ops[i];
        if (op->code == OP_PUSH)
            stack[top++] = op->arg;
        else if (op->code == OP_LOAD)
            stack[top++] = values[op->arg];
        else if (op->code == OP_NEG) {
            if (__builtin_sub_overflow(0, stack[top - 1], &stack[top - 1]))
                return -1;
        } else if (run_binary(op->code, stack[top - 2], stack[top - 1], &stack[top - 2]))
            return -1;
        else
            top--;
    }
    *out = stack[0];
    return 0;
}

void expr_prog_free(expr_prog *prog)
{
    free(prog->ops);
    prog->ops = NULL;
    prog->n = 0;
}

int expr_names(const char *text, char names[][64], int max, strbuf *err)
{
    struct parser ps = {.text = text, .p = text, .err = err, .names = names, .max_names = max};
    if (run_parser(&ps, NULL))
        return -1;
    return ps.n_names;
}
