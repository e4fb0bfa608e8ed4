// The F16 KV cache and attention over it, as the cpu tier's ggml precision mode computes it
// (ops_attention.cpp, attention_generic.cpp; llama.cpp's flash attention with an F16 cache):
// q rounded to F16, each score a sequential fp32 dot product, online softmax, and the
// weighted sum of V kept in an F16 accumulator rounded after every position.
#include "zk_math.h"

// kv_store: K and V rows of token t, rounded to halves, at cache row (state[0] + t) % slots.
// kCache / vCache: this layer's cache, `slots` rows of kvDim halves (graph/kv_layout.h: a ring
// on sliding-window layers). A step over rows of several sequences passes `rows` (per row
// {position, first KV row of its sequence slot}; 0 otherwise): row t goes to row
// position % slots of its slot's copy of the layout. Grid: x = ceil(kvDim / 256), y = tokens.
// Workgroup 256.
ZK_KERNEL(256) void kv_store(__global const float* k, __global const float* v, __global ushort* kCache,
                             __global ushort* vCache, __global const int* state, int kvDim, int inStride, int slots,
                             __global const int* rows) {
    const int i = ZK_GROUP_X() * 256 + ZK_LID(), t = ZK_GROUP_Y();
    if (i >= kvDim) return;
    const int position = rows ? rows[2 * t] : state[0] + t;
    const long base = rows ? (long)rows[2 * t + 1] : 0;
    const long row = (base + position % slots) * kvDim;
    kCache[row + i] = (ushort)zk_f2h(k[(long)t * inStride + i]);
    vCache[row + i] = (ushort)zk_f2h(v[(long)t * inStride + i]);
}

#define ZK_ATT_WG 128
#define ZK_ATT_MAX_HEAD_DIM 256
#define ZK_ATT_GROUP 8  // query heads per workgroup, all on one kv head
#define ZK_NEG_INF (-as_float(0x7f800000u))

// How the positions [first, n) of one token split over `splits` workgroups: chunks of whole
// blocks of ZK_ATT_WG positions, at most `splits` of them; zk_att_used says how many are used
// (1 while the range fits one block). attention and attention_combine agree through these.
static inline int zk_att_chunk(int length, int splits) {
    const int even = (length + splits - 1) / splits;
    return zk_max_i(ZK_ATT_WG, (even + ZK_ATT_WG - 1) / ZK_ATT_WG * ZK_ATT_WG);
}
static inline int zk_att_used(int length, int splits) {
    const int chunk = zk_att_chunk(length, splits);
    return zk_max_i(1, (length + chunk - 1) / chunk);
}

static inline float zk_att_max(float a, float b) { return a > b ? a : b; }

// attention (decode split over the KV cache, flash-decoding): query heads of token t attend to
// cache rows [0, state[0] + t] (the last `window` of them when window > 0); position p in row
// p % slots, rows kvStride halves apart; headDim <= 256. Grid: x = nHeadKv * ceil(G / 8) with
// G = nHead / nHeadKv (a workgroup takes up to 8 query heads of one kv head, so each K and V
// row is read once for all of them), y = tokens, z = splits. Split z takes one chunk of the
// token's positions (zk_att_chunk: the chunk follows the current length read from `state`, so
// workgroups past the used ones only skip); splits == 1 writes `out`, else `partial` gets per
// (token, head, split) the chunk's max score m, its softmax sum l and its accumulator
// (headDim floats), for attention_combine. `rows` (a step over rows of several sequences; 0
// otherwise): token t is at position rows[2t] and reads its own slot's copy of the cache, from
// row rows[2t + 1]; its splits follow its own length, as they do alone.
// Within a chunk the cpu tier's recurrence, position by position, in blocks of 128 positions:
// each thread one position's score (the sequential fp32 dot product of the F16-rounded q with
// the F16 K row); the running max before each position by a parallel prefix-max scan; each
// thread the factors of its position (ms = exp(max - s) where s is a new max, else vs =
// exp(s - max)); one lane per head chains the sum (sum * ms + vs, in order); every thread
// updates its dims (lid, lid + 128) of the F16-rounded accumulator in order. So one split is
// bit-compatible with the cpu tier; several are within tolerance of it (kernels/README.md).
ZK_KERNEL(128) void attention(__global const float* q, __global const ushort* kCache, __global const ushort* vCache,
                              __global float* out, __global const int* state, __global float* partial, int nHead, int nHeadKv,
                              int headDim, int kvStride, int qStride, int outStride, float scale, int window, int preScale,
                              int slots, int splits, __global const int* rows) {
    __local float qs[ZK_ATT_GROUP * ZK_ATT_MAX_HEAD_DIM];
    __local float scan[ZK_ATT_GROUP * ZK_ATT_WG];     // scores, then their inclusive prefix max
    __local float rescale[ZK_ATT_GROUP * ZK_ATT_WG];  // ms: factor for the accumulator before position p
    __local float weight[ZK_ATT_GROUP * ZK_ATT_WG];   // vs: weight of V row p
    __local float total[ZK_ATT_GROUP];
    const int lid = ZK_LID(), t = ZK_GROUP_Y(), split = ZK_GROUP_Z();
    const int perKv = nHeadKv > 0 ? nHead / nHeadKv : 0, groupsPerKv = (perKv + ZK_ATT_GROUP - 1) / ZK_ATT_GROUP;
    const int kvHead = groupsPerKv > 0 ? ZK_GROUP_X() / groupsPerKv : 0;
    const int g0 = groupsPerKv > 0 ? (ZK_GROUP_X() - kvHead * groupsPerKv) * ZK_ATT_GROUP : 0;
    const int heads = zk_min_i(ZK_ATT_GROUP, perKv - g0), h0 = kvHead * perKv + g0;
    const int valid = groupsPerKv > 0 && kvHead < nHeadKv && headDim <= ZK_ATT_MAX_HEAD_DIM && splits > 0;
    const int n = (rows ? rows[2 * t] : state[0] + t) + 1;
    if (rows) {
        const long base = (long)rows[2 * t + 1] * kvStride;
        kCache += base;
        vCache += base;
    }
    const int first = window > 0 ? zk_max_i(0, n - window) : 0, length = n - first;
    const int chunk = zk_att_chunk(length, zk_max_i(splits, 1));
    const int live = valid && split < zk_att_used(length, splits);
    const int begin = first + split * chunk, end = live ? zk_min_i(n, begin + chunk) : begin;
    const int kvOffset = kvHead * headDim;
    for (int i = lid; live && i < heads * headDim; i += ZK_ATT_WG) {
        const int g = i / headDim, d = i - g * headDim;
        const float x = q[(long)t * qStride + (long)(h0 + g) * headDim + d];
        qs[g * ZK_ATT_MAX_HEAD_DIM + d] = zk_round_half(preScale ? x * scale : x);
    }
    float m[ZK_ATT_GROUP], acc0[ZK_ATT_GROUP], acc1[ZK_ATT_GROUP];
    float sum = 0.0f;  // lane g < heads: head g's softmax sum
#pragma unroll
    for (int g = 0; g < ZK_ATT_GROUP; ++g) m[g] = ZK_NEG_INF, acc0[g] = 0.0f, acc1[g] = 0.0f;
    const int d0 = lid, d1 = lid + ZK_ATT_WG;
    for (int p0 = begin; p0 < end; p0 += ZK_ATT_WG) {
        const int count = zk_min_i(ZK_ATT_WG, end - p0);
        const int row0 = p0 % slots;  // the block's rows, wrapping at most once (count <= slots)
        zk_barrier();                 // q is stored; the previous block's factors are read
        float s[ZK_ATT_GROUP];
#pragma unroll
        for (int g = 0; g < ZK_ATT_GROUP; ++g) s[g] = 0.0f;
        if (lid < count) {
            const int r = row0 + lid >= slots ? row0 + lid - slots : row0 + lid;
            __global const ushort* kr = kCache + (long)r * kvStride + kvOffset;
#pragma unroll 4
            for (int i = 0; i < headDim; ++i) {
                const float k = zk_h2f(kr[i]);
#pragma unroll
                for (int g = 0; g < ZK_ATT_GROUP; ++g)
                    if (g < heads) s[g] += k * qs[g * ZK_ATT_MAX_HEAD_DIM + i];
            }
        }
#pragma unroll
        for (int g = 0; g < ZK_ATT_GROUP; ++g) {
            if (g < heads) {
                s[g] = lid < count ? (preScale ? s[g] : s[g] * scale) : ZK_NEG_INF;
                scan[g * ZK_ATT_WG + lid] = s[g];
            }
        }
        // Inclusive prefix max of the block's scores (Hillis-Steele; as many steps as its
        // positions need, so a short context pays for its length).
        for (int offset = 1; offset < count; offset *= 2) {
            float x[ZK_ATT_GROUP];
            zk_barrier();
#pragma unroll
            for (int g = 0; g < ZK_ATT_GROUP; ++g)
                if (g < heads) x[g] = lid >= offset ? zk_att_max(scan[g * ZK_ATT_WG + lid], scan[g * ZK_ATT_WG + lid - offset]) : 0.0f;
            zk_barrier();
#pragma unroll
            for (int g = 0; g < ZK_ATT_GROUP; ++g)
                if (g < heads && lid >= offset) scan[g * ZK_ATT_WG + lid] = x[g];
        }
        zk_barrier();
#pragma unroll
        for (int g = 0; g < ZK_ATT_GROUP; ++g) {
            if (g < heads) {
                // The running max before this position: the last block's, or the scan's.
                const float before = lid > 0 ? zk_att_max(m[g], scan[g * ZK_ATT_WG + lid - 1]) : m[g];
                float ms = 1.0f, vs = 1.0f;
                if (s[g] > before)
                    ms = zk_expf(before - s[g]);
                else
                    vs = zk_expf(s[g] - before);
                rescale[g * ZK_ATT_WG + lid] = ms;
                weight[g * ZK_ATT_WG + lid] = vs;
                m[g] = zk_att_max(m[g], scan[g * ZK_ATT_WG + count - 1]);
            }
        }
        zk_barrier();
        if (lid < heads) {
            for (int j = 0; j < count; ++j) sum = sum * rescale[lid * ZK_ATT_WG + j] + weight[lid * ZK_ATT_WG + j];
        }
        for (int j = 0; j < count; ++j) {
            const int r = row0 + j >= slots ? row0 + j - slots : row0 + j;
            __global const ushort* vr = vCache + (long)r * kvStride + kvOffset;
            const float v0 = d0 < headDim ? zk_h2f(vr[d0]) : 0.0f, v1 = d1 < headDim ? zk_h2f(vr[d1]) : 0.0f;
#pragma unroll
            for (int g = 0; g < ZK_ATT_GROUP; ++g) {
                if (g < heads) {
                    const float ms = rescale[g * ZK_ATT_WG + j], vs = weight[g * ZK_ATT_WG + j];
                    if (ms != 1.0f) acc0[g] = zk_round_half(acc0[g] * ms), acc1[g] = zk_round_half(acc1[g] * ms);
                    acc0[g] = zk_round_half(acc0[g] + v0 * vs);
                    acc1[g] = zk_round_half(acc1[g] + v1 * vs);
                }
            }
        }
    }
    if (live && lid < heads) total[lid] = sum;
    zk_barrier();
#pragma unroll
    for (int g = 0; g < ZK_ATT_GROUP; ++g) {
        if (!live || g >= heads) break;
        const int h = h0 + g;
        const float all = total[g];
        if (splits == 1) {
            const float inv = all > 0.0f ? 1.0f / all : 0.0f;
            __global float* o = out + (long)t * outStride + (long)h * headDim;
            if (d0 < headDim) o[d0] = acc0[g] * inv;
            if (d1 < headDim) o[d1] = acc1[g] * inv;
        } else {
            __global float* pp = partial + (((long)t * nHead + h) * splits + split) * (headDim + 2);
            if (lid == 0) pp[0] = m[g], pp[1] = all;
            if (d0 < headDim) pp[2 + d0] = acc0[g];
            if (d1 < headDim) pp[2 + d1] = acc1[g];
        }
    }
}

// attention_combine: out = sum over the used splits of exp(m_s - M) * acc_s / sum of
// exp(m_s - M) * l_s (M the largest m_s), for each head h of token t; splits, window and state
// as given to attention (rows too: row t's length from rows[2t]). Grid: x = nHead, y = tokens.
// Workgroup 128 (dims lid, lid + 128).
ZK_KERNEL(128) void attention_combine(__global const float* partial, __global float* out, __global const int* state, int nHead,
                                      int headDim, int outStride, int window, int splits, __global const int* rows) {
    __local float weight[32];  // up to 32 splits (kernels::kAttentionMaxSplits)
    const int lid = ZK_LID(), h = ZK_GROUP_X(), t = ZK_GROUP_Y();
    const int n = (rows ? rows[2 * t] : state[0] + t) + 1;
    const int first = window > 0 ? zk_max_i(0, n - window) : 0;
    const int used = zk_min_i(zk_att_used(n - first, splits), 32);
    __global const float* pp = partial + ((long)t * nHead + h) * splits * (headDim + 2);
    float top = ZK_NEG_INF;
    for (int s = 0; s < used; ++s) top = zk_att_max(top, pp[s * (headDim + 2)]);
    if (lid < used) weight[lid] = zk_expf(pp[lid * (headDim + 2)] - top);
    zk_barrier();
    float sum = 0.0f, o0 = 0.0f, o1 = 0.0f;
    const int d0 = lid, d1 = lid + ZK_ATT_WG;
    for (int s = 0; s < used; ++s) {
        const float w = weight[s];
        __global const float* ps = pp + s * (headDim + 2);
        sum += ps[1] * w;
        if (d0 < headDim) o0 = zk_fma(ps[2 + d0], w, o0);
        if (d1 < headDim) o1 = zk_fma(ps[2 + d1], w, o1);
    }
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    __global float* o = out + (long)t * outStride + (long)h * headDim;
    if (h < nHead && d0 < headDim) o[d0] = o0 * inv;
    if (h < nHead && d1 < headDim) o[d1] = o1 * inv;
}
