// The qwen35 hybrids' kernels (kernels/cl/deltanet.cl) on PoCL against the cpu tier's ops
// (runtime/cpu/ops_deltanet.cpp). Bit-exact where no exp / log is involved (the split); within
// a few ulp where the kernel's exp / log1p meet glibc's (kernels/README.md "Numerics"). The state
// goes on from a random start (a sequence in progress) or is cleared at position 0.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/kernel_args.h"
#include "tests/kernels/cpu_ops_harness.h"
#include "tests/kernels/kernel_test_support.h"

namespace zinc::kernels::test {
namespace {

using graph::Op;
using graph::OpKind;

model::ModelConfig hybridConfig() {
    model::ModelConfig c;
    c.nEmbd = 256;
    c.normEps = 1e-6f;
    c.hybrid.fullAttentionInterval = 4;
    c.hybrid.convKernel = 4;
    c.hybrid.headDim = 64;
    c.hybrid.keyHeads = 2;
    c.hybrid.valueHeads = 4;
    return c;
}

model::WeightRef f32Weight(const std::vector<float>& values, std::vector<uint8_t>& bytes) {
    bytes.resize(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return weightRef(model::GgmlType::F32, int64_t(values.size()), 1, 1, bytes);
}

// Within `ulps` units in the last place of the reference's largest value, and few bit differences.
void expectClose(std::span<const float> got, std::span<const float> want, double relative, const char* what) {
    const Diff d = compare(got, want);
    EXPECT_LE(d.maxAbs, relative * std::max(1.0, d.maxRef)) << what << ": max |diff| " << d.maxAbs << " of " << d.maxRef;
}

// Token state {position, nTokens, kvLength} the kernels read the position from.
std::vector<int32_t> tokenState(int32_t position, int32_t tokens) { return {position, tokens, position + tokens}; }

TEST(PoclHybridKernels, SsmConvMatchesCpuOpAndClearsAtPositionZero) {
    std::mt19937 rng(40);
    const auto config = hybridConfig();
    const auto& h = config.hybrid;
    const int tokens = 3, channels = h.convChannels(), taps = h.convKernel;
    std::vector<uint8_t> wBytes;
    const auto w = f32Weight(randomFloats(rng, size_t(channels) * taps), wBytes);
    for (const int32_t position : {5, 0}) {
        SCOPED_TRACE(position);
        CpuOps cpu(config);
        const auto in = cpu.buffer("qkv", channels), out = cpu.buffer("conv", channels);
        const auto window = cpu.buffer("conv_state", int64_t(h.convStateFloats()), graph::ElemType::F32, true);
        cpu.allocate(tokens);
        const auto x = randomFloats(rng, size_t(tokens) * channels, 2.0f);
        const auto start = randomFloats(rng, h.convStateFloats());  // a sequence in progress, or stale at position 0
        cpu.fill(in, x);
        if (position > 0) cpu.fill(window, start);  // the cpu tier clears it itself at position 0
        Op op{OpKind::SsmConv, 0, "ssm_conv", in, out};
        op.state = window;
        op.weight = &w;
        cpu::runHybridOp(cpu.context(position), op);

        SvmBuffer dx(x), dWindow(start), dw(wBytes), dOut(size_t(tokens) * channels * 4),
            dState(tokenState(position, tokens));
        launch("ssm_conv", SsmConvArgs{dx.addr(), dWindow.addr(), dw.addr(), dOut.addr(), dState.addr(), channels, taps, tokens, channels, channels},
               {ceilDiv(channels, kSsmConvShape.perGroupX), 1, 1});
        expectClose(dOut.read<float>(size_t(tokens) * channels), cpu.read(out, tokens), 1e-6, "out");
        EXPECT_EQ(compare(dWindow.read<float>(h.convStateFloats()), cpu.read(window, 1)).mismatches, 0u) << "window";
    }
}

TEST(PoclHybridKernels, DeltaNetMatchesCpuOpAndClearsAtPositionZero) {
    std::mt19937 rng(41);
    const auto config = hybridConfig();
    const auto& h = config.hybrid;
    const int tokens = 3, d = h.headDim, width = h.convChannels(), heads = h.valueHeads;
    std::vector<uint8_t> aBytes, biasBytes;
    auto aValues = randomFloats(rng, size_t(heads));
    for (float& v : aValues) v = -std::fabs(v) - 0.1f;  // ssm_a = -exp(A_log) < 0: a decay
    const auto a = f32Weight(aValues, aBytes), dtBias = f32Weight(randomFloats(rng, size_t(heads)), biasBytes);
    for (const int32_t position : {7, 0}) {
        SCOPED_TRACE(position);
        CpuOps cpu(config);
        const auto in = cpu.buffer("dn_conv", width), alpha = cpu.buffer("dn_alpha", heads), beta = cpu.buffer("dn_beta", heads);
        const auto out = cpu.buffer("dn_out", h.valueDim());
        const auto state = cpu.buffer("delta_state", int64_t(h.deltaStateFloats()), graph::ElemType::F32, true);
        cpu.allocate(tokens);
        const auto x = randomFloats(rng, size_t(tokens) * width), al = randomFloats(rng, size_t(tokens) * heads, 3.0f),
                   be = randomFloats(rng, size_t(tokens) * heads, 3.0f);
        const auto start = randomFloats(rng, h.deltaStateFloats(), 0.5f);  // [head][row j][col i] as the cpu tier keeps it
        cpu.fill(in, x);
        cpu.fill(alpha, al);
        cpu.fill(beta, be);
        if (position > 0) cpu.fill(state, start);
        Op op{OpKind::DeltaNet, 0, "delta_net", in, out};
        op.alpha = alpha;
        op.beta = beta;
        op.state = state;
        op.weight = &a;
        op.biasWeight = &dtBias;
        op.heads = heads;
        cpu::runHybridOp(cpu.context(position), op);

        // The kernel keeps each head key-major: S[j][i] at i * d + j.
        const auto transpose = [&](const std::vector<float>& s) {
            std::vector<float> t(s.size());
            for (int hd = 0; hd < heads; ++hd)
                for (int j = 0; j < d; ++j)
                    for (int i = 0; i < d; ++i) t[size_t(hd) * d * d + size_t(i) * d + j] = s[size_t(hd) * d * d + size_t(j) * d + i];
            return t;
        };
        SvmBuffer dx(x), dAl(al), dBe(be), dOut(size_t(tokens) * h.valueDim() * 4), dS(transpose(start)),
            dA(aBytes), dBias(biasBytes), dState(tokenState(position, tokens));
        const float qScale = 1.0f / std::sqrt(float(d));
        launch("delta_net",
               DeltaNetArgs{dx.addr(), dAl.addr(), dBe.addr(), dOut.addr(), dS.addr(), dA.addr(), dBias.addr(), dState.addr(), d,
                            h.keyHeads, tokens, width, heads, h.valueDim(), config.normEps, qScale},
               {uint32_t(heads), 1, 1});
        expectClose(dOut.read<float>(size_t(tokens) * h.valueDim()), cpu.read(out, tokens), 1e-5, "out");
        expectClose(dS.read<float>(h.deltaStateFloats()), transpose(cpu.read(state, 1)), 1e-5, "state");
    }
}

TEST(PoclHybridKernels, GatedNormAndGatesMatchCpuOps) {
    std::mt19937 rng(42);
    const auto config = hybridConfig();
    const int tokens = 3, heads = 4, d = 64, n = heads * d;
    CpuOps cpu(config);
    const auto x = cpu.buffer("x", n), z = cpu.buffer("z", n), qg = cpu.buffer("q_gate", 2 * n), q = cpu.buffer("q", n),
               g = cpu.buffer("gate", n), one = cpu.buffer("one_gate", 1);
    cpu.allocate(tokens);
    const auto xv = randomFloats(rng, size_t(tokens) * n, 2.0f), zv = randomFloats(rng, size_t(tokens) * n, 3.0f),
               qgv = randomFloats(rng, size_t(tokens) * 2 * n, 3.0f), onev = randomFloats(rng, size_t(tokens), 3.0f);
    std::vector<uint8_t> wBytes;
    const auto w = f32Weight(randomFloats(rng, size_t(d)), wBytes);
    cpu.fill(x, xv);
    cpu.fill(z, zv);
    cpu.fill(qg, qgv);
    cpu.fill(one, onev);
    SvmBuffer dx(xv), dz(zv), dw(wBytes), dqg(qgv), dq(size_t(tokens) * n * 4), dg(size_t(tokens) * n * 4),
        done(onev);

    Op norm{OpKind::GatedNorm, 0, "ssm_norm", x, x};
    norm.gate = z;
    norm.weight = &w;
    norm.heads = heads;
    cpu::runHybridOp(cpu.context(0), norm);
    launch("gated_norm", GatedNormArgs{dx.addr(), dz.addr(), dw.addr(), dx.addr(), d, config.normEps, n, n, n}, {uint32_t(heads), tokens, 1});
    expectClose(dx.read<float>(size_t(tokens) * n), cpu.read(x, tokens), 1e-6, "gated_norm");

    Op split{OpKind::SplitGate, 0, "attn_q_split", qg, q};
    split.gate = g;
    split.heads = heads;
    cpu::runHybridOp(cpu.context(0), split);
    launch("split_gate", SplitGateArgs{dqg.addr(), dq.addr(), dg.addr(), d, 2 * n, n, n}, {uint32_t(heads), tokens, 1});
    EXPECT_EQ(compare(dq.read<float>(size_t(tokens) * n), cpu.read(q, tokens)).mismatches, 0u) << "split: query";
    EXPECT_EQ(compare(dg.read<float>(size_t(tokens) * n), cpu.read(g, tokens)).mismatches, 0u) << "split: gate";

    Op perElement{OpKind::SigmoidGate, 0, "attn_output_gate", q, q};
    perElement.gate = g;
    cpu::runHybridOp(cpu.context(0), perElement);
    launch("sigmoid_gate", SigmoidGateArgs{dq.addr(), dg.addr(), dq.addr(), n, n, n, 0}, {ceilDiv(n, kSigmoidGateShape.perGroupX), tokens, 1});
    expectClose(dq.read<float>(size_t(tokens) * n), cpu.read(q, tokens), 1e-6, "sigmoid gate per element");

    Op perToken{OpKind::SigmoidGate, 0, "shexp_gate_sigmoid", g, g};
    perToken.gate = one;
    cpu::runHybridOp(cpu.context(0), perToken);
    launch("sigmoid_gate", SigmoidGateArgs{dg.addr(), done.addr(), dg.addr(), n, n, 1, 1}, {ceilDiv(n, kSigmoidGateShape.perGroupX), tokens, 1});
    expectClose(dg.read<float>(size_t(tokens) * n), cpu.read(g, tokens), 1e-6, "sigmoid gate per token");
}

TEST(PoclHybridKernels, CopyWordsCopiesTheState) {
    std::mt19937 rng(43);
    const auto src = randomFloats(rng, 1000);
    SvmBuffer dSrc(src), dDst(src.size() * 4);
    launch("copy_words", CopyWordsArgs{dSrc.addr(), dDst.addr(), int32_t(src.size())}, {ceilDiv(1000, kCopyWordsShape.perGroupX), 1, 1});
    EXPECT_EQ(compare(dDst.read<float>(src.size()), src).mismatches, 0u);
}

}  // namespace
}  // namespace zinc::kernels::test
