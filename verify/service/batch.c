/* batch: batched verification's shared rules, plain functions with no GPU (see batch.h). */
#include "verify/service/batch.h"
#include "common/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void batch_new_key(char key[BATCH_KEY_HEX + 1])
{
    unsigned char raw[BATCH_KEY_HEX / 2];
    size_t got = 0;
    while (got < sizeof(raw)) {
        ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
        if (n <= 0)
            die("cannot read the kernel's random source for a batch key");
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(key + 2 * i, 3, "%02x", raw[i]);
}

int batch_key_valid(const char *key)
{
    if (!key || strlen(key) != BATCH_KEY_HEX)
        return 0;
    for (const char *c = key; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
            return 0;
    return 1;
}

uint64_t batch_round(uint64_t bytes)
{
    if (bytes > UINT64_MAX - BATCH_ALIGN)
        return UINT64_MAX;
    return (bytes + BATCH_ALIGN - 1) / BATCH_ALIGN * BATCH_ALIGN;
}

struct run_size {
    uint64_t bytes;
    int index;
};

static int by_size(const void *a, const void *b)
{
    const struct run_size *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return x->index - y->index;
}

uint64_t batch_keep_plan(const uint64_t *bytes, int n, uint64_t budget, unsigned char *keep)
{
    if (n <= 0)
        return 0;
    struct run_size *order = xcalloc((size_t)n, sizeof(*order));
    for (int i = 0; i < n; i++) {
        order[i] = (struct run_size){batch_round(bytes[i]), i};
        keep[i] = 0;
    }
    qsort(order, (size_t)n, sizeof(*order), by_size);
    uint64_t total = 0;
    for (int k = 0; k < n; k++) {
        uint64_t b = order[k].bytes;
        if (b == 0)
            continue;
        if (b > budget || total > budget - b) /* every later run is at least as large */
            break;
        total += b;
        keep[order[k].index] = 1;
    }
    free(order);
    return total;
}

static int key_is(const char *a, const char *b)
{
    return a && b && *a && strcmp(a, b) == 0;
}

/* Whether some other waiting job belongs to the batch key. */
static int wanted(const char *key, const char *const *others, int n_others)
{
    for (int i = 0; key && *key && i < n_others; i++)
        if (key_is(others[i], key))
            return 1;
    return 0;
}

/* How good a free slot is for a job it is not the batch slot of: lower is better. */
static int free_rank(const batch_slot *s)
{
    int keyless = !s->key || !*s->key;
    return (s->started ? 0 : 2) + (keyless ? 0 : 1);
}

int batch_pick_slot(const batch_slot *slots, int n, const char *key, int passes,
                    const char *const *others, int n_others)
{
    int best = -1, any = -1;
    for (int i = 0; i < n; i++) {
        if (slots[i].busy)
            continue;
        if (key_is(key, slots[i].key))
            return i;
        if (any < 0 || free_rank(&slots[i]) < free_rank(&slots[any]))
            any = i;
        if (!wanted(slots[i].key, others, n_others) &&
            (best < 0 || free_rank(&slots[i]) < free_rank(&slots[best])))
            best = i;
    }
    if (best >= 0)
        return best;
    return passes >= BATCH_MAX_PASSES ? any : -1;
}

static int held_find(const batch_held *h, const char *key)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->keys[i], key) == 0)
            return i;
    return -1;
}

static void held_remove(batch_held *h, int i)
{
    memmove(h->keys[i], h->keys[i + 1], (size_t)(h->n - i - 1) * sizeof(h->keys[0]));
    memmove(&h->ended[i], &h->ended[i + 1], (size_t)(h->n - i - 1));
    h->n--;
}

void batch_held_add(batch_held *h, const char *key)
{
    if (!batch_key_valid(key) || held_find(h, key) >= 0)
        return;
    if (h->n == BATCH_HELD)
        held_remove(h, 0);
    snprintf(h->keys[h->n], sizeof(h->keys[0]), "%s", key);
    h->ended[h->n++] = 0;
}

void batch_held_end(batch_held *h, const char *key)
{
    int i = key ? held_find(h, key) : -1;
    if (i >= 0)
        h->ended[i] = 1;
}

json_t *batch_held_take_ended(batch_held *h)
{
    json_t *arr = json_array();
    for (int i = 0; i < h->n;) {
        if (h->ended[i]) {
            json_array_append_new(arr, json_string(h->keys[i]));
            held_remove(h, i);
        } else {
            i++;
        }
    }
    return arr;
}

void batch_held_clear(batch_held *h) { h->n = 0; }
