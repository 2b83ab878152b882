// harness.cu: the verifier's own trusted device code, compiled by NVRTC inside
// kverify-gpu at start-up (never sandboxed, never from a model): seeded input
// generation (Philox4x32-10, counter-based, so any input can be regenerated bit
// for bit), guard-band checks, order-independent checksums, and the tolerance
// comparison with its statistics.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

enum { DT_F32, DT_F16, DT_BF16, DT_F64, DT_I32, DT_I64, DT_U8, DT_BOOL };
// Same order as enum kc_dist (common/problem.h). For UNIFORM_FAN_IN the host passes the bounds
// (-1/sqrt(fan_in), +1/sqrt(fan_in)) as a, b; for BERNOULLI a = p (probability of 0), b = 1/(1-p).
enum { DIST_NONE, DIST_NORMAL, DIST_UNIFORM, DIST_RANDINT, DIST_SIGN, DIST_SIMPLEX,
       DIST_UNIFORM_FAN_IN, DIST_CONSTANT, DIST_BERNOULLI, DIST_SEGMENTS };
enum { SEG_MAX = 64 }; // documents per row for DIST_SEGMENTS: count + 1 (problem.h KC_MAX_SEGMENTS)

struct philox_out { unsigned int v[4]; };

__device__ philox_out philox4x32_10(unsigned int c0, unsigned int c1, unsigned int c2,
                                    unsigned int c3, unsigned int k0, unsigned int k1)
{
    for (int round = 0; round < 10; round++) {
        unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0, c1 = lo1, c2 = n2, c3 = lo0;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    philox_out o;
    o.v[0] = c0, o.v[1] = c1, o.v[2] = c2, o.v[3] = c3;
    return o;
}

__device__ double unit_open(unsigned int u) { return ((double)(u >> 8) + 0.5) * (1.0 / 16777216.0); }

__device__ void store(void *p, long long i, int dtype, double v, long long iv)
{
    switch (dtype) {
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F16: ((__half *)p)[i] = __double2half(v); break;
    case DT_BF16: ((__nv_bfloat16 *)p)[i] = __double2bfloat16(v); break;
    case DT_F64: ((double *)p)[i] = v; break;
    case DT_I32: ((int *)p)[i] = (int)iv; break;
    case DT_I64: ((long long *)p)[i] = iv; break;
    case DT_U8: ((unsigned char *)p)[i] = (unsigned char)iv; break;
    default: ((unsigned char *)p)[i] = (unsigned char)(iv != 0); break;
    }
}

__device__ double load(const void *p, long long i, int dtype)
{
    switch (dtype) {
    case DT_F32: return (double)((const float *)p)[i];
    case DT_F16: return (double)__half2float(((const __half *)p)[i]);
    case DT_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case DT_F64: return ((const double *)p)[i];
    case DT_I32: return (double)((const int *)p)[i];
    case DT_I64: return (double)((const long long *)p)[i];
    default: return (double)((const unsigned char *)p)[i];
    }
}

// DIST_SEGMENTS: the document id of position pos of row `row` (length L) when the row packs
// n + 1 documents of lengths DC, 2*DC, ..., n*DC and DR = L - DC*n*(n+1)/2, DC = L / (n*(n+1)/2),
// in an order drawn per row (Fisher-Yates on Philox draws keyed by the row); ids number the
// non-empty documents 0, 1, 2, ... along the row. See load_segments in common/problem.c.
__device__ long long segment_id(long long pos, long long row, long long L, int n,
                                unsigned long long seed, unsigned int tensor)
{
    long long tri = (long long)n * (n + 1) / 2, dc = L / tri, dr = L - dc * tri;
    unsigned char order[SEG_MAX];
    for (int d = 0; d <= n; d++)
        order[d] = (unsigned char)d;
    for (int d = n; d > 0; d--) {
        philox_out r = philox4x32_10((unsigned int)row, (unsigned int)(row >> 32), tensor,
                                     0x5e600000u + (unsigned int)d, (unsigned int)seed,
                                     (unsigned int)(seed >> 32));
        int e = (int)(r.v[0] % (unsigned int)(d + 1));
        unsigned char tmp = order[d];
        order[d] = order[e], order[e] = tmp;
    }
    long long end = 0, id = 0;
    for (int d = 0; d <= n; d++) {
        long long len = order[d] < n ? dc * (order[d] + 1) : dr;
        if (len == 0)
            continue;
        end += len;
        if (pos < end)
            return id;
        id++;
    }
    return id - 1; // not reached: the lengths sum to L
}

// A standard normal from two 24-bit uniforms (Box-Muller). wide: in double, for float64
// tensors; else in float, the tensor's own precision or finer, and about four times cheaper:
// the fill of a large input is bound by these transcendentals, not by memory. The uniforms
// are exact in float, and the math library's functions give the same bits on every GPU.
__device__ double standard_normal(unsigned int r0, unsigned int r1, bool wide)
{
    if (wide)
        return sqrt(-2.0 * log(unit_open(r0))) * cospi(2.0 * unit_open(r1));
    float u1 = (float)unit_open(r0), u2 = (float)unit_open(r1);
    return (double)(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
}

// The random words of a pair of elements: one Philox block (four words) serves elements 2j and
// 2j + 1, two words each, so a thread that fills both computes it once.
struct pair_draw {
    long long pair; // -1: none yet
    philox_out r;
};

// Element i's two random words: words 0-1 of its pair's block for an even i, 2-3 for an odd one.
__device__ philox_out words_of(long long i, unsigned long long seed, unsigned int tensor,
                               pair_draw *cache)
{
    long long pair = i >> 1;
    if (cache->pair != pair) {
        cache->r = philox4x32_10((unsigned int)pair, (unsigned int)(pair >> 32), tensor, 0x6b63u,
                                 (unsigned int)seed, (unsigned int)(seed >> 32));
        cache->pair = pair;
    }
    philox_out r = cache->r;
    if (i & 1)
        r.v[0] = r.v[2], r.v[1] = r.v[3];
    return r;
}

// The value element i of a tensor gets from (seed, tensor): kc_fill stores it for every i.
__device__ void draw(long long i, int dist, double a, double b, long long lo, long long hi,
                     unsigned long long seed, unsigned int tensor, bool wide, pair_draw *cache,
                     double *v, long long *iv)
{
    philox_out r = words_of(i, seed, tensor, cache);
    *v = 0.0;
    *iv = 0;
    if (dist == DIST_NORMAL || dist == DIST_SIMPLEX) {
        *v = a + b * standard_normal(r.v[0], r.v[1], wide);
    } else if (dist == DIST_UNIFORM || dist == DIST_UNIFORM_FAN_IN) {
        *v = a + (b - a) * unit_open(r.v[0]);
    } else if (dist == DIST_CONSTANT) {
        *v = a;
    } else if (dist == DIST_BERNOULLI) {
        *v = unit_open(r.v[0]) < a ? 0.0 : b;
    } else if (dist == DIST_RANDINT) {
        unsigned long long span = (unsigned long long)(hi - lo);
        unsigned long long w = ((unsigned long long)r.v[1] << 32) | r.v[0];
        *iv = lo + (long long)(span ? w % span : 0);
        *v = (double)*iv;
    } else if (dist == DIST_SIGN) {
        *v = (r.v[0] & 1u) ? 1.0 : -1.0;
        *iv = (long long)*v;
    } else if (dist == DIST_SEGMENTS && lo > 0 && hi >= 1 && hi < SEG_MAX) { // lo: L, hi: n
        *iv = segment_id(i % lo, i / lo, lo, (int)hi, seed, tensor);
        *v = (double)*iv;
    }
}

__device__ unsigned long long mix64(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__device__ int elem_size(int dtype)
{
    return dtype == DT_F64 || dtype == DT_I64 ? 8 : dtype == DT_F32 || dtype == DT_I32 ? 4
         : dtype == DT_F16 || dtype == DT_BF16 ? 2 : 1;
}

// The checksum's terms (kc_checksum): a whole 8-byte word w, and a tail byte at byte index i,
// under the worker's secret key (wk_gpu.sum_key, a kernel argument a candidate never sees). The
// reference runs on the candidate's input buffers after it, so the inputs' sums are what tells
// a candidate that rewrote its inputs (zeroed them, say, so that the reference's outputs come
// out trivial) from one that did not; without the key a finalizer is invertible, and a kernel
// could set one word so that the sum of the rewritten tensor came out unchanged. One finalizer
// of the word, its index (by a multiply) and the key; tail bytes sit in the top byte, their
// index moved apart.
__device__ unsigned long long word_term(unsigned long long w, long long i, unsigned long long key)
{
    return mix64(w ^ key ^ ((unsigned long long)i * 0xd1b54a32d192ed03ull));
}
__device__ unsigned long long byte_term(unsigned char c, long long i, unsigned long long key)
{
    return mix64(((unsigned long long)c << 56) ^ key ^
                 (((unsigned long long)i + (1ull << 62)) * 0xd1b54a32d192ed03ull) ^ 0x5851f42d4c957f2dull);
}

// Adds a thread's partial sum to *sum, a warp at a time.
__device__ void add_to_sum(unsigned long long local, unsigned long long *sum)
{
    for (int off = 16; off; off >>= 1)
        local += __shfl_xor_sync(0xffffffffu, local, off);
    if ((threadIdx.x & 31) == 0 && local)
        atomicAdd(sum, local);
}

// Value classes of a checked run (worker_check.c, problem.h problem_values), bits of `mode`:
// STRUCTURE: x' = (x - mean) * r(row) * c(col) + mean + o(row), r (piecewise) log-uniform in [1/4, 4] per
// index of the first dim, c in [1/2, 2] per index of the last dim, o(row) uniform in [-1/2, 1/2]
// times std (normal inputs); LARGE: times `large`. Only float inputs drawn from normal or
// uniform_fan_in (std: the bound) are shaped. SPIKES: secret positions set to +-spike * std;
// SPECIAL: secret positions set to special values (codes of kc_special, 4 bits each from bit 4
// on, their count in the low 4 bits of `specials`); both only for normal inputs, written by
// kc_fill_secrets after the fill. Positions, counts and scales come from (seed, tensor).
enum { FILL_STRUCTURE = 1, FILL_SPIKES = 2, FILL_LARGE = 4, FILL_SPECIAL = 8 };
enum { SECRET_POSITIONS = 16 };

struct fill_mode {
    int mode, specials;
    double large, spike;
    long long row_stride, cols; // elements per index of the first dim; extent of the last dim
};

// The key of (seed, tensor, what): each value class draws from its own stream.
__device__ unsigned long long class_key(unsigned long long seed, unsigned int tensor,
                                        unsigned int what)
{
    return mix64(seed ^ mix64((unsigned long long)tensor << 32 | what));
}

// The keys of one tensor's value classes, computed once per thread of kc_fill (not per element).
struct class_keys {
    unsigned long long row_scale, col_scale, row_offset, spike_at, spike_sign, special_at,
        special_pick;
};

__device__ class_keys keys_of(unsigned long long seed, unsigned int tensor)
{
    return {class_key(seed, tensor, 0x5c1eu), class_key(seed, tensor, 0x5c1fu),
            class_key(seed, tensor, 0x0ff5u), class_key(seed, tensor, 0x591cu),
            class_key(seed, tensor, 0x5195u), class_key(seed, tensor, 0x5becu),
            class_key(seed, tensor, 0x5bedu)};
}

// murmur3's 32-bit finalizer.
__device__ unsigned int fmix32(unsigned int h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}

// A keyed hash of a row or column index, as a uniform float in (0, 1): two 32-bit finalizers
// with the key's halves folded in between (a splitmix64 per element was a third of the fill).
__device__ float unit_of(unsigned long long key, long long index)
{
    unsigned int h = fmix32((unsigned int)index ^ (unsigned int)key);
    h = fmix32(h ^ (unsigned int)(key >> 32) ^ (unsigned int)((unsigned long long)index >> 32) * 0x9e3779b9u);
    return ((float)(h >> 8) + 0.5f) * (1.0f / 16777216.0f);
}

// 2^v for v in [lo, lo + span) drawn from u in (0, 1), without a transcendental (so every GPU
// gives the same bits): 2^floor(v) * (1 + frac(v)), a piecewise-linear log-uniform scale.
__device__ double scale_of(float u, float lo, float span)
{
    float v = lo + span * u, k = floorf(v);
    return (double)ldexpf(1.0f + (v - k), (int)k);
}

// A row's scale and offset (they hash the row), and a column's scale.
__device__ double row_scale(const class_keys &k, long long row) { return scale_of(unit_of(k.row_scale, row), -2.0f, 4.0f); }
__device__ double row_offset(const class_keys &k, long long row, int dist, double std)
{
    return dist == DIST_NORMAL ? ((double)unit_of(k.row_offset, row) - 0.5) * std : 0.0;
}
__device__ double col_scale(const class_keys &k, long long col) { return scale_of(unit_of(k.col_scale, col), -1.0f, 2.0f); }

// v after the structure (row scale r and offset o, column scale c, about the mean) and the
// magnitude class.
__device__ double shape_with(double v, double mean, double r, double o, double c, const fill_mode &m)
{
    if (m.mode & FILL_STRUCTURE)
        v = (v - mean) * r * c + mean + o;
    if (m.mode & FILL_LARGE)
        v *= m.large;
    return v;
}

// Element (row, col)'s value v after the run's structure and magnitude classes.
__device__ double shape_value(double v, long long row, long long col, int dist, double a, double b,
                              const class_keys &k, const fill_mode &m)
{
    double mean = dist == DIST_NORMAL ? a : 0.0, std = dist == DIST_NORMAL ? b : fabs(b);
    if (!(m.mode & FILL_STRUCTURE))
        return shape_with(v, mean, 1, 0, 1, m);
    return shape_with(v, mean, row_scale(k, row), row_offset(k, row, dist, std), col_scale(k, col), m);
}

__device__ bool shaped(int dtype, int dist, const fill_mode &m)
{
    return (m.mode & (FILL_STRUCTURE | FILL_LARGE)) &&
           (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16 || dtype == DT_F64) &&
           (dist == DIST_NORMAL || dist == DIST_UNIFORM_FAN_IN);
}

// i / d for 0 <= i < 2^50 and d >= 1 without a 64-bit integer division: a double quotient,
// corrected to the exact one.
__device__ long long quotient(long long i, long long d)
{
    long long q = (long long)((double)i * (1.0 / (double)d));
    while (q > 0 && q * d > i)
        q--;
    while ((q + 1) * d <= i)
        q++;
    return q;
}

// The extents the structure indexes by, never 0: elements per row, columns.
__device__ long long row_extent(const fill_mode &m, long long n) { return m.row_stride > 0 ? m.row_stride : (n > 0 ? n : 1); }
__device__ long long col_extent(const fill_mode &m) { return m.cols > 0 ? m.cols : 1; }

// One 8-byte word of a tensor, built in registers and stored (and checksummed) at once.
union word8 {
    unsigned long long u;
    double d;
    long long i64;
    float f[2];
    int i32[2];
    __half h[4];
    __nv_bfloat16 bf[4];
    unsigned char c[8];
};

// Element k of word w gets v (iv for integer types), converted as store() does.
__device__ void put(word8 *w, int k, int dtype, double v, long long iv)
{
    switch (dtype) {
    case DT_F32: w->f[k] = (float)v; break;
    case DT_F16: w->h[k] = __double2half(v); break;
    case DT_BF16: w->bf[k] = __double2bfloat16(v); break;
    case DT_F64: w->d = v; break;
    case DT_I32: w->i32[k] = (int)iv; break;
    case DT_I64: w->i64 = iv; break;
    case DT_U8: w->c[k] = (unsigned char)iv; break;
    default: w->c[k] = (unsigned char)(iv != 0); break;
    }
}

// ---- normals, four at a time ----
// Element e of a normal tensor is standard normal z(e): quad q = e / 4 draws one Philox block,
// and its two pairs of words give two Box-Muller pairs, cos and sin of each (elements 4q, 4q+1
// from words 0-1, 4q+2, 4q+3 from words 2-3). wide: in double, for float64 tensors; else in
// float, the tensor's own precision or finer: the fill of a large input is bound by these
// transcendentals and the Philox rounds, not by memory. The uniforms are exact in float.
__device__ void normal_quad(long long q, unsigned long long seed, unsigned int tensor, bool wide,
                            double z[4])
{
    philox_out r = philox4x32_10((unsigned int)q, (unsigned int)(q >> 32), tensor, 0x6b64u,
                                 (unsigned int)seed, (unsigned int)(seed >> 32));
    for (int j = 0; j < 2; j++) {
        if (wide) {
            double rad = sqrt(-2.0 * log(unit_open(r.v[2 * j]))), sn, cs;
            sincospi(2.0 * unit_open(r.v[2 * j + 1]), &sn, &cs);
            z[2 * j] = rad * cs, z[2 * j + 1] = rad * sn;
        } else {
            float rad = sqrtf(-2.0f * logf((float)unit_open(r.v[2 * j]))), sn, cs;
            sincospif(2.0f * (float)unit_open(r.v[2 * j + 1]), &sn, &cs);
            z[2 * j] = (double)(rad * cs), z[2 * j + 1] = (double)(rad * sn);
        }
    }
}

// A thread's place in the structure: element e = row * rows + rem, col = e mod cols; moved on
// by a fixed step without dividing (one division per thread, at its start).
struct place {
    long long row, rem, col;
};

__device__ place place_of(long long e, long long rows, long long cols)
{
    long long row = e / rows;
    return {row, e - row * rows, e % cols};
}

__device__ void place_advance(place *p, long long step_rows, long long step_rem, long long step_col,
                              long long rows, long long cols)
{
    p->row += step_rows, p->rem += step_rem, p->col += step_col;
    if (p->rem >= rows)
        p->rem -= rows, p->row++;
    if (p->col >= cols)
        p->col -= cols;
}

// Element k (0..3) after p: its row and column.
__device__ void place_plus(const place &p, int k, long long rows, long long cols, long long *row,
                           long long *col)
{
    long long rem = p.rem + k, c = p.col + k;
    *row = p.row;
    while (rem >= rows)
        rem -= rows, (*row)++;
    while (c >= cols)
        c -= cols;
    *col = c;
}

// A row's structure, kept while a thread's elements stay in it.
struct row_cache {
    long long row; // -1: none yet
    double scale, offset;
};

// The value of a normal element (its z given) at (row, col), shaped when shape.
__device__ double normal_value(double z, long long row, long long col, bool shape, double a,
                               double b, const class_keys &k, const fill_mode &m, row_cache *rc)
{
    double v = a + b * z;
    if (!shape)
        return v;
    if (!(m.mode & FILL_STRUCTURE))
        return shape_with(v, a, 1, 0, 1, m);
    if (rc->row != row) {
        rc->row = row;
        rc->scale = row_scale(k, row);
        rc->offset = row_offset(k, row, DIST_NORMAL, b);
    }
    return shape_with(v, a, rc->scale, rc->offset, col_scale(k, col), m);
}

// Elements 4q..4q+3 into quad-sized words (1, 2 or 4 of them by the element size), stored
// and checksummed.
__device__ unsigned long long store_quad(void *p, long long q, int dtype, const double v[4],
                                         unsigned long long key)
{
    int es = elem_size(dtype), per = 8 / es, nw = 4 / per;
    unsigned long long local = 0;
    word8 w[4];
    for (int k = 0; k < 4; k++)
        put(&w[k / per], k % per, dtype, v[k], 0);
    long long w0 = q * nw;
    unsigned long long *out = (unsigned long long *)p + w0;
    if (nw == 2 && ((unsigned long long)p & 15) == 0) {
        ((ulonglong2 *)out)[0] = make_ulonglong2(w[0].u, w[1].u);
    } else {
        for (int j = 0; j < nw; j++)
            out[j] = w[j].u;
    }
    for (int j = 0; j < nw; j++)
        local += word_term(w[j].u, w0 + j, key);
    return local;
}

// kc_fill for a float tensor of normals (dist normal, or simplex before its rows are
// normalised): a quad of elements per thread step.
__device__ void fill_normal(void *p, long long n, int dtype, int dist, double a, double b,
                            unsigned long long seed, unsigned int tensor, unsigned long long *sum,
                            const fill_mode &m, unsigned long long key)
{
    bool wide = dtype == DT_F64, shape = shaped(dtype, dist, m); // never a simplex's normals
    long long quads = n / 4, rows = row_extent(m, n), cols = col_extent(m);
    long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x, step = 4 * stride;
    class_keys keys = keys_of(seed, tensor);
    row_cache rc = {-1, 1.0, 0.0};
    place at = {0, 0, 0};
    long long step_rows = 0, step_rem = 0, step_col = 0;
    if (shape && first < quads) {
        at = place_of(4 * first, rows, cols);
        step_rows = step / rows, step_rem = step % rows, step_col = step % cols;
    }
    unsigned long long local = 0;
    for (long long q = first; q < quads; q += stride) {
        double z[4], v[4];
        normal_quad(q, seed, tensor, wide, z);
        for (int k = 0; k < 4; k++) {
            long long row = 0, col = 0;
            if (shape)
                place_plus(at, k, rows, cols, &row, &col);
            v[k] = normal_value(z[k], row, col, shape, a, b, keys, m, &rc);
        }
        local += store_quad(p, q, dtype, v, key);
        if (shape)
            place_advance(&at, step_rows, step_rem, step_col, rows, cols);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && quads * 4 < n) { // the last, partial quad
        double z[4];
        normal_quad(quads, seed, tensor, wide, z);
        for (long long e = quads * 4; e < n; e++) {
            long long row = shape ? quotient(e, rows) : 0, col = shape ? e - quotient(e, cols) * cols : 0;
            store(p, e, dtype, normal_value(z[e - quads * 4], row, col, shape, a, b, keys, m, &rc), 0);
        }
        long long es = elem_size(dtype), nbytes = n * es, words = nbytes / 8;
        for (long long w = quads * 4 * es / 8; w < words; w++)
            local += word_term(((const unsigned long long *)p)[w], w, key);
        for (long long i = words * 8; i < nbytes; i++)
            local += byte_term(((const unsigned char *)p)[i], i, key);
    }
    if (sum)
        add_to_sum(local, sum);
}

// What one thread of the generic fill keeps between its elements: the value classes' keys
// (computed once) and its last pair's random words.
struct fill_thread {
    class_keys keys;
    pair_draw pair;
};

// Element i's value: the draw, then the run's value classes.
__device__ void value_at(long long i, long long n, int dtype, int dist, double a, double b,
                         long long lo, long long hi, unsigned long long seed, unsigned int tensor,
                         const fill_mode &m, fill_thread *t, double *v, long long *iv)
{
    draw(i, dist, a, b, lo, hi, seed, tensor, dtype == DT_F64, &t->pair, v, iv);
    if (shaped(dtype, dist, m)) {
        long long rows = row_extent(m, n), cols = col_extent(m);
        *v = shape_value(*v, quotient(i, rows), i - quotient(i, cols) * cols, dist, a, b, t->keys, m);
    }
}

__device__ bool normal_quads(int dtype, int dist)
{
    return (dist == DIST_NORMAL || dist == DIST_SIMPLEX) &&
           (dtype == DT_F32 || dtype == DT_F16 || dtype == DT_BF16 || dtype == DT_F64);
}

// Stores every element's value, an 8-byte word of elements at a time (four elements a step for
// float normals: fill_normal), each word built in registers and written with one store; with
// sum, also adds the checksum of what it stored to *sum (the same value kc_checksum gives),
// saving a pass over the tensor.
extern "C" __global__ void kc_fill(void *p, long long n, int dtype, int dist, double a, double b,
                                   long long lo, long long hi, unsigned long long seed,
                                   unsigned int tensor, unsigned long long *sum, fill_mode m,
                                   unsigned long long sum_key)
{
    if (normal_quads(dtype, dist)) {
        fill_normal(p, n, dtype, dist, a, b, seed, tensor, sum, m, sum_key);
        return;
    }
    int per = 8 / elem_size(dtype);
    long long nbytes = n * elem_size(dtype), words = nbytes / 8;
    long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long local = 0;
    fill_thread t;
    t.keys = keys_of(seed, tensor);
    t.pair.pair = -1;
    for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
        word8 word;
        for (int k = 0; k < per; k++) {
            double v;
            long long iv;
            value_at(w * per + k, n, dtype, dist, a, b, lo, hi, seed, tensor, m, &t, &v, &iv);
            put(&word, k, dtype, v, iv);
        }
        ((unsigned long long *)p)[w] = word.u;
        if (sum)
            local += word_term(word.u, w, sum_key);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) { // the elements of a last, partial word
        for (long long i = words * per; i < n; i++) {
            double v;
            long long iv;
            value_at(i, n, dtype, dist, a, b, lo, hi, seed, tensor, m, &t, &v, &iv);
            store(p, i, dtype, v, iv);
        }
        if (sum)
            for (long long i = words * 8; i < nbytes; i++)
                local += byte_term(((const unsigned char *)p)[i], i, sum_key);
    }
    if (sum)
        add_to_sum(local, sum);
}

// ---- secret positions (spikes, special values) ----
// How many secret positions a class has in n elements: 8 to 24 drawn from its key (about
// SECRET_POSITIONS), a quarter of the elements (rounded up) for n <= 4 * SECRET_POSITIONS.
__device__ long long secret_count(unsigned long long key, long long n)
{
    if (n <= 4 * SECRET_POSITIONS)
        return (n + 3) / 4;
    return SECRET_POSITIONS / 2 + (long long)(mix64(key) % (SECRET_POSITIONS + 1));
}

// The j-th secret position of a class (positions may repeat).
__device__ long long secret_at(unsigned long long key, long long j, long long n)
{
    return (long long)(mix64(key ^ ((unsigned long long)(j + 1) * 0x9e3779b97f4a7c15ull)) % (unsigned long long)n);
}

__device__ double special_value(int code)
{
    switch (code) {
    case 0: return __longlong_as_double(0x7ff8000000000000ll); // NaN
    case 1: return __longlong_as_double(0x7ff0000000000000ll); // inf
    case 2: return __longlong_as_double((long long)0xfff0000000000000ull); // -inf
    default: return -0.0;
    }
}

// Sets element e to v and returns what that changed in the tensor's checksum.
__device__ unsigned long long set_element(void *p, long long n, int dtype, long long e, double v,
                                          unsigned long long key)
{
    long long es = elem_size(dtype), at = e * es, words = n * es / 8;
    unsigned long long before = 0, after = 0;
    if (at < words * 8) {
        long long w = at / 8;
        before = word_term(((const unsigned long long *)p)[w], w, key);
        store(p, e, dtype, v, 0);
        after = word_term(((const unsigned long long *)p)[w], w, key);
    } else {
        for (long long i = at; i < at + es; i++)
            before += byte_term(((const unsigned char *)p)[i], i, key);
        store(p, e, dtype, v, 0);
        for (long long i = at; i < at + es; i++)
            after += byte_term(((const unsigned char *)p)[i], i, key);
    }
    return after - before;
}

// After kc_fill of a float tensor of normals (std b): its secret spikes, then its special
// values, each at its class's secret positions, the checksum in *sum (if any) kept up to
// date. One thread: a few dozen elements.
extern "C" __global__ void kc_fill_secrets(void *p, long long n, int dtype, double b,
                                           unsigned long long seed, unsigned int tensor,
                                           unsigned long long *sum, fill_mode m,
                                           unsigned long long sum_key)
{
    if (blockIdx.x != 0 || threadIdx.x != 0 || n <= 0)
        return;
    class_keys k = keys_of(seed, tensor);
    unsigned long long change = 0;
    if (m.mode & FILL_SPIKES)
        for (long long j = 0, c = secret_count(k.spike_at, n); j < c; j++) {
            double sign = mix64(k.spike_sign ^ (unsigned long long)j) & 1 ? -1.0 : 1.0;
            change += set_element(p, n, dtype, secret_at(k.spike_at, j, n), sign * m.spike * b, sum_key);
        }
    int count = m.specials & 15;
    if ((m.mode & FILL_SPECIAL) && count)
        for (long long j = 0, c = secret_count(k.special_at, n); j < c; j++) {
            int pick = (int)(mix64(k.special_pick ^ (unsigned long long)j) % (unsigned long long)count);
            double v = special_value((m.specials >> (4 * (1 + pick))) & 15);
            change += set_element(p, n, dtype, secret_at(k.special_at, j, n), v, sum_key);
        }
    if (sum && change)
        atomicAdd(sum, change);
}

// Turns rows (along the last dim, length L) of normals into probability rows.
extern "C" __global__ void kc_simplex(void *p, long long rows, long long L, int dtype)
{
    __shared__ double red[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        long long base = row * L;
        double m = -1e300;
        for (long long j = threadIdx.x; j < L; j += blockDim.x)
            m = fmax(m, load(p, base + j, dtype));
        for (int off = 16; off; off >>= 1)
            m = fmax(m, __shfl_xor_sync(0xffffffffu, m, off));
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5] = m;
        __syncthreads();
        m = -1e300;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++)
            m = fmax(m, red[w]);
        __syncthreads();
        double s = 0.0;
        for (long long j = threadIdx.x; j < L; j += blockDim.x)
            s += exp(load(p, base + j, dtype) - m);
        for (int off = 16; off; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5] = s;
        __syncthreads();
        s = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++)
            s += red[w];
        __syncthreads();
        for (long long j = threadIdx.x; j < L; j += blockDim.x)
            store(p, base + j, dtype, exp(load(p, base + j, dtype) - m) / s, 0);
        __syncthreads();
    }
}

// Keeps the SMs busy for about `cycles` clock cycles: a GPU that was idle reaches its working
// clocks before a job's first timed execution.
// Long rows, few of them (a capacity set's 24 rows of 10^8): kc_simplex's block per row would
// leave most SMs idle, so each row is cut into `chunks` parts, a block each. kc_simplex_part
// writes each part's max and sum of exp(x - max) to part[2 * block], merged online;
// kc_simplex_apply merges its row's parts and normalises its own part.
__device__ void merge_max_sum(double *m, double *s, double m2, double s2)
{
    double mm = fmax(*m, m2);
    *s = *s * exp(*m - mm) + s2 * exp(m2 - mm);
    *m = mm;
}

__device__ void part_range(long long L, int chunks, int c, long long *from, long long *to)
{
    *from = L * c / chunks;
    *to = L * (c + 1) / chunks;
}

extern "C" __global__ void kc_simplex_part(const void *p, long long L, int dtype, int chunks,
                                           double *part)
{
    __shared__ double red_m[32], red_s[32];
    long long row = blockIdx.x / chunks, from, to;
    part_range(L, chunks, blockIdx.x % chunks, &from, &to);
    double m = -1e300, s = 0.0;
    for (long long j = from + threadIdx.x; j < to; j += blockDim.x)
        merge_max_sum(&m, &s, load(p, row * L + j, dtype), 1.0);
    for (int off = 16; off; off >>= 1)
        merge_max_sum(&m, &s, __shfl_xor_sync(0xffffffffu, m, off),
                      __shfl_xor_sync(0xffffffffu, s, off));
    if ((threadIdx.x & 31) == 0)
        red_m[threadIdx.x >> 5] = m, red_s[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); w++)
            merge_max_sum(&red_m[0], &red_s[0], red_m[w], red_s[w]);
        part[2 * blockIdx.x] = red_m[0], part[2 * blockIdx.x + 1] = red_s[0];
    }
}

extern "C" __global__ void kc_simplex_apply(void *p, long long L, int dtype, int chunks,
                                            const double *part)
{
    __shared__ double row_m, row_s;
    long long row = blockIdx.x / chunks, from, to;
    if (threadIdx.x == 0) {
        double m = -1e300, s = 0.0;
        for (int c = 0; c < chunks; c++)
            merge_max_sum(&m, &s, part[2 * (row * chunks + c)], part[2 * (row * chunks + c) + 1]);
        row_m = m, row_s = s;
    }
    __syncthreads();
    part_range(L, chunks, blockIdx.x % chunks, &from, &to);
    for (long long j = from + threadIdx.x; j < to; j += blockDim.x) {
        long long i = row * L + j;
        store(p, i, dtype, exp(load(p, i, dtype) - row_m) / row_s, 0);
    }
}

extern "C" __global__ void kc_spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
}

// The SM clock as it runs now: one thread counts `cycles` SM clock cycles and reads the global
// nanosecond timer around them; out[0] = cycles counted, out[1] = nanoseconds. The GPU picks its
// own clock (an H100 runs some minutes at 1980 MHz and others at 1995 MHz while nvidia-smi
// reports 1980 for both), and a kernel bound by the SM clock takes longer in proportion.
extern "C" __global__ void kc_clock_probe(long long cycles, unsigned long long *out)
{
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64(), c;
    do
        c = clock64();
    while (c - c0 < cycles);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = (unsigned long long)(c - c0);
    out[1] = t1 - t0;
}

// The guard bands' content: a fresh key for every run, so a kernel that writes beside a buffer
// cannot put back a value it knows in advance. Every 16-bit unit is 0xFF over a byte in
// 0xF1..0xFF, so any read of guard bytes as f16, bf16, f32 or f64 is NaN whatever its alignment
// within the unit (sign 1, exponent all ones, mantissa non-zero). One hash per 8-byte word.
// Key 0 is the far zones' content, 0xFF (also NaN in every float dtype).
__device__ unsigned long long guard_word(unsigned long long key, unsigned long long word_addr)
{
    if (key == 0) // the far zones (worker_gpu.c zone_of): the constant 0xFF
        return ~0ull;
    unsigned long long h = mix64(key ^ word_addr), out = 0;
    for (int k = 0; k < 4; k++)
        out |= (0xFF00ull | (0xF1 + ((h >> (16 * k)) & 0xFFFF) % 15)) << (16 * k);
    return out;
}

// The bytes of [p, p + nbytes) that lie in the 8-byte word w (an address / 8), as a mask of
// the word's bytes, and the whole word's guard content.
__device__ unsigned long long guard_mask(unsigned long long p, long long nbytes,
                                         unsigned long long w)
{
    unsigned long long lo = w * 8 < p ? p - w * 8 : 0, end = p + (unsigned long long)nbytes;
    unsigned long long hi = w * 8 + 8 > end ? end - w * 8 : 8, mask = 0;
    for (unsigned long long b = lo; b < hi; b++)
        mask |= 0xFFull << (8 * b);
    return mask;
}

// The 8-byte words that [p, p + nbytes) touches: the first, and how many.
__device__ unsigned long long first_word(unsigned long long p) { return p / 8; }
__device__ long long word_count(unsigned long long p, long long nbytes)
{
    return nbytes > 0 ? (long long)((p + (unsigned long long)nbytes - 1) / 8 - p / 8 + 1) : 0;
}

extern "C" __global__ void kc_guard_fill(unsigned char *p, long long nbytes, unsigned long long key)
{
    unsigned long long a = (unsigned long long)p, w0 = first_word(a);
    long long n = word_count(a, nbytes), stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned long long w = w0 + (unsigned long long)i, mask = guard_mask(a, nbytes, w);
        unsigned long long g = guard_word(key, w);
        if (mask == ~0ull) {
            *(unsigned long long *)(w * 8) = g;
            continue;
        }
        for (int b = 0; b < 8; b++)
            if ((mask >> (8 * b)) & 0xFF)
                ((unsigned char *)(w * 8))[b] = (unsigned char)(g >> (8 * b));
    }
}

// Adds the count of bytes of [p, p + nbytes) that differ from the guard content to *changed
// (the grid's x dimension strides over the words).
__device__ void count_guard_changes(const unsigned char *p, long long nbytes,
                                    unsigned long long key, unsigned long long *changed)
{
    unsigned long long a = (unsigned long long)p, w0 = first_word(a), local = 0;
    long long n = word_count(a, nbytes), stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned long long w = w0 + (unsigned long long)i, mask = guard_mask(a, nbytes, w), x;
        if (mask == ~0ull) {
            x = *(const unsigned long long *)(w * 8);
        } else {
            x = 0;
            for (int b = 0; b < 8; b++)
                if ((mask >> (8 * b)) & 0xFF)
                    x |= (unsigned long long)((const unsigned char *)(w * 8))[b] << (8 * b);
        }
        x = (x ^ guard_word(key, w)) & mask;
        for (int b = 0; b < 8; b++)
            local += ((x >> (8 * b)) & 0xFF) != 0;
    }
    if (local)
        atomicAdd(changed, local);
}

extern "C" __global__ void kc_guard_check(const unsigned char *p, long long nbytes,
                                          unsigned long long key, unsigned long long *changed)
{
    count_guard_changes(p, nbytes, key, changed);
}

// Many ranges in one launch (blockIdx.y picks the range), passed by value: the check of every
// guard band of a run after an execution and between the launches of a candidate's unit.
#define GUARD_RANGES 128 // worker.h WK_WATCH_RANGES
struct guard_range {
    unsigned long long p;
    long long n;
};
struct guard_table {
    guard_range r[GUARD_RANGES];
};

extern "C" __global__ void kc_guard_check_ranges(guard_table t, unsigned long long key,
                                                 unsigned long long *changed)
{
    count_guard_changes((const unsigned char *)t.r[blockIdx.y].p, t.r[blockIdx.y].n, key, changed);
}

// Position-dependent, order-independent checksum of a byte range (p 8-byte aligned): the sum
// of word_term over its whole words and byte_term over its tail bytes. Four words in flight
// per thread.
extern "C" __global__ void kc_checksum(const unsigned char *p, long long nbytes,
                                       unsigned long long *sum, unsigned long long sum_key)
{
    const unsigned long long *w = (const unsigned long long *)p;
    unsigned long long local = 0;
    long long words = nbytes / 8;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += 4 * stride) {
        unsigned long long v[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            v[k] = i + k * stride < words ? w[i + k * stride] : 0;
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (i + k * stride < words)
                local += word_term(v[k], i + k * stride, sum_key);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (long long i = words * 8; i < nbytes; i++)
            local += byte_term(p[i], i, sum_key);
    add_to_sum(local, sum);
}

struct cmp_stats {
    unsigned long long n_bad, nan_mismatch, max_abs_bits, max_rel_bits, worst_bits, worst_index;
    double sum_sq_diff, sum_sq_ref;
};

__device__ double violation(double a, double b, int dtype, double atol, double rtol, double *diff)
{
    *diff = 0.0;
    if (dtype >= DT_I32) {
        *diff = fabs(a - b);
        return a == b ? 0.0 : 1e300;
    }
    bool na = isnan(a), nb = isnan(b);
    if (na || nb)
        return na == nb ? 0.0 : 1e300;
    if (isinf(a) || isinf(b))
        return a == b ? 0.0 : 1e300;
    *diff = fabs(a - b);
    double allowed = atol + rtol * fabs(b);
    return allowed > 0.0 ? *diff / allowed : (*diff > 0.0 ? 1e300 : 0.0);
}

// The largest ratio num / den (den > 0) of a thread's elements, kept as the pair and divided
// once at the end: two divisions per element cost more than the loads of the elements.
struct max_ratio {
    double num, den;
};

__device__ void ratio_max(max_ratio *m, double num, double den)
{
    double lhs = num * m->den, rhs = m->num * den;
    bool larger = isinf(lhs) || isinf(rhs) ? num / den > m->num / m->den : lhs > rhs;
    if (larger)
        m->num = num, m->den = den;
}

// One element's part of kc_compare: the same classes as violation() without its division (an
// element is bad when its difference exceeds atol + rtol * |ref|; the 1e300 classes set *huge).
__device__ void compare_one(double a, double b, int dtype, double atol, double rtol,
                            unsigned long long *bad, unsigned long long *nanmis, bool *huge,
                            max_ratio *worst, max_ratio *rel, double *max_abs, double *sq,
                            double *sqr)
{
    bool na = isnan(a), nb = isnan(b);
    *nanmis += na != nb;
    if (!isnan(b) && !isinf(b))
        *sqr += b * b;
    if (dtype < DT_I32 && (na || nb)) { // NaN on both sides agrees; on one side it is huge
        if (na != nb)
            *huge = true, (*bad)++;
        return;
    }
    double d = fabs(a - b);
    if (dtype >= DT_I32 || isinf(a) || isinf(b)) {
        if (a != b)
            *huge = true, (*bad)++;
    } else {
        double allowed = atol + rtol * fabs(b);
        if (allowed > 0.0)
            ratio_max(worst, d, allowed);
        else if (d > 0.0)
            *huge = true;
        *bad += d > allowed;
    }
    if (!isnan(d) && !isinf(d)) {
        *max_abs = fmax(*max_abs, d);
        ratio_max(rel, d, fmax(fabs(b), 1e-30));
        *sq += d * d;
    }
}

extern "C" __global__ void kc_compare(const void *out, const void *ref, long long n, int dtype,
                                      double atol, double rtol, cmp_stats *st)
{
    double sq = 0.0, sqr = 0.0, max_abs = 0.0;
    max_ratio worst_r = {0.0, 1.0}, rel_r = {0.0, 1.0};
    bool huge = false;
    unsigned long long bad = 0, nanmis = 0;
    long long stride = (long long)gridDim.x * blockDim.x;
    // four elements in flight per thread: their loads first, then their statistics
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 4 * stride) {
        double av[4], bv[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            long long j = i + k * stride;
            av[k] = j < n ? load(out, j, dtype) : 0.0;
            bv[k] = j < n ? load(ref, j, dtype) : 0.0;
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (i + k * stride >= n)
                break;
            compare_one(av[k], bv[k], dtype, atol, rtol, &bad, &nanmis, &huge, &worst_r, &rel_r,
                        &max_abs, &sq, &sqr);
        }
    }
    double worst = huge ? 1e300 : worst_r.num / worst_r.den, max_rel = rel_r.num / rel_r.den;
    for (int off = 16; off; off >>= 1) {
        sq += __shfl_xor_sync(0xffffffffu, sq, off);
        sqr += __shfl_xor_sync(0xffffffffu, sqr, off);
        bad += __shfl_xor_sync(0xffffffffu, bad, off);
        nanmis += __shfl_xor_sync(0xffffffffu, nanmis, off);
        max_abs = fmax(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, off));
        max_rel = fmax(max_rel, __shfl_xor_sync(0xffffffffu, max_rel, off));
        worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, off));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&st->sum_sq_diff, sq);
        atomicAdd(&st->sum_sq_ref, sqr);
        if (bad)
            atomicAdd(&st->n_bad, bad);
        if (nanmis)
            atomicAdd(&st->nan_mismatch, nanmis);
        atomicMax(&st->max_abs_bits, (unsigned long long)__double_as_longlong(max_abs));
        atomicMax(&st->max_rel_bits, (unsigned long long)__double_as_longlong(max_rel));
        atomicMax(&st->worst_bits, (unsigned long long)__double_as_longlong(worst));
    }
}

// Second pass, run only when something failed: the smallest index whose
// violation equals the worst one.
extern "C" __global__ void kc_worst_index(const void *out, const void *ref, long long n, int dtype,
                                          double atol, double rtol, cmp_stats *st)
{
    double worst = __longlong_as_double((long long)st->worst_bits);
    if (!(worst > 0.0))
        return; /* nothing out of tolerance: no index to find */
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double d;
        if (violation(load(out, i, dtype), load(ref, i, dtype), dtype, atol, rtol, &d) == worst)
            atomicMin(&st->worst_index, (unsigned long long)i);
    }
}

// ---- Batched verification (worker_batch.c, issue 37) ----
// The reference outputs a worker keeps for a batch's later candidates are stored masked: every
// 8-byte word XORed with Philox4x32-10 of (word pair, id) under a 64-bit key, key and id drawn
// per kept run and held only in the worker's host memory, so device memory never holds a kept
// answer in the clear; a kernel that found the store by address reads noise. The checksum is
// taken of the plain bytes, which a kernel that changes the store cannot predict, so a change
// is seen when the outputs are unmasked or checked at the end of each job.
__device__ unsigned long long mask_word(unsigned long long key, unsigned long long id, long long w)
{
    philox_out r = philox4x32_10((unsigned int)(w >> 1), (unsigned int)((unsigned long long)w >> 33),
                                 (unsigned int)id, (unsigned int)(id >> 32), (unsigned int)key,
                                 (unsigned int)(key >> 32));
    return (w & 1) ? ((unsigned long long)r.v[3] << 32 | r.v[2])
                   : ((unsigned long long)r.v[1] << 32 | r.v[0]);
}

// dst = src ^ keystream over nbytes (src and dst 8-byte aligned; dst NULL: nothing stored);
// with sum, adds kc_checksum's terms of the plain bytes: src's when plain_src (masking), else
// src ^ keystream's (unmasking, or checking the store).
extern "C" __global__ void kc_mask(unsigned char *dst, const unsigned char *src, long long nbytes,
                                   unsigned long long key, unsigned long long id, int plain_src,
                                   unsigned long long *sum, unsigned long long sum_key)
{
    long long words = nbytes / 8, stride = (long long)gridDim.x * blockDim.x;
    unsigned long long local = 0;
    for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += stride) {
        unsigned long long s = ((const unsigned long long *)src)[w], v = s ^ mask_word(key, id, w);
        if (dst)
            ((unsigned long long *)dst)[w] = v;
        if (sum)
            local += word_term(plain_src ? s : v, w, sum_key);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && nbytes > words * 8) { // the tail's bytes
        unsigned long long m = mask_word(key, id, words);
        for (long long i = words * 8; i < nbytes; i++) {
            unsigned char s = src[i], v = s ^ (unsigned char)(m >> (8 * (i - words * 8)));
            if (dst)
                dst[i] = v;
            if (sum)
                local += byte_term(plain_src ? s : v, i, sum_key);
        }
    }
    if (sum)
        add_to_sum(local, sum);
}

// Leftovers between the jobs of one batch: the candidates of a batch meet the same inputs, and
// shared and local memory keep what earlier kernels left in them, so before every job of a
// batch the worker overwrites both (worker_gpu.c wk_scrub_on_chip). kc_scrub_shared writes
// every word of the block's dynamic shared memory (launched with the largest a block may have,
// several blocks per SM); kc_scrub_local writes a whole frame of SCRUB_LOCAL_WORDS words of
// local memory in every thread (launched to fill every thread slot of every SM): the same
// bytes of the local memory store that a kernel with a smaller frame uses.
extern "C" __global__ void kc_scrub_shared(int words)
{
    extern __shared__ unsigned int scrub_smem[];
    volatile unsigned int *s = scrub_smem;
    for (int i = threadIdx.x; i < words; i += blockDim.x)
        s[i] = 0xFFFFFFFFu;
}

enum { SCRUB_LOCAL_WORDS = 1024 }; // worker.h WK_SCRUB_LOCAL_BYTES / 4

extern "C" __global__ void kc_scrub_local(unsigned int *sink)
{
    volatile unsigned int frame[SCRUB_LOCAL_WORDS];
    for (int i = 0; i < SCRUB_LOCAL_WORDS; i++)
        frame[i] = 0xFFFFFFFFu;
    if (frame[(threadIdx.x * 7u) % SCRUB_LOCAL_WORDS] != 0xFFFFFFFFu) // never: keeps the frame
        *sink = 1;
}
