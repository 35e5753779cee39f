// reduce.cu: the arithmetic core's reductions and the norm group's row reductions.
//
//   sum_{dtype}              out, a, n                  whole shape, one warp (n <= CHUNK)
//   sum_chunks_{dtype}       part, a, n                 part[c] = chunk c's sum
//   sum_partials_{dtype}     out, part, nc              combine_partials, one warp, store
//   dot_{dtype}              out, a, b, n               whole shape, one warp (n <= CHUNK)
//   dot_chunks_{dtype}       part, a, b, n              part[c] = chunk c's dot
//   softmax_{dtype}          out, a, rows, cols         warp per row
//   softmax_pmax_{dtype}     pmax, x, rows, cols        long rows: chunk maxima
//   softmax_psum_{dtype}     psum, pmax, x, rows, cols  long rows: chunk sums of exp
//   softmax_pwrite_{dtype}   out, pmax, psum, x, rows, cols   long rows: the outputs
//   softmax_axis_{dtype}     out, x, outer, axis, inner warp per line (stride inner)
//   softmax_cols_{dtype}     out, x, outer, axis, inner thread per line, axis <= CHUNK
//   argmax_{dtype}           out (i64), x, rows, n      warp per row
//   argmax_chunks_{dtype}    part (i64), x, rows, n     long rows: chunk winners
//   argmax_finish_{dtype}    out, part, x, rows, n      long rows: the row's winner
//   reduce_l2_{dtype}        out, x, rows, n            warp per row
//   reduce_l2_chunks_{dtype} part, x, rows, n           long rows: chunk sums of squares
//   reduce_l2_finish_{dtype} out, part, rows, n         long rows: combine, sqrt, store
//
// Every sum follows gpukit_core::reduce exactly (docs/numerics.md, rule 4): 32 lanes from
// `zero`, lane l folds items l, l+32, ... in ascending order, the fixed tree 16..1, and
// for more than one chunk the same shape over the chunk results (step = combine(acc,
// partial)). A fold of exactly one chunk is that chunk's result (never combine(zero, it)).
// The partials `part` are in the compute type A: float for f32/f16/bf16, double for
// f64, i64 / int for the integers (wrapping: any grouping gives the same integer).
//
// `out` may be exactly the input in softmax and softmax_axis: every element is read and
// written by the same thread; in the one-launch kernels a line's reads for the maximum
// and the denominator all finish (they feed the warp's shuffles or the thread's own
// accumulators) before the line is written, and softmax_pwrite reads only the elements
// it writes (the maxima and sums come from scratch, written by earlier launches). Those
// pointers are never __restrict__.
//
// Geometry (crates/gpukit-cuda/src/plan/reduce.rs): the single-warp entries run as one
// block of 32 threads; the rest as 256-thread blocks (8 warps), grid-stride over chunks,
// rows, (row, chunk) pairs or lines (warp-uniform loops: the whole warp takes the same
// item). Long rows (more than one chunk) split into a warp per (row, chunk) pair, the
// chunk results going through plan scratch. Every entry has __launch_bounds__(block, 1):
// with the default occupancy target ptxas spilled a few registers in the f64 folds.
#include "gpukit.cuh"
#include "gpukit_math.cuh"

#define RED_BLOCK 256
// Loads in flight per lane in a chunk (issued together, folded in order): 16 for the
// memory-bound folds, 8 where each item also costs an exp.
#define RED_BATCH 16
#define RED_BATCH_EXP 8

// ---------------------------------------------------------------------------------
// Compute types and element helpers.
// ---------------------------------------------------------------------------------

// Correctly rounded square root, whatever the compile flags.
__device__ __forceinline__ float red_sqrt(float x) { return __fsqrt_rn(x); }
__device__ __forceinline__ double red_sqrt(double x) { return __dsqrt_rn(x); }

// -inf in R (bit pattern: no dependence on a math header's INFINITY).
template <class R> __device__ __forceinline__ R red_neg_inf();
template <> __device__ __forceinline__ float red_neg_inf<float>() {
    return __int_as_float((int)0xff800000u);
}
template <> __device__ __forceinline__ double red_neg_inf<double>() {
    return __longlong_as_double((long long)0xfff0000000000000ull);
}

// This thread's warp in the grid and the grid's warp count (blocks are whole warps).
__device__ __forceinline__ i64 red_warp() { return gk_tid() >> 5; }
__device__ __forceinline__ i64 red_nwarps() { return gk_nthreads() >> 5; }

// Chunks of the shape over n items (n >= 1), and the end of chunk c.
__device__ __forceinline__ i64 red_nchunks(i64 n) { return (n + GK_CHUNK - 1) / GK_CHUNK; }
__device__ __forceinline__ i64 red_chunk_end(i64 c, i64 n) {
    return (c + 1) * GK_CHUNK < n ? (c + 1) * GK_CHUNK : n;
}

// ---------------------------------------------------------------------------------
// The reduction shape with batched loads. Same order as gk_warp_chunk / gk_warp_fold
// (gpukit.cuh): the step is split into ld(i) (the item's load, no arithmetic that
// depends on acc) and fd(acc, v) (the fold); a lane issues up to U loads of its
// items i, i+32, ... at once, then folds them into acc one by one in ascending order,
// so each lane still sees step(acc, i) for its items in ascending i.
// ---------------------------------------------------------------------------------

// One chunk: items start..end (at most GK_CHUNK). Whole-warp call; result in every lane.
template <int U, class A, class Ld, class Fd, class Comb>
__device__ __forceinline__ A red_chunk(i64 start, i64 end, A zero, Ld ld, Fd fd, Comb comb) {
    typedef decltype(ld(start)) V;
    A acc = zero;
    i64 i = start + gk_lane();
    // Full batches: this lane's items i, i+32, ..., i+32*(U-1) all below end.
    for (; i + 32 * (U - 1) < end; i += 32 * U) {
        V v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = ld(i + 32 * u);
#pragma unroll
        for (int u = 0; u < U; ++u) acc = fd(acc, v[u]);
    }
    // The lane's last items (fewer than U), still ascending.
    for (; i < end; i += 32) acc = fd(acc, ld(i));
    return gk_warp_tree(acc, comb);
}

// The whole shape over items 0..n by one warp: gk_warp_fold's levels exactly, with
// red_chunk for each chunk (written as one loop over the chunks so the chunk code is
// instantiated once):
//   one chunk (n <= CHUNK, n = 0 included): that chunk's result itself;
//   c1 = ceil(n / CHUNK) <= CHUNK chunks: chunk result j folded into lane j % 32 as
//     acc = combine(acc, p_j) (lanes from zero, j ascending), then the tree;
//   c1 > CHUNK: the same per group k of CHUNK chunk results (group results q_k), then
//     q_k folded into lane k % 32 the same way, then the tree (n <= 2^39 items).
template <int U, class A, class Ld, class Fd, class Comb>
__device__ A red_fold(i64 n, A zero, Ld ld, Fd fd, Comb comb) {
    const i64 c1 = n <= GK_CHUNK ? 1 : (n + GK_CHUNK - 1) / GK_CHUNK;
    A one = zero, acc2 = zero, acc3 = zero;
    for (i64 j = 0; j < c1; ++j) {
        const i64 e = (j + 1) * GK_CHUNK < n ? (j + 1) * GK_CHUNK : n;
        const A p = red_chunk<U>(j * GK_CHUNK, e, zero, ld, fd, comb);
        one = p;
        // Inside group k = j / CHUNK, partial j sits at position j - k*CHUNK, whose lane
        // is j % 32 (CHUNK is a multiple of 32).
        if (gk_owns(j)) acc2 = comb(acc2, p);
        if (c1 > GK_CHUNK && ((j + 1) % GK_CHUNK == 0 || j + 1 == c1)) {
            const A q = gk_warp_tree(acc2, comb);
            if (gk_owns(j / GK_CHUNK)) acc3 = comb(acc3, q);
            acc2 = zero;
        }
    }
    if (c1 == 1) return one;
    return gk_warp_tree(c1 <= GK_CHUNK ? acc2 : acc3, comb);
}

// combine_partials over part[0..nc] (nc >= 1): the shape with step = combine(acc,
// part[j]) from lanes at zero. (The plans call it for nc >= 2 only; for nc = 1 it would
// give combine(zero, part[0]) through the tree, which for the integer and float
// combines here equals part[0] except -0.0 -> +0.0, so the plans never do.)
template <class A>
__device__ __forceinline__ A red_combine_partials(const A* part, i64 nc) {
    return red_fold<RED_BATCH>(
        nc, A(0), [=](i64 j) { return part[j]; },
        [](A acc, A p) { return GkSum<A>::add(acc, p); },
        [](A x, A y) { return GkSum<A>::add(x, y); });
}

// ---------------------------------------------------------------------------------
// sum: step acc + load(a[i]), combine +, zero 0 (integers wrap).
// ---------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ typename GkSum<T>::A red_sum_chunk(const T* a, i64 s, i64 e) {
    typedef typename GkSum<T>::A A;
    return red_chunk<RED_BATCH>(
        s, e, A(0), [=](i64 i) { return GkSum<T>::load(a[i]); },
        [](A acc, A v) { return GkSum<T>::add(acc, v); },
        [](A x, A y) { return GkSum<T>::add(x, y); });
}

// out[0] = the whole shape over a[0..n], by the first warp of the grid.
template <class T> __device__ __forceinline__ void red_sum(T* out, const T* a, i64 n) {
    typedef typename GkSum<T>::A A;
    if (gk_tid() >= 32) return;
    A s = red_fold<RED_BATCH>(
        n, A(0), [=](i64 i) { return GkSum<T>::load(a[i]); },
        [](A acc, A v) { return GkSum<T>::add(acc, v); },
        [](A x, A y) { return GkSum<T>::add(x, y); });
    if (gk_lane() == 0) out[0] = GkSum<T>::store(s);
}

// part[c] = chunk c's sum, c < ceil(n / CHUNK); a warp per chunk, grid-stride.
template <class T>
__device__ __forceinline__ void red_sum_chunks(typename GkSum<T>::A* part, const T* a, i64 n) {
    const i64 nc = red_nchunks(n);
    for (i64 c = red_warp(); c < nc; c += red_nwarps()) {
        typename GkSum<T>::A p = red_sum_chunk(a, c * GK_CHUNK, red_chunk_end(c, n));
        if (gk_lane() == 0) part[c] = p;
    }
}

// out[0] = store(combine_partials(part[0..nc])), by the first warp of the grid.
template <class T>
__device__ __forceinline__ void red_sum_partials(T* out, const typename GkSum<T>::A* part,
                                                 i64 nc) {
    if (gk_tid() >= 32) return;
    typename GkSum<T>::A s = red_combine_partials(part, nc);
    if (gk_lane() == 0) out[0] = GkSum<T>::store(s);
}

// ---------------------------------------------------------------------------------
// dot: step fma(load(a[i]), load(b[i]), acc), combine +, zero +0.0.
// ---------------------------------------------------------------------------------

template <class R> struct RedPair {
    R a, b;
};

template <class T>
__device__ __forceinline__ typename GkElem<T>::Real red_dot_fold(const T* a, const T* b, i64 s,
                                                                 i64 e, bool whole) {
    typedef typename GkElem<T>::Real R;
    auto ld = [=](i64 i) {
        RedPair<R> p;
        p.a = gk_load(a[i]);
        p.b = gk_load(b[i]);
        return p;
    };
    auto fd = [](R acc, RedPair<R> p) { return gk_fma(p.a, p.b, acc); };
    auto comb = [](R x, R y) { return x + y; };
    return whole ? red_fold<RED_BATCH>(e, R(0), ld, fd, comb)
                 : red_chunk<RED_BATCH>(s, e, R(0), ld, fd, comb);
}

template <class T>
__device__ __forceinline__ void red_dot(T* out, const T* a, const T* b, i64 n) {
    if (gk_tid() >= 32) return;
    typename GkElem<T>::Real s = red_dot_fold(a, b, 0, n, true);
    if (gk_lane() == 0) out[0] = gk_store<T>(s);
}

template <class T>
__device__ __forceinline__ void red_dot_chunks(typename GkElem<T>::Real* part, const T* a,
                                               const T* b, i64 n) {
    const i64 nc = red_nchunks(n);
    for (i64 c = red_warp(); c < nc; c += red_nwarps()) {
        typename GkElem<T>::Real p = red_dot_fold(a, b, c * GK_CHUNK, red_chunk_end(c, n), false);
        if (gk_lane() == 0) part[c] = p;
    }
}

// ---------------------------------------------------------------------------------
// Softmax of one line x[base + j*stride], j < len (len >= 1), by one warp:
//   m = max_nan over the line (order-free), e_j = exp(x_j - m),
//   s = the shape's sum of e_j (j ascending), out_j = store(e_j / s).
// e_j is computed again for the output: the same operations on the same values give
// the same bits.
// ---------------------------------------------------------------------------------

// max_nan over ld(j), j in s..e, by one warp, in every lane. From -inf: max_nan(-inf,
// v) = v for every v, so this is the same value as a fold starting from the first item
// (max_nan is order-free; only a NaN's payload may differ, which the contract ignores).
template <class R, class Ld> __device__ __forceinline__ R red_warp_max(i64 s, i64 e, Ld ld) {
    R m = red_neg_inf<R>();
    for (i64 j = s + gk_lane(); j < e; j += 32) m = gk_max_nan(m, ld(j));
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) m = gk_max_nan(m, __shfl_xor_sync(GK_FULL_MASK, m, w));
    return m;
}

template <class T>
__device__ __forceinline__ void red_softmax_line(T* out, const T* x, i64 base, i64 stride,
                                                 i64 len) {
    typedef typename GkElem<T>::Real R;
    const R m = red_warp_max<R>(0, len, [=](i64 j) { return gk_load(x[base + j * stride]); });
    const R s = red_fold<RED_BATCH_EXP>(
        len, R(0), [=](i64 j) { return gk_load(x[base + j * stride]); },
        [=](R acc, R v) { return acc + gk_exp(v - m); }, [](R p, R q) { return p + q; });
    for (i64 j = gk_lane(); j < len; j += 32) {
        const i64 k = base + j * stride;
        out[k] = gk_store<T>(gk_exp(gk_load(x[k]) - m) / s);
    }
}

// softmax rows: warp per row.
template <class T>
__device__ __forceinline__ void red_softmax(T* out, const T* a, i64 rows, i64 cols) {
    if (cols <= 0) return;
    for (i64 r = red_warp(); r < rows; r += red_nwarps()) red_softmax_line(out, a, r * cols, 1, cols);
}

// softmax_axis: warp per line (o, i), elements at (o*axis + j)*inner + i. inner = 1 is
// the rows kernel exactly.
template <class T>
__device__ __forceinline__ void red_softmax_axis(T* out, const T* x, i64 outer, i64 axis,
                                                 i64 inner) {
    if (axis <= 0 || inner <= 0) return;
    const i64 lines = outer * inner;
    for (i64 t = red_warp(); t < lines; t += red_nwarps()) {
        const i64 o = t / inner, i = t - o * inner;
        red_softmax_line(out, x, o * axis * inner + i, inner, axis);
    }
}

// Long rows (cols > CHUNK; also softmax_axis with inner = 1): three launches, each a
// warp per (row, chunk) pair t = r*nc + c, grid-stride:
//   softmax_pmax:   pmax[t] = max_nan over chunk c of row r;
//   softmax_psum:   m = max_nan over pmax[r*nc ..] (the row's maximum: order-free);
//                   psum[t] = chunk c's shape sum of exp(x_j - m);
//   softmax_pwrite: m as above; s = combine_partials(psum[r*nc ..]) (what the shape
//                   does with nc >= 2 chunk sums); out_j = store(exp(x_j - m) / s) for
//                   the chunk's j.
// The same values as red_softmax_line. pwrite reads and writes only its own chunk's
// elements (out may be exactly x).
template <class T>
__device__ __forceinline__ void red_softmax_pmax(typename GkElem<T>::Real* pmax, const T* x,
                                                 i64 rows, i64 cols) {
    typedef typename GkElem<T>::Real R;
    if (cols <= 0) return;
    const i64 nc = red_nchunks(cols);
    const i64 items = rows * nc;
    for (i64 t = red_warp(); t < items; t += red_nwarps()) {
        const i64 r = t / nc, c = t - r * nc;
        const T* row = x + r * cols;
        const R m = red_warp_max<R>(c * GK_CHUNK, red_chunk_end(c, cols),
                                    [=](i64 j) { return gk_load(row[j]); });
        if (gk_lane() == 0) pmax[t] = m;
    }
}

template <class T>
__device__ __forceinline__ void red_softmax_psum(typename GkElem<T>::Real* psum,
                                                 const typename GkElem<T>::Real* pmax,
                                                 const T* x, i64 rows, i64 cols) {
    typedef typename GkElem<T>::Real R;
    if (cols <= 0) return;
    const i64 nc = red_nchunks(cols);
    const i64 items = rows * nc;
    for (i64 t = red_warp(); t < items; t += red_nwarps()) {
        const i64 r = t / nc, c = t - r * nc;
        const T* row = x + r * cols;
        const R* pm = pmax + r * nc;
        const R m = red_warp_max<R>(0, nc, [=](i64 j) { return pm[j]; });
        const R p = red_chunk<RED_BATCH_EXP>(
            c * GK_CHUNK, red_chunk_end(c, cols), R(0), [=](i64 j) { return gk_load(row[j]); },
            [=](R acc, R v) { return acc + gk_exp(v - m); }, [](R a, R b) { return a + b; });
        if (gk_lane() == 0) psum[t] = p;
    }
}

template <class T>
__device__ __forceinline__ void red_softmax_pwrite(T* out, const typename GkElem<T>::Real* pmax,
                                                   const typename GkElem<T>::Real* psum,
                                                   const T* x, i64 rows, i64 cols) {
    typedef typename GkElem<T>::Real R;
    if (cols <= 0) return;
    const i64 nc = red_nchunks(cols);
    const i64 items = rows * nc;
    for (i64 t = red_warp(); t < items; t += red_nwarps()) {
        const i64 r = t / nc, c = t - r * nc;
        const R* pm = pmax + r * nc;
        const R* ps = psum + r * nc;
        const R m = red_warp_max<R>(0, nc, [=](i64 j) { return pm[j]; });
        const R s = red_fold<RED_BATCH>(
            nc, R(0), [=](i64 j) { return ps[j]; }, [](R acc, R p) { return acc + p; },
            [](R a, R b) { return a + b; });
        const i64 e = red_chunk_end(c, cols);
        for (i64 j = c * GK_CHUNK + gk_lane(); j < e; j += 32) {
            const i64 k = r * cols + j;
            out[k] = gk_store<T>(gk_exp(gk_load(x[k]) - m) / s);
        }
    }
}

// softmax_axis with a thread per line (for inner >= 32: the threads of a warp read
// adjacent lines, coalesced), axis <= GK_CHUNK (one chunk: the plan guarantees it).
// The thread holds the 32 lanes of the shape itself: lane l = acc[l] takes j = l,
// l+32, ... in order, then the same fixed tree.
template <class T>
__device__ __forceinline__ void red_softmax_cols(T* out, const T* x, i64 outer, i64 axis,
                                                 i64 inner) {
    typedef typename GkElem<T>::Real R;
    if (axis <= 0 || inner <= 0 || axis > GK_CHUNK) return;
    const i64 lines = outer * inner;
    for (i64 t = gk_tid(); t < lines; t += gk_nthreads()) {
        const i64 o = t / inner, i = t - o * inner;
        const i64 base = o * axis * inner + i;
        R m = red_neg_inf<R>();
        for (i64 j = 0; j < axis; ++j) m = gk_max_nan(m, gk_load(x[base + j * inner]));
        R acc[GK_LANES];
#pragma unroll
        for (int l = 0; l < GK_LANES; ++l) acc[l] = R(0);
        for (i64 jb = 0; jb < axis; jb += GK_LANES) {
#pragma unroll
            for (int l = 0; l < GK_LANES; ++l) {
                const i64 j = jb + l;
                if (j < axis) acc[l] = acc[l] + gk_exp(gk_load(x[base + j * inner]) - m);
            }
        }
        // The tree, w = 16, 8, 4, 2, 1 written out (constant indices: acc stays in
        // registers).
#pragma unroll
        for (int l = 0; l < 16; ++l) acc[l] = acc[l] + acc[l + 16];
#pragma unroll
        for (int l = 0; l < 8; ++l) acc[l] = acc[l] + acc[l + 8];
#pragma unroll
        for (int l = 0; l < 4; ++l) acc[l] = acc[l] + acc[l + 4];
#pragma unroll
        for (int l = 0; l < 2; ++l) acc[l] = acc[l] + acc[l + 2];
        acc[0] = acc[0] + acc[1];
        const R s = acc[0];
        for (i64 j = 0; j < axis; ++j) {
            const i64 k = base + j * inner;
            out[k] = gk_store<T>(gk_exp(gk_load(x[k]) - m) / s);
        }
    }
}

// ---------------------------------------------------------------------------------
// argmax: the first index of the largest value; floats compare loaded values (±0
// equal), the first NaN wins; integers compare exactly.
// ---------------------------------------------------------------------------------

template <class T> struct RedArg {
    typedef typename GkElem<T>::Real V;
    static __device__ __forceinline__ V load(T x) { return gk_load(x); }
    static __device__ __forceinline__ bool nan(V v) { return gk_isnan(v); }
    static __device__ __forceinline__ V lowest() { return red_neg_inf<V>(); }
};
template <> struct RedArg<i64> {
    typedef i64 V;
    static __device__ __forceinline__ i64 load(i64 x) { return x; }
    static __device__ __forceinline__ bool nan(i64) { return false; }
    static __device__ __forceinline__ i64 lowest() { return (i64)0x8000000000000000ull; }
};
template <> struct RedArg<int> {
    typedef int V;
    static __device__ __forceinline__ int load(int x) { return x; }
    static __device__ __forceinline__ bool nan(int) { return false; }
    static __device__ __forceinline__ int lowest() { return (int)0x80000000u; }
};

#define RED_NO_INDEX 0x7fffffffffffffffLL

// Whether candidate (an, av, ai) beats (bn, bv, bi): a NaN beats a number, then the
// larger value, then (equal values, ±0 included, or both NaN) the smaller index. A
// strict total order on candidates of distinct indices, so any combining order gives
// the one winner; an empty lane (no NaN, lowest, RED_NO_INDEX) loses to every item.
template <class V>
__device__ __forceinline__ bool red_arg_beats(bool an, V av, i64 ai, bool bn, V bv, i64 bi) {
    if (an != bn) return an;
    if (!an) {
        if (av > bv) return true;
        if (bv > av) return false;
    }
    return ai < bi;
}

// Combines the warp's candidates (butterfly: beats is a strict total order, so every
// lane ends with the one winner).
template <class V> __device__ __forceinline__ i64 red_arg_warp(bool bn, V bv, i64 bi) {
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) {
        const bool on = __shfl_xor_sync(GK_FULL_MASK, (int)bn, w) != 0;
        const V ov = __shfl_xor_sync(GK_FULL_MASK, bv, w);
        const i64 oi = __shfl_xor_sync(GK_FULL_MASK, bi, w);
        if (red_arg_beats(on, ov, oi, bn, bv, bi)) {
            bn = on;
            bv = ov;
            bi = oi;
        }
    }
    return bi;
}

// The first index j in s..e (e > s) of the row's largest value (or first NaN), by one
// warp, in every lane. Lane l scans j = s+l, s+l+32, ...: its first NaN, else its first
// largest value. After a step in which some lane met a NaN every later item has a larger
// index than that NaN: the warp stops.
template <class T> __device__ __forceinline__ i64 red_arg_scan(const T* row, i64 s, i64 e) {
    typedef typename RedArg<T>::V V;
    bool bn = false;
    V bv = RedArg<T>::lowest();
    i64 bi = RED_NO_INDEX;
    for (i64 j0 = s; j0 < e; j0 += 32) {
        const i64 j = j0 + gk_lane();
        if (j < e) {
            const V v = RedArg<T>::load(row[j]);
            if (RedArg<T>::nan(v)) {
                bn = true;
                bv = v;
                bi = j;
            } else if (bi == RED_NO_INDEX || v > bv) {
                bv = v;
                bi = j;
            }
        }
        if (__any_sync(GK_FULL_MASK, bn)) break;
    }
    return red_arg_warp(bn, bv, bi);
}

// Rows of up to any length, a warp per row.
template <class T>
__device__ __forceinline__ void red_argmax(i64* out, const T* x, i64 rows, i64 n) {
    if (n <= 0) return;
    for (i64 r = red_warp(); r < rows; r += red_nwarps()) {
        const i64 bi = red_arg_scan(x + r * n, 0, n);
        if (gk_lane() == 0) out[r] = bi;
    }
}

// Long rows (n > CHUNK), step 1: part[t] = the winner of chunk c of row r (t = r*nc + c),
// a warp per pair.
template <class T>
__device__ __forceinline__ void red_argmax_chunks(i64* part, const T* x, i64 rows, i64 n) {
    if (n <= 0) return;
    const i64 nc = red_nchunks(n);
    const i64 items = rows * nc;
    for (i64 t = red_warp(); t < items; t += red_nwarps()) {
        const i64 r = t / nc, c = t - r * nc;
        const i64 bi = red_arg_scan(x + r * n, c * GK_CHUNK, red_chunk_end(c, n));
        if (gk_lane() == 0) part[t] = bi;
    }
}

// Step 2: out[r] = the winner among the row's chunk winners (their values read again
// from x), a warp per row. The overall first NaN is the first NaN of the first chunk
// holding one; else the first maximum is the first maximum of the first chunk holding
// the largest value: both are what beats picks.
template <class T>
__device__ __forceinline__ void red_argmax_finish(i64* out, const i64* part, const T* x,
                                                  i64 rows, i64 n) {
    typedef typename RedArg<T>::V V;
    if (n <= 0) return;
    const i64 nc = red_nchunks(n);
    for (i64 r = red_warp(); r < rows; r += red_nwarps()) {
        const T* row = x + r * n;
        const i64* pc = part + r * nc;
        bool bn = false;
        V bv = RedArg<T>::lowest();
        i64 bi = RED_NO_INDEX;
        for (i64 k = gk_lane(); k < nc; k += 32) {
            const i64 j = pc[k];
            const V v = RedArg<T>::load(row[j]);
            const bool jn = RedArg<T>::nan(v);
            if (red_arg_beats(jn, v, j, bn, bv, bi)) {
                bn = jn;
                bv = v;
                bi = j;
            }
        }
        bi = red_arg_warp(bn, bv, bi);
        if (gk_lane() == 0) out[r] = bi;
    }
}

// ---------------------------------------------------------------------------------
// reduce_l2: out[r] = store(sqrt(fold(fma(x_j, x_j, acc)))), lanes from +0.0,
// combine +; n = 0 gives sqrt(+0) = +0.
// ---------------------------------------------------------------------------------

template <class T>
__device__ __forceinline__ void red_reduce_l2(T* out, const T* x, i64 rows, i64 n) {
    typedef typename GkElem<T>::Real R;
    for (i64 r = red_warp(); r < rows; r += red_nwarps()) {
        const T* row = x + r * n;
        const R ss = red_fold<RED_BATCH>(
            n, R(0), [=](i64 j) { return gk_load(row[j]); },
            [](R acc, R v) { return gk_fma(v, v, acc); }, [](R p, R q) { return p + q; });
        if (gk_lane() == 0) out[r] = gk_store<T>(red_sqrt(ss));
    }
}

// Long rows (n > CHUNK), step 1: part[t] = chunk c's sum of squares of row r
// (t = r*nc + c), a warp per pair.
template <class T>
__device__ __forceinline__ void red_reduce_l2_chunks(typename GkElem<T>::Real* part,
                                                     const T* x, i64 rows, i64 n) {
    typedef typename GkElem<T>::Real R;
    if (n <= 0) return;
    const i64 nc = red_nchunks(n);
    const i64 items = rows * nc;
    for (i64 t = red_warp(); t < items; t += red_nwarps()) {
        const i64 r = t / nc, c = t - r * nc;
        const T* row = x + r * n;
        const R p = red_chunk<RED_BATCH>(
            c * GK_CHUNK, red_chunk_end(c, n), R(0), [=](i64 j) { return gk_load(row[j]); },
            [](R acc, R v) { return gk_fma(v, v, acc); }, [](R a, R b) { return a + b; });
        if (gk_lane() == 0) part[t] = p;
    }
}

// Step 2: out[r] = store(sqrt(combine_partials(part[r*nc ..]))), a warp per row.
template <class T>
__device__ __forceinline__ void red_reduce_l2_finish(T* out, const typename GkElem<T>::Real* part,
                                                     i64 rows, i64 n) {
    typedef typename GkElem<T>::Real R;
    if (n <= 0) return;
    const i64 nc = red_nchunks(n);
    for (i64 r = red_warp(); r < rows; r += red_nwarps()) {
        const R* pr = part + r * nc;
        const R ss = red_fold<RED_BATCH>(
            nc, R(0), [=](i64 j) { return pr[j]; }, [](R acc, R p) { return acc + p; },
            [](R a, R b) { return a + b; });
        if (gk_lane() == 0) out[r] = gk_store<T>(red_sqrt(ss));
    }
}

// ---------------------------------------------------------------------------------
// Entries (names from table.cuh).
// ---------------------------------------------------------------------------------

#define RED_SUM(op, sfx, T)                                                                    \
    extern "C" __global__ void __launch_bounds__(32, 1) op##_##sfx(T* out, const T* a, i64 n) {   \
        red_sum<T>(out, a, n);                                                                 \
    }
GK_FOR_sum(RED_SUM)

#define RED_SUM_CHUNKS(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(GkSum<T>::A* __restrict__ part, const T* __restrict__ a, i64 n) {          \
        red_sum_chunks<T>(part, a, n);                                                         \
    }
GK_FOR_sum_chunks(RED_SUM_CHUNKS)

#define RED_SUM_PARTIALS(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(32, 1)                                           \
        op##_##sfx(T* __restrict__ out, const GkSum<T>::A* __restrict__ part, i64 nc) {       \
        red_sum_partials<T>(out, part, nc);                                                    \
    }
GK_FOR_sum_partials(RED_SUM_PARTIALS)

#define RED_DOT(op, sfx, T)                                                                    \
    extern "C" __global__ void __launch_bounds__(32, 1)                                           \
        op##_##sfx(T* out, const T* a, const T* b, i64 n) {                                    \
        red_dot<T>(out, a, b, n);                                                              \
    }
GK_FOR_dot(RED_DOT)

#define RED_DOT_CHUNKS(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(GkElem<T>::Real* __restrict__ part, const T* __restrict__ a,                \
                   const T* __restrict__ b, i64 n) {                                           \
        red_dot_chunks<T>(part, a, b, n);                                                      \
    }
GK_FOR_dot_chunks(RED_DOT_CHUNKS)

#define RED_SOFTMAX(op, sfx, T)                                                                \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(T* out, const T* a, i64 rows, i64 cols) {                                   \
        red_softmax<T>(out, a, rows, cols);                                                    \
    }
GK_FOR_softmax(RED_SOFTMAX)

#define RED_SOFTMAX_AXIS(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(T* out, const T* x, i64 outer, i64 axis, i64 inner) {                       \
        red_softmax_axis<T>(out, x, outer, axis, inner);                                       \
    }
GK_FOR_softmax_axis(RED_SOFTMAX_AXIS)

#define RED_SOFTMAX_COLS(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(T* out, const T* x, i64 outer, i64 axis, i64 inner) {                       \
        red_softmax_cols<T>(out, x, outer, axis, inner);                                       \
    }
GK_FOR_softmax_cols(RED_SOFTMAX_COLS)

#define RED_ARGMAX(op, sfx, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(i64* __restrict__ out, const T* __restrict__ x, i64 rows, i64 n) {          \
        red_argmax<T>(out, x, rows, n);                                                        \
    }
GK_FOR_argmax(RED_ARGMAX)

#define RED_REDUCE_L2(op, sfx, T)                                                              \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                    \
        op##_##sfx(T* __restrict__ out, const T* __restrict__ x, i64 rows, i64 n) {            \
        red_reduce_l2<T>(out, x, rows, n);                                                     \
    }
GK_FOR_reduce_l2(RED_REDUCE_L2)

#define RED_SOFTMAX_PMAX(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(GkElem<T>::Real* __restrict__ pmax, const T* __restrict__ x, i64 rows,      \
                   i64 cols) {                                                                 \
        red_softmax_pmax<T>(pmax, x, rows, cols);                                              \
    }
GK_FOR_softmax_pmax(RED_SOFTMAX_PMAX)

#define RED_SOFTMAX_PSUM(op, sfx, T)                                                           \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(GkElem<T>::Real* __restrict__ psum, const GkElem<T>::Real* __restrict__ pmax, \
                   const T* __restrict__ x, i64 rows, i64 cols) {                              \
        red_softmax_psum<T>(psum, pmax, x, rows, cols);                                        \
    }
GK_FOR_softmax_psum(RED_SOFTMAX_PSUM)

#define RED_SOFTMAX_PWRITE(op, sfx, T)                                                         \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(T* out, const GkElem<T>::Real* __restrict__ pmax,                           \
                   const GkElem<T>::Real* __restrict__ psum, const T* x, i64 rows, i64 cols) { \
        red_softmax_pwrite<T>(out, pmax, psum, x, rows, cols);                                 \
    }
GK_FOR_softmax_pwrite(RED_SOFTMAX_PWRITE)

#define RED_ARGMAX_CHUNKS(op, sfx, T)                                                          \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(i64* __restrict__ part, const T* __restrict__ x, i64 rows, i64 n) {         \
        red_argmax_chunks<T>(part, x, rows, n);                                                \
    }
GK_FOR_argmax_chunks(RED_ARGMAX_CHUNKS)

#define RED_ARGMAX_FINISH(op, sfx, T)                                                          \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(i64* __restrict__ out, const i64* __restrict__ part,                        \
                   const T* __restrict__ x, i64 rows, i64 n) {                                 \
        red_argmax_finish<T>(out, part, x, rows, n);                                           \
    }
GK_FOR_argmax_finish(RED_ARGMAX_FINISH)

#define RED_REDUCE_L2_CHUNKS(op, sfx, T)                                                       \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(GkElem<T>::Real* __restrict__ part, const T* __restrict__ x, i64 rows,      \
                   i64 n) {                                                                    \
        red_reduce_l2_chunks<T>(part, x, rows, n);                                             \
    }
GK_FOR_reduce_l2_chunks(RED_REDUCE_L2_CHUNKS)

#define RED_REDUCE_L2_FINISH(op, sfx, T)                                                       \
    extern "C" __global__ void __launch_bounds__(RED_BLOCK, 1)                                 \
        op##_##sfx(T* __restrict__ out, const GkElem<T>::Real* __restrict__ part, i64 rows,    \
                   i64 n) {                                                                    \
        red_reduce_l2_finish<T>(out, part, rows, n);                                           \
    }
GK_FOR_reduce_l2_finish(RED_REDUCE_L2_FINISH)
