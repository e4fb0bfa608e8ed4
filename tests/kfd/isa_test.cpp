// The ISA interpreter (kfd/sim/isa/) on the embedded code objects: every opcode the kernels
// contain has a handler (the coverage gate), real kernels' machine code computes what the cpu
// tier computes, and what the hardware would refuse or get wrong is caught: a wave64 kernel,
// LDS over 64 KiB, scratch nobody provisioned, a load consumed without its s_waitcnt, LDS read
// across waves without the s_barrier.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/code_object.h"
#include "kernels/embedded.h"
#include "kernels/kernel_args.h"
#include "kfd/sim/isa/launch.h"
#include "runtime/sampler.h"

namespace zinc::kfd::isa {
namespace {

// Host buffers as GPU memory: a buffer's address is its host address (as in SimMemory).
class HostMemory final : public IsaMemory {
public:
    template <class T> T* alloc(size_t count) {
        buffers_.push_back(std::make_unique<std::vector<uint8_t>>(count * sizeof(T) + 16, 0));
        return reinterpret_cast<T*>(buffers_.back()->data());
    }
    bool region(uint64_t address, uint64_t& lo, uint64_t& hi) override {
        for (const auto& b : buffers_) {
            const uint64_t base = reinterpret_cast<uint64_t>(b->data());
            if (address >= base && address < base + b->size()) {
                lo = base;
                hi = base + b->size();
                return true;
            }
        }
        return false;
    }

private:
    std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers_;
};

struct Loaded {
    std::shared_ptr<kernels::CodeObject> object;
    std::shared_ptr<const Program> program;
    std::vector<uint8_t> image;  // the loaded image: code addresses are offsets into it
};

Loaded load(const std::string& gfx) {
    Loaded l;
    l.object = std::make_shared<kernels::CodeObject>(kernels::CodeObject::parse(kernels::embeddedCodeObject(gfx), "embedded " + gfx));
    l.program = decodeProgram(*l.object);
    l.image = l.object->loadImage();
    return l;
}

// A launch of `kernel` with its kernarg segment at `kernarg`, as the CP would start it.
template <class Args> LaunchRequest request(const Loaded& l, const kernels::KernelInfo& k, HostMemory& memory, const Args& args,
                                           std::array<uint32_t, 3> groups) {
    auto* kernarg = memory.alloc<Args>(1);
    std::memcpy(kernarg, &args, sizeof args);
    LaunchRequest r;
    r.program = l.program.get();
    r.kernel = &k;
    r.loadBase = reinterpret_cast<uint64_t>(l.image.data());
    const uint64_t address = reinterpret_cast<uint64_t>(kernarg);
    r.userData[0] = uint32_t(address);
    r.userData[1] = uint32_t(address >> 32);
    r.userSgprCount = k.descriptor.userSgprCount();
    r.groups = groups;
    r.groupSize = k.reqdWorkgroupSize;
    r.ldsBytes = k.ldsGranules() * 512;
    r.memory = &memory;
    return r;
}

class Isa : public ::testing::TestWithParam<std::string> {};

TEST_P(Isa, CoverageGateEveryOpcodeHasAHandler) {
    const Loaded l = load(GetParam());
    std::string missing;
    for (const std::string& m : l.program->missing) missing += " " + m;
    EXPECT_TRUE(l.program->missing.empty()) << GetParam() << " opcodes without a handler:" << missing;
    EXPECT_GT(l.program->insts.size(), 5000u);
    EXPECT_GT(l.program->opcodes.size(), 150u);
}

// rms_norm over two rows of 300: out = x * (1 / sqrt(mean(x^2) + eps)) * w.
struct RmsCase {
    HostMemory memory;
    float *x, *w, *out;
    int n = 300, rows = 2;
    RmsCase() {
        x = memory.alloc<float>(size_t(n) * rows);
        w = memory.alloc<float>(size_t(n));
        out = memory.alloc<float>(size_t(n) * rows);
        for (int i = 0; i < n * rows; ++i) x[i] = std::sin(0.37f * float(i)) * 2.0f;
        for (int i = 0; i < n; ++i) w[i] = 0.5f + 0.01f * float(i % 17);
    }
    kernels::RmsNormArgs args() const {
        return {reinterpret_cast<uint64_t>(x), reinterpret_cast<uint64_t>(w), reinterpret_cast<uint64_t>(out), n, 1e-5f, n, n};
    }
    // The largest relative error against the formula in double.
    double error() const {
        double worst = 0;
        for (int r = 0; r < rows; ++r) {
            double sum = 0;
            for (int i = 0; i < n; ++i) sum += double(x[r * n + i]) * x[r * n + i];
            const double scale = 1.0 / std::sqrt(sum / n + 1e-5);
            for (int i = 0; i < n; ++i) {
                const double want = x[r * n + i] * scale * w[i];
                const double got = out[r * n + i];
                worst = std::max(worst, std::isnan(got) ? 1e30 : std::fabs(got - want) / std::max(1e-6, std::fabs(want)));
            }
        }
        return worst;
    }
};

TEST_P(Isa, RmsNormMachineCodeMatchesTheFormula) {
    const Loaded l = load(GetParam());
    RmsCase c;
    LaunchCounts counts;
    launch(request(l, l.object->kernel("rms_norm"), c.memory, c.args(), {1, uint32_t(c.rows), 1}), &counts);
    EXPECT_LT(c.error(), 1e-6);
    EXPECT_EQ(counts.waves, 16u);  // 2 workgroups of 256 work-items
    EXPECT_EQ(counts.bytesWritten, uint64_t(c.n) * c.rows * 4);
}

TEST_P(Isa, RefusesWave64) {
    const Loaded l = load(GetParam());
    kernels::KernelInfo k = l.object->kernel("rms_norm");
    k.descriptor.kernelCodeProperties &= uint16_t(~kernels::kd::kEnableWavefrontSize32);
    RmsCase c;
    try {
        launch(request(l, k, c.memory, c.args(), {1, 1, 1}));
        FAIL() << "a wave64 kernel ran";
    } catch (const IsaError& e) {
        EXPECT_NE(std::string(e.what()).find("kernel rms_norm: its kernel descriptor asks for wave64 (KERNEL_CODE_PROPERTIES.ENABLE_WAVEFRONT_SIZE32 = 0)"), std::string::npos) << e.what();
    }
}

TEST_P(Isa, RefusesLdsOver64KiB) {
    const Loaded l = load(GetParam());
    RmsCase c;
    LaunchRequest r = request(l, l.object->kernel("rms_norm"), c.memory, c.args(), {1, 1, 1});
    r.ldsBytes = 65536 + 512;
    try {
        launch(r);
        FAIL() << "an LDS request over 64 KiB ran";
    } catch (const IsaError& e) {
        EXPECT_NE(std::string(e.what()).find("COMPUTE_PGM_RSRC2.LDS_SIZE asks for 66048 bytes of LDS, over the 65536 bytes"), std::string::npos) << e.what();
    }
}

TEST_P(Isa, RefusesScratchNotProvisioned) {
    const Loaded l = load(GetParam());
    kernels::KernelInfo k = l.object->kernel("rms_norm");
    k.descriptor.computePgmRsrc2 |= 1u;  // SCRATCH_EN
    RmsCase c;
    try {
        launch(request(l, k, c.memory, c.args(), {1, 1, 1}));
        FAIL() << "a kernel needing scratch ran without it";
    } catch (const IsaError& e) {
        EXPECT_NE(std::string(e.what()).find("COMPUTE_PGM_RSRC2.SCRATCH_EN = 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("COMPUTE_DISPATCH_SCRATCH_BASE is 0"), std::string::npos) << e.what();
    }
}

// rms_norm with the first instruction matching one of `mnemonics` turned into s_nop.
struct BrokenRmsNorm {
    Loaded loaded;
    std::string removed;
    BrokenRmsNorm(const Loaded& l, std::initializer_list<std::string_view> mnemonics) : loaded(l) {
        const kernels::KernelInfo& k = l.object->kernel("rms_norm");
        auto broken = std::make_shared<Program>(*l.program);
        Handler nop = nullptr;
        for (const Inst& i : broken->insts)
            if (broken->opcodes[i.opcode] == "s_nop") nop = i.run;
        for (int32_t at = broken->at(k.entryAddress); nop && at >= 0 && size_t(at) < broken->insts.size(); ++at) {
            const std::string& m = broken->opcodes[broken->insts[size_t(at)].opcode];
            if (std::find(mnemonics.begin(), mnemonics.end(), m) != mnemonics.end()) {
                broken->insts[size_t(at)].run = nop;
                removed = broken->text[size_t(at)];
                break;
            }
        }
        loaded.program = broken;
    }
};

// The broken variant: the kernel with its first wait for a load removed. The loaded registers
// hold poison until a wait covers them, so the result is wrong, never right by luck.
TEST_P(Isa, MissingWaitcntGivesWrongResults) {
    const Loaded l = load(GetParam());
    const BrokenRmsNorm b(l, {"s_waitcnt", "s_wait_loadcnt", "s_wait_kmcnt"});
    ASSERT_FALSE(b.removed.empty());
    RmsCase c;
    bool failed = false;
    try {
        launch(request(b.loaded, l.object->kernel("rms_norm"), c.memory, c.args(), {1, uint32_t(c.rows), 1}));
    } catch (const IsaError& e) {
        failed = true;  // poison used as an address: a fault naming the instruction
        EXPECT_NE(std::string(e.what()).find("not mapped"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(failed || c.error() > 1e-3) << "removing \"" << b.removed << "\" went unnoticed";
}

// The broken variant: the first barrier of the reduction removed. Waves run in turns of a few
// instructions, so a wave reads LDS partial sums other waves have not written yet.
TEST_P(Isa, MissingBarrierGivesWrongResults) {
    const Loaded l = load(GetParam());
    const BrokenRmsNorm b(l, {"s_barrier", "s_barrier_signal"});
    ASSERT_FALSE(b.removed.empty());
    RmsCase c;
    launch(request(b.loaded, l.object->kernel("rms_norm"), c.memory, c.args(), {1, uint32_t(c.rows), 1}));
    EXPECT_GT(c.error(), 1e-3) << "removing \"" << b.removed << "\" went unnoticed";
}

// Workgroups run in a scrambled order that changes per dispatch; correct kernels do not care.
TEST_P(Isa, WorkgroupOrderDoesNotChangeACorrectKernel) {
    const Loaded l = load(GetParam());
    RmsCase a, b;
    LaunchRequest ra = request(l, l.object->kernel("rms_norm"), a.memory, a.args(), {1, uint32_t(a.rows), 1});
    LaunchRequest rb = request(l, l.object->kernel("rms_norm"), b.memory, b.args(), {1, uint32_t(b.rows), 1});
    ra.seed = 1;
    rb.seed = 2;
    launch(ra);
    launch(rb);
    EXPECT_EQ(std::memcmp(a.out, b.out, sizeof(float) * size_t(a.n) * a.rows), 0);
}

// exp, sin and cos in f32 only (kernels/cl/zk_math.h, no fp64): the machine code of swiglu and
// rope_neox gives the correctly rounded results (libm in double, rounded once) bit for bit, from
// exp's underflow to its overflow (g / (1 + e) then divides by up to 3e38) and for angles up to
// position 60000. glibc's expf/sinf (the cpu tier's) differ from these in the last bit now and then.
TEST_P(Isa, ExpSinCosWithoutFp64AreCorrectlyRounded) {
    const Loaded l = load(GetParam());
    HostMemory memory;
    const int n = 8192;
    float* gate = memory.alloc<float>(n);
    float* up = memory.alloc<float>(n);
    float* out = memory.alloc<float>(n);
    for (int i = 0; i < n; ++i) {
        gate[i] = -100.0f + 190.0f * float(i) / float(n) + 1e-3f * std::sin(float(i));
        up[i] = 1.0f;
    }
    launch(request(l, l.object->kernel("swiglu"), memory, kernels::SwiGluArgs{reinterpret_cast<uint64_t>(gate),
           reinterpret_cast<uint64_t>(up), reinterpret_cast<uint64_t>(out), n, n}, {uint32_t(n / 256), 1, 1}));
    int expDiffer = 0;
    for (int i = 0; i < n; ++i) {
        const float want = gate[i] / (1.0f + float(std::exp(-double(gate[i])))) * up[i];
        if (std::memcmp(&want, &out[i], 4) != 0 && ++expDiffer <= 3)
            ADD_FAILURE() << "swiglu(" << gate[i] << ") = " << out[i] << ", want " << want;
    }
    EXPECT_EQ(expDiffer, 0);

    // rope_neox on (1, 0) pairs: x[i] = cos(theta_i), x[i + 64] = sin(theta_i).
    const int headDim = 128, half = 64, positions = 64;
    float* x = memory.alloc<float>(size_t(headDim) * positions);
    int32_t* state = memory.alloc<int32_t>(4);
    const float thetaScale = std::pow(10000.0f, -2.0f / float(headDim));
    for (int t = 0; t < positions; ++t)
        for (int i = 0; i < headDim; ++i) x[t * headDim + i] = i < half ? 1.0f : 0.0f;
    state[0] = 60000 - positions;
    launch(request(l, l.object->kernel("rope_neox"), memory,
                   kernels::RopeArgs{reinterpret_cast<uint64_t>(x), reinterpret_cast<uint64_t>(state), 1, headDim, headDim,
                                     thetaScale, headDim, 0, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f},
                   {1, uint32_t(positions), 1}));
    int trigDiffer = 0;
    for (int t = 0; t < positions; ++t) {
        float theta = float(state[0] + t);
        for (int i = 0; i < half; ++i, theta *= thetaScale) {
            const float c = float(std::cos(double(theta))), s = float(std::sin(double(theta)));
            const float gotC = x[t * headDim + i], gotS = x[t * headDim + i + half];
            if ((std::memcmp(&c, &gotC, 4) != 0 || std::memcmp(&s, &gotS, 4) != 0) && ++trigDiffer <= 3)
                ADD_FAILURE() << "theta " << theta << ": cos, sin " << gotC << ", " << gotS << "; want " << c << ", " << s;
        }
    }
    EXPECT_EQ(trigDiffer, 0);
}

// sample_token (kernels/cl/sample.cl) on 1000 logits with the default chain and a repetition
// penalty: the id the host sampler draws (runtime/sampler.cpp), seed after seed; the state
// advances one position per token.
TEST_P(Isa, SampleTokenDrawsWhatTheHostSamplerDraws) {
    const Loaded l = load(GetParam());
    HostMemory memory;
    const int n = 1000;
    float* logits = memory.alloc<float>(n);
    float* scratch = memory.alloc<float>(n);
    int32_t* state = memory.alloc<int32_t>(16);
    int32_t* tokens = memory.alloc<int32_t>(4);
    int32_t* ring = memory.alloc<int32_t>(64);
    uint32_t* chain = memory.alloc<uint32_t>(48 + 256);
    for (int i = 0; i < n; ++i) logits[i] = 4.0f * std::sin(0.7f * float(i)) + 0.001f * float(i % 13);
    const float temperature = 0.8f, topP = 0.95f, minP = 0.05f, penalty = 1.3f;
    const int32_t recent[] = {5, 9, 22, 9};
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        std::fill_n(chain, 48 + 256, 0u);
        std::memcpy(&chain[0], &temperature, 4);
        std::memcpy(&chain[1], &topP, 4);
        std::memcpy(&chain[2], &minP, 4);
        std::memcpy(&chain[3], &penalty, 4);
        chain[4] = 40;          // top-k
        chain[5] = 8;           // penalty window
        chain[6] = 4;           // recent ids given
        chain[7] = seed;        // seed
        chain[11] = 1;          // live
        chain[12] = 100;        // budget
        chain[13] = 256;        // context
        std::memcpy(&chain[48], recent, sizeof recent);
        state[0] = 10;
        state[2] = 11;
        kernels::SampleArgs args{reinterpret_cast<uint64_t>(logits), reinterpret_cast<uint64_t>(scratch),
                                 reinterpret_cast<uint64_t>(state),  reinterpret_cast<uint64_t>(tokens),
                                 reinterpret_cast<uint64_t>(ring),   reinterpret_cast<uint64_t>(chain), n, 64};
        launch(request(l, l.object->kernel("sample_token"), memory, args, {1, 1, 1}));
        runtime::SamplerParams p;
        p.seed = seed;
        p.repeatPenalty = penalty;
        p.repeatLastN = 8;
        runtime::Sampler host(p);
        const int32_t want = host.sample(std::span<const float>(logits, n), recent);
        EXPECT_EQ(tokens[0], want) << "seed " << seed;
        EXPECT_EQ(ring[0], want);
        EXPECT_EQ(state[0], 11);
        EXPECT_EQ(chain[10], 1u);  // step
        EXPECT_EQ(chain[11], 1u);  // live: no end yet
        // The same draw as a stop id with the context one short: the stop id is the reason.
        chain[10] = 0;
        chain[14] = 1;
        chain[32] = uint32_t(want);
        chain[13] = 11;
        state[0] = 10;
        launch(request(l, l.object->kernel("sample_token"), memory, args, {1, 1, 1}));
        EXPECT_EQ(chain[11], 0u);
        EXPECT_EQ(chain[15], 1u);  // EndReason::StopId
        // Not a stop id: the full context ends it; a later launch writes nothing.
        chain[10] = 0;
        chain[11] = 1;
        chain[32] = uint32_t(want + 1);
        state[0] = 10;
        launch(request(l, l.object->kernel("sample_token"), memory, args, {1, 1, 1}));
        EXPECT_EQ(chain[11], 0u);
        EXPECT_EQ(chain[15], 3u);  // EndReason::ContextFull
        tokens[0] = -7;
        launch(request(l, l.object->kernel("sample_token"), memory, args, {1, 1, 1}));
        EXPECT_EQ(tokens[0], -7);
        EXPECT_EQ(state[0], 11);
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, Isa, ::testing::Values("gfx1100", "gfx1201"));

}  // namespace
}  // namespace zinc::kfd::isa

namespace zinc::kfd::isa {
namespace {

// The two readings of v_fma_mix*_f16 (kernels/README.md) part exactly where the f32 rounding
// lands on an f16 tie that the exact result was above: 1 + 2^-11 + 2^-30 is 1 + 2^-11 in f32
// (a tie between 1 and 1 + 2^-10, to even: 1.0), but rounds up from the exact value.
TEST(IsaMixRounding, RoundingOnceAndInTwoStepsPartAtAnF16Tie) {
    const double exact = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
    EXPECT_EQ(f32ToF16(float(exact)), 0x3C00u);  // two steps
    EXPECT_EQ(f64ToF16(exact), 0x3C01u);         // once
    for (const double v : {0.0, -0.0, 1.0, -2.5, 65504.0, 65519.0, 6.0e-8, 3.0e-5, 1e-9, 0.333251953125})
        EXPECT_EQ(f64ToF16(v), f32ToF16(float(v))) << v;  // no tie in the way: the readings agree
    EXPECT_EQ(f64ToF16(65520.0), 0x7C00u);
    EXPECT_EQ(f64ToF16(-1e6), 0xFC00u);
    EXPECT_EQ(f64ToF16(std::ldexp(1.0, -25)), 0u);  // half the smallest subnormal: to even, 0
    EXPECT_EQ(f64ToF16(std::ldexp(1.5, -25)), 1u);
}

// What the caches may hold stale (stale_memory.h): written ranges merge, a read overlapping any
// written byte is stale, invalidates clear the vector and scalar sides separately.
TEST(IsaStaleMemory, WrittenRangesAreStaleUntilInvalidated) {
    StaleMemory m;
    EXPECT_FALSE(m.anyVector());
    m.wrote({{0x1000, 0x1010}, {0x1010, 0x1020}, {0x2000, 0x2004}});
    EXPECT_EQ(m.vectorRanges(), 2u);  // the touching pair merged
    EXPECT_TRUE(m.vectorStale(0x101c, 0x1024));
    EXPECT_FALSE(m.vectorStale(0x1020, 0x1030));  // the byte after
    EXPECT_FALSE(m.vectorStale(0x0ff0, 0x1000));  // the bytes before
    EXPECT_TRUE(m.scalarStale(0x2000, 0x2008));
    m.invalidate(/*vector=*/true, /*scalar=*/false);
    EXPECT_FALSE(m.vectorStale(0x1000, 0x3000));
    EXPECT_TRUE(m.scalarStale(0x2000, 0x2004));
    m.invalidate(false, true);
    EXPECT_FALSE(m.anyScalar());
}

}  // namespace
}  // namespace zinc::kfd::isa
