/* kverify-gpu: the GPU worker binary. `worker --device N` serves verification
 * jobs over stdin/stdout (started by kverify/kcollect, one per GPU); `sanitize --device N`
 * runs one job's launch unit once under compute-sanitizer (verify/service/sanitizer.c); `gpus`
 * lists devices; `dump` writes inputs and reference outputs as .npy. */
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/ipc.h"
#include "verify/worker/worker.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_gpus(int argc, char **argv)
{
    int count_only = argc > 1 && strcmp(argv[1], "--count") == 0;
    int n = 0;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
        if (count_only)
            printf("0\n");
        else
            error("no CUDA device is visible");
        return 1;
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

static int serve(int device)
{
    wk_gpu g;
    strbuf err = STRBUF_INIT;
    if (wk_channel_open(&err)) {
        fprintf(stderr, "kverify-gpu: %s\n", err.buf);
        return 1;
    }
    json_t *hello = json_object();
    if (wk_gpu_open(&g, device, NULL, &err)) {
        json_object_set_new(hello, "fatal", json_string(err.buf));
        wk_channel_send(hello);
        json_decref(hello);
        return 1;
    }
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
        enum ipc_status st = ipc_recv(0, &job, -1, &err);
        json_int_t id;
        if (st != IPC_OK || job.n_blobs < 2 || job_number(job.json, &id)) {
            ipc_msg_free(&job);
            return st == IPC_EOF ? 0 : 1;
        }
        wk_channel_set_job(id);
        wk_printf_reset();
        wk_gpu_warm_up(&g, last_job_end > 0 ? now_ms() - last_job_end : WK_IDLE_MS);
        json_t *result = wk_verify_job(&g, job.json, job.blobs[0].buf ? job.blobs[0].buf : "",
                                       job.blobs[1].buf, job.n_blobs > 2 ? job.blobs[2].buf : NULL);
        json_t *printed = wk_printf_evidence();
        if (printed)
            json_object_set_new(result, "device_printf", printed);
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

/* Expands "small,alt,default" ("alt" = every alt set) into dims names. */
static int expand_dims(const char *list, const char *problem_id, char names[][16], int max)
{
    problem p;
    strbuf err = STRBUF_INIT;
    int n_alt = 1;
    if (problem_load_by_id(problem_id, &p, &err) == 0) {
        n_alt = p.n_alt;
        problem_free(&p);
    }
    sb_free(&err);
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
static int dump_all(wk_gpu *g, const char *problem_id, const char *dims_list, const char *seeds,
                    const char *out, strbuf *err)
{
    char names[16][16];
    int n_dims = expand_dims(dims_list, problem_id, names, 16);
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
            rc = wk_dump(g, problem_id, seed, names[d], dir.buf, err);
            if (rc == 0)
                printf("dumped %s seed %llu dims %s to %s\n", problem_id, seed, names[d], dir.buf);
            sb_free(&dir);
        }
    }
    free(copy);
    return rc;
}

static int cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {{"problem", required_argument, NULL, 'p'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"seeds", required_argument, NULL, 's'},
                                         {"dims", required_argument, NULL, 'd'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"device", required_argument, NULL, 'g'},
                                         {NULL, 0, NULL, 0}};
    const char *problem_id = NULL, *dims = "default", *out = NULL, *seeds = "0";
    int device = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:s:d:o:g:", opts, NULL)) != -1) {
        switch (c) {
        case 'p': problem_id = optarg; break;
        case 's': seeds = optarg; break;
        case 'd': dims = optarg; break;
        case 'o': out = optarg; break;
        case 'g': device = atoi(optarg); break;
        default: return 4;
        }
    }
    if (!problem_id || !out)
        return error("usage: kverify dump --problem ID --seed S[,S..] [--dims default|small|altN|alt|hiddenK[,..]] "
                     "--out DIR"), 4;
    wk_gpu g;
    strbuf err = STRBUF_INIT;
    if (wk_gpu_open(&g, device, NULL, &err) || dump_all(&g, problem_id, dims, seeds, out, &err)) {
        error("%s", err.buf);
        sb_free(&err);
        return 1;
    }
    sb_free(&err);
    return 0;
}

int main(int argc, char **argv)
{
    kc_set_progname("kverify-gpu");
    if (argc >= 2 && strcmp(argv[1], "gpus") == 0)
        return cmd_gpus(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 1, argv + 1);
    if (argc >= 4 && strcmp(argv[1], "worker") == 0 && strcmp(argv[2], "--device") == 0)
        return serve(atoi(argv[3]));
    if (argc >= 4 && strcmp(argv[1], "sanitize") == 0 && strcmp(argv[2], "--device") == 0)
        return wk_sanitize_serve(atoi(argv[3]));
    fprintf(stderr, "usage: kverify-gpu worker --device N | sanitize --device N | gpus [--count] | dump ...\n"
                    "(normally started by kverify and kcollect)\n");
    return 4;
}
