// compare.cu: comparisons, select and logical ops on masks (gpukit_core::abi::compare).
//
//   compare_{src}_to_{dst}(out: dst*, a: const src*, b: const src*, op, n)
//       out[i] = op(a[i], b[i]) ? 1 : 0                 op: 0 eq 1 ne 2 lt 3 le 4 gt 5 ge
//   where_{cond}_cond_{T}(out: T*, cond: const cond*, a: const T*, b: const T*, n)
//       out[i] = cond[i] != 0 ? a[i] : b[i]             (bits copied)
//   logical_{src}_to_{dst}(out: dst*, a: const src*, b: const src*, op, n)
//       out[i] = op(a[i] != 0, b[i] != 0) ? 1 : 0        op: 0 and 1 or 2 xor 3 not (a only)
//
// The contract (docs/numerics.md, "Comparisons and masks"), as gpukit_core::compare:
// IEEE comparisons (ordered setp for eq/lt/le/gt/ge, so NaN gives false; unordered
// setp.neu for ne, so NaN gives true; -0.0 == +0.0); f16/bf16 widen exactly to f32
// first; integers compare as integers. Truth is read from the bits: any bit outside
// the sign bit set (nonzero or NaN; -0.0 is false). 1 and 0 are written as bits.
// The op is a template parameter: one branch-free grid-stride loop per op.
#include "gpukit.cuh"

// The value a comparison reads: f16/bf16 widened exactly to f32, the rest as is.
template <class T> struct GkCmpVal {
    typedef T V;
    static __device__ __forceinline__ T get(T x) { return x; }
};
template <> struct GkCmpVal<gk_f16> {
    typedef float V;
    static __device__ __forceinline__ float get(gk_f16 x) { return __half2float(x); }
};
template <> struct GkCmpVal<gk_bf16> {
    typedef float V;
    static __device__ __forceinline__ float get(gk_bf16 x) { return __bfloat162float(x); }
};

// Nonzero or NaN, from the bits (the sign bit of the float types ignored).
template <class T> struct GkTruth;
template <> struct GkTruth<float> {
    static __device__ __forceinline__ bool of(float x) { return (__float_as_uint(x) & 0x7fffffffu) != 0u; }
};
template <> struct GkTruth<double> {
    static __device__ __forceinline__ bool of(double x) {
        return ((gk_u64)__double_as_longlong(x) & 0x7fffffffffffffffull) != 0ull;
    }
};
template <> struct GkTruth<gk_f16> {
    static __device__ __forceinline__ bool of(gk_f16 x) { return (__half_as_ushort(x) & 0x7fffu) != 0u; }
};
template <> struct GkTruth<gk_bf16> {
    static __device__ __forceinline__ bool of(gk_bf16 x) {
        return (__bfloat16_as_ushort(x) & 0x7fffu) != 0u;
    }
};
template <> struct GkTruth<i64> {
    static __device__ __forceinline__ bool of(i64 x) { return x != 0; }
};
template <> struct GkTruth<int> {
    static __device__ __forceinline__ bool of(int x) { return x != 0; }
};

// The bits of 1 in each dtype (0 is all zero bits).
template <class T> struct GkOne;
template <> struct GkOne<float> { static const unsigned int bits = 0x3f800000u; };
template <> struct GkOne<double> { static const unsigned long long bits = 0x3ff0000000000000ull; };
template <> struct GkOne<gk_f16> { static const unsigned short bits = 0x3c00; };
template <> struct GkOne<gk_bf16> { static const unsigned short bits = 0x3f80; };
template <> struct GkOne<i64> { static const unsigned long long bits = 1ull; };
template <> struct GkOne<int> { static const unsigned int bits = 1u; };

template <int OP, class V> __device__ __forceinline__ bool gk_cmp(V x, V y) {
    if (OP == 0) return x == y;
    if (OP == 1) return x != y;
    if (OP == 2) return x < y;
    if (OP == 3) return x <= y;
    if (OP == 4) return x > y;
    return x >= y;
}

template <int OP> __device__ __forceinline__ bool gk_logic(bool x, bool y) {
    if (OP == 0) return x && y;
    if (OP == 1) return x || y;
    if (OP == 2) return x != y;
    return !x;
}

template <int OP, class S, class D>
__device__ __forceinline__ void gk_compare_loop(D* out, const S* a, const S* b, i64 n) {
    typedef typename GkBits<D>::B B;
    B* o = reinterpret_cast<B*>(out);
    for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
        const bool r = gk_cmp<OP>(GkCmpVal<S>::get(a[i]), GkCmpVal<S>::get(b[i]));
        o[i] = r ? (B)GkOne<D>::bits : (B)0;
    }
}

template <int OP, class S, class D>
__device__ __forceinline__ void gk_logical_loop(D* out, const S* a, const S* b, i64 n) {
    typedef typename GkBits<D>::B B;
    B* o = reinterpret_cast<B*>(out);
    for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
        const bool y = OP == 3 ? false : GkTruth<S>::of(b[i]);
        const bool r = gk_logic<OP>(GkTruth<S>::of(a[i]), y);
        o[i] = r ? (B)GkOne<D>::bits : (B)0;
    }
}

template <class S, class D>
__device__ __forceinline__ void gk_compare(D* out, const S* a, const S* b, i64 op, i64 n) {
    switch (op) {
        case 0: gk_compare_loop<0>(out, a, b, n); break;
        case 1: gk_compare_loop<1>(out, a, b, n); break;
        case 2: gk_compare_loop<2>(out, a, b, n); break;
        case 3: gk_compare_loop<3>(out, a, b, n); break;
        case 4: gk_compare_loop<4>(out, a, b, n); break;
        case 5: gk_compare_loop<5>(out, a, b, n); break;
        default: break;  // refused by check_args before any launch
    }
}

template <class S, class D>
__device__ __forceinline__ void gk_logical(D* out, const S* a, const S* b, i64 op, i64 n) {
    switch (op) {
        case 0: gk_logical_loop<0>(out, a, b, n); break;
        case 1: gk_logical_loop<1>(out, a, b, n); break;
        case 2: gk_logical_loop<2>(out, a, b, n); break;
        case 3: gk_logical_loop<3>(out, a, b, n); break;
        default: break;  // refused by check_args before any launch
    }
}

template <class C, class T>
__device__ __forceinline__ void gk_where(T* out, const C* cond, const T* a, const T* b, i64 n) {
    typedef typename GkBits<T>::B B;
    const B* sa = reinterpret_cast<const B*>(a);
    const B* sb = reinterpret_cast<const B*>(b);
    B* o = reinterpret_cast<B*>(out);
    for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
        o[i] = GkTruth<C>::of(cond[i]) ? sa[i] : sb[i];
    }
}

#define GK_COMPARE_ENTRY(op, sfx, T, S)                                                        \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        op##_##sfx(T* out, const S* a, const S* b, i64 code, i64 n) {                          \
        gk_compare<S, T>(out, a, b, code, n);                                                  \
    }
#define GK_LOGICAL_ENTRY(op, sfx, T, S)                                                        \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        op##_##sfx(T* out, const S* a, const S* b, i64 code, i64 n) {                          \
        gk_logical<S, T>(out, a, b, code, n);                                                  \
    }
#define GK_WHERE_ENTRY(op, sfx, T, C)                                                          \
    extern "C" __global__ void __launch_bounds__(256)                                          \
        op##_##sfx(T* out, const C* cond, const T* a, const T* b, i64 n) {                     \
        gk_where<C, T>(out, cond, a, b, n);                                                    \
    }

// One wrapper per family's own dtype, expanded over table.cuh's GK_FOR_ lists (the
// kernel's dtype), so the names are the ABI's.
#define GK_COMPARE_F32(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, float)
#define GK_COMPARE_F64(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, double)
#define GK_COMPARE_F16(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, gk_f16)
#define GK_COMPARE_BF16(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, gk_bf16)
#define GK_COMPARE_I64(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, i64)
#define GK_COMPARE_I32(op, sfx, T) GK_COMPARE_ENTRY(op, sfx, T, int)
#define GK_WHERE_F32(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, float)
#define GK_WHERE_F64(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, double)
#define GK_WHERE_F16(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, gk_f16)
#define GK_WHERE_BF16(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, gk_bf16)
#define GK_WHERE_I64(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, i64)
#define GK_WHERE_I32(op, sfx, T) GK_WHERE_ENTRY(op, sfx, T, int)
#define GK_LOGICAL_F32(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, float)
#define GK_LOGICAL_F64(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, double)
#define GK_LOGICAL_F16(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, gk_f16)
#define GK_LOGICAL_BF16(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, gk_bf16)
#define GK_LOGICAL_I64(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, i64)
#define GK_LOGICAL_I32(op, sfx, T) GK_LOGICAL_ENTRY(op, sfx, T, int)
GK_FOR_compare_f32_to(GK_COMPARE_F32)
GK_FOR_compare_f64_to(GK_COMPARE_F64)
GK_FOR_compare_f16_to(GK_COMPARE_F16)
GK_FOR_compare_bf16_to(GK_COMPARE_BF16)
GK_FOR_compare_i64_to(GK_COMPARE_I64)
GK_FOR_compare_i32_to(GK_COMPARE_I32)
GK_FOR_where_f32_cond(GK_WHERE_F32)
GK_FOR_where_f64_cond(GK_WHERE_F64)
GK_FOR_where_f16_cond(GK_WHERE_F16)
GK_FOR_where_bf16_cond(GK_WHERE_BF16)
GK_FOR_where_i64_cond(GK_WHERE_I64)
GK_FOR_where_i32_cond(GK_WHERE_I32)
GK_FOR_logical_f32_to(GK_LOGICAL_F32)
GK_FOR_logical_f64_to(GK_LOGICAL_F64)
GK_FOR_logical_f16_to(GK_LOGICAL_F16)
GK_FOR_logical_bf16_to(GK_LOGICAL_BF16)
GK_FOR_logical_i64_to(GK_LOGICAL_I64)
GK_FOR_logical_i32_to(GK_LOGICAL_I32)
