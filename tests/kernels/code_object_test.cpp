// The embedded code objects: both targets present, every kernel's metadata and descriptor
// as the C++ side (kernels/kernel_args.h) and a PM4 launcher expect them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include "graph/graph.h"
#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kernels/kernel_args.h"

namespace zinc::kernels::test {
namespace {

struct ExpectedArg {
    const char* name;
    uint32_t offset, size;
};
struct ExpectedKernel {
    std::string name;
    std::vector<ExpectedArg> args;
    size_t structSize;
    uint32_t workgroup;
};

#define ZK_ARG(S, field) ExpectedArg{#field, static_cast<uint32_t>(offsetof(S, field)), static_cast<uint32_t>(sizeof(S::field))}

std::vector<ExpectedKernel> expectedKernels() {
    std::vector<ExpectedKernel> k;
    const auto embed = std::vector{ZK_ARG(EmbedArgs, table), ZK_ARG(EmbedArgs, tokens), ZK_ARG(EmbedArgs, out),
                                   ZK_ARG(EmbedArgs, rowBytes), ZK_ARG(EmbedArgs, cols), ZK_ARG(EmbedArgs, outStride),
                                   ZK_ARG(EmbedArgs, scale)};
    const auto matvec = std::vector{ZK_ARG(MatVecArgs, w), ZK_ARG(MatVecArgs, act), ZK_ARG(MatVecArgs, y),
                                    ZK_ARG(MatVecArgs, rowBytes), ZK_ARG(MatVecArgs, actStride), ZK_ARG(MatVecArgs, k),
                                    ZK_ARG(MatVecArgs, rows), ZK_ARG(MatVecArgs, yStride), ZK_ARG(MatVecArgs, accumulate)};
    using E = MatVecExpertArgs;
    const auto expert = std::vector{ZK_ARG(E, w), ZK_ARG(E, act), ZK_ARG(E, y), ZK_ARG(E, ids), ZK_ARG(E, rowBytes),
                                    ZK_ARG(E, actStride), ZK_ARG(E, actSlotStride), ZK_ARG(E, expertBytes), ZK_ARG(E, k),
                                    ZK_ARG(E, rows), ZK_ARG(E, yStride), ZK_ARG(E, ySlotStride), ZK_ARG(E, idsStride)};
    using Mc = MatVecConvArgs;
    const auto conv = std::vector{ZK_ARG(Mc, w), ZK_ARG(Mc, act), ZK_ARG(Mc, rowBytes), ZK_ARG(Mc, actStride), ZK_ARG(Mc, k),
                                  ZK_ARG(Mc, rows), ZK_ARG(Mc, window), ZK_ARG(Mc, convW), ZK_ARG(Mc, out), ZK_ARG(Mc, state),
                                  ZK_ARG(Mc, taps), ZK_ARG(Mc, outStride), ZK_ARG(Mc, rowsBlock), ZK_ARG(Mc, slotFloats),
                                  ZK_ARG(Mc, kvRows)};
    using Mg = MatVecGateUpArgs;
    const auto gateUp = std::vector{ZK_ARG(Mg, w),        ZK_ARG(Mg, up), ZK_ARG(Mg, act),  ZK_ARG(Mg, y),      ZK_ARG(Mg, rowBytes),
                                    ZK_ARG(Mg, actStride), ZK_ARG(Mg, k),  ZK_ARG(Mg, rows), ZK_ARG(Mg, yStride)};
    using Eg = MatVecExpertGateUpArgs;
    const auto expertGateUp = std::vector{ZK_ARG(Eg, w),           ZK_ARG(Eg, up),      ZK_ARG(Eg, act),
                                          ZK_ARG(Eg, y),           ZK_ARG(Eg, ids),     ZK_ARG(Eg, rowBytes),
                                          ZK_ARG(Eg, actStride),   ZK_ARG(Eg, actSlotStride), ZK_ARG(Eg, expertBytes),
                                          ZK_ARG(Eg, k),           ZK_ARG(Eg, rows),    ZK_ARG(Eg, yStride),
                                          ZK_ARG(Eg, ySlotStride), ZK_ARG(Eg, idsStride)};
    for (const char* t : {"f32", "f16", "q8_0", "q4_k", "q5_k", "q6_k", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k",
                          "iq4_nl", "iq4_xs"}) {
        k.push_back({std::string("embed_") + t, embed, sizeof(EmbedArgs), kEmbedShape.workgroup});
        k.push_back({std::string("matvec_") + t, matvec, sizeof(MatVecArgs), kMatVecShape.workgroup});
        k.push_back({std::string("matvec_") + t + "_expert", expert, sizeof(E), kMatVecShape.workgroup});
        k.push_back({std::string("matvec_") + t + "_conv", conv, sizeof(Mc), kMatVecShape.workgroup});
        k.push_back({std::string("matvec_") + t + "_gate_up", gateUp, sizeof(Mg), kMatVecGateUpShape.workgroup});
        k.push_back({std::string("matvec_") + t + "_expert_gate_up", expertGateUp, sizeof(Eg), kMatVecGateUpShape.workgroup});
    }
    k.push_back({"rms_norm",
                 {ZK_ARG(RmsNormArgs, in), ZK_ARG(RmsNormArgs, weight), ZK_ARG(RmsNormArgs, out), ZK_ARG(RmsNormArgs, n),
                  ZK_ARG(RmsNormArgs, eps), ZK_ARG(RmsNormArgs, inStride), ZK_ARG(RmsNormArgs, outStride)},
                 sizeof(RmsNormArgs), kRmsNormShape.workgroup});
    k.push_back({"head_norm",
                 {ZK_ARG(HeadNormArgs, x), ZK_ARG(HeadNormArgs, weight), ZK_ARG(HeadNormArgs, heads), ZK_ARG(HeadNormArgs, headDim),
                  ZK_ARG(HeadNormArgs, eps), ZK_ARG(HeadNormArgs, stride)},
                 sizeof(HeadNormArgs), kHeadNormShape.workgroup});
    const auto rope = std::vector{ZK_ARG(RopeArgs, x), ZK_ARG(RopeArgs, state), ZK_ARG(RopeArgs, heads), ZK_ARG(RopeArgs, headDim),
                                  ZK_ARG(RopeArgs, ropeDim), ZK_ARG(RopeArgs, thetaScale), ZK_ARG(RopeArgs, stride),
                                  ZK_ARG(RopeArgs, freqFactors), ZK_ARG(RopeArgs, freqScale), ZK_ARG(RopeArgs, extFactor),
                                  ZK_ARG(RopeArgs, mscale), ZK_ARG(RopeArgs, corrLow), ZK_ARG(RopeArgs, corrHigh),
                                  ZK_ARG(RopeArgs, rows)};
    k.push_back({"rope_norm", rope, sizeof(RopeArgs), kRopeShape.workgroup});
    k.push_back({"rope_neox", rope, sizeof(RopeArgs), kRopeShape.workgroup});
    using Qr = QkRopeArgs;
    k.push_back({"qk_rope",
                 {ZK_ARG(Qr, q), ZK_ARG(Qr, k), ZK_ARG(Qr, v), ZK_ARG(Qr, qNorm), ZK_ARG(Qr, kNorm), ZK_ARG(Qr, eps), ZK_ARG(Qr, kCache),
                  ZK_ARG(Qr, vCache), ZK_ARG(Qr, state), ZK_ARG(Qr, heads), ZK_ARG(Qr, kvHeads), ZK_ARG(Qr, headDim),
                  ZK_ARG(Qr, ropeDim), ZK_ARG(Qr, thetaScale), ZK_ARG(Qr, qStride), ZK_ARG(Qr, kStride), ZK_ARG(Qr, vStride),
                  ZK_ARG(Qr, freqScale), ZK_ARG(Qr, extFactor), ZK_ARG(Qr, mscale), ZK_ARG(Qr, corrLow), ZK_ARG(Qr, corrHigh),
                  ZK_ARG(Qr, neox), ZK_ARG(Qr, slots), ZK_ARG(Qr, rows)},
                 sizeof(Qr), kQkRopeShape.workgroup});
    const auto quantize = std::vector{ZK_ARG(QuantizeArgs, in), ZK_ARG(QuantizeArgs, out), ZK_ARG(QuantizeArgs, n),
                                      ZK_ARG(QuantizeArgs, inStride), ZK_ARG(QuantizeArgs, outStride), ZK_ARG(QuantizeArgs, up),
                                      ZK_ARG(QuantizeArgs, normWeight), ZK_ARG(QuantizeArgs, normOut),
                                      ZK_ARG(QuantizeArgs, normOutStride), ZK_ARG(QuantizeArgs, eps), ZK_ARG(QuantizeArgs, gate),
                                      ZK_ARG(QuantizeArgs, gateStride), ZK_ARG(QuantizeArgs, headDim),
                                      ZK_ARG(QuantizeArgs, gatePerToken)};
    k.push_back({"quantize_q8_0", quantize, sizeof(QuantizeArgs), kQuantizeQ8_0Shape.workgroup});
    k.push_back({"quantize_q8_1", quantize, sizeof(QuantizeArgs), kQuantizeQ8_0Shape.workgroup});
    k.push_back({"quantize_q8_k", quantize, sizeof(QuantizeArgs), kQuantizeQ8_KShape.workgroup});
    const auto convert = std::vector{ZK_ARG(ConvertF16Args, in), ZK_ARG(ConvertF16Args, out), ZK_ARG(ConvertF16Args, n),
                                     ZK_ARG(ConvertF16Args, inStride), ZK_ARG(ConvertF16Args, outStride)};
    k.push_back({"quantize_f16", convert, sizeof(ConvertF16Args), kConvertF16Shape.workgroup});
    k.push_back({"quantize_bf16", convert, sizeof(ConvertF16Args), kConvertF16Shape.workgroup});
    k.push_back({"kv_store",
                 {ZK_ARG(KvStoreArgs, k), ZK_ARG(KvStoreArgs, v), ZK_ARG(KvStoreArgs, kCache), ZK_ARG(KvStoreArgs, vCache),
                  ZK_ARG(KvStoreArgs, state), ZK_ARG(KvStoreArgs, kvDim), ZK_ARG(KvStoreArgs, inStride), ZK_ARG(KvStoreArgs, slots),
                  ZK_ARG(KvStoreArgs, rows)},
                 sizeof(KvStoreArgs), kKvStoreShape.workgroup});
    using A = AttentionArgs;
    k.push_back({"attention",
                 {ZK_ARG(A, q), ZK_ARG(A, kCache), ZK_ARG(A, vCache), ZK_ARG(A, out), ZK_ARG(A, state), ZK_ARG(A, partial),
                  ZK_ARG(A, nHead), ZK_ARG(A, nHeadKv), ZK_ARG(A, headDim), ZK_ARG(A, kvStride), ZK_ARG(A, qStride),
                  ZK_ARG(A, outStride), ZK_ARG(A, scale), ZK_ARG(A, window), ZK_ARG(A, preScale), ZK_ARG(A, slots),
                  ZK_ARG(A, splits), ZK_ARG(A, rows)},
                 sizeof(A), kAttentionShape.workgroup});
    using AC = AttentionCombineArgs;
    k.push_back({"attention_combine",
                 {ZK_ARG(AC, partial), ZK_ARG(AC, out), ZK_ARG(AC, state), ZK_ARG(AC, nHead), ZK_ARG(AC, headDim),
                  ZK_ARG(AC, outStride), ZK_ARG(AC, window), ZK_ARG(AC, splits), ZK_ARG(AC, rows)},
                 sizeof(AC), kAttentionCombineShape.workgroup});
    for (const char* glu : {"swiglu", "geglu"})
        k.push_back({glu,
                     {ZK_ARG(SwiGluArgs, gate), ZK_ARG(SwiGluArgs, up), ZK_ARG(SwiGluArgs, out), ZK_ARG(SwiGluArgs, n),
                      ZK_ARG(SwiGluArgs, stride)},
                     sizeof(SwiGluArgs), kElementwiseShape.workgroup});
    k.push_back({"add",
                 {ZK_ARG(AddArgs, a), ZK_ARG(AddArgs, b), ZK_ARG(AddArgs, out), ZK_ARG(AddArgs, n), ZK_ARG(AddArgs, stride)},
                 sizeof(AddArgs), kElementwiseShape.workgroup});
    k.push_back({"add_bias",
                 {ZK_ARG(AddBiasArgs, x), ZK_ARG(AddBiasArgs, bias), ZK_ARG(AddBiasArgs, n), ZK_ARG(AddBiasArgs, stride)},
                 sizeof(AddBiasArgs), kElementwiseShape.workgroup});
    using T = MoeTopkArgs;
    k.push_back({"moe_topk",
                 {ZK_ARG(T, logits), ZK_ARG(T, ids), ZK_ARG(T, weights), ZK_ARG(T, nExpert), ZK_ARG(T, nUsed), ZK_ARG(T, logitsStride),
                  ZK_ARG(T, idsStride), ZK_ARG(T, normalize)},
                 sizeof(T), kMoeTopkShape.workgroup});
    using C = MoeCombineArgs;
    k.push_back({"moe_combine",
                 {ZK_ARG(C, down), ZK_ARG(C, ids), ZK_ARG(C, weights), ZK_ARG(C, out), ZK_ARG(C, n), ZK_ARG(C, nUsed),
                  ZK_ARG(C, downTokenStride), ZK_ARG(C, downSlotStride), ZK_ARG(C, idsStride), ZK_ARG(C, outStride),
                  ZK_ARG(C, accumulate)},
                 sizeof(C), kMoeCombineShape.workgroup});
    using Sa = MoeSharedAddArgs;
    k.push_back({"moe_shared_add",
                 {ZK_ARG(Sa, down), ZK_ARG(Sa, ids), ZK_ARG(Sa, weights), ZK_ARG(Sa, shared), ZK_ARG(Sa, gate), ZK_ARG(Sa, x),
                  ZK_ARG(Sa, out), ZK_ARG(Sa, n), ZK_ARG(Sa, nUsed), ZK_ARG(Sa, downTokenStride), ZK_ARG(Sa, downSlotStride),
                  ZK_ARG(Sa, idsStride), ZK_ARG(Sa, sharedStride), ZK_ARG(Sa, xStride), ZK_ARG(Sa, k), ZK_ARG(Sa, outStride)},
                 sizeof(Sa), kMoeSharedAddShape.workgroup});
    k.push_back({"argmax",
                 {ZK_ARG(ArgmaxArgs, logits), ZK_ARG(ArgmaxArgs, out), ZK_ARG(ArgmaxArgs, n), ZK_ARG(ArgmaxArgs, stride)},
                 sizeof(ArgmaxArgs), kArgmaxShape.workgroup});
    using S = SampleArgs;
    k.push_back({"sample_token",
                 {ZK_ARG(S, logits), ZK_ARG(S, scratch), ZK_ARG(S, state), ZK_ARG(S, tokens), ZK_ARG(S, ring), ZK_ARG(S, chain),
                  ZK_ARG(S, n), ZK_ARG(S, ringCapacity)},
                 sizeof(S), kSampleWorkgroup});
    using Cv = SsmConvArgs;
    k.push_back({"ssm_conv",
                 {ZK_ARG(Cv, x), ZK_ARG(Cv, window), ZK_ARG(Cv, w), ZK_ARG(Cv, out), ZK_ARG(Cv, state), ZK_ARG(Cv, channels),
                  ZK_ARG(Cv, taps), ZK_ARG(Cv, tokens), ZK_ARG(Cv, inStride), ZK_ARG(Cv, outStride), ZK_ARG(Cv, rows),
                  ZK_ARG(Cv, slotFloats), ZK_ARG(Cv, kvRows), ZK_ARG(Cv, rowOfGroup)},
                 sizeof(Cv), kSsmConvShape.workgroup});
    using D = DeltaNetArgs;
    k.push_back({"delta_net",
                 {ZK_ARG(D, qkv), ZK_ARG(D, alpha), ZK_ARG(D, beta), ZK_ARG(D, out), ZK_ARG(D, S), ZK_ARG(D, a), ZK_ARG(D, dtBias),
                  ZK_ARG(D, state), ZK_ARG(D, d), ZK_ARG(D, keyHeads), ZK_ARG(D, tokens), ZK_ARG(D, inStride),
                  ZK_ARG(D, gateStride), ZK_ARG(D, outStride), ZK_ARG(D, eps), ZK_ARG(D, qScale), ZK_ARG(D, rows),
                  ZK_ARG(D, slotFloats), ZK_ARG(D, kvRows), ZK_ARG(D, rowOfGroup)},
                 sizeof(D), kDeltaNetShape.workgroup});
    using G = GatedNormArgs;
    k.push_back({"gated_norm",
                 {ZK_ARG(G, x), ZK_ARG(G, z), ZK_ARG(G, w), ZK_ARG(G, out), ZK_ARG(G, n), ZK_ARG(G, eps), ZK_ARG(G, inStride),
                  ZK_ARG(G, gateStride), ZK_ARG(G, outStride)},
                 sizeof(G), kGatedNormShape.workgroup});
    using Sp = SplitGateArgs;
    k.push_back({"split_gate",
                 {ZK_ARG(Sp, in), ZK_ARG(Sp, out), ZK_ARG(Sp, gate), ZK_ARG(Sp, headDim), ZK_ARG(Sp, inStride),
                  ZK_ARG(Sp, outStride), ZK_ARG(Sp, gateStride)},
                 sizeof(Sp), kSplitGateShape.workgroup});
    using Sg = SigmoidGateArgs;
    k.push_back({"sigmoid_gate",
                 {ZK_ARG(Sg, x), ZK_ARG(Sg, gate), ZK_ARG(Sg, out), ZK_ARG(Sg, n), ZK_ARG(Sg, stride), ZK_ARG(Sg, gateStride),
                  ZK_ARG(Sg, perToken)},
                 sizeof(Sg), kSigmoidGateShape.workgroup});
    k.push_back({"gather_rows",
                 {ZK_ARG(GatherRowsArgs, x), ZK_ARG(GatherRowsArgs, wanted), ZK_ARG(GatherRowsArgs, width),
                  ZK_ARG(GatherRowsArgs, stride), ZK_ARG(GatherRowsArgs, count)},
                 sizeof(GatherRowsArgs), kGatherRowsShape.workgroup});
    k.push_back({"copy_words", {ZK_ARG(CopyWordsArgs, src), ZK_ARG(CopyWordsArgs, dst), ZK_ARG(CopyWordsArgs, n)},
                 sizeof(CopyWordsArgs), kCopyWordsShape.workgroup});
    return k;
}

// Kernels read graph::TokenState through a pointer: the layouts must agree.
static_assert(sizeof(TokenStateLayout) == sizeof(graph::TokenState));
static_assert(offsetof(TokenStateLayout, position) == offsetof(graph::TokenState, position));
static_assert(offsetof(TokenStateLayout, kvLength) == offsetof(graph::TokenState, kvLength));

TEST(CodeObjects, BothTargetsAreEmbedded) {
    std::set<std::string> targets;
    for (const auto& o : embeddedCodeObjects()) targets.insert(std::string(o.target));
    EXPECT_EQ(targets, (std::set<std::string>{"gfx1100", "gfx1201"}));
    EXPECT_TRUE(embeddedCodeObject("gfx9000").empty());
    EXPECT_NE(kernelSource().find("ZK_KERNEL(64) void moe_topk"), std::string_view::npos);
    EXPECT_EQ(kernelSource().find("#include \""), std::string_view::npos) << "includes are inlined for PoCL";
}

class EachTarget : public ::testing::TestWithParam<std::string> {};

TEST_P(EachTarget, MetadataMatchesTheKernargStructs) {
    const CodeObject co = CodeObject::parse(embeddedCodeObject(GetParam()), "embedded " + GetParam());
    EXPECT_EQ(co.target(), GetParam());
    EXPECT_EQ(gfxTargetOfMach(co.elfFlags() & 0xff), GetParam());
    const auto expected = expectedKernels();
    EXPECT_EQ(co.kernels().size(), expected.size());
    for (const auto& want : expected) {
        SCOPED_TRACE(want.name);
        const KernelInfo* k = co.find(want.name);
        ASSERT_NE(k, nullptr);
        ASSERT_EQ(k->args.size(), want.args.size());
        for (size_t i = 0; i < want.args.size(); ++i) {
            EXPECT_EQ(k->args[i].name, want.args[i].name) << "argument " << i;
            EXPECT_EQ(k->args[i].offset, want.args[i].offset) << want.args[i].name;
            EXPECT_EQ(k->args[i].size, want.args[i].size) << want.args[i].name;
            EXPECT_NE(k->args[i].kind, ArgKind::Hidden);
        }
        EXPECT_LE(k->kernargSegmentSize, want.structSize);
        EXPECT_EQ((k->kernargSegmentSize + 7) / 8 * 8, want.structSize);
        EXPECT_EQ(k->kernargSegmentAlign, 8u);
        EXPECT_EQ(k->reqdWorkgroupSize, (std::array<uint32_t, 3>{want.workgroup, 1, 1}));
        EXPECT_EQ(k->maxFlatWorkgroupSize, want.workgroup);
    }
}

// What a PM4 dispatcher relies on: wave32, kernarg pointer in user SGPRs 0-1, no scratch,
// LDS left for the dispatcher to put into RSRC2, entries 256-byte aligned inside the image.
TEST_P(EachTarget, DescriptorsAreLaunchableByAPm4Dispatcher) {
    const CodeObject co = CodeObject::parse(embeddedCodeObject(GetParam()), "embedded " + GetParam());
    const std::vector<uint8_t> image = co.loadImage();
    EXPECT_EQ(image.size(), co.imageSize());
    for (const auto& k : co.kernels()) {
        SCOPED_TRACE(k.name);
        const auto& d = k.descriptor;
        EXPECT_EQ(k.wavefrontSize, 32u);
        EXPECT_TRUE(d.wave32());
        EXPECT_TRUE(d.kernargPtrEnabled());
        EXPECT_EQ(d.kernargPtrSgpr(), 0u);
        EXPECT_GE(d.userSgprCount(), 2u);
        EXPECT_LE(d.userSgprCount(), 16u);
        EXPECT_FALSE(d.scratchEnabled());
        EXPECT_EQ(k.privateSegmentFixedSize, 0u);
        EXPECT_FALSE(d.usesDynamicStack());
        EXPECT_TRUE(d.workgroupIdEnabled(0));
        EXPECT_EQ((d.computePgmRsrc2 >> 15) & 0x1ffu, 0u) << "LDS_SIZE is the dispatcher's to fill";
        EXPECT_LE(k.groupSegmentFixedSize, 64u * 1024);
        EXPECT_EQ(k.ldsGranules(), (k.groupSegmentFixedSize + 511) / 512);
        EXPECT_EQ(k.entryAddress % 256, 0u);
        EXPECT_EQ(co.findByEntry(k.entryAddress), &k);
        ASSERT_LT(k.entryAddress, image.size());
        ASSERT_LE(k.descriptorAddress + 64, image.size());
        const auto again = KernelDescriptor::decode(std::span<const uint8_t, 64>(image.data() + k.descriptorAddress, 64));
        EXPECT_EQ(again.computePgmRsrc1, d.computePgmRsrc1);
        EXPECT_EQ(again.kernelCodeEntryByteOffset, d.kernelCodeEntryByteOffset);
    }
    EXPECT_TRUE(co.find("attention")->descriptor.workgroupIdEnabled(1));
    EXPECT_TRUE(co.find("attention")->descriptor.workgroupIdEnabled(2));
    EXPECT_TRUE(co.find("matvec_q4_k_expert")->descriptor.workgroupIdEnabled(2));
    EXPECT_THROW(co.kernel("no_such_kernel"), CodeObjectError);
    EXPECT_EQ(co.findByEntry(co.find("add")->entryAddress + 4), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Targets, EachTarget, ::testing::Values("gfx1100", "gfx1201"));

std::vector<uint8_t> readFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string parseError(std::span<const uint8_t> bytes, const LaunchSupport& support) {
    try {
        CodeObject::parse(bytes, "refused_kernels.hsaco", support);
    } catch (const CodeObjectError& e) {
        return e.what();
    }
    return "";
}

// Built from tests/kernels/refused_kernels.cl by tests/kernels/meson.build.
TEST(CodeObjects, RefusesKernelsTheLauncherCannotLaunch) {
    const auto bytes = readFile(ZK_REFUSED_HSACO);
    ASSERT_FALSE(bytes.empty()) << ZK_REFUSED_HSACO;
    const std::string hidden = parseError(bytes, {});
    EXPECT_NE(hidden.find("kernel 'uses_hidden' needs hidden argument hidden_block_count_x"), std::string::npos) << hidden;
    LaunchSupport support;
    support.hiddenArgs = {"hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z", "hidden_group_size_x",
                          "hidden_group_size_y", "hidden_group_size_z", "hidden_remainder_x", "hidden_remainder_y",
                          "hidden_remainder_z", "hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z",
                          "hidden_grid_dims"};
    const std::string scratch = parseError(bytes, support);
    EXPECT_NE(scratch.find("kernel 'uses_scratch' needs"), std::string::npos) << scratch;
    EXPECT_NE(scratch.find("scratch"), std::string::npos) << scratch;
    support.scratch = true;
    const CodeObject co = CodeObject::parse(bytes, "refused_kernels.hsaco", support);
    EXPECT_EQ(co.kernel("uses_hidden").args.size(), 14u);
    EXPECT_GT(co.kernel("uses_scratch").privateSegmentFixedSize, 0u);
}

}  // namespace
}  // namespace zinc::kernels::test
