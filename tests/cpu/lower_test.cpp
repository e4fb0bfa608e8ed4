// graph::lower and graph::fuse (graph/lower.h) on the golden models: the Quantize steps are
// where every quantized weight needs them and nowhere else, every graph op is carried out once
// and in order, and fusion replaces exactly the sequences it names.
#include <gtest/gtest.h>

#include <map>

#include "graph/graph.h"
#include "graph/lower.h"
#include "model/model.h"
#include "tests/test_paths.h"

namespace zinc {
namespace {

using graph::ActFormat;
using graph::LoweredOp;
using graph::OpKind;

struct LoweredModel {
    std::unique_ptr<model::Model> model;
    graph::Graph graph;
};

LoweredModel loadLowered(const std::string& file) {
    LoweredModel l;
    l.model = model::Model::load(test::sharedPath("models/" + file));
    l.graph = graph::buildDecodeGraph(l.model->config(), l.model->weights());
    return l;
}

ActFormat formatOf(const model::WeightRef& w) { return graph::actFormatOf(w.type).value(); }

// Each graph op is carried out by exactly one lowered op, in graph order.
void expectCoversEveryOpOnce(const graph::Lowered& lowered) {
    size_t next = 0;
    for (const LoweredOp& l : lowered.ops) {
        if (l.count == 0) continue;
        EXPECT_EQ(l.first, next) << l.op.label;
        next = l.first + l.count;
    }
    EXPECT_EQ(next, lowered.graph->ops.size());
}

// Replays the lowered ops: every quantized read finds its input in the format's buffer, put
// there by a Quantize step and not overwritten since; no Quantize step is redundant.
void expectQuantizeSteps(const graph::Lowered& lowered) {
    std::map<graph::BufferId, graph::BufferId> holds;  // act buffer -> the buffer it holds quantized
    auto dropCopiesOf = [&](graph::BufferId written) {
        for (auto& [act, source] : holds)
            if (source == written) source = graph::kNoBuffer;
    };
    for (const LoweredOp& l : lowered.ops) {
        const graph::Op& op = l.op;
        if (op.kind == OpKind::Quantize) {
            EXPECT_NE(holds[l.quantized], op.in) << op.label << ": quantized twice";
            holds[l.quantized] = op.in;
            continue;
        }
        for (const auto& [w, act] : {std::pair{op.weight, l.act}, std::pair{op.upWeight, l.upAct}}) {
            if (!w || op.kind == OpKind::RmsNorm || op.kind == OpKind::HeadNorm || op.kind == OpKind::Embed) continue;
            if (formatOf(*w) == ActFormat::F32) {
                EXPECT_EQ(act, graph::kNoBuffer) << op.label;
            } else {
                ASSERT_NE(act, graph::kNoBuffer) << op.label;
                EXPECT_EQ(act, lowered.actBuffer[size_t(formatOf(*w))]) << op.label;
                EXPECT_EQ(holds[act], op.in) << op.label << " reads a stale quantized copy";
            }
        }
        for (graph::BufferId written : graph::writesOf(op)) dropCopiesOf(written);
        if (op.kind == OpKind::MoeFfn && l.downFormat != ActFormat::F32) holds[lowered.actBuffer[size_t(l.downFormat)]] = graph::kNoBuffer;
    }
}

TEST(Lower, QuantizeStepsLastRowCutAndScratchBuffers) {
    for (const char* file : {"qwen3-tiny.gguf", "qwen3moe-tiny.gguf", "stories260K.gguf"}) {
        SCOPED_TRACE(file);
        const LoweredModel m = loadLowered(file);
        const graph::Lowered lowered = graph::lower(m.graph, formatOf);
        expectCoversEveryOpOnce(lowered);
        expectQuantizeSteps(lowered);
        for (const LoweredOp& l : lowered.ops)
            EXPECT_EQ(l.lastRowOnly, l.op.layer < 0 && l.op.kind != OpKind::Embed) << l.op.label;
        ASSERT_EQ(lowered.scratch.size(), lowered.buffers.size());
        for (size_t b = 0; b < lowered.buffers.size(); ++b)
            EXPECT_EQ(lowered.scratch[b] == graph::Scratch::None, b < m.graph.buffers.size()) << lowered.buffers[b].name;
        const bool moe = m.model->config().isMoe();
        EXPECT_EQ(lowered.routerLogits != graph::kNoBuffer, moe);
        EXPECT_EQ(lowered.expertGate != graph::kNoBuffer, moe);
    }
}

TEST(Lower, StoriesIsF32AndGetsNoQuantizeStep) {
    const LoweredModel m = loadLowered("stories260K.gguf");
    const graph::Lowered lowered = graph::lower(m.graph, formatOf);
    EXPECT_EQ(lowered.ops.size(), m.graph.ops.size());
}

std::map<OpKind, int> kinds(const graph::Lowered& lowered) {
    std::map<OpKind, int> n;
    for (const LoweredOp& l : lowered.ops) ++n[l.op.kind];
    return n;
}

// The MoE op quantizes the expert rows into a scratch of its own on every tier, so the FFN
// input's quantized copy outlives it: qwen35moe's shared expert reads it without a second
// Quantize of that input in its layer.
TEST(Lower, TheSharedExpertReadsTheFfnInputsCopy) {
    const LoweredModel m = loadLowered("qwen35moe-tiny.gguf");
    const graph::Lowered lowered = graph::lower(m.graph, formatOf);
    int moes = 0, quantizedAgain = 0, sharedReads = 0;
    for (size_t i = 0; i < lowered.ops.size(); ++i) {
        const LoweredOp& moe = lowered.ops[i];
        if (moe.op.kind != OpKind::MoeFfn) continue;
        ++moes;
        for (size_t j = i + 1; j < lowered.ops.size() && lowered.ops[j].op.layer == moe.op.layer; ++j) {
            const LoweredOp& l = lowered.ops[j];
            quantizedAgain += l.op.kind == OpKind::Quantize && l.op.in == moe.op.in ? 1 : 0;
            sharedReads += l.op.kind == OpKind::MatMul && l.op.in == moe.op.in && l.act == moe.act && l.act != graph::kNoBuffer ? 1 : 0;
        }
    }
    EXPECT_EQ(moes, m.model->config().nLayer);
    EXPECT_EQ(quantizedAgain, 0);
    EXPECT_EQ(sharedReads, 2 * moes) << "the shared expert's gate and up read the experts' copy";
}

TEST(Fuse, AcceptingEverythingFusesEachLayerAsTheTableSays) {
    const LoweredModel m = loadLowered("qwen3-tiny.gguf");
    const int layers = m.model->config().nLayer;
    graph::Lowered lowered = graph::lower(m.graph, formatOf);
    const auto before = kinds(lowered);
    graph::fuse(lowered, [](const LoweredOp&) { return true; });
    expectCoversEveryOpOnce(lowered);
    auto n = kinds(lowered);
    EXPECT_EQ(n[OpKind::QkRopeAttention], layers);
    EXPECT_EQ(n[OpKind::HeadNorm] + n[OpKind::Rope] + n[OpKind::Attention], 0);
    EXPECT_EQ(n[OpKind::GateUpSwiGlu], layers);
    EXPECT_EQ(n[OpKind::MatMulAdd], 2 * layers);  // attn_output and ffn_down into the residual
    EXPECT_EQ(n[OpKind::Add], 0);
    // Each layer's two norms quantize their output (one Quantize step each fewer).
    EXPECT_EQ(n[OpKind::NormQuantize], 2 * layers + 1);
    EXPECT_EQ(n[OpKind::Quantize], before.at(OpKind::Quantize) - n[OpKind::NormQuantize]);
    for (const LoweredOp& l : lowered.ops)
        if (l.op.kind == OpKind::QkRopeAttention) {
            EXPECT_NE(l.qNorm, nullptr);
            EXPECT_NE(l.kNorm, nullptr);
            EXPECT_EQ(l.count, 5u) << "q/k norm, q/k rope, attention";
        }
}

TEST(Fuse, DecliningEverythingChangesNothing) {
    const LoweredModel m = loadLowered("qwen3moe-tiny.gguf");
    graph::Lowered lowered = graph::lower(m.graph, formatOf);
    const auto before = kinds(lowered);
    graph::fuse(lowered, [](const LoweredOp&) { return false; });
    EXPECT_EQ(kinds(lowered), before);
}

TEST(Fuse, TheExpertFfnAddsIntoTheResidual) {
    const LoweredModel m = loadLowered("qwen3moe-tiny.gguf");
    graph::Lowered lowered = graph::lower(m.graph, formatOf);
    graph::fuse(lowered, [](const LoweredOp& l) { return l.op.kind == OpKind::MoeFfnAdd; });
    auto n = kinds(lowered);
    EXPECT_EQ(n[OpKind::MoeFfnAdd], m.model->config().nLayer);
    EXPECT_EQ(n[OpKind::MoeFfn], 0);
    for (const LoweredOp& l : lowered.ops)
        if (l.op.kind == OpKind::MoeFfnAdd) {
            EXPECT_EQ(l.op.out, m.graph.residual);
        }
}

// qwen35moe: the DeltaNet output norm and the attention output gate quantize on the way into
// their projection; the shared expert's input gate, its sigmoid and both adds join the expert
// sum (MoeExperts + MoeSharedAdd); no Add is left; the conv runs in attn_qkv's matvec.
TEST(Fuse, Qwen35MoeGatesQuantizeAndTheSharedExpertJoinsTheExpertSum) {
    const LoweredModel m = loadLowered("qwen35moe-tiny.gguf");
    const auto& c = m.model->config();
    int recurrent = 0;
    for (int il = 0; il < c.nLayer; ++il) recurrent += c.hybrid.recurrent(il) ? 1 : 0;
    graph::Lowered lowered = graph::lower(m.graph, formatOf);
    graph::fuse(lowered, [](const LoweredOp&) { return true; });
    expectCoversEveryOpOnce(lowered);
    auto n = kinds(lowered);
    EXPECT_EQ(n[OpKind::GatedNormQuantize], recurrent);
    EXPECT_EQ(n[OpKind::SigmoidGateQuantize], c.nLayer - recurrent);
    EXPECT_EQ(n[OpKind::GatedNorm] + n[OpKind::SigmoidGate] + n[OpKind::Add] + n[OpKind::MoeFfn], 0);
    EXPECT_EQ(n[OpKind::MoeExperts], c.nLayer);
    EXPECT_EQ(n[OpKind::MoeSharedAdd], c.nLayer);
    EXPECT_EQ(n[OpKind::MatMulConv], recurrent);  // attn_qkv with its conv
    EXPECT_EQ(n[OpKind::SsmConv], 0);
    for (const LoweredOp& l : lowered.ops) {
        if (l.op.kind == OpKind::MoeSharedAdd) {
            EXPECT_EQ(l.op.out, m.graph.residual);
            EXPECT_EQ(l.count, 4u) << "input gate, sigmoid, shared add, residual add";
        }
        if (l.op.kind == OpKind::MatMulConv) {
            EXPECT_EQ(m.graph.ops[l.first].label, "attn_qkv");
            EXPECT_EQ(l.count, 2u) << "the projection and its conv";
            EXPECT_NE(l.op.convWeight, nullptr);
            EXPECT_NE(l.op.state, graph::kNoBuffer);
        }
    }
    // Declining the tail leaves the experts' op whole: both or neither.
    graph::Lowered declined = graph::lower(m.graph, formatOf);
    graph::fuse(declined, [](const LoweredOp& l) { return l.op.kind != OpKind::MoeSharedAdd; });
    auto d = kinds(declined);
    EXPECT_EQ(d[OpKind::MoeExperts], 0);
    EXPECT_EQ(d[OpKind::MoeFfn], c.nLayer);
}

// qwen2's q/k/v biases, llama3's rope_freqs, gemma3's windows and GeGLU: fusing everything
// leaves each op that carries one of them unfused, so no fused kernel drops it.
TEST(Fuse, OpsWithFieldsTheFusedKernelsLackStayUnfused) {
    for (const char* file : {"qwen2-tiny.gguf", "llama3-tiny.gguf", "gemma3-tiny.gguf"}) {
        const LoweredModel m = loadLowered(file);
        graph::Lowered lowered = graph::lower(m.graph, formatOf);
        graph::fuse(lowered, [](const LoweredOp&) { return true; });
        expectCoversEveryOpOnce(lowered);
        size_t withField = 0;
        for (const LoweredOp& l : lowered.ops)
            for (size_t g = l.first; g < l.first + l.count; ++g) {
                const graph::Op& op = m.graph.ops[g];
                if (!op.bias && op.window == 0 && !op.gelu && !(op.kind == OpKind::Rope && op.weight)) continue;
                ++withField;
                EXPECT_EQ(l.op.kind, op.kind) << file << ": " << op.label << " fused into " << graph::opKindName(l.op.kind);
            }
        EXPECT_GT(withField, 0u) << file;
    }
}

}  // namespace
}  // namespace zinc
