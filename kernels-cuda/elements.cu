// elements.cu: element-wise gather and scatter along an axis (ONNX GatherElements,
// ScatterElements; gpukit_core::abi::elements, crates/gpukit-cpu/src/kernels/elements.rs,
// the oracle's gather_elements / scatter_elements).
//
//   gather_elements_{dtype}   out[o, g, i] = data[o, idx[o, g, i], i]
//   scatter_elements_{dtype}  y[o, idx[o, g, i], i] = combine(red, y[..], upd[o, g, i]),
//                             g ascending per (o, i) column
//   pad_{dtype}               ONNX Pad (constant, reflect, edge, wrap; crop first)
//   cumsum_{dtype}            ONNX CumSum: the running sum along each line, in order
//   cumsum_rows_{dtype}       the same for contiguous lines (inner = 1), through shared
//                             memory tiles so every access is coalesced
//   topk_{dtype}              ONNX TopK (sorted): each element written at its rank, if below k
//
// Indices were checked in range by check_index before these run; negative ones count
// from the end. gather copies raw bits (NaN payloads and -0.0 survive). scatter: one
// thread owns each (o, i) column and applies that column's updates in ascending g, the
// row-major order of upd restricted to the column; two updates can only meet in the
// same column, so the result is the sequential definition's, with no atomics.
// combine is gpukit_core::elements::ScatterElem::combine: none = the update; add / mul
// load, one IEEE op in the compute type, store (integers wrap); max / min are
// gk_max_nan / gk_min_nan (NaN wins, max(-0, +0) = +0, min = -0), plain on integers.
#include "gpukit.cuh"

#define EL_BLOCK 256

__device__ __forceinline__ i64 el_resolve(i64 v, i64 len) { return v < 0 ? v + len : v; }

// ---------------------------------------------------------------------------------
// gather_elements: one thread per output element (grid-stride).
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void el_gather(B* __restrict__ out, const B* __restrict__ data,
                                          const i64* __restrict__ idx, i64 outer, i64 axis_len,
                                          i64 inner, i64 nidx) {
    const i64 n = outer * nidx * inner;
    i64 e = gk_tid();
    if (e >= n) return;
    const i64 step = gk_nthreads();
    const gk_u64 nb = (gk_u64)nidx, nc = (gk_u64)inner;
    GkPos3 p = gk_split3((gk_u64)e, nb, nc);  // (o, g, i)
    const GkPos3 s = gk_split3((gk_u64)step, nb, nc);
    for (;;) {
        const i64 r = el_resolve(__ldg(idx + e), axis_len);
        out[e] = data[((i64)p.a * axis_len + r) * inner + (i64)p.c];
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, nb, nc);
    }
}

// ---------------------------------------------------------------------------------
// scatter_elements: the reduction rule per storage type, then the column loop.
// ---------------------------------------------------------------------------------

// The reduction is a template parameter: the entry switches once, outside the loops,
// so each instantiation's inner loop holds one operation (and no register spills).
template <class T, int RED> struct ElComb {
    static __device__ __forceinline__ T f(T y, T u) {
        typedef typename GkElem<T>::Real R;
        if (RED == 0) return u;
        const R a = gk_load(y), b = gk_load(u);
        if (RED == 1) return gk_store<T>(a + b);
        if (RED == 2) return gk_store<T>(a * b);
        if (RED == 3) return gk_store<T>(gk_max_nan(a, b));
        return gk_store<T>(gk_min_nan(a, b));
    }
};
template <int RED> struct ElCombInt {
    template <class I> static __device__ __forceinline__ I f(I y, I u) {
        if (RED == 0) return u;
        if (RED == 1) return gk_wadd(y, u);
        if (RED == 2) return gk_wmul(y, u);
        if (RED == 3) return y > u ? y : u;
        return y < u ? y : u;
    }
};
template <int RED> struct ElComb<i64, RED> {
    static __device__ __forceinline__ i64 f(i64 y, i64 u) { return ElCombInt<RED>::f(y, u); }
};
template <int RED> struct ElComb<int, RED> {
    static __device__ __forceinline__ int f(int y, int u) { return ElCombInt<RED>::f(y, u); }
};

template <class T, int RED>
__device__ __forceinline__ void el_scatter(T* __restrict__ y, const i64* __restrict__ idx,
                                           const T* __restrict__ upd, i64 outer, i64 axis_len,
                                           i64 inner, i64 nidx) {
    const i64 cols = outer * inner;
    i64 col = gk_tid();
    if (col >= cols) return;
    const i64 step = gk_nthreads();
    const gk_u64 nc = (gk_u64)inner;
    GkPos3 p = gk_split3((gk_u64)col, 1, nc);  // (o, 0, i)
    const GkPos3 s = gk_split3((gk_u64)step, 1, nc);
    for (;;) {
        T* yc = y + (i64)p.a * axis_len * inner + (i64)p.c;
        const i64 base = (i64)p.a * nidx * inner + (i64)p.c;
        for (i64 g = 0; g < nidx; ++g) {
            const i64 e = base + g * inner;
            const i64 r = el_resolve(__ldg(idx + e), axis_len);
            yc[r * inner] = ElComb<T, RED>::f(yc[r * inner], upd[e]);
        }
        col += step;
        if (col >= cols) break;
        gk_advance3(p, s, 1, nc);
    }
}

template <class T>
__device__ __forceinline__ void el_scatter_any(T* y, const i64* idx, const T* upd, i64 outer,
                                               i64 axis_len, i64 inner, i64 nidx, i64 red) {
    switch (red) {
        case 1: el_scatter<T, 1>(y, idx, upd, outer, axis_len, inner, nidx); break;
        case 2: el_scatter<T, 2>(y, idx, upd, outer, axis_len, inner, nidx); break;
        case 3: el_scatter<T, 3>(y, idx, upd, outer, axis_len, inner, nidx); break;
        case 4: el_scatter<T, 4>(y, idx, upd, outer, axis_len, inner, nidx); break;
        default: el_scatter<T, 0>(y, idx, upd, outer, axis_len, inner, nidx); break;
    }
}

// ---------------------------------------------------------------------------------
// Entries.
// ---------------------------------------------------------------------------------

#define EL_GATHER(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK)                                     \
        op##_##sfx(T* out, const T* data, const i64* idx, i64 outer, i64 axis_len, i64 inner,  \
                   i64 nidx) {                                                                 \
        typedef GkBits<T>::B B;                                                                \
        el_gather<B>((B*)out, (const B*)data, idx, outer, axis_len, inner, nidx);              \
    }
GK_FOR_gather_elements(EL_GATHER)

#define EL_SCATTER(op, sfx, T)                                                                 \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK)                                     \
        op##_##sfx(T* y, const i64* idx, const T* upd, i64 outer, i64 axis_len, i64 inner,     \
                   i64 nidx, i64 reduction) {                                                  \
        el_scatter_any<T>(y, idx, upd, outer, axis_len, inner, nidx, reduction);               \
    }
GK_FOR_scatter_elements(EL_SCATTER)

// ---------------------------------------------------------------------------------
// pad (ONNX Pad): one thread per output element; per axis, from the last, the output
// coordinate c maps to t = c - before in the cropped input, then by mode
// (gpukit_core::pad::PadMode::source): constant reads the value outside [0, len),
// edge clamps, reflect folds with period 2 (len - 1) (len 1: 0), wrap takes t mod len.
// Bits are copied (raw unsigned integers of the element's width).
// layout = [out | in | start | len | before], ndim entries each.
// ---------------------------------------------------------------------------------

__device__ __forceinline__ i64 el_rem(i64 a, i64 m) {
    const i64 r = a % m;
    return r < 0 ? r + m : r;
}

// The cropped-input coordinate, or -1 for the constant value.
__device__ __forceinline__ i64 el_pad_source(i64 t, i64 len, i64 mode) {
    if (t >= 0 && t < len) return t;
    switch (mode) {
        case 2: return t < 0 ? 0 : len - 1;
        case 3: return el_rem(t, len);
        case 1: {
            if (len == 1) return 0;
            const i64 p = 2 * (len - 1);
            const i64 m = el_rem(t, p);
            return m < len ? m : p - m;
        }
        default: return -1;
    }
}

// I: the type of the output coordinate arithmetic. Below 2^31 outputs every coordinate
// and extent fits in 32 bits, and on the GPU a 32-bit division per axis costs a
// fraction of a 64-bit one (a long instruction sequence; the emulator counts either as
// one PTX instruction); the input offset stays 64-bit either way.
template <class B, class I>
__device__ __forceinline__ void el_pad(B* __restrict__ out, const B* __restrict__ x,
                                       const B* __restrict__ value,
                                       const i64* __restrict__ layout, i64 ndim, i64 mode,
                                       i64 n_out) {
    const i64* od = layout;
    const i64* id = layout + ndim;
    const i64* st = layout + 2 * ndim;
    const i64* ln = layout + 3 * ndim;
    const i64* bf = layout + 4 * ndim;
    for (i64 e = gk_tid(); e < n_out; e += gk_nthreads()) {
        I rem = (I)e;
        i64 off = 0, stride = 1;
        bool inside = true;
        for (i64 d = ndim - 1; d >= 0; --d) {
            const I len_o = (I)__ldg(od + d);
            const I c = rem % len_o;
            rem /= len_o;
            const i64 p = el_pad_source((i64)c - __ldg(bf + d), __ldg(ln + d), mode);
            if (p < 0) {
                inside = false;
                break;
            }
            off += (__ldg(st + d) + p) * stride;
            stride *= __ldg(id + d);
        }
        out[e] = inside ? x[off] : value[0];
    }
}

#define EL_PAD(op, sfx, T)                                                                     \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK)                                     \
        op##_##sfx(T* out, const T* x, const T* value, const i64* layout, i64 ndim, i64 mode,  \
                   i64 n_out) {                                                                \
        typedef GkBits<T>::B B;                                                                \
        if (n_out <= 0x7fffffffLL)                                                             \
            el_pad<B, unsigned>((B*)out, (const B*)x, (const B*)value, layout, ndim, mode,     \
                                n_out);                                                        \
        else                                                                                   \
            el_pad<B, gk_u64>((B*)out, (const B*)x, (const B*)value, layout, ndim, mode,       \
                              n_out);                                                          \
    }
GK_FOR_pad(EL_PAD)

// ---------------------------------------------------------------------------------
// cumsum: one thread per (o, i) line of [outer, len, inner], grid-stride; the line's
// chain runs in ascending position (descending when reverse), as the contract fixes it:
// no parallel scan (that would regroup the additions). Neighbouring threads take
// neighbouring columns i, so the loads and stores of a warp are contiguous when
// inner >= 32.
// ---------------------------------------------------------------------------------

// The exclusive flag is a template parameter (the entry switches once, outside the
// loops), and the line's digits advance with carries instead of a 64-bit division per
// line (ptxas spilled around the division's call otherwise).
template <class T, bool EXCL>
__device__ __forceinline__ void el_cumsum(T* __restrict__ y, const T* __restrict__ x, i64 outer,
                                          i64 len, i64 inner, i64 reverse) {
    typedef GkSum<T> S;  // gpukit.cuh: load / add / store of a sum
    const i64 lines = len > 0 ? outer * inner : 0;
    i64 l = gk_tid();
    if (l >= lines) return;
    const i64 nthreads = gk_nthreads();
    const T zero = S::store((typename S::A)0);
    const i64 step = reverse ? -inner : inner;
    GkPos3 p = gk_split3((gk_u64)l, 1, (gk_u64)inner);  // (o, 0, i)
    const GkPos3 s = gk_split3((gk_u64)nthreads, 1, (gk_u64)inner);
    for (;;) {
        // Position q of line (o, i) is (o*len + q)*inner + i; reverse starts at len-1.
        i64 e = ((i64)p.a * len + (reverse ? len - 1 : 0)) * inner + (i64)p.c;
        typename S::A acc = S::load(x[e]);
        y[e] = EXCL ? zero : S::store(acc);
#pragma unroll 1
        for (i64 k = 1; k < len; ++k) {
            e += step;
            const T v = x[e];
            if (EXCL) {
                y[e] = S::store(acc);
                acc = S::add(acc, S::load(v));
            } else {
                acc = S::add(acc, S::load(v));
                y[e] = S::store(acc);
            }
        }
        l += nthreads;
        if (l >= lines) break;
        gk_advance3(p, s, 1, (gk_u64)inner);
    }
}

// cumsum_rows: the lines are contiguous (inner = 1), so one thread per line would make
// each warp access touch 32 lines, one element of each (32 sectors per request). Here a
// warp owns 32 lines (groups of 32, grid-stride over warps) and walks them in tiles of
// TQ positions through shared memory: loads and stores move whole line segments (TQ
// consecutive elements per row, 32/TQ rows per instruction), and in between lane r runs
// line r's chain over the tile's positions in the line's order, exactly the operations
// of el_cumsum. TQ is 32 for elements of up to 4 bytes (rows padded to 33: every phase
// conflict-free) and 16 for 8-byte elements (padded to 17; 34.8 KiB per block).
// The tile is declared once in the entry (both chain variants share it).
template <class T> struct ElCumTile {
    enum { TQ = sizeof(T) == 8 ? 16 : 32 };  // positions per tile
    typedef T Row[TQ + 1];
};

template <class T, bool EXCL>
__device__ __forceinline__ void el_cumsum_rows(T* __restrict__ y, const T* __restrict__ x,
                                               i64 lines, i64 len, i64 reverse,
                                               typename ElCumTile<T>::Row* t) {
    typedef GkSum<T> S;
    enum { TQ = ElCumTile<T>::TQ, RPI = 32 / TQ };  // rows per load instruction
    const i64 groups = len > 0 ? (lines + 31) / 32 : 0;
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane(), lr = lane / TQ, lc = lane % TQ;
    const i64 nchunks = (len + TQ - 1) / TQ;
    const T zero = S::store((typename S::A)0);
    // Warp-uniform loop: every lane of a warp takes the same group and chunk.
    for (i64 g = gk_tid() >> 5; g < groups; g += nwarps) {
        const i64 line0 = g * 32;
        const bool mine = line0 + lane < lines;
        typename S::A acc = (typename S::A)0;
        for (i64 c = 0; c < nchunks; ++c) {
            // Positions [lo, hi) of the line this chunk covers, in the line's order.
            i64 lo, hi;
            if (reverse) {
                hi = len - c * TQ;
                lo = hi > TQ ? hi - TQ : 0;
            } else {
                lo = c * TQ;
                hi = lo + TQ < len ? lo + TQ : len;
            }
            const int w = (int)(hi - lo);
            // Row r's element lo + lc; rows advance by RPI lines. A full tile (32 lines,
            // TQ positions) needs no guard.
            const i64 at = (line0 + lr) * len + lo + lc, rstep = (i64)RPI * len;
            const bool full = line0 + 32 <= lines && w == TQ;
            {
                const T* p = x + at;
                if (full) {
#pragma unroll 8
                    for (int r = lr; r < 32; r += RPI, p += rstep) t[r][lc] = *p;
                } else {
                    for (int r = lr; r < 32; r += RPI, p += rstep)
                        if (line0 + r < lines && lc < w) t[r][lc] = *p;
                }
            }
            __syncwarp();
            if (mine) {
                int j = 0;
                if (c == 0) {  // the line's first position: acc = its value
                    const int q = reverse ? w - 1 : 0;
                    const typename S::A v = S::load(t[lane][q]);
                    t[lane][q] = EXCL ? zero : S::store(v);
                    acc = v;
                    j = 1;
                }
                // One step of the chain at tile position q (el_cumsum's loop body).
                auto step = [&](int q) {
                    const typename S::A v = S::load(t[lane][q]);
                    if (EXCL) {
                        t[lane][q] = S::store(acc);
                        acc = S::add(acc, v);
                    } else {
                        acc = S::add(acc, v);
                        t[lane][q] = S::store(acc);
                    }
                };
                if (reverse) {
#pragma unroll 4
                    for (int q = w - 1 - j; q >= 0; --q) step(q);
                } else {
#pragma unroll 4
                    for (int q = j; q < w; ++q) step(q);
                }
            }
            __syncwarp();
            {
                T* p = y + at;
                if (full) {
#pragma unroll 8
                    for (int r = lr; r < 32; r += RPI, p += rstep) *p = t[r][lc];
                } else {
                    for (int r = lr; r < 32; r += RPI, p += rstep)
                        if (line0 + r < lines && lc < w) *p = t[r][lc];
                }
            }
            __syncwarp();
        }
    }
}

// __launch_bounds__(block, 4): at most 64 registers, four blocks per SM (ptxas's own
// target spilled the f16 chain on sm_80).
#define EL_CUMSUM_ROWS(op, sfx, T)                                                             \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK, 4)                                  \
        op##_##sfx(T* y, const T* x, i64 lines, i64 len, i64 exclusive, i64 reverse) {         \
        __shared__ typename ElCumTile<T>::Row tiles[EL_BLOCK / 32][32];                        \
        typename ElCumTile<T>::Row* t = tiles[threadIdx.x >> 5];                               \
        if (exclusive)                                                                         \
            el_cumsum_rows<T, true>(y, x, lines, len, reverse, t);                             \
        else                                                                                   \
            el_cumsum_rows<T, false>(y, x, lines, len, reverse, t);                            \
    }
GK_FOR_cumsum_rows(EL_CUMSUM_ROWS)

#define EL_CUMSUM(op, sfx, T)                                                                  \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK)                                     \
        op##_##sfx(T* y, const T* x, i64 outer, i64 len, i64 inner, i64 exclusive,             \
                   i64 reverse) {                                                              \
        if (exclusive)                                                                         \
            el_cumsum<T, true>(y, x, outer, len, inner, reverse);                              \
        else                                                                                   \
            el_cumsum<T, false>(y, x, outer, len, inner, reverse);                             \
    }
GK_FOR_cumsum(EL_CUMSUM)

// ---------------------------------------------------------------------------------
// topk (sorted): one thread per input element (o, j, i) of [outer, len, inner],
// grid-stride. Its output position is its rank: how many elements of its line beat it
// (gpukit_core::topk::TopkElem::beats: by value with NaN largest and -0 == +0, ties to
// the lower position). The ranks of a line are a permutation of
// 0..len, so the k elements ranked below k write each output exactly once, with no
// atomics and no sort; a thread stops counting once its rank reaches k. Neighbouring
// threads take neighbouring columns i (inner > 1) or positions j (inner = 1, every
// thread then reads the same element of the line: one broadcast load per warp).
// ---------------------------------------------------------------------------------

// The comparison key of a value: the compute type for floats (f16 / bf16 widened
// exactly to f32), the integer itself otherwise.
template <class T> struct TkKey {
    typedef typename GkElem<T>::Real K;
    static __device__ __forceinline__ K key(T v) { return gk_load(v); }
    static __device__ __forceinline__ bool nan(K v) { return v != v; }
};
template <> struct TkKey<i64> {
    typedef i64 K;
    static __device__ __forceinline__ i64 key(i64 v) { return v; }
    static __device__ __forceinline__ bool nan(i64) { return false; }
};
template <> struct TkKey<int> {
    typedef int K;
    static __device__ __forceinline__ int key(int v) { return v; }
    static __device__ __forceinline__ bool nan(int) { return false; }
};

// Whether (a, ia) comes before (b, ib): the strictly greater (LARGEST) or smaller value,
// NaN above every number (two NaNs tie); ties to the lower position.
template <class T, bool LARGEST>
__device__ __forceinline__ bool tk_beats(typename TkKey<T>::K a, i64 ia, typename TkKey<T>::K b,
                                         i64 ib) {
    typedef TkKey<T> Key;
    const bool an = Key::nan(a), bn = Key::nan(b);
    if (an || bn) return an && bn ? ia < ib : (LARGEST ? an : bn);
    return LARGEST ? (a > b || (a == b && ia < ib)) : (a < b || (a == b && ia < ib));
}

template <class T, bool LARGEST>
__device__ __forceinline__ void el_topk(T* __restrict__ values, i64* __restrict__ indices,
                                        const T* __restrict__ x, i64 outer, i64 len, i64 inner,
                                        i64 k) {
    typedef TkKey<T> Key;
    const i64 n = outer * len * inner;
    i64 e = gk_tid();
    if (e >= n) return;
    const i64 nthreads = gk_nthreads();
    GkPos3 p = gk_split3((gk_u64)e, (gk_u64)len, (gk_u64)inner);  // (o, j, i)
    const GkPos3 s = gk_split3((gk_u64)nthreads, (gk_u64)len, (gk_u64)inner);
    for (;;) {
        const i64 o = (i64)p.a, j = (i64)p.b, i = (i64)p.c;
        const T* line = x + o * len * inner + i;
        const T v = line[j * inner];
        const typename Key::K kv = Key::key(v);
        i64 rank = 0;
#pragma unroll 1
        for (i64 m = 0; m < len && rank < k; ++m) {
            rank += tk_beats<T, LARGEST>(Key::key(line[m * inner]), m, kv, j) ? 1 : 0;
        }
        if (rank < k) {
            const i64 at = (o * k + rank) * inner + i;
            values[at] = v;
            indices[at] = j;
        }
        e += nthreads;
        if (e >= n) break;
        gk_advance3(p, s, (gk_u64)len, (gk_u64)inner);
    }
}

#define EL_TOPK(op, sfx, T)                                                                    \
    extern "C" __global__ void __launch_bounds__(EL_BLOCK)                                     \
        op##_##sfx(T* values, i64* indices, const T* x, i64 outer, i64 len, i64 inner, i64 k,   \
                   i64 largest) {                                                              \
        if (largest)                                                                           \
            el_topk<T, true>(values, indices, x, outer, len, inner, k);                        \
        else                                                                                   \
            el_topk<T, false>(values, indices, x, outer, len, inner, k);                       \
    }
GK_FOR_topk(EL_TOPK)
