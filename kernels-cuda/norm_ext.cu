// norm_ext.cu: the normalisations added to the `norm` group, one warp per row with
// layer_norm's structure (norm.cu): the order of operations is in
// crates/gpukit-core/src/abi/norm_ext.rs and docs/ops/norm.md.
//
//   layer_norm_ex_{dtype}  out, x, scale, bias, mean, inv_std, rows, n, has_bias,
//                          has_stats, eps
//   group_norm_{dtype}     out, x, scale, bias, batch, c, s, groups, eps
//   rms_norm_{dtype}       out, x, scale, rows, n, eps
//
// eps is converted to R once ((R)d, as R::from_f64); counts as R::from_f64(n as f64).
// `out` may be exactly `x`: the row's reads all finish in the warp's folds (whose
// shuffles order them) before the warp writes the row, so `out`/`x` are not __restrict__.
// Geometry: 8 warps per 256-thread block, grid-stride over rows; the mean and the sums of
// squares use gk_warp_fold (the reduction shape).
#include "gpukit.cuh"

#define NE_BLOCK 256

__device__ __forceinline__ float ne_sqrt(float x) { return __fsqrt_rn(x); }
__device__ __forceinline__ double ne_sqrt(double x) { return __dsqrt_rn(x); }

// Layer norm's statistics of row[0..n): mu = fold(acc + x_j) / count and
// den = sqrt(fold(fma(d_j, d_j, acc)) / count + eps), d_j = x_j - mu.
template <class T, class R>
__device__ __forceinline__ void ne_mean_den(const T* row, i64 n, R count, R eps, R& mu, R& den) {
    const R sum = gk_warp_fold(
        n, R(0), [row](R acc, i64 j) { return acc + gk_load(row[j]); },
        [](R a, R b) { return a + b; });
    mu = sum / count;
    const R m = mu;
    const R sq = gk_warp_fold(
        n, R(0),
        [row, m](R acc, i64 j) {
            const R d = gk_load(row[j]) - m;
            return gk_fma(d, d, acc);
        },
        [](R a, R b) { return a + b; });
    den = ne_sqrt(sq / count + eps);
}

template <class T>
__device__ __forceinline__ void ne_layer_norm_ex(T* out, const T* x, const T* __restrict__ scale,
                                                 const T* __restrict__ bias,
                                                 typename GkElem<T>::Real* __restrict__ mean,
                                                 typename GkElem<T>::Real* __restrict__ inv_std,
                                                 i64 rows, i64 n, i64 has_bias, i64 has_stats,
                                                 double eps_d) {
    typedef typename GkElem<T>::Real R;
    const R eps = (R)eps_d;
    const R count = (R)(double)n;
    const i64 warp = gk_tid() >> 5;
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane();
    for (i64 r = warp; r < rows; r += nwarps) {
        const T* row = x + r * n;
        T* orow = out + r * n;
        R mu, den;
        ne_mean_den(row, n, count, eps, mu, den);
        for (i64 j = lane; j < n; j += GK_LANES) {
            const R t = (gk_load(row[j]) - mu) / den;
            // No bias is -0.0: fma(t, s, -0.0) is the product t * s exactly.
            const R b = has_bias ? gk_load(bias[j]) : -R(0);
            orow[j] = gk_store<T>(gk_fma(t, gk_load(scale[j]), b));
        }
        if (has_stats && lane == 0) {
            mean[r] = mu;
            inv_std[r] = R(1) / den;
        }
    }
}

template <class T>
__device__ __forceinline__ void ne_group_norm(T* out, const T* x, const T* __restrict__ scale,
                                              const T* __restrict__ bias, i64 batch, i64 c, i64 s,
                                              i64 groups, double eps_d) {
    typedef typename GkElem<T>::Real R;
    const R eps = (R)eps_d;
    const i64 cg = c / groups;
    const i64 m = cg * s;
    const R count = (R)(double)m;
    const i64 rows = batch * groups;
    const i64 warp = gk_tid() >> 5;
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane();
    for (i64 r = warp; r < rows; r += nwarps) {
        const T* row = x + r * m;
        T* orow = out + r * m;
        R mu, den;
        ne_mean_den(row, m, count, eps, mu, den);
        const i64 k0 = (r % groups) * cg;
        for (i64 j = lane; j < m; j += GK_LANES) {
            const i64 k = k0 + j / s;
            const R t = (gk_load(row[j]) - mu) / den;
            orow[j] = gk_store<T>(gk_fma(t, gk_load(scale[k]), gk_load(bias[k])));
        }
    }
}

template <class T>
__device__ __forceinline__ void ne_rms_norm(T* out, const T* x, const T* __restrict__ scale,
                                            i64 rows, i64 n, double eps_d) {
    typedef typename GkElem<T>::Real R;
    const R eps = (R)eps_d;
    const R count = (R)(double)n;
    const i64 warp = gk_tid() >> 5;
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane();
    for (i64 r = warp; r < rows; r += nwarps) {
        const T* row = x + r * n;
        T* orow = out + r * n;
        const R sq = gk_warp_fold(
            n, R(0),
            [row](R acc, i64 j) {
                const R v = gk_load(row[j]);
                return gk_fma(v, v, acc);
            },
            [](R a, R b) { return a + b; });
        const R den = ne_sqrt(sq / count + eps);
        for (i64 j = lane; j < n; j += GK_LANES) {
            orow[j] = gk_store<T>((gk_load(row[j]) / den) * gk_load(scale[j]));
        }
    }
}

#define NE_LAYER_NORM_EX(op, sfx, T)                                                            \
    extern "C" __global__ void __launch_bounds__(NE_BLOCK)                                      \
        op##_##sfx(T* out, const T* x, const T* __restrict__ scale, const T* __restrict__ bias, \
                   GkElem<T>::Real* __restrict__ mean, GkElem<T>::Real* __restrict__ inv_std,   \
                   i64 rows, i64 n, i64 has_bias, i64 has_stats, double eps) {                  \
        ne_layer_norm_ex<T>(out, x, scale, bias, mean, inv_std, rows, n, has_bias, has_stats,   \
                            eps);                                                               \
    }
#define NE_GROUP_NORM(op, sfx, T)                                                               \
    extern "C" __global__ void __launch_bounds__(NE_BLOCK)                                      \
        op##_##sfx(T* out, const T* x, const T* __restrict__ scale, const T* __restrict__ bias, \
                   i64 batch, i64 c, i64 s, i64 groups, double eps) {                           \
        ne_group_norm<T>(out, x, scale, bias, batch, c, s, groups, eps);                        \
    }
#define NE_RMS_NORM(op, sfx, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(NE_BLOCK)                                      \
        op##_##sfx(T* out, const T* x, const T* __restrict__ scale, i64 rows, i64 n,            \
                   double eps) {                                                                \
        ne_rms_norm<T>(out, x, scale, rows, n, eps);                                            \
    }

GK_FOR_layer_norm_ex(NE_LAYER_NORM_EX)
GK_FOR_group_norm(NE_GROUP_NORM)
GK_FOR_rms_norm(NE_RMS_NORM)
