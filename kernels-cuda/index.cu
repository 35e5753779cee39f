// index.cu: gather, scatter and the index check along an axis
// (crates/gpukit-cpu/src/kernels/index.rs, the oracle's gather / scatter).
//
//   gather_{dtype}        out[o, g, i] = data[o, idx[g], i]
//   scatter_{dtype}       y[o, idx[g], i] = upd[o, g, i], g ascending per (o, i) column
//   scatter_win_{dtype}   the same, parallel over (o, g, i), for the rows win[] names
//   scatter_fill_i64      win[r] = -1                      (scatter's winner table)
//   scatter_mark_i64      win[r] = max g with idx[g] -> r  (integer atomicMax)
//   check_index_i64       per block: the first bad position of its share, or -1
//   check_index_fold_i64  result[0] = min over the per-block partials
//
// Pure data movement: values are moved as raw bits (unsigned integers of the element's
// width), so NaN payloads and -0.0 survive on every dtype. Indices were checked by
// check_index before gather / scatter run; negative ones count from the end
// (gpukit_core::numeric::resolve_index). All index arithmetic is 64-bit. Grid-stride
// loops: consecutive threads handle consecutive output elements (coalesced), and the
// per-element coordinates advance by the grid's stride with carries instead of a
// division per element.
#include "gpukit.cuh"

#define IX_BLOCK 256


// resolve_index for an index already known to be in [-len, len).
__device__ __forceinline__ i64 ix_resolve(i64 v, i64 len) { return v < 0 ? v + len : v; }


// ---------------------------------------------------------------------------------
// gather: out [outer, nidx, inner], one thread per output element.
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void ix_gather(B* __restrict__ out, const B* __restrict__ data,
                                          const i64* __restrict__ idx, i64 outer, i64 axis_len,
                                          i64 inner, i64 nidx) {
    const i64 n = outer * nidx * inner;
    i64 e = gk_tid();
    if (e >= n) return;  // also n <= 0: nothing below divides by a zero extent
    const i64 step = gk_nthreads();
    const gk_u64 nb = (gk_u64)nidx, nc = (gk_u64)inner;
    GkPos3 p = gk_split3((gk_u64)e, nb, nc);  // (o, g, i)
    const GkPos3 s = gk_split3((gk_u64)step, nb, nc);
    for (;;) {
        const i64 r = ix_resolve(__ldg(idx + p.b), axis_len);
        out[e] = data[((i64)p.a * axis_len + r) * inner + (i64)p.c];
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, nb, nc);
    }
}

// ---------------------------------------------------------------------------------
// scatter, column form: one thread owns each (o, i) column and writes it for
// g = 0..nidx ascending, exactly the CPU kernel's order, so with duplicate indices the
// largest g's value is the one left (columns are disjoint across threads).
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void ix_scatter_cols(B* __restrict__ y, const i64* __restrict__ idx,
                                                const B* __restrict__ upd, i64 outer,
                                                i64 axis_len, i64 inner, i64 nidx) {
    const i64 cols = outer * inner;
    i64 col = gk_tid();
    if (col >= cols) return;
    const i64 step = gk_nthreads();
    const gk_u64 nc = (gk_u64)inner;
    GkPos3 p = gk_split3((gk_u64)col, 1, nc);  // (o, 0, i)
    const GkPos3 s = gk_split3((gk_u64)step, 1, nc);
    for (;;) {
        B* yc = y + (i64)p.a * axis_len * inner + (i64)p.c;
        const B* uc = upd + (i64)p.a * nidx * inner + (i64)p.c;
        for (i64 g = 0; g < nidx; ++g) {
            const i64 r = ix_resolve(__ldg(idx + g), axis_len);
            yc[r * inner] = uc[g * inner];
        }
        col += step;
        if (col >= cols) break;
        gk_advance3(p, s, 1, nc);
    }
}

// ---------------------------------------------------------------------------------
// scatter, winner form (launched when there are few columns and many indices): the
// same result without a serial loop over g. win[r] = the largest g whose index
// resolves to row r (-1: none), built with an integer atomicMax (max is order-
// independent, so the table is deterministic); then every (o, g, i) with
// win[idx[g]] == g writes its value, and no two writers share a destination.
// ---------------------------------------------------------------------------------

__device__ __forceinline__ void ix_scatter_fill(i64* __restrict__ win, i64 axis_len) {
    for (i64 r = gk_tid(); r < axis_len; r += gk_nthreads()) win[r] = -1;
}

__device__ __forceinline__ void ix_scatter_mark(i64* __restrict__ win, const i64* __restrict__ idx,
                                                i64 nidx, i64 axis_len) {
    for (i64 g = gk_tid(); g < nidx; g += gk_nthreads()) {
        const i64 r = ix_resolve(__ldg(idx + g), axis_len);
        atomicMax((long long*)(win + r), (long long)g);
    }
}

template <class B>
__device__ __forceinline__ void ix_scatter_win(B* __restrict__ y, const i64* __restrict__ idx,
                                               const B* __restrict__ upd, i64 outer,
                                               i64 axis_len, i64 inner, i64 nidx,
                                               const i64* __restrict__ win) {
    const i64 n = outer * nidx * inner;
    i64 e = gk_tid();
    if (e >= n) return;
    const i64 step = gk_nthreads();
    const gk_u64 nb = (gk_u64)nidx, nc = (gk_u64)inner;
    GkPos3 p = gk_split3((gk_u64)e, nb, nc);  // (o, g, i)
    const GkPos3 s = gk_split3((gk_u64)step, nb, nc);
    for (;;) {
        const i64 r = ix_resolve(__ldg(idx + p.b), axis_len);
        if (__ldg(win + r) == (i64)p.b) y[((i64)p.a * axis_len + r) * inner + (i64)p.c] = upd[e];
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, nb, nc);
    }
}

// ---------------------------------------------------------------------------------
// check_index: the first position p < n with idx[p] outside [-axis_len, axis_len)
// (exactly where resolve_index gives None), or -1. Positions are compared as unsigned,
// where -1 is the largest value, so "the first bad position or -1" is a plain minimum:
// each thread stops at its own first bad position (its grid-stride positions ascend),
// the block takes the minimum (order-independent: deterministic), thread 0 writes it
// to result[blockIdx.x]. One block: that is the answer; more: check_index_fold takes
// the minimum of the per-block partials. No atomics.
// ---------------------------------------------------------------------------------

// Minimum over the block; every thread of the block must call it. Returns the result
// in thread 0.
__device__ __forceinline__ gk_u64 ix_block_min(gk_u64 v) {
    __shared__ gk_u64 part[IX_BLOCK / 32];
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) {
        const gk_u64 o = __shfl_down_sync(GK_FULL_MASK, v, w);
        v = o < v ? o : v;
    }
    const int warp = (int)(threadIdx.x >> 5), nwarps = (int)((blockDim.x + 31) >> 5);
    if (gk_lane() == 0) part[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < nwarps; ++w) v = part[w] < v ? part[w] : v;
    }
    return v;
}

__device__ __forceinline__ void ix_check_index(const i64* __restrict__ idx, i64 n, i64 axis_len,
                                               i64* __restrict__ result) {
    gk_u64 first = ~0ULL;
    for (i64 p = gk_tid(); p < n; p += gk_nthreads()) {
        const i64 v = __ldg(idx + p);
        if (v >= axis_len || v < -axis_len) {
            first = (gk_u64)p;
            break;
        }
    }
    first = ix_block_min(first);
    if (threadIdx.x == 0) result[blockIdx.x] = (i64)first;
}

__device__ __forceinline__ void ix_check_index_fold(i64* __restrict__ result,
                                                    const i64* __restrict__ parts, i64 nparts) {
    gk_u64 m = ~0ULL;
    for (i64 j = threadIdx.x; j < nparts; j += blockDim.x) {
        const gk_u64 v = (gk_u64)parts[j];
        m = v < m ? v : m;
    }
    m = ix_block_min(m);
    if (threadIdx.x == 0) result[0] = (i64)m;
}

// ---------------------------------------------------------------------------------
// Entries.
// ---------------------------------------------------------------------------------

#define IX_GATHER(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(T* out, const T* data, const i64* idx, i64 outer, i64 axis_len, i64 inner,  \
                   i64 nidx) {                                                                 \
        typedef GkBits<T>::B B;                                                                \
        ix_gather<B>((B*)out, (const B*)data, idx, outer, axis_len, inner, nidx);              \
    }
GK_FOR_gather(IX_GATHER)

#define IX_SCATTER(op, sfx, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(T* y, const i64* idx, const T* upd, i64 outer, i64 axis_len, i64 inner,     \
                   i64 nidx) {                                                                 \
        typedef GkBits<T>::B B;                                                                \
        ix_scatter_cols<B>((B*)y, idx, (const B*)upd, outer, axis_len, inner, nidx);           \
    }
GK_FOR_scatter(IX_SCATTER)

// Aux: the scatter ABI arguments, then the winner table (axis_len i64s of scratch).
#define IX_SCATTER_WIN(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(T* y, const i64* idx, const T* upd, i64 outer, i64 axis_len, i64 inner,     \
                   i64 nidx, const i64* win) {                                                 \
        typedef GkBits<T>::B B;                                                                \
        ix_scatter_win<B>((B*)y, idx, (const B*)upd, outer, axis_len, inner, nidx, win);       \
    }
GK_FOR_scatter_win(IX_SCATTER_WIN)

// Aux (i64 only): win[0..axis_len) = -1.
#define IX_SCATTER_FILL(op, sfx, T)                                                            \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK) op##_##sfx(i64* win, i64 axis_len) { \
        ix_scatter_fill(win, axis_len);                                                        \
    }
GK_FOR_scatter_fill(IX_SCATTER_FILL)

// Aux (i64 only): win[resolve(idx[g])] = max(.., g) for g < nidx.
#define IX_SCATTER_MARK(op, sfx, T)                                                            \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(i64* win, const i64* idx, i64 nidx, i64 axis_len) {                         \
        ix_scatter_mark(win, idx, nidx, axis_len);                                             \
    }
GK_FOR_scatter_mark(IX_SCATTER_MARK)

#define IX_CHECK_INDEX(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(const i64* idx, i64 n, i64 axis_len, i64* result) {                         \
        ix_check_index(idx, n, axis_len, result);                                              \
    }
GK_FOR_check_index(IX_CHECK_INDEX)

// Aux: result[0] = min over parts[0..nparts) (as unsigned: -1 = none); one block.
#define IX_CHECK_INDEX_FOLD(op, sfx, T)                                                        \
    extern "C" __global__ void __launch_bounds__(IX_BLOCK)                                     \
        op##_##sfx(i64* result, const i64* parts, i64 nparts) {                                \
        ix_check_index_fold(result, parts, nparts);                                            \
    }
GK_FOR_check_index_fold(IX_CHECK_INDEX_FOLD)
