/* sandbox: namespaces + chroot + seccomp confinement of the compile server, whose root
 * holds only /tmp and a read-only copy of the allowed headers' tree (see sandbox.h). */
#include "verify/service/sandbox.h"
#include "common/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *cuda_include_dir(void)
{
    static char buf[4096];
    const char *cuda = getenv("CUDA");
    snprintf(buf, sizeof(buf), "%s/include", cuda && *cuda ? cuda : "/usr/local/cuda");
    return buf;
}

static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int enter_namespaces(strbuf *err)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    if (uid != 0)
        flags |= CLONE_NEWUSER;
    if (unshare(flags) != 0)
        return kc_fail(err, "sandbox: unshare failed: %s (needs root or unprivileged user "
                            "namespaces)", strerror(errno));
    if (uid != 0) {
        char map[64];
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
        if (write_proc("/proc/self/setgroups", "deny") || write_proc("/proc/self/uid_map", map))
            return kc_fail(err, "sandbox: cannot map the user namespace: %s", strerror(errno));
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
        if (write_proc("/proc/self/gid_map", map))
            return kc_fail(err, "sandbox: cannot map the group namespace: %s", strerror(errno));
    }
    return 0;
}

/* Creates every missing directory of path (relative to base) up to its last slash. */
static int make_parents(const char *base, const char *path)
{
    char dir[4096];
    for (const char *slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
        if (snprintf(dir, sizeof(dir), "%s/%.*s", base, (int)(slash - path), path) >=
            (int)sizeof(dir))
            return -1;
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

static int write_tree(const char *dir, const header_tree *t, strbuf *err)
{
    char path[4096];
    for (int i = 0; i < t->n; i++) {
        const header_file *f = &t->files[i];
        if (snprintf(path, sizeof(path), "%s/%s", dir, f->path) >= (int)sizeof(path) ||
            make_parents(dir, f->path) != 0)
            return kc_fail(err, "sandbox: cannot create the directory of %s: %s", f->path,
                           strerror(errno));
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        ssize_t n = fd < 0 ? -1 : write(fd, f->text.buf ? f->text.buf : "", f->text.len);
        if (fd >= 0)
            close(fd);
        if (n != (ssize_t)f->text.len)
            return kc_fail(err, "sandbox: cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

static int build_root(const char *root, const header_tree *headers, strbuf *err)
{
    char path[4096];
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return kc_fail(err, "sandbox: cannot make mounts private: %s", strerror(errno));
    if (mount("kc-sandbox", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=512m,mode=0755") != 0)
        return kc_fail(err, "sandbox: cannot mount a tmpfs root: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s/cuda", root);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/tmp", root);
    if (mkdir(path, 01777) != 0 || chmod(path, 01777) != 0)
        return kc_fail(err, "sandbox: cannot create /tmp: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s%s", root, SANDBOX_INCLUDE_DIR);
    if (mkdir(path, 0755) != 0)
        return kc_fail(err, "sandbox: cannot create %s: %s", path, strerror(errno));
    if (write_tree(path, headers, err))
        return -1;
    snprintf(path, sizeof(path), "%s/cuda", root);
    if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0 ||
        mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_REC,
              NULL) != 0)
        return kc_fail(err, "sandbox: cannot make /cuda read-only: %s", strerror(errno));
    if (chdir(root) != 0 || chroot(root) != 0 || chdir("/") != 0)
        return kc_fail(err, "sandbox: chroot failed: %s", strerror(errno));
    return 0;
}

static void close_other_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        return;
    }
    int keep = dirfd(d);
    int fds[1024], n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 1024) {
        int fd = atoi(de->d_name);
        if (fd > 2 && fd != keep)
            fds[n++] = fd;
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

static int drop_privileges(strbuf *err)
{
    if (getuid() != 0)
        return 0;
    /* In a user namespace we are uid 0 of the namespace; only a real root can become nobody. */
    if (setgroups(0, NULL) != 0 && errno != EPERM)
        return kc_fail(err, "sandbox: setgroups failed: %s", strerror(errno));
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) {
        if (errno == EINVAL) /* no mapping for nobody inside a user namespace */
            return 0;
        return kc_fail(err, "sandbox: cannot drop to nobody: %s", strerror(errno));
    }
    return 0;
}

/* AddressSanitizer reserves terabytes of shadow address space: an address-space
 * limit would kill an instrumented build (the test build) at its first big mmap. */
#if defined(__SANITIZE_ADDRESS__)
#define ADDRESS_SPACE_LIMIT_WORKS 0
#else
#define ADDRESS_SPACE_LIMIT_WORKS 1
#endif

static int set_limits(const sandbox_limits *l, strbuf *err)
{
    struct rlimit as = {(rlim_t)l->address_space_bytes, (rlim_t)l->address_space_bytes};
    struct rlimit fsize = {(rlim_t)l->file_size_bytes, (rlim_t)l->file_size_bytes};
    struct rlimit zero = {0, 0};
    struct rlimit files = {64, 64};
    if ((ADDRESS_SPACE_LIMIT_WORKS && l->address_space_bytes > 0 && setrlimit(RLIMIT_AS, &as) != 0) ||
        (l->file_size_bytes > 0 && setrlimit(RLIMIT_FSIZE, &fsize) != 0) ||
        setrlimit(RLIMIT_CORE, &zero) != 0 || setrlimit(RLIMIT_NOFILE, &files) != 0)
        return kc_fail(err, "sandbox: setrlimit failed: %s", strerror(errno));
    return 0;
}

#define DENY(nr)                                                                                   \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                               \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

static int install_seccomp(strbuf *err)
{
#if defined(__x86_64__)
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        DENY(__NR_execve), DENY(__NR_execveat), DENY(__NR_socket), DENY(__NR_connect),
        DENY(__NR_ptrace), DENY(__NR_process_vm_readv), DENY(__NR_process_vm_writev),
        DENY(__NR_mount), DENY(__NR_umount2), DENY(__NR_chroot), DENY(__NR_unshare),
        DENY(__NR_setns), DENY(__NR_bpf), DENY(__NR_keyctl), DENY(__NR_pivot_root),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
                              .filter = filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return kc_fail(err, "sandbox: seccomp filter refused: %s", strerror(errno));
#else
    (void)err;
#endif
    return 0;
}

int sandbox_enter(const header_tree *headers, const sandbox_limits *limits, strbuf *err)
{
    char root[256];
    snprintf(root, sizeof(root), "/tmp/kc-sandbox-%u", (unsigned)geteuid());
    if (mkdir(root, 0700) != 0 && errno != EEXIST)
        return kc_fail(err, "sandbox: cannot create %s: %s", root, strerror(errno));
    if (enter_namespaces(err) || build_root(root, headers, err))
        return -1;
    close_other_fds();
    if (drop_privileges(err) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        set_limits(limits, err) || install_seccomp(err))
        return err && err->len ? -1 : kc_fail(err, "sandbox: no_new_privs refused");
    return 0;
}
