#include "kfd/device/caps.h"

#include <array>
#include <cstdio>

namespace zinc::kfd {
namespace {

constexpr uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// One row per simulated chip: the full-size part of each die, the shape KFD topology reports
// for it (simd_count / simd_per_cu = CUs). CU counts: AMD product specifications (RX 7900 XTX
// Navi 31 96 CUs, RX 7800 XT Navi 32 60 CUs, RX 7600 Navi 33 32 CUs, RX 9060 XT Navi 44 32 CUs,
// RX 9070 XT Navi 48 64 CUs); board VRAM of the same cards.
struct ChipShape {
    std::string_view name;
    uint32_t computeUnits;
    uint64_t vramBytes;
};
constexpr uint64_t kGiB = 1ull << 30;
constexpr std::array<ChipShape, 5> kChips{{
    {"gfx1100", 96, 24 * kGiB},
    {"gfx1101", 60, 16 * kGiB},
    {"gfx1102", 32, 8 * kGiB},
    {"gfx1200", 32, 16 * kGiB},
    {"gfx1201", 64, 16 * kGiB},
}};

}  // namespace

std::string gfxNameFromTargetVersion(uint32_t version) {
    char name[32];
    std::snprintf(name, sizeof name, "gfx%u%x%x", version / 10000, (version / 100) % 100, version % 100);
    return name;
}

Result<uint32_t> targetVersionFromGfxName(std::string_view name) {
    auto bad = [&] {
        // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on "'" + std::string(...).
        std::string message(name);
        message += " is not of the form gfxMMms (e.g. gfx1100, gfx90a)";
        return plainError("gfx name", message);
    };
    if (name.size() < 6 || name.substr(0, 3) != "gfx") return bad();
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const std::string_view digits = name.substr(3);
    const int minor = hex(digits[digits.size() - 2]), stepping = hex(digits.back());
    uint32_t major = 0;
    for (char c : digits.substr(0, digits.size() - 2)) {
        if (c < '0' || c > '9') return bad();
        major = major * 10 + uint32_t(c - '0');
    }
    if (minor < 0 || stepping < 0 || major == 0) return bad();
    return major * 10000 + uint32_t(minor) * 100 + uint32_t(stepping);
}

Status applyGenerationTraits(GpuCaps& caps) {
    caps.gfxMajor = caps.gfxTargetVersion / 10000;
    caps.gfxMinor = (caps.gfxTargetVersion / 100) % 100;
    caps.gfxStepping = caps.gfxTargetVersion % 100;
    caps.gfxName = gfxNameFromTargetVersion(caps.gfxTargetVersion);
    if (caps.gfxMajor != 11 && caps.gfxMajor != 12)
        return plainError("caps", caps.gfxName + " is not RDNA3 (gfx11) or RDNA4 (gfx12); this runtime emits PM4 for those only");
    // RDNA runs wave32 natively (LLVM AMDGPUUsage: wavefrontsize64 is optional on GFX10+).
    caps.waveSize = 32;
    // 64 KiB of LDS per workgroup on GFX10+ in WGP mode (LLVM AMDGPUUsage "LDS" / Mesa
    // ac_gpu_info.c lds_size_per_workgroup); topology's lds_size_in_kb overrides when present.
    if (caps.ldsBytes == 0) caps.ldsBytes = 64 * 1024;
    // LLVM AMDGPU.td: FeatureISAVersion11_* and 12_* carry Dot8Insts (v_dot4_i32_iu8) and WMMA
    // (GFX11: FeatureWMMA-style v_wmma_*_16x16x16; GFX12: the gfx12 WMMA encodings).
    caps.hasDot4 = true;
    caps.hasWmma = true;
    if (caps.simdPerCu == 0) caps.simdPerCu = 2;             // Mesa ac_gpu_info.c: 2 SIMDs per CU on GFX10+
    if (caps.maxWavesPerSimd == 0) caps.maxWavesPerSimd = 16;  // Mesa: max_waves_per_simd 16 on GFX10.3+
    if (caps.numXcc == 0) caps.numXcc = 1;
    caps.queueBuffers = queueBufferSizes(caps.gfxTargetVersion, caps.computeUnits, caps.numXcc);
    return {};
}

QueueBufferSizes queueBufferSizes(uint32_t gfxv, uint32_t computeUnits, uint32_t numXcc) {
    // kfd_queue.c: the per-CU wave context is VGPR + SGPR 0x4000 + LDS 0x10000 + HWREG 0x1000,
    // VGPR 0x60000 on 110000/110001/120000/120001 (the 1.5x VGPR files) and 0x40000 otherwise.
    const bool bigVgprFile = gfxv == 110000 || gfxv == 110001 || gfxv == 120000 || gfxv == 120001;
    const uint64_t vgprPerCu = bigVgprFile ? 0x60000 : 0x40000;
    const uint64_t perCu = vgprPerCu + 0x4000 + 0x10000 + 0x1000;
    const uint32_t xcc = numXcc ? numXcc : 1;
    const uint64_t cuPerXcc = computeUnits / xcc;
    // GFX10.1+ (gfxv >= 100100): 32 waves per CU, 12 control-stack bytes per wave; the stack
    // has a 40-byte header (SIZEOF_HSA_USER_CONTEXT_SAVE_AREA_HEADER) and an 8-byte tail.
    const uint64_t waves = cuPerXcc * 32;
    QueueBufferSizes s;
    s.ctlStackBytes = uint32_t(alignUp(40 + waves * 12 + 8, 4096));
    const uint64_t wgData = alignUp(cuPerXcc * perCu, 4096);
    s.ctxSaveBytes = uint32_t(s.ctlStackBytes + wgData);
    s.debugMemoryBytes = uint32_t(alignUp(waves * 32, 64));  // DEBUGGER_BYTES_PER_WAVE 32, align 64
    s.eopBytes = 4096;  // every gfxv >= 80000 except Tonga
    s.ctxSaveMappingBytes = alignUp((uint64_t(s.ctxSaveBytes) + s.debugMemoryBytes) * xcc, 4096);
    return s;
}

Result<GpuCaps> capsFromGfxName(std::string_view gfxName) {
    for (const ChipShape& chip : kChips) {
        if (chip.name != gfxName) continue;
        GpuCaps caps;
        caps.gfxTargetVersion = targetVersionFromGfxName(chip.name).value();
        caps.computeUnits = chip.computeUnits;
        caps.vramBytes = chip.vramBytes;
        if (Status s = applyGenerationTraits(caps); !s) return s.error();
        return caps;
    }
    std::string known;
    for (const ChipShape& chip : kChips) known += (known.empty() ? "" : ", ") + std::string(chip.name);
    return plainError("simulated GPU", "unknown gfx target '" + std::string(gfxName) + "' (known: " + known + ")");
}

std::string describe(const GpuCaps& c) {
    char text[256];
    std::snprintf(text, sizeof text, "%s (gfx_target_version %u): %u CUs, wave%u, %u KiB LDS, %llu MiB VRAM%s%s",
                  c.gfxName.c_str(), c.gfxTargetVersion, c.computeUnits, c.waveSize, c.ldsBytes / 1024,
                  static_cast<unsigned long long>(c.vramBytes >> 20), c.hasDot4 ? ", dot4" : "", c.hasWmma ? ", wmma" : "");
    return text;
}

}  // namespace zinc::kfd
