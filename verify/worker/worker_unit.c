/* worker_unit: loads a compiled module, resolves the kernels its launch lines
 * name, marshals launch-line arguments by each kernel's parameter sizes
 * (cuFuncGetParamInfo), and runs the launch unit on the worker's stream, its
 * @for loops expanded by common/schedule.c (its @layer points only for the
 * diagnosis run, worker_layers.c). */
#include "common/error.h"
#include "common/schedule.h"
#include "verify/worker/worker.h"

#include <stdio.h>
#include <string.h>

static int fail_msg(wk_failure *f, const char *verdict, const char *msg)
{
    snprintf(f->verdict, sizeof(f->verdict), "%s", verdict);
    sb_reset(&f->message);
    sb_adds(&f->message, msg);
    return -1;
}

static int resolve_kernels(wk_unit *u, wk_failure *f)
{
    for (int i = 0; i < u->lu.n_launches; i++) {
        CUresult rc = cuModuleGetFunction(&u->funcs[i], u->module, u->lu.launches[i].kernel);
        if (rc != CUDA_SUCCESS) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "line %d: kernel '%s' is not in the module (declare it extern \"C\" "
                        "__global__)", u->lu.launches[i].line, u->lu.launches[i].kernel);
            fail_msg(f, "launch_error", m.buf);
            sb_free(&m);
            return -1;
        }
    }
    return 0;
}

int wk_unit_load(wk_unit *u, const char *cubin, const char *source, const problem *p, wk_failure *f)
{
    memset(u, 0, sizeof(*u));
    strbuf err = STRBUF_INIT;
    if (candidate_parse(source, p, &u->lu, &err)) {
        fail_msg(f, "extract_error", err.buf);
        sb_free(&err);
        return -1;
    }
    sb_free(&err);
    u->cubin = cubin;
    u->keeps_state = 1; /* until the caller knows better */
    CUresult rc = cuModuleLoadData(&u->module, cubin);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "launch_error", rc, "loading the compiled module");
    return resolve_kernels(u, f);
}

/* A fresh copy of the module: every __device__ and __constant__ variable back at its initial
 * value, so no state survives from one execution of the launch unit to the next. The stream
 * must be idle (the callers synchronise after each execution). */
int wk_unit_reload(wk_unit *u, wk_failure *f)
{
    if (u->module)
        cuModuleUnload(u->module);
    u->module = NULL;
    CUresult rc = cuModuleLoadData(&u->module, u->cubin);
    if (rc != CUDA_SUCCESS)
        return wk_fail_cuda(f, "runtime_error", rc, "reloading the compiled module");
    return resolve_kernels(u, f);
}

void wk_unit_free(wk_unit *u)
{
    if (u->module)
        cuModuleUnload(u->module);
    launch_unit_free(&u->lu);
    memset(u, 0, sizeof(*u));
}

/* Storage for one marshalled argument. */
union arg_value {
    CUdeviceptr ptr;
    int i32;
    long long i64;
    float f32;
    double f64;
};

static int arg_error(wk_failure *f, const launch *l, int idx, const char *what, size_t size)
{
    strbuf m = STRBUF_INIT;
    sb_addf(&m, "line %d: argument %d ('%s') of %s: %s (the kernel parameter is %zu bytes)", l->line,
            idx + 1, l->args[idx].text, l->kernel, what, size);
    fail_msg(f, "launch_error", m.buf);
    sb_free(&m);
    return -1;
}

static int marshal_arg(const launch *l, int i, size_t size, const problem *p, const dimset *dims,
                       const wk_buffer *buffers, union arg_value *v, wk_failure *f)
{
    const launch_arg *a = &l->args[i];
    strbuf err = STRBUF_INIT;
    int64_t iv;
    double dv;
    switch (a->kind) {
    case KC_ARG_TENSOR:
        if (size != 8)
            return arg_error(f, l, i, "a tensor is passed as a pointer", size);
        v->ptr = buffers[a->tensor].ptr;
        return 0;
    case KC_ARG_OFFSET:
        if (size != 8)
            return arg_error(f, l, i, "a tensor is passed as a pointer", size);
        if (launch_offset_bytes(a, dims, buffers[a->tensor].numel, buffers[a->tensor].dtype, &iv,
                                &err)) {
            strbuf m = STRBUF_INIT;
            sb_addf(&m, "line %d: argument %d of %s: %s", l->line, i + 1, l->kernel, err.buf);
            fail_msg(f, "launch_error", m.buf);
            sb_free(&m), sb_free(&err);
            return -1;
        }
        v->ptr = buffers[a->tensor].ptr + (CUdeviceptr)iv;
        return 0;
    case KC_ARG_INT:
        if (expr_eval(a->text, dims, &iv, &err)) {
            fail_msg(f, "launch_error", err.buf);
            sb_free(&err);
            return -1;
        }
        if (size == 4 && (iv < INT32_MIN || iv > INT32_MAX))
            return arg_error(f, l, i, "value does not fit a 32-bit int; take a long long", size);
        if (size == 4)
            v->i32 = (int)iv;
        else if (size == 8)
            v->i64 = iv;
        else
            return arg_error(f, l, i, "an integer needs an int or long long parameter", size);
        return 0;
    case KC_ARG_PARAM:
    case KC_ARG_FLOAT: {
        const param_spec *ps = a->kind == KC_ARG_PARAM ? &p->params[a->param] : NULL;
        dv = ps ? ps->value : a->fval;
        int integral = ps && (ps->dtype == KC_I32 || ps->dtype == KC_I64);
        if (size == 4 && integral)
            v->i32 = (int)dv;
        else if (size == 8 && integral)
            v->i64 = (long long)dv;
        else if (size == 4)
            v->f32 = (float)dv;
        else if (size == 8)
            v->f64 = dv;
        else
            return arg_error(f, l, i, "a scalar needs a 4- or 8-byte parameter", size);
        return 0;
    }
    }
    return arg_error(f, l, i, "unknown argument kind", size);
}

static int count_params(CUfunction fn, size_t *sizes, int max)
{
    int n = 0;
    size_t offset, size;
    while (n < max && cuFuncGetParamInfo(fn, (size_t)n, &offset, &size) == CUDA_SUCCESS)
        sizes[n++] = size;
    return n;
}

static int launch_one(wk_gpu *g, CUfunction fn, const launch *l, const problem *p,
                      const dimset *dims, wk_buffer *buffers, wk_failure *f)
{
    size_t sizes[KC_MAX_ARGS + 1];
    int n = count_params(fn, sizes, KC_MAX_ARGS + 1);
    if (n != l->n_args) {
        strbuf m = STRBUF_INIT;
        sb_addf(&m, "line %d: %s takes %d parameters but the launch passes %d", l->line, l->kernel, n,
                l->n_args);
        fail_msg(f, "launch_error", m.buf);
        sb_free(&m);
        return -1;
    }
    union arg_value values[KC_MAX_ARGS];
    void *params[KC_MAX_ARGS];
    for (int i = 0; i < n; i++) {
        if (marshal_arg(l, i, sizes[i], p, dims, buffers, &values[i], f))
            return -1;
        params[i] = &values[i];
    }
    int64_t grid[3], block[3], smem;
    strbuf err = STRBUF_INIT;
    if (launch_geometry(l, dims, grid, block, &smem, &err)) {
        fail_msg(f, "launch_error", err.buf);
        sb_free(&err);
        return -1;
    }
    for (int k = 0; k < 3; k++)
        if (grid[k] < 0 || grid[k] > UINT32_MAX || block[k] < 0 || block[k] > UINT32_MAX)
            return fail_msg(f, "launch_error", "grid or block dimension out of range");
    if (smem < 0 || smem > UINT32_MAX)
        return fail_msg(f, "launch_error", "shared memory size out of range");
    if (grid[0] * grid[1] * grid[2] == 0)
        return 0; /* nothing to do at these dims */
    CUresult rc = CUDA_SUCCESS;
    if (smem > 48 * 1024)
        rc = cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (rc == CUDA_SUCCESS)
        rc = cuLaunchKernel(fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                            (unsigned)block[0], (unsigned)block[1], (unsigned)block[2],
                            (unsigned)smem, g->stream, params, NULL);
    if (rc != CUDA_SUCCESS) {
        strbuf what = STRBUF_INIT;
        sb_addf(&what, "line %d: launching %s<<<(%lld,%lld,%lld), (%lld,%lld,%lld), %lld>>>", l->line,
                l->kernel, (long long)grid[0], (long long)grid[1], (long long)grid[2],
                (long long)block[0], (long long)block[1], (long long)block[2], (long long)smem);
        if (wk_is_sticky(rc)) /* an earlier kernel of the unit faulted */
            wk_fail_candidate(f, rc, what.buf);
        else
            wk_fail_cuda(f, "launch_error", rc, what.buf);
        sb_free(&what);
        return -1;
    }
    return 0;
}

/* Every launch of the unit in order, loops expanded: each launch's expressions see the dims and
 * the variables of the loops around it (it.env). launch_iter_start refuses an execution of more
 * than KC_MAX_UNIT_LAUNCHES launches at these dims before anything is launched. watch (NULL:
 * none): guard bands checked between the launches. layers (NULL: none): the unit's layer points
 * too, each region copied into the diagnosis run's arena (worker_layers.c). */
static int run_unit(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims,
                    wk_buffer *buffers, wk_watch *watch, wk_layers *layers, wk_failure *f)
{
    launch_iter it;
    strbuf err = STRBUF_INIT;
    if (launch_iter_start(&it, &u->lu, dims, NULL, &err)) {
        fail_msg(f, "launch_error", err.buf);
        sb_free(&err);
        return -1;
    }
    int i, rc = 0, is_layer = 0;
    long long n = 0;
    while (rc == 0 && (i = layers ? launch_iter_step(&it, &is_layer) : launch_iter_next(&it)) >= 0) {
        if (is_layer) {
            const layer_spec *l = &u->lu.layers[i];
            if (wk_layers_point(g, layers, l, &it.env, &buffers[l->tensor]))
                rc = fail_msg(f, "runtime_error", "internal: copying a layer's output");
        } else if (wk_watch_check(g, watch, n++))
            rc = fail_msg(f, "runtime_error", "internal: cannot check the guard bands between launches");
        else
            rc = launch_one(g, u->funcs[i], &u->lu.launches[i], p, &it.env, buffers, f);
    }
    launch_iter_free(&it);
    return rc;
}

int wk_unit_launch(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims, wk_buffer *buffers,
                   wk_watch *watch, wk_failure *f)
{
    return run_unit(g, u, p, dims, buffers, watch, NULL, f);
}

int wk_unit_launch_layers(wk_gpu *g, wk_unit *u, const problem *p, const dimset *dims,
                          wk_buffer *buffers, wk_layers *layers, wk_failure *f)
{
    return run_unit(g, u, p, dims, buffers, NULL, layers, f);
}
