// One OpenCL C source for two targets: amdgcn (clang-19 -nogpulib, no OpenCL builtins at
// all) and PoCL's CPU device (standard OpenCL builtins). Work-item ids, barriers and the few
// hardware instructions the kernels use are mapped here; nothing else in kernels/cl/ may
// call a target-specific builtin.
#ifndef ZK_COMPAT_H
#define ZK_COMPAT_H

// Float expressions are evaluated exactly as written: the cpu tier is compiled without FMA
// contraction, and bit-exact comparisons depend on the same products and sums.
#pragma OPENCL FP_CONTRACT OFF

#ifdef __AMDGCN__
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define ZK_LID() ((int)__builtin_amdgcn_workitem_id_x())
#define ZK_GROUP_X() ((int)__builtin_amdgcn_workgroup_id_x())
#define ZK_GROUP_Y() ((int)__builtin_amdgcn_workgroup_id_y())
#define ZK_GROUP_Z() ((int)__builtin_amdgcn_workgroup_id_z())
// Workgroup barrier for LDS and global data: release fence, s_barrier, acquire fence (what
// the OpenCL barrier lowers to on AMDGPU).
static inline void zk_barrier(void) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#else
#define ZK_LID() ((int)get_local_id(0))
#define ZK_GROUP_X() ((int)get_group_id(0))
#define ZK_GROUP_Y() ((int)get_group_id(1))
#define ZK_GROUP_Z() ((int)get_group_id(2))
static inline void zk_barrier(void) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }
#endif

// PoCL 3.1 lost local-memory stores in two shapes seen here: a return before the first
// barrier taken by the whole group (moe_topk), and every work-item storing the same value to
// one local location (attention). Kernels guard with a flag and let one work-item store.
//
// Every kernel fixes its workgroup size; the metadata carries it as .reqd_workgroup_size and
// the launcher must use it (kernels index LDS with it).
#define ZK_KERNEL(WG) __kernel __attribute__((reqd_work_group_size(WG, 1, 1)))

// Integer min/max/clamp (the OpenCL overloads are library functions, absent with -nogpulib).
static inline int zk_min_i(int a, int b) { return a < b ? a : b; }
static inline int zk_max_i(int a, int b) { return a > b ? a : b; }
static inline int zk_clamp_i(int v, int lo, int hi) { return zk_min_i(zk_max_i(v, lo), hi); }
typedef __global const uchar* ZkBytes;
// Activation bytes: in global memory, or staged in LDS by the matvecs (ZK_MV_STAGE_ACT). On
// amdgcn a generic pointer (OpenCL C 2.0) that clang resolves to global or LDS loads once the
// inline functions are inlined into a caller with a known address space; PoCL builds OpenCL C
// 1.2 and never stages, so there it stays global.
#ifdef __AMDGCN__
typedef const uchar* ZkAnyBytes;
#define ZK_ANY_AS
#define ZK_MV_STAGE_ACT 1
#else
typedef __global const uchar* ZkAnyBytes;
#define ZK_ANY_AS __global
#define ZK_MV_STAGE_ACT 0
#endif

// Sums of four byte products. a is four unsigned bytes (weights 0..63) or four signed bytes,
// b four signed bytes (the 8-bit activation quants). gfx11 and gfx12 have v_dot4_i32_iu8.
#ifdef __AMDGCN__
static inline int zk_dot4_us(uint a, uint b, int acc) { return __builtin_amdgcn_sudot4(false, (int)a, true, (int)b, acc, false); }
static inline int zk_dot4_ss(uint a, uint b, int acc) { return __builtin_amdgcn_sudot4(true, (int)a, true, (int)b, acc, false); }
#else
static inline int zk_dot4_us(uint a, uint b, int acc) {
    for (int i = 0; i < 32; i += 8) acc += (int)((a >> i) & 0xffu) * (int)(char)((b >> i) & 0xffu);
    return acc;
}
static inline int zk_dot4_ss(uint a, uint b, int acc) {
    for (int i = 0; i < 32; i += 8) acc += (int)(char)((a >> i) & 0xffu) * (int)(char)((b >> i) & 0xffu);
    return acc;
}
#endif

// A fused multiply-add, rounded once (the host's std::fma).
#ifdef __AMDGCN__
static inline float zk_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
#else
static inline float zk_fma(float a, float b, float c) { return fma(a, b, c); }
#endif

#endif  // ZK_COMPAT_H
