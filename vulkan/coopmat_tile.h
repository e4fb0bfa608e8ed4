#pragma once
// matmul_coopmat.comp's tile shapes (spec constants BM, BN), for the A/B switch
// ZINC_VK_COOPMAT_TILE and the shared memory each shape needs.
#include <cstdint>
#include <optional>
#include <string>

namespace zinc::vk {

// Weight rows x tokens of a workgroup; {0, 0} ("auto"): chosen per matrix by coopmatTileFor.
// PAIR decodes gate and up: half the rows per set, at least 64.
struct CoopmatTile {
    uint32_t rows = 0, tokens = 0;
    bool automatic() const { return rows == 0; }
};

// Shared memory of matmul_coopmat.comp: sW and sA rows of 144 bytes (64 halves of k and 16
// bytes of padding), sOut (a 16x16 f32 block per subgroup of a 256-thread workgroup) and the
// token tables sActRow / sOutRow.
constexpr uint32_t coopmatSharedBytes(uint32_t rowsPerSet, uint32_t sets, uint32_t tokens, uint32_t subgroupSize) {
    return (sets * rowsPerSet + tokens) * 144u + (256u / subgroupSize) * 1024u + 8u * tokens;
}

// The smallest shape (64 x 64, PAIR) and the largest (128 x 128), subgroups of 32.
inline constexpr uint32_t kCoopmatMinSharedBytes = coopmatSharedBytes(64, 2, 64, 32);   // 36,352
inline constexpr uint32_t kCoopmatMaxSharedBytes = coopmatSharedBytes(128, 1, 128, 32);  // 46,080

// "auto", "64x64", "128x64", "128x128"; nullopt for anything else.
inline std::optional<CoopmatTile> parseCoopmatTile(const std::string& s) {
    if (s == "auto") return CoopmatTile{};
    if (s == "64x64") return CoopmatTile{64, 64};
    if (s == "128x64") return CoopmatTile{128, 64};
    if (s == "128x128") return CoopmatTile{128, 128};
    return std::nullopt;
}

inline std::string coopmatTileName(CoopmatTile t) {
    return t.automatic() ? "auto" : std::to_string(t.rows) + "x" + std::to_string(t.tokens);
}

}  // namespace zinc::vk
