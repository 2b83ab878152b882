/* driver_version: the NVIDIA kernel module's version from the first line of
 * /proc/driver/nvidia/version, which records carry next to the CUDA version. */
#include "verify/service/driver_version.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int is_version_token(const char *s, size_t len)
{
    if (len == 0 || !isdigit((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]) && s[i] != '.')
            return 0;
    return memchr(s, '.', len) != NULL;
}

/* The line reads "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  ..." or, for the
 * open modules, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...":
 * the version is the first dotted number after "Kernel Module". */
int driver_version_from_proc_line(const char *line, char *out, size_t n)
{
    const char *p = strstr(line, "Kernel Module");
    if (!p)
        return -1;
    for (p += strlen("Kernel Module"); *p;) {
        p += strspn(p, " \t\r\n");
        size_t len = strcspn(p, " \t\r\n");
        if (len == 0)
            break;
        if (is_version_token(p, len)) {
            snprintf(out, n, "%.*s", (int)len, p);
            return 0;
        }
        p += len;
    }
    return -1;
}
