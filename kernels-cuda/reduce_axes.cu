// reduce_axes.cu: reductions along any set of axes (sum, mean, max, min, prod, l1, l2,
// logsumexp), gpukit_core::reduce_axes step for step.
//
//   reduce_axes_{dtype}   out, x, dims, strides, ndim, nkeep, n_out, n_red, code
//
// `dims`/`strides` hold the layout (gpukit_core::reduce_axes::AxesPlan): entries
// 0..nkeep the kept axes (output o row-major over them), nkeep..ndim the reduced axes
// (item j row-major over them), strides in x's elements. One warp per output,
// grid-stride over outputs (8 warps per 256-thread block); the block copies the layout
// to shared memory first. Sum-like parts run the reduction shape with gk_warp_fold
// (gpukit.cuh: 32 lanes, lane l folds items l, l+32, ... ascending, the fixed tree,
// 8192-item chunks combined as gpukit_core::reduce::combine_partials); max / min /
// the maxima of l2 and logsumexp are order-free (max_nan / min_nan: any order gives
// the same value; a NaN's payload is not part of the contract), folded per lane and
// then by a shuffle butterfly. Integers (sum, prod wrapping; max, min) are order-free.
//
//   sum        fold(acc + x_j) from +0
//   mean       sum / R(n)                       (n = 0: NaN)
//   max / min  max_nan from -inf / min_nan from +inf
//   prod       fold(acc * x_j) from 1, combine *
//   l1         fold(acc + |x_j|)
//   l2         m = max_nan(+0, |x_j|); NaN, inf: m; 0: +0; else e = exponent(m),
//              s = fold(fma(y, y, acc)) with y = x_j * 2^-e (exact scaling),
//              sqrt(s) * 2^e
//   logsumexp  m = max_nan(-inf, x_j); NaN, ±inf: m; else m + log(fold(acc + exp(x_j - m)))
#include "gpukit.cuh"
#include "gpukit_math.cuh"

#define RA_BLOCK 256
// gpukit_core::reduce_axes::MAX_RANK.
#define RA_RANK 8

// The layout in shared memory.
struct RaLayout {
    i64 d[RA_RANK];
    i64 s[RA_RANK];
    int nk;  // kept entries
    int nr;  // reduced entries
};

// Input offset of output o (its kept digits) and of item j (its reduced digits).
__device__ __forceinline__ i64 ra_base(const RaLayout* L, i64 o) {
    i64 off = 0;
    for (int i = L->nk - 1; i >= 0; --i) {
        const i64 d = L->d[i];
        off += (o % d) * L->s[i];
        o /= d;
    }
    return off;
}
__device__ __forceinline__ i64 ra_item(const RaLayout* L, i64 j) {
    if (L->nr == 1) return j * L->s[L->nk];
    i64 off = 0;
    for (int i = L->nk + L->nr - 1; i >= L->nk; --i) {
        const i64 d = L->d[i];
        off += (j % d) * L->s[i];
        j /= d;
    }
    return off;
}

// The sign bit cleared (|x|, NaN payload kept).
__device__ __forceinline__ float ra_abs(float x) {
    return __uint_as_float(__float_as_uint(x) & 0x7fffffffu);
}
__device__ __forceinline__ double ra_abs(double x) {
    return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffLL);
}
__device__ __forceinline__ bool ra_isinf(float x) {
    return (__float_as_uint(x) & 0x7fffffffu) == 0x7f800000u;
}
__device__ __forceinline__ bool ra_isinf(double x) {
    return (__double_as_longlong(x) & 0x7fffffffffffffffLL) == 0x7ff0000000000000LL;
}
__device__ __forceinline__ float ra_sqrt(float x) { return __fsqrt_rn(x); }
__device__ __forceinline__ double ra_sqrt(double x) { return __dsqrt_rn(x); }

// AxisReal: exponent (2^e <= |m| < 2^(e+1), subnormals from the leading mantissa bit),
// exact powers of two, +inf, and the L2 scaling x * 2^k.
template <class R> struct RaReal;
template <> struct RaReal<float> {
    static const int MAX_EXP = 127;
    static __device__ __forceinline__ int exponent(float m) {
        const unsigned b = __float_as_uint(m) & 0x7fffffffu;
        const int be = (int)(b >> 23);
        if (be != 0) return be - 127;
        return (31 - __clz((int)(b & 0x7fffffu))) - 149;
    }
    static __device__ __forceinline__ float pow2(int k) {
        return k >= -126 ? __uint_as_float((unsigned)(k + 127) << 23)
                         : __uint_as_float(1u << (k + 149));
    }
    static __device__ __forceinline__ float inf() { return __uint_as_float(0x7f800000u); }
};
template <> struct RaReal<double> {
    static const int MAX_EXP = 1023;
    static __device__ __forceinline__ int exponent(double m) {
        const unsigned long long b =
            (unsigned long long)__double_as_longlong(m) & 0x7fffffffffffffffull;
        const int be = (int)(b >> 52);
        if (be != 0) return be - 1023;
        return (63 - __clzll((long long)(b & 0xfffffffffffffull))) - 1074;
    }
    static __device__ __forceinline__ double pow2(int k) {
        return k >= -1022 ? __longlong_as_double((long long)(k + 1023) << 52)
                          : __longlong_as_double(1LL << (k + 1074));
    }
    static __device__ __forceinline__ double inf() {
        return __longlong_as_double(0x7ff0000000000000LL);
    }
};
template <class R> __device__ __forceinline__ R ra_scale(R x, int k) {
    if (k <= RaReal<R>::MAX_EXP) return x * RaReal<R>::pow2(k);
    return (x * RaReal<R>::pow2(k - RaReal<R>::MAX_EXP)) * RaReal<R>::pow2(RaReal<R>::MAX_EXP);
}

// An order-free fold f over ld(j), j < n, from init, by one warp; the value in every lane.
template <class V, class Ld, class F>
__device__ __forceinline__ V ra_warp_all(i64 n, V init, Ld ld, F f) {
    V m = init;
    for (i64 j = gk_lane(); j < n; j += 32) m = f(m, ld(j));
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) m = f(m, __shfl_xor_sync(GK_FULL_MASK, m, w));
    return m;
}

// One float output (the whole warp).
template <class T>
__device__ __forceinline__ typename GkElem<T>::Real ra_float_line(const T* x, const RaLayout* L,
                                                                  i64 base, i64 n, int code) {
    typedef typename GkElem<T>::Real R;
    auto ld = [=](i64 j) { return gk_load(x[base + ra_item(L, j)]); };
    auto add = [](R a, R b) { return a + b; };
    auto mx = [](R a, R b) { return gk_max_nan(a, b); };
    const R ninf = -RaReal<R>::inf();
    switch (code) {
        case 0:
        case 1: {
            const R s = gk_warp_fold(n, R(0), [=](R a, i64 j) { return a + ld(j); }, add);
            return code == 0 ? s : s / (R)n;
        }
        case 2:
            return ra_warp_all(n, ninf, ld, mx);
        case 3:
            return ra_warp_all(n, RaReal<R>::inf(), ld, [](R a, R b) { return gk_min_nan(a, b); });
        case 4:
            return gk_warp_fold(
                n, R(1), [=](R a, i64 j) { return a * ld(j); }, [](R a, R b) { return a * b; });
        case 5:
            return gk_warp_fold(n, R(0), [=](R a, i64 j) { return a + ra_abs(ld(j)); }, add);
        case 6: {
            const R m = ra_warp_all(n, R(0), [=](i64 j) { return ra_abs(ld(j)); }, mx);
            if (gk_isnan(m) || ra_isinf(m)) return m;
            if (m == R(0)) return R(0);
            const int e = RaReal<R>::exponent(m);
            const R s = gk_warp_fold(
                n, R(0),
                [=](R a, i64 j) {
                    const R y = ra_scale(ld(j), -e);
                    return gk_fma(y, y, a);
                },
                add);
            return ra_sqrt(s) * RaReal<R>::pow2(e);
        }
        default: {
            const R m = ra_warp_all(n, ninf, ld, mx);
            if (gk_isnan(m) || ra_isinf(m)) return m;
            const R s = gk_warp_fold(n, R(0), [=](R a, i64 j) { return a + gk_exp(ld(j) - m); }, add);
            return m + gk_log(s);
        }
    }
}

// The smallest value of an integer type.
template <class T> struct RaIntMin;
template <> struct RaIntMin<i64> {
    static __device__ __forceinline__ i64 v() { return (i64)0x8000000000000000ull; }
};
template <> struct RaIntMin<int> {
    static __device__ __forceinline__ int v() { return (int)0x80000000u; }
};

// One integer output (the whole warp): wrapping sum / prod, max, min, order-free.
template <class T>
__device__ __forceinline__ T ra_int_line(const T* x, const RaLayout* L, i64 base, i64 n,
                                         int code) {
    auto ld = [=](i64 j) { return x[base + ra_item(L, j)]; };
    const T lo = RaIntMin<T>::v();
    switch (code) {
        case 4:
            return ra_warp_all(n, (T)1, ld, [](T a, T b) { return gk_wmul(a, b); });
        case 2:
            return ra_warp_all(n, lo, ld, [](T a, T b) { return a > b ? a : b; });
        case 3:
            return ra_warp_all(n, (T)~lo, ld, [](T a, T b) { return a < b ? a : b; });
        default:
            return ra_warp_all(n, (T)0, ld, [](T a, T b) { return gk_wadd(a, b); });
    }
}

template <class T> struct RaLine {
    static __device__ __forceinline__ T run(const T* x, const RaLayout* L, i64 base, i64 n,
                                            int code) {
        return gk_store<T>(ra_float_line<T>(x, L, base, n, code));
    }
};
template <> struct RaLine<i64> {
    static __device__ __forceinline__ i64 run(const i64* x, const RaLayout* L, i64 base, i64 n,
                                              int code) {
        return ra_int_line<i64>(x, L, base, n, code);
    }
};
template <> struct RaLine<int> {
    static __device__ __forceinline__ int run(const int* x, const RaLayout* L, i64 base, i64 n,
                                              int code) {
        return ra_int_line<int>(x, L, base, n, code);
    }
};

template <class T>
__device__ __forceinline__ void ra_reduce_axes(T* out, const T* x, const i64* dims,
                                               const i64* strides, i64 ndim, i64 nkeep,
                                               i64 n_out, i64 n_red, i64 code) {
    __shared__ RaLayout L;
    if (n_out <= 0 || ndim <= 0 || ndim > RA_RANK) return;  // uniform: before the barrier
    if (threadIdx.x < ndim) {
        L.d[threadIdx.x] = dims[threadIdx.x];
        L.s[threadIdx.x] = strides[threadIdx.x];
    }
    if (threadIdx.x == 0) {
        L.nk = (int)nkeep;
        L.nr = (int)(ndim - nkeep);
    }
    __syncthreads();
    const i64 nw = gk_nthreads() >> 5;
    for (i64 o = gk_tid() >> 5; o < n_out; o += nw) {
        const T r = RaLine<T>::run(x, &L, ra_base(&L, o), n_red, (int)code);
        if (gk_lane() == 0) out[o] = r;
    }
}

#define RA_ENTRY(op, sfx, T)                                                                   \
    extern "C" __global__ void __launch_bounds__(RA_BLOCK, 1)                                  \
        op##_##sfx(T* __restrict__ out, const T* __restrict__ x, const i64* __restrict__ dims, \
                   const i64* __restrict__ strides, i64 ndim, i64 nkeep, i64 n_out, i64 n_red,  \
                   i64 code) {                                                                 \
        ra_reduce_axes<T>(out, x, dims, strides, ndim, nkeep, n_out, n_red, code);             \
    }
GK_FOR_reduce_axes(RA_ENTRY)
