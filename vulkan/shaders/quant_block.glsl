// One workgroup's 256 activation values quantized into the 8-bit formats the cpu tier multiplies
// quantized weights with (model/quant/quantize_activations.cpp), with its rounding: Q8_0/Q8_1 as
// ggml's x86 AVX branch (id = 127/amax, round half to even, d stored as fp16), Q8_K as ggml's
// quantize_row_q8_K (iscale = -127/max of largest magnitude, d = 1/iscale). quantize.comp's
// quantization, and that of the kernels that quantize their own output (attention.comp QUANT).
// GPU layout of one quantized row of k values: k/4 words of packed int8 quants, then k/32
// block scales d (as float; fp16-rounded for Q8_0/Q8_1), then k/32 block sums s as float
// (Q8_1: fp16(d * sum), Q8_K: d * sum of the 32 quants).
// Needs common.glsl. Threads 0..255 hold the values (thread t: element i of the row); a larger
// workgroup's other threads call it too (for its barriers), holding none.
shared float qbVals[256];
shared float qbAbs[256];
shared uint qbIdx[256];
shared int qbQ[256];

// Thread tid's value v, element i of a row of k (inside: i < k), into out_ from word outBase;
// mode 0 Q8_0, 1 Q8_1, 2 Q8_K. Every thread of the workgroup calls it.
void quantizeBlock(UintBuf out_, uint outBase, uint k, uint tid, uint i, bool inside, float v, uint mode) {
    const bool holds = tid < 256u;
    // Largest magnitude per group (32 for Q8_0/Q8_1, 256 for Q8_K), the first one on ties.
    const uint group = mode == 2u ? 256u : 32u;
    if (holds) qbVals[tid] = v;
    // Subgroups of 32 (NVIDIA; RADV in wave32): a subgroup is one 32-value block, reduced in
    // registers, and Q8_K's eight blocks meet through shared memory; other sizes (lavapipe's 8,
    // wave64) take the tree. Both give the maximum and the lowest index holding it: the same
    // bits. The tree's eight barriers and the block sum's serial loop were most of this
    // kernel's latency, which a decode step pays four times a layer.
    const bool bySubgroup = gl_SubgroupSize == 32u;
    float amax;
    uint first;
    if (bySubgroup) {
        const float a = abs(v);
        amax = subgroupMax(a);
        first = subgroupMin(a == amax ? tid : 0xffffffffu);
        if (mode == 2u) {
            if (subgroupElect() && holds) {
                qbAbs[tid / 32u] = amax;
                qbIdx[tid / 32u] = first;
            }
            barrier();  // also publishes qbVals[]
            amax = qbAbs[0];
            first = qbIdx[0];
            for (uint c = 1u; c < 8u; ++c)
                if (qbAbs[c] > amax) {  // a later block wins only with a larger magnitude
                    amax = qbAbs[c];
                    first = qbIdx[c];
                }
        }
    } else {
        if (holds) {
            qbAbs[tid] = abs(v);
            qbIdx[tid] = tid;
        }
        barrier();
        for (uint s = group / 2u; s > 0u; s >>= 1u) {
            if (holds && (tid % group) < s) {
                const float a = qbAbs[tid], b = qbAbs[tid + s];
                if (b > a || (b == a && qbIdx[tid + s] < qbIdx[tid])) {
                    qbAbs[tid] = b;
                    qbIdx[tid] = qbIdx[tid + s];
                }
            }
            barrier();
        }
        const uint lead = holds ? tid - tid % group : 0u;
        amax = qbAbs[lead];
        first = qbIdx[lead];
    }
    int q = 0;
    float d = 0.0;
    if (mode == 2u) {
        if (amax != 0.0) {
            const float iscale = -127.0 / qbVals[first];
            q = min(127, int(roundEven(iscale * v)));
            d = 1.0 / iscale;
        }
    } else {
        const float id = amax != 0.0 ? 127.0 / amax : 0.0;
        q = clamp(int(roundEven(v * id)), -128, 127);
        d = amax / 127.0;
    }
    const int blockSum = bySubgroup ? subgroupAdd(q) : 0;  // exact: integers
    if (holds) qbQ[tid] = q;
    barrier();
    if (!inside) return;
    if (tid % 4u == 0u) {
        const uint word = (uint(qbQ[tid]) & 0xffu) | ((uint(qbQ[tid + 1u]) & 0xffu) << 8) |
                          ((uint(qbQ[tid + 2u]) & 0xffu) << 16) | ((uint(qbQ[tid + 3u]) & 0xffu) << 24);
        out_.v[outBase + i / 4u] = word;
    }
    if (tid % 32u == 0u) {
        int sum = blockSum;
        if (!bySubgroup)
            for (uint j = 0u; j < 32u; ++j) sum += qbQ[tid + j];
        const uint block = i / 32u;
        const uint nBlocks = k / 32u;
        float dStored = d, s = 0.0;
        if (mode == 0u) dStored = roundHalf(d);
        if (mode == 1u) {
            dStored = roundHalf(d);
            s = roundHalf(d * float(sum));
        }
        if (mode == 2u) s = d * float(sum);
        out_.v[outBase + k / 4u + block] = floatBitsToUint(dStored);
        out_.v[outBase + k / 4u + nBlocks + block] = floatBitsToUint(s);
    }
}
