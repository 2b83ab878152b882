/* kernelbench: a kernel as a KernelBench-style Python module: class ModelNew(nn.Module) whose
 * forward allocates the outputs and scratch and launches the kernel(s) through
 * torch.utils.cpp_extension.load_inline. The CUDA source is the candidate's device code followed
 * by a generated host wrapper that launches each kernel with the grid, block, dynamic shared
 * memory and arguments of its `// @launch` line (inside C++ for loops for its `// @for` lines,
 * their variables renamed kc_v_NAME; NAME[INDEX] as the tensor's address plus INDEX elements)
 * and allocates each `// @scratch` buffer; dims
 * come from the input shapes (others from the problem's default dims), params from the manifest.
 * The module also holds the problem's PyTorch reference as Model, and get_inputs() and
 * get_init_inputs() as KernelBench calls them. Inputs are the manifest's in order (a level-3
 * network's parameters are its packed input: get_inputs() lays them out as the verifier does,
 * NaN between views). Where the manifest has a torch_model (level 3), Model runs KernelBench's
 * own source (KERNELBENCH_SOURCE) in a namespace of its own, built as torch_model says, and
 * loads the packed input's views into its parameters by their torch keys, as
 * tools/problems/kcproblems.py make_kernelbench_model does. */
#ifndef KC_EXPORT_KERNELBENCH_H
#define KC_EXPORT_KERNELBENCH_H
#include "common/candidate.h"
#include "common/db.h"
#include "common/problem.h"
#include "common/strbuf.h"

/* The host wrapper (C++/CUDA): kc_forward(inputs, dims, params) -> outputs. */
void kernelbench_host_wrapper(const problem *p, const launch_unit *u, strbuf *out);
/* The whole module for a candidate's source (parsed against p). */
int kernelbench_module(const problem *p, const char *source, const char *origin, strbuf *out,
                       strbuf *err);

/* The problems of a database as kernelbench_module needs them, loaded from the manifest and
 * reference blobs (one at a time: exports go problem by problem). */
typedef struct kernelbench_problems {
    char *id, *dir;
    problem p;
    int loaded;
} kernelbench_problems;

const problem *kernelbench_problem(kernelbench_problems *c, sqlite3 *db, const char *id,
                                   strbuf *err);
void kernelbench_problems_free(kernelbench_problems *c);

#endif
