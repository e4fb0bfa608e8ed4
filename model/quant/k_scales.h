#pragma once
// Q4_K and Q5_K keep 8 six-bit sub-block scales and 8 six-bit mins in 12 bytes. Layout as
// ggml's get_scale_min_k4 (ggml/src/ggml-quants.c, MIT):
//   bytes 0..3   low 6 bits: scale 0..3;   top 2 bits: bits 4..5 of scale 4..7
//   bytes 4..7   low 6 bits: min 0..3;     top 2 bits: bits 4..5 of min 4..7
//   bytes 8..11  low nibble: bits 0..3 of scale 4..7; high nibble: bits 0..3 of min 4..7
#include <cstdint>
#include <cstring>

namespace zinc::model {

// Unpacks all eight at once with 32-bit word masks; returns them as bytes.
inline void unpackScaleMinK4(const uint8_t* packed, uint8_t scales[8], uint8_t mins[8]) {
    uint32_t w[3];
    std::memcpy(w, packed, sizeof(w));
    const uint32_t low6 = 0x3f3f3f3fu, low4 = 0x0f0f0f0fu, low2 = 0x03030303u;
    const uint32_t sc[2] = {w[0] & low6, (w[2] & low4) | (((w[0] >> 6) & low2) << 4)};
    const uint32_t mn[2] = {w[1] & low6, ((w[2] >> 4) & low4) | (((w[1] >> 6) & low2) << 4)};
    std::memcpy(scales, sc, 8);
    std::memcpy(mins, mn, 8);
}

// Q3_K keeps 16 six-bit scales in 12 bytes (ggml's kmask1/kmask2 unpacking): low nibbles
// of bytes 0..7 are scales 0..7, their high nibbles scales 8..15; bytes 8..11 hold the top 2
// bits, 2 bits per scale (byte 8 + j % 4, bit pair j / 4). Returned still offset by 32.
inline void unpackScalesQ3K(const uint8_t* packed, int8_t scales[16]) {
    uint32_t a[4];
    std::memcpy(a, packed, 12);
    const uint32_t kmask1 = 0x03030303u, kmask2 = 0x0f0f0f0fu, tmp = a[2];
    a[2] = ((a[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    a[3] = ((a[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    a[0] = (a[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    a[1] = (a[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    std::memcpy(scales, a, 16);
}

}  // namespace zinc::model
