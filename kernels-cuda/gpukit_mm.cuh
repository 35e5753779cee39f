// gpukit_mm.cuh: the shared-memory matmul tile core of linalg.cu (bmm, gemm) and
// conv.cu (conv2d's implicit GEMM). Include it after gpukit.cuh.
//
//   GK_MM_THREADS, GK_MM_BK, GK_MM_MINB(BIG)   block size, k-tile depth, blocks per SM
//   GkMmCfg<R, BIG>                            tile shapes per compute type (big/small)
//   GkMmSmem<R, C>                             the double-buffered shared k-tiles
//   gk_mm_ldv, gk_mm_row, gk_mm_col            micro-tile vector loads and coordinates
//   gk_mm_tile<R, C>(sm, al, bl, K, acc)       one output tile's accumulation, over
//                                              caller-supplied A and B loaders
//   GkMmKMajor<T, L>                           a loader for a row-major [rows, K] operand
//
// The invariant that keeps every user bit-exact (docs/numerics.md rule 2): every output
// is ONE fma chain acc = fma(A(row, t), B(t, col), acc) over t = 0..K ascending, starting
// from +0.0, in the compute type R. The k dimension is walked in ascending k-tiles of
// GK_MM_BK, and within a k-tile t ascends; the tiling (block tile, micro-tile, double
// buffering) only changes WHEN each fma runs, never which fmas an output sees or their
// order. The last k-tile is padded to GK_MM_BK with A = +0.0 and B = -0.0 (the loaders'
// contract below): fma(+0, -0, acc) adds an exact -0.0 product and x + (-0) = x for every
// x, so the padding leaves every accumulator bit-identical, even acc = -0.0 (a +0·+0
// padding would turn an accumulator of -0.0 into +0.0). Rows and columns past the
// operand are computed on +0.0 and never stored. A loader that breaks this padding rule
// (or a change that reorders t) changes results.
#pragma once

#include "gpukit.cuh"

#define GK_MM_THREADS 256
#define GK_MM_BK 8
// Blocks per SM the register budget must allow: 2 for the big tile (<= 128 registers),
// 4 for the small one (<= 64).
#define GK_MM_MINB(BIG) ((BIG) ? 2 : 4)

// Tile configurations: BM×BN outputs per block, TM×TN per thread; RV = elements per
// 16-byte shared-memory vector.
template <class R, bool BIG> struct GkMmCfg;
template <> struct GkMmCfg<float, true> {
    enum { BM = 128, BN = 64, TM = 8, TN = 4, RV = 4 };
};
template <> struct GkMmCfg<float, false> {
    enum { BM = 64, BN = 64, TM = 4, TN = 4, RV = 4 };
};
template <> struct GkMmCfg<double, true> {
    enum { BM = 64, BN = 64, TM = 4, TN = 4, RV = 2 };
};
template <> struct GkMmCfg<double, false> {
    enum { BM = 32, BN = 32, TM = 2, TN = 2, RV = 2 };
};

// Double-buffered k-tiles: As[buf][t][row], Bs[buf][t][col] (rows padded by one
// vector: conflict-free transposed stores, 16-byte aligned rows).
template <class R, class C> struct GkMmSmem {
    __align__(16) R as[2][GK_MM_BK][C::BM + C::RV];
    __align__(16) R bs[2][GK_MM_BK][C::BN + C::RV];
};

// RV consecutive compute-type values from 16-byte-aligned shared memory.
template <int RV> __device__ __forceinline__ void gk_mm_ldv(const float* p, float* o) {
    const float4 v = *reinterpret_cast<const float4*>(p);
    o[0] = v.x;
    o[1] = v.y;
    o[2] = v.z;
    o[3] = v.w;
}
template <int RV> __device__ __forceinline__ void gk_mm_ldv(const double* p, double* o) {
    const double2 v = *reinterpret_cast<const double2*>(p);
    o[0] = v.x;
    o[1] = v.y;
}

// The tile row (column) of micro-tile row i (column j) of thread (ty, tx): TM/RV
// groups of RV consecutive rows, the groups BM/(TM/RV) apart.
template <class C> __device__ __forceinline__ int gk_mm_row(int ty, int i) {
    return (i / C::RV) * (C::BM * C::RV / C::TM) + ty * C::RV + (i % C::RV);
}
template <class C> __device__ __forceinline__ int gk_mm_col(int tx, int j) {
    return (j / C::RV) * (C::BN * C::RV / C::TN) + tx * C::RV + (j % C::RV);
}

// One output tile's accumulation: acc[i][j] = the fma chain over t = 0..K ascending of
// A(row, t) · B(t, col), from +0.0.
//
// Loaders: `al.get(l, k0)` returns this thread's A element of staging slot l in the
// k-tile starting at k0: load(A(row, t)) with row = l*(NT/BK) + tid/BK, t = k0 + tid%BK
// (consecutive threads along t: "k-major", A row-major [M, K]), +0.0 when row or t is
// out of range; or, when !AL::KMAJOR (A stored [K, M], gemm's trans_a), t = k0 +
// l*(NT/BM) + tid/BM and row tid%BM (consecutive threads along the row), +0.0 likewise. `bl.get(l, k0)` likewise for B: k-major (rows = columns j, for B
// stored [N, K]) when BL::KMAJOR, else t = k0 + l*(NT/BN) + tid/BN and column tid%BN
// (consecutive threads along the column, B row-major [K, N]); -0.0 when t >= K (the
// exact padding), +0.0 for a column out of range. bl.init() and bl.advance(kt) are
// hooks for loaders with per-tile state in shared memory (conv2d's tap table): init()
// runs before tile 0 is fetched (a barrier follows), advance(kt) during tile kt after
// tile kt+1 was fetched (a barrier follows before tile kt+2 is).
template <class R, class C, class AL, class BL>
__device__ __forceinline__ void gk_mm_tile(GkMmSmem<R, C>& sm, const AL& al, BL& bl, i64 K,
                                           R (&acc)[C::TM][C::TN]) {
    constexpr int BK = GK_MM_BK;
    constexpr int NT = GK_MM_THREADS;
    constexpr int LA = C::BM * BK / NT;  // A elements staged per thread
    constexpr int LB = C::BN * BK / NT;  // B elements staged per thread
    static_assert(LA >= 1 && LB >= 1, "tile too small for the block");
    static_assert((C::BM / C::TM) * (C::BN / C::TN) == NT, "one micro-tile per thread");
    const int tid = threadIdx.x;
    const int tx = tid % (C::BN / C::TN);
    const int ty = tid / (C::BN / C::TN);
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] = R(0);
    const i64 nkt = (K + BK - 1) / BK;
    R ra[LA], rb[LB];
    // Global -> registers, k-tile kt.
    auto fetch = [&](i64 kt) {
#pragma unroll
        for (int l = 0; l < LA; ++l) ra[l] = al.get(l, kt * BK);
#pragma unroll
        for (int l = 0; l < LB; ++l) rb[l] = bl.get(l, kt * BK);
    };
    // Registers -> shared buffer buf.
    auto stage = [&](int buf) {
#pragma unroll
        for (int l = 0; l < LA; ++l) {
            if (AL::KMAJOR) {
                sm.as[buf][tid % BK][l * (NT / BK) + tid / BK] = ra[l];
            } else {
                sm.as[buf][l * (NT / C::BM) + tid / C::BM][tid % C::BM] = ra[l];
            }
        }
#pragma unroll
        for (int l = 0; l < LB; ++l) {
            if (BL::KMAJOR) {
                sm.bs[buf][tid % BK][l * (NT / BK) + tid / BK] = rb[l];
            } else {
                sm.bs[buf][l * (NT / C::BN) + tid / C::BN][tid % C::BN] = rb[l];
            }
        }
    };
    // The previous tile's readers of the shared buffers are done.
    __syncthreads();
    bl.init();
    __syncthreads();
    if (nkt > 0) {
        fetch(0);
        stage(0);
    }
    __syncthreads();
    for (i64 kt = 0; kt < nkt; ++kt) {
        const int buf = (int)(kt & 1);
        const bool more = kt + 1 < nkt;
        if (more) fetch(kt + 1);
        bl.advance(kt);
#pragma unroll
        for (int t = 0; t < BK; ++t) {
            R af[C::TM], bf[C::TN];
#pragma unroll
            for (int g = 0; g < C::TM; g += C::RV)
                gk_mm_ldv<C::RV>(&sm.as[buf][t][gk_mm_row<C>(ty, g)], &af[g]);
#pragma unroll
            for (int g = 0; g < C::TN; g += C::RV)
                gk_mm_ldv<C::RV>(&sm.bs[buf][t][gk_mm_col<C>(tx, g)], &bf[g]);
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
                for (int j = 0; j < C::TN; ++j) acc[i][j] = gk_fma(af[i], bf[j], acc[i][j]);
        }
        if (more) stage(buf ^ 1);
        __syncthreads();
    }
}

// A k-major operand: row-major [rows, K] (row stride K) at `base`, tile rows from r0;
// this thread reads rows r0 + l*(NT/BK) + tid/BK at t = k0 + tid%BK. `pad` is the
// value past K (+0.0 for A, -0.0 for a transposed B); rows out of range read +0.0.
template <class T, int L> struct GkMmKMajor {
    typedef typename GkElem<T>::Real R;
    static constexpr bool KMAJOR = true;
    const T* p;      // &base[row(0) * K + tid%BK] (dereferenced only in range)
    i64 lstride;     // (NT/BK) * K: from slot l to slot l+1
    i64 kleft;       // K - tid%BK: t < K  <=>  k0 < kleft
    unsigned rowok;  // bit l: row(l) < rows
    R pad;
    __device__ __forceinline__ GkMmKMajor(const T* base, i64 r0, i64 rows, i64 K, R pad_)
        : pad(pad_) {
        const int tid = threadIdx.x;
        const i64 row0 = r0 + tid / GK_MM_BK;
        p = base + row0 * K + tid % GK_MM_BK;
        lstride = (i64)(GK_MM_THREADS / GK_MM_BK) * K;
        kleft = K - tid % GK_MM_BK;
        rowok = 0;
#pragma unroll
        for (int l = 0; l < L; ++l)
            if (row0 + (i64)l * (GK_MM_THREADS / GK_MM_BK) < rows) rowok |= 1u << l;
    }
    __device__ __forceinline__ void init() {}
    __device__ __forceinline__ void advance(i64) {}
    __device__ __forceinline__ R get(int l, i64 k0) const {
        if (k0 >= kleft) return pad;
        if (!((rowok >> l) & 1u)) return R(0);
        return gk_load(p[k0 + l * lstride]);
    }
};
