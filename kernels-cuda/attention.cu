// attention.cu: the neural-network family's `attention` group (docs/ops/attention.md,
// crates/gpukit-core/src/abi/attention.rs).
//
//   attention_{dtype}          fused scaled-dot-product attention: the online softmax over
//                              fixed tiles of 64 keys, one order of operations per value
//                              (the CPU kernel crates/gpukit-cpu/src/nn/attention.rs and
//                              the oracle crates/gpukit-reference/src/attention.rs)
//   attention_scores_{dtype}   the composed attention's scores, head-major
//   attention_general_{dtype}  the fused attention with per-query masks, causal, grouped
//                              K/V heads and vd != hd (crates/gpukit-cpu/src/nn/attention/
//                              general.rs, crates/gpukit-reference/src/attention_general.rs)
//
// Fused geometry (crates/gpukit-cuda/src/plan/attention.rs): 256 threads = 8 warps per
// block, one block per (sequence·head, tile of BQ query rows) (grid-stride over those
// tasks), BQ = 8 warps x RW rows (RW = 2 for f32/f16/bf16, 1 for f64). Each warp owns RW
// query rows for the whole key walk. Per key tile of 64 keys:
//   1. warp 0 lists the tile's kept keys in ascending order (ballot + popc): a key whose
//      mask value is <= MASK_DROP is dropped and never read;
//   2. the K rows of the kept keys are staged in shared memory in head-dim chunks of DC
//      (coalesced along d); lane l holds the scores of kept keys l and l+32 of each of its
//      rows and continues their fma chains over d ascending chunk after chunk, so every
//      chain runs d = 0..hd in order from +0.0, exactly as the CPU's;
//   3. per row: s * scale (+ mask), m_new = max_nan(m, max over kept s) (a butterfly of
//      max_nan: order-free under the contract, identity -inf), c and the weights p_j
//      (one exp per kept key, by the lane owning it), l = l * c then + p_j for the kept
//      keys in ascending order (every lane, redundantly), acc = acc * c;
//   4. the V rows of the kept keys are staged chunk by chunk; lane l owns output elements
//      d = l, l+32, ... and runs acc_d = fma(p_j, v[j][d], acc_d) over the kept keys in
//      ascending order.
// Finally o[i][d] = store(acc_d / l) (coalesced along d).
//
// attention_scores geometry: 256 threads per block, one block per tile of 32 query rows
// x 64 keys of one head (grid-stride over tiles); Q and K staged in chunks of 32 along d;
// thread (warp w, lane l) computes rows w, w+8, w+16, w+24 x keys l, l+32, each score one
// fma chain over d ascending from +0.0, then * scale, then + mask (plain addition), then
// one store.
//
// Both kernels read only staged shared memory (threads past an edge read a clamped, staged
// row and discard the result) and only in-range global memory.
#include "gpukit.cuh"
#include "gpukit_math.cuh"

#define ATTENTION_THREADS 256
#define ATTENTION_WARPS 8
#define ATTENTION_KEY_TILE 64  // gpukit_core::abi::attention::KEY_TILE
#define ATTENTION_MAX_HD 256   // gpukit_core::abi::attention::MAX_HEAD_DIM
#define ATTENTION_ACC (ATTENTION_MAX_HD / 32)  // accumulator registers per row and lane
// At least 2 blocks per SM: caps registers at 128 per thread. With .maxntid alone, ptxas
// (12.9) aims at 48-64 registers and spills; both kernels need ~80-128 unconstrained.
#define ATTENTION_MIN_BLOCKS 2

// Rows per warp (RW) and staged head-dim chunk (DC, a multiple of 32) of the fused
// kernel, per storage type. Shared memory per block: BQ*256 + 64*(DC+1) + BQ*64 + 64
// compute-type values + 65 ints (f32: 37,636 bytes; f64: 38,148 bytes).
template <class T> struct AttentionCfg {
    enum { RW = 2, DC = 64 };
};
template <> struct AttentionCfg<double> {
    enum { RW = 1, DC = 32 };
};

template <class R> __device__ __forceinline__ R attention_neg_inf();
template <> __device__ __forceinline__ float attention_neg_inf<float>() {
    return __int_as_float(0xff800000);
}
template <> __device__ __forceinline__ double attention_neg_inf<double>() {
    return __longlong_as_double((long long)0xfff0000000000000ULL);
}

// max_nan over the 32 lanes (xor butterfly; every lane gets the result). max_nan is
// commutative and associative up to NaN payloads (a NaN anywhere gives a NaN in every
// lane; +0 beats -0 in either order), so this equals the CPU's fold over the same set.
template <class R> __device__ __forceinline__ R attention_warp_max(R x) {
#pragma unroll
    for (int w = 16; w >= 1; w >>= 1) x = gk_max_nan(x, __shfl_xor_sync(GK_FULL_MASK, x, w));
    return x;
}

// Stages rows of the listed keys (offsets kidx[0..nk) in the tile starting at key
// `start`), columns d0 .. d0 + dlen, of K or V (`src`, rows `stride` apart from `base`)
// into kv (row stride KS), in the compute type. Every thread of the block calls it.
template <class T, class R, int KS>
__device__ __forceinline__ void attention_stage(R* kv, const T* __restrict__ src, i64 base,
                                                i64 stride, i64 start, const int* kidx, int nk,
                                                int d0, int dlen) {
    for (int t = (int)threadIdx.x; t < nk * dlen; t += ATTENTION_THREADS) {
        const int jj = t / dlen;
        const int dd = t - jj * dlen;
        kv[jj * KS + dd] = gk_load(src[base + (start + kidx[jj]) * stride + d0 + dd]);
    }
}

// Continues the score chains of the warp's RW query rows (qs, row stride
// ATTENTION_MAX_HD) for the listed keys lane and lane + 32 over the staged columns
// d0 .. d0 + dlen, d ascending: s = fma(q_d, k_d, s). Lanes without a listed key read a
// staged row and discard the result.
template <class R, int RW, int KS>
__device__ __forceinline__ void attention_score_chunk(R (&s)[RW][2], const R* qs, const R* kv,
                                                      int warp, int lane, int nk, int d0,
                                                      int dlen) {
    if (nk == 0) return;
    const int j0 = lane < nk ? lane : nk - 1;
    const int j1 = lane + 32 < nk ? lane + 32 : nk - 1;
    for (int dd = 0; dd < dlen; ++dd) {
        const R k0 = kv[j0 * KS + dd];
        const R k1 = kv[j1 * KS + dd];
#pragma unroll
        for (int r = 0; r < RW; ++r) {
            const R qd = qs[(warp * RW + r) * ATTENTION_MAX_HD + d0 + dd];
            s[r][0] = gk_fma(qd, k0, s[r][0]);
            s[r][1] = gk_fma(qd, k1, s[r][1]);
        }
    }
}

template <class T>
__device__ __forceinline__ void attention_fused(T* __restrict__ o, const T* __restrict__ q,
                                                const T* __restrict__ k,
                                                const T* __restrict__ v,
                                                const T* __restrict__ mask, i64 has_mask,
                                                i64 batch, i64 heads, i64 n, i64 nkv, i64 hd,
                                                i64 hpb, i64 interleaved, double scale64) {
    typedef typename GkElem<T>::Real R;
    constexpr int RW = AttentionCfg<T>::RW;
    constexpr int DC = AttentionCfg<T>::DC;
    constexpr int BQ = ATTENTION_WARPS * RW;      // query rows per block
    constexpr int KS = DC + 1;                    // padded row stride of the staged tile
    constexpr int UPC = DC / 32;                  // accumulators per row per chunk
    constexpr int NCH = ATTENTION_MAX_HD / DC;    // chunks of the widest head
    constexpr int KT = ATTENTION_KEY_TILE;

    __shared__ R qs[BQ * ATTENTION_MAX_HD];  // the block's query rows (compute type)
    __shared__ R kv[KT * KS];                // one chunk of the kept keys' K or V rows
    __shared__ R ps[BQ * KT];                // each row's weights p_j (by kept position)
    __shared__ R kbias[KT];                  // the kept keys' mask values
    __shared__ int kidx[KT];                 // the kept keys' offsets in the tile
    __shared__ int knum;                     // how many keys of the tile are kept

    const R scale = (R)scale64;               // rounded once to nearest even
    const R drop = (R)(-0x1p99);              // MASK_DROP, exact in every compute type
    const R ninf = attention_neg_inf<R>();
    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int hdi = (int)hd;                  // 1..=256 (checked by the plan)
    const i64 width = interleaved ? heads * hd : hd;  // row stride of q, k, v, o
    const i64 qblocks = (n + BQ - 1) / BQ;
    const i64 tasks = batch * heads * qblocks;

    for (i64 task = blockIdx.x; task < tasks; task += gridDim.x) {
        const i64 bhi = task / qblocks;
        const i64 i0 = (task - bhi * qblocks) * BQ;
        const i64 b = bhi / heads;
        const i64 h = bhi - b * heads;
        const i64 qbase = interleaved ? b * n * width + h * hd : bhi * n * hd;
        const i64 kbase = interleaved ? b * nkv * width + h * hd : bhi * nkv * hd;
        const i64 mbase = has_mask ? (b * (heads / hpb) + h / hpb) * nkv : 0;

        __syncthreads();  // the previous task's readers of qs are done
        for (int t = tid; t < BQ * hdi; t += ATTENTION_THREADS) {
            const int r = t / hdi;
            const int d = t - r * hdi;
            const i64 i = i0 + r;
            qs[r * ATTENTION_MAX_HD + d] = i < n ? gk_load(q[qbase + i * width + d]) : R(0);
        }

        R m[RW], l[RW], acc[RW][ATTENTION_ACC];
#pragma unroll
        for (int r = 0; r < RW; ++r) {
            m[r] = ninf;
            l[r] = R(0);
#pragma unroll
            for (int u = 0; u < ATTENTION_ACC; ++u) acc[r][u] = R(0);
        }

        for (i64 start = 0; start < nkv; start += KT) {
            const i64 end = nkv < start + KT ? nkv : start + KT;
            __syncthreads();  // qs staged; the previous tile's readers of kidx/kbias/kv done

            // 1. The kept keys, ascending.
            if (warp == 0) {
                int base = 0;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int jt = half * 32 + lane;
                    const i64 j = start + jt;
                    bool kept = j < end;
                    R bj = R(0);
                    if (kept && has_mask) {
                        bj = gk_load(mask[mbase + j]);
                        kept = !(bj <= drop);
                    }
                    const unsigned bal = __ballot_sync(GK_FULL_MASK, kept);
                    if (kept) {
                        const int pos = base + __popc(bal & ((1u << lane) - 1u));
                        kidx[pos] = jt;
                        kbias[pos] = bj;
                    }
                    base += __popc(bal);
                }
                if (lane == 0) knum = base;
            }

            // 2. Scores: s = fma chain over d ascending from +0.0, chunk after chunk.
            R s[RW][2];
#pragma unroll
            for (int r = 0; r < RW; ++r) s[r][0] = s[r][1] = R(0);
#pragma unroll
            for (int c = 0; c < NCH; ++c) {
                if (c * DC < hdi) {
                    __syncthreads();  // kidx/knum published; previous chunk's readers done
                    const int nk = knum;
                    const int d0 = c * DC;
                    const int dlen = hdi - d0 < DC ? hdi - d0 : DC;
                    attention_stage<T, R, KS>(kv, k, kbase, width, start, kidx, nk, d0, dlen);
                    __syncthreads();
                    attention_score_chunk<R, RW, KS>(s, qs, kv, warp, lane, nk, d0, dlen);
                }
            }

            // 3. Scale, mask, running maximum, rescale factor, weights, denominator.
            const int nk = knum;
            const bool own0 = lane < nk;
            const bool own1 = lane + 32 < nk;
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                R s0 = s[r][0] * scale;
                R s1 = s[r][1] * scale;
                if (has_mask) {
                    if (own0) s0 = s0 + kbias[lane];
                    if (own1) s1 = s1 + kbias[lane + 32];
                }
                R local = ninf;  // identity of max_nan
                if (own0) local = gk_max_nan(local, s0);
                if (own1) local = gk_max_nan(local, s1);
                const R m_new = gk_max_nan(m[r], attention_warp_max(local));
                const bool all_neg_inf = m_new == ninf;
                const R cr = all_neg_inf ? R(1) : gk_exp(m[r] - m_new);
                R* pr = ps + (warp * RW + r) * KT;
                if (own0) pr[lane] = all_neg_inf ? R(0) : gk_exp(s0 - m_new);
                if (own1) pr[lane + 32] = all_neg_inf ? R(0) : gk_exp(s1 - m_new);
                m[r] = m_new;
                l[r] = l[r] * cr;
#pragma unroll
                for (int u = 0; u < ATTENTION_ACC; ++u) {
                    if (u * 32 < hdi) acc[r][u] = acc[r][u] * cr;
                }
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                const R* pr = ps + (warp * RW + r) * KT;
                R lr = l[r];
                for (int jj = 0; jj < nk; ++jj) lr = lr + pr[jj];
                l[r] = lr;
            }

            // 4. Accumulators: acc_d = fma(p_j, v[j][d], acc_d), kept keys ascending.
#pragma unroll
            for (int c = 0; c < NCH; ++c) {
                if (c * DC < hdi) {
                    __syncthreads();  // the previous readers of kv are done
                    const int d0 = c * DC;
                    const int dlen = hdi - d0 < DC ? hdi - d0 : DC;
                    attention_stage<T, R, KS>(kv, v, kbase, width, start, kidx, nk, d0, dlen);
                    __syncthreads();
                    for (int jj = 0; jj < nk; ++jj) {
#pragma unroll
                        for (int r = 0; r < RW; ++r) {
                            const R p = ps[(warp * RW + r) * KT + jj];
#pragma unroll
                            for (int u = 0; u < UPC; ++u) {
                                const int dd = u * 32 + lane;
                                if (dd < dlen) {
                                    acc[r][c * UPC + u] =
                                        gk_fma(p, kv[jj * KS + dd], acc[r][c * UPC + u]);
                                }
                            }
                        }
                    }
                }
            }
        }

        // o[i][d] = store(acc_d / l); a row without a kept key is 0 / 0 = NaN.
#pragma unroll
        for (int r = 0; r < RW; ++r) {
            const i64 i = i0 + warp * RW + r;
            if (i < n) {
#pragma unroll
                for (int u = 0; u < ATTENTION_ACC; ++u) {
                    const int d = u * 32 + lane;
                    if (d < hdi) o[qbase + i * width + d] = gk_store<T>(acc[r][u] / l[r]);
                }
            }
        }
    }
}

// The general fused attention (attention_general): the fused kernel's geometry and order
// of operations with a keep decision per (query row, key) instead of per key: per-query
// masks (additive or boolean) read through broadcast strides, a top-left causal flag,
// query head h reading K/V head h / (heads / kv_heads), and V / output rows of vd != hd.
// Per key tile:
//   1. each warp decides, for its RW rows, which of the tile's 64 keys each row keeps
//      (a 64-bit mask per row, with the additive mask values kept in shared memory);
//      warp 0 lists the keys kept by any row of the block in ascending order: a key no
//      row keeps is never read;
//   2. scores of the listed keys as in the fused kernel (a listed key a row drops is
//      computed for that row and discarded);
//   3. per row, only its own kept keys enter the maximum, the weights, the denominator
//      (ascending) and, in 4., the accumulators (ascending): a warp-uniform bit test per
//      listed key, so a dropped key adds nothing at all (not even a +0.0);
// and a row that keeps no key in the whole walk writes +0.0. With causal, the walk ends
// after the tile holding the block's last query row: the later tiles keep no key for any
// of its rows, and a tile that keeps nothing leaves m, l and acc unchanged bit for bit
// (m_new = m, c = exp(+0.0) = 1 or the all -inf factor 1, and x * 1 = x).
template <class T>
__device__ __forceinline__ void attention_general_fused(
    T* __restrict__ o, const T* __restrict__ q, const T* __restrict__ k,
    const T* __restrict__ v, const T* __restrict__ mask, i64 mask_kind, i64 causal, i64 batch,
    i64 heads, i64 kv_heads, i64 n, i64 nkv, i64 hd, i64 vd, i64 interleaved, i64 msb,
    i64 msh, i64 msi, double scale64) {
    typedef typename GkElem<T>::Real R;
    constexpr int RW = AttentionCfg<T>::RW;
    constexpr int DC = AttentionCfg<T>::DC;
    constexpr int BQ = ATTENTION_WARPS * RW;
    constexpr int KS = DC + 1;
    constexpr int UPC = DC / 32;
    constexpr int NCH = ATTENTION_MAX_HD / DC;
    constexpr int KT = ATTENTION_KEY_TILE;

    __shared__ R qs[BQ * ATTENTION_MAX_HD];   // the block's query rows
    __shared__ R kv[KT * KS];                 // one chunk of the listed keys' K or V rows
    __shared__ R ps[BQ * KT];                 // each row's weights (by listed position)
    __shared__ R kb[BQ * KT];                 // each row's additive mask values (by tile offset)
    __shared__ unsigned long long kbits[BQ];  // each row's kept keys (by tile offset)
    __shared__ int kidx[KT];                  // the listed keys' offsets in the tile
    __shared__ int knum;                      // how many keys of the tile are listed

    const R scale = (R)scale64;  // rounded once to nearest even
    const R drop = (R)(-0x1p99);  // MASK_DROP, exact in every compute type
    const R ninf = attention_neg_inf<R>();
    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int hdi = (int)hd;  // 1..=256 (checked by the plan)
    const int vdi = (int)vd;  // 1..=256
    const i64 group = heads / kv_heads;
    const i64 qstride = interleaved ? heads * hd : hd;
    const i64 kstride = interleaved ? kv_heads * hd : hd;
    const i64 vstride = interleaved ? kv_heads * vd : vd;
    const i64 ostride = interleaved ? heads * vd : vd;
    const i64 qblocks = (n + BQ - 1) / BQ;
    const i64 tasks = batch * heads * qblocks;

    for (i64 task = blockIdx.x; task < tasks; task += gridDim.x) {
        const i64 bhi = task / qblocks;
        const i64 i0 = (task - bhi * qblocks) * BQ;
        const i64 b = bhi / heads;
        const i64 h = bhi - b * heads;
        const i64 kh = h / group;
        const i64 qbase = interleaved ? b * n * qstride + h * hd : bhi * n * hd;
        const i64 obase = interleaved ? b * n * ostride + h * vd : bhi * n * vd;
        const i64 kbase =
            interleaved ? b * nkv * kstride + kh * hd : (b * kv_heads + kh) * nkv * hd;
        const i64 vbase =
            interleaved ? b * nkv * vstride + kh * vd : (b * kv_heads + kh) * nkv * vd;
        const i64 mbase = b * msb + h * msh;
        const i64 last = (i0 + BQ < n ? i0 + BQ : n) - 1;  // the block's last query row
        const i64 walk = causal && last + 1 < nkv ? last + 1 : nkv;

        __syncthreads();  // the previous task's readers of qs are done
        for (int t = tid; t < BQ * hdi; t += ATTENTION_THREADS) {
            const int r = t / hdi;
            const int d = t - r * hdi;
            const i64 i = i0 + r;
            qs[r * ATTENTION_MAX_HD + d] = i < n ? gk_load(q[qbase + i * qstride + d]) : R(0);
        }

        R m[RW], l[RW], acc[RW][ATTENTION_ACC];
        bool any[RW];
#pragma unroll
        for (int r = 0; r < RW; ++r) {
            m[r] = ninf;
            l[r] = R(0);
            any[r] = false;
#pragma unroll
            for (int u = 0; u < ATTENTION_ACC; ++u) acc[r][u] = R(0);
        }

        for (i64 start = 0; start < walk; start += KT) {
            const i64 end = nkv < start + KT ? nkv : start + KT;
            __syncthreads();  // qs staged; the previous tile's readers of kbits/kidx/kb done

            // 1. Each warp: its rows' kept keys of the tile (and additive mask values).
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                const int row = warp * RW + r;
                const i64 i = i0 + row;
                unsigned long long bits = 0;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int jt = half * 32 + lane;
                    const i64 j = start + jt;
                    bool kept = j < end && i < n && !(causal && j > i);
                    R bj = R(0);
                    if (kept && mask_kind != 0) {
                        const R x = gk_load(mask[mbase + i * msi + j]);
                        if (mask_kind == 1) {
                            kept = !(x <= drop);
                            bj = x;
                        } else {
                            kept = x != R(0);  // NaN keeps its key
                        }
                    }
                    kb[row * KT + jt] = bj;
                    bits |= (unsigned long long)__ballot_sync(GK_FULL_MASK, kept) << (32 * half);
                }
                if (lane == 0) kbits[row] = bits;
            }
            __syncthreads();
            // The keys any row keeps, ascending.
            if (warp == 0) {
                unsigned long long all = 0;
                for (int r = 0; r < BQ; ++r) all |= kbits[r];
                int base = 0;
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int jt = half * 32 + lane;
                    const bool listed = (all >> jt) & 1ull;
                    const unsigned bal = __ballot_sync(GK_FULL_MASK, listed);
                    if (listed) kidx[base + __popc(bal & ((1u << lane) - 1u))] = jt;
                    base += __popc(bal);
                }
                if (lane == 0) knum = base;
            }

            // 2. Scores: s = fma chain over d ascending from +0.0, chunk after chunk.
            R s[RW][2];
#pragma unroll
            for (int r = 0; r < RW; ++r) s[r][0] = s[r][1] = R(0);
#pragma unroll
            for (int c = 0; c < NCH; ++c) {
                if (c * DC < hdi) {
                    __syncthreads();  // kidx/knum published; previous chunk's readers done
                    const int nk = knum;
                    const int d0 = c * DC;
                    const int dlen = hdi - d0 < DC ? hdi - d0 : DC;
                    attention_stage<T, R, KS>(kv, k, kbase, kstride, start, kidx, nk, d0, dlen);
                    __syncthreads();
                    attention_score_chunk<R, RW, KS>(s, qs, kv, warp, lane, nk, d0, dlen);
                }
            }

            // 3. Per row: scale, mask, maximum, rescale factor, weights, denominator.
            const int nk = knum;
            const int t0 = lane < nk ? kidx[lane] : 0;
            const int t1 = lane + 32 < nk ? kidx[lane + 32] : 0;
            unsigned long long own[RW];  // the row's kept keys, by listed position
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                const int row = warp * RW + r;
                const unsigned long long rb = kbits[row];
                const bool own0 = lane < nk && ((rb >> t0) & 1ull);
                const bool own1 = lane + 32 < nk && ((rb >> t1) & 1ull);
                own[r] = (unsigned long long)__ballot_sync(GK_FULL_MASK, own0) |
                         ((unsigned long long)__ballot_sync(GK_FULL_MASK, own1) << 32);
                any[r] = any[r] || own[r] != 0ull;
                R s0 = s[r][0] * scale;
                R s1 = s[r][1] * scale;
                if (mask_kind == 1) {
                    if (own0) s0 = s0 + kb[row * KT + t0];
                    if (own1) s1 = s1 + kb[row * KT + t1];
                }
                R local = ninf;  // identity of max_nan
                if (own0) local = gk_max_nan(local, s0);
                if (own1) local = gk_max_nan(local, s1);
                const R m_new = gk_max_nan(m[r], attention_warp_max(local));
                const bool all_neg_inf = m_new == ninf;
                const R cr = all_neg_inf ? R(1) : gk_exp(m[r] - m_new);
                R* pr = ps + row * KT;
                if (own0) pr[lane] = all_neg_inf ? R(0) : gk_exp(s0 - m_new);
                if (own1) pr[lane + 32] = all_neg_inf ? R(0) : gk_exp(s1 - m_new);
                m[r] = m_new;
                l[r] = l[r] * cr;
#pragma unroll
                for (int u = 0; u < ATTENTION_ACC; ++u) {
                    if (u * 32 < vdi) acc[r][u] = acc[r][u] * cr;
                }
            }
            __syncwarp();
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                const R* pr = ps + (warp * RW + r) * KT;
                R lr = l[r];
                for (int jj = 0; jj < nk; ++jj) {
                    if ((own[r] >> jj) & 1ull) lr = lr + pr[jj];
                }
                l[r] = lr;
            }

            // 4. Accumulators: acc_d = fma(p_j, v[j][d], acc_d), the row's kept keys ascending.
#pragma unroll
            for (int c = 0; c < NCH; ++c) {
                if (c * DC < vdi) {
                    __syncthreads();  // the previous readers of kv are done
                    const int d0 = c * DC;
                    const int dlen = vdi - d0 < DC ? vdi - d0 : DC;
                    attention_stage<T, R, KS>(kv, v, vbase, vstride, start, kidx, nk, d0, dlen);
                    __syncthreads();
                    for (int jj = 0; jj < nk; ++jj) {
#pragma unroll
                        for (int r = 0; r < RW; ++r) {
                            if ((own[r] >> jj) & 1ull) {
                                const R p = ps[(warp * RW + r) * KT + jj];
#pragma unroll
                                for (int u = 0; u < UPC; ++u) {
                                    const int dd = u * 32 + lane;
                                    if (dd < dlen) {
                                        acc[r][c * UPC + u] =
                                            gk_fma(p, kv[jj * KS + dd], acc[r][c * UPC + u]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }

        // o[i][d] = store(acc_d / l); a row that kept no key is +0.0.
#pragma unroll
        for (int r = 0; r < RW; ++r) {
            const i64 i = i0 + warp * RW + r;
            if (i < n) {
#pragma unroll
                for (int u = 0; u < ATTENTION_ACC; ++u) {
                    const int d = u * 32 + lane;
                    if (d < vdi) {
                        o[obase + i * ostride + d] =
                            gk_store<T>(any[r] ? acc[r][u] / l[r] : R(0));
                    }
                }
            }
        }
    }
}

#define ATTENTION_SC_ROWS 32  // query rows per scores tile
#define ATTENTION_SC_KEYS 64  // keys per scores tile
#define ATTENTION_SC_DC 32    // staged head-dim chunk

template <class T>
__device__ __forceinline__ void attention_scores_tiles(T* __restrict__ s,
                                                       const T* __restrict__ q,
                                                       const T* __restrict__ k,
                                                       const T* __restrict__ mask,
                                                       i64 has_mask, i64 heads, i64 n, i64 nkv,
                                                       i64 hd, i64 hpb, double scale64) {
    typedef typename GkElem<T>::Real R;
    constexpr int BM = ATTENTION_SC_ROWS;
    constexpr int BN = ATTENTION_SC_KEYS;
    constexpr int DC = ATTENTION_SC_DC;
    constexpr int KS = DC + 1;
    constexpr int RA = BM / ATTENTION_WARPS;  // rows per thread (4)

    __shared__ R qs[BM * DC];
    __shared__ R ks[BN * KS];

    const R scale = (R)scale64;  // rounded once to nearest even
    const int tid = (int)threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const i64 tm = (n + BM - 1) / BM;
    const i64 tn = (nkv + BN - 1) / BN;
    const i64 tiles = heads * tm * tn;

    for (i64 task = blockIdx.x; task < tiles; task += gridDim.x) {
        const i64 h = task / (tm * tn);
        const i64 rem = task - h * (tm * tn);
        const i64 ti = rem / tn;
        const i64 i0 = ti * BM;
        const i64 j0 = (rem - ti * tn) * BN;
        const int rows = n - i0 < BM ? (int)(n - i0) : BM;
        const int keys = nkv - j0 < BN ? (int)(nkv - j0) : BN;
        // Threads past the tile's edge read a staged row/key and discard the result.
        int qr[RA];
#pragma unroll
        for (int a = 0; a < RA; ++a) {
            const int r = warp + ATTENTION_WARPS * a;
            qr[a] = r < rows ? r : rows - 1;
        }
        const int kc0 = lane < keys ? lane : keys - 1;
        const int kc1 = lane + 32 < keys ? lane + 32 : keys - 1;

        R acc[RA][2];
#pragma unroll
        for (int a = 0; a < RA; ++a) acc[a][0] = acc[a][1] = R(0);

        for (i64 d0 = 0; d0 < hd; d0 += DC) {
            const int dlen = hd - d0 < DC ? (int)(hd - d0) : DC;
            __syncthreads();  // the previous chunk's (or tile's) readers are done
            for (int t = tid; t < rows * dlen; t += ATTENTION_THREADS) {
                const int r = t / dlen;
                const int dd = t - r * dlen;
                qs[r * DC + dd] = gk_load(q[(h * n + i0 + r) * hd + d0 + dd]);
            }
            for (int t = tid; t < keys * dlen; t += ATTENTION_THREADS) {
                const int jj = t / dlen;
                const int dd = t - jj * dlen;
                ks[jj * KS + dd] = gk_load(k[(h * nkv + j0 + jj) * hd + d0 + dd]);
            }
            __syncthreads();
            for (int dd = 0; dd < dlen; ++dd) {
                const R k0 = ks[kc0 * KS + dd];
                const R k1 = ks[kc1 * KS + dd];
#pragma unroll
                for (int a = 0; a < RA; ++a) {
                    const R qd = qs[qr[a] * DC + dd];
                    acc[a][0] = gk_fma(qd, k0, acc[a][0]);
                    acc[a][1] = gk_fma(qd, k1, acc[a][1]);
                }
            }
        }

        const i64 mrow = has_mask ? (h / hpb) * nkv : 0;
#pragma unroll
        for (int a = 0; a < RA; ++a) {
            const int r = warp + ATTENTION_WARPS * a;
            if (r < rows) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int jj = lane + 32 * e;
                    if (jj < keys) {
                        R x = acc[a][e] * scale;
                        if (has_mask) x = x + gk_load(mask[mrow + j0 + jj]);
                        s[(h * n + i0 + r) * nkv + j0 + jj] = gk_store<T>(x);
                    }
                }
            }
        }
    }
}

#define GK_ATTENTION(op, sfx, T)                                                               \
    extern "C" __global__ void __launch_bounds__(ATTENTION_THREADS, ATTENTION_MIN_BLOCKS)      \
        op##_##sfx(T* __restrict__ o, const T* __restrict__ q, const T* __restrict__ k,        \
                   const T* __restrict__ v, const T* __restrict__ mask, i64 has_mask,          \
                   i64 batch, i64 heads, i64 n, i64 nkv, i64 hd, i64 hpb, i64 interleaved,     \
                   double scale) {                                                             \
        attention_fused<T>(o, q, k, v, mask, has_mask, batch, heads, n, nkv, hd, hpb,          \
                           interleaved, scale);                                                \
    }
GK_FOR_attention(GK_ATTENTION)

#define GK_ATTENTION_SCORES(op, sfx, T)                                                        \
    extern "C" __global__ void __launch_bounds__(ATTENTION_THREADS, ATTENTION_MIN_BLOCKS)      \
        op##_##sfx(T* __restrict__ s, const T* __restrict__ q, const T* __restrict__ k,        \
                   const T* __restrict__ mask, i64 has_mask, i64 heads, i64 n, i64 nkv,        \
                   i64 hd, i64 hpb, double scale) {                                            \
        attention_scores_tiles<T>(s, q, k, mask, has_mask, heads, n, nkv, hd, hpb, scale);     \
    }
GK_FOR_attention_scores(GK_ATTENTION_SCORES)

#define GK_ATTENTION_GENERAL(op, sfx, T)                                                       \
    extern "C" __global__ void __launch_bounds__(ATTENTION_THREADS, ATTENTION_MIN_BLOCKS)      \
        op##_##sfx(T* __restrict__ o, const T* __restrict__ q, const T* __restrict__ k,        \
                   const T* __restrict__ v, const T* __restrict__ mask, i64 mask_kind,         \
                   i64 causal, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 nkv, i64 hd,     \
                   i64 vd, i64 interleaved, i64 msb, i64 msh, i64 msi, double scale) {         \
        attention_general_fused<T>(o, q, k, v, mask, mask_kind, causal, batch, heads,          \
                                   kv_heads, n, nkv, hd, vd, interleaved, msb, msh, msi,       \
                                   scale);                                                     \
    }
GK_FOR_attention_general(GK_ATTENTION_GENERAL)
