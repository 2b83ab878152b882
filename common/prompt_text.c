/* prompt_text: the two texts that open every conversation with the model: the system message
 * (the kc-cuda v1 contract with one worked example; loops and offsets, docs/CANDIDATE_FORMAT.md,
 * in one paragraph) and a problem's spec (see prompt_text.h).
 * kcollect sends them, problem_register stores the spec, and kexport writes them where no
 * request was recorded, so that a record's prompt is the prompt the model sees. */
#include "common/prompt_text.h"
#include "common/allowed_headers.h"
#include "common/candidate.h"

#include <string.h>

/* The header list in the system message comes from the allow-list the verifier enforces. */
#define PROMPT_HEADER(name) " " name

/* What the checks do to the inputs beyond the default draw (problem.h problem_values): a
 * kernel must be right there too, so the model is told. */
static void add_value_classes(strbuf *out, const problem_values *v)
{
    if (!v->present)
        return;
    if (v->structure)
        sb_adds(out, "The checks also scale the inputs' rows and columns differently (a factor "
                     "up to 8 either way)");
    if (v->structure && v->spike > 0)
        sb_adds(out, " and put a few large values at random positions, so every element counts");
    if (v->structure)
        sb_adds(out, ".\n");
    if (v->large > 0)
        sb_addf(out, "One check multiplies the inputs by %g: avoid overflow as PyTorch does.\n",
                v->large);
    if (v->n_special) {
        sb_adds(out, "One check puts special values in the inputs (");
        for (int i = 0; i < v->n_special; i++)
            sb_addf(out, "%s%s", i ? ", " : "", special_name(v->special[i]));
        sb_adds(out, "): the outputs must match PyTorch's there.\n");
    }
}

static const char system_text[] =
    "You write CUDA kernels for a verifier that compiles your code with NVRTC, runs it on an "
    "NVIDIA H100 (sm_90) against a trusted reference, and times it. Make the kernel correct "
    "first, then fast.\n"
    "\n"
    "Answer format (kc-cuda v1): exactly one fenced ```cuda block. Inside it:\n"
    "- Device code only: `extern \"C\" __global__` entry points, `__device__` helpers, "
    "`__constant__` data, templates. No host code, no main(), no cudaMalloc or cudaMemcpy: "
    "the verifier owns the host side.\n"
    "- Includes: only these toolkit headers, each as #include <NAME>:" KC_ALLOWED_HEADERS(
        PROMPT_HEADER) ". Nothing else is available (no C or C++ standard library headers; "
    "use cuda/std). Float32 code needs none. NVRTC has no INFINITY macro: "
    "use __int_as_float(0x7f800000).\n"
    "- Launch lines say how your kernels run; they execute in order on one stream and together "
    "they are the unit that is checked and timed:\n"
    "  // @launch NAME<<<GRID, BLOCK[, SHARED_BYTES]>>>(ARG, ...);\n"
    "  GRID and BLOCK are integer expressions or dim3(x, y, z). Arguments are tensor names "
    "(inputs, outputs, scratch: passed as device pointers), integer expressions over the "
    "problem's dims (passed as int or long long to match your parameter), scalar params of the "
    "problem by name, or literals.\n"
    "  Expressions use integer literals, dim names, + - * / %, cdiv(a, b), min(a, b), "
    "max(a, b) and parentheses, in 64-bit integer arithmetic.\n"
    "- Scratch buffers you need: // @scratch NAME DTYPE[COUNT]   (for example "
    "// @scratch partial f32[B*64]). Scratch and outputs are filled with garbage before your "
    "kernels run: initialise what you read and write every output element.\n"
    "- Repetition (layers, time steps): // @for l in 0..L ... // @end repeats the launch lines "
    "between (nestable 4 deep; l usable in their expressions; bounds over dims; at most 65536 "
    "launches in all). An argument NAME[INDEX] passes a pointer to element INDEX of a tensor or "
    "scratch buffer (a layer's weights, a time step's slice), e.g. for x of shape [T, B, H]:\n"
    "  // @for t in 0..T\n"
    "  // @launch cell<<<B, 256>>>(x[t*B*H], h, H, t);\n"
    "  // @end\n"
    "- Optional, for diagnosis only: after the launch that completes a layer of a network, "
    "// @layer NAME BUFFER[INDEX] DTYPE[COUNT] says that COUNT elements of an output or scratch "
    "buffer from element INDEX hold the output of layer NAME (the PyTorch module name the "
    "problem lists, e.g. // @layer layer1.0.conv1 act[0] f32[B*64*56*56]; inside a @for, "
    "{expr} parts over the loop variable: layer1.{l}.conv1). When your output is wrong, the "
    "report then names the first listed layer whose output differs. It changes nothing that "
    "is checked or timed.\n"
    "- Your kernels also run on other sizes than the default dims (odd ones, such as 4097 or "
    "1): guard every index, never hard-code a dim, use 64-bit indices when a count can exceed "
    "2^31, and keep grid.y and grid.z at most 65535, a block at most 1024 threads, dynamic "
    "shared memory at most 232448 bytes and all scratch at most 16 GiB.\n"
    "\n"
    "Worked example. Problem: y = alpha * x over a float32 vector x of N elements, scalar "
    "param alpha; dims N = 1048576. A good answer:\n"
    "\n"
    "```cuda\n"
    "extern \"C\" __global__ void scale(const float *__restrict__ x, float *__restrict__ y,\n"
    "                                  float alpha, long long n)\n"
    "{\n"
    "    long long stride = (long long)gridDim.x * blockDim.x;\n"
    "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)\n"
    "        y[i] = alpha * x[i];\n"
    "}\n"
    "// @launch scale<<<min(cdiv(N, 256), 65536), 256>>>(x, y, alpha, N);\n"
    "```\n"
    "\n"
    "After each answer you get the verifier's report (compile errors, mismatches with their "
    "location and values, timing against PyTorch, achieved bandwidth, registers and spills). "
    "Reply to it with a complete new version of the code block, never a diff.\n";

const char *prompt_system_text(void) { return system_text; }

static void add_dims_line(strbuf *out, const dimset *d)
{
    for (int i = 0; i < d->n; i++)
        sb_addf(out, "%s%s=%lld", i ? ", " : "", d->names[i], (long long)d->values[i]);
}

static void add_shape(strbuf *out, const tensor_spec *t)
{
    sb_adds(out, "[");
    for (int i = 0; i < t->rank; i++)
        sb_addf(out, "%s%s", i ? ", " : "", t->shape[i]);
    sb_adds(out, "]");
}

/* A packed input (a network's parameters): the views, each with its place and, where the
 * manifest says, the PyTorch parameter it holds. */
static void add_views(strbuf *out, const tensor_spec *t)
{
    sb_addf(out, "  packed parameters: each view below is a contiguous row-major %s tensor that "
                 "starts at the element of %s given (256-byte aligned; the padding between "
                 "views holds NaN). Pass a view by name (a pointer to its first element) or "
                 "as VIEW[INDEX] (a pointer to its element INDEX):\n", dtype_name(t->dtype), t->name);
    for (int k = 0; k < t->n_views; k++) {
        const tensor_spec *v = &t->views[k];
        sb_addf(out, "  - %s: ", v->name);
        add_shape(out, v);
        sb_addf(out, " at %s[%s]", t->name, v->view_offset);
        if (v->torch_key)
            sb_addf(out, " (%s)", v->torch_key);
        sb_adds(out, "\n");
    }
}

static void add_tensor_line(strbuf *out, const tensor_spec *t)
{
    sb_addf(out, "- %s: %s", t->name, dtype_name(t->dtype));
    add_shape(out, t);
    sb_adds(out, " (contiguous, row-major)\n");
    if (t->n_views)
        add_views(out, t);
}

/* The reference's layer points (its "// @layer" lines, in the order it computes them): the names
 * a candidate's @layer lines are compared by after a mismatch (docs/LEVEL3.md). */
static void add_layers(strbuf *out, const problem *p)
{
    launch_unit u = {0};
    strbuf err = STRBUF_INIT;
    if (p->reference_source.len && strstr(p->reference_source.buf, "@layer") &&
        candidate_parse(p->reference_source.buf, p, &u, &err) == 0 && u.n_layers) {
        sb_adds(out, "Layers (the reference's, in the order it computes them; each is the module's "
                     "output, row-major as PyTorch holds it, with an activation the reference "
                     "fuses into it applied). Optional // @layer lines with these names let the "
                     "report name the first layer whose output differs:\n");
        for (int i = 0; i < u.n_layers; i++)
            sb_addf(out, "- %s: %s[%s]\n", u.layers[i].name, dtype_name(u.layers[i].dtype),
                    u.layers[i].count);
    }
    launch_unit_free(&u);
    sb_free(&err);
}

void problem_spec_text(const problem *p, strbuf *out)
{
    sb_addf(out, "Problem %s: %s\n\n%s\n\n", p->id, p->title, p->description);
    sb_addf(out, "PyTorch reference (the semantics to match):\n```python\n%s\n```\n\n",
            p->torch_reference);
    sb_adds(out, "Inputs (device pointers, in this order):\n");
    for (int i = 0; i < p->n_inputs; i++)
        add_tensor_line(out, &p->inputs[i]);
    sb_adds(out, "Outputs (poisoned before your kernel runs; write every element):\n");
    for (int i = 0; i < p->n_outputs; i++)
        add_tensor_line(out, &p->outputs[i]);
    add_layers(out, p);
    if (p->n_params) {
        sb_adds(out, "Scalar params:\n");
        for (int i = 0; i < p->n_params; i++) {
            const param_spec *ps = &p->params[i];
            sb_addf(out, "- %s: %s = %.9g", ps->name, dtype_name(ps->dtype), ps->value);
            for (int k = 0; k < ps->n_vary; k++)
                sb_addf(out, "%s%.9g", k ? ", " : " (the checks also pass ", ps->vary[k]);
            sb_adds(out, ps->n_vary ? ")\n" : "\n");
        }
    }
    add_value_classes(out, &p->values);
    sb_adds(out, "Dims (usable by name in @launch and @scratch expressions): ");
    add_dims_line(out, &p->dims_default);
    sb_adds(out, "\nYour kernel is also checked on other sizes, for example: ");
    add_dims_line(out, &p->dims_alt[0]);
    sb_addf(out, "\nTolerance: atol=%g, rtol=%g.\n", p->atol, p->rtol);
}
