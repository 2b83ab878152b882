/* test_verify_compile: the source policy, the compile sandbox against every
 * known NVRTC host-file leak (asserting no host bytes reach the log or the
 * module, with an unsandboxed control that does leak), compile success and
 * failure through the service in compile-only mode, the ptxas report, compile servers
 * started in waves, and compile servers killed from outside (no label; none at all while
 * interrupted). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "common/fsutil.h"
#include "common/interrupt.h"
#include "common/problem.h"
#include "verify/service/compile_pool.h"
#include "verify/service/driver_version.h"
#include "verify/service/nvrtc_compile.h"
#include "verify/service/policy.h"
#include "verify/service/verify.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char secret_path[64];
static char secret_token[64];

static int setup(void **state)
{
    (void)state;
    /* The tools under test live in $KC_BIN (tests/run.sh sets it). */
    const char *bin = getenv("KC_BIN");
    if (bin) {
        strbuf p = STRBUF_INIT;
        sb_addf(&p, "%s/kverify", bin);
        setenv("KC_KVERIFY", p.buf, 1);
        sb_free(&p);
    }
    snprintf(secret_path, sizeof(secret_path), "/tmp/kc-secret-XXXXXX");
    int fd = mkstemp(secret_path);
    if (fd < 0)
        return -1;
    snprintf(secret_token, sizeof(secret_token), "KCSECRET_%ld_%d", (long)getpid(), rand());
    dprintf(fd, "%s host data that must never leak\n", secret_token);
    close(fd);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(secret_path);
    return 0;
}

/* The leak vectors of facts/H100.md, each naming the secret file. */
static void leak_source(int vector, strbuf *src)
{
    sb_reset(src);
    switch (vector) {
    case 0: sb_addf(src, "#include \"%s\"\n", secret_path); break;
    case 1: sb_addf(src, "#include \"../../../../../../../..%s\"\n", secret_path); break;
    case 2: sb_addf(src, "%%:include \"%s\"\n", secret_path); break;
    case 3: sb_addf(src, "#\\\ninclude \"%s\"\n", secret_path); break;
    case 4: sb_addf(src, "#define F \"%s\"\n#include F\n", secret_path); break;
    case 5: sb_addf(src, "#if __has_include(\"%s\")\n#error FOUND_IT\n#endif\n", secret_path); break;
    case 6: sb_addf(src, "#include </proc/self/environ>\n"); break;
    }
    sb_adds(src, "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n");
}
#define N_VECTORS 7

static void test_policy_rejects_every_vector(void **state)
{
    (void)state;
    strbuf src = STRBUF_INIT, err = STRBUF_INIT;
    for (int v = 0; v < N_VECTORS; v++) {
        leak_source(v, &src);
        if (policy_check(src.buf, &err) != -1)
            fail_msg("policy accepted leak vector %d:\n%s", v, src.buf);
        assert_non_null(strstr(err.buf, "line "));
    }
    assert_int_equal(policy_check("#include <cuda_fp16.h>\n#include <mma.h>\n// #include \"/etc/x\"\n"
                                  "/* #include <stdio.h> */\nconst char *s = \"#include <x>\";\n", &err), 0);
    assert_int_equal(policy_check("  #  include <stdio.h>\n", &err), -1);
    assert_non_null(strstr(err.buf, "line 1: #include <stdio.h> is not allowed"));
    assert_int_equal(policy_check("int a;\n#include_next <cuda_fp16.h>\n", &err), -1);
    assert_non_null(strstr(err.buf, "line 2"));
    sb_free(&src), sb_free(&err);
}

static void compile_with(compile_pool *pool, const char *src, compile_output *out)
{
    strbuf err = STRBUF_INIT;
    compile_output_init(out);
    if (compile_pool_compile(pool, src, "sm_90", out, &err))
        fail_msg("compile pool: %s", err.buf);
    sb_free(&err);
}

static int contains(const strbuf *sb, const char *needle)
{
    return sb->len && memmem(sb->buf, sb->len, needle, strlen(needle)) != NULL;
}

static void test_sandbox_stops_every_vector(void **state)
{
    (void)state;
    compile_pool *pool;
    compile_pool_options o = {.servers = 1};
    strbuf err = STRBUF_INIT, src = STRBUF_INIT;
    if (compile_pool_start(&o, &pool, &err))
        fail_msg("sandboxed compile server: %s", err.buf);
    for (int v = 0; v < N_VECTORS; v++) {
        compile_output out;
        leak_source(v, &src);
        compile_with(pool, src.buf, &out);
        if (contains(&out.log, secret_token) || contains(&out.cubin, secret_token) ||
            contains(&out.log, "FOUND_IT") || contains(&out.log, "PATH=") || contains(&out.log, "HOME="))
            fail_msg("leak vector %d revealed host data:\n%s", v, out.log.buf);
        if (v != 5)
            assert_false(out.ok); /* the file cannot be opened */
        compile_output_free(&out);
    }
    compile_pool_stop(pool);
    sb_free(&err), sb_free(&src);
}

static void test_unsandboxed_control_leaks(void **state)
{
    (void)state;
    /* Proves the test above can fail: without the sandbox NVRTC reads the file. */
    compile_pool *pool;
    compile_pool_options o = {.servers = 1, .no_sandbox = 1};
    strbuf err = STRBUF_INIT, src = STRBUF_INIT;
    assert_int_equal(compile_pool_start(&o, &pool, &err), 0);
    compile_output out;
    leak_source(0, &src);
    compile_with(pool, src.buf, &out);
    assert_true(contains(&out.log, secret_token));
    compile_output_free(&out);
    leak_source(5, &src);
    compile_with(pool, src.buf, &out);
    assert_true(contains(&out.log, "FOUND_IT"));
    compile_output_free(&out);
    compile_pool_stop(pool);
    sb_free(&err), sb_free(&src);
}

struct flood {
    compile_pool *pool;
    int ok;
};

static void *compile_one(void *arg)
{
    struct flood *f = arg;
    compile_output out;
    strbuf err = STRBUF_INIT;
    compile_output_init(&out);
    f->ok = compile_pool_compile(f->pool, "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n",
                                 "sm_90", &out, &err) == 0 && out.ok;
    compile_output_free(&out);
    sb_free(&err);
    return NULL;
}

/* A batch asks for all its compiles at once: the servers they need start at most
 * KC_COMPILE_SPAWN_AT_ONCE at a time (on a 64-CPU host 50 starting together held the GPU
 * workers' start-up to 5.8 s, issue 37), and every compile still gets its answer. */
static void test_servers_start_in_waves(void **state)
{
    (void)state;
    enum { N = 6 };
    setenv("KC_COMPILE_SPAWN_AT_ONCE", "2", 1);
    compile_pool *pool;
    compile_pool_options o = {.servers = N};
    strbuf err = STRBUF_INIT;
    if (compile_pool_start(&o, &pool, &err))
        fail_msg("%s", err.buf);
    unsetenv("KC_COMPILE_SPAWN_AT_ONCE");
    pthread_t t[N];
    struct flood f[N];
    for (int i = 0; i < N; i++) {
        f[i] = (struct flood){.pool = pool};
        pthread_create(&t[i], NULL, compile_one, &f[i]);
    }
    int answered = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        answered += f[i].ok;
    }
    int peak = compile_pool_peak_starting(pool);
    compile_pool_stop(pool); /* before the asserts: a failure leaves no server behind */
    sb_free(&err);
    assert_int_equal(answered, N);
    assert_true(peak >= 1 && peak <= 2);
}

static void verify_source(const char *problem_id, const char *src, kv_result *r)
{
    kv_options o;
    kv_options_default(&o);
    o.compile_only = 1;
    o.compile_procs = 1;
    kv_service *svc;
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id(problem_id, &p, &err) || kv_service_start(&o, &svc, &err))
        fail_msg("%s", err.buf);
    kv_result_init(r);
    if (kv_verify(svc, &p, src, r, &err))
        fail_msg("%s", err.buf);
    kv_service_stop(svc);
    problem_free(&p);
    sb_free(&err);
}

static void test_compile_success_and_report(void **state)
{
    (void)state;
    kv_result r;
    const char *answer = "Sure.\n```cuda\n#include <cuda_fp16.h>\n"
                         "extern \"C\" __global__ void relu(const float *x, float *y, long long n) {\n"
                         "  __shared__ float tile[256];\n"
                         "  long long i = blockIdx.x * 256LL + threadIdx.x;\n"
                         "  tile[threadIdx.x] = i < n ? x[i] : 0.f; __syncthreads();\n"
                         "  if (i < n) y[i] = fmaxf(tile[threadIdx.x], 0.f);\n}\n"
                         "// @launch relu<<<cdiv(B*D, 256), 256>>>(x, y, B*D);\n```\n";
    verify_source("level1/019_relu", answer, &r);
    assert_string_equal(r.verdict, "compiled");
    assert_true(r.compile_stage_ok);
    assert_true(r.compile_ms > 0);
    assert_non_null(strstr(r.kernels_json.buf, "\"name\":\"relu\""));
    assert_non_null(strstr(r.kernels_json.buf, "\"shared_bytes\":1024"));
    assert_non_null(strstr(r.kernels_json.buf, "\"registers\":"));
    assert_int_equal(kv_verdict_exit_code(r.verdict), 0);
    kv_result_free(&r);
}

static void test_compile_failures(void **state)
{
    (void)state;
    kv_result r;
    verify_source("level1/019_relu", "```cuda\nextern \"C\" __global__ void k(float *y) { y[0] = undefined_thing; }\n"
                                     "// @launch k<<<1, 1>>>(y);\n```", &r);
    assert_string_equal(r.verdict, "compile_error");
    assert_non_null(strstr(r.compile_log.buf, "undefined_thing"));
    assert_null(strstr(r.compile_log.buf, "/usr/local/cuda")); /* host paths are not shown */
    strbuf fb = STRBUF_INIT;
    kv_feedback(NULL, &r, &fb);
    assert_non_null(strstr(fb.buf, "Verdict: compile_error"));
    assert_non_null(strstr(fb.buf, "undefined_thing"));
    sb_free(&fb);
    kv_result_free(&r);
    verify_source("level1/019_relu", "```cuda\nextern \"C\" __global__ void k(float *y) { y[0] = 1; }\n"
                                     "// @launch other<<<1, 1>>>(y);\n```", &r);
    assert_string_equal(r.verdict, "launch_error");
    assert_non_null(strstr(r.message.buf, "line 2: @launch names kernel 'other'"));
    kv_result_free(&r);
    verify_source("level1/019_relu", "no code here", &r);
    assert_string_equal(r.verdict, "extract_error");
    kv_result_free(&r);
    verify_source("level1/019_relu", "```cuda\n#include <stdio.h>\nextern \"C\" __global__ void k(float *y) {}\n"
                                     "// @launch k<<<1, 1>>>(y);\n```", &r);
    assert_string_equal(r.verdict, "policy_violation");
    assert_int_equal(kv_verdict_exit_code(r.verdict), 2);
    kv_result_free(&r);
}

static void test_ptxas_report_parse(void **state)
{
    (void)state;
    strbuf json = STRBUF_INIT, clean = STRBUF_INIT;
    const char *raw = "ptxas info    : Compiling entry function 'k2' for 'sm_90'\n"
                      "ptxas info    : Function properties for k2\n"
                      "ptxas         .     8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n"
                      "ptxas info    : Used 64 registers, used 1 barriers, 4096 bytes smem, 360 bytes cmem[0]\n"
                      "candidate.cu(3): error: identifier \"q\" is undefined\n";
    ptxas_report_to_json(raw, &json);
    assert_string_equal(json.buf, "[{\"name\":\"k2\",\"stack_bytes\":8,\"spill_stores\":12,"
                                  "\"spill_loads\":16,\"registers\":64,\"shared_bytes\":4096}]");
    compile_log_sanitize(raw, "/usr/local/cuda/include", &clean);
    assert_string_equal(clean.buf, "candidate.cu(3): error: identifier \"q\" is undefined");
    sb_free(&json), sb_free(&clean);
}

/* Both formats of /proc/driver/nvidia/version's first line, as seen on real machines. */
static void test_driver_version_parse(void **state)
{
    (void)state;
    char v[32];
    assert_int_equal(driver_version_from_proc_line(
                         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  "
                         "Release Build  (nixbld@)  \n", v, sizeof(v)), 0);
    assert_string_equal(v, "580.159.04");
    assert_int_equal(driver_version_from_proc_line(
                         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
                         "01:15:15 UTC 2023\n", v, sizeof(v)), 0);
    assert_string_equal(v, "535.104.05");
    assert_int_equal(driver_version_from_proc_line("GCC version:  gcc version 15.3.0\n", v, sizeof(v)), -1);
    assert_int_equal(driver_version_from_proc_line("NVRM version: Kernel Module for x86_64\n", v, sizeof(v)), -1);
}

/* ---- compile servers killed from outside (issue 21) ---- */

/* The compile servers of this process now: children whose command is kverify. */
static int compile_server_pids(pid_t *pids, int max)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
        char path[300], comm[64];
        int pid, ppid;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fscanf(f, "%d (%63[^)]) %*c %d", &pid, comm, &ppid) == 3 && ppid == getpid() &&
            strcmp(comm, "kverify") == 0)
            pids[n++] = pid;
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* Kills every compile server after delay_ms (as a stray kill from outside would). */
struct stray_kill {
    int delay_ms;
    int killed;
};

static void *kill_servers_later(void *arg)
{
    struct stray_kill *k = arg;
    usleep((useconds_t)k->delay_ms * 1000);
    pid_t pids[8];
    int n = compile_server_pids(pids, 8);
    for (int i = 0; i < n; i++)
        k->killed += kill(pids[i], SIGKILL) == 0;
    return NULL;
}

/* A source NVRTC needs about a second for (a chain of 150 dependent sinf calls). */
static void slow_source(strbuf *src)
{
    sb_adds(src, "extern \"C\" __global__ void k(float *y)\n{\n    float a = y[threadIdx.x];\n");
    for (int i = 1; i <= 150; i++)
        sb_addf(src, "    a = a * 1.0001f + sinf(a + %d.0f);\n", i);
    sb_adds(src, "    y[threadIdx.x] = a;\n}\n");
}

/* Compiles src while a thread kills the servers after delay_ms; returns the wall time. */
static double compile_under_stray_kill(compile_pool *pool, const char *src, int delay_ms,
                                       compile_output *out, int *rc, strbuf *err)
{
    struct stray_kill k = {.delay_ms = delay_ms};
    pthread_t tid;
    compile_output_init(out);
    double t0 = now_ms();
    pthread_create(&tid, NULL, kill_servers_later, &k);
    *rc = compile_pool_compile(pool, src, "sm_90", out, err);
    double wall = now_ms() - t0;
    pthread_join(tid, NULL);
    assert_int_equal(k.killed, 1);
    return wall;
}

/* A server killed from outside, idle or in the middle of a compile, is no label: the source gets
 * another server and compiles. */
static void test_stray_kill_is_no_label(void **state)
{
    (void)state;
    compile_pool *pool;
    compile_pool_options o = {.servers = 1};
    strbuf err = STRBUF_INIT, src = STRBUF_INIT;
    if (compile_pool_start(&o, &pool, &err))
        fail_msg("compile server: %s", err.buf);
    pid_t pids[8];
    assert_int_equal(compile_server_pids(pids, 8), 1);
    assert_int_equal(kill(pids[0], SIGKILL), 0); /* idle */
    compile_output out;
    compile_with(pool, "extern \"C\" __global__ void k(float *y) { y[0] = 1.0f; }\n", &out);
    assert_true(out.ok);
    compile_output_free(&out);

    slow_source(&src);
    int rc;
    double wall = compile_under_stray_kill(pool, src.buf, 300, &out, &rc, &err);
    if (rc)
        fail_msg("compile pool: %s", err.buf);
    assert_true(wall > 300); /* the kill landed while the source was being compiled */
    if (!out.ok)
        fail_msg("a stray kill became a label: %s", out.log.buf);
    compile_output_free(&out);
    compile_pool_stop(pool);
    sb_free(&err), sb_free(&src);
}

/* Interrupted (the tool had a SIGINT): a server lost in the middle of a compile labels nothing,
 * and there is no retry. Runs last: the interrupt flag stays raised in this process. */
static void test_interrupted_kill_is_no_label(void **state)
{
    (void)state;
    compile_pool *pool;
    compile_pool_options o = {.servers = 1};
    strbuf err = STRBUF_INIT, src = STRBUF_INIT;
    if (compile_pool_start(&o, &pool, &err))
        fail_msg("compile server: %s", err.buf);
    kc_interrupt_install(0, NULL);
    raise(SIGINT);
    assert_true(kc_interrupted());
    slow_source(&src);
    compile_output out;
    int rc;
    compile_under_stray_kill(pool, src.buf, 300, &out, &rc, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err.buf, "interrupted"));
    assert_non_null(strstr(err.buf, "not labelled"));
    compile_output_free(&out);
    compile_pool_stop(pool);
    sb_free(&err), sb_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_rejects_every_vector),
        cmocka_unit_test(test_sandbox_stops_every_vector),
        cmocka_unit_test(test_unsandboxed_control_leaks),
        cmocka_unit_test(test_compile_success_and_report),
        cmocka_unit_test(test_compile_failures),
        cmocka_unit_test(test_servers_start_in_waves),
        cmocka_unit_test(test_ptxas_report_parse),
        cmocka_unit_test(test_driver_version_parse),
        cmocka_unit_test(test_stray_kill_is_no_label),
        cmocka_unit_test(test_interrupted_kill_is_no_label), /* last: raises the interrupt flag */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
