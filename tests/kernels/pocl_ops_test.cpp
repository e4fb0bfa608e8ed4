// Norms, RoPE, KV store + attention, SwiGLU, add, the MoE router and experts, and argmax run
// on PoCL through kernarg segments, against the cpu tier's ops in ggml precision.
// Tolerances: exp, sin and cos are correctly rounded on the GPU side and glibc's are within
// 0.502 ulp, so a value computed through them may differ in its last bit; attention's F16
// accumulator can then round one step differently (2^-11 relative). Everything else is
// expected bit-exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "kernels/kernel_args.h"
#include "model/quant/blocks.h"
#include "model/quant/fp16.h"
#include "tests/kernels/cpu_ops_harness.h"
#include "tests/kernels/kernel_test_support.h"

namespace zinc::kernels::test {
namespace {

using graph::ElemType;
using graph::Op;
using graph::OpKind;

model::ModelConfig smallConfig() {
    model::ModelConfig c;
    c.nEmbd = 384;
    c.nHead = 8;
    c.nHeadKv = 2;
    c.headDim = 64;
    c.ropeDim = 64;
    c.normEps = 1e-6f;
    c.ropeBase = 1000000.0f;
    return c;
}

TEST(PoclKernels, RmsNormMatchesCpuOp) {
    std::mt19937 rng(10);
    const auto config = smallConfig();
    const int tokens = 3, n = config.nEmbd;
    CpuOps cpu(config);
    const auto in = cpu.buffer("x", n), out = cpu.buffer("x_norm", n);
    cpu.allocate(tokens);
    const auto x = randomFloats(rng, tokens * n, 3.0f);
    const auto w = randomFloats(rng, n);
    std::vector<uint8_t> wBytes(n * 4);
    std::memcpy(wBytes.data(), w.data(), wBytes.size());
    const auto weight = weightRef(model::GgmlType::F32, n, 1, 1, wBytes);
    cpu.fill(in, x);
    Op op{OpKind::RmsNorm, 0, "norm", in};
    op.out = out;
    op.weight = &weight;
    cpu::runRmsNorm(cpu.context(0), op);

    SvmBuffer dx(x), dw(w), dOut(tokens * n * 4);
    launch("rms_norm", RmsNormArgs{dx.addr(), dw.addr(), dOut.addr(), n, config.normEps, n, n}, {1, tokens, 1});
    const Diff d = compare(dOut.read<float>(tokens * n), cpu.read(out, tokens));
    EXPECT_EQ(d.mismatches, 0u) << "max |diff| " << d.maxAbs;
}

TEST(PoclKernels, HeadNormMatchesCpuOp) {
    std::mt19937 rng(11);
    const auto config = smallConfig();
    const int tokens = 2, width = config.qDim();
    CpuOps cpu(config);
    const auto q = cpu.buffer("q", width);
    cpu.allocate(tokens);
    const auto x = randomFloats(rng, tokens * width, 2.0f);
    const auto w = randomFloats(rng, config.headDim);
    std::vector<uint8_t> wBytes(w.size() * 4);
    std::memcpy(wBytes.data(), w.data(), wBytes.size());
    const auto weight = weightRef(model::GgmlType::F32, config.headDim, 1, 1, wBytes);
    cpu.fill(q, x);
    Op op{OpKind::HeadNorm, 0, "q_norm", q};
    op.out = q;
    op.heads = config.nHead;
    op.weight = &weight;
    cpu::runHeadNorm(cpu.context(0), op);

    SvmBuffer dx(x), dw(w);
    launch("head_norm", HeadNormArgs{dx.addr(), dw.addr(), config.nHead, config.headDim, config.normEps, width},
           {static_cast<uint32_t>(config.nHead), tokens, 1});
    const Diff d = compare(dx.read<float>(tokens * width), cpu.read(q, tokens));
    EXPECT_EQ(d.mismatches, 0u) << "max |diff| " << d.maxAbs;
}

// Llama 3.1's rope_freqs divisors as its converter writes them (factor 8, low/high 1, 4) for 32 pairs.
std::vector<float> llama3FreqFactors() {
    std::vector<float> f(32, 1.0f);
    for (size_t i = 6; i < f.size(); ++i) f[i] = 8.0f;
    f[3] = 1.425f;
    f[4] = 2.442f;
    f[5] = 4.637f;
    return f;
}

void checkRope(model::RopeStyle style, const char* kernel, int32_t position, model::RopeScaling scaling = {},
               const std::vector<float>& factors = {}) {
    std::mt19937 rng(12);
    auto config = smallConfig();
    config.ropeStyle = style;
    config.ropeScaling = scaling;
    const int tokens = 3, width = config.qDim();
    CpuOps cpu(config);
    const auto q = cpu.buffer("q", width);
    cpu.allocate(tokens);
    cpu.fillRope(position, tokens, factors.empty() ? nullptr : factors.data());
    const auto x = randomFloats(rng, tokens * width);
    cpu.fill(q, x);
    Op op{OpKind::Rope, 0, "rope_q", q};
    op.out = q;
    op.heads = config.nHead;
    cpu::runRope(cpu.context(position), op);

    const std::vector<int32_t> state = {position, tokens, position + tokens};
    SvmBuffer dx(x), dState(state), dFactors(factors.empty() ? std::vector<float>{0.0f} : factors);
    const model::RopeParams p = cpu.rope();
    launch(kernel,
           RopeArgs{dx.addr(), dState.addr(), config.nHead, config.headDim, config.ropeDim, p.thetaScale, width,
                    factors.empty() ? 0 : dFactors.addr(), p.freqScale, p.extFactor, p.mscale, p.corrLow, p.corrHigh},
           {static_cast<uint32_t>(config.nHead), tokens, 1});
    const Diff d = compare(dx.read<float>(tokens * width), cpu.read(q, tokens));
    EXPECT_LE(d.maxAbs, 1e-6 * std::max(1.0, d.maxRef)) << kernel << " at position " << position;
    // YaRN's mscale multiplies cos and sin, so a last-bit difference of either shows up more often.
    const size_t allowed = static_cast<size_t>(tokens * width / (scaling.type == model::RopeScalingType::Yarn ? 25 : 100));
    EXPECT_LE(d.mismatches, allowed) << kernel << ": too many last-bit differences";
}

TEST(PoclKernels, RopeNormMatchesCpuOp) {
    checkRope(model::RopeStyle::Norm, "rope_norm", 0);
    checkRope(model::RopeStyle::Norm, "rope_norm", 4093);
}

TEST(PoclKernels, RopeNeoxMatchesCpuOp) {
    checkRope(model::RopeStyle::Neox, "rope_neox", 17);
    checkRope(model::RopeStyle::Neox, "rope_neox", 30000);
}

TEST(PoclKernels, RopeScalingMatchesCpuOp) {
    checkRope(model::RopeStyle::Norm, "rope_norm", 700, {}, llama3FreqFactors());
    model::RopeScaling linear;
    linear.type = model::RopeScalingType::Linear;
    linear.factor = 8.0f;
    checkRope(model::RopeStyle::Neox, "rope_neox", 901, linear);
    model::RopeScaling yarn;
    yarn.type = model::RopeScalingType::Yarn;
    yarn.factor = 4.0f;
    yarn.nCtxOrig = 4096;
    checkRope(model::RopeStyle::Neox, "rope_neox", 12000, yarn);
}

// Attention of every (token, head) over positions [0, its position] in double, from the same
// F16 cache rows and the F16-rounded q the kernels use: the sum the kernels approximate.
std::vector<float> exactAttention(const model::ModelConfig& c, const std::vector<float>& q, const std::vector<uint16_t>& cacheK,
                                  const std::vector<uint16_t>& cacheV, int tokens, int position, float scale) {
    const int kvDim = c.kvDim(), qDim = c.qDim(), hd = c.headDim;
    std::vector<float> out(static_cast<size_t>(tokens) * qDim);
    for (int t = 0; t < tokens; ++t)
        for (int h = 0; h < c.nHead; ++h) {
            const int kvOffset = h / (c.nHead / c.nHeadKv) * hd, n = position + t + 1;
            std::vector<double> score(static_cast<size_t>(n));
            double top = -INFINITY, sum = 0;
            for (int p = 0; p < n; ++p) {
                double s = 0;
                for (int i = 0; i < hd; ++i)
                    s += double(model::fp16ToFp32(model::fp32ToFp16(q[size_t(t) * qDim + size_t(h) * hd + i]))) *
                         model::fp16ToFp32(cacheK[size_t(p) * kvDim + kvOffset + i]);
                score[size_t(p)] = s * scale;
                top = std::max(top, score[size_t(p)]);
            }
            for (double& s : score) sum += s = std::exp(s - top);
            for (int d = 0; d < hd; ++d) {
                double o = 0;
                for (int p = 0; p < n; ++p) o += score[size_t(p)] * model::fp16ToFp32(cacheV[size_t(p) * kvDim + kvOffset + d]);
                out[size_t(t) * qDim + size_t(h) * hd + d] = float(o / sum);
            }
        }
    return out;
}

// K/V rows of the batch stored as halves at their positions, then every (token, head) attends
// over [0, its position] with GQA, in `splits` workgroups per head group (and
// attention_combine when more than one); earlier positions come from a filled cache. One chunk
// of positions is the cpu tier's F16-accumulator recurrence; chunks combined are held to the
// exact attention (double) as closely as the cpu tier is.
void checkAttention(int32_t headDim, int32_t position, int32_t splits, int32_t nHead = 8, int32_t nHeadKv = 2) {
    std::mt19937 rng(13);
    auto config = smallConfig();
    config.headDim = config.ropeDim = headDim;
    config.nHead = nHead;
    config.nHeadKv = nHeadKv;
    const int tokens = splits > 1 ? 1 : 2, context = 512, kvDim = config.kvDim(), qDim = config.qDim();
    CpuOps cpu(config);
    const auto q = cpu.buffer("q", qDim), k = cpu.buffer("k", kvDim), v = cpu.buffer("v", kvDim), out = cpu.buffer("attn", qDim);
    cpu.allocate(tokens, context);
    std::vector<uint16_t> cacheK(static_cast<size_t>(context) * kvDim), cacheV(cacheK.size());
    const auto past = randomFloats(rng, 2 * static_cast<size_t>(position) * kvDim, 1.5f);
    for (size_t i = 0; i < static_cast<size_t>(position) * kvDim; ++i) {
        cacheK[i] = model::fp32ToFp16(past[i]);
        cacheV[i] = model::fp32ToFp16(past[i + static_cast<size_t>(position) * kvDim]);
    }
    std::copy(cacheK.begin(), cacheK.end(), cpu.kv().kHalf(0, 0));
    std::copy(cacheV.begin(), cacheV.end(), cpu.kv().vHalf(0, 0));
    const auto xq = randomFloats(rng, tokens * qDim), xk = randomFloats(rng, tokens * kvDim), xv = randomFloats(rng, tokens * kvDim);
    cpu.fill(q, xq);
    cpu.fill(k, xk);
    cpu.fill(v, xv);
    Op op{OpKind::Attention, 0, "attention", q, out};
    op.k = k;
    op.v = v;
    op.heads = config.nHead;
    cpu::runAttention(cpu.context(position), op);

    const std::vector<int32_t> state = {position, tokens, position + tokens};
    SvmBuffer dq(xq), dk(xk), dv(xv), dState(state), dCacheK(cacheK), dCacheV(cacheV), dOut(tokens * qDim * 4);
    SvmBuffer dPartial(4 * attentionPartialFloats(tokens, nHead, headDim, splits));
    launch("kv_store", KvStoreArgs{dk.addr(), dv.addr(), dCacheK.addr(), dCacheV.addr(), dState.addr(), kvDim, kvDim, context},
           {ceilDiv(kvDim, 256), tokens, 1});
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    const uint32_t groups = uint32_t(nHeadKv) * ceilDiv(nHead / nHeadKv, 8);
    launch("attention", AttentionArgs{dq.addr(), dCacheK.addr(), dCacheV.addr(), dOut.addr(), dState.addr(), dPartial.addr(), nHead,
                                      nHeadKv, headDim, kvDim, qDim, qDim, scale, 0, 0, context, splits},
           {groups, uint32_t(tokens), uint32_t(splits)});
    if (splits > 1)
        launch("attention_combine", AttentionCombineArgs{dPartial.addr(), dOut.addr(), dState.addr(), nHead, headDim, qDim, 0, splits},
               {uint32_t(nHead), uint32_t(tokens), 1});
    const size_t used = static_cast<size_t>(position + tokens) * kvDim;
    EXPECT_TRUE(std::equal(dCacheK.as<uint16_t>(), dCacheK.as<uint16_t>() + used, cpu.kv().kHalf(0, 0))) << "K cache";
    EXPECT_TRUE(std::equal(dCacheV.as<uint16_t>(), dCacheV.as<uint16_t>() + used, cpu.kv().vHalf(0, 0))) << "V cache";
    std::copy(dCacheK.as<uint16_t>(), dCacheK.as<uint16_t>() + used, cacheK.begin());
    std::copy(dCacheV.as<uint16_t>(), dCacheV.as<uint16_t>() + used, cacheV.begin());
    const std::vector<float> got = dOut.read<float>(tokens * qDim);
    const std::vector<float> want = exactAttention(config, xq, cacheK, cacheV, tokens, position, scale);
    const Diff exact = compare(got, want), cpuDiff = compare(got, cpu.read(out, tokens)), cpuExact = compare(cpu.read(out, tokens), want);
    const std::string what = "headDim " + std::to_string(headDim) + " position " + std::to_string(position) + " splits " +
                             std::to_string(splits) + " heads " + std::to_string(nHead) + "/" + std::to_string(nHeadKv);
    if (splits == 1 || position + tokens <= 128) {
        // One chunk: the cpu tier's recurrence, so its values (exp may differ in the last bit,
        // and the F16 accumulator then round one step apart).
        EXPECT_LE(cpuDiff.maxAbs, 2e-3 * std::max(1.0, cpuDiff.maxRef)) << what;
        EXPECT_LE(cpuDiff.mismatches, static_cast<size_t>(tokens * qDim / 10)) << what << ": too many differences";
    } else {
        // Chunks combined in f32: as close to the exact result as the cpu tier's F16 accumulator is.
        EXPECT_LE(exact.maxAbs, cpuExact.maxAbs + 2e-6 * std::max(1.0, exact.maxRef)) << what;
        EXPECT_LE(cpuDiff.maxAbs, 2 * cpuExact.maxAbs + 2e-6 * std::max(1.0, exact.maxRef)) << what;
    }
    std::printf("attention %s: max abs %.3g from the exact (the cpu tier's F16 accumulator: %.3g; kernels to cpu %.3g), of %.3g\n",
                what.c_str(), exact.maxAbs, cpuExact.maxAbs, cpuDiff.maxAbs, exact.maxRef);
}

TEST(PoclKernels, AttentionMatchesExactAndCpuF16Attention) {
    checkAttention(64, 5, 1);
    checkAttention(128, 300, 1);  // several blocks of 128 positions
    checkAttention(256, 130, 1);  // two dims per thread
    checkAttention(128, 300, 4);  // three chunks of 128 used, the fourth workgroup skips
    checkAttention(64, 200, 32, 16, 1);  // 16 query heads on one kv head: two head groups; two chunks used of 32
    checkAttention(64, 40, 8);    // one chunk: the other seven skip, the combine takes one (bit-compatible)
}

TEST(PoclKernels, SwiGluAndAddMatchCpuOps) {
    std::mt19937 rng(14);
    const auto config = smallConfig();
    const int tokens = 3, n = 1000;
    CpuOps cpu(config);
    const auto g = cpu.buffer("gate", n), u = cpu.buffer("up", n), o = cpu.buffer("out", n);
    cpu.allocate(tokens);
    auto gate = randomFloats(rng, tokens * n, 4.0f);
    gate[0] = -100.0f, gate[1] = 100.0f, gate[2] = -0.0f;
    const auto up = randomFloats(rng, tokens * n);
    cpu.fill(g, gate);
    cpu.fill(u, up);
    Op swiglu{OpKind::SwiGlu, 0, "swiglu", g, o};
    swiglu.up = u;
    cpu::runSwiGlu(cpu.context(0), swiglu);
    Op add{OpKind::Add, 0, "add", g, g};
    add.addend = u;
    SvmBuffer dg(gate), du(up), dOut(tokens * n * 4);
    launch("swiglu", SwiGluArgs{dg.addr(), du.addr(), dOut.addr(), n, n}, {ceilDiv(n, 256), tokens, 1});
    const Diff ds = compare(dOut.read<float>(tokens * n), cpu.read(o, tokens));
    EXPECT_LE(ds.maxAbs, 1e-6 * std::max(1.0, ds.maxRef));
    EXPECT_LE(ds.mismatches, static_cast<size_t>(tokens * n / 100));

    cpu::runAdd(cpu.context(0), add);
    launch("add", AddArgs{dg.addr(), du.addr(), dg.addr(), n, n}, {ceilDiv(n, 256), tokens, 1});
    EXPECT_EQ(compare(dg.read<float>(tokens * n), cpu.read(g, tokens)).mismatches, 0u);
}

model::ModelConfig moeConfig() {
    auto c = smallConfig();
    c.nEmbd = 256;
    c.nExpert = 16;
    c.nExpertUsed = 4;
    c.nFfExpert = 512;
    c.normTopkProb = true;
    return c;
}

TEST(PoclKernels, MoeRouterMatchesCpuOp) {
    std::mt19937 rng(15);
    const auto config = moeConfig();
    const int tokens = 3, n = config.nEmbd, e = config.nExpert, used = config.nExpertUsed;
    CpuOps cpu(config);
    const auto xn = cpu.buffer("x_norm", n), ids = cpu.buffer("moe_ids", used, ElemType::I32),
               weights = cpu.buffer("moe_weights", used);
    cpu.allocate(tokens);
    const auto router = randomWeights(rng, model::GgmlType::F32, e, n);
    const auto routerRef = weightRef(model::GgmlType::F32, n, e, 1, router);
    const auto x = randomFloats(rng, tokens * n);
    cpu.fill(xn, x);
    Op op{OpKind::MoeRoute, 0, "router", xn};
    op.expertIds = ids;
    op.expertWeights = weights;
    op.weight = &routerRef;
    cpu::runMoeRoute(cpu.context(0), op);

    SvmBuffer dw(router), dx(x), dLogits(tokens * e * 4), dIds(tokens * used * 4), dWeights(tokens * used * 4);
    launch("matvec_f32", MatVecArgs{dw.addr(), dx.addr(), dLogits.addr(), static_cast<uint64_t>(n) * 4, static_cast<uint64_t>(n) * 4,
                                    n, e, e},
           {ceilDiv(e, kMatVecShape.perGroupX), tokens, 1});
    {  // MatMulAdd: with accumulate, y + the product (y holds the logits: exactly twice them)
        const std::vector<float> logits = dLogits.read<float>(tokens * e);
        SvmBuffer dTwice(logits);
        launch("matvec_f32", MatVecArgs{dw.addr(), dx.addr(), dTwice.addr(), static_cast<uint64_t>(n) * 4, static_cast<uint64_t>(n) * 4,
                                        n, e, e, 1},
               {ceilDiv(e, kMatVecShape.perGroupX), tokens, 1});
        const std::vector<float> twice = dTwice.read<float>(tokens * e);
        for (size_t i = 0; i < logits.size(); ++i) ASSERT_EQ(twice[i], logits[i] + logits[i]) << "logit " << i;
    }
    launch("moe_topk", MoeTopkArgs{dLogits.addr(), dIds.addr(), dWeights.addr(), e, used, e, used, 1}, {1, tokens, 1});
    const auto gotIds = dIds.read<int32_t>(tokens * used);
    const auto gotWeights = dWeights.read<float>(tokens * used);
    for (int t = 0; t < tokens; ++t)
        for (int k = 0; k < used; ++k) {
            EXPECT_EQ(gotIds[t * used + k], cpu.i32(ids, t)[k]) << "token " << t << " slot " << k;
            EXPECT_NEAR(gotWeights[t * used + k], cpu.f32(weights, t)[k], 1e-6f) << "token " << t << " slot " << k;
        }
}

// The whole expert FFN as the kfd tier chains it: quantize, gate/up expert matvecs reading
// the ids from memory, SwiGLU, quantize, down expert matvec, combine in expert-id order.
TEST(PoclKernels, MoeExpertsMatchCpuOp) {
    std::mt19937 rng(16);
    const auto config = moeConfig();
    const int tokens = 2, n = config.nEmbd, ff = config.nFfExpert, e = config.nExpert, used = config.nExpertUsed;
    CpuOps cpu(config);
    const auto xn = cpu.buffer("x_norm", n), ids = cpu.buffer("moe_ids", used, ElemType::I32),
               weights = cpu.buffer("moe_weights", used), out = cpu.buffer("block_out", n);
    cpu.allocate(tokens);
    const auto gate = randomWeights(rng, model::GgmlType::Q4_K, e * ff, n), up = randomWeights(rng, model::GgmlType::Q4_K, e * ff, n);
    const auto down = randomWeights(rng, model::GgmlType::Q6_K, e * n, ff);
    const auto gateRef = weightRef(model::GgmlType::Q4_K, n, ff, e, gate), upRef = weightRef(model::GgmlType::Q4_K, n, ff, e, up);
    const auto downRef = weightRef(model::GgmlType::Q6_K, ff, n, e, down);
    const auto x = randomFloats(rng, tokens * n);
    const std::vector<int32_t> idList = {7, 2, 11, 5, 0, 15, 2, 9};
    const std::vector<float> wList = {0.4f, 0.3f, 0.2f, 0.1f, 0.25f, 0.25f, 0.3f, 0.2f};
    cpu.fill(xn, x);
    std::copy(idList.begin(), idList.end(), cpu.i32(ids, 0));
    cpu.fill(weights, wList);
    Op op{OpKind::MoeFfn, 0, "experts", xn};
    op.expertIds = ids;
    op.expertWeights = weights;
    op.out = out;
    op.weight = &gateRef;
    op.upWeight = &upRef;
    op.downWeight = &downRef;
    cpu::runMoeFfn(cpu.context(0), op);

    const size_t actX = n / 256 * sizeof(model::BlockQ8_K), actH = ff / 256 * sizeof(model::BlockQ8_K);
    SvmBuffer dGate(gate), dUp(up), dDown(down), dx(x), dIds(idList), dW(wList), dActX(tokens * actX),
        dG(tokens * used * ff * 4), dU(tokens * used * ff * 4), dActH(tokens * used * actH), dD(tokens * used * n * 4),
        dOut(tokens * n * 4);
    launch("quantize_q8_k", QuantizeArgs{dx.addr(), dActX.addr(), n, n, actX}, {n / 256, tokens, 1});
    const uint64_t gateExpert = gateRef.rowBytes * ff, downExpert = downRef.rowBytes * n;
    for (const auto& [w, y] : {std::pair{&dGate, &dG}, std::pair{&dUp, &dU}})
        launch("matvec_q4_k_expert",
               MatVecExpertArgs{w->addr(), dActX.addr(), y->addr(), dIds.addr(), gateRef.rowBytes, actX, 0, gateExpert, n, ff,
                                used * ff, ff, used},
               {ceilDiv(ff, kMatVecShape.perGroupX), tokens, static_cast<uint32_t>(used)});
    launch("swiglu", SwiGluArgs{dG.addr(), dU.addr(), dG.addr(), ff, ff}, {ceilDiv(ff, 256), static_cast<uint32_t>(tokens * used), 1});
    launch("quantize_q8_k", QuantizeArgs{dG.addr(), dActH.addr(), ff, ff, actH}, {ff / 256, static_cast<uint32_t>(tokens * used), 1});
    launch("matvec_q6_k_expert",
           MatVecExpertArgs{dDown.addr(), dActH.addr(), dD.addr(), dIds.addr(), downRef.rowBytes, actH * used, actH, downExpert, ff, n,
                            used * n, n, used},
           {ceilDiv(n, kMatVecShape.perGroupX), tokens, static_cast<uint32_t>(used)});
    launch("moe_combine", MoeCombineArgs{dD.addr(), dIds.addr(), dW.addr(), dOut.addr(), n, used, used * n, n, used, n},
           {ceilDiv(n, 256), tokens, 1});
    const std::vector<float> once = dOut.read<float>(tokens * n);
    const Diff d = compare(once, cpu.read(out, tokens));
    EXPECT_LE(d.maxAbs, 1e-5 * std::max(1.0, d.maxRef)) << d.mismatches << " values differ";
    // MoeFfnAdd: accumulating into a residual that holds the same values doubles them exactly.
    launch("moe_combine", MoeCombineArgs{dD.addr(), dIds.addr(), dW.addr(), dOut.addr(), n, used, used * n, n, used, n, 1},
           {ceilDiv(n, 256), tokens, 1});
    const std::vector<float> twice = dOut.read<float>(tokens * n);
    for (size_t i = 0; i < once.size(); ++i) ASSERT_EQ(twice[i], once[i] + once[i]) << "element " << i;
}

// graph::fuse's SwiGluQuantize: the quantize kernels given `up` write the bytes swiglu then
// quantize write (Q8_K: the block's scale from the recomputed element of largest magnitude).
TEST(PoclKernels, SwiGluIntoQuantizeEqualsSwiGluThenQuantize) {
    std::mt19937 rng(18);
    const int rows = 2, n = 512;
    const auto gate = randomFloats(rng, rows * n, 4.0f), up = randomFloats(rng, rows * n);
    SvmBuffer dg(gate), du(up), dProduct(rows * n * 4);
    launch("swiglu", SwiGluArgs{dg.addr(), du.addr(), dProduct.addr(), n, n}, {ceilDiv(n, 256), rows, 1});
    struct Format {
        const char* kernel;
        uint64_t rowBytes;
        uint32_t groups;
    };
    for (const Format& f : {Format{"quantize_q8_k", n / 256 * sizeof(model::BlockQ8_K), n / 256},
                            Format{"quantize_q8_0", n / 32 * 34, ceilDiv(n, 256)}, Format{"quantize_q8_1", n / 32 * 36, ceilDiv(n, 256)}}) {
        SvmBuffer twoSteps(rows * f.rowBytes), fused(rows * f.rowBytes);
        launch(f.kernel, QuantizeArgs{dProduct.addr(), twoSteps.addr(), n, n, f.rowBytes}, {f.groups, rows, 1});
        launch(f.kernel, QuantizeArgs{dg.addr(), fused.addr(), n, n, f.rowBytes, du.addr()}, {f.groups, rows, 1});
        EXPECT_EQ(fused.read<uint8_t>(rows * f.rowBytes), twoSteps.read<uint8_t>(rows * f.rowBytes)) << f.kernel;
    }
}

TEST(PoclKernels, ArgmaxTakesTheFirstLargest) {
    std::mt19937 rng(17);
    const int rows = 3, n = 5003;
    auto logits = randomFloats(rng, rows * n);
    logits[1234] = 9.0f, logits[4321] = 9.0f;          // row 0: a tie, the first wins
    logits[n + n - 1] = 20.0f;                         // row 1: the last element
    std::fill(logits.begin() + 2 * n, logits.end(), -1.0f);  // row 2: all equal -> 0
    SvmBuffer dl(logits), dOut(rows * 4);
    launch("argmax", ArgmaxArgs{dl.addr(), dOut.addr(), n, n}, {1, rows, 1});
    const auto got = dOut.read<int32_t>(rows);
    for (int t = 0; t < rows; ++t) {
        const auto row = logits.begin() + t * n;
        EXPECT_EQ(got[t], std::max_element(row, row + n) - row) << "row " << t;
    }
}

}  // namespace
}  // namespace zinc::kernels::test
