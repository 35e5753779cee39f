// conv.cu: the `conv` group's convolutions and pooling (gemm lives in linalg.cu).
//
//   conv2d_{dtype}            implicit GEMM, 64×64 tiles (32×32 f64)  (gpukit_core::abi::conv)
//   conv2d_direct_{dtype}     one thread per output                   (aux entry, same args)
//   conv_transpose2d_{dtype}  one thread per output, gather form
//   max_pool2d_{dtype}        one thread per output
//   max_pool2d_index_{dtype}  one thread per output: the first tap holding the maximum
//
// Order of operations (docs/ops/conv.md): conv2d's output is the fma chain
// acc = fma(xv, load(w[oc][icl][ky][kx]), acc) over the group's taps t = (icl, ky, kx)
// ascending (icl outermost, kx innermost), from +0.0, xv = +0.0 on a padded tap (a real
// operand, never skipped); then acc + load(bias[oc]); one store. conv_transpose2d's is
// the same chain over the taps that land on an input element (the others skipped, no
// operand); max_pool2d is the max_nan fold of the window's in-image taps from -inf
// (max_nan is order-independent: NaN if any tap is NaN, max(-0, +0) = +0).
//
// conv2d is a product per (image, group): Y[oc][p] = Σ_t W[oc][t] · B[t][p] with
// W = the group's weights, row-major [og, K] (K = cg·kh·kw, t in exactly the contract's
// (icl, ky, kx) order), and B = the im2col panel (B[t][p] = the input at tap t of output
// pixel p, +0.0 in the padding). The tiled core (gpukit_mm.cuh, shared with linalg.cu)
// walks t in ascending k-tiles, so every output sees exactly the contract's fma
// sequence; the im2col panel is never materialised: a shared-memory table gives each
// k-tile's (channel offset, ky·dil_h, kx·dil_w) and each thread gathers its pixel's
// inputs. Past K the panel is padded with -0.0 against W's +0.0 (an exact identity,
// see gpukit_mm.cuh). conv2d uses the core's small tile only (the big one needs more than
// 128 registers with the im2col gather). Groups with few output channels (depthwise)
// take the direct kernel: one thread per output, the same chain. The plan
// (crates/gpukit-cuda/src/plan/conv.rs) chooses.
#include "gpukit.cuh"
#include "gpukit_mm.cuh"

// ---------------------------------------------------------------------------------
// conv2d: implicit GEMM
// ---------------------------------------------------------------------------------

// The conv2d scalars the kernels use (ABI order: n, c_in, h, w, c_out, kh, kw, oh, ow,
// pad_t, pad_l, stride_h, stride_w, dil_h, dil_w, groups, has_bias).
struct GkConv {
    i64 n, c_in, h, w, c_out, kh, kw, oh, ow, pt, pl, sh, sw, dh, dw, groups;
    bool has_bias;
};

// One k-tile's taps, for t = k0 + i: the offset of input channel icl's plane from the
// group's first (icl·h·w), ky·dil_h and kx·dil_w; choff = -1 past K. And the sizes the
// table is built from, written once per block (block-uniform: kept here rather than in
// every thread's registers).
struct GkConvTab {
    int choff[2][GK_MM_BK];
    int dy[2][GK_MM_BK];
    int dx[2][GK_MM_BK];
    int K, kw, khw, hw, dh, dw;
};

// Table entry i of slot s: tap t.
__device__ __forceinline__ void gk_conv_entry(GkConvTab& tab, int s, int i, i64 t, int K, int kw,
                                              int khw, int hw, int dh, int dw) {
    if (t >= K) {
        tab.choff[s][i] = -1;
        tab.dy[s][i] = 0;
        tab.dx[s][i] = 0;
        return;
    }
    const int tt = (int)t;
    const int icl = tt / khw, r = tt - icl * khw, ky = r / kw, kx = r - ky * kw;
    tab.choff[s][i] = icl * hw;
    tab.dy[s][i] = ky * dh;
    tab.dx[s][i] = kx * dw;
}

// The weights of one group, row-major [og, K], as the A operand of gk_mm_tile (as
// GkMmKMajor, with 32-bit offsets: og·K fits in int32 when the plan takes this kernel).
template <class T, int L> struct GkConvW {
    typedef typename GkElem<T>::Real R;
    static constexpr bool KMAJOR = true;
    const T* p;      // &wg[row(0)·K + tid%BK] (dereferenced only in range)
    int lstride;     // (NT/BK)·K: from slot l to slot l+1
    int kleft;       // K - tid%BK: t < K  <=>  k0 < kleft
    unsigned rowok;  // bit l: row(l) < og
    __device__ __forceinline__ GkConvW(const T* wg, int r0, int og, int K) {
        const int tid = threadIdx.x;
        const int row0 = r0 + tid / GK_MM_BK;
        p = wg + (i64)row0 * K + tid % GK_MM_BK;
        lstride = (GK_MM_THREADS / GK_MM_BK) * K;
        kleft = K - tid % GK_MM_BK;
        rowok = 0;
#pragma unroll
        for (int l = 0; l < L; ++l)
            if (row0 + l * (GK_MM_THREADS / GK_MM_BK) < og) rowok |= 1u << l;
    }
    __device__ __forceinline__ R get(int l, i64 k0) const {
        if (k0 >= kleft) return R(0);
        if (!((rowok >> l) & 1u)) return R(0);
        return gk_load(p[(int)k0 + l * lstride]);
    }
};

// The im2col panel of one (image, group) as the B operand of gk_mm_tile: consecutive
// threads on consecutive output pixels (consecutive input columns of a row when
// stride_w = 1). This thread's pixel is p = n0 + tid%BN.
//
// 32-bit indices: the plan takes this kernel only when the group's weights og·K
// (K = cg·kh·kw), its input planes cg·h·w, the pixels oh·ow and every window position
// ((o-1)·stride + (k-1)·dil + pad) fit in int32 (crates/gpukit-cuda/src/plan/conv.rs,
// `mm_fits_i32`); conv2d_direct takes the rest.
//
// init() also stages the tile's bias values in shared memory (bias_s[i] = load(bias of
// tile row i), when given): read there by the epilogue, they cannot be scheduled into
// registers across the whole k loop.
template <class T, int BN> struct GkIm2col {
    typedef typename GkElem<T>::Real R;
    static constexpr bool KMAJOR = false;
    static constexpr int S = GK_MM_THREADS / BN;  // t step between staging slots
    GkConvTab& tab;
    const T* xg;  // the group's first input plane of the image
    R* bias_s;        // [BM] in shared memory
    const T* bias_t;  // the tile's first row's bias, or null without a bias
    int bias_rows;    // tile rows that exist (og - m0, at most BM)
    int h, w;
    int by, bx;   // the pixel's window origin (oy·sh - pt, ox·sw - pl)
    bool pok;     // p < oh·ow
    __device__ __forceinline__ GkIm2col(GkConvTab& tab_, const T* xg_, R* bias_s_,
                                        const T* bias_t_, int bias_rows_, const GkConv& q,
                                        int n0)
        : tab(tab_),
          xg(xg_),
          bias_s(bias_s_),
          bias_t(bias_t_),
          bias_rows(bias_rows_),
          h((int)q.h),
          w((int)q.w) {
        const int p = n0 + (int)(threadIdx.x % BN);
        const int ow = (int)q.ow;
        pok = p < (int)(q.oh * q.ow);
        const int oy = pok ? p / ow : 0, ox = pok ? p - oy * ow : 0;
        by = oy * (int)q.sh - (int)q.pt;
        bx = ox * (int)q.sw - (int)q.pl;
    }
    __device__ __forceinline__ void build(int s, int i, i64 t) {
        gk_conv_entry(tab, s, i, t, tab.K, tab.kw, tab.khw, tab.hw, tab.dh, tab.dw);
    }
    // Slots 0 and 1: k-tiles 0 and 1; the bias.
    __device__ __forceinline__ void init() {
        const int tid = threadIdx.x;
        if (tid < 2 * GK_MM_BK) build(tid / GK_MM_BK, tid % GK_MM_BK, tid);
        if (bias_t != nullptr && tid < bias_rows) bias_s[tid] = gk_load(bias_t[tid]);
    }
    // During k-tile kt (tile kt+1 already fetched): slot kt&1 gets k-tile kt+2.
    __device__ __forceinline__ void advance(i64 kt) {
        const int tid = threadIdx.x;
        if (tid < GK_MM_BK) build((int)(kt & 1), tid, (kt + 2) * GK_MM_BK + tid);
    }
    __device__ __forceinline__ R get(int l, i64 k0) const {
        const int s = (int)((k0 / GK_MM_BK) & 1);
        const int i = l * S + (int)(threadIdx.x / BN);
        const int choff = tab.choff[s][i];
        if (choff < 0) return -R(0);
        if (!pok) return R(0);
        const int iy = by + tab.dy[s][i], ix = bx + tab.dx[s][i];
        // Unsigned compares: a negative coordinate is out of range too.
        if ((unsigned)iy >= (unsigned)h || (unsigned)ix >= (unsigned)w) return R(0);
        return gk_load(xg[choff + iy * w + ix]);
    }
};

// The bias goes through shared memory (staged by the im2col loader's init()): read from
// global memory in the epilogue, NVVM schedules its loads before the k loop and holds
// them in registers throughout (tens more, and spills).
template <class T, bool BIG>
__device__ __forceinline__ void gk_conv2d_mm(T* __restrict__ y, const T* __restrict__ x,
                                             const T* __restrict__ wt,
                                             const T* __restrict__ bias, const GkConv& q) {
    typedef typename GkElem<T>::Real R;
    typedef GkMmCfg<R, BIG> C;
    __shared__ GkMmSmem<R, C> sm;
    __shared__ GkConvTab tab;
    __shared__ R bias_s[C::BM];
    const int tx = threadIdx.x % (C::BN / C::TN);
    const int ty = threadIdx.x / (C::BN / C::TN);
    const i64 cg = q.c_in / q.groups, og = q.c_out / q.groups;
    const i64 K = cg * q.kh * q.kw;
    const i64 npix = q.oh * q.ow;
    const i64 mt = (og + C::BM - 1) / C::BM, nt = (npix + C::BN - 1) / C::BN;
    const i64 ng = q.n * q.groups;
    if (threadIdx.x == 0) {
        tab.K = (int)K;
        tab.kw = (int)q.kw;
        tab.khw = (int)(q.kh * q.kw);
        tab.hw = (int)(q.h * q.w);
        tab.dh = (int)q.dh;
        tab.dw = (int)q.dw;
    }
    // (gk_mm_tile's first barrier publishes the sizes.)
    for (i64 bz = blockIdx.z; bz < ng; bz += gridDim.z) {
        const i64 b = bz / q.groups, g = bz - b * q.groups;
        const T* xg = x + (b * q.c_in + g * cg) * q.h * q.w;
        for (i64 by = blockIdx.y; by < mt; by += gridDim.y) {
            for (i64 bx = blockIdx.x; bx < nt; bx += gridDim.x) {
                const i64 m0 = by * C::BM, n0 = bx * C::BN;
                const GkConvW<T, C::BM * GK_MM_BK / GK_MM_THREADS> al(wt + g * og * K, (int)m0,
                                                                     (int)og, (int)K);
                const int rows = og - m0 < C::BM ? (int)(og - m0) : C::BM;
                GkIm2col<T, C::BN> bl(tab, xg, bias_s, q.has_bias ? bias + g * og + m0 : nullptr,
                                      rows, q, (int)n0);
                R acc[C::TM][C::TN];
                gk_mm_tile<R, C>(sm, al, bl, K, acc);
#pragma unroll
                for (int i = 0; i < C::TM; ++i) {
                    const i64 r = m0 + gk_mm_row<C>(ty, i);
                    if (r >= og) continue;
                    const i64 oc = g * og + r;
                    T* yrow = y + (b * q.c_out + oc) * npix;
#pragma unroll
                    for (int j = 0; j < C::TN; ++j) {
                        const i64 p = n0 + gk_mm_col<C>(tx, j);
                        if (p < npix) {
                            R v = acc[i][j];
                            if (q.has_bias) v = v + bias_s[gk_mm_row<C>(ty, i)];
                            yrow[p] = gk_store<T>(v);
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// conv2d: direct (one thread per output)
// ---------------------------------------------------------------------------------

// a / b and a % b for 0 <= a, 0 < b, by a 32-bit division when both fit (exact either
// way; a 64-bit division costs far more).
__device__ __forceinline__ i64 gk_conv_divmod(i64 a, i64 b, i64& rem) {
    i64 q;
    if ((((unsigned long long)a | (unsigned long long)b) >> 32) == 0) {
        q = (i64)((unsigned)a / (unsigned)b);
    } else {
        q = a / b;
    }
    rem = a - q * b;
    return q;
}

// A grid-stride walk over a row-major index space [*, d[1], ..., d[L-1]] without a
// division per item: the thread's first flat index and the grid's stride are split into
// coordinates once; each step adds the stride's coordinates with carries (each
// coordinate and each stride coordinate is below its extent, so one subtraction per
// level suffices). i[0], the outermost coordinate, is unbounded.
template <int L> struct GkWalk {
    i64 i[L], s[L];
    __device__ __forceinline__ GkWalk(const i64 (&d)[L]) {
        i64 o = gk_tid(), st = gk_nthreads();
#pragma unroll
        for (int l = L - 1; l >= 1; --l) {
            o = gk_conv_divmod(o, d[l], i[l]);
            st = gk_conv_divmod(st, d[l], s[l]);
        }
        i[0] = o;
        s[0] = st;
    }
    __device__ __forceinline__ void next(const i64 (&d)[L]) {
        i64 carry = 0;
#pragma unroll
        for (int l = L - 1; l >= 1; --l) {
            i[l] += s[l] + carry;
            carry = i[l] >= d[l] ? 1 : 0;
            if (carry) i[l] -= d[l];
        }
        i[0] += s[0] + carry;
    }
};

template <class T>
__device__ __forceinline__ void gk_conv2d_direct(T* __restrict__ y, const T* __restrict__ x,
                                                 const T* __restrict__ wt,
                                                 const T* __restrict__ bias, const GkConv& q) {
    typedef typename GkElem<T>::Real R;
    const i64 cg = q.c_in / q.groups, og = q.c_out / q.groups;
    const i64 total = q.n * q.c_out * q.oh * q.ow;
    // Outputs [n, c_out, oh, ow] = [n, groups, og, oh, ow] (oc = g·og + ol).
    const i64 d[5] = {q.n, q.groups, og, q.oh, q.ow};
    if (total <= 0) return;  // (the walk divides by every extent)
    GkWalk<5> it(d);
    for (i64 o = gk_tid(); o < total; o += gk_nthreads(), it.next(d)) {
        const i64 b = it.i[0], g = it.i[1], oy = it.i[3], ox = it.i[4];
        const i64 oc = g * og + it.i[2];
        const i64 y0 = oy * q.sh - q.pt, x0 = ox * q.sw - q.pl;
        const T* xc = x + (b * q.c_in + g * cg) * q.h * q.w;
        const T* wc = wt + oc * cg * q.kh * q.kw;
        R acc = R(0);
        for (i64 icl = 0; icl < cg; ++icl) {
            for (i64 ky = 0; ky < q.kh; ++ky) {
                const i64 iy = y0 + ky * q.dh;
                const bool rowin = iy >= 0 && iy < q.h;
                for (i64 kx = 0; kx < q.kw; ++kx) {
                    const i64 ix = x0 + kx * q.dw;
                    // +0.0 on a padded tap: a real operand (0·inf = NaN).
                    const R xv = (rowin && ix >= 0 && ix < q.w) ? gk_load(xc[iy * q.w + ix]) : R(0);
                    acc = gk_fma(xv, gk_load(wc[ky * q.kw + kx]), acc);
                }
            }
            xc += q.h * q.w;
            wc += q.kh * q.kw;
        }
        if (q.has_bias) acc = acc + gk_load(bias[oc]);
        y[o] = gk_store<T>(acc);
    }
}

// ---------------------------------------------------------------------------------
// conv_transpose2d: gather, one thread per output
// ---------------------------------------------------------------------------------

// The kernel taps kk of one dimension that land on an input element for output
// position o: num = o + pad - kk·d must be >= 0, divisible by s, and num/s < len. They
// form the ascending progression kk = first, first + step, ... < end (step = s /
// gcd(s, d)), reading input index src, src - dsrc, ...; first = end when there is none.
struct GkTaps {
    i64 first, step, end, src, dsrc;
};

__device__ __forceinline__ GkTaps gk_taps(i64 o, i64 pad, i64 k, i64 d, i64 s, i64 len) {
    GkTaps r;
    const i64 num0 = o + pad;  // >= 0
    i64 ga = s, gb = d % s;
    while (gb != 0) {
        const i64 t = ga % gb;
        ga = gb;
        gb = t;
    }
    r.step = s / ga;  // the smallest q > 0 with q·d divisible by s
    r.dsrc = r.step * d / s;
    // The first kk of the progression: num0 - kk·d divisible by s.
    i64 kk = 0;
    while (kk < r.step && kk < k && (num0 - kk * d) % s != 0) ++kk;
    if (kk >= r.step || kk >= k) {
        r.first = r.end = 0;
        r.src = 0;
        return r;
    }
    // Skip the taps past the input (num/s >= len): num falls as kk rises.
    while (kk < k && num0 - kk * d >= 0 && (num0 - kk * d) / s >= len) kk += r.step;
    r.first = kk;
    r.src = (kk < k && num0 - kk * d >= 0) ? (num0 - kk * d) / s : 0;
    // The end: the first tap before the input start (num < 0), or k.
    while (kk < k && num0 - kk * d >= 0) kk += r.step;
    r.end = kk < k ? kk : k;
    if (r.end < r.first) r.end = r.first;
    return r;
}

template <class T>
__device__ __forceinline__ void gk_conv_transpose2d(T* __restrict__ y, const T* __restrict__ x,
                                                    const T* __restrict__ wt,
                                                    const T* __restrict__ bias,
                                                    const GkConv& q) {
    typedef typename GkElem<T>::Real R;
    const i64 cg = q.c_in / q.groups, og = q.c_out / q.groups;
    const i64 total = q.n * q.c_out * q.oh * q.ow;
    const i64 khw = q.kh * q.kw;
    // Outputs [n, c_out, oh, ow] = [n, groups, og, oh, ow] (oc = g·og + ol).
    const i64 d[5] = {q.n, q.groups, og, q.oh, q.ow};
    if (total <= 0) return;  // (the walk divides by every extent)
    GkWalk<5> it(d);
    for (i64 o = gk_tid(); o < total; o += gk_nthreads(), it.next(d)) {
        const i64 b = it.i[0], g = it.i[1], ol = it.i[2], oy = it.i[3], ox = it.i[4];
        const i64 oc = g * og + ol;
        const GkTaps ty = gk_taps(oy, q.pt, q.kh, q.dh, q.sh, q.h);
        const GkTaps tx = gk_taps(ox, q.pl, q.kw, q.dw, q.sw, q.w);
        R acc = R(0);
        // Input channel ic = g·cg + icl: plane x[b][ic], weights w[ic][ol].
        const T* xc = x + (b * q.c_in + g * cg) * q.h * q.w;
        const T* wc = wt + (g * cg * og + ol) * khw;
        for (i64 icl = 0; icl < cg; ++icl) {
            i64 ih = ty.src;
            for (i64 ky = ty.first; ky < ty.end; ky += ty.step, ih -= ty.dsrc) {
                i64 iw = tx.src;
                for (i64 kx = tx.first; kx < tx.end; kx += tx.step, iw -= tx.dsrc) {
                    acc = gk_fma(gk_load(xc[ih * q.w + iw]), gk_load(wc[ky * q.kw + kx]), acc);
                }
            }
            xc += q.h * q.w;
            wc += og * khw;
        }
        if (q.has_bias) acc = acc + gk_load(bias[oc]);
        y[o] = gk_store<T>(acc);
    }
}

// ---------------------------------------------------------------------------------
// max_pool2d: one thread per output
// ---------------------------------------------------------------------------------

template <class R> __device__ __forceinline__ R gk_conv_neg_inf();
template <> __device__ __forceinline__ float gk_conv_neg_inf<float>() {
    return __int_as_float(0xff800000u);
}
template <> __device__ __forceinline__ double gk_conv_neg_inf<double>() {
    return __longlong_as_double((long long)0xfff0000000000000ULL);
}

// The max_nan fold, from -inf, of a window's taps inside the image: (y0, x0) is the
// window's top-left corner in image coordinates (negative in the padding).
template <class T>
__device__ __forceinline__ typename GkElem<T>::Real gk_pool_max(const T* __restrict__ xp, i64 h,
                                                               i64 w, i64 kh, i64 kw, i64 y0,
                                                               i64 x0, i64 dh, i64 dw) {
    typedef typename GkElem<T>::Real R;
    R m = gk_conv_neg_inf<R>();
    for (i64 ky = 0; ky < kh; ++ky) {
        const i64 iy = y0 + ky * dh;
        if (iy < 0 || iy >= h) continue;
        for (i64 kx = 0; kx < kw; ++kx) {
            const i64 ix = x0 + kx * dw;
            if (ix < 0 || ix >= w) continue;
            m = gk_max_nan(m, gk_load(xp[iy * w + ix]));
        }
    }
    return m;
}

template <class T>
__device__ __forceinline__ void gk_max_pool2d(T* __restrict__ y, const T* __restrict__ x, i64 n,
                                              i64 c, i64 h, i64 w, i64 kh, i64 kw, i64 oh,
                                              i64 ow, i64 pt, i64 pl, i64 sh, i64 sw, i64 dh,
                                              i64 dw) {
    typedef typename GkElem<T>::Real R;
    const i64 total = n * c * oh * ow;
    const i64 d[3] = {n * c, oh, ow};
    if (total <= 0) return;  // (the walk divides by every extent)
    GkWalk<3> it(d);
    for (i64 o = gk_tid(); o < total; o += gk_nthreads(), it.next(d)) {
        const i64 plane = it.i[0], oy = it.i[1], ox = it.i[2];
        const T* xp = x + plane * h * w;
        const i64 y0 = oy * sh - pt, x0 = ox * sw - pl;
        const R m = gk_pool_max<T>(xp, h, w, kh, kw, y0, x0, dh, dw);
        y[o] = gk_store<T>(m);
    }
}

// max_pool2d_index: one thread per output. Pass 1 is max_pool2d's fold; pass 2 finds
// the first in-image tap (row-major window order) equal to the maximum bit for bit (any
// NaN to a NaN) and writes its flattened input index: row major over (h, w) or, with
// storage_order 1, column major (w, h). -1 when no tap matches (impossible for a valid
// launch). The plan drops the all-padding taps as for max_pool2d; indices are computed
// from the real image position, so they do not change.
template <class T>
__device__ __forceinline__ void gk_max_pool2d_index(i64* __restrict__ idx,
                                                    const T* __restrict__ x, i64 n, i64 c,
                                                    i64 h, i64 w, i64 kh, i64 kw, i64 oh,
                                                    i64 ow, i64 pt, i64 pl, i64 sh, i64 sw,
                                                    i64 dh, i64 dw, bool column_major) {
    typedef typename GkElem<T>::Real R;
    const i64 total = n * c * oh * ow;
    const i64 d[3] = {n * c, oh, ow};
    if (total <= 0) return;
    GkWalk<3> it(d);
    for (i64 o = gk_tid(); o < total; o += gk_nthreads(), it.next(d)) {
        const i64 plane = it.i[0], oy = it.i[1], ox = it.i[2];
        const T* xp = x + plane * h * w;
        const i64 y0 = oy * sh - pt, x0 = ox * sw - pl;
        const R m = gk_pool_max<T>(xp, h, w, kh, kw, y0, x0, dh, dw);
        const bool m_nan = m != m;
        i64 at = -1;
        for (i64 ky = 0; ky < kh && at < 0; ++ky) {
            const i64 iy = y0 + ky * dh;
            if (iy < 0 || iy >= h) continue;
            for (i64 kx = 0; kx < kw; ++kx) {
                const i64 ix = x0 + kx * dw;
                if (ix < 0 || ix >= w) continue;
                const R v = gk_load(xp[iy * w + ix]);
                const bool same = m_nan ? (v != v) : (v == m && signbit(v) == signbit(m));
                if (same) {
                    at = column_major ? (plane * w + ix) * h + iy : (plane * h + iy) * w + ix;
                    break;
                }
            }
        }
        idx[o] = at;
    }
}

// ---------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------

#define GK_CONV_PARAMS(T)                                                                      \
    T *__restrict__ y, const T *__restrict__ x, const T *__restrict__ weight,                  \
        const T *__restrict__ bias, i64 n, i64 c_in, i64 h, i64 w, i64 c_out, i64 kh, i64 kw,  \
        i64 oh, i64 ow, i64 pad_t, i64 pad_l, i64 stride_h, i64 stride_w, i64 dil_h,           \
        i64 dil_w, i64 groups, i64 has_bias
#define GK_CONV_Q                                                                              \
    const GkConv q = {n,      c_in,  h,        w,        c_out, kh,    kw,     oh, ow,         \
                      pad_t,  pad_l, stride_h, stride_w, dil_h, dil_w, groups, has_bias != 0}

#define GK_CONV2D(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(GK_MM_THREADS, GK_MM_MINB(false))             \
        op##_##sfx(GK_CONV_PARAMS(T)) {                                                        \
        GK_CONV_Q;                                                                             \
        gk_conv2d_mm<T, false>(y, x, weight, bias, q);                                         \
    }
// Direct kernels: 256 threads; the minimum blocks per SM caps the registers (ptxas left
// alone picks about 40 and spills around its 64-bit division calls): 3 -> 85 registers,
// 2 -> 128 for conv_transpose2d's longer setup.
#define GK_CONV2D_DIRECT(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(256, 3) op##_##sfx(GK_CONV_PARAMS(T)) {       \
        GK_CONV_Q;                                                                             \
        gk_conv2d_direct<T>(y, x, weight, bias, q);                                            \
    }
#define GK_CONV_TRANSPOSE2D(op, sfx, T)                                                        \
    extern "C" __global__ void __launch_bounds__(256, 2) op##_##sfx(GK_CONV_PARAMS(T)) {       \
        GK_CONV_Q;                                                                             \
        gk_conv_transpose2d<T>(y, x, weight, bias, q);                                         \
    }
#define GK_MAX_POOL2D(op, sfx, T)                                                              \
    extern "C" __global__ void __launch_bounds__(256, 3)                                       \
        op##_##sfx(T* __restrict__ y, const T* __restrict__ x, i64 n, i64 c, i64 h, i64 w,     \
                   i64 kh, i64 kw, i64 oh, i64 ow, i64 pad_t, i64 pad_l, i64 stride_h,         \
                   i64 stride_w, i64 dil_h, i64 dil_w) {                                       \
        gk_max_pool2d<T>(y, x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h, stride_w,   \
                         dil_h, dil_w);                                                        \
    }

GK_FOR_conv2d(GK_CONV2D)
GK_FOR_conv2d_direct(GK_CONV2D_DIRECT)
GK_FOR_conv_transpose2d(GK_CONV_TRANSPOSE2D)
GK_FOR_max_pool2d(GK_MAX_POOL2D)
#define GK_MAX_POOL2D_INDEX(op, sfx, T)                                                        \
    extern "C" __global__ void __launch_bounds__(256, 3)                                       \
        op##_##sfx(i64* __restrict__ idx, const T* __restrict__ x, i64 n, i64 c, i64 h, i64 w, \
                   i64 kh, i64 kw, i64 oh, i64 ow, i64 pad_t, i64 pad_l, i64 stride_h,         \
                   i64 stride_w, i64 dil_h, i64 dil_w, i64 storage_order) {                    \
        gk_max_pool2d_index<T>(idx, x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h,     \
                               stride_w, dil_h, dil_w, storage_order != 0);                    \
    }
GK_FOR_max_pool2d_index(GK_MAX_POOL2D_INDEX)
