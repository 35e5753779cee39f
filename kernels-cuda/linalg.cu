// linalg.cu: batched matmul and gemm.
//
//   bmm_{dtype}          c[i] = a[i] · b[i] (gpukit_core::abi, "bmm")
//   bmm_small_{dtype}    the same, with the small tile (aux entry)
//   gemm_{dtype}         y = alpha·(op(a)·op(b)) + beta·c + bias (gpukit_core::abi::conv)
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
// (big, <= 128 registers) and 4 (bmm small, <= 64; gemm small keeps 2, see
// GK_GEMM_MINB) blocks per SM with no spills (an 8×8
// f32 micro-tile does not fit in 128). The plan (crates/gpukit-cuda/src/plan/linalg.rs)
// takes the small tile when the big one would leave the device idle.
// Grid: x over column tiles, y over row tiles, z over the batch; each loops with its
// grid stride, so any size fits in the 65535 limits of y and z.
//
// The tile core (GK_MM_*, GkMmCfg, GkMmSmem, gk_mm_tile, GkMmKMajor) is in
// gpukit_mm.cuh, shared with conv.cu's implicit GEMM; this file adds the n-major B
// loader and the bmm/gemm drivers.
#include "gpukit.cuh"
#include "gpukit_mm.cuh"

// An n-major operand: row-major [K, N] at `b` (B, or gemm's A stored [K, M] with
// trans_a), tile columns from n0: this thread reads column n0 + tid%BN at
// t = k0 + l*(NT/BN) + tid/BN; `kpad` past K (-0.0 for B, +0.0 for A), +0.0 past N.
template <class T, int BN> struct GkMmNMajor {
    typedef typename GkElem<T>::Real R;
    static constexpr bool KMAJOR = false;
    static constexpr int S = GK_MM_THREADS / BN;  // t step from slot l to slot l+1
    const T* p;  // &b[(tid/BN) * N + n0 + tid%BN] (dereferenced only in range)
    i64 N;
    i64 kleft;  // K - tid/BN
    bool colok;
    R kpad;
    __device__ __forceinline__ GkMmNMajor(const T* b, i64 n0, i64 N_, i64 K, R kpad_ = -R(0))
        : N(N_), kpad(kpad_) {
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
        if (tk >= kleft) return kpad;
        if (!colok) return R(0);
        return gk_load(p[tk * N]);
    }
};

// GkIf<B, X, Y>::type is X when B, else Y (NVRTC has no <type_traits>).
template <bool B, class X, class Y> struct GkIf { typedef X type; };
template <class X, class Y> struct GkIf<false, X, Y> { typedef Y type; };

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

// The tile of one gemm with loaders al (A) and bl (B), then the epilogue.
template <class T, class C, class AL, class BL>
__device__ __forceinline__ void gk_gemm_tile(GkMmSmem<typename GkElem<T>::Real, C>& sm,
                                             const AL& al, BL& bl, i64 m0, i64 n0, T* y,
                                             const T* c, const T* __restrict__ bias, i64 m,
                                             i64 k, i64 n, bool has_c, bool has_bias,
                                             i64 c_rs, i64 c_cs,
                                             typename GkElem<T>::Real alpha,
                                             typename GkElem<T>::Real beta) {
    typedef typename GkElem<T>::Real R;
    const int tx = threadIdx.x % (C::BN / C::TN);
    const int ty = threadIdx.x / (C::BN / C::TN);
    R acc[C::TM][C::TN];
    gk_mm_tile<R, C>(sm, al, bl, k, acc);
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        const i64 r = m0 + gk_mm_row<C>(ty, i);
#pragma unroll
        for (int j = 0; j < C::TN; ++j) {
            const i64 col = n0 + gk_mm_col<C>(tx, j);
            if (r < m && col < n) {
                R v = alpha * acc[i][j];
                if (has_c) v = gk_fma(beta, gk_load(c[r * c_rs + col * c_cs]), v);
                if (has_bias) v = v + gk_load(bias[col]);
                y[r * n + col] = gk_store<T>(v);
            }
        }
    }
}

// gemm: y [m, n] = alpha·(op(a) · op(b)) + beta·c + bias, c(r, j) = c[r*c_rs + j*c_cs]
// (stride 0: broadcast). y may be exactly c (a full C: each element of c is read by the
// thread that then writes that element of y). A stored [k, m] (TA) is loaded n-major,
// +0.0 past k; B stored [n, k] (TB) k-major, -0.0 past k.
template <class T, bool BIG, bool TA, bool TB>
__device__ __forceinline__ void gk_gemm_t(GkMmSmem<typename GkElem<T>::Real,
                                                   GkMmCfg<typename GkElem<T>::Real, BIG>>& sm,
                                          T* y, const T* __restrict__ a, const T* __restrict__ b,
                                          const T* c, const T* __restrict__ bias, i64 m, i64 k,
                                          i64 n, bool has_c, bool has_bias, i64 c_rs, i64 c_cs,
                                          typename GkElem<T>::Real alpha,
                                          typename GkElem<T>::Real beta) {
    typedef typename GkElem<T>::Real R;
    typedef GkMmCfg<R, BIG> C;
    typedef typename GkIf<TA, GkMmNMajor<T, C::BM>,
                                      GkMmKMajor<T, C::BM * GK_MM_BK / GK_MM_THREADS>>::type AL;
    typedef typename GkIf<TB, GkMmKMajor<T, C::BN * GK_MM_BK / GK_MM_THREADS>,
                                      GkMmNMajor<T, C::BN>>::type BL;
    const i64 mt = gk_mm_tiles(m, C::BM), nt = gk_mm_tiles(n, C::BN);
    for (i64 by = blockIdx.y; by < mt; by += gridDim.y) {
        for (i64 bx = blockIdx.x; bx < nt; bx += gridDim.x) {
            const i64 m0 = by * C::BM, n0 = bx * C::BN;
            // A(r, t): a[r*k + t] (+0.0 past k), or a[t*m + r] with TA.
            const AL al(a, m0, m, k, R(0));
            // B(t, j): b[t*n + j], or b[j*k + t] with TB; -0.0 past k either way.
            BL bl(b, n0, n, k, -R(0));
            gk_gemm_tile<T, C>(sm, al, bl, m0, n0, y, c, bias, m, k, n, has_c, has_bias, c_rs,
                               c_cs, alpha, beta);
        }
    }
}

template <class T, bool BIG>
__device__ __forceinline__ void gk_gemm(T* y, const T* a, const T* b, const T* c, const T* bias,
                                        i64 m, i64 k, i64 n, i64 trans_b, i64 has_c,
                                        i64 has_bias, double alpha, double beta, i64 trans_a,
                                        i64 c_rs, i64 c_cs) {
    typedef typename GkElem<T>::Real R;
    __shared__ GkMmSmem<R, GkMmCfg<R, BIG>> sm;
    // R(alpha), R(beta): round to nearest even (exact for f64).
    const R al = (R)alpha, be = (R)beta;
    const bool hc = has_c != 0, hb = has_bias != 0;
#define GK_GEMM_CASE(TA, TB) \
    gk_gemm_t<T, BIG, TA, TB>(sm, y, a, b, c, bias, m, k, n, hc, hb, c_rs, c_cs, al, be)
    if (trans_a != 0) {
        if (trans_b != 0) {
            GK_GEMM_CASE(true, true);
        } else {
            GK_GEMM_CASE(true, false);
        }
    } else if (trans_b != 0) {
        GK_GEMM_CASE(false, true);
    } else {
        GK_GEMM_CASE(false, false);
    }
#undef GK_GEMM_CASE
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

// gemm's small tile is capped like the big one (2 blocks per SM, <= 128 registers), not
// like bmm's small tile (4, <= 64): with its four transpose variants and strided C,
// ptxas spilled 40 bytes at 64 registers on sm_80 and 4 bytes at 80 on sm_90.
#define GK_GEMM_MINB(BIG) GK_MM_MINB(true)
#define GK_GEMM_ENTRY(op, sfx, T, BIG)                                                        \
    extern "C" __global__ void __launch_bounds__(GK_MM_THREADS, GK_GEMM_MINB(BIG))            \
        op##_##sfx(T* y, const T* __restrict__ a, const T* __restrict__ b, const T* c,        \
                   const T* __restrict__ bias, i64 m, i64 k, i64 n, i64 trans_b, i64 has_c,   \
                   i64 has_bias, double alpha, double beta, i64 trans_a, i64 c_rs,            \
                   i64 c_cs) {                                                                \
        gk_gemm<T, BIG>(y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta,     \
                        trans_a, c_rs, c_cs);                                                 \
    }
#define GK_GEMM(op, sfx, T) GK_GEMM_ENTRY(op, sfx, T, true)
#define GK_GEMM_SMALL(op, sfx, T) GK_GEMM_ENTRY(op, sfx, T, false)
GK_FOR_gemm(GK_GEMM)
GK_FOR_gemm_small(GK_GEMM_SMALL)
