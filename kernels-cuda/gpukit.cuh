// gpukit.cuh: what every gpukit CUDA kernel shares.
//
// The numerics contract (docs/numerics.md) in CUDA form: element load/store rules,
// the NaN and signed-zero rules of max/min/relu, total integer division, and the
// reduction shape (32 lanes, 8192-item chunks, fixed shuffle tree) of
// crates/gpukit-core/src/reduce.rs, step for step. Sources are compiled with
// --fmad=false: every fused multiply-add below is written out (fma / fmaf), no other
// product is ever contracted.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "table.cuh"

typedef __half gk_f16;
typedef __nv_bfloat16 gk_bf16;
typedef long long i64;

// ---------------------------------------------------------------------------------
// Element rules (contract rule 6): f16/bf16 are storage types computed in f32.
// ---------------------------------------------------------------------------------

template <class T> struct GkElem;

template <> struct GkElem<float> {
    typedef float Real;
    static __device__ __forceinline__ float load(float x) { return x; }
    static __device__ __forceinline__ float store(float r) { return r; }
};
template <> struct GkElem<double> {
    typedef double Real;
    static __device__ __forceinline__ double load(double x) { return x; }
    static __device__ __forceinline__ double store(double r) { return r; }
};
template <> struct GkElem<gk_f16> {
    typedef float Real;
    // Exact widening.
    static __device__ __forceinline__ float load(gk_f16 x) { return __half2float(x); }
    // Round to nearest even, subnormals kept.
    static __device__ __forceinline__ gk_f16 store(float r) { return __float2half_rn(r); }
};
template <> struct GkElem<gk_bf16> {
    typedef float Real;
    static __device__ __forceinline__ float load(gk_bf16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ gk_bf16 store(float r) { return __float2bfloat16_rn(r); }
};

template <class T> __device__ __forceinline__ typename GkElem<T>::Real gk_load(T x) {
    return GkElem<T>::load(x);
}
template <class T> __device__ __forceinline__ T gk_store(typename GkElem<T>::Real r) {
    return GkElem<T>::store(r);
}

// Explicit fused multiply-add in the compute type (rule 2).
__device__ __forceinline__ float gk_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double gk_fma(double a, double b, double c) { return __fma_rn(a, b, c); }

// ---------------------------------------------------------------------------------
// Specials (rule 7), as gpukit_core::numeric::{max_nan, min_nan, relu}.
// ---------------------------------------------------------------------------------

__device__ __forceinline__ bool gk_isnan(float x) { return x != x; }
__device__ __forceinline__ bool gk_isnan(double x) { return x != x; }
__device__ __forceinline__ bool gk_signbit(float x) { return (__float_as_uint(x) >> 31) != 0; }
__device__ __forceinline__ bool gk_signbit(double x) {
    return (__double_as_longlong(x) >> 63) != 0;
}

// NaN if either is NaN (the first NaN); max(-0, +0) = +0 in either order.
template <class R> __device__ __forceinline__ R gk_max_nan(R a, R b) {
    if (gk_isnan(a)) return a;
    if (gk_isnan(b)) return b;
    if (a > b) return a;
    if (b > a) return b;
    return gk_signbit(a) ? b : a;
}

// NaN if either is NaN (the first NaN); min(-0, +0) = -0 in either order.
template <class R> __device__ __forceinline__ R gk_min_nan(R a, R b) {
    if (gk_isnan(a)) return a;
    if (gk_isnan(b)) return b;
    if (a < b) return a;
    if (b < a) return b;
    return gk_signbit(a) ? a : b;
}

// x if x is NaN or > 0, else +0.
template <class R> __device__ __forceinline__ R gk_relu(R x) {
    return (gk_isnan(x) || x > R(0)) ? x : R(0);
}

// Integer division defined everywhere: truncates; a / 0 = 0; MIN / -1 = MIN.
__device__ __forceinline__ i64 gk_int_div(i64 a, i64 b) {
    if (b == 0) return 0;
    if (b == -1) return (i64)(0ULL - (unsigned long long)a);
    return a / b;
}
__device__ __forceinline__ int gk_int_div(int a, int b) {
    if (b == 0) return 0;
    if (b == -1) return (int)(0U - (unsigned)a);
    return a / b;
}
// Wrapping integer arithmetic (signed overflow is undefined in C++: go through unsigned).
__device__ __forceinline__ i64 gk_wadd(i64 a, i64 b) {
    return (i64)((unsigned long long)a + (unsigned long long)b);
}
__device__ __forceinline__ i64 gk_wsub(i64 a, i64 b) {
    return (i64)((unsigned long long)a - (unsigned long long)b);
}
__device__ __forceinline__ i64 gk_wmul(i64 a, i64 b) {
    return (i64)((unsigned long long)a * (unsigned long long)b);
}
__device__ __forceinline__ int gk_wadd(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int gk_wsub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int gk_wmul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }

// ---------------------------------------------------------------------------------
// Indexing helpers.
// ---------------------------------------------------------------------------------

// This thread's global index and the grid's thread count, for grid-stride loops
// (64-bit: a grid may cover more than 2^31 items).
__device__ __forceinline__ i64 gk_tid() {
    return (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x;
}
__device__ __forceinline__ i64 gk_nthreads() { return (i64)gridDim.x * (i64)blockDim.x; }

// ---------------------------------------------------------------------------------
// Data movement helpers (index.cu, movement.cu).
// ---------------------------------------------------------------------------------

typedef unsigned long long gk_u64;

// The raw-bits type of each storage type: movement copies bits, so NaN payloads and
// -0.0 survive on every dtype.
template <class T> struct GkBits;
template <> struct GkBits<float> { typedef unsigned int B; };
template <> struct GkBits<double> { typedef unsigned long long B; };
template <> struct GkBits<gk_f16> { typedef unsigned short B; };
template <> struct GkBits<gk_bf16> { typedef unsigned short B; };
template <> struct GkBits<i64> { typedef unsigned long long B; };
template <> struct GkBits<int> { typedef unsigned int B; };

// A sum's compute type and operations per storage type (reduce.cu's folds, elements.cu's
// cumsum): floats load / + / store in GkElem's Real; integers are their own compute type
// and wrap (gpukit_core::numeric::Arith's acc_* rules).
template <class T> struct GkSum {
    typedef typename GkElem<T>::Real A;
    static __device__ __forceinline__ A load(T x) { return gk_load(x); }
    static __device__ __forceinline__ A add(A a, A b) { return a + b; }
    static __device__ __forceinline__ T store(A a) { return gk_store<T>(a); }
};
template <> struct GkSum<i64> {
    typedef i64 A;
    static __device__ __forceinline__ i64 load(i64 x) { return x; }
    static __device__ __forceinline__ i64 add(i64 a, i64 b) { return gk_wadd(a, b); }
    static __device__ __forceinline__ i64 store(i64 a) { return a; }
};
template <> struct GkSum<int> {
    typedef int A;
    static __device__ __forceinline__ int load(int x) { return x; }
    static __device__ __forceinline__ int add(int a, int b) { return gk_wadd(a, b); }
    static __device__ __forceinline__ int store(int a) { return a; }
};

// A linear index e = (a * nb + b) * nc + c as its digits, advanced by a fixed step
// (whose digits are sa, sb, sc) with carries. Digits b < nb and c < nc on entry, so one
// subtraction per digit suffices; a is unbounded (the caller stops at the end). Grid-
// stride loops use it instead of a division per element.
struct GkPos3 {
    gk_u64 a, b, c;
};
__device__ __forceinline__ GkPos3 gk_split3(gk_u64 e, gk_u64 nb, gk_u64 nc) {
    GkPos3 p;
    p.c = e % nc;
    const gk_u64 r = e / nc;
    p.b = r % nb;
    p.a = r / nb;
    return p;
}
__device__ __forceinline__ void gk_advance3(GkPos3& p, const GkPos3& s, gk_u64 nb, gk_u64 nc) {
    p.c += s.c;
    if (p.c >= nc) {
        p.c -= nc;
        p.b += 1;
    }
    p.b += s.b;
    if (p.b >= nb) {
        p.b -= nb;
        p.a += 1;
    }
    p.a += s.a;
}

// ---------------------------------------------------------------------------------
// The reduction shape (rule 4), one warp at a time. Every function below must be
// called by all 32 lanes of a warp together (converged), and returns the result in
// every lane.
// ---------------------------------------------------------------------------------

#define GK_LANES 32
#define GK_CHUNK 8192LL
#define GK_FULL_MASK 0xffffffffu

__device__ __forceinline__ int gk_lane() { return (int)(threadIdx.x & 31); }

template <class A> __device__ __forceinline__ A gk_shfl_down(A v, int d) {
    return __shfl_down_sync(GK_FULL_MASK, v, d);
}
template <class A> __device__ __forceinline__ A gk_shfl(A v, int src) {
    return __shfl_sync(GK_FULL_MASK, v, src);
}

// The fixed tree: for w = 16, 8, 4, 2, 1, lane l < w takes combine(acc_l, acc_{l+w}).
// Returns lane 0's value in every lane.
template <class A, class Comb> __device__ __forceinline__ A gk_warp_tree(A acc, Comb comb) {
    const int lane = gk_lane();
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) {
        A o = gk_shfl_down(acc, w);
        if (lane < w) acc = comb(acc, o);
    }
    return gk_shfl(acc, 0);
}

// One chunk: items start..end (at most GK_CHUNK); lane l folds items start+l,
// start+l+32, ... in ascending order with step(acc, i), starting from zero; then the tree.
template <class A, class Step, class Comb>
__device__ __forceinline__ A gk_warp_chunk(i64 start, i64 end, A zero, Step step, Comb comb) {
    A acc = zero;
    for (i64 i = start + gk_lane(); i < end; i += GK_LANES) acc = step(acc, i);
    return gk_warp_tree(acc, comb);
}

// Lane of the partial with index j at the next level (chunk starts are multiples of 32).
__device__ __forceinline__ bool gk_owns(i64 j) { return (j & 31) == gk_lane(); }

// The whole shape over items 0..n, by one warp: chunks, then the same shape over the
// chunk sums (step = combine(acc, partial)), recursively; three levels cover
// n <= 8192^3 = 2^39 items, more than any device memory holds. Mirrors
// gpukit_core::reduce::fold.
template <class A, class Step, class Comb>
__device__ A gk_warp_fold(i64 n, A zero, Step step, Comb comb) {
    if (n <= GK_CHUNK) return gk_warp_chunk(0, n, zero, step, comb);
    const i64 c1 = (n + GK_CHUNK - 1) / GK_CHUNK;  // chunk sums
    if (c1 <= GK_CHUNK) {
        A acc = zero;
        for (i64 j = 0; j < c1; ++j) {
            i64 e = (j + 1) * GK_CHUNK < n ? (j + 1) * GK_CHUNK : n;
            A p = gk_warp_chunk(j * GK_CHUNK, e, zero, step, comb);
            if (gk_owns(j)) acc = comb(acc, p);
        }
        return gk_warp_tree(acc, comb);
    }
    const i64 c2 = (c1 + GK_CHUNK - 1) / GK_CHUNK;  // sums of chunk sums (c2 <= 8192)
    A acc3 = zero;
    for (i64 k = 0; k < c2; ++k) {
        A acc2 = zero;
        i64 je = (k + 1) * GK_CHUNK < c1 ? (k + 1) * GK_CHUNK : c1;
        for (i64 j = k * GK_CHUNK; j < je; ++j) {
            i64 e = (j + 1) * GK_CHUNK < n ? (j + 1) * GK_CHUNK : n;
            A p = gk_warp_chunk(j * GK_CHUNK, e, zero, step, comb);
            if (gk_owns(j)) acc2 = comb(acc2, p);
        }
        A q = gk_warp_tree(acc2, comb);
        if (gk_owns(k)) acc3 = comb(acc3, q);
    }
    return gk_warp_tree(acc3, comb);
}
