// Raw GGUF weight blocks (ggml/src/ggml-common.h layouts), read through 16-bit loads.
// Type ids are ggml's.
const uint kF32 = 0u, kF16 = 1u, kQ4_0 = 2u, kQ4_1 = 3u, kQ5_0 = 6u, kQ5_1 = 7u, kQ8_0 = 8u;
const uint kQ4_K = 12u, kQ5_K = 13u, kQ6_K = 14u, kBF16 = 30u;
const uint kQ2_K = 10u, kQ3_K = 11u, kIQ4_NL = 20u, kIQ4_XS = 23u;
// The non-linear levels of IQ4_NL / IQ4_XS (ggml-common.h kvalues_iq4nl).
const int kIq4Values[16] = int[16](-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

// Q3_K's 6-bit scale si (0..15) from its 12 packed bytes at `scales`, minus 32 (ggml's kmask
// unpacking): low 4 bits from byte si (si < 8) or the high nibble of byte si - 8, top 2 bits
// from byte 8 + si % 4 at bit 2 * (si / 4).
int scaleQ3K(U16Buf w, uint scales, uint si) {
    const uint lo = si < 8u ? rd8(w, scales + si) & 0xFu : rd8(w, scales + si - 8u) >> 4;
    const uint hi = (rd8(w, scales + 8u + si % 4u) >> (2u * (si / 4u))) & 3u;
    return int(lo | (hi << 4)) - 32;
}

// IQ4_XS's 6-bit scale of sub-block ib (0..7), minus 32.
int scaleIQ4XS(U16Buf w, uint blk, uint ib) {
    const uint ls = ((rd8(w, blk + 4u + ib / 2u) >> (4u * (ib % 2u))) & 0xFu) | (((rd16(w, blk + 2u) >> (2u * ib)) & 3u) << 4);
    return int(ls) - 32;
}

// Four 1-bit values (bits 0..3 of x) -> bit 4 of each byte.
uint spreadBits4(uint x) {
    return ((x & 1u) | ((x & 2u) << 7) | ((x & 4u) << 14) | ((x & 8u) << 21)) << 4;
}

// K-quant 6-bit scale and min of sub-block j (ggml's get_scale_min_k4).
void scaleMinK4(U16Buf w, uint scales, uint j, out float sc, out float mn) {
    if (j < 4u) {
        sc = float(rd8(w, scales + j) & 63u);
        mn = float(rd8(w, scales + j + 4u) & 63u);
    } else {
        sc = float((rd8(w, scales + j + 4u) & 0xFu) | ((rd8(w, scales + j - 4u) >> 6) << 4));
        mn = float((rd8(w, scales + j + 4u) >> 4) | ((rd8(w, scales + j) >> 6) << 4));
    }
}

// One element of a row (embedding lookup), dequantized as model/quant/dequantize.cpp does.
float dequantElement(uint type, U16Buf w, uint row, uint i) {
    if (type == kF32) return uintBitsToFloat(rd32(w, row + 4u * i));
    if (type == kF16) return halfBits(rd16(w, row + 2u * i));
    if (type == kBF16) return uintBitsToFloat(rd16(w, row + 2u * i) << 16);
    const uint j = i % 32u;
    if (type == kQ8_0) {
        const uint blk = row + (i / 32u) * 34u;
        return rdHalf(w, blk) * float(bitfieldExtract(int(rd8(w, blk + 2u + j)), 0, 8));
    }
    if (type == kQ4_0 || type == kQ4_1 || type == kQ5_0 || type == kQ5_1) {
        const uint size = type == kQ4_0 ? 18u : type == kQ4_1 ? 20u : type == kQ5_0 ? 22u : 24u;
        const uint blk = row + (i / 32u) * size;
        const bool hasMin = type == kQ4_1 || type == kQ5_1;
        const bool five = type == kQ5_0 || type == kQ5_1;
        const uint qs = blk + (hasMin ? 4u : 2u) + (five ? 4u : 0u);
        uint q = j < 16u ? rd8(w, qs + j) & 0xFu : rd8(w, qs + j - 16u) >> 4;
        if (five) q |= ((rd32(w, blk + (hasMin ? 4u : 2u)) >> j) & 1u) << 4;
        const float d = rdHalf(w, blk);
        if (hasMin) return float(q) * d + rdHalf(w, blk + 2u);
        return float(int(q) - (five ? 16 : 8)) * d;
    }
    if (type == kIQ4_NL) {
        const uint blk = row + (i / 32u) * 18u;
        const uint q = j < 16u ? rd8(w, blk + 2u + j) & 0xFu : rd8(w, blk + 2u + j - 16u) >> 4;
        return rdHalf(w, blk) * float(kIq4Values[q]);
    }
    const uint blkIndex = i / 256u, e = i % 256u;
    if (type == kQ2_K || type == kQ3_K) {
        // Half n of 128, shift group g (bits 2g..2g+1), element l of 32; scale index 8n + 2g + l / 16.
        const uint n = e / 128u, g = (e % 128u) / 32u, l = e % 32u, si = 8u * n + 2u * g + l / 16u;
        if (type == kQ2_K) {
            const uint blk = row + blkIndex * 84u;
            const uint q = (rd8(w, blk + 16u + 32u * n + l) >> (2u * g)) & 3u;
            const uint sc = rd8(w, blk + si);
            return rdHalf(w, blk + 80u) * float(sc & 0xFu) * float(q) - rdHalf(w, blk + 82u) * float(sc >> 4);
        }
        const uint blk = row + blkIndex * 110u;
        const int q = int((rd8(w, blk + 32u + 32u * n + l) >> (2u * g)) & 3u) - (((rd8(w, blk + l) >> (4u * n + g)) & 1u) != 0u ? 0 : 4);
        return rdHalf(w, blk + 108u) * float(scaleQ3K(w, blk + 96u, si)) * float(q);
    }
    if (type == kIQ4_XS) {
        const uint blk = row + blkIndex * 136u;
        const uint ib = e / 32u, l = e % 32u;
        const uint qs = blk + 8u + 16u * ib;
        const uint q = l < 16u ? rd8(w, qs + l) & 0xFu : rd8(w, qs + l - 16u) >> 4;
        return rdHalf(w, blk) * float(scaleIQ4XS(w, blk, ib)) * float(kIq4Values[q]);
    }
    if (type == kQ4_K || type == kQ5_K) {
        const uint blk = row + blkIndex * (type == kQ4_K ? 144u : 176u);
        const uint sub = e / 32u, l = e % 32u, c = sub / 2u;
        float sc, mn;
        scaleMinK4(w, blk + 4u, sub, sc, mn);
        const uint qs = blk + (type == kQ4_K ? 16u : 48u);
        uint q = (rd8(w, qs + 32u * c + l) >> (4u * (sub & 1u))) & 0xFu;
        if (type == kQ5_K) q |= ((rd8(w, blk + 16u + l) >> sub) & 1u) << 4;
        return rdHalf(w, blk) * sc * float(q) - rdHalf(w, blk + 2u) * mn;
    }
    if (type == kQ6_K) {
        const uint blk = row + blkIndex * 210u;
        const uint h = e / 128u, kq = (e % 128u) / 32u, l = e % 32u;
        const uint lo = (rd8(w, blk + 64u * h + 32u * (kq & 1u) + l) >> (4u * (kq >> 1))) & 0xFu;
        const uint hi = (rd8(w, blk + 128u + 32u * h + l) >> (2u * kq)) & 3u;
        const float sc = float(bitfieldExtract(int(rd8(w, blk + 192u + 8u * h + 2u * kq + l / 16u)), 0, 8));
        return rdHalf(w, blk + 208u) * sc * float(int(lo | (hi << 4)) - 32);
    }
    return 0.0;
}
