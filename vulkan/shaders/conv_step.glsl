// The gated DeltaNet's causal conv1d for channel ch, then silu: the window holds the last
// taps - 1 inputs ([tap][channels], oldest first) and takes each new x; w is [channel][taps],
// oldest tap first. A channel's window and taps are loaded into registers once (convLoad), each
// token is a step on them (convStep: fmas in tap order) and the window is stored once at the
// end (convStore): no load waits behind a store, and ssm_conv.comp and matvec_rows.comp's conv
// epilogue (MatMulConv) give the same bits on every driver. Kernels of 2 to kMaxConvTaps taps
// (MatVecOp::checkConvTaps, vulkan/op_matvec.cpp, checks before either is recorded).
const uint kMaxConvTaps = 4u;

struct ConvChannel {
    float win[kMaxConvTaps - 1u];
    float w[kMaxConvTaps];
};

// `base`: the window's first float in `window` (a sequence slot's copy of the state);
// `cleared`: a sequence starting at position 0, whose window is all zeros (nothing is read).
ConvChannel convLoad(FloatBuf window, uint base, bool cleared, FloatBuf w, uint ch, uint channels, uint taps) {
    ConvChannel c;
    [[unroll]] for (uint k = 0u; k < kMaxConvTaps; ++k) {
        c.w[k] = k < taps ? w.v[ch * taps + k] : 0.0;
        if (k + 1u < kMaxConvTaps) c.win[k] = k + 1u < taps && !cleared ? window.v[base + k * channels + ch] : 0.0;
    }
    return c;
}

float convStep(inout ConvChannel c, uint taps, float x) {
    const uint last = taps - 1u;
    float sum = 0.0;
    [[unroll]] for (uint k = 0u; k + 1u < kMaxConvTaps; ++k)
        if (k < last) sum = fma(c.win[k], c.w[k], sum);
    [[unroll]] for (uint k = 0u; k < kMaxConvTaps; ++k)
        if (k == last) sum = fma(x, c.w[k], sum);
    // the window moves on: drop the oldest, x last
    [[unroll]] for (uint k = 0u; k + 2u < kMaxConvTaps; ++k)
        if (k + 1u < last) c.win[k] = c.win[k + 1u];
    [[unroll]] for (uint k = 0u; k + 1u < kMaxConvTaps; ++k)
        if (k + 1u == last) c.win[k] = x;
    return sum / (1.0 + exp(-sum));
}

void convStore(FloatBuf window, uint base, ConvChannel c, uint ch, uint channels, uint taps) {
    [[unroll]] for (uint k = 0u; k + 1u < kMaxConvTaps; ++k)
        if (k + 1u < taps) window.v[base + k * channels + ch] = c.win[k];
}
