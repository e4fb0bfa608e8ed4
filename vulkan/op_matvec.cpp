// Weight times activations. Inputs are first put into the activation format the weight type
// multiplies against (quantize.comp, the cpu tier's formats), once per buffer and format;
// the matvec variant of the weight type then reads each weight once per token tile.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "vulkan/op_matmul_f16.h"
#include "vulkan/ops.h"
#include "vulkan/vk_error.h"

namespace zinc::vk {

struct QuantizePc {
    VkDeviceAddress x, x2, out;
    uint32_t k, inStride, outStride, mode, prologue;  // prologue: 0 none, 1 SwiGLU, 2 sigmoid gate, 3 gated norm
    VkDeviceAddress normW, normOut;
    float eps;
    uint32_t norm, x2Stride, aux;
    uint32_t pad = 0;
    VkDeviceAddress signal = 0;  // quantize_signal: the site (PlanContext::Chain)
};

namespace {

using model::GgmlType;

struct MatVecPc {
    VkDeviceAddress w, w32, act, out, ids, w2, w2_32;
    uint32_t k, m, rowBytes, actStride, outStride, nTok, sliceBytes, expertMode, actDiv, accumulate, groupsX;
    VkDeviceAddress wait = 0;  // matvec_rows_chain: the site and the workgroups it counts to
    uint32_t waitGroups = 0;
};

struct MatMulPc {
    VkDeviceAddress w, w32, act, out, w2, w2_32;
    uint32_t k, m, rowBytes, actStride, outStride, nTok, accumulate;
    VkDeviceAddress group;
    uint32_t sliceBytes, actDiv, orderAt;
};

constexpr uint32_t kTokenTile = 8;        // tokens per matvec workgroup in batched prefill
constexpr uint32_t kMatMulTile = 64;       // matmul.comp's rows and tokens per workgroup (matmul_coopmat: coopmatTileFor)

// Rows per workgroup: more rows share each activation load; fewer keep a small matrix
// spread over the whole GPU.
uint32_t rowsPerGroup(int64_t m) { return m >= 8192 ? 4 : m >= 4096 ? 2 : 1; }

// matvec_rows.comp's shape: `threads` = alongK x row groups, each row group `rows` rows, tokens
// in tiles of `tile`, activations staged `units` 32-value units at a time. Per (row, token) its
// sums depend on k alone (alongK, and units a multiple of it), so a row gets the same bits in a
// tile of 8 as alone.
struct RowsConfig {
    uint32_t threads, alongK, rows, tile, units, stage, prefetch;
};
RowsConfig rowsConfig(uint32_t k, uint32_t m, uint32_t tokens, GgmlType type, bool expert, bool up, bool dot4,
                      const MatVecOp::Kernel& choice) {
    const uint32_t nUnits = k / 32;
    const uint32_t alongK = nUnits >= 32 ? 32 : nUnits >= 16 ? 16 : 8;
    const uint32_t tile = std::min(tokens, kTokenTile);
    // 16 rows a workgroup for a token tile (the tile's activations staged once for them), 4 for
    // one token. H200, bench --kernels on Qwen3-8B / 30B-A3B Q4_K_M, a decode step's matvecs with
    // their barriers: one token 4,219 / 2,260 us at 2 rows a group, 3,673 / 2,213 at 1 (4,342 /
    // 2,469 with v1); 8 tokens 10,372 / 7,999 at 2 rows, 12,589 / 7,759 at 1 (17,149 with v1).
    // A tile of 2 (two sequences decoding together) runs as one token does, 128 threads a
    // workgroup, 1 row a group, no staging, 2 units in flight, in matvec_rows_tiles (a module of
    // its own: rowsShader). H200, Qwen3-8B Q4_K_M, bench --sequences 2 -p 64 -n 128 -r 2, twice
    // (run 62): 297.5 / 298.5 tok/s staged, 384.0 / 383.8 so (one sequence: 246.8 / 248.1). From
    // 3 tokens on the staging wins (3: 482 staged, 500 / 483 with 2 / 1 rows a group; 4: 610
    // against 505 / 550): a tile's activation loads in flight cost registers (run 61: 128-195 at 4
    // tokens, 211-255 at 8). Without integer dot products (4 multiplies a product) those
    // registers make RADV spill on gfx1100 (radv_compile_test): that build keeps the staging.
    const bool pairTile = tile == 2 && !expert && dot4;
    const uint32_t threads = choice.threads ? choice.threads : tile > 1 && !pairTile ? 256 : 128;
    // A SwiGLU pair in a token tile takes 1 row a group (gate's and up's: 2 weight units and
    // 2 x 8 sums a thread, a single matrix's load at 2 rows). At 2 rows a group (4 units, 32
    // sums) it was a third of an 8-row step: H200, Qwen3-8B Q4_K_M, bench --sequences 8 -p 64
    // -n 128 -r 2, twice (run 144): 859.6 / 861.3 tok/s at 2 rows, 951.3 / 947.9 at 1 (4
    // sequences 593.9 -> 651.7); the pair alone at 8 tokens (bench --kernels) 63.6 -> 53.9 us.
    // Other shapes of it lost: 128 threads 821.6 / 829.2, 64 units a pass 874.8 / 872.4, 512
    // threads 936.7 / 928.4. (At 2 rows RADV/ACO also spilled Q5_K and Q2_K pairs on gfx1100:
    // 132 VGPRs, 14 to scratch; tests/vulkan/radv_compile_test.cpp.) Rows a group change no bits.
    // Since then steps of 3 or more sequences run gate and up apart (faster still, run 146;
    // GraphRecorder::loweredFor): a pair in a tile of 3+ is now a short prefill batch's.
    const bool swiGluInTile = up && tile > 1;
    // One token: 1 row a group. (A one-token Q4_K pair of 8,192 rows or more took 2, Qwen3-8B's
    // gate+up 23.63 -> 22.04 us with its barrier, runs 112-113; since gate and up of that size
    // run apart in a one-token step, GraphRecorder::loweredFor, no plan records such a pair.)
    const uint32_t rows = choice.rows ? choice.rows : tile > 1 && !swiGluInTile ? 2 : 1;
    // Shared words per staged unit: per token 8 quants, the scale, the sum and the two half sums
    // (at most); about 12 KiB in all. A multiple of alongK: each thread's units stay the same.
    // One token reads its activations beside its weights: a staging pass would put an L2 round
    // trip and a barrier before the first weight load, for no reuse across tokens. A tile
    // stages them (stage 1), a pass of units at a time. A double-buffered staging (the next
    // pass loaded while this one multiplies) was slower and is gone: H200, Qwen3-8B Q4_K_M,
    // 8 sequences decoding together (bench --sequences 8, best of 2) 709.7 tok/s with it
    // against 748.0 without, the lm_head of a step 895 -> 649 us; Qwen3-30B-A3B 618.0 / 611.5.
    const uint32_t perUnit = tile * 12;
    const uint32_t budget = (12u << 10) / 4 - threads;
    const uint32_t stage = choice.stage >= 0 ? uint32_t(choice.stage) : tile == 1 || pairTile ? 0 : 1;
    // A chosen `c` is held to 32 KiB of staging (NVIDIA's Vulkan driver allows 48 KiB a
    // workgroup, RADV 64); the default stays under the tier's 16 KiB minimum.
    const uint32_t most = stage ? ((32u << 10) / 4 - threads) / perUnit : nUnits;
    const uint32_t fit = std::min(choice.units ? choice.units : stage ? budget / perUnit : nUnits, most);
    // A staged pass loads all its weight units (units / alongK a thread) before its barrier:
    // without integer dot products more than one a thread makes RADV spill (gfx1100).
    const uint32_t units = stage && !dot4 && !choice.units ? alongK : std::max(alongK, fit / alongK * alongK);
    // One token (stage 0): Q4_K rows keep 2 units a thread in flight. A matvec between two
    // barriers waits a memory round trip per unit it loads in turn; H200, bench --kernels on
    // Qwen3-8B Q4_K_M, with the barrier: attn_k 6.44 -> 4.45 us, attn_q 7.29 -> 6.68,
    // ffn_down 16.18 -> 12.80, gate+up 20.90 -> 20.02. Q6_K (18 loads a unit already) gained
    // nothing and its lm_head lost (200 -> 218 us); expert slices lost (30B-A3B gate+up 7.96 ->
    // 8.82); 4 in flight lost everywhere (registers). Once rd32x8 lost its branch (Q6_K's loads
    // no longer issued twice), Qwen3-8B's Q6_K ffn_down (4,096 rows) gained (run 112, with the
    // barrier after it: 22.44 -> 21.40 us; run 114, per decode token: 892 -> 842 us with the
    // Q4_K ones), not its lm_head (183.2 -> 186.7 us: 151,936 rows fill the GPU without them);
    // smaller Q6_K matrices lost in decode though they gained alone (Qwen3-0.6B's 1,024-row
    // attn_v and ffn_down, the Qwen3.6 shape's 2,048-row shared-expert ffn_down: 0.6B 753.8 ->
    // 745.8 tok/s, the Qwen3.6 shape 254.3 -> 249.8, runs 113-114): so from 4,096 rows to
    // 65,535. Not a SwiGLU pair (RADV spills it on gfx1100).
    // A tile of 2 keeps 2 units in flight for every type (run 62 measured them so).
    const bool q6InFlight = type == GgmlType::Q6_K && m >= 4096 && m < 65536 && !up;
    const bool inFlight = stage == 0 && (pairTile || (tile == 1 && !expert && (type == GgmlType::Q4_K || q6InFlight)));
    const uint32_t prefetch = choice.prefetch ? choice.prefetch : inFlight ? 2 : 1;
    return {threads, alongK, rows, tile, std::min(units, (nUnits + alongK - 1) / alongK * alongK), stage, prefetch};
}

// Several tokens on a matrix of under 1 MiB with at most 512 rows or columns: a workgroup a token,
// as one token runs (the weights read again per token, from L2), not the staged token tile,
// whose staging passes and barriers cost such a matrix more than its loads; the same bits (a
// row's sums depend on k alone). H200, make-model Q4_K_M, bench --sequences N -p 64 -n 128 -r 2
// --gpu-greedy: the Qwen3.6 shape (its shared expert, k, v, alpha, beta) 8 sequences 839.3 ->
// 884.4 / 886.4 tok/s, 4 sequences 613.3 -> 641.4 / 646.7 (run 230, every matrix under 1.1 MB);
// with 2 sequences the router's split form alone (op_moe.cpp) 364.6, with these untiled too 388.8
// (runs 231-232). Qwen3-8B (no matrix that small) unchanged; its 2.4 MB k and v untiled:
// 1,266.9 / 1,269.2 -> 1,228.3 / 1,232.5. Qwen3-0.6B's 1,024 x 1,024 k and v untiled: 8
// sequences 3,645-3,683 -> 3,593 (run 231), so they stay tiled. ZINC_VK_ROWS_UNTILED_BYTES=N
// moves the bytes' bound, for A/B runs (read per call).
bool untiledInRows(const model::WeightRef& w, uint32_t tokens) {
    const char* v = std::getenv("ZINC_VK_ROWS_UNTILED_BYTES");
    const uint64_t below = v && *v ? std::strtoull(v, nullptr, 10) : uint64_t{1} << 20;
    return tokens > 1 && std::min(w.rows, w.cols) <= 512 && uint64_t(w.rowBytes) * uint64_t(w.rows) < below;
}

uint32_t actRowWords(ActFormat mode, uint32_t k) {
    return graph::isEightBit(mode) ? k / 4 + k / 16 : k;
}

// Rows from `base`, `strideBytes` apart, all at 16-byte boundaries: the shaders may read them 16
// bytes a load (matvec_rows' VEC and ACT4, matmul_coopmat's VEC and ACT4, matvec's VEC4).
bool rows16(VkDeviceAddress base, uint64_t strideBytes) { return base % 16 == 0 && strideBytes % 16 == 0; }

}  // namespace

// Threads along k: enough for every 32-value unit of a row, 32 to 128.
uint32_t MatVecOp::matVecThreads(int64_t k) {
    uint32_t wg = 32;
    while (wg < 128 && wg * 32 < k) wg *= 2;
    return wg;
}

MatVecOp::MatVecOp(PipelineFactory& pipelines, bool integerDotProduct)
    : pipelines_(pipelines),
      quantize_(pipelines.get(Shader::Quantize)),
      matVec_(integerDotProduct ? Shader::MatVecDot4 : Shader::MatVec),
      matMul_(pipelines.caps().coopmatDequant              ? (integerDotProduct ? Shader::MatMulDot4 : Shader::MatMul)
              : pipelines.caps().cooperativeMatrix         ? Shader::MatMulCoopmat
              : pipelines.caps().cooperativeMatrixEmulated ? Shader::MatMulCoopmatEmulated
              : integerDotProduct                          ? Shader::MatMulDot4
                                                           : Shader::MatMul) {
    const auto& caps = pipelines.caps();
    chains_ = caps.vulkanMemoryModel;
    if (caps.coopmatDequant && (caps.cooperativeMatrix || caps.cooperativeMatrixEmulated)) {
        f16_ = std::make_unique<F16MatMul>(pipelines);
        expertOnePass_ = caps.cooperativeMatrix ? Shader::MatMulCoopmat : Shader::MatMulCoopmatEmulated;
    }
}

MatVecOp::~MatVecOp() = default;

bool MatVecOp::tiled(GgmlType type) {
    const ActFormat mode = formatFor(type);
    return mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16 && type != GgmlType::Q2_K;
}

uint32_t MatVecOp::rowWords(ActFormat mode, uint32_t k) { return actRowWords(mode, k); }

ActFormat MatVecOp::formatFor(GgmlType weight) {
    if (const auto format = graph::actFormatOf(weight)) return *format;
    throw runtime::TierError(fmt::format("vulkan tier: no matvec shader for {} weights", model::ggmlTypeName(weight)));
}

MatVecOp::Input MatVecOp::quantize(PlanContext& ctx, ActFormat mode, VkDeviceAddress x, VkDeviceAddress x2, uint32_t k,
                                   uint32_t stride, uint32_t rows, VkDeviceAddress into) {
    const auto slot = static_cast<size_t>(mode);
    const uint32_t outStride = actRowWords(mode, k);
    const VkDeviceAddress out = into ? into : ctx.mem.actSlots[slot];
    const QuantizePc pc{x, x2 ? x2 : x, out, k, stride, outStride, static_cast<uint32_t>(mode),
                        x2 ? 1u : 0u, x, x, 0.0f, 0u, 0u, 0u};
    recordQuantize(ctx, pc, groupsFor(k, 256), rows, out);
    if (!into) ctx.acts.slots[slot] = {};
    return {out, outStride};
}

void MatVecOp::recordNormQuantized(PlanContext& ctx, const graph::Op& norm, ActFormat mode) {
    const auto slot = static_cast<size_t>(mode);
    const uint32_t k = ctx.width(norm.in);
    const QuantizePc pc{ctx.row0(norm.in), ctx.row0(norm.in), ctx.mem.actSlots[slot], k, k, actRowWords(mode, k),
                        static_cast<uint32_t>(mode), 0u, ctx.weights.address(*norm.weight), ctx.row0(norm.out),
                        ctx.graph.config->normEps, 1u, 0u, 0u};
    recordQuantize(ctx, pc, groupsFor(k, 256), static_cast<uint32_t>(ctx.rows), ctx.mem.actSlots[slot]);
    ctx.acts.invalidate(norm.out);
    ctx.acts.slots[slot] = {norm.out, ctx.firstRow, ctx.rows};
}

// A quantize dispatch a chained matvec will wait on (PlanContext::signalNext) runs
// quantize_signal and raises a site of its own (vulkan/plan_context.h).
void MatVecOp::recordQuantize(PlanContext& ctx, QuantizePc pc, uint32_t groupsX, uint32_t rows, VkDeviceAddress out) {
    pc.signal = ctx.takeSite();
    ctx.rec.dispatch(pc.signal ? pipelines_.get(Shader::QuantizeSignal) : quantize_, pc, groupsX, rows);
    if (pc.signal) ctx.raised(pc.signal, groupsX * rows, out);
}

bool MatVecOp::gateQuantizable(const graph::Op& gate) {
    if (gate.kind == graph::OpKind::SigmoidGateQuantize) return gate.out == gate.in;
    const auto n = gate.weight ? gate.weight->cols : 0;  // GatedNorm: the head size
    return gate.kind == graph::OpKind::GatedNormQuantize && gate.out == gate.in && n > 0 && 256 % n == 0;
}

void MatVecOp::recordGateQuantized(PlanContext& ctx, const graph::Op& gate, ActFormat mode) {
    const auto slot = static_cast<size_t>(mode);
    const uint32_t k = ctx.width(gate.in);
    const bool norm = gate.kind == graph::OpKind::GatedNormQuantize;
    const uint32_t aux = norm ? static_cast<uint32_t>(gate.weight->cols) : ctx.width(gate.gate);
    const QuantizePc pc{ctx.row0(gate.in), ctx.row0(gate.gate), ctx.mem.actSlots[slot], k, k, actRowWords(mode, k),
                        static_cast<uint32_t>(mode), norm ? 3u : 2u, norm ? ctx.weights.address(*gate.weight) : ctx.row0(gate.in),
                        ctx.row0(gate.out), ctx.graph.config->normEps, 0u, ctx.width(gate.gate), aux};
    recordQuantize(ctx, pc, groupsFor(k, 256), static_cast<uint32_t>(ctx.rows), ctx.mem.actSlots[slot]);
    ctx.acts.invalidate(gate.out);
    ctx.acts.slots[slot] = {gate.out, ctx.firstRow, ctx.rows};
}

MatVecOp::Input MatVecOp::input(PlanContext& ctx, const model::WeightRef& w, graph::BufferId in) {
    return quantizeInput(ctx, formatFor(w.type), in);
}

MatVecOp::Input MatVecOp::quantizeInput(PlanContext& ctx, ActFormat mode, graph::BufferId in) {
    if (mode == ActFormat::F32) return {ctx.row0(in), ctx.width(in)};
    auto& entry = ctx.acts.slots[static_cast<size_t>(mode)];
    const uint32_t k = ctx.width(in);
    if (entry.buffer == in && entry.firstRow == ctx.firstRow && entry.rows == ctx.rows)
        return {ctx.mem.actSlots[static_cast<size_t>(mode)], actRowWords(mode, k)};
    const Input act = quantize(ctx, mode, ctx.row0(in), 0, k, k, static_cast<uint32_t>(ctx.rows));
    entry = {in, ctx.firstRow, ctx.rows};
    return act;
}

void MatVecOp::multiply(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out, uint32_t outStride,
                        uint32_t tokens, bool accumulate, const Expert* expert, const model::WeightRef* up) {
    if (up && !pairable(w, *up))
        throw runtime::TierError(fmt::format("vulkan tier: {} and {} cannot share a matvec", w.name, up->name));
    const ActFormat mode = formatFor(w.type);
    const bool quantized = mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
    const bool tiledType = tiled(w.type);
    if (expert && expert->maxTiles > 0 && quantized && !tiledType)
        throw runtime::TierError(fmt::format("vulkan tier: expert weights {} are Q2_K, which the grouped matmul cannot read", w.name));
    if (quantized && (expert ? expert->maxTiles > 0 : tokens >= kTiledMinTokens && tiledType && !ctx.sequenceRows))
        return multiplyTiled(ctx, w, act, out, outStride, tokens, accumulate, up, expert);
    Call call;
    call.w = &w;
    call.up = up;
    call.weights = ctx.weights.address(w);
    call.upWeights = up ? ctx.weights.address(*up) : call.weights;
    call.act = act.address;
    call.out = out;
    call.ids = expert ? expert->ids : 0;
    call.actStride = act.stride;
    call.outStride = outStride;
    call.tokens = tokens;
    call.accumulate = accumulate;
    call.expertSlots = expert ? expert->slots : 0;
    call.actDiv = expert ? expert->actDiv : 1u;
    if (ctx.waitSite && !expert && tokens == 1 && act.address == ctx.chain->out) {
        call.waitSite = ctx.waitSite;
        call.waitGroups = ctx.chain->groups;
    }
    recordCall(ctx.rec, call, kernel_);
}

MatVecOp::Kernel MatVecOp::Kernel::parse(std::string_view text) {
    Kernel k;
    const auto bad = [&] { return runtime::TierError(fmt::format("matvec kernel '{}': expected v1, v2 or v2:r=R:c=C:wg=W:s=0|1:p=P", text)); };
    if (text == "v1") return k;
    if (text.substr(0, 2) != "v2" || (text.size() > 2 && text[2] != ':')) throw bad();
    k.v2 = true;
    for (std::string_view rest = text.size() > 3 ? text.substr(3) : ""; !rest.empty();) {
        const size_t comma = rest.find(':');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos) throw bad();
        const std::string_view key = item.substr(0, eq);
        const uint32_t value = static_cast<uint32_t>(std::strtoul(std::string(item.substr(eq + 1)).c_str(), nullptr, 10));
        if (key == "r" && value >= 1 && value <= 8) k.rows = value;
        else if (key == "c" && value >= 8 && value <= 512) k.units = value;
        else if (key == "wg" && (value == 64 || value == 128 || value == 256 || value == 512)) k.threads = value;
        else if (key == "s" && value <= 1) k.stage = static_cast<int32_t>(value);
        else if (key == "p" && value >= 1 && value <= 8) k.prefetch = value;
        else throw bad();
    }
    return k;
}

std::string MatVecOp::Kernel::name() const {
    if (!v2) return "v1";
    std::string n = "v2";
    const char sep = ':';
    for (const auto& [key, value] : {std::pair{"r", rows}, std::pair{"c", units}, std::pair{"wg", threads}})
        if (value) n += fmt::format("{}{}={}", sep, key, value);
    if (stage >= 0) n += fmt::format("{}s={}", sep, stage);
    if (prefetch) n += fmt::format("{}p={}", sep, prefetch);
    return n;
}

MatVecOp::Kernel MatVecOp::kernelFromEnvironment() {
    static const Kernel kernel = [] {
        const char* v = std::getenv("ZINC_VK_MATVEC");
        return Kernel::parse(v && *v ? v : "v2");
    }();
    return kernel;
}

std::vector<uint32_t> MatVecOp::rowsSpec(GgmlType type, uint32_t k, uint32_t m, uint32_t tokens, bool expert, bool up, bool vec,
                                         bool act4, bool dot4, const Kernel& kernel) {
    const RowsConfig g = rowsConfig(k, m, tokens, type, expert, up, dot4, kernel);
    return {g.threads, static_cast<uint32_t>(type), g.tile, g.rows, up ? 1u : 0u, g.alongK,
            g.units, vec ? 1u : 0u, act4 ? 1u : 0u, g.stage, g.prefetch};
}

namespace {
// rowsSpec's entries rowsShader reads (matvec_rows.comp's constant_id of NT, STAGE, PF).
constexpr size_t kSpecTile = 2, kSpecStage = 9, kSpecPrefetch = 10;
}  // namespace

Shader MatVecOp::rowsShader(const std::vector<uint32_t>& spec, bool dot4) {
    const bool tilePrefetch = spec.at(kSpecTile) > 1 && spec.at(kSpecStage) == 0 && spec.at(kSpecPrefetch) > 1;
    if (tilePrefetch) return dot4 ? Shader::MatVecRowsTilesDot4 : Shader::MatVecRowsTiles;
    return dot4 ? Shader::MatVecRowsDot4 : Shader::MatVecRows;
}

void MatVecOp::recordCall(Recorder& rec, const Call& c, const Kernel& kernel) {
    const model::WeightRef& w = *c.w;
    const ActFormat mode = formatFor(w.type);
    const bool quantized = mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
    const bool expert = c.expertSlots > 0;
    const uint32_t m = static_cast<uint32_t>(w.rows);
    const MatVecPc pc{c.weights,
                      c.weights,
                      c.act,
                      c.out,
                      c.ids,
                      c.upWeights,
                      c.upWeights,
                      static_cast<uint32_t>(w.cols),
                      m,
                      static_cast<uint32_t>(w.rowBytes),
                      c.actStride,
                      c.outStride,
                      c.tokens,
                      static_cast<uint32_t>(w.rowBytes * static_cast<size_t>(w.rows)),
                      expert ? 1u : 0u,
                      c.actDiv,
                      c.accumulate ? 1u : 0u,
                      0u};
    if (kernel.v2 && quantized) {
        const bool vec = w.type == GgmlType::Q4_K && rows16(c.weights, w.rowBytes) && rows16(c.upWeights, w.rowBytes);
        const bool act4 = rows16(c.act, 4 * uint64_t{c.actStride});
        const uint32_t tokens = expert || untiledInRows(w, c.tokens) ? 1u : c.tokens;
        const bool dot4 = matVec_ == Shader::MatVecDot4;
        const RowsConfig g = rowsConfig(static_cast<uint32_t>(w.cols), m, tokens, w.type, expert, c.up != nullptr, dot4, kernel);
        auto spec = rowsSpec(w.type, static_cast<uint32_t>(w.cols), m, tokens, expert, c.up != nullptr, vec, act4, dot4, kernel);
        MatVecPc p = pc;
        Shader shader = rowsShader(spec, dot4);
        if (c.convTaps) {
            if (tokens != 1 || c.up || c.accumulate || expert || c.waitSite)
                throw std::logic_error(fmt::format("vulkan tier: {}: the conv epilogue runs on one token's plain matvec", w.name));
            spec.push_back(c.convTaps);  // matvec_rows.comp's CONV
            p.w2 = c.convWeights;
            p.w2_32 = c.convWindow;
        }
        if (c.waitSite) {
            if (g.stage != 0 || g.tile != 1)
                throw std::logic_error(fmt::format("vulkan tier: {} cannot wait on its input's quantize (a staged or tiled matvec)", w.name));
            shader = dot4 ? Shader::MatVecRowsChainDot4 : Shader::MatVecRowsChain;
            p.wait = c.waitSite;
            p.waitGroups = c.waitGroups;
        }
        const VkPipeline pipeline = pipelines_.get(shader, spec);
        const uint32_t groups = groupsFor(m, g.threads / g.alongK * g.rows);
        p.groupsX = std::min<uint32_t>(groups, 65535);
        rec.dispatch(pipeline, p, p.groupsX, groupsFor(groups, p.groupsX), expert ? c.expertSlots : groupsFor(c.tokens, g.tile));
        return;
    }
    const uint32_t tile = expert || c.tokens == 1 ? 1u : kTokenTile;
    // Float weights in a token tile: 4 rows a workgroup, so each activation value loaded serves
    // 4 rows (a row's sums do not depend on it).
    const uint32_t rows = !quantized && tile > 1 ? 4u : rowsPerGroup(w.rows);
    // F32 weights and activations at 16-byte boundaries: read 16 bytes a load (matvec.comp's
    // VEC4; the batched MoE router's 4 x 8 tiles, 30B-A3B: 26.6 us a prompt token before).
    const bool vec4 = w.type == GgmlType::F32 && rows16(c.weights, w.rowBytes) && rows16(c.act, 4 * uint64_t{c.actStride}) && !c.up;
    const VkPipeline pipeline = pipelines_.get(
        matVec_, {matVecThreads(w.cols), static_cast<uint32_t>(w.type), tile, rows, c.up ? 1u : 0u, vec4 ? 1u : 0u});
    const uint32_t groups = groupsFor(m, rows);
    MatVecPc p = pc;
    p.groupsX = std::min<uint32_t>(groups, 65535);
    rec.dispatch(pipeline, p, p.groupsX, groupsFor(groups, p.groupsX), expert ? c.expertSlots : groupsFor(c.tokens, tile));
}

void MatVecOp::multiplyTiled(PlanContext& ctx, const model::WeightRef& w, Input act, VkDeviceAddress out,
                             uint32_t outStride, uint32_t tokens, bool accumulate, const model::WeightRef* up,
                             const Expert* expert) {
    const uint32_t rows = static_cast<uint32_t>(w.rows);
    const uint32_t slots = expert ? expert->maxTiles : tokens;
    // The two-pass matmul writes and reads 4 bytes of f16 per weight (the integer matmul reads the
    // ~0.6 of Q4_K once); that pays where each weight meets enough tokens: a break-even of about
    // 20-25 tokens, reckoned from the H100's bandwidth and the integer matmul's 25 TFLOPs on
    // Qwen3-8B, not measured yet. Falls through, too, where the scratch cannot hold 128 rows.
    const bool twoPass = expert ? expert->slots >= F16MatMul::kMinPairsPerExpert * w.stack : tokens >= F16MatMul::kMinTokens;
    if (f16_ && ctx.mem.f16Weights && twoPass) {
        F16MatMul::Call call;
        call.type = w.type;
        call.rows = rows;
        call.cols = static_cast<uint32_t>(w.cols);
        call.rowBytes = static_cast<uint32_t>(w.rowBytes);
        call.weights = ctx.weights.address(w);
        call.upWeights = up ? ctx.weights.address(*up) : 0;
        call.act = act.address;
        call.actStride = act.stride;
        call.out = out;
        call.outStride = outStride;
        call.tokens = expert ? expert->slots : tokens;
        call.accumulate = accumulate;
        if (expert) {
            call.experts = static_cast<uint32_t>(w.stack);
            call.maxTiles = expert->maxTiles;
            call.actDiv = expert->actDiv;
            call.orderAt = ctx.mem.moeOrderAt;
            call.group = ctx.mem.moeGroups;
        }
        call.scratch = ctx.mem.f16Weights;
        call.scratchBytes = ctx.mem.f16WeightBytes;
        if (f16_->record(ctx.rec, call)) return;
    }
    // Experts with fewer pairs each than the two-pass path wants: matrix cores in one pass
    // (weights decoded in the k loop, no f16 round trip), from kOnePassMinPairsPerExpert on.
    const bool onePass = expert && expertOnePass_ != matMul_ && expert->slots >= kOnePassMinPairsPerExpert * w.stack;
    const Shader shader = onePass ? expertOnePass_ : matMul_;
    std::vector<uint32_t> spec = {static_cast<uint32_t>(w.type), up ? 1u : 0u, expert ? 1u : 0u};
    CoopmatTile tile{kMatMulTile, kMatMulTile};
    if (shader == Shader::MatMulCoopmat || shader == Shader::MatMulCoopmatEmulated) {
        const auto& caps = pipelines_.caps();
        tile = coopmatTileFor(caps, rows, slots, up != nullptr, expert != nullptr, false);
        spec.insert(spec.end(), {tile.rows, tile.tokens, shader == Shader::MatMulCoopmat ? caps.subgroupSize : 32u});
        // Q4_K rows at 16-byte boundaries: the quants read 16 bytes a load (q4k_vec.glsl).
        const bool vec = w.type == GgmlType::Q4_K && rows16(ctx.weights.address(w), w.rowBytes) &&
                         (!up || rows16(ctx.weights.address(*up), up->rowBytes));
        spec.push_back(vec ? 1u : 0u);
        // Activation rows at 16-byte boundaries: a unit's quants as two 16-byte loads.
        spec.push_back(rows16(act.address, 4 * uint64_t{act.stride}) ? 1u : 0u);
    }
    const VkPipeline pipeline = pipelines_.get(shader, spec);
    const VkDeviceAddress weights = ctx.weights.address(w);
    const VkDeviceAddress upWeights = up ? ctx.weights.address(*up) : weights;
    const MatMulPc pc{weights,
                      weights,
                      act.address,
                      out,
                      upWeights,
                      upWeights,
                      static_cast<uint32_t>(w.cols),
                      static_cast<uint32_t>(w.rows),
                      static_cast<uint32_t>(w.rowBytes),
                      act.stride,
                      outStride,
                      expert ? expert->slots : tokens,
                      accumulate ? 1u : 0u,
                      ctx.mem.moeGroups,
                      static_cast<uint32_t>(w.rowBytes * static_cast<size_t>(w.rows)),
                      expert ? expert->actDiv : 1u,
                      ctx.mem.moeOrderAt};
    const uint32_t columnTiles = expert ? expert->maxTiles : groupsFor(tokens, tile.tokens);
    ctx.rec.dispatch(pipeline, pc, groupsFor(rows, tile.rows), columnTiles, 1);
}

bool MatVecOp::waitable(const model::WeightRef& w, bool up) const {
    const ActFormat mode = formatFor(w.type);
    if (!chains_ || !kernel_.v2 || mode == ActFormat::F32 || mode == ActFormat::F16 || mode == ActFormat::BF16) return false;
    const RowsConfig g = rowsConfig(static_cast<uint32_t>(w.cols), static_cast<uint32_t>(w.rows), 1, w.type, false, up,
                                    matVec_ == Shader::MatVecDot4, kernel_);
    // Every thread has a unit of k, so that all reach the wait's workgroup barrier.
    return g.stage == 0 && g.tile == 1 && w.cols / 32 >= g.alongK;
}

bool MatVecOp::pairable(const model::WeightRef& gate, const model::WeightRef& up) {
    const ActFormat mode = formatFor(gate.type);
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols && gate.stack == up.stack &&
           mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
}

bool MatVecOp::convFusable(const model::WeightRef& w) {
    const ActFormat mode = formatFor(w.type);
    return kernelFromEnvironment().v2 && mode != ActFormat::F32 && mode != ActFormat::F16 && mode != ActFormat::BF16;
}

void MatVecOp::checkConvTaps(const graph::Op& op, uint32_t taps) {
    constexpr uint32_t kMaxConvTaps = 4;  // conv_step.glsl
    if (taps < 2 || taps > kMaxConvTaps)
        throw runtime::TierError(
            fmt::format("vulkan tier: op {}: a causal conv of {} taps (the shaders take 2 to {})", op.label, taps, kMaxConvTaps));
}

void MatVecOp::recordConv(PlanContext& ctx, const graph::Op& op, uint32_t taps) {
    checkConvTaps(op, taps);
    const auto& w = *op.weight;
    if (ctx.rows != 1 || !convFusable(w) || op.convWeight == nullptr)
        throw std::logic_error(fmt::format("vulkan tier: op {}: the conv epilogue needs one token's v2 matvec", op.label));
    const Input act = input(ctx, w, op.in);
    Call call;
    call.w = &w;
    call.weights = call.upWeights = ctx.weights.address(w);
    call.act = act.address;
    call.out = ctx.row0(op.out);
    call.actStride = act.stride;
    call.outStride = ctx.width(op.out);
    call.convWeights = ctx.weights.address(*op.convWeight);
    call.convWindow = ctx.at(op.state, 0);
    call.convTaps = taps;
    recordCall(ctx.rec, call, kernel_);
    ctx.acts.invalidate(op.out);
}

void MatVecOp::record(PlanContext& ctx, const graph::Op& op) {
    const auto& w = *op.weight;
    const Input act = input(ctx, w, op.in);
    multiply(ctx, w, act, ctx.row0(op.out), ctx.width(op.out), static_cast<uint32_t>(ctx.rows), false);
    ctx.acts.invalidate(op.out);
}

}  // namespace zinc::vk
