// linalg.cu: batched matmul and gemm.
//
//   bmm_{dtype}          c[i] = a[i] · b[i] (gpukit_core::abi, "bmm")
//   bmm_small_{dtype}    the same, with the small tile (aux entry)
//   gemm_{dtype}         y = alpha·(a·op(b)) + beta·c + bias (gpukit_core::abi::conv)
//   gemm_small_{dtype}   the same, with the small tile (aux entry)
//
// Order of operations (docs/numerics.md rule 2, docs/ops/conv.md): every output is one
// fma chain acc = fma(load(a[r][t]), load(b[t][j]), acc) over t = 0..k ascending,
// starting from +0.0, in the compute type R (f32 for f32/f16/bf16, f64 for f64). gemm
// then takes v = R(alpha)·acc; v = fma(R(beta), load(c), v) with C; v = v + load(bias)
// with a bias; and every output is stored once.
//
// Shape: a block of 256 threads computes a BM×BN output tile, each thread a TM×TN
// register micro-tile. The k dimension is walked in tiles of BK = 8, in ascending
// order, staged in shared memory (double-buffered, in the compute type: f16/bf16 are
// widened exactly when staged) from coalesced global loads; within a k-tile t ascends.
// So each accumulator sees exactly the contract's sequence of fmas; the tiling only
// decides WHEN each fma runs, never the order within one output.
//
// The last k-tile is padded to BK with a = +0.0 and b = -0.0: fma(+0, -0, acc) adds an
// exact -0.0 product, and x + (-0) = x for every x (both zeros included, NaN stays NaN),
// so the padding leaves every accumulator bit-identical (a +0·+0 padding would not:
// it turns an accumulator of -0.0, reachable by an underflowing product, into +0.0).
// Rows past m and columns past n are computed on zeros and never stored.
//
// Tiles per compute type: f32 128×64 (8×4 per thread) and 64×64 (4×4, "small");
// f64 64×64 (4×4) and 32×32 (2×2, "small"), register-capped by __launch_bounds__ to 2
// (big, <= 128 registers) and 4 (small, <= 64) blocks per SM with no spills (an 8×8
// f32 micro-tile does not fit in 128). The plan (crates/gpukit-cuda/src/plan/linalg.rs)
// takes the small tile when the big one would leave the device idle.
// Grid: x over column tiles, y over row tiles, z over the batch; each loops with its
// grid stride, so any size fits in the 65535 limits of y and z.
//
// The tile core below (gk_mm_*) is shared in spirit with conv.cu (conv2d's implicit
// GEMM holds a copy, as the sources are compiled one by one).
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
// out of range. `bl.get(l, k0)` likewise for B: k-major (rows = columns j, for B
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
        for (int l = 0; l < LA; ++l) sm.as[buf][tid % BK][l * (NT / BK) + tid / BK] = ra[l];
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

// B row-major [K, N] at `b`, tile columns from n0: this thread reads column
// n0 + tid%BN at t = k0 + l*(NT/BN) + tid/BN; -0.0 past K, +0.0 past N.
template <class T, int BN> struct GkMmNMajor {
    typedef typename GkElem<T>::Real R;
    static constexpr bool KMAJOR = false;
    static constexpr int S = GK_MM_THREADS / BN;  // t step from slot l to slot l+1
    const T* p;  // &b[(tid/BN) * N + n0 + tid%BN] (dereferenced only in range)
    i64 N;
    i64 kleft;  // K - tid/BN
    bool colok;
    __device__ __forceinline__ GkMmNMajor(const T* b, i64 n0, i64 N_, i64 K) : N(N_) {
        const int tid = threadIdx.x;
        const i64 j = n0 + tid % BN;
        colok = j < N;
        p = b + (i64)(tid / BN) * N + j;
        kleft = K - tid / BN;
    }
    __device__ __forceinline__ void init() {}
    __device__ __forceinline__ void advance(i64) {}
    __device__ __forceinline__ R get(int l, i64 k0) const {
        const i64 tk = k0 + l * S;  // t - tid/BN
        if (tk >= kleft) return -R(0);
        if (!colok) return R(0);
        return gk_load(p[tk * N]);
    }
};

// Tiles along one grid axis: blocks stride over them.
__device__ __forceinline__ i64 gk_mm_tiles(i64 len, int tile) { return (len + tile - 1) / tile; }

// bmm: c [batch, m, n] = a_i [m, k] · b_i [k, n], a_i at a + i*a_bs, b_i at b + i*b_bs.
template <class T, bool BIG>
__device__ __forceinline__ void gk_bmm(T* __restrict__ c, const T* __restrict__ a,
                                       const T* __restrict__ b, i64 batch, i64 m, i64 k, i64 n,
                                       i64 a_bs, i64 b_bs) {
    typedef typename GkElem<T>::Real R;
    typedef GkMmCfg<R, BIG> C;
    __shared__ GkMmSmem<R, C> sm;
    const int tx = threadIdx.x % (C::BN / C::TN);
    const int ty = threadIdx.x / (C::BN / C::TN);
    const i64 mt = gk_mm_tiles(m, C::BM), nt = gk_mm_tiles(n, C::BN);
    for (i64 bz = blockIdx.z; bz < batch; bz += gridDim.z) {
        for (i64 by = blockIdx.y; by < mt; by += gridDim.y) {
            for (i64 bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                const i64 m0 = by * C::BM, n0 = bx * C::BN;
                const GkMmKMajor<T, C::BM * GK_MM_BK / GK_MM_THREADS> al(a + bz * a_bs, m0, m, k,
                                                                        R(0));
                GkMmNMajor<T, C::BN> bl(b + bz * b_bs, n0, n, k);
                R acc[C::TM][C::TN];
                gk_mm_tile<R, C>(sm, al, bl, k, acc);
                T* cz = c + bz * m * n;
#pragma unroll
                for (int i = 0; i < C::TM; ++i) {
                    const i64 r = m0 + gk_mm_row<C>(ty, i);
#pragma unroll
                    for (int j = 0; j < C::TN; ++j) {
                        const i64 col = n0 + gk_mm_col<C>(tx, j);
                        if (r < m && col < n) cz[r * n + col] = gk_store<T>(acc[i][j]);
                    }
                }
            }
        }
    }
}

// gemm: y [m, n] = alpha·(a [m, k] · op(b)) + beta·c + bias. y may be exactly c (each
// element of c is read by the thread that then writes that element of y).
template <class T, bool BIG, bool TRANS>
__device__ __forceinline__ void gk_gemm_t(GkMmSmem<typename GkElem<T>::Real,
                                                   GkMmCfg<typename GkElem<T>::Real, BIG>>& sm,
                                          T* y, const T* __restrict__ a, const T* __restrict__ b,
                                          const T* c, const T* __restrict__ bias, i64 m, i64 k,
                                          i64 n, bool has_c, bool has_bias,
                                          typename GkElem<T>::Real alpha,
                                          typename GkElem<T>::Real beta) {
    typedef typename GkElem<T>::Real R;
    typedef GkMmCfg<R, BIG> C;
    const int tx = threadIdx.x % (C::BN / C::TN);
    const int ty = threadIdx.x / (C::BN / C::TN);
    const i64 mt = gk_mm_tiles(m, C::BM), nt = gk_mm_tiles(n, C::BN);
    for (i64 by = blockIdx.y; by < mt; by += gridDim.y) {
        for (i64 bx = blockIdx.x; bx < nt; bx += gridDim.x) {
            const i64 m0 = by * C::BM, n0 = bx * C::BN;
            const GkMmKMajor<T, C::BM * GK_MM_BK / GK_MM_THREADS> al(a, m0, m, k, R(0));
            R acc[C::TM][C::TN];
            if (TRANS) {
                // B(t, j) = b[j*k + t]: k-major like A, -0.0 past k.
                GkMmKMajor<T, C::BN * GK_MM_BK / GK_MM_THREADS> bl(b, n0, n, k, -R(0));
                gk_mm_tile<R, C>(sm, al, bl, k, acc);
            } else {
                GkMmNMajor<T, C::BN> bl(b, n0, n, k);
                gk_mm_tile<R, C>(sm, al, bl, k, acc);
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i) {
                const i64 r = m0 + gk_mm_row<C>(ty, i);
#pragma unroll
                for (int j = 0; j < C::TN; ++j) {
                    const i64 col = n0 + gk_mm_col<C>(tx, j);
                    if (r < m && col < n) {
                        R v = alpha * acc[i][j];
                        if (has_c) v = gk_fma(beta, gk_load(c[r * n + col]), v);
                        if (has_bias) v = v + gk_load(bias[col]);
                        y[r * n + col] = gk_store<T>(v);
                    }
                }
            }
        }
    }
}

template <class T, bool BIG>
__device__ __forceinline__ void gk_gemm(T* y, const T* a, const T* b, const T* c, const T* bias,
                                        i64 m, i64 k, i64 n, i64 trans_b, i64 has_c,
                                        i64 has_bias, double alpha, double beta) {
    typedef typename GkElem<T>::Real R;
    __shared__ GkMmSmem<R, GkMmCfg<R, BIG>> sm;
    // R(alpha), R(beta): round to nearest even (exact for f64).
    const R al = (R)alpha, be = (R)beta;
    if (trans_b != 0) {
        gk_gemm_t<T, BIG, true>(sm, y, a, b, c, bias, m, k, n, has_c != 0, has_bias != 0, al, be);
    } else {
        gk_gemm_t<T, BIG, false>(sm, y, a, b, c, bias, m, k, n, has_c != 0, has_bias != 0, al, be);
    }
}

#define GK_BMM_ENTRY(op, sfx, T, BIG)                                                         \
    extern "C" __global__ void __launch_bounds__(GK_MM_THREADS, GK_MM_MINB(BIG))              \
        op##_##sfx(T* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b,       \
                   i64 batch, i64 m, i64 k, i64 n, i64 a_bstride, i64 b_bstride) {            \
        gk_bmm<T, BIG>(c, a, b, batch, m, k, n, a_bstride, b_bstride);                        \
    }
#define GK_BMM(op, sfx, T) GK_BMM_ENTRY(op, sfx, T, true)
#define GK_BMM_SMALL(op, sfx, T) GK_BMM_ENTRY(op, sfx, T, false)
GK_FOR_bmm(GK_BMM)
GK_FOR_bmm_small(GK_BMM_SMALL)

#define GK_GEMM_ENTRY(op, sfx, T, BIG)                                                        \
    extern "C" __global__ void __launch_bounds__(GK_MM_THREADS, GK_MM_MINB(BIG))              \
        op##_##sfx(T* y, const T* __restrict__ a, const T* __restrict__ b, const T* c,        \
                   const T* __restrict__ bias, i64 m, i64 k, i64 n, i64 trans_b, i64 has_c,   \
                   i64 has_bias, double alpha, double beta) {                                 \
        gk_gemm<T, BIG>(y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta);    \
    }
#define GK_GEMM(op, sfx, T) GK_GEMM_ENTRY(op, sfx, T, true)
#define GK_GEMM_SMALL(op, sfx, T) GK_GEMM_ENTRY(op, sfx, T, false)
GK_FOR_gemm(GK_GEMM)
GK_FOR_gemm_small(GK_GEMM_SMALL)
