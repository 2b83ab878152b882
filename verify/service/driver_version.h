/* driver_version: parsing /proc/driver/nvidia/version (see driver_version.c). */
#ifndef KC_DRIVER_VERSION_H
#define KC_DRIVER_VERSION_H
#include <stddef.h>

/* 0 and the version ("580.159.04") in out, or -1 when the line names none. */
int driver_version_from_proc_line(const char *line, char *out, size_t n);

#endif
