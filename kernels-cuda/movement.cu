// movement.cu: the `movement` group of the neural-network family
// (crates/gpukit-cpu/src/nn/movement.rs, crates/gpukit-reference/src/movement.rs,
// docs/ops/movement.md).
//
//   copy_axis_{dtype}         dst[o, offset + a, i] = src[o, a, i]
//   strided_copy_{dtype}      out[c] = x[offset + sum c_d * strides_d]   (<= 8 axes);
//                             transposes through shared-memory tiles
//   resize_bilinear_{dtype}   exact integer taps and weights, lerp with fma (floats)
//   resize_nearest_{dtype}    out[p, oy, ox] = x[p, oy*in_h/out_h, ox*in_w/out_w]
//   eos_gather_{dtype}        out[b, :] = x[b, first argmax of ids[b, :], :]
//
// Every kernel but resize_bilinear moves raw bits (unsigned integers of the element's
// width): NaN payloads and -0.0 survive on all six dtypes. All index arithmetic is
// 64-bit; consecutive threads write consecutive output elements (coalesced); the
// loops are grid-stride, and coordinates advance with carries rather than a division
// per element.
#include "gpukit.cuh"

#define MV_BLOCK 256
// strided_copy keeps its per-lane coordinates in registers; at least this many blocks
// per SM (registers <= 64) keeps the copy latency-hidden.
#define MV_STRIDED_MIN_BLOCKS 4
// gpukit_core::abi::movement::MAX_RANK.
#define MV_RANK 8
// Output columns one warp copies per eos_gather work item (8 per lane).
#define MV_EOS_TILE 256



// ---------------------------------------------------------------------------------
// copy_axis: over the source elements e = o * run + r (run = src_axis * inner), the
// destination is (o * dst_axis + offset) * inner + r.
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void mv_copy_axis(B* __restrict__ dst, const B* __restrict__ src,
                                             i64 outer, i64 src_axis, i64 inner, i64 dst_axis,
                                             i64 offset) {
    const i64 run = src_axis * inner;
    const i64 n = outer * run;
    i64 e = gk_tid();
    if (e >= n) return;
    const i64 step = gk_nthreads();
    const i64 drow = dst_axis * inner, doff = offset * inner;
    GkPos3 p = gk_split3((gk_u64)e, 1, (gk_u64)run);  // (o, 0, r)
    const GkPos3 s = gk_split3((gk_u64)step, 1, (gk_u64)run);
    for (;;) {
        dst[(i64)p.a * drow + doff + (i64)p.c] = src[e];
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, 1, (gk_u64)run);
    }
}

// ---------------------------------------------------------------------------------
// strided_copy. Thread 0 of each block merges the axes (drops size-1 axes, fuses an
// axis into the previous one when that one's stride is this one's stride times its
// extent: the same element map, fewer digits) into shared memory, right-aligned in
// MV_RANK positions (position MV_RANK-1 fastest; unused leading positions have extent
// 1, stride 0). Each warp then owns one contiguous range of outputs (ranges of equal
// length, a multiple of 32, as many as the grid has warps); lane l writes elements
// start + l, start + l + 32, ... (a warp writes 32 consecutive outputs per step), so
// each lane divides once to find its first coordinates and then adds the digits of 32
// with carries, keeping the source offset in step.
// ---------------------------------------------------------------------------------

// The transposing case of strided_copy: after merging, the output's fastest axis P
// (position MV_RANK-1) is strided in the source while another axis A is the source's
// contiguous one (stride 1), both at least MV_TILE_MIN long. Element by element either
// the reads or the writes would touch a sector per lane, so each block moves 32 x 32
// tiles through shared memory instead: lanes read along A (consecutive source
// elements), then write along P (consecutive outputs). Tiles are (other digits, A
// tile, P tile), row-major, grid-stride over blocks; the other digits' offsets take
// one division per digit per tile. Rows padded to 33: both phases conflict-free.
#define MV_TILE_MIN 16

template <class B>
__device__ __forceinline__ void mv_transpose_tiles(B* __restrict__ out, const B* __restrict__ x,
                                                   const gk_u64* sdim, const gk_u64* sstr,
                                                   int lo, int A, gk_u64 offset) {
    __shared__ B tile[32][33];
    const int P = MV_RANK - 1;
    const gk_u64 dA = sdim[A], dP = sdim[P], sP = sstr[P];
    const gk_u64 tA = (dA + 31) / 32, tP = (dP + 31) / 32;
    gk_u64 oA = 1;  // A's stride in the (row-major) output
    for (int p = A + 1; p <= P; ++p) oA *= sdim[p];
    gk_u64 rest = 1;
    for (int p = lo; p < P; ++p)
        if (p != A) rest *= sdim[p];
    const gk_u64 ntiles = rest * tA * tP;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (gk_u64 t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const gk_u64 tp = t % tP, u = t / tP, ta = u % tA;
        gk_u64 r = u / tA;
        // The other digits, fastest first, skipping A: their source and output offsets.
        gk_u64 src = offset, dst = 0, ostr = dP;
        for (int p = P - 1; p >= lo; --p) {
            if (p != A) {
                const gk_u64 c = r % sdim[p];
                r /= sdim[p];
                src += c * sstr[p];
                dst += c * ostr;
            }
            ostr *= sdim[p];
        }
        const gk_u64 a0 = ta * 32, p0 = tp * 32;
        // A full tile needs no guard; pointers advance by the warps' 8 rows.
        const bool full = a0 + 32 <= dA && p0 + 32 <= dP;
        const int WARPS = MV_BLOCK / 32;
        {
            const B* xs = x + (src + a0 + lane + (p0 + w) * sP);
            const gk_u64 step = WARPS * sP;
            if (full) {
#pragma unroll 2
                for (int j = w; j < 32; j += WARPS, xs += step) tile[lane][j] = *xs;
            } else {
                for (int j = w; j < 32; j += WARPS, xs += step)
                    if (a0 + lane < dA && p0 + j < dP) tile[lane][j] = *xs;
            }
        }
        __syncthreads();
        {
            B* os = out + (dst + (a0 + w) * oA + p0 + lane);
            const gk_u64 step = WARPS * oA;
            if (full) {
#pragma unroll 2
                for (int j = w; j < 32; j += WARPS, os += step) *os = tile[j][lane];
            } else {
                for (int j = w; j < 32; j += WARPS, os += step)
                    if (a0 + j < dA && p0 + lane < dP) *os = tile[j][lane];
            }
        }
        __syncthreads();
    }
}

template <class B>
__device__ __forceinline__ void mv_strided_copy(B* __restrict__ out, const B* __restrict__ x,
                                                const i64* __restrict__ dims,
                                                const i64* __restrict__ strides, i64 ndim,
                                                i64 offset, i64 n_out) {
    __shared__ gk_u64 sdim[MV_RANK], sstr[MV_RANK], swrap[MV_RANK], sdig[MV_RANK];
    __shared__ int slo, stile;
    if (n_out <= 0) return;  // uniform: before the barrier
    if (threadIdx.x == 0) {
        int k = 0;
        for (i64 d = 0; d < ndim; ++d) {
            const gk_u64 dd = (gk_u64)dims[d], ss = (gk_u64)strides[d];
            if (dd == 1) continue;
            if (k > 0 && ss * dd == sstr[k - 1]) {
                sdim[k - 1] *= dd;
                sstr[k - 1] = ss;
            } else {
                sdim[k] = dd;
                sstr[k] = ss;
                ++k;
            }
        }
        if (k == 0) {  // one element: a single axis of extent 1
            sdim[0] = 1;
            sstr[0] = 0;
            k = 1;
        }
        const int lo = MV_RANK - k;
        for (int p = MV_RANK - 1; p >= 0; --p) {
            if (p >= lo) {
                sdim[p] = sdim[p - lo];
                sstr[p] = sstr[p - lo];
            } else {
                sdim[p] = 1;
                sstr[p] = 0;
            }
        }
        // Digits of the lane step 32; the top digit keeps the rest (only used while
        // the new element is inside the tensor, where no digit overflows).
        gk_u64 r = 32;
        for (int p = MV_RANK - 1; p >= 0; --p) {
            swrap[p] = sdim[p] * sstr[p];
            if (p > lo) {
                sdig[p] = r % sdim[p];
                r /= sdim[p];
            } else {
                sdig[p] = p == lo ? r : 0;
            }
        }
        slo = lo;
        // The transposing case (mv_transpose_tiles): A, or -1.
        int a = -1;
        if (sstr[MV_RANK - 1] != 1 && sdim[MV_RANK - 1] >= MV_TILE_MIN) {
            for (int p = MV_RANK - 2; p >= lo; --p) {
                if (sstr[p] == 1 && sdim[p] >= MV_TILE_MIN) {
                    a = p;
                    break;
                }
            }
        }
        stile = a;
    }
    __syncthreads();
    if (stile >= 0) {  // block-uniform
        mv_transpose_tiles<B>(out, x, sdim, sstr, slo, stile, (gk_u64)offset);
        return;
    }
    const int lo = slo;
    const gk_u64 n = (gk_u64)n_out;
    const gk_u64 warp = (gk_u64)gk_tid() >> 5, nwarps = (gk_u64)gk_nthreads() >> 5;
    const gk_u64 per = ((n + 31) / 32 + nwarps - 1) / nwarps * 32;
    const gk_u64 begin = warp * per;
    if (begin >= n) return;
    const gk_u64 end = begin + per < n ? begin + per : n;
    gk_u64 e = begin + (gk_u64)gk_lane();
    if (e >= end) return;
    gk_u64 c[MV_RANK];
    gk_u64 src = (gk_u64)offset;
    {
        gk_u64 rest = e;
#pragma unroll
        for (int p = MV_RANK - 1; p >= 0; --p) {
            c[p] = 0;
            if (p >= lo) {
                const gk_u64 dm = sdim[p];
                c[p] = rest % dm;
                rest /= dm;
                src += c[p] * sstr[p];
            }
        }
    }
    // The tables are read through volatile views inside the loop: hoisting all 32 of
    // them into registers would cost more registers than the copy is worth.
    const volatile gk_u64* vdim = sdim;
    const volatile gk_u64* vstr = sstr;
    const volatile gk_u64* vwrap = swrap;
    const volatile gk_u64* vdig = sdig;
    for (;;) {
        out[e] = x[src];
        e += 32;
        if (e >= end) break;
        gk_u64 carry = 0;
#pragma unroll
        for (int p = MV_RANK - 1; p >= 0; --p) {
            if (p >= lo) {
                const gk_u64 inc = vdig[p] + carry;
                if (inc != 0) {
                    gk_u64 v = c[p] + inc;
                    src += inc * vstr[p];
                    carry = 0;
                    const gk_u64 dm = vdim[p];
                    if (v >= dm) {
                        v -= dm;
                        src -= vwrap[p];
                        carry = 1;
                    }
                    c[p] = v;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// resize_nearest: exact integer source coordinates (ONNX asymmetric + floor).
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void mv_resize_nearest(B* __restrict__ out, const B* __restrict__ x,
                                                  i64 planes, i64 in_h, i64 in_w, i64 out_h,
                                                  i64 out_w) {
    const i64 n = planes * out_h * out_w;
    i64 e = gk_tid();
    if (e >= n) return;
    const i64 step = gk_nthreads();
    const gk_u64 nb = (gk_u64)out_h, nc = (gk_u64)out_w;
    GkPos3 p = gk_split3((gk_u64)e, nb, nc);  // (plane, oy, ox)
    const GkPos3 s = gk_split3((gk_u64)step, nb, nc);
    for (;;) {
        const gk_u64 sy = p.b * (gk_u64)in_h / (gk_u64)out_h;
        const gk_u64 sx = p.c * (gk_u64)in_w / (gk_u64)out_w;
        out[e] = x[((i64)p.a * in_h + (i64)sy) * in_w + (i64)sx];
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, nb, nc);
    }
}

// ---------------------------------------------------------------------------------
// resize_bilinear, step for step as the CPU kernel's bilinear_tap and lerp
// (docs/ops/movement.md). Every operation is a correctly rounded intrinsic, so nothing
// can be contracted or reassociated.
// ---------------------------------------------------------------------------------

// R(v) for an integer 0 <= v < 2^53: the exact double, then (f32) one rounding to
// nearest even, as R::from_f64(v as f64).
template <class R> __device__ __forceinline__ R mv_from_int(i64 v);
template <> __device__ __forceinline__ float mv_from_int<float>(i64 v) {
    return __double2float_rn(__ll2double_rn(v));
}
template <> __device__ __forceinline__ double mv_from_int<double>(i64 v) {
    return __ll2double_rn(v);
}
__device__ __forceinline__ float mv_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mv_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mv_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double mv_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float mv_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double mv_sub(double a, double b) { return __dsub_rn(a, b); }

template <class R> struct MvTap {
    i64 i0, i1;
    R w0, w1;
};

// One axis: output index dst of `out` from an axis of `inp >= 1` elements.
template <class R>
__device__ __forceinline__ MvTap<R> mv_tap(i64 dst, i64 inp, i64 out, bool align) {
    i64 num, den;
    if (align) {
        num = dst * (inp - 1);
        den = out - 1 > 1 ? out - 1 : 1;  // max(out - 1, 1)
    } else {
        num = (2 * dst + 1) * inp - out;
        if (num < 0) num = 0;  // max(.., 0)
        den = 2 * out;
    }
    const i64 q = (i64)((gk_u64)num / (gk_u64)den);  // both >= 0: truncation = floor
    MvTap<R> t;
    if (q >= inp - 1) {  // clamped to the last index
        t.i0 = inp - 1;
        t.i1 = inp - 1;
        t.w0 = R(1);
        t.w1 = R(0);
        return t;
    }
    const i64 rem = num - q * den;
    t.i0 = q;
    t.i1 = q + 1;
    t.w1 = mv_div(mv_from_int<R>(rem), mv_from_int<R>(den));
    t.w0 = mv_sub(R(1), t.w1);
    return t;
}

// lerp(row[x0], row[x1], w0, w1) of the contract: w1 == 0 gives w0*a, w0 == 0 gives
// w1*b (the zero-weight tap is not read), else fma(w1, b, w0*a).
template <class T, class R>
__device__ __forceinline__ R mv_hlerp(const T* __restrict__ row, const MvTap<R>& tx) {
    if (tx.w1 == R(0)) return mv_mul(tx.w0, gk_load(row[tx.i0]));
    if (tx.w0 == R(0)) return mv_mul(tx.w1, gk_load(row[tx.i1]));
    const R a = gk_load(row[tx.i0]);
    const R b = gk_load(row[tx.i1]);
    return gk_fma(tx.w1, b, mv_mul(tx.w0, a));
}

template <class T>
__device__ __forceinline__ void mv_resize_bilinear(T* __restrict__ out, const T* __restrict__ x,
                                                   i64 planes, i64 in_h, i64 in_w, i64 out_h,
                                                   i64 out_w, i64 align_corners) {
    typedef typename GkElem<T>::Real R;
    const i64 n = planes * out_h * out_w;
    i64 e = gk_tid();
    if (e >= n) return;
    const bool align = align_corners != 0;
    const i64 step = gk_nthreads();
    const gk_u64 nb = (gk_u64)out_h, nc = (gk_u64)out_w;
    GkPos3 p = gk_split3((gk_u64)e, nb, nc);  // (plane, oy, ox)
    const GkPos3 s = gk_split3((gk_u64)step, nb, nc);
    for (;;) {
        const MvTap<R> ty = mv_tap<R>((i64)p.b, in_h, out_h, align);
        const MvTap<R> tx = mv_tap<R>((i64)p.c, in_w, out_w, align);
        const T* plane = x + (i64)p.a * in_h * in_w;
        // v = lerp(t, b, wy0, wy1) with t = row y0's lerp, b = row y1's; a row whose
        // weight is zero is not computed (its value would not be used).
        R v;
        if (ty.w1 == R(0)) {
            v = mv_mul(ty.w0, mv_hlerp(plane + ty.i0 * in_w, tx));
        } else if (ty.w0 == R(0)) {
            v = mv_mul(ty.w1, mv_hlerp(plane + ty.i1 * in_w, tx));
        } else {
            const R t = mv_hlerp(plane + ty.i0 * in_w, tx);
            const R b = mv_hlerp(plane + ty.i1 * in_w, tx);
            v = gk_fma(ty.w1, b, mv_mul(ty.w0, t));
        }
        out[e] = gk_store<T>(v);
        e += step;
        if (e >= n) break;
        gk_advance3(p, s, nb, nc);
    }
}

// ---------------------------------------------------------------------------------
// eos_gather: one warp per (row b, tile of MV_EOS_TILE output columns). The warp finds
// the first position of row b's largest id (each lane the first maximum of its
// positions, then a butterfly keeping the larger id, on equal ids the smaller
// position: a total order, so every lane gets the sequential answer), then copies its
// tile of x[b, s, :] (8 columns per lane, 32 consecutive per step).
// ---------------------------------------------------------------------------------

template <class B>
__device__ __forceinline__ void mv_eos_gather(B* __restrict__ out, const B* __restrict__ x,
                                              const i64* __restrict__ ids, i64 batch, i64 seq,
                                              i64 d) {
    const i64 ntiles = (d + MV_EOS_TILE - 1) / MV_EOS_TILE;
    const i64 items = batch * ntiles;
    const i64 nwarps = gk_nthreads() >> 5;
    const int lane = gk_lane();
    for (i64 item = gk_tid() >> 5; item < items; item += nwarps) {
        const i64 b = (i64)((gk_u64)item / (gk_u64)ntiles);
        const i64 tile = item - b * ntiles;
        const i64* row = ids + b * seq;
        i64 bv = (i64)(1ULL << 63), bs = (i64)(~0ULL >> 1);  // i64::MIN, i64::MAX
        for (i64 s = lane; s < seq; s += 32) {
            const i64 v = __ldg(row + s);
            if (v > bv || (v == bv && s < bs)) {
                bv = v;
                bs = s;
            }
        }
#pragma unroll
        for (int w = 16; w >= 1; w >>= 1) {
            const i64 ov = __shfl_xor_sync(GK_FULL_MASK, bv, w);
            const i64 os = __shfl_xor_sync(GK_FULL_MASK, bs, w);
            if (ov > bv || (ov == bv && os < bs)) {
                bv = ov;
                bs = os;
            }
        }
        const B* srow = x + (b * seq + bs) * d;
        B* orow = out + b * d;
        const i64 c0 = tile * MV_EOS_TILE + lane;
#pragma unroll
        for (int j = 0; j < MV_EOS_TILE / 32; ++j) {
            const i64 col = c0 + 32 * j;
            if (col < d) orow[col] = srow[col];
        }
    }
}

// ---------------------------------------------------------------------------------
// Entries.
// ---------------------------------------------------------------------------------

#define MV_COPY_AXIS(op, sfx, T)                                                               \
    extern "C" __global__ void __launch_bounds__(MV_BLOCK)                                     \
        op##_##sfx(T* dst, const T* src, i64 outer, i64 src_axis, i64 inner, i64 dst_axis,     \
                   i64 offset) {                                                               \
        typedef GkBits<T>::B B;                                                                \
        mv_copy_axis<B>((B*)dst, (const B*)src, outer, src_axis, inner, dst_axis, offset);     \
    }
GK_FOR_copy_axis(MV_COPY_AXIS)

#define MV_STRIDED_COPY(op, sfx, T)                                                            \
    extern "C" __global__ void __launch_bounds__(MV_BLOCK, MV_STRIDED_MIN_BLOCKS)              \
        op##_##sfx(T* out, const T* x, const i64* dims, const i64* strides, i64 ndim,          \
                   i64 offset, i64 n_out) {                                                    \
        typedef GkBits<T>::B B;                                                                \
        mv_strided_copy<B>((B*)out, (const B*)x, dims, strides, ndim, offset, n_out);          \
    }
GK_FOR_strided_copy(MV_STRIDED_COPY)

#define MV_RESIZE_BILINEAR(op, sfx, T)                                                         \
    extern "C" __global__ void __launch_bounds__(MV_BLOCK)                                     \
        op##_##sfx(T* out, const T* x, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w,   \
                   i64 align_corners) {                                                        \
        mv_resize_bilinear<T>(out, x, planes, in_h, in_w, out_h, out_w, align_corners);        \
    }
GK_FOR_resize_bilinear(MV_RESIZE_BILINEAR)

#define MV_RESIZE_NEAREST(op, sfx, T)                                                          \
    extern "C" __global__ void __launch_bounds__(MV_BLOCK)                                     \
        op##_##sfx(T* out, const T* x, i64 planes, i64 in_h, i64 in_w, i64 out_h, i64 out_w) { \
        typedef GkBits<T>::B B;                                                                \
        mv_resize_nearest<B>((B*)out, (const B*)x, planes, in_h, in_w, out_h, out_w);          \
    }
GK_FOR_resize_nearest(MV_RESIZE_NEAREST)

#define MV_EOS_GATHER(op, sfx, T)                                                              \
    extern "C" __global__ void __launch_bounds__(MV_BLOCK)                                     \
        op##_##sfx(T* out, const T* x, const i64* ids, i64 batch, i64 seq, i64 d) {            \
        typedef GkBits<T>::B B;                                                                \
        mv_eos_gather<B>((B*)out, (const B*)x, ids, batch, seq, d);                            \
    }
GK_FOR_eos_gather(MV_EOS_GATHER)
