// resize.cu: the general N-D resize (ONNX Resize), from the per-axis tap tables of
// gpukit_core::resize::plan_resize (docs/ops/movement.md, "General resize").
//
//   resize_{dtype}   out, x, dims, taps, weights, ndim, k, rows, n_out, interp
//
// dims: the ndim input extents, then the ndim output extents (row-major, contiguous).
// Table row of output index j on axis a: Σ_{b<a} out_b + j; taps[row·(1+k)] is its
// count c, then k input indices (the first c used); weights[row·k ..] its k weights,
// f64 values of the compute type (converted exactly). One thread per output,
// grid-stride. interp 0: a copy of the element's bits at Σ tap(a)·stride(a). interp 1
// (floats): taps nested with the last axis innermost; on each axis acc = w0·v0, then
// acc = fma(w_t, v_t, acc) in tap order, in the compute type (correctly rounded
// intrinsics: nothing contracted), stored once. The content checks (counts, indices)
// are done by the ops before the launch and by the CPU kernel / emulator on theirs.
#include "gpukit.cuh"

#define RS_BLOCK 256
// gpukit_core::resize::MAX_RANK.
#define RS_RANK 8

__device__ __forceinline__ float rs_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double rs_mul(double a, double b) { return __dmul_rn(a, b); }
template <class R> __device__ __forceinline__ R rs_weight(double w);
template <> __device__ __forceinline__ float rs_weight<float>(double w) {
    return __double2float_rn(w);
}
template <> __device__ __forceinline__ double rs_weight<double>(double w) { return w; }

// Splits output o into per-axis table rows (row[a] = row0(a) + digit a).
__device__ __forceinline__ void rs_rows(const i64* __restrict__ dims, int r, i64 o,
                                        i64* row) {
    i64 base = 0;
    for (int a = 0; a < r; ++a) base += dims[r + a];
    for (int a = r - 1; a >= 0; --a) {
        const i64 d = dims[r + a];
        base -= d;
        row[a] = base + o % d;
        o /= d;
    }
}

template <class B>
__device__ __forceinline__ void rs_copy(B* __restrict__ out, const B* __restrict__ x,
                                        const i64* __restrict__ dims,
                                        const i64* __restrict__ taps, i64 ndim, i64 k,
                                        i64 n_out) {
    if (ndim <= 0 || ndim > RS_RANK) return;
    const int r = (int)ndim;
    const i64 k1 = k + 1;
    for (i64 o = gk_tid(); o < n_out; o += gk_nthreads()) {
        i64 row[RS_RANK];
        rs_rows(dims, r, o, row);
        i64 off = 0, stride = 1;
        for (int a = r - 1; a >= 0; --a) {
            off += taps[row[a] * k1 + 1] * stride;
            stride *= dims[a];
        }
        out[o] = x[off];
    }
}

template <class T>
__device__ __forceinline__ void rs_interp(T* __restrict__ out, const T* __restrict__ x,
                                          const i64* __restrict__ dims,
                                          const i64* __restrict__ taps,
                                          const double* __restrict__ weights, i64 ndim, i64 k,
                                          i64 n_out) {
    typedef typename GkElem<T>::Real R;
    if (ndim <= 0 || ndim > RS_RANK) return;
    const int r = (int)ndim;
    const i64 k1 = k + 1;
    i64 stride[RS_RANK];
    {
        i64 s = 1;
        for (int a = r - 1; a >= 0; --a) {
            stride[a] = s;
            s *= dims[a];
        }
    }
    for (i64 o = gk_tid(); o < n_out; o += gk_nthreads()) {
        i64 row[RS_RANK];
        rs_rows(dims, r, o, row);
        int t[RS_RANK];
        R acc[RS_RANK];
        i64 off[RS_RANK + 1];
        for (int a = 0; a < r; ++a) t[a] = 0;
        off[0] = 0;
        int from = 0;
        R result = R(0);
        for (;;) {
            // The offsets of levels from..r-1 for the current taps, then the leaf.
            for (int b = from; b < r; ++b)
                off[b + 1] = off[b] + taps[row[b] * k1 + 1 + t[b]] * stride[b];
            R v = gk_load(x[off[r]]);
            int b = r - 1;
            bool done = false;
            for (;;) {
                const R w = rs_weight<R>(weights[row[b] * k + t[b]]);
                acc[b] = t[b] == 0 ? rs_mul(w, v) : gk_fma(w, v, acc[b]);
                t[b] += 1;
                if (t[b] < taps[row[b] * k1]) break;  // the next tap of level b
                t[b] = 0;
                v = acc[b];
                if (b == 0) {
                    result = v;
                    done = true;
                    break;
                }
                b -= 1;
            }
            if (done) break;
            from = b;
        }
        out[o] = gk_store<T>(result);
    }
}

// Interpolation exists for the float dtypes only (check_args refuses interp 1 on
// integers).
template <class T> struct RsInterp {
    static __device__ __forceinline__ void run(T* out, const T* x, const i64* dims,
                                               const i64* taps, const double* weights,
                                               i64 ndim, i64 k, i64 n_out) {
        rs_interp<T>(out, x, dims, taps, weights, ndim, k, n_out);
    }
};
template <> struct RsInterp<i64> {
    static __device__ __forceinline__ void run(i64*, const i64*, const i64*, const i64*,
                                               const double*, i64, i64, i64) {}
};
template <> struct RsInterp<int> {
    static __device__ __forceinline__ void run(int*, const int*, const i64*, const i64*,
                                               const double*, i64, i64, i64) {}
};

#define RS_ENTRY(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(RS_BLOCK)                                    \
        op##_##sfx(T* __restrict__ out, const T* __restrict__ x, const i64* __restrict__ dims, \
                   const i64* __restrict__ taps, const double* __restrict__ weights, i64 ndim, \
                   i64 k, i64 rows, i64 n_out, i64 interp) {                                  \
        (void)rows;                                                                           \
        if (interp == 0) {                                                                    \
            typedef GkBits<T>::B B;                                                           \
            rs_copy<B>((B*)out, (const B*)x, dims, taps, ndim, k, n_out);                     \
        } else {                                                                              \
            RsInterp<T>::run(out, x, dims, taps, weights, ndim, k, n_out);                    \
        }                                                                                     \
    }
GK_FOR_resize(RS_ENTRY)
