// elementwise.cu: the arithmetic core's elementwise kernels.
//
//   {add,sub,mul,div,pow}_{dtype}       out[i] = op(a[i], b[i]), i < n
//   {add,sub,mul,div,pow}_bc_{dtype}    N-D stride broadcast (see gpukit_core::abi)
//   {relu,sigmoid,exp,tanh,sqrt,log,abs,neg,rsqrt,silu,softplus,sin,cos}_{dtype}
//                                   out[i] = store(f(load(a[i]))), i < n
//                                   (float dtypes; out may be exactly a)
//
// Floats: load to the compute type, one correctly rounded op, store (rule 6).
// Unary maps: gpukit_core::numeric::UnaryOp::float, i.e. load, one function of
// gpukit_math.cuh (or relu, IEEE sqrt, the sign-bit maps abs/neg, or 1/sqrt) in the
// compute type, store.
// pow: gk_pow of gpukit_math.cuh for floats, gk_int_pow for integers.
// Integers: wrapping, total division (gk_int_div). Grid-stride loops over 64-bit
// indices: any grid covers any n; consecutive threads touch consecutive elements
// (coalesced).
#include "gpukit.cuh"
#include "gpukit_math.cuh"
#include "gpukit_trig.cuh"

template <class R> struct GkAdd { static __device__ __forceinline__ R f(R a, R b) { return a + b; } };
template <class R> struct GkSub { static __device__ __forceinline__ R f(R a, R b) { return a - b; } };
template <class R> struct GkMul { static __device__ __forceinline__ R f(R a, R b) { return a * b; } };
template <class R> struct GkDiv { static __device__ __forceinline__ R f(R a, R b) { return a / b; } };
template <> struct GkAdd<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wadd(a, b); } };
template <> struct GkSub<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wsub(a, b); } };
template <> struct GkMul<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wmul(a, b); } };
template <> struct GkDiv<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_int_div(a, b); } };
// numeric::int_pow: square and multiply, wrapping; a negative exponent gives the
// truncated 1 / a^|b| (1 for a = 1, +-1 for a = -1, else 0).
template <class I> __device__ __forceinline__ I gk_int_pow(I a, I b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) == 0 ? 1 : -1;
        return 0;
    }
    I acc = 1, base = a, e = b;
    while (e > 0) {
        if ((e & 1) == 1) acc = gk_wmul(acc, base);
        base = gk_wmul(base, base);
        e >>= 1;
    }
    return acc;
}
template <class R> struct GkPow { static __device__ __forceinline__ R f(R a, R b) { return gk_pow(a, b); } };
template <> struct GkPow<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_int_pow(a, b); } };
template <> struct GkPow<int> { static __device__ __forceinline__ int f(int a, int b) { return gk_int_pow(a, b); } };
template <> struct GkAdd<int> { static __device__ __forceinline__ int f(int a, int b) { return gk_wadd(a, b); } };
template <> struct GkSub<int> { static __device__ __forceinline__ int f(int a, int b) { return gk_wsub(a, b); } };
template <> struct GkMul<int> { static __device__ __forceinline__ int f(int a, int b) { return gk_wmul(a, b); } };
template <> struct GkDiv<int> { static __device__ __forceinline__ int f(int a, int b) { return gk_int_div(a, b); } };

// Storage-level application: floats load/compute/store, integers directly.
template <class T> struct GkIntOrFloat {
    template <template <class> class Op>
    static __device__ __forceinline__ T apply(T a, T b) {
        typedef typename GkElem<T>::Real R;
        return gk_store<T>(Op<R>::f(gk_load(a), gk_load(b)));
    }
};
template <> struct GkIntOrFloat<i64> {
    template <template <class> class Op>
    static __device__ __forceinline__ i64 apply(i64 a, i64 b) { return Op<i64>::f(a, b); }
};
template <> struct GkIntOrFloat<int> {
    template <template <class> class Op>
    static __device__ __forceinline__ int apply(int a, int b) { return Op<int>::f(a, b); }
};

template <class T, template <class> class Op>
__device__ __forceinline__ void gk_binary(T* out, const T* a, const T* b, i64 n) {
    for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
        out[i] = GkIntOrFloat<T>::template apply<Op>(a[i], b[i]);
    }
}

// out is contiguous over dims[0..ndim] (last dimension fastest); a and b are read at
// sum(coord[d] * stride[d]) (strides in elements, 0 = broadcast). Outputs under 2^31
// elements (every dimension then fits too) split the index with 32-bit divisions, a
// fraction of the cost of 64-bit ones; larger ones take the 64-bit path, kept out of line
// so its register needs do not weigh on the common one. The offsets are the same.
template <class T, template <class> class Op>
__device__ __noinline__ void gk_binary_bc_wide(T* out, const T* a, const T* b, const i64* dims,
                                               const i64* astr, const i64* bstr, i64 ndim,
                                               i64 n_out) {
    for (i64 i = gk_tid(); i < n_out; i += gk_nthreads()) {
        i64 rem = i, ao = 0, bo = 0;
        for (i64 d = ndim - 1; d >= 0; --d) {
            const i64 len = dims[d];
            const i64 c = rem % len;
            rem /= len;
            ao += c * astr[d];
            bo += c * bstr[d];
        }
        out[i] = GkIntOrFloat<T>::template apply<Op>(a[ao], b[bo]);
    }
}

template <class T, template <class> class Op>
__device__ __forceinline__ void gk_binary_bc(T* out, const T* a, const T* b, const i64* dims,
                                             const i64* astr, const i64* bstr, i64 ndim,
                                             i64 n_out) {
    if (n_out > 0x7fffffff) {
        gk_binary_bc_wide<T, Op>(out, a, b, dims, astr, bstr, ndim, n_out);
        return;
    }
    for (i64 i = gk_tid(); i < n_out; i += gk_nthreads()) {
        unsigned rem = (unsigned)i;
        i64 ao = 0, bo = 0;
        for (i64 d = ndim - 1; d >= 0; --d) {
            const unsigned len = (unsigned)dims[d];
            const unsigned c = rem % len;
            rem /= len;
            ao += (i64)c * astr[d];
            bo += (i64)c * bstr[d];
        }
        out[i] = GkIntOrFloat<T>::template apply<Op>(a[ao], b[bo]);
    }
}

#define GK_BINARY(op, sfx, T, OPT)                                                              \
    extern "C" __global__ void __launch_bounds__(256)                                           \
        op##_##sfx(T* __restrict__ out, const T* a, const T* b, i64 n) {                        \
        gk_binary<T, OPT>(out, a, b, n);                                                        \
    }
#define GK_BINARY_BC(op, sfx, T, OPT)                                                           \
    extern "C" __global__ void __launch_bounds__(256)                                           \
        op##_##sfx(T* out, const T* a, const T* b, const i64* __restrict__ dims,                \
                   const i64* __restrict__ astr, const i64* __restrict__ bstr, i64 ndim,        \
                   i64 n_out) {                                                                 \
        gk_binary_bc<T, OPT>(out, a, b, dims, astr, bstr, ndim, n_out);                          \
    }

#define GK_ADD(op, sfx, T) GK_BINARY(op, sfx, T, GkAdd)
#define GK_SUB(op, sfx, T) GK_BINARY(op, sfx, T, GkSub)
#define GK_MUL(op, sfx, T) GK_BINARY(op, sfx, T, GkMul)
#define GK_DIV(op, sfx, T) GK_BINARY(op, sfx, T, GkDiv)
GK_FOR_add(GK_ADD)
GK_FOR_sub(GK_SUB)
GK_FOR_mul(GK_MUL)
GK_FOR_div(GK_DIV)
#define GK_POW(op, sfx, T) GK_BINARY(op, sfx, T, GkPow)
GK_FOR_pow(GK_POW)

#define GK_ADD_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkAdd)
#define GK_SUB_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkSub)
#define GK_MUL_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkMul)
#define GK_DIV_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkDiv)
GK_FOR_add_bc(GK_ADD_BC)
GK_FOR_sub_bc(GK_SUB_BC)
GK_FOR_mul_bc(GK_MUL_BC)
GK_FOR_div_bc(GK_DIV_BC)
#define GK_POW_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkPow)
GK_FOR_pow_bc(GK_POW_BC)

// ---------------------------------------------------------------------------------
// Unary maps (UnaryOp::real in the compute type R = float or double).
// ---------------------------------------------------------------------------------

struct GkRelu { template <class R> static __device__ __forceinline__ R f(R x) { return gk_relu(x); } };
struct GkSigmoid { template <class R> static __device__ __forceinline__ R f(R x) { return gk_sigmoid(x); } };
struct GkExp { template <class R> static __device__ __forceinline__ R f(R x) { return gk_exp(x); } };
struct GkTanh { template <class R> static __device__ __forceinline__ R f(R x) { return gk_tanh(x); } };
struct GkLog { template <class R> static __device__ __forceinline__ R f(R x) { return gk_log(x); } };
// IEEE square root, correctly rounded (explicit _rn: independent of --prec-sqrt).
struct GkSqrt {
    static __device__ __forceinline__ float f(float x) { return __fsqrt_rn(x); }
    static __device__ __forceinline__ double f(double x) { return __dsqrt_rn(x); }
};

// abs / neg: the sign bit cleared / flipped through the bits (exact; a NaN keeps its
// payload), never abs.f32/neg.f32, whose NaN results PTX leaves unspecified.
struct GkAbs {
    static __device__ __forceinline__ float f(float x) {
        return __uint_as_float(__float_as_uint(x) & 0x7fffffffu);
    }
    static __device__ __forceinline__ double f(double x) {
        return __longlong_as_double(__double_as_longlong(x) & 0x7fffffffffffffffLL);
    }
};
struct GkNeg {
    static __device__ __forceinline__ float f(float x) {
        return __uint_as_float(__float_as_uint(x) ^ 0x80000000u);
    }
    static __device__ __forceinline__ double f(double x) {
        return __longlong_as_double(
            (long long)((unsigned long long)__double_as_longlong(x) ^ 0x8000000000000000ull));
    }
};
// rsqrt = 1 / sqrt(x): correctly rounded sqrt, then correctly rounded division (two
// roundings; never the approximate rsqrt instruction).
struct GkRsqrt {
    static __device__ __forceinline__ float f(float x) { return __fdiv_rn(1.0f, __fsqrt_rn(x)); }
    static __device__ __forceinline__ double f(double x) { return __ddiv_rn(1.0, __dsqrt_rn(x)); }
};
struct GkSilu { template <class R> static __device__ __forceinline__ R f(R x) { return gk_silu(x); } };
struct GkSoftplus { template <class R> static __device__ __forceinline__ R f(R x) { return gk_softplus(x); } };
// sin / cos: gpukit_trig.cuh (float computes in double, rounds once).
struct GkSin { template <class R> static __device__ __forceinline__ R f(R x) { return gk_sin(x); } };
struct GkCos { template <class R> static __device__ __forceinline__ R f(R x) { return gk_cos(x); } };

// No __restrict__: out may be exactly a (each element is read before it is written,
// by the same thread).
template <class T, class Op>
__device__ __forceinline__ void gk_unary(T* out, const T* a, i64 n) {
    for (i64 i = gk_tid(); i < n; i += gk_nthreads()) {
        out[i] = gk_store<T>(Op::f(gk_load(a[i])));
    }
}

#define GK_UNARY(op, sfx, T, OPT)                                                               \
    extern "C" __global__ void __launch_bounds__(256) op##_##sfx(T* out, const T* a, i64 n) {   \
        gk_unary<T, OPT>(out, a, n);                                                            \
    }

#define GK_RELU(op, sfx, T) GK_UNARY(op, sfx, T, GkRelu)
#define GK_SIGMOID(op, sfx, T) GK_UNARY(op, sfx, T, GkSigmoid)
#define GK_EXP(op, sfx, T) GK_UNARY(op, sfx, T, GkExp)
#define GK_TANH(op, sfx, T) GK_UNARY(op, sfx, T, GkTanh)
#define GK_SQRT(op, sfx, T) GK_UNARY(op, sfx, T, GkSqrt)
#define GK_LOG(op, sfx, T) GK_UNARY(op, sfx, T, GkLog)
GK_FOR_relu(GK_RELU)
GK_FOR_sigmoid(GK_SIGMOID)
GK_FOR_exp(GK_EXP)
GK_FOR_tanh(GK_TANH)
GK_FOR_sqrt(GK_SQRT)
GK_FOR_log(GK_LOG)
#define GK_ABS(op, sfx, T) GK_UNARY(op, sfx, T, GkAbs)
#define GK_NEG(op, sfx, T) GK_UNARY(op, sfx, T, GkNeg)
#define GK_RSQRT(op, sfx, T) GK_UNARY(op, sfx, T, GkRsqrt)
#define GK_SILU(op, sfx, T) GK_UNARY(op, sfx, T, GkSilu)
#define GK_SOFTPLUS(op, sfx, T) GK_UNARY(op, sfx, T, GkSoftplus)
GK_FOR_abs(GK_ABS)
GK_FOR_neg(GK_NEG)
GK_FOR_rsqrt(GK_RSQRT)
GK_FOR_silu(GK_SILU)
GK_FOR_softplus(GK_SOFTPLUS)
#define GK_SIN(op, sfx, T) GK_UNARY(op, sfx, T, GkSin)
#define GK_COS(op, sfx, T) GK_UNARY(op, sfx, T, GkCos)
GK_FOR_sin(GK_SIN)
GK_FOR_cos(GK_COS)
