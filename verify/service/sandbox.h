/* sandbox: confines the compile server before it reads untrusted source.
 * In new mount, network and IPC namespaces (and a user namespace when not
 * root) the process chroots into an empty tmpfs holding only a scratch /tmp and,
 * read-only at /cuda/include, a header tree: copies of the allowed toolkit headers
 * (common/allowed_headers.h) and of the files they include, nothing else of the
 * toolkit (sandbox_headers.c). It drops to nobody when root, closes inherited
 * descriptors, sets no_new_privs, resource limits and a seccomp filter against exec,
 * sockets and ptrace. NVRTC then cannot open any host file: absolute, ../, digraph,
 * continued or macro includes and __has_include probes all see an empty file system,
 * and an include of an off-list toolkit header (one that slipped past the policy)
 * finds nothing. */
#ifndef KC_SANDBOX_H
#define KC_SANDBOX_H
#include "common/strbuf.h"

#define SANDBOX_INCLUDE_DIR "/cuda/include"

typedef struct sandbox_limits {
    long long address_space_bytes; /* RLIMIT_AS */
    long long file_size_bytes;     /* RLIMIT_FSIZE */
} sandbox_limits;

/* The sandbox's header tree: files by path relative to the toolkit include dir. */
typedef struct header_file {
    char *path; /* "cuda_fp16.h", "cccl/cuda/std/limits" */
    strbuf text;
} header_file;

typedef struct header_tree {
    int n, cap;
    header_file *files;
    long long bytes;
} header_tree;

/* Collects the allowed headers under include_dir and every file they include (sandbox_headers.c). */
int header_tree_collect(const char *include_dir, header_tree *t, strbuf *err);
void header_tree_free(header_tree *t);

/* On success the process is confined; the tree's files are at SANDBOX_INCLUDE_DIR. */
int sandbox_enter(const header_tree *headers, const sandbox_limits *limits, strbuf *err);
/* The host's CUDA include dir ($CUDA/include, default /usr/local/cuda/include). */
const char *cuda_include_dir(void);

#endif
