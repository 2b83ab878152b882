/* test_verify_headers: the compile sandbox's header tree (issue 10, class 5). Every header of
 * the allow-list compiles in the sandbox in a kernel that uses it (cooperative groups and
 * cuda/std need include/cccl on CUDA 13), and the tree holds nothing else: with the policy out
 * of the way (the compile server is called directly), an off-list toolkit header that the
 * unsandboxed control finds is not found in the sandbox. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "common/fsutil.h"
#include "common/prompt_text.h"
#include "verify/service/compile_pool.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/policy.h"
#include "verify/service/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One kernel per allowed header, using it. */
static const char *uses_every_header =
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "#include <cuda_fp8.h>\n"
    "#include <mma.h>\n"
    "#include <cooperative_groups.h>\n"
    "#include <cooperative_groups/reduce.h>\n"
    "#include <cooperative_groups/scan.h>\n"
    "#include <cooperative_groups/memcpy_async.h>\n"
    "#include <cuda_pipeline.h>\n"
    "#include <cuda_pipeline_primitives.h>\n"
    "#include <cuda_awbarrier.h>\n"
    "#include <cuda/barrier>\n"
    "#include <cuda/pipeline>\n"
    "#include <cuda/atomic>\n"
    "#include <cuda/cmath>\n"
    "#include <cuda/ptx>\n"
    "#include <cuda/std/cstdint>\n"
    "#include <cuda/std/cstddef>\n"
    "#include <cuda/std/climits>\n"
    "#include <cuda/std/limits>\n"
    "#include <cuda/std/type_traits>\n"
    "#include <cuda/std/utility>\n"
    "#include <cuda/std/array>\n"
    "#include <cuda/std/cmath>\n"
    "#include <cuda/std/bit>\n"
    "#include <cuda/std/tuple>\n"
    "#include <cuda/std/functional>\n"
    "#include <cuda/std/span>\n"
    "#include <cuda/std/complex>\n"
    "#include <cuda/std/atomic>\n"
    "namespace cg = cooperative_groups;\n"
    "using namespace nvcuda;\n"
    "\n"
    "extern \"C\" __global__ void k_half(const float *x, float *y) {\n"
    "    __half h = __float2half(x[0]); __nv_bfloat16 b = __float2bfloat16(x[1]);\n"
    "    __nv_fp8_e4m3 f8(x[2]);\n"
    "    y[0] = __half2float(__hmul(h, h)) + __bfloat162float(b) + float(f8);\n"
    "}\n"
    "extern \"C\" __global__ void k_wmma(const half *a, const half *b, float *c) {\n"
    "    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
    "    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
    "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
    "    wmma::fill_fragment(fc, 0.0f);\n"
    "    wmma::load_matrix_sync(fa, a, 16); wmma::load_matrix_sync(fb, b, 16);\n"
    "    wmma::mma_sync(fc, fa, fb, fc);\n"
    "    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);\n"
    "}\n"
    "extern \"C\" __global__ void k_cg(const float *x, float *y) {\n"
    "    __shared__ float tile[256];\n"
    "    cg::thread_block block = cg::this_thread_block();\n"
    "    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
    "    cg::memcpy_async(block, tile, x, sizeof(float) * 256);\n"
    "    cg::wait(block);\n"
    "    float s = cg::reduce(warp, tile[block.thread_rank()], cg::plus<float>());\n"
    "    float p = cg::inclusive_scan(warp, s);\n"
    "    if (warp.thread_rank() == 0) y[block.thread_rank() / 32] = p;\n"
    "}\n"
    "extern \"C\" __global__ void k_pipe(const float *x, float *y) {\n"
    "    __shared__ float tile[256];\n"
    "    __pipeline_memcpy_async(&tile[threadIdx.x], &x[threadIdx.x], sizeof(float));\n"
    "    __pipeline_commit(); __pipeline_wait_prior(0);\n"
    "    #pragma nv_diag_suppress static_var_with_dynamic_init\n"
    "    __shared__ cuda::barrier<cuda::thread_scope_block> bar;\n"
    "    if (threadIdx.x == 0) init(&bar, blockDim.x);\n"
    "    __syncthreads();\n"
    "    bar.arrive_and_wait();\n"
    "    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();\n"
    "    pipe.producer_acquire(); cuda::memcpy_async(&tile[threadIdx.x], &x[threadIdx.x], sizeof(float), pipe);\n"
    "    pipe.producer_commit(); pipe.consumer_wait(); pipe.consumer_release();\n"
    "    y[threadIdx.x] = tile[threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void k_std(const float *x, float *y, int *count) {\n"
    "    static_assert(cuda::std::is_same<cuda::std::int64_t, long long>::value || sizeof(cuda::std::int64_t) == 8, \"\");\n"
    "    cuda::std::array<float, 2> a{x[0], x[1]};\n"
    "    cuda::std::pair<float, int> pr = cuda::std::make_pair(a[0], 1);\n"
    "    cuda::std::tuple<float, int> tp(a[1], 2);\n"
    "    cuda::std::complex<float> z(x[0], x[1]);\n"
    "    cuda::std::span<const float> sp(x, 4);\n"
    "    cuda::atomic_ref<int, cuda::thread_scope_device> ref(*count);\n"
    "    ref.fetch_add(1);\n"
    "    y[0] = cuda::std::sqrt(a[0]) + cuda::std::numeric_limits<float>::epsilon() + pr.first\n"
    "         + cuda::std::get<0>(tp) + cuda::std::abs(z) + sp[3] + cuda::std::plus<float>()(1.f, 2.f)\n"
    "         + (float)cuda::std::popcount(4u) + (float)cuda::ceil_div(7, 2) + (float)(CHAR_BIT + (INT_MAX > 0))\n"
    "         + (float)sizeof(cuda::std::size_t);\n"
    "}\n";

static int setup(void **state)
{
    (void)state;
    const char *bin = getenv("KC_BIN");
    if (bin) {
        strbuf p = STRBUF_INIT;
        sb_addf(&p, "%s/kverify", bin);
        setenv("KC_KVERIFY", p.buf, 1);
        sb_free(&p);
    }
    return 0;
}

static compile_pool *start_pool(int no_sandbox)
{
    compile_pool *pool;
    compile_pool_options o = {.servers = 1, .no_sandbox = no_sandbox, .timeout_ms = 120000};
    strbuf err = STRBUF_INIT;
    if (compile_pool_start(&o, &pool, &err))
        fail_msg("compile server: %s", err.buf);
    sb_free(&err);
    return pool;
}

static void compile_with(compile_pool *pool, const char *src, compile_output *out)
{
    strbuf err = STRBUF_INIT;
    compile_output_init(out);
    if (compile_pool_compile(pool, src, "sm_90", out, &err))
        fail_msg("compile pool: %s", err.buf);
    sb_free(&err);
}

/* The test source covers the whole allow-list (a header added to the list needs a use here). */
static void test_source_covers_the_allow_list(void **state)
{
    (void)state;
    strbuf line = STRBUF_INIT;
    for (int i = 0; policy_allowed_includes[i]; i++) {
        sb_reset(&line);
        sb_addf(&line, "#include <%s>\n", policy_allowed_includes[i]);
        if (!strstr(uses_every_header, line.buf))
            fail_msg("allowed header %s has no use in this test", policy_allowed_includes[i]);
    }
    strbuf err = STRBUF_INIT;
    assert_int_equal(policy_check(uses_every_header, &err), 0);
    sb_free(&line), sb_free(&err);
}

static void test_allowed_headers_compile_in_the_sandbox(void **state)
{
    (void)state;
    compile_pool *pool = start_pool(0);
    compile_output out;
    compile_with(pool, uses_every_header, &out);
    if (!out.ok)
        fail_msg("the allowed headers do not compile in the sandbox:\n%s", out.log.buf);
    for (const char *k = "k_half\0k_wmma\0k_cg\0k_pipe\0k_std\0"; *k; k += strlen(k) + 1) {
        strbuf q = STRBUF_INIT;
        sb_addf(&q, "\"name\":\"%s\"", k);
        assert_non_null(strstr(out.kernels_json.buf, q.buf));
        sb_free(&q);
    }
    compile_output_free(&out);
    compile_pool_stop(pool);
}

static const char *off_list[] = {"cusparse.h", "cublas_v2.h", "cufft.h", "curand_kernel.h",
                                 "cub/cub.cuh", "thrust/device_vector.h", "cudnn.h", NULL};

/* With no policy in front of it, the sandbox finds no off-list toolkit header; the
 * unsandboxed control finds them (so the test can fail). */
static void test_off_list_headers_absent_from_the_sandbox(void **state)
{
    (void)state;
    compile_pool *sandboxed = start_pool(0), *control = start_pool(1);
    strbuf src = STRBUF_INIT, missing = STRBUF_INIT;
    for (int i = 0; off_list[i]; i++) {
        sb_reset(&src), sb_reset(&missing);
        sb_addf(&src, "#include <%s>\nextern \"C\" __global__ void k(float *y) { y[0] = 1; }\n",
                off_list[i]);
        sb_addf(&missing, "cannot open source file \"%s\"", off_list[i]);
        compile_output out;
        compile_with(sandboxed, src.buf, &out);
        if (out.ok || !strstr(sb_str(&out.log), missing.buf))
            fail_msg("<%s> was found in the sandbox:\n%s", off_list[i], sb_str(&out.log));
        compile_output_free(&out);
        if (i < 2) { /* the control is slow: two suffice to show these exist on the host */
            compile_with(control, src.buf, &out);
            if (strstr(sb_str(&out.log), missing.buf))
                fail_msg("control: <%s> is not on this host", off_list[i]);
            compile_output_free(&out);
        }
    }
    compile_pool_stop(sandboxed);
    compile_pool_stop(control);
    sb_free(&src), sb_free(&missing);
}

/* The system prompt names every allowed header (it is generated from the same list). */
static void test_prompt_lists_the_allow_list(void **state)
{
    (void)state;
    strbuf word = STRBUF_INIT;
    for (int i = 0; policy_allowed_includes[i]; i++) {
        sb_reset(&word);
        sb_addf(&word, " %s", policy_allowed_includes[i]);
        if (!strstr(prompt_system_text(), word.buf))
            fail_msg("the system prompt does not list %s", policy_allowed_includes[i]);
    }
    sb_free(&word);
}

/* The tree itself: the allowed headers and what they include, paths inside the include dir. */
static void test_tree_contents(void **state)
{
    (void)state;
    header_tree t;
    strbuf err = STRBUF_INIT;
    if (header_tree_collect(cuda_include_dir(), &t, &err))
        fail_msg("%s", err.buf);
    int fp16 = 0, limits = 0, cg = 0;
    for (int i = 0; i < t.n; i++) {
        const char *p = t.files[i].path;
        assert_true(p[0] != '/' && !strstr(p, "..") && !strstr(p, "//"));
        fp16 |= strcmp(p, "cuda_fp16.h") == 0;
        cg |= strcmp(p, "cooperative_groups.h") == 0;
        limits |= strcmp(p, "cccl/cuda/std/limits") == 0 || strcmp(p, "cuda/std/limits") == 0;
        for (int k = 0; off_list[k]; k++)
            if (strcmp(p, off_list[k]) == 0)
                fail_msg("%s is in the sandbox's header tree", p);
        assert_null(strstr(p, "thrust/"));
    }
    assert_true(fp16 && limits && cg);
    print_message("sandbox header tree: %d files, %lld bytes\n", t.n, t.bytes);
    header_tree_free(&t);
    sb_free(&err);
}

static void put(const char *dir, const char *rel, const char *text)
{
    strbuf path = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&path, "%s/%s", dir, rel);
    char *slash = strrchr(path.buf, '/');
    *slash = '\0';
    assert_int_equal(mkdir_p(path.buf, &err), 0);
    *slash = '/';
    assert_int_equal(write_file_atomic(path.buf, text, strlen(text), &err), 0);
    sb_free(&path), sb_free(&err);
}

static int tree_index(const header_tree *t, const char *rel)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->files[i].path, rel) == 0)
            return i;
    return -1;
}

/* Resolution as NVRTC does it, on a made-up toolkit: quoted names beside the includer first,
 * then include/ and include/cccl; ../ inside the tree is followed, out of it is not; files no
 * allowed header names stay out; a missing optional header is skipped, a missing first one
 * is an error. */
static void test_tree_resolution(void **state)
{
    (void)state;
    char dir[] = "/tmp/kc-tree-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put(dir, "cuda_fp16.h", "#include \"cuda_fp16.hpp\"\n  #  include <sub/b.h>\n"
                             "#include <cuda/std/limits>\n#include \"../kc-tree-outside.h\"\n");
    put(dir, "cuda_fp16.hpp", "// #include <commented.h>: a comment, not followed\n"
                               "#if 0\n#include <conditional.h>\n#endif\n");
    put(dir, "conditional.h", "followed whatever its #if says (a superset)\n");
    put(dir, "commented.h", "\n");
    put(dir, "sub/b.h", "#include \"../c.h\"\n#include \"nonexistent.h\"\n#include \"d.h\"\n");
    put(dir, "sub/d.h", "\n");
    put(dir, "d.h", "wrong d.h: the one beside sub/b.h comes first\n");
    put(dir, "c.h", "\n");
    put(dir, "cccl/cuda/std/limits", "#include \"__detail/x.h\"\n");
    put(dir, "cccl/cuda/std/__detail/x.h", "\n");
    put(dir, "cusparse.h", "off the list\n");
    header_tree t;
    strbuf err = STRBUF_INIT;
    /* exists, but outside the include dir */
    assert_int_equal(write_file_atomic("/tmp/kc-tree-outside.h", "\n", 1, &err), 0);
    if (header_tree_collect(dir, &t, &err))
        fail_msg("%s", err.buf);
    const char *want[] = {"cuda_fp16.h", "cuda_fp16.hpp", "conditional.h", "sub/b.h", "sub/d.h",
                          "c.h", "cccl/cuda/std/limits", "cccl/cuda/std/__detail/x.h", NULL};
    for (int i = 0; want[i]; i++)
        if (tree_index(&t, want[i]) < 0)
            fail_msg("%s is missing from the tree", want[i]);
    assert_int_equal(t.n, 8);
    assert_int_equal(tree_index(&t, "cusparse.h"), -1);
    assert_int_equal(tree_index(&t, "commented.h"), -1);
    assert_int_equal(tree_index(&t, "d.h"), -1);
    for (int i = 0; i < t.n; i++)
        assert_null(strstr(t.files[i].path, "outside"));
    header_tree_free(&t);
    remove_tree(dir);
    char empty[] = "/tmp/kc-tree-XXXXXX";
    assert_non_null(mkdtemp(empty));
    assert_int_equal(header_tree_collect(empty, &t, &err), -1);
    assert_non_null(strstr(err.buf, "<cuda_fp16.h> is not under"));
    remove_tree(empty);
    sb_free(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_covers_the_allow_list),
        cmocka_unit_test(test_prompt_lists_the_allow_list),
        cmocka_unit_test(test_tree_contents),
        cmocka_unit_test(test_tree_resolution),
        cmocka_unit_test(test_allowed_headers_compile_in_the_sandbox),
        cmocka_unit_test(test_off_list_headers_absent_from_the_sandbox),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
