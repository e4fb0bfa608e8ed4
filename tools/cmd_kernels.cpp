// `zinc-rt kernels`: the direct path's kernels as a GPU would see them, without the GPU. Per
// kernel and target: SGPRs, VGPRs, LDS and waves per SIMD from the code objects; with --model,
// one decode token run through the simulated GPU's ISA interpreter gives each kernel's dynamic
// wave-instructions by class and bytes moved, and a roofline estimate of its time on an
// RX 7900 XTX (gfx1100) and a Radeon AI PRO R9700 (gfx1201). tiers.md says what it leaves out.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kfd/sim/isa/profile.h"
#include "runtime/tier.h"
#include "tools/cli_common.h"

namespace zinc::tools {
namespace {

struct KernelsOptions {
    std::string model;
    std::string target;  // overrides --gfx
    int32_t token = 1;
    int32_t position = 1;  // the counted token's position (> 1: positions 1..P-1 of the cache are left unwritten)
};

// Occupancy limits (wave32): 1536 VGPRs per SIMD lane allocated in granules of 24 and at most 16
// waves per SIMD (LLVM AMDGPUBaseInfo.cpp getVGPRAllocGranule / getTotalNumVGPRs /
// getMaxWavesPerEU for gfx11 and gfx12 with full VGPRs); 128 KiB of LDS per WGP of 4 SIMDs
// (RDNA3 ISA guide, "Local Data Share").
constexpr uint32_t kVgprsPerSimd = 1536, kVgprGranule = 24, kMaxWavesPerSimd = 16, kLdsPerWgp = 128 * 1024, kSimdsPerWgp = 4;

uint32_t wavesPerSimd(const kernels::KernelInfo& k) {
    const uint32_t vgprs = std::max<uint32_t>(k.vgprCount, 1);
    uint32_t waves = std::min(kMaxWavesPerSimd, kVgprsPerSimd / ((vgprs + kVgprGranule - 1) / kVgprGranule * kVgprGranule));
    const uint32_t wg = std::max<uint32_t>(k.reqdWorkgroupSize[0] * std::max<uint32_t>(k.reqdWorkgroupSize[1], 1) *
                                               std::max<uint32_t>(k.reqdWorkgroupSize[2], 1), 32);
    if (k.groupSegmentFixedSize > 0) {
        const uint32_t groups = kLdsPerWgp / (k.ldsGranules() * 512);
        waves = std::min(waves, groups * ((wg + 31) / 32) / kSimdsPerWgp);
    }
    return waves;
}

// A GPU for the roofline. Public specifications (amd.com product pages): CUs, boost clock, memory
// bandwidth. Issue model: each CU has 2 SIMD32 that each issue one VALU and one SALU
// wave-instruction per clock, and one LDS instruction per clock per CU (RDNA3/RDNA4 ISA guides,
// "Overview"); no dual issue, no latency, no caches. f64 VALU at 1/32 of the f32 rate (RDNA3
// consumer parts; RDNA4's is not higher). A dispatch of W waves issues on at most W SIMDs (and
// W CUs for LDS): a kernel that launches one workgroup per head cannot use the whole GPU.
struct Gpu {
    const char* name;
    const char* gfx;
    double cus, clockHz, bytesPerSecond;
};
constexpr Gpu kGpus[] = {{"RX 7900 XTX", "gfx1100", 96, 2.5e9, 960e9}, {"R9700", "gfx1201", 64, 2.92e9, 640e9}};
constexpr double kF64RateDivisor = 32;

struct Estimate {
    double seconds = 0, memorySeconds = 0;
};
Estimate estimate(const kfd::isa::KernelProfile& p, const Gpu& g) {
    using kfd::isa::OpClass;
    auto n = [&](OpClass c) { return double(p.instructions[size_t(c)]); };
    Estimate e;
    e.memorySeconds = double(p.bytesRead + p.bytesWritten) / g.bytesPerSecond;
    const double wavesPerDispatch = p.dispatches > 0 ? double(p.waves) / double(p.dispatches) : 1.0;
    const double simds = std::max(1.0, std::min(g.cus * 2, wavesPerDispatch)), cus = std::max(1.0, std::min(g.cus, wavesPerDispatch));
    const double valu = (n(OpClass::Valu) + kF64RateDivisor * n(OpClass::Valu64)) / (simds * g.clockHz);
    const double salu = (n(OpClass::Salu) + n(OpClass::Branch) + n(OpClass::Smem)) / (simds * g.clockHz);
    const double lds = n(OpClass::Lds) / (cus * g.clockHz);
    e.seconds = std::max({e.memorySeconds, valu, salu, lds});
    return e;
}

void printStatic() {
    for (const char* gfx : {"gfx1100", "gfx1201"}) {
        const kernels::CodeObject object = kernels::CodeObject::parse(kernels::embeddedCodeObject(gfx), std::string("embedded ") + gfx);
        fmt::print("{}: {} kernels\n{:<30} {:>6} {:>6} {:>7} {:>10} {:>12}\n", gfx, object.kernels().size(), "kernel", "SGPRs",
                   "VGPRs", "LDS", "workgroup", "waves/SIMD");
        for (const kernels::KernelInfo& k : object.kernels())
            fmt::print("{:<30} {:>6} {:>6} {:>7} {:>10} {:>12}\n", k.name, k.sgprCount, k.vgprCount, k.groupSegmentFixedSize,
                       k.reqdWorkgroupSize[0], wavesPerSimd(k));
        fmt::print("\n");
    }
}

void printDynamic(const KernelsOptions& o, const GlobalOptions& global) {
    using kfd::isa::OpClass;
    GlobalOptions g = global;
    if (!o.target.empty()) g.gfx = o.target;
    g.tier = "kfd";
    g.sim = true;
    setenv("ZINC_SIM_EXEC", "isa", 1);  // the counts come from the interpreter
    if (o.position < 1) throw CLI::ValidationError("--position", "must be at least 1");
    // --ctx 0 means min(model, 4096) (runtime::TierOptions): grow it only when P needs more.
    if ((g.contextLength > 0 ? g.contextLength : 4096) <= o.position) g.contextLength = o.position + 1;
    auto engine = openEngine(o.model, g);
    runtime::Tier& tier = *engine->tier;
    std::vector<float> logits(size_t(engine->model->config().nVocab));
    const std::span<const int32_t> token(&o.token, 1);
    tier.evaluate(token, 0, runtime::LogitsWanted::Last, logits);  // position 0; the counted token comes later
    kfd::isa::Profile profile;
    kfd::isa::setProfile(&profile);
    const auto started = std::chrono::steady_clock::now();
    // The work of a token at position P does not depend on the cache's values, only on P: the
    // rows between 1 and P - 1 keep what the allocation held (attention still reads them all).
    tier.evaluate(token, o.position, runtime::LogitsWanted::Last, logits);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    kfd::isa::setProfile(nullptr);
    const auto kernels = profile.snapshot();
    const Gpu* gpu = &kGpus[0];
    for (const Gpu& candidate : kGpus)
        if (g.gfx == candidate.gfx) gpu = &candidate;

    fmt::print("{} on simulated {}, one decode token at position {} (wave-instructions; bytes of global memory; "
               "estimated time on {}):\n", o.model, g.gfx, o.position, gpu->name);
    fmt::print("{:<30} {:>5} {:>9} {:>8} {:>9} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9} {:>6}\n", "kernel", "disp", "VALU", "VALU64",
               "SALU", "VMEM", "SMEM", "LDS", "branch", "read", "written", "est. us", "BW%");
    kfd::isa::KernelProfile sum;
    double sumSeconds = 0, sumHost = 0;
    for (const auto& [name, p] : kernels) {
        const Estimate e = estimate(p, *gpu);
        sumSeconds += e.seconds;
        sumHost += p.hostSeconds;
        sum.dispatches += p.dispatches;
        sum.waves += p.waves;
        sum.bytesRead += p.bytesRead;
        sum.bytesWritten += p.bytesWritten;
        for (size_t i = 0; i < kfd::isa::kOpClasses; ++i) sum.instructions[i] += p.instructions[i];
        auto n = [&](OpClass c) { return p.instructions[size_t(c)]; };
        fmt::print("{:<30} {:>5} {:>9} {:>8} {:>9} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9.2f} {:>5.0f}%\n", name, p.dispatches,
                   n(OpClass::Valu), n(OpClass::Valu64), n(OpClass::Salu), n(OpClass::Vmem), n(OpClass::Smem), n(OpClass::Lds), n(OpClass::Branch), p.bytesRead, p.bytesWritten,
                   e.seconds * 1e6, e.seconds > 0 ? 100.0 * e.memorySeconds / e.seconds : 0.0);
    }
    const double memory = double(sum.bytesRead + sum.bytesWritten) / gpu->bytesPerSecond;
    fmt::print("per token: {} dispatches, {} wave-instructions, {} bytes read, {} written; estimated {:.1f} us on {} "
               "({:.0f} tok/s, {:.0f}% of its bandwidth; launch overhead not included)\n",
               sum.dispatches, sum.total(), sum.bytesRead, sum.bytesWritten, sumSeconds * 1e6, gpu->name,
               sumSeconds > 0 ? 1.0 / sumSeconds : 0.0, sumSeconds > 0 ? 100.0 * memory / sumSeconds : 0.0);
    fmt::print("interpreter: {} wave-instructions in {:.3f} s of dispatch time ({:.1f} M wave-instructions/s; token wall time {:.3f} s)\n",
               sum.total(), sumHost, sumHost > 0 ? double(sum.total()) / sumHost / 1e6 : 0.0, wall);
}

}  // namespace

void addKernelsCommand(CLI::App& app, const GlobalOptions& global) {
    auto o = std::make_shared<KernelsOptions>();
    auto* cmd = app.add_subcommand("kernels", "the direct path's kernels: registers, LDS, occupancy; with --model, one decode "
                                              "token's instructions and bytes per kernel and a roofline estimate (simulated GPU)");
    cmd->add_option("--model", o->model, "GGUF model: run one decode token through the ISA interpreter (--gfx picks the target)");
    cmd->add_option("--target", o->target, "gfx1100 or gfx1201 (the same as the global --gfx)")
        ->check(CLI::IsMember({"gfx1100", "gfx1201"}));
    cmd->add_option("--token", o->token, "token id fed at position 0 and at the counted position")->capture_default_str();
    cmd->add_option("--position", o->position, "position of the counted decode token (long context: attention reads that many "
                                               "cache rows; --ctx grows to fit)")->capture_default_str();
    cmd->callback([o, &global] {
        printStatic();
        if (!o->model.empty()) printDynamic(*o, global);
    });
}

}  // namespace zinc::tools
