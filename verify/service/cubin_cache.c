/* cubin_cache: reference cubins kept on disk across runs (see cubin_cache.h). An entry is the
 * line "kc-cubin 1 KEY LENGTH SHA256\n" and the cubin's bytes. */
#include "verify/service/cubin_cache.h"
#include "common/error.h"
#include "common/fsutil.h"
#include "verify/service/nvrtc_compile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_MAGIC "kc-cubin 1"
#define ENTRY_HEADER_MAX 200

struct cubin_cache {
    strbuf dir;         /* empty when off */
    char nvrtc[32];     /* this process's NVRTC version, part of every key */
    pthread_mutex_t lock;
    int dir_ready;      /* the directory was made (or found) */
    int store_failed;   /* a store failed, warned once: nothing more is stored */
};

/* $KC_CUBIN_CACHE ("off": none), else $XDG_CACHE_HOME/kcorpus/cubins, else
 * $HOME/.cache/kcorpus/cubins; empty when none applies. */
static void cache_dir_from_env(strbuf *dir)
{
    const char *env = getenv("KC_CUBIN_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    sb_reset(dir);
    if (env && *env) {
        if (strcmp(env, "off") != 0)
            sb_adds(dir, env);
    } else if (xdg && xdg[0] == '/') { /* the XDG spec: a relative path is to be ignored */
        sb_addf(dir, "%s/kcorpus/cubins", xdg);
    } else if (home && *home) {
        sb_addf(dir, "%s/.cache/kcorpus/cubins", home);
    }
}

cubin_cache *cubin_cache_open(void)
{
    cubin_cache *c = xcalloc(1, sizeof(*c));
    sb_init(&c->dir);
    cache_dir_from_env(&c->dir);
    nvrtc_version_string(c->nvrtc, sizeof(c->nvrtc));
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void cubin_cache_close(cubin_cache *c)
{
    if (!c)
        return;
    sb_free(&c->dir);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

const char *cubin_cache_dir(const cubin_cache *c) { return c->dir.len ? c->dir.buf : NULL; }

int cubin_cache_writable(cubin_cache *c)
{
    pthread_mutex_lock(&c->lock);
    int ok = c->dir.len && !c->store_failed;
    pthread_mutex_unlock(&c->lock);
    return ok;
}

void cubin_cache_key(const char *source, const char *arch, const char *nvrtc_version,
                     const char *options, char *out)
{
    sha256_stream *h = sha256_begin();
    const char *parts[] = {ENTRY_MAGIC, source, arch, nvrtc_version, options};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        sha256_update(h, parts[i], strlen(parts[i]) + 1); /* each with its NUL: no part runs on */
    sha256_finish(h, out);
}

static void entry_key(const cubin_cache *c, const char *source, const char *arch, char *key)
{
    strbuf options = STRBUF_INIT;
    nvrtc_trusted_options(arch, &options);
    cubin_cache_key(source, arch, c->nvrtc, options.buf, key);
    sb_free(&options);
}

static void entry_path(const cubin_cache *c, const char *key, strbuf *out)
{
    sb_reset(out);
    sb_addf(out, "%s/%s.cubin", c->dir.buf, key);
}

int cubin_cache_entry_path(const cubin_cache *c, const char *source, const char *arch,
                           strbuf *out)
{
    if (!c->dir.len)
        return -1;
    char key[SHA256_HEX_LEN + 1];
    entry_key(c, source, arch, key);
    entry_path(c, key, out);
    return 0;
}

/* Whether the text read is a sound entry for key: its header, its length, its sha256. The cubin
 * goes to out when it is. */
static int entry_sound(const strbuf *text, const char *key, strbuf *out)
{
    size_t head = text->len < ENTRY_HEADER_MAX ? text->len : ENTRY_HEADER_MAX;
    const char *nl = memchr(text->buf, '\n', head);
    if (!nl)
        return 0;
    char magic[16], name[SHA256_HEX_LEN + 2], sha[SHA256_HEX_LEN + 2], actual[SHA256_HEX_LEN + 1];
    unsigned long long len;
    char header[ENTRY_HEADER_MAX + 1];
    snprintf(header, sizeof header, "%.*s", (int)(nl - text->buf), text->buf);
    if (sscanf(header, "kc-cubin %15s %65s %llu %65s", magic, name, &len, sha) != 4 ||
        strcmp(magic, "1") != 0 || strcmp(name, key) != 0)
        return 0;
    const char *body = nl + 1;
    size_t body_len = text->len - (size_t)(body - text->buf);
    if (len == 0 || len != body_len)
        return 0;
    sha256_hex(body, body_len, actual);
    if (strcmp(actual, sha) != 0)
        return 0;
    sb_reset(out);
    sb_add(out, body, body_len);
    return 1;
}

/* 1 a sound entry (the cubin in out), 0 none, -1 one that is damaged or cannot be read. */
static int entry_load(const cubin_cache *c, const char *key, strbuf *out)
{
    if (!c->dir.len)
        return 0;
    strbuf path = STRBUF_INIT, text = STRBUF_INIT;
    entry_path(c, key, &path);
    int rc = 0;
    if (file_exists(path.buf))
        rc = read_file(path.buf, &text, NULL) == 0 && entry_sound(&text, key, out) ? 1 : -1;
    sb_free(&path), sb_free(&text);
    return rc;
}

/* The first failure says why, once; after it nothing is stored. Called holding the lock. */
static void store_failed(cubin_cache *c, const char *why)
{
    if (c->store_failed)
        return;
    c->store_failed = 1;
    warning("the cubin cache %s cannot be used (%s): references are compiled every run "
            "(KC_CUBIN_CACHE names another directory, or off)", c->dir.buf, why);
}

/* Whether entries can be stored: the directory exists (made now on the first store). */
static int dir_ready(cubin_cache *c)
{
    pthread_mutex_lock(&c->lock);
    if (c->dir.len && !c->store_failed && !c->dir_ready) {
        strbuf err = STRBUF_INIT;
        if (mkdir_p(c->dir.buf, &err))
            store_failed(c, err.buf);
        else
            c->dir_ready = 1;
        sb_free(&err);
    }
    int ok = c->dir.len && !c->store_failed;
    pthread_mutex_unlock(&c->lock);
    return ok;
}

static void entry_store(cubin_cache *c, const char *key, const strbuf *cubin)
{
    if (!dir_ready(c))
        return;
    char sha[SHA256_HEX_LEN + 1];
    sha256_hex(cubin->buf, cubin->len, sha);
    strbuf entry = STRBUF_INIT, path = STRBUF_INIT, err = STRBUF_INIT;
    sb_addf(&entry, ENTRY_MAGIC " %s %zu %s\n", key, cubin->len, sha);
    sb_add(&entry, cubin->buf, cubin->len);
    entry_path(c, key, &path);
    if (write_file_atomic(path.buf, entry.buf, entry.len, &err)) {
        pthread_mutex_lock(&c->lock);
        store_failed(c, err.buf);
        pthread_mutex_unlock(&c->lock);
    }
    sb_free(&entry), sb_free(&path), sb_free(&err);
}

int cubin_cache_trusted(cubin_cache *c, const char *source, const char *arch, strbuf *cubin,
                        enum cubin_origin *origin, strbuf *err)
{
    char key[SHA256_HEX_LEN + 1];
    entry_key(c, source, arch, key);
    int found = entry_load(c, key, cubin);
    if (origin)
        *origin = found > 0 ? CUBIN_CACHED : found < 0 ? CUBIN_RECOMPILED : CUBIN_COMPILED;
    if (found > 0)
        return 0;
    if (nvrtc_compile_trusted(source, arch, cubin, err))
        return -1;
    entry_store(c, key, cubin);
    return 0;
}
