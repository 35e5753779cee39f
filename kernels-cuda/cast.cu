// cast.cu: the casts between the six dtypes (gpukit_core::abi::cast).
//
//   cast_{src}_to_{dst}(out: dst*, a: const src*, n)   out[i] = cast(a[i]), i < n
//
// The contract (docs/numerics.md, "Casts"), line for line as gpukit_core::cast:
// - to a float: ONE rounding to nearest even of the exact value. f32/f16/bf16 sources
//   widen exactly to f32 first; f64 -> f32 and every integer -> f32/f64 is one
//   hardware conversion (cvt.rn). f64 and the integers reach f16/bf16 through an f32
//   rounded *to odd* (gk_f64_to_f32_odd, gk_i64_to_f32_odd), then cvt.rn to 16 bits:
//   round to odd keeps what the second rounding needs, so the pair is one correct
//   rounding (never cvt.rn.f16.f64 / cvt.rn.bf16.f64, and no double rounding).
// - float -> integer: cvt.rzi (truncation, saturation at the type's range) with NaN
//   sent to 0 explicitly (cvt.rzi gives INT_MIN for a NaN into 64 bits).
// - i64 -> i32 wraps (two's complement truncation); i32 -> i64 sign-extends.
// - the same dtype copies the bits (NaN payloads kept).
// Grid-stride loop over 64-bit indices, like elementwise.cu.
#include "gpukit.cuh"

// |x| as bits (never abs.f64, whose NaN results PTX leaves unspecified).
__device__ __forceinline__ double gk_abs_bits(double x) {
    return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffLL);
}

// x rounded to f32 to odd: to nearest, stepped one ulp toward zero when that rounded
// away from zero, and the last bit set when inexact (gpukit_core::cast::f64_to_f32_odd).
__device__ __forceinline__ float gk_f64_to_f32_odd(double x) {
    const float r = __double2float_rn(x);
    const double back = (double)r;
    unsigned int bits = __float_as_uint(r);
    if (gk_abs_bits(back) > gk_abs_bits(x)) bits -= 1u;
    if (back != x) bits |= 1u;
    return __uint_as_float(bits);
}

// v rounded to f32 to odd: the top 24 significant bits of |v|, the lowest of them set
// when a dropped bit was set; then exact (gpukit_core::cast::i64_to_f32_odd).
__device__ __forceinline__ float gk_i64_to_f32_odd(i64 v) {
    const gk_u64 a = v < 0 ? 0ull - (gk_u64)v : (gk_u64)v;
    const int lz = __clzll((long long)a);
    const int s = lz < 40 ? 40 - lz : 0;
    const gk_u64 dropped = a & ((1ull << s) - 1ull);
    const gk_u64 m = ((a >> s) | (dropped != 0ull ? 1ull : 0ull)) << s;
    const float f = __ull2float_rn(m);  // exact: at most 24 significant bits
    return __uint_as_float(__float_as_uint(f) | (v < 0 ? 0x80000000u : 0u));
}

// The target side: from the exact f32 of an f32/f16/bf16 source, from an f64, from
// an i64 and from an i32.
template <class D> struct GkCastTo;
template <> struct GkCastTo<float> {
    static __device__ __forceinline__ float from_f32(float w) { return w; }
    static __device__ __forceinline__ float from_f64(double x) { return __double2float_rn(x); }
    static __device__ __forceinline__ float from_i64(i64 v) { return __ll2float_rn(v); }
    static __device__ __forceinline__ float from_i32(int v) { return __int2float_rn(v); }
};
template <> struct GkCastTo<double> {
    static __device__ __forceinline__ double from_f32(float w) { return (double)w; }
    static __device__ __forceinline__ double from_f64(double x) { return x; }
    static __device__ __forceinline__ double from_i64(i64 v) { return __ll2double_rn(v); }
    static __device__ __forceinline__ double from_i32(int v) { return __int2double_rn(v); }
};
template <> struct GkCastTo<gk_f16> {
    static __device__ __forceinline__ gk_f16 from_f32(float w) { return __float2half_rn(w); }
    static __device__ __forceinline__ gk_f16 from_f64(double x) {
        return __float2half_rn(gk_f64_to_f32_odd(x));
    }
    static __device__ __forceinline__ gk_f16 from_i64(i64 v) {
        return __float2half_rn(gk_i64_to_f32_odd(v));
    }
    static __device__ __forceinline__ gk_f16 from_i32(int v) { return from_i64((i64)v); }
};
template <> struct GkCastTo<gk_bf16> {
    static __device__ __forceinline__ gk_bf16 from_f32(float w) { return __float2bfloat16_rn(w); }
    static __device__ __forceinline__ gk_bf16 from_f64(double x) {
        return __float2bfloat16_rn(gk_f64_to_f32_odd(x));
    }
    static __device__ __forceinline__ gk_bf16 from_i64(i64 v) {
        return __float2bfloat16_rn(gk_i64_to_f32_odd(v));
    }
    static __device__ __forceinline__ gk_bf16 from_i32(int v) { return from_i64((i64)v); }
};
template <> struct GkCastTo<i64> {
    static __device__ __forceinline__ i64 from_f32(float w) {
        return gk_isnan(w) ? 0 : __float2ll_rz(w);
    }
    static __device__ __forceinline__ i64 from_f64(double x) {
        return gk_isnan(x) ? 0 : __double2ll_rz(x);
    }
    static __device__ __forceinline__ i64 from_i64(i64 v) { return v; }
    static __device__ __forceinline__ i64 from_i32(int v) { return (i64)v; }
};
template <> struct GkCastTo<int> {
    static __device__ __forceinline__ int from_f32(float w) {
        return gk_isnan(w) ? 0 : __float2int_rz(w);
    }
    static __device__ __forceinline__ int from_f64(double x) {
        return gk_isnan(x) ? 0 : __double2int_rz(x);
    }
    static __device__ __forceinline__ int from_i64(i64 v) {
        return (int)(unsigned int)(gk_u64)v;
    }
    static __device__ __forceinline__ int from_i32(int v) { return v; }
};

// The source side: which conversion of GkCastTo<D> reads it.
template <class S> struct GkCastFrom;
template <> struct GkCastFrom<float> {
    template <class D> static __device__ __forceinline__ D to(float x) {
        return GkCastTo<D>::from_f32(x);
    }
};
template <> struct GkCastFrom<gk_f16> {
    template <class D> static __device__ __forceinline__ D to(gk_f16 x) {
        return GkCastTo<D>::from_f32(__half2float(x));
    }
};
template <> struct GkCastFrom<gk_bf16> {
    template <class D> static __device__ __forceinline__ D to(gk_bf16 x) {
        return GkCastTo<D>::from_f32(__bfloat162float(x));
    }
};
template <> struct GkCastFrom<double> {
    template <class D> static __device__ __forceinline__ D to(double x) {
        return GkCastTo<D>::from_f64(x);
    }
};
template <> struct GkCastFrom<i64> {
    template <class D> static __device__ __forceinline__ D to(i64 x) {
        return GkCastTo<D>::from_i64(x);
    }
};
template <> struct GkCastFrom<int> {
    template <class D> static __device__ __forceinline__ D to(int x) {
        return GkCastTo<D>::from_i32(x);
    }
};

template <class S, class D> struct GkCastLoop {
    static __device__ __forceinline__ void run(D* out, const S* a, i64 n) {
        for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
            out[i] = GkCastFrom<S>::template to<D>(a[i]);
        }
    }
};
// The same dtype: a copy of the bits (out may be exactly a).
template <class T> struct GkCastLoop<T, T> {
    static __device__ __forceinline__ void run(T* out, const T* a, i64 n) {
        typedef typename GkBits<T>::B B;
        const B* src = reinterpret_cast<const B*>(a);
        B* dst = reinterpret_cast<B*>(out);
        for (i64 i = gk_tid(); i < n; i += gk_nthreads()) dst[i] = src[i];
    }
};

#define GK_CAST_ENTRY(op, sfx, T, S)                                                            \
    extern "C" __global__ void __launch_bounds__(256) op##_##sfx(T* out, const S* a, i64 n) {   \
        GkCastLoop<S, T>::run(out, a, n);                                                       \
    }

#define GK_CAST_F32(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, float)
#define GK_CAST_F64(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, double)
#define GK_CAST_F16(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, gk_f16)
#define GK_CAST_BF16(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, gk_bf16)
#define GK_CAST_I64(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, i64)
#define GK_CAST_I32(op, sfx, T) GK_CAST_ENTRY(op, sfx, T, int)
GK_FOR_cast_f32_to(GK_CAST_F32)
GK_FOR_cast_f64_to(GK_CAST_F64)
GK_FOR_cast_f16_to(GK_CAST_F16)
GK_FOR_cast_bf16_to(GK_CAST_BF16)
GK_FOR_cast_i64_to(GK_CAST_I64)
GK_FOR_cast_i32_to(GK_CAST_I32)
