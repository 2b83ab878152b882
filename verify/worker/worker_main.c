/* kverify-gpu: the GPU worker binary. `worker --device N` serves verification
 * jobs over stdin/stdout (started by kverify/kcollect, one per GPU); `sanitize --device N`
 * runs one job's launch unit once under compute-sanitizer (verify/service/sanitizer.c); `gpus`
 * lists devices; `dump` writes inputs and reference outputs as .npy. Arguments are checked
 * before the NVIDIA driver is loaded (worker_driver.c), so --version, --help and usage errors
 * work on a machine without it; its exit statuses are those of kverify (common/cli.h). */
#include "common/cli.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/ipc.h"
#include "verify/worker/worker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: kverify-gpu COMMAND [OPTIONS]   (normally started by kverify and kcollect)\n"
    "  worker --device N     serve verification jobs on stdin, results on stdout\n"
    "  sanitize --device N   serve jobs to run once under compute-sanitizer\n"
    "  gpus [--count]        list the visible GPUs (kverify gpus)\n"
    "  dump --problem ID --out DIR [--seed S[,S..]] [--dims LIST] [--device N]\n"
    "                        inputs and reference outputs as .npy (kverify dump)\n"
    "The NVIDIA driver (libcuda.so.1, or the library KC_LIBCUDA names) is loaded when a command\n"
    "needs it; without it, gpus exits 3 and the other commands exit 4.\n";
static const kc_command top_cmd = {"kverify-gpu", NULL, usage, 0};
static const kc_command gpus_cmd = {"kverify-gpu", "gpus", usage, 0};
static const kc_command dump_cmd = {"kverify-gpu", "dump", usage, 0};
static const kc_command worker_cmd = {"kverify-gpu", "worker", usage, 0};
static const kc_command sanitize_cmd = {"kverify-gpu", "sanitize", usage, 0};

/* No driver, or no device: one line, and "0" for --count; the status of kverify gpus. */
static int cmd_gpus(int argc, char **argv)
{
    int count_only = 0, n = 0;
    const kc_option opts[] = {KC_OPT_FLAG("count", 0, &count_only), KC_OPT_END_OF_TABLE};
    kc_parse_options(&gpus_cmd, opts, argc, argv);
    strbuf err = STRBUF_INIT;
    if (wk_driver_load(&err) == 0 &&
        (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0))
        kc_fail(&err, "no CUDA device is visible");
    if (err.len) {
        if (count_only)
            printf("0\n");
        error("%s", err.buf);
        sb_free(&err);
        return KC_EXIT_KVERIFY_NO_GPU;
    }
    if (count_only) {
        printf("%d\n", n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        CUdevice d;
        char name[128];
        size_t mem = 0;
        int hmm = 0;
        cuDeviceGet(&d, i);
        cuDeviceGetName(name, sizeof(name), d);
        cuDeviceTotalMem(&mem, d);
        cuDeviceGetAttribute(&hmm, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, d);
        printf("%d: %s, %.1f GiB, kernels %s reach pageable host memory (HMM/ATS)\n", i, name,
               (double)mem / (1 << 30), hmm ? "can" : "cannot");
    }
    return 0;
}

/* A job's "job" number must be a non-negative integer: it is echoed on every message. */
static int job_number(json_t *job, json_int_t *id)
{
    json_t *j = json_object_get(job, "job");
    *id = json_is_integer(j) ? json_integer_value(j) : -1;
    return *id >= 0 ? 0 : -1;
}

/* Whether the next job starts arriving on stdin within ms (a message is never cut short). */
static int job_within(double ms)
{
    struct pollfd pfd = {.fd = 0, .events = POLLIN};
    int n;
    while ((n = poll(&pfd, 1, (int)ms)) < 0 && errno == EINTR)
        ;
    return n != 0;
}

static int serve(int device)
{
    wk_gpu g;
    strbuf err = STRBUF_INIT;
    if (wk_channel_open(&err)) {
        fprintf(stderr, "kverify-gpu: %s\n", err.buf);
        return 1;
    }
    json_t *hello = json_object();
    double t0 = now_ms();
    if (wk_gpu_open(&g, device, NULL, &err)) {
        json_object_set_new(hello, "fatal", json_string(err.buf));
        wk_channel_send(hello);
        json_decref(hello);
        sb_free(&err);
        return KC_EXIT_KVERIFY_USAGE; /* no driver, no such GPU: a system error */
    }
    /* CUPTI's first use in a process is slow: here it is part of the start-up (which kverify
     * overlaps with the old worker's end after a kill), not of a candidate stage's deadline */
    double t1 = now_ms();
    wk_cupti_end(wk_cupti_begin());
    /* what the start-up cost (the client's evidence client_ms.worker_init, issue 37) */
    json_object_set_new(hello, "start_ms", json_pack("{s:f,s:f,s:f,s:f}", "gpu_open", t1 - t0,
                                                     "cuinit", g.open_init_ms, "context",
                                                     g.open_context_ms, "cupti", now_ms() - t1));
    json_object_set_new(hello, "gpu_name", json_string(g.name));
    json_object_set_new(hello, "arch", json_string(g.arch));
    json_object_set_new(hello, "driver", json_string(g.driver));
    json_object_set_new(hello, "cuda", json_string(g.cuda));
    wk_channel_send(hello);
    json_decref(hello);
    double last_job_end = 0; /* none yet: the first job finds the GPU idle */
    for (;;) {
        ipc_msg job;
        sb_reset(&err);
        if (wk_batch_holding() && !job_within(WK_BATCH_IDLE_MS))
            wk_batch_drop_all(&g); /* idle: no batch's outputs outlive a pause */
        enum ipc_status st = ipc_recv(0, &job, -1, &err);
        json_int_t id;
        if (st != IPC_OK || job.n_blobs < 2 || job_number(job.json, &id)) {
            ipc_msg_free(&job);
            wk_batch_drop_all(&g); /* no batch's outputs left to the context's teardown */
            return st == IPC_EOF ? 0 : 1;
        }
        double recv_at = now_ms(); /* stage_ms.ipc_at, beside the client's (make bench) */
        wk_channel_set_job(id);
        wk_printf_reset();
        double warm_ms = wk_gpu_warm_up(&g, last_job_end > 0 ? now_ms() - last_job_end : WK_IDLE_MS);
        json_t *result = wk_verify_job(&g, job.json, job.blobs[0].buf ? job.blobs[0].buf : "",
                                       &job.blobs[1], job.n_blobs > 2 ? &job.blobs[2] : NULL);
        json_t *stages = json_object_get(json_object_get(result, "evidence"), "stage_ms");
        if (stages) /* before the job: make bench's table counts it apart */
            json_object_set_new(stages, "warmup_ms", json_real(warm_ms));
        json_t *printed = wk_printf_evidence();
        if (printed)
            json_object_set_new(result, "device_printf", printed);
        if (stages) /* the job read, the job begun (after the warm-up), the result's send */
            json_object_set_new(stages, "ipc_at",
                                json_pack("[f,f,f]", recv_at, recv_at + warm_ms, now_ms()));
        json_t *msg = json_pack("{s:O}", "result", result);
        wk_channel_send(msg);
        int fatal = json_is_true(json_object_get(result, "fatal"));
        json_decref(msg);
        json_decref(result);
        ipc_msg_free(&job);
        last_job_end = now_ms();
        if (fatal)
            return 2; /* a sticky CUDA error: this process cannot run more work */
    }
}

/* Expands "small,alt,default" ("alt" = every one of the problem's n_alt alt sets) into dims
 * names. */
static int expand_dims(const char *list, int n_alt, char names[][16], int max)
{
    int n = 0;
    char *copy = xstrdup(list), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "alt") == 0)
            for (int a = 0; a < n_alt && n < max; a++)
                snprintf(names[n++], 16, "alt%d", a);
        else
            snprintf(names[n++], 16, "%s", tok);
    }
    free(copy);
    return n;
}

/* One dump per (dims, seed); with several, each goes to OUT/<dims>-s<seed>/. */
static int dump_all(wk_gpu *g, const char *problem_id, int n_alt, const char *dims_list,
                    const char *seeds, const char *out, int profile_runs, strbuf *err)
{
    char names[16][16];
    int n_dims = expand_dims(dims_list, n_alt, names, 16);
    char *copy = xstrdup(seeds), *save = NULL;
    int several = n_dims > 1 || strchr(seeds, ',') != NULL, rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        unsigned long long seed = strtoull(tok, NULL, 10);
        for (int d = 0; d < n_dims && rc == 0; d++) {
            strbuf dir = STRBUF_INIT;
            if (several)
                sb_addf(&dir, "%s/%s-s%llu", out, names[d], seed);
            else
                sb_adds(&dir, out);
            rc = wk_dump(g, problem_id, seed, names[d], dir.buf, profile_runs, err);
            if (rc == 0)
                printf("dumped %s seed %llu dims %s to %s\n", problem_id, seed, names[d], dir.buf);
            sb_free(&dir);
        }
    }
    free(copy);
    return rc;
}

/* The options and the problem checked, then the GPU opened: a machine without a usable one is
 * a system error (4), as in kverify dump, which runs this. */
static int cmd_dump(int argc, char **argv)
{
    const char *problem_id = NULL, *dims = "default", *out = NULL, *seeds = "0";
    int device = 0, profile_runs = 0;
    const kc_option opts[] = {KC_OPT_STR("problem", 'p', &problem_id),
                              KC_OPT_INTEGER("profile", 0, &profile_runs, 1, 100),
                              KC_OPT_STR("seed", 's', &seeds),
                              KC_OPT_STR("seeds", 0, &seeds),
                              KC_OPT_STR("dims", 'd', &dims),
                              KC_OPT_STR("out", 'o', &out),
                              KC_OPT_INTEGER("device", 'g', &device, 0, 1023),
                              KC_OPT_END_OF_TABLE};
    kc_parse_options(&dump_cmd, opts, argc, argv);
    if (!problem_id || !out)
        kc_usage_error("dump needs --problem ID and --out DIR");
    problem p;
    strbuf err = STRBUF_INIT;
    if (problem_load_by_id(problem_id, &p, &err)) {
        error("%s", err.buf);
        sb_free(&err);
        return KC_EXIT_KVERIFY_USAGE;
    }
    int n_alt = p.n_alt, rc = KC_EXIT_OK;
    problem_free(&p);
    wk_gpu g;
    if (wk_gpu_open(&g, device, NULL, &err))
        rc = KC_EXIT_KVERIFY_USAGE;
    else if (dump_all(&g, problem_id, n_alt, dims, seeds, out, profile_runs, &err))
        rc = KC_EXIT_FAILURE;
    if (rc)
        error("%s", err.buf);
    sb_free(&err);
    return rc;
}

/* worker and sanitize: --device N, required. */
static int device_option(const kc_command *cmd, int argc, char **argv)
{
    int device = -1;
    const kc_option opts[] = {KC_OPT_INTEGER("device", 0, &device, 0, 1023), KC_OPT_END_OF_TABLE};
    kc_parse_options(cmd, opts, argc, argv);
    if (device < 0)
        kc_usage_error("%s needs --device N", cmd->name);
    return device;
}

int main(int argc, char **argv)
{
    kc_set_progname("kverify-gpu");
    kc_cli_usage_status(KC_EXIT_KVERIFY_USAGE); /* as kverify's */
    const char *cmd = kc_cli_subcommand(&top_cmd, "worker, sanitize, gpus, dump", argc, argv);
    argc--, argv++;
    if (strcmp(cmd, "gpus") == 0)
        return cmd_gpus(argc, argv);
    if (strcmp(cmd, "dump") == 0)
        return cmd_dump(argc, argv);
    if (strcmp(cmd, "worker") == 0)
        return serve(device_option(&worker_cmd, argc, argv));
    if (strcmp(cmd, "sanitize") == 0)
        return wk_sanitize_serve(device_option(&sanitize_cmd, argc, argv));
    kc_usage_error("unknown command '%s' (worker, sanitize, gpus, dump)", cmd);
}
