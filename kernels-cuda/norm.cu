// norm.cu: the `norm` group of the neural-network family (gpukit_core::abi::norm,
// docs/ops/norm.md), except softmax_axis, argmax and reduce_l2 (reduce.cu).
//
//   batch_norm_{dtype}   out, x, scale, bias, mean, var, n, c, s, eps
//   layer_norm_{dtype}   out, x, scale, bias, rows, n, eps
//   leaky_relu_{dtype}   out, x, len, alpha
//   clip_{dtype}         out, x, len, lo, hi
//   erf_{dtype}          out, x, len
//   gelu_{dtype}         out, x, len
//   gelu_tanh_{dtype}    out, x, len
//
// Every f64 scalar is converted to the compute type R once, round to nearest even
// ((R)d, as R::from_f64). Floats load to R, compute in R, store once (rule 6). `out`
// may be exactly `x` in every kernel (each element is read by the thread that writes
// it, before it writes it; layer_norm's row reads all finish in the warp's folds before
// the warp writes), so `out` and `x` are never __restrict__.
//
// Geometry: pointwise kernels and batch_norm are 1-D grid-stride loops (256 threads,
// consecutive threads on consecutive elements); layer_norm is one warp per row
// (8 warps per 256-thread block), grid-stride over rows, with the reduction shape
// of gpukit.cuh (gk_warp_fold) for the mean and the centred sum of squares.
#include "gpukit.cuh"
#include "gpukit_math.cuh"

#define NORM_BLOCK 256
#define NORM_WARPS (NORM_BLOCK / 32)

// Correctly rounded square root, whatever the compile flags.
__device__ __forceinline__ float norm_sqrt(float x) { return __fsqrt_rn(x); }
__device__ __forceinline__ double norm_sqrt(double x) { return __dsqrt_rn(x); }

// -inf in R (bit pattern: no dependence on a math header's INFINITY).
template <class R> __device__ __forceinline__ R norm_neg_inf();
template <> __device__ __forceinline__ float norm_neg_inf<float>() {
    return __int_as_float((int)0xff800000u);
}
template <> __device__ __forceinline__ double norm_neg_inf<double>() {
    return __longlong_as_double((long long)0xfff0000000000000ull);
}

// The f64 constants of the CPU kernels (crates/gpukit-cpu/src/nn/norm.rs), bit for bit
// (hex literals), each converted to R by one round to nearest even as R::from_f64:
//   std::f64::consts::FRAC_1_SQRT_2, (2.0 / std::f64::consts::PI).sqrt(), 0.044715.
#define NORM_FRAC_1_SQRT_2 0x1.6a09e667f3bcdp-1
#define NORM_SQRT_2_OVER_PI 0x1.9884533d43651p-1
#define NORM_GELU_K 0x1.6e4e26d4801f7p-5

// ---------------------------------------------------------------------------------
// Pointwise maps: out[i] = store(F(load(x[i]))), i < len, grid-stride.
// ---------------------------------------------------------------------------------

template <class T, class F>
__device__ __forceinline__ void norm_map(T* out, const T* x, i64 len, F f) {
    for (i64 i = gk_tid(); i < len; i += gk_nthreads()) out[i] = gk_store<T>(f(gk_load(x[i])));
}

// r if r > 0 or r is NaN, else alpha * r (one IEEE product: -0 gives alpha * -0).
template <class T>
__device__ __forceinline__ void norm_leaky_relu(T* out, const T* x, i64 len, double alpha_d) {
    typedef typename GkElem<T>::Real R;
    const R alpha = (R)alpha_d;
    norm_map(out, x, len, [alpha](R r) { return (gk_isnan(r) || r > R(0)) ? r : alpha * r; });
}

// min_nan(max_nan(r, lo), hi).
template <class T>
__device__ __forceinline__ void norm_clip(T* out, const T* x, i64 len, double lo_d, double hi_d) {
    typedef typename GkElem<T>::Real R;
    const R lo = (R)lo_d;
    const R hi = (R)hi_d;
    norm_map(out, x, len, [lo, hi](R r) { return gk_min_nan(gk_max_nan(r, lo), hi); });
}

template <class T> __device__ __forceinline__ void norm_erf(T* out, const T* x, i64 len) {
    typedef typename GkElem<T>::Real R;
    norm_map(out, x, len, [](R r) { return gk_erf(r); });
}

// GELU (erf form): -inf gives -0; else x * fma(0.5, erf(x * R(1/sqrt2)), 0.5).
template <class R> __device__ __forceinline__ R norm_gelu_scalar(R x) {
    if (x == norm_neg_inf<R>()) return -R(0);
    const R half = (R)0.5;
    const R e = gk_erf(x * (R)NORM_FRAC_1_SQRT_2);
    return x * gk_fma(half, e, half);
}

// GELU (tanh): -inf gives -0; else u = R(sqrt(2/pi)) * fma(R(0.044715), (x*x)*x, x),
// x * fma(0.5, tanh(u), 0.5).
template <class R> __device__ __forceinline__ R norm_gelu_tanh_scalar(R x) {
    if (x == norm_neg_inf<R>()) return -R(0);
    const R half = (R)0.5;
    const R c = (R)NORM_SQRT_2_OVER_PI;
    const R k = (R)NORM_GELU_K;
    const R u = c * gk_fma(k, (x * x) * x, x);
    return x * gk_fma(half, gk_tanh(u), half);
}

template <class T> __device__ __forceinline__ void norm_gelu(T* out, const T* x, i64 len) {
    typedef typename GkElem<T>::Real R;
    norm_map(out, x, len, [](R r) { return norm_gelu_scalar(r); });
}

template <class T> __device__ __forceinline__ void norm_gelu_tanh(T* out, const T* x, i64 len) {
    typedef typename GkElem<T>::Real R;
    norm_map(out, x, len, [](R r) { return norm_gelu_tanh_scalar(r); });
}

// ---------------------------------------------------------------------------------
// Batch norm: x viewed as [n, c, s]; element i is in channel k = (i / s) % c.
//   den = sqrt(load(var[k]) + eps); t = (load(x) - load(mean[k])) / den;
//   y = store(fma(t, load(scale[k]), load(bias[k]))).
// ---------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ void norm_batch_norm(T* out, const T* x, const T* __restrict__ scale,
                                                const T* __restrict__ bias,
                                                const T* __restrict__ mean,
                                                const T* __restrict__ var, i64 n, i64 c, i64 s,
                                                double eps_d) {
    typedef typename GkElem<T>::Real R;
    const R eps = (R)eps_d;
    const i64 total = n * c * s;
    for (i64 i = gk_tid(); i < total; i += gk_nthreads()) {
        const i64 k = (i / s) % c;
        const R den = norm_sqrt(gk_load(var[k]) + eps);
        const R t = (gk_load(x[i]) - gk_load(mean[k])) / den;
        out[i] = gk_store<T>(gk_fma(t, gk_load(scale[k]), gk_load(bias[k])));
    }
}

// ---------------------------------------------------------------------------------
// Layer norm: x viewed as [rows, n], one warp per row. Per row, N = R((double)n):
//   mean = fold(acc + x_j) / N;  var = fold(fma(d_j, d_j, acc)) / N, d_j = x_j - mean;
//   den = sqrt(var + eps);  y_j = store(fma((x_j - mean) / den, scale_j, bias_j)).
// ---------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ void norm_layer_norm(T* out, const T* x, const T* __restrict__ scale,
                                                const T* __restrict__ bias, i64 rows, i64 n,
                                                double eps_d) {
    typedef typename GkElem<T>::Real R;
    const R eps = (R)eps_d;
    // As R::from_f64(n as f64): integer to f64 (nearest even), then f64 to R.
    const R count = (R)(double)n;
    const i64 warp = gk_tid() >> 5;                      // warp-uniform
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane();
    for (i64 r = warp; r < rows; r += nwarps) {            // uniform over the warp
        const T* row = x + r * n;
        T* orow = out + r * n;
        const R sum = gk_warp_fold(
            n, R(0), [row](R acc, i64 j) { return acc + gk_load(row[j]); },
            [](R a, R b) { return a + b; });
        const R mu = sum / count;
        const R sq = gk_warp_fold(
            n, R(0),
            [row, mu](R acc, i64 j) {
                const R d = gk_load(row[j]) - mu;
                return gk_fma(d, d, acc);
            },
            [](R a, R b) { return a + b; });
        const R den = norm_sqrt(sq / count + eps);
        // Every lane holds the same mu and den; the folds' shuffles have ordered all the
        // row's reads before these writes (in place: orow == row).
        for (i64 j = lane; j < n; j += GK_LANES) {
            const R t = (gk_load(row[j]) - mu) / den;
            orow[j] = gk_store<T>(gk_fma(t, gk_load(scale[j]), gk_load(bias[j])));
        }
    }
}

// ---------------------------------------------------------------------------------
// Entries (names from table.cuh).
// ---------------------------------------------------------------------------------

#define NORM_BATCH_NORM(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(NORM_BLOCK)                                    \
        op##_##sfx(T* out, const T* x, const T* __restrict__ scale, const T* __restrict__ bias, \
                   const T* __restrict__ mean, const T* __restrict__ var, i64 n, i64 c, i64 s,  \
                   double eps) {                                                                \
        norm_batch_norm<T>(out, x, scale, bias, mean, var, n, c, s, eps);                       \
    }
#define NORM_LAYER_NORM(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(NORM_BLOCK)                                    \
        op##_##sfx(T* out, const T* x, const T* __restrict__ scale, const T* __restrict__ bias, \
                   i64 rows, i64 n, double eps) {                                               \
        norm_layer_norm<T>(out, x, scale, bias, rows, n, eps);                                  \
    }
#define NORM_LEAKY_RELU(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(NORM_BLOCK)                                    \
        op##_##sfx(T* out, const T* x, i64 len, double alpha) {                                 \
        norm_leaky_relu<T>(out, x, len, alpha);                                                 \
    }
#define NORM_CLIP(op, sfx, T)                                                                   \
    extern "C" __global__ void __launch_bounds__(NORM_BLOCK)                                    \
        op##_##sfx(T* out, const T* x, i64 len, double lo, double hi) {                         \
        norm_clip<T>(out, x, len, lo, hi);                                                      \
    }
#define NORM_UNARY(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(NORM_BLOCK)                                    \
        op##_##sfx(T* out, const T* x, i64 len) {                                               \
        norm_##op<T>(out, x, len);                                                              \
    }

GK_FOR_batch_norm(NORM_BATCH_NORM)
GK_FOR_layer_norm(NORM_LAYER_NORM)
GK_FOR_leaky_relu(NORM_LEAKY_RELU)
GK_FOR_clip(NORM_CLIP)
GK_FOR_erf(NORM_UNARY)
GK_FOR_gelu(NORM_UNARY)
GK_FOR_gelu_tanh(NORM_UNARY)
