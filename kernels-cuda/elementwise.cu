// elementwise.cu: the arithmetic core's elementwise kernels.
//
//   {add,sub,mul,div}_{dtype}       out[i] = op(a[i], b[i]), i < n
//   {add,sub,mul,div}_bc_{dtype}    N-D stride broadcast (see gpukit_core::abi)
//
// Floats: load to the compute type, one correctly rounded op, store (rule 6).
// Integers: wrapping, total division (gk_int_div). Grid-stride loops over 64-bit
// indices: any grid covers any n; consecutive threads touch consecutive elements
// (coalesced).
#include "gpukit.cuh"

template <class R> struct GkAdd { static __device__ __forceinline__ R f(R a, R b) { return a + b; } };
template <class R> struct GkSub { static __device__ __forceinline__ R f(R a, R b) { return a - b; } };
template <class R> struct GkMul { static __device__ __forceinline__ R f(R a, R b) { return a * b; } };
template <class R> struct GkDiv { static __device__ __forceinline__ R f(R a, R b) { return a / b; } };
template <> struct GkAdd<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wadd(a, b); } };
template <> struct GkSub<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wsub(a, b); } };
template <> struct GkMul<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_wmul(a, b); } };
template <> struct GkDiv<i64> { static __device__ __forceinline__ i64 f(i64 a, i64 b) { return gk_int_div(a, b); } };
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
// sum(coord[d] * stride[d]) (strides in elements, 0 = broadcast).
template <class T, template <class> class Op>
__device__ __forceinline__ void gk_binary_bc(T* out, const T* a, const T* b, const i64* dims,
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

#define GK_ADD_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkAdd)
#define GK_SUB_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkSub)
#define GK_MUL_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkMul)
#define GK_DIV_BC(op, sfx, T) GK_BINARY_BC(op, sfx, T, GkDiv)
GK_FOR_add_bc(GK_ADD_BC)
GK_FOR_sub_bc(GK_SUB_BC)
GK_FOR_mul_bc(GK_MUL_BC)
GK_FOR_div_bc(GK_DIV_BC)
