// Decoding one 32-value unit of a quantized weight row into 8-bit quants and scales, shared
// by the matvec (decode) and the tiled matmul (prefill). Needs weights.glsl and TYPE.
// kWordsBranch (the includer may define it, with ZINC_WORDS_BRANCH): rd32x8 branches on the
// alignment, as matvec_rows' SwiGLU pairs of token tiles need (without it RADV spills their
// registers on gfx1100: Q3_K and Q6_K, radv_compile_test).
#ifndef ZINC_WORDS_BRANCH
const bool kWordsBranch = false;
#endif
// Quants stored unsigned with this offset (value = q - off); Q8_0's are signed bytes.
const int kOffset = TYPE == kQ4_0 ? 8 : TYPE == kQ5_0 ? 16 : TYPE == kQ6_K ? 32 : TYPE == kQ3_K ? 4 : 0;
const bool kHasMin = TYPE == kQ4_1 || TYPE == kQ5_1 || TYPE == kQ4_K || TYPE == kQ5_K;
// Quants that are signed bytes (Q8_0, and the IQ4 levels); the rest are unsigned.
const bool kSignedQuants = TYPE == kQ8_0 || TYPE == kIQ4_NL || TYPE == kIQ4_XS;
// Q2_K: a min per 16 values, times the activation sums of each half (decodeMinsQ2K).
const bool kHalfMins = TYPE == kQ2_K;

// Byte j (0..3) of word w.
uint byteOf(uint w, uint j) { return (w >> (8u * j)) & 0xFFu; }

// K-quant 6-bit scale and min of sub-block j from the 12 scale bytes as words s0, s1, s2
// (weights.glsl's scaleMinK4, ggml's get_scale_min_k4).
void scaleMinK4Words(uint s0, uint s1, uint s2, uint j, out uint sc, out uint mn) {
    if (j < 4u) {
        sc = byteOf(s0, j) & 63u;
        mn = byteOf(s1, j) & 63u;
    } else {
        sc = (byteOf(s2, j - 4u) & 0xFu) | ((byteOf(s0, j - 4u) >> 6) << 4);
        mn = (byteOf(s2, j - 4u) >> 4) | ((byteOf(s1, j - 4u) >> 6) << 4);
    }
}

// Four IQ4 levels from the nibbles (at `shift`) of the 4 bytes of `word`, as signed bytes.
uint iq4Word(uint word, uint shift) {
    uint r = 0u;
    for (uint b = 0u; b < 4u; ++b) r |= (uint(kIq4Values[(word >> (8u * b + shift)) & 0xFu]) & 0xFFu) << (8u * b);
    return r;
}

// Q2_K's mins of unit u: -dmin * min of its first and second 16 values.
void decodeMinsQ2K(U16Buf w, uint row, uint u, out float mlo, out float mhi) {
    const uint blk = row + (u / 8u) * 84u, j = u % 8u;
    const float dmin = rdHalf(w, blk + 82u);
    mlo = -dmin * float(rd8(w, blk + 2u * j) >> 4);
    mhi = -dmin * float(rd8(w, blk + 2u * j + 1u) >> 4);
}

// Unit u (32 values) of a quantized row: 32 quants packed 4 per word, and how to scale them:
// dot = d_act * (fa * (dot of quants 0..15 - off * act sum 0..15) + fb * (16..31 ...)) + fm * s_act.
void decodeUnit(U16Buf w, UintBuf w32, uint row, uint u, out uint wq[8], out float fa, out float fb, out float fm) {
    fm = 0.0;
    if (TYPE == kQ8_0) {
        const uint blk = row + u * 34u;
        fa = fb = rdHalf(w, blk);
        rd32x8(w32, blk + 2u, wq, kWordsBranch);
    } else if (TYPE == kQ4_0 || TYPE == kQ4_1 || TYPE == kQ5_0 || TYPE == kQ5_1) {
        const bool five = TYPE == kQ5_0 || TYPE == kQ5_1;
        const uint size = TYPE == kQ4_0 ? 18u : TYPE == kQ4_1 ? 20u : TYPE == kQ5_0 ? 22u : 24u;
        const uint blk = row + u * size;
        const uint qhAt = blk + (kHasMin ? 4u : 2u);
        const uint qs = qhAt + (five ? 4u : 0u);
        const uint qh = five ? rd32(w, qhAt) : 0u;
        for (uint i = 0u; i < 4u; ++i) {
            const uint word = rd32(w, qs + 4u * i);
            wq[i] = word & 0x0F0F0F0Fu;
            wq[i + 4u] = (word >> 4) & 0x0F0F0F0Fu;
            if (five) {
                wq[i] |= spreadBits4((qh >> (4u * i)) & 0xFu);
                wq[i + 4u] |= spreadBits4((qh >> (16u + 4u * i)) & 0xFu);
            }
        }
        fa = fb = rdHalf(w, blk);
        if (kHasMin) fm = rdHalf(w, blk + 2u);
    } else if (TYPE == kQ4_K || TYPE == kQ5_K) {
        // 4-byte aligned blocks: d and dmin, then 12 bytes of 6-bit scales and mins.
        const uint b = u / 8u, j = u % 8u, c = j / 2u;
        const uint blk = (row + b * (TYPE == kQ4_K ? 144u : 176u)) / 4u;
        const vec2 dm = unpackHalf2x16(w32.v[blk]);
        uint sc, mn;
        scaleMinK4Words(w32.v[blk + 1u], w32.v[blk + 2u], w32.v[blk + 3u], j, sc, mn);
        const uint qs = blk + (TYPE == kQ4_K ? 4u : 12u) + 8u * c;
        for (uint i = 0u; i < 8u; ++i) {
            wq[i] = (w32.v[qs + i] >> (4u * (j & 1u))) & 0x0F0F0F0Fu;
            if (TYPE == kQ5_K) wq[i] |= ((w32.v[blk + 4u + i] >> j) & 0x01010101u) << 4;
        }
        fa = fb = dm.x * float(sc);
        fm = -dm.y * float(mn);
    } else if (TYPE == kQ2_K) {
        // Unit j of a block: half n = j / 4, bits 2 (j % 4) of qs[32n + l]; scales 2j, 2j + 1.
        const uint blk = row + (u / 8u) * 84u, j = u % 8u;
        uint words[8];
        rd32x8(w32, blk + 16u + 32u * (j / 4u), words, kWordsBranch);
        for (uint i = 0u; i < 8u; ++i) wq[i] = (words[i] >> (2u * (j % 4u))) & 0x03030303u;
        const float d = rdHalf(w, blk + 80u);
        fa = d * float(rd8(w, blk + 2u * j) & 0xFu);
        fb = d * float(rd8(w, blk + 2u * j + 1u) & 0xFu);
    } else if (TYPE == kQ3_K) {
        // As Q2_K, plus bit j of hmask[l] as bit 2 (value = q - 4 when that bit is clear).
        const uint blk = row + (u / 8u) * 110u, j = u % 8u;
        uint lows[8], highs[8];
        rd32x8(w32, blk + 32u + 32u * (j / 4u), lows, kWordsBranch);
        rd32x8(w32, blk, highs, kWordsBranch);
        for (uint i = 0u; i < 8u; ++i)
            wq[i] = ((lows[i] >> (2u * (j % 4u))) & 0x03030303u) | (((highs[i] >> j) & 0x01010101u) << 2);
        const float d = rdHalf(w, blk + 108u);
        fa = d * float(scaleQ3K(w, blk + 96u, 2u * j));
        fb = d * float(scaleQ3K(w, blk + 96u, 2u * j + 1u));
    } else if (TYPE == kIQ4_NL || TYPE == kIQ4_XS) {
        const bool xs = TYPE == kIQ4_XS;
        const uint blk = xs ? row + (u / 8u) * 136u : row + u * 18u;
        const uint qs = xs ? blk + 8u + 16u * (u % 8u) : blk + 2u;
        for (uint i = 0u; i < 4u; ++i) {
            const uint word = rd32(w, qs + 4u * i);
            wq[i] = iq4Word(word, 0u);
            wq[i + 4u] = iq4Word(word, 4u);
        }
        fa = fb = xs ? rdHalf(w, blk) * float(scaleIQ4XS(w, blk, u % 8u)) : rdHalf(w, blk);
    } else {  // Q6_K: 210-byte blocks, 2-byte aligned
        const uint b = u / 8u, g = u % 8u, h = g / 4u, kq = g % 4u;
        const uint blk = row + b * 210u;
        const uint ql = blk + 64u * h + 32u * (kq & 1u);
        const uint qh = blk + 128u + 32u * h;
        uint los[8], his[8];
        rd32x8(w32, ql, los, kWordsBranch);
        rd32x8(w32, qh, his, kWordsBranch);
        for (uint i = 0u; i < 8u; ++i)
            wq[i] = ((los[i] >> (4u * (kq >> 1))) & 0x0F0F0F0Fu) | (((his[i] >> (2u * kq)) & 0x03030303u) << 4);
        const float d = rdHalf(w, blk + 208u);
        const uint sc = rd16(w, blk + 192u + 8u * h + 2u * kq);
        fa = d * float(bitfieldExtract(int(sc), 0, 8));
        fb = d * float(bitfieldExtract(int(sc), 8, 8));
    }
}

