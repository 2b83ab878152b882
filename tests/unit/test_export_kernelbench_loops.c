/* test_export_kernelbench_loops: kexport's KernelBench host wrapper for a candidate with
 * "// @for" loops and NAME[INDEX] arguments (issue 38): each loop becomes a C++ for loop around
 * its launches, nested as written, its variable renamed kc_v_NAME in every expression (so a
 * variable named grid cannot meet the wrapper's own grid); an offset becomes the tensor's address
 * plus INDEX elements. With nvcc present, the generated CUDA source compiles against the PyTorch
 * stub (tests/fixtures/torch_stub). A candidate without loops keeps its wrapper byte for byte:
 * tests/cli/test_export_kernelbench.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/candidate.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "common/problem.h"
#include "export/kernelbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char source[] =
    "extern \"C\" __global__ void relu_row(const float *x, float *t, long long d)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < d)\n"
    "        t[i] = fmaxf(x[i], 0.0f);\n"
    "}\n"
    "extern \"C\" __global__ void copy_row(const float *t, float *y, long long d, int pass)\n"
    "{\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < d && pass == 0)\n"
    "        y[i] = t[i];\n"
    "}\n"
    "// @scratch tmp f32[2*D]\n"
    "// @for b in 0..B\n"
    "// @launch relu_row<<<cdiv(D, 256), 256>>>(x[b*D], tmp[(b % 2)*D], D);\n"
    "//   @for grid in 0..1\n"
    "// @launch copy_row<<<cdiv(D, 256), 256, 4*grid>>>(tmp[(b % 2)*D], y[b*D], D, grid);\n"
    "//   @end\n"
    "// @end\n";

static const char *const want[] = {
    "    for (int64_t kc_v_b = (int64_t)(0); kc_v_b < (int64_t)(B); kc_v_b++) { // @for line 14\n"
    "        { // @launch line 15\n"
    "            dim3 grid((unsigned)(cdiv(D, 256)), (unsigned)(1), (unsigned)(1));\n"
    "            dim3 block((unsigned)(256), (unsigned)(1), (unsigned)(1));\n"
    "            size_t smem = (size_t)(0);\n",
    "            relu_row<<<grid, block, smem, stream>>>(kc_host::ptr{static_cast<char *>("
    "t_x.data_ptr()) + (int64_t)(kc_v_b*D) * (int64_t)t_x.element_size()}, "
    "kc_host::ptr{static_cast<char *>(t_tmp.data_ptr()) + (int64_t)((kc_v_b % 2)*D) * "
    "(int64_t)t_tmp.element_size()}, (int64_t)(D));\n"
    "            kc_host::check(\"launch of relu_row (line 15)\");\n"
    "        }\n"
    "        for (int64_t kc_v_grid = (int64_t)(0); kc_v_grid < (int64_t)(1); kc_v_grid++) { // "
    "@for line 16\n"
    "            { // @launch line 17\n",
    "                size_t smem = (size_t)(4*kc_v_grid);\n",
    "                copy_row<<<grid, block, smem, stream>>>(",
    "(int64_t)(D), (int64_t)(kc_v_grid));\n",
    "            }\n"
    "        } // @end line 18\n"
    "    } // @end line 19\n"
    "    return {t_y};\n",
};

/* The generated CUDA source compiles (types and calls) where nvcc is. */
static void compile_with_nvcc(const char *cuda)
{
    const char *nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK) != 0) {
        printf("SKIP nvcc: %s absent\n", nvcc);
        return;
    }
    char dir[] = "/tmp/kc-kb-loops-XXXXXX";
    assert_non_null(mkdtemp(dir));
    strbuf path = STRBUF_INIT, err = STRBUF_INIT, cmd = STRBUF_INIT;
    sb_addf(&path, "%s/gen.cu", dir);
    assert_int_equal(write_file_atomic(path.buf, cuda, strlen(cuda), &err), 0);
    const char *root = getenv("KC_ROOT") ? getenv("KC_ROOT") : ".";
    sb_addf(&cmd, "%s -std=c++17 -arch=sm_90 -I%s/tests/fixtures/torch_stub -c %s -o %s/gen.o "
                  ">%s/nvcc.log 2>&1", nvcc, root, path.buf, dir, dir);
    int rc = system(cmd.buf);
    if (rc != 0) {
        strbuf log = STRBUF_INIT;
        sb_reset(&path), sb_addf(&path, "%s/nvcc.log", dir);
        read_file(path.buf, &log, &err);
        fail_msg("nvcc failed (%d):\n%s", rc, sb_str(&log));
    }
    remove_tree(dir);
    sb_free(&path), sb_free(&err), sb_free(&cmd);
}

static void test_loops_and_offsets_in_the_wrapper(void **state)
{
    (void)state;
    problem p;
    strbuf err = STRBUF_INIT, wrapper = STRBUF_INIT, module = STRBUF_INIT;
    if (problem_load_by_id("level1/019_relu", &p, &err))
        fail_msg("%s", err.buf);
    launch_unit u;
    if (candidate_parse(source, &p, &u, &err))
        fail_msg("%s", err.buf);
    kernelbench_host_wrapper(&p, &u, &wrapper);
    const char *at = wrapper.buf;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *hit = strstr(at, want[i]);
        if (!hit)
            fail_msg("the wrapper lacks (in order):\n%s\nwrapper:\n%s", want[i], wrapper.buf);
        at = hit + strlen(want[i]);
    }
    assert_int_equal(kernelbench_module(&p, source, "test", &module, &err), 0);
    strbuf cuda = STRBUF_INIT;
    sb_adds(&cuda, "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
                   "#include <cuda_runtime.h>\n#include <vector>\n\n");
    sb_adds(&cuda, source);
    sb_add(&cuda, wrapper.buf, wrapper.len);
    compile_with_nvcc(cuda.buf);
    launch_unit_free(&u);
    problem_free(&p);
    sb_free(&err), sb_free(&wrapper), sb_free(&module), sb_free(&cuda);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loops_and_offsets_in_the_wrapper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
