/* sandbox: confines the compile server before it reads untrusted source.
 * In new mount, network and IPC namespaces (and a user namespace when not
 * root) the process chroots into an empty tmpfs holding only a read-only bind
 * of the CUDA include directory (/cuda/include) and a scratch /tmp; it drops
 * to nobody when root, closes inherited descriptors, sets no_new_privs, resource
 * limits and a seccomp filter against exec, sockets and ptrace. NVRTC then
 * cannot open any host file: absolute, ../, digraph, continued or macro
 * includes and __has_include probes all see an empty file system. */
#ifndef KC_SANDBOX_H
#define KC_SANDBOX_H
#include "common/strbuf.h"

#define SANDBOX_INCLUDE_DIR "/cuda/include"

typedef struct sandbox_limits {
    long long address_space_bytes; /* RLIMIT_AS */
    long long file_size_bytes;     /* RLIMIT_FSIZE */
} sandbox_limits;

/* On success the process is confined; the headers are at SANDBOX_INCLUDE_DIR. */
int sandbox_enter(const char *host_include_dir, const sandbox_limits *limits, strbuf *err);
/* The host's CUDA include dir ($CUDA/include, default /usr/local/cuda/include). */
const char *cuda_include_dir(void);

#endif
