/* cli_gpu: what the GPU subcommands (gpus, dump, racecheck) share before any GPU work: whether
 * the NVIDIA driver loads at all (the one message and exit status of a machine without one),
 * and the visible GPUs' names, asked of kverify-gpu so that kverify itself never loads libcuda. */
#include "common/error.h"
#include "verify/cli/verify_cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Whether the NVIDIA driver's libcuda.so.1 loads, tried in a child so that kverify itself never
 * loads libcuda. KC_LIBCUDA names another library to try (tests). */
static int driver_present(void)
{
    const char *name = getenv("KC_LIBCUDA");
    pid_t pid = fork();
    if (pid < 0)
        return 1; /* cannot tell: let kverify-gpu try */
    if (pid == 0)
        _exit(dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL) ? 0 : 1);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int cli_gpu_driver_check(void)
{
    if (driver_present())
        return 0;
    fprintf(stderr, "kverify: no NVIDIA driver found (libcuda.so.1 cannot be loaded): no GPU "
                    "can be listed or used here; verification without a GPU: --compile-only\n");
    return CLI_EXIT_NO_GPU;
}

/* "0: NVIDIA H100 80GB HBM3, 79.2 GiB, ..." (kverify-gpu gpus): the name. */
static int parse_gpu_line(const char *line, char *name, size_t n)
{
    const char *colon = strstr(line, ": ");
    if (!colon || colon == line)
        return -1;
    const char *start = colon + 2, *comma = strchr(start, ',');
    size_t len = comma ? (size_t)(comma - start) : strcspn(start, "\n");
    snprintf(name, n, "%.*s", (int)len, start);
    return 0;
}

int cli_gpu_names(char names[][128], int max)
{
    strbuf exe = STRBUF_INIT, cmd = STRBUF_INIT;
    kverify_gpu_exe_path(&exe);
    sb_addf(&cmd, "'%s' gpus 2>/dev/null", exe.buf);
    FILE *f = popen(cmd.buf, "r");
    int n = 0;
    char line[512];
    while (f && n < max && fgets(line, sizeof line, f))
        n += parse_gpu_line(line, names[n], 128) == 0;
    if (f)
        pclose(f);
    sb_free(&exe), sb_free(&cmd);
    return n;
}
