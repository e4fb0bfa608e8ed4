// Scalar ALU, scalar memory, program flow and wait counters (SOP1/SOP2/SOPK/SOPC/SOPP, SMEM).
// Semantics: AMD "RDNA3 Instruction Set Architecture Reference Guide" (2023) and "AMD RDNA4
// Instruction Set Architecture Reference Guide" (2025), chapters "Scalar ALU Operations",
// "Scalar Memory Operations" and "Program Flow Control"; gfx12 renames (s_add_co_*, s_wait_*)
// map to the gfx11 operation of the same meaning.
#include <cmath>

#include "kfd/sim/isa/wave.h"

namespace zinc::kfd::isa {
namespace {

inline uint32_t a(const Wave& w, const Inst& i) { return readScalar(w, i.op[1]); }
inline uint32_t b(const Wave& w, const Inst& i) { return readScalar(w, i.op[2]); }
inline uint64_t a64(const Wave& w, const Inst& i) { return read64(w, i.op[1], 0, false); }
inline uint64_t b64(const Wave& w, const Inst& i) { return read64(w, i.op[2], 0, false); }
inline void d(Wave& w, const Inst& i, uint32_t v) { writeSdst(w, i.op[0], v); }
inline void d64(Wave& w, const Inst& i, uint64_t v) {
    if (i.op[0].reg == kNull) return;
    w.s[i.op[0].reg] = uint32_t(v);
    w.s[i.op[0].reg + 1] = uint32_t(v >> 32);
}
inline int32_t sext16(int64_t v) { return int32_t(int16_t(uint16_t(v))); }

// SOP2 / SOP1 arithmetic and logic.
void s_mov_b32(Wave& w, const Inst& i) { d(w, i, a(w, i)); }
void s_mov_b64(Wave& w, const Inst& i) { d64(w, i, a64(w, i)); }
void s_movk_i32(Wave& w, const Inst& i) { d(w, i, uint32_t(sext16(i.op[1].value))); }
void s_add_u32(Wave& w, const Inst& i) {
    const uint64_t r = uint64_t(a(w, i)) + b(w, i);
    d(w, i, uint32_t(r));
    w.scc = r >> 32;
}
void s_addc_u32(Wave& w, const Inst& i) {
    const uint64_t r = uint64_t(a(w, i)) + b(w, i) + (w.scc ? 1 : 0);
    d(w, i, uint32_t(r));
    w.scc = r >> 32;
}
void s_sub_u32(Wave& w, const Inst& i) {
    const uint32_t x = a(w, i), y = b(w, i);
    d(w, i, x - y);
    w.scc = y > x;
}
// D = S0 - S1 - SCC; SCC = the borrow (s_sub_co_ci_u32 on gfx12).
void s_subb_u32(Wave& w, const Inst& i) {
    const uint32_t x = a(w, i), y = b(w, i), borrow = w.scc ? 1 : 0;
    d(w, i, x - y - borrow);
    w.scc = uint64_t(y) + borrow > x;
}
void s_add_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(a(w, i)), y = int32_t(b(w, i));
    const int32_t r = int32_t(uint32_t(x) + uint32_t(y));
    d(w, i, uint32_t(r));
    w.scc = ((x >= 0) == (y >= 0)) && ((r >= 0) != (x >= 0));
}
void s_sub_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(a(w, i)), y = int32_t(b(w, i));
    const int32_t r = int32_t(uint32_t(x) - uint32_t(y));
    d(w, i, uint32_t(r));
    w.scc = ((x >= 0) != (y >= 0)) && ((r >= 0) != (x >= 0));
}
void s_addk_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(w.s[i.op[0].reg]), y = sext16(i.op[1].value);
    const int32_t r = int32_t(uint32_t(x) + uint32_t(y));
    w.s[i.op[0].reg] = uint32_t(r);
    w.scc = ((x >= 0) == (y >= 0)) && ((r >= 0) != (x >= 0));
}
void s_add_nc_u64(Wave& w, const Inst& i) { d64(w, i, a64(w, i) + b64(w, i)); }
void s_mul_u64(Wave& w, const Inst& i) { d64(w, i, a64(w, i) * b64(w, i)); }
void s_mul_i32(Wave& w, const Inst& i) { d(w, i, a(w, i) * b(w, i)); }
void s_mul_hi_u32(Wave& w, const Inst& i) { d(w, i, uint32_t((uint64_t(a(w, i)) * b(w, i)) >> 32)); }
void s_mul_hi_i32(Wave& w, const Inst& i) { d(w, i, uint32_t(uint64_t(int64_t(int32_t(a(w, i))) * int32_t(b(w, i))) >> 32)); }
void s_abs_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(a(w, i));
    const uint32_t r = x < 0 ? 0u - uint32_t(x) : uint32_t(x);
    d(w, i, r);
    w.scc = r != 0;
}
void s_not_b32(Wave& w, const Inst& i) {
    const uint32_t r = ~a(w, i);
    d(w, i, r);
    w.scc = r != 0;
}
void s_sext_i32_i16(Wave& w, const Inst& i) { d(w, i, uint32_t(int32_t(int16_t(a(w, i))))); }
#define ZK_LOGIC(NAME, EXPR)                        \
    void NAME(Wave& w, const Inst& i) {             \
        const uint32_t x = a(w, i), y = b(w, i);    \
        const uint32_t r = (EXPR);                  \
        d(w, i, r);                                 \
        w.scc = r != 0;                             \
    }
ZK_LOGIC(s_and_b32, x & y)
ZK_LOGIC(s_or_b32, x | y)
ZK_LOGIC(s_xor_b32, x ^ y)
ZK_LOGIC(s_and_not1_b32, x & ~y)
ZK_LOGIC(s_or_not1_b32, x | ~y)
ZK_LOGIC(s_lshl_b32, x << (y & 31))
ZK_LOGIC(s_lshr_b32, x >> (y & 31))
ZK_LOGIC(s_ashr_i32, uint32_t(int32_t(x) >> (y & 31)))
#undef ZK_LOGIC
void s_lshl_b64(Wave& w, const Inst& i) {
    const uint64_t r = a64(w, i) << (b(w, i) & 63);
    d64(w, i, r);
    w.scc = r != 0;
}
void s_cselect_b32(Wave& w, const Inst& i) { d(w, i, w.scc ? a(w, i) : b(w, i)); }
void s_bitcmp0_b32(Wave& w, const Inst& i) { w.scc = ((readScalar(w, i.op[0]) >> (readScalar(w, i.op[1]) & 31)) & 1) == 0; }
void s_bitcmp1_b32(Wave& w, const Inst& i) { w.scc = ((readScalar(w, i.op[0]) >> (readScalar(w, i.op[1]) & 31)) & 1) != 0; }

// Exec mask manipulation (wave32: EXEC_LO).
// sdst = EXEC; EXEC = op(src, EXEC); SCC = EXEC != 0.
template <uint32_t (*Op)(uint32_t src, uint32_t exec)> void saveexec(Wave& w, const Inst& i) {
    const uint32_t old = w.s[kExecLo];
    w.s[kExecLo] = Op(a(w, i), old);
    d(w, i, old);
    w.scc = w.s[kExecLo] != 0;
}
uint32_t andExec(uint32_t src, uint32_t exec) { return src & exec; }
uint32_t orExec(uint32_t src, uint32_t exec) { return src | exec; }
uint32_t andNotExec(uint32_t src, uint32_t exec) { return src & ~exec; }

// SALU float (gfx12).
void s_cvt_f32_i32(Wave& w, const Inst& i) { d(w, i, asU(float(int32_t(a(w, i))))); }
void s_cvt_f32_u32(Wave& w, const Inst& i) { d(w, i, asU(float(a(w, i)))); }
void s_cvt_u32_f32(Wave& w, const Inst& i) {
    const float f = asF(a(w, i));
    d(w, i, std::isnan(f) || f <= 0 ? 0u : f >= 4294967296.0f ? 0xffffffffu : uint32_t(f));
}
void s_mul_f32(Wave& w, const Inst& i) { d(w, i, asU(asF(a(w, i)) * asF(b(w, i)))); }
void s_sub_f32(Wave& w, const Inst& i) { d(w, i, asU(asF(a(w, i)) - asF(b(w, i)))); }
void s_add_f32(Wave& w, const Inst& i) { d(w, i, asU(asF(a(w, i)) + asF(b(w, i)))); }
// s_fmac_f32 sdst, ssrc0, ssrc1: D = S0 * S1 + D, fused (one rounding).
void s_fmac_f32(Wave& w, const Inst& i) { d(w, i, asU(std::fma(asF(a(w, i)), asF(b(w, i)), asF(readScalar(w, i.op[0]))))); }
// s_fmaak_f32 d, s0, s1, K = s0 * s1 + K; s_fmamk_f32 d, s0, K, s1 = s0 * K + s1: op1 * op2 + op3 as written.
void s_fmaak_f32(Wave& w, const Inst& i) { d(w, i, asU(std::fma(asF(a(w, i)), asF(b(w, i)), asF(readScalar(w, i.op[3]))))); }
// Truncates; NaN gives 0, out-of-range values saturate.
void s_cvt_i32_f32(Wave& w, const Inst& i) {
    const float f = asF(a(w, i));
    d(w, i, uint32_t(std::isnan(f) ? 0 : f <= -2147483648.0f ? INT32_MIN : f >= 2147483648.0f ? INT32_MAX : int32_t(f)));
}
void s_min_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(a(w, i)), y = int32_t(b(w, i));
    w.scc = x < y;
    d(w, i, uint32_t(w.scc ? x : y));
}
void s_max_i32(Wave& w, const Inst& i) {
    const int32_t x = int32_t(a(w, i)), y = int32_t(b(w, i));
    w.scc = x >= y;
    d(w, i, uint32_t(w.scc ? x : y));
}

// SOPC compares: operands are op[0], op[1].
#define ZK_CMP(NAME, T, OP) \
    void NAME(Wave& w, const Inst& i) { w.scc = T(readScalar(w, i.op[0])) OP T(readScalar(w, i.op[1])); }
ZK_CMP(s_cmp_eq_u32, uint32_t, ==)
ZK_CMP(s_cmp_lg_u32, uint32_t, !=)
ZK_CMP(s_cmp_lt_u32, uint32_t, <)
ZK_CMP(s_cmp_le_u32, uint32_t, <=)
ZK_CMP(s_cmp_gt_u32, uint32_t, >)
ZK_CMP(s_cmp_ge_u32, uint32_t, >=)
ZK_CMP(s_cmp_eq_i32, int32_t, ==)
ZK_CMP(s_cmp_lg_i32, int32_t, !=)
ZK_CMP(s_cmp_lt_i32, int32_t, <)
ZK_CMP(s_cmp_le_i32, int32_t, <=)
ZK_CMP(s_cmp_gt_i32, int32_t, >)
ZK_CMP(s_cmp_ge_i32, int32_t, >=)
#undef ZK_CMP
// Float compares: the n-forms are the negations (true when either side is NaN).
void s_cmp_neq_f32(Wave& w, const Inst& i) { w.scc = !(asF(readScalar(w, i.op[0])) == asF(readScalar(w, i.op[1]))); }
void s_cmp_ngt_f32(Wave& w, const Inst& i) { w.scc = !(asF(readScalar(w, i.op[0])) > asF(readScalar(w, i.op[1]))); }
void s_cmp_nlt_f32(Wave& w, const Inst& i) { w.scc = !(asF(readScalar(w, i.op[0])) < asF(readScalar(w, i.op[1]))); }
// The ordered compares: false when either side is NaN.
#define ZK_CMPF(NAME, OP) \
    void NAME(Wave& w, const Inst& i) { w.scc = asF(readScalar(w, i.op[0])) OP asF(readScalar(w, i.op[1])); }
ZK_CMPF(s_cmp_lt_f32, <)
ZK_CMPF(s_cmp_le_f32, <=)
ZK_CMPF(s_cmp_gt_f32, >)
#undef ZK_CMPF
// Bit-field extract: offset S1[4:0], width S1[22:16]; SCC = result != 0 (RDNA3 ISA guide, SOP2).
void s_bfe_u32(Wave& w, const Inst& i) {
    const uint32_t off = b(w, i) & 31, width = (b(w, i) >> 16) & 0x7f;
    const uint32_t r = width == 0 ? 0u : width >= 32 ? a(w, i) >> off : (a(w, i) >> off) & ((1u << width) - 1);
    d(w, i, r);
    w.scc = r != 0;
}
// NaN tests (x != x compiles to s_cmp_u_f32 x, x where x is uniform on gfx12).
void s_cmp_u_f32(Wave& w, const Inst& i) { w.scc = std::isnan(asF(readScalar(w, i.op[0]))) || std::isnan(asF(readScalar(w, i.op[1]))); }
void s_cmp_o_f32(Wave& w, const Inst& i) { w.scc = !std::isnan(asF(readScalar(w, i.op[0]))) && !std::isnan(asF(readScalar(w, i.op[1]))); }
void s_cmp_lg_u64(Wave& w, const Inst& i) { w.scc = read64(w, i.op[0], 0, false) != read64(w, i.op[1], 0, false); }
void s_cmp_eq_u64(Wave& w, const Inst& i) { w.scc = read64(w, i.op[0], 0, false) == read64(w, i.op[1], 0, false); }
void s_cmpk_eq_i32(Wave& w, const Inst& i) { w.scc = int32_t(readScalar(w, i.op[0])) == sext16(i.op[1].value); }
void s_cmpk_lg_i32(Wave& w, const Inst& i) { w.scc = int32_t(readScalar(w, i.op[0])) != sext16(i.op[1].value); }
void s_cmpk_lt_i32(Wave& w, const Inst& i) { w.scc = int32_t(readScalar(w, i.op[0])) < sext16(i.op[1].value); }
void s_cmpk_gt_i32(Wave& w, const Inst& i) { w.scc = int32_t(readScalar(w, i.op[0])) > sext16(i.op[1].value); }

// Program flow.
void s_nop(Wave&, const Inst&) {}
void s_endpgm(Wave& w, const Inst&) { w.state = Wave::State::Done; }
void s_code_end(Wave& w, const Inst&) { w.fail("ran into s_code_end (padding after the last kernel)"); }
void s_branch(Wave& w, const Inst& i) { w.pc = uint32_t(i.target); }
#define ZK_BRANCH(NAME, COND) \
    void NAME(Wave& w, const Inst& i) { if (COND) w.pc = uint32_t(i.target); }
ZK_BRANCH(s_cbranch_scc0, !w.scc)
ZK_BRANCH(s_cbranch_scc1, w.scc)
ZK_BRANCH(s_cbranch_execz, w.s[kExecLo] == 0)
ZK_BRANCH(s_cbranch_execnz, w.s[kExecLo] != 0)
ZK_BRANCH(s_cbranch_vccz, w.s[kVccLo] == 0)
ZK_BRANCH(s_cbranch_vccnz, w.s[kVccLo] != 0)
#undef ZK_BRANCH
uint64_t nextAddress(const Wave& w, const Inst& i) { return w.loadBase + i.address + i.size; }
void jumpTo(Wave& w, uint64_t address) {
    const int32_t at = address >= w.loadBase ? w.program->at(address - w.loadBase) : -1;
    if (at < 0) w.fail("jumps to 0x" + [&] { char t[24]; std::snprintf(t, sizeof t, "%llx", (unsigned long long)address); return std::string(t); }() + ", which is no instruction of the code object");
    w.pc = uint32_t(at);
}
void s_getpc_b64(Wave& w, const Inst& i) { d64(w, i, nextAddress(w, i)); }
void s_setpc_b64(Wave& w, const Inst& i) { jumpTo(w, read64(w, i.op[0], 0, false)); }
void s_swappc_b64(Wave& w, const Inst& i) {
    const uint64_t target = a64(w, i);
    d64(w, i, nextAddress(w, i));
    jumpTo(w, target);
}
void s_barrier(Wave& w, const Inst&) { w.state = Wave::State::Barrier; }

// Wait counters: loads write their registers only when a wait covers them (wave.h, kPoison).
constexpr uint8_t kLoad = 1, kDs = 2, kKm = 4;
void s_waitcnt(Wave& w, const Inst& i) {
    if (i.counts[0] >= 0) w.waitFor(kLoad, i.counts[0]);
    if (i.counts[1] >= 0) w.waitFor(kDs | kKm, i.counts[1]);
}
void s_waitcnt_vscnt(Wave&, const Inst&) {}  // stores are performed at issue
int waitValue(const Inst& i) { return int(i.op[0].kind == OpKind::Sgpr ? i.op[1].value : i.op[0].value); }
void s_wait_loadcnt(Wave& w, const Inst& i) { w.waitFor(kLoad, waitValue(i)); }
void s_wait_dscnt(Wave& w, const Inst& i) { w.waitFor(kDs, waitValue(i)); }
void s_wait_kmcnt(Wave& w, const Inst& i) { w.waitFor(kKm, waitValue(i)); }
void s_wait_loadcnt_dscnt(Wave& w, const Inst& i) {
    const int v = waitValue(i);
    w.waitFor(kLoad, (v >> 8) & 0x3f);
    w.waitFor(kDs, v & 0x3f);
}
void s_wait_storecnt_dscnt(Wave& w, const Inst& i) { w.waitFor(kDs, waitValue(i) & 0x3f); }

// Scalar loads: s_load_* sdst, sbase, offset (immediate, SGPR or null) [+ offset:N]; the
// unaligned address (callers align it to their access size).
uint64_t smemAddress(const Wave& w, const Inst& i) {
    const uint64_t base = read64(w, i.op[1], 0, false) & ~uint64_t(3);
    uint64_t off = uint64_t(int64_t(i.offset));
    if (i.nops > 2) {
        const Operand& o = i.op[2];
        if (o.kind == OpKind::Sgpr && o.reg != kNull) off += w.s[o.reg];
        else if (o.kind == OpKind::IntConst || o.kind == OpKind::Literal) off += uint64_t(o.value);
    }
    return base + off;
}
template <int N> void s_load(Wave& w, const Inst& i) {
    const uint64_t address = smemAddress(w, i) & ~uint64_t(3);
    const uint8_t* p = w.host(address, N * 4);
    static_assert(N <= 16, "s_load: at most 16 dwords");
    uint32_t* data = w.loadData(w.issue(Counter::Km, false, i.op[0].reg, N, 0));
    std::memcpy(data, p, N * 4);
    if (w.stale && w.stale->anyScalar() && w.stale->scalarStale(address, address + N * 4))
        for (int k = 0; k < N; ++k)  // a cache may hold an old copy (stale_memory.h); per dword
            if (w.stale->scalarStale(address + 4 * k, address + 4 * k + 4)) data[k] = kPoison;
    for (int k = 0; k < N; ++k) w.s[i.op[0].reg + k] = kPoison;
    w.bytesRead += N * 4;
}

// s_load_u16 (gfx12): one zero-extended 16-bit value, from a 2-byte aligned address.
void s_load_u16(Wave& w, const Inst& i) {
    const uint64_t address = smemAddress(w, i) & ~uint64_t(1);
    uint16_t v = 0;
    std::memcpy(&v, w.host(address, 2), 2);
    const bool stale = w.stale && w.stale->anyScalar() && w.stale->scalarStale(address, address + 2);
    w.loadData(w.issue(Counter::Km, false, i.op[0].reg, 1, 0))[0] = stale ? kPoison : uint32_t(v);
    w.s[i.op[0].reg] = kPoison;
    w.bytesRead += 2;
}

}  // namespace

std::vector<OpEntry> scalarOps() {
    return {
        {"s_mov_b32", s_mov_b32}, {"s_mov_b64", s_mov_b64}, {"s_movk_i32", s_movk_i32},
        {"s_add_u32", s_add_u32}, {"s_add_co_u32", s_add_u32}, {"s_addc_u32", s_addc_u32}, {"s_add_co_ci_u32", s_addc_u32},
        {"s_sub_u32", s_sub_u32}, {"s_sub_co_u32", s_sub_u32}, {"s_subb_u32", s_subb_u32}, {"s_sub_co_ci_u32", s_subb_u32},
        {"s_add_f32", s_add_f32}, {"s_fmaak_f32", s_fmaak_f32}, {"s_fmamk_f32", s_fmaak_f32}, {"s_cvt_i32_f32", s_cvt_i32_f32},
        {"s_min_i32", s_min_i32}, {"s_cmp_lt_f32", s_cmp_lt_f32}, {"s_cmp_le_f32", s_cmp_le_f32}, {"s_cmp_gt_f32", s_cmp_gt_f32},
        {"s_cmp_ngt_f32", s_cmp_ngt_f32}, {"s_cmp_u_f32", s_cmp_u_f32}, {"s_bfe_u32", s_bfe_u32}, {"s_cmp_o_f32", s_cmp_o_f32}, {"s_cmpk_eq_i32", s_cmpk_eq_i32},
        {"s_add_i32", s_add_i32}, {"s_add_co_i32", s_add_i32}, {"s_sub_i32", s_sub_i32}, {"s_sub_co_i32", s_sub_i32},
        {"s_addk_i32", s_addk_i32}, {"s_addk_co_i32", s_addk_i32}, {"s_add_nc_u64", s_add_nc_u64}, {"s_mul_u64", s_mul_u64},
        {"s_mul_i32", s_mul_i32}, {"s_mul_hi_u32", s_mul_hi_u32}, {"s_mul_hi_i32", s_mul_hi_i32}, {"s_abs_i32", s_abs_i32}, {"s_not_b32", s_not_b32},
        {"s_sext_i32_i16", s_sext_i32_i16},
        {"s_and_b32", s_and_b32}, {"s_or_b32", s_or_b32}, {"s_xor_b32", s_xor_b32}, {"s_and_not1_b32", s_and_not1_b32},
        {"s_or_not1_b32", s_or_not1_b32}, {"s_lshl_b32", s_lshl_b32}, {"s_lshr_b32", s_lshr_b32}, {"s_ashr_i32", s_ashr_i32},
        {"s_lshl_b64", s_lshl_b64}, {"s_cselect_b32", s_cselect_b32}, {"s_bitcmp0_b32", s_bitcmp0_b32}, {"s_bitcmp1_b32", s_bitcmp1_b32},
        {"s_and_saveexec_b32", saveexec<andExec>}, {"s_or_saveexec_b32", saveexec<orExec>},
        {"s_and_not1_saveexec_b32", saveexec<andNotExec>},
        {"s_cvt_f32_i32", s_cvt_f32_i32}, {"s_cvt_f32_u32", s_cvt_f32_u32}, {"s_cvt_u32_f32", s_cvt_u32_f32}, {"s_mul_f32", s_mul_f32},
        {"s_sub_f32", s_sub_f32}, {"s_max_i32", s_max_i32}, {"s_cmp_neq_f32", s_cmp_neq_f32}, {"s_cmp_nlt_f32", s_cmp_nlt_f32},
        {"s_fmac_f32", s_fmac_f32},
        {"s_cmp_lg_u64", s_cmp_lg_u64}, {"s_cmp_eq_u64", s_cmp_eq_u64}, {"s_cmpk_lg_i32", s_cmpk_lg_i32}, {"s_load_u16", s_load_u16},
        {"s_cmp_eq_u32", s_cmp_eq_u32}, {"s_cmp_lg_u32", s_cmp_lg_u32}, {"s_cmp_lt_u32", s_cmp_lt_u32}, {"s_cmp_le_u32", s_cmp_le_u32},
        {"s_cmp_gt_u32", s_cmp_gt_u32}, {"s_cmp_ge_u32", s_cmp_ge_u32}, {"s_cmp_eq_i32", s_cmp_eq_i32}, {"s_cmp_lg_i32", s_cmp_lg_i32},
        {"s_cmp_lt_i32", s_cmp_lt_i32}, {"s_cmp_le_i32", s_cmp_le_i32}, {"s_cmp_gt_i32", s_cmp_gt_i32}, {"s_cmp_ge_i32", s_cmp_ge_i32},
        {"s_cmpk_lt_i32", s_cmpk_lt_i32}, {"s_cmpk_gt_i32", s_cmpk_gt_i32},
        {"s_nop", s_nop}, {"s_delay_alu", s_nop}, {"s_clause", s_nop}, {"s_sendmsg", s_nop}, {"s_waitcnt_depctr", s_nop},
        {"s_set_inst_prefetch_distance", s_nop}, {"s_wait_expcnt", s_nop}, {"s_wait_samplecnt", s_nop}, {"s_wait_bvhcnt", s_nop},
        {"s_endpgm", s_endpgm}, {"s_code_end", s_code_end}, {"s_branch", s_branch},
        {"s_cbranch_scc0", s_cbranch_scc0}, {"s_cbranch_scc1", s_cbranch_scc1}, {"s_cbranch_execz", s_cbranch_execz},
        {"s_cbranch_execnz", s_cbranch_execnz}, {"s_cbranch_vccz", s_cbranch_vccz}, {"s_cbranch_vccnz", s_cbranch_vccnz},
        {"s_getpc_b64", s_getpc_b64}, {"s_setpc_b64", s_setpc_b64}, {"s_swappc_b64", s_swappc_b64},
        {"s_barrier", s_barrier}, {"s_barrier_signal", s_barrier}, {"s_barrier_wait", s_nop},
        {"s_waitcnt", s_waitcnt}, {"s_waitcnt_vscnt", s_waitcnt_vscnt}, {"s_wait_loadcnt", s_wait_loadcnt},
        {"s_wait_dscnt", s_wait_dscnt}, {"s_wait_kmcnt", s_wait_kmcnt}, {"s_wait_loadcnt_dscnt", s_wait_loadcnt_dscnt},
        {"s_wait_storecnt_dscnt", s_wait_storecnt_dscnt}, {"s_wait_storecnt", s_waitcnt_vscnt},
        {"s_load_b32", s_load<1>}, {"s_load_b64", s_load<2>}, {"s_load_b96", s_load<3>}, {"s_load_b128", s_load<4>},
        {"s_load_b256", s_load<8>}, {"s_load_b512", s_load<16>},
    };
}

}  // namespace zinc::kfd::isa
