/* gpu_probe: whether the NVIDIA driver loads (see gpu_probe.h). */
#include "verify/service/gpu_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

const char *kv_libcuda_name(void)
{
    const char *name = getenv("KC_LIBCUDA");
    return name && *name ? name : "libcuda.so.1";
}

int kv_driver_present(void)
{
    const char *name = kv_libcuda_name(); /* read before the fork */
    pid_t pid = fork();
    if (pid < 0)
        return 1; /* cannot tell: let the GPU worker try */
    if (pid == 0)
        _exit(dlopen(name, RTLD_NOW | RTLD_LOCAL) ? 0 : 1);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
