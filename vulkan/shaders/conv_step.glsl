// One token through the gated DeltaNet's causal conv1d for channel ch, then silu: the window
// holds the last taps - 1 inputs ([tap][channels], oldest first) and takes x in place; w is
// [channel][taps], oldest tap first. Explicit fmas in tap order, so ssm_conv.comp and
// matvec_rows.comp's conv epilogue (MatMulConv) give the same bits on every driver.
float convStep(FloatBuf window, FloatBuf w, uint ch, uint channels, uint taps, float x) {
    const uint last = taps - 1u;
    float sum = 0.0;
    for (uint k = 0u; k < last; ++k) sum = fma(window.v[k * channels + ch], w.v[ch * taps + k], sum);
    sum = fma(x, w.v[ch * taps + last], sum);
    for (uint k = 0u; k + 1u < last; ++k) window.v[k * channels + ch] = window.v[(k + 1u) * channels + ch];
    window.v[(last - 1u) * channels + ch] = x;
    return sum / (1.0 + exp(-sum));
}
