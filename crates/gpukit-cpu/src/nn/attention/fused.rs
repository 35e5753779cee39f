//! The fused attention's task: one (sequence, head) and a block of up to [`BQ`] query
//! rows, walking the key tiles in order with the online softmax of
//! docs/ops/attention.md.
//!
//! Per tile the task packs the kept keys (`kp[j][d]`, zero rows up to a multiple of 4)
//! and their values (`vp[j][d]`, zero columns up to a multiple of the vector width),
//! then runs three steps whose every value has the contract's chain of operations:
//!
//! 1. **Scores** (micro-kernel, rows across lanes): `st[j][r] = fma chain over d
//!    ascending from +0.0 of q[r][d]·k[j][d]`, `· scale`, `+ mask[j]`; the queries are
//!    packed transposed once per task (`qt[d][r]`), four keys per register block.
//! 2. **Online softmax**, vectorised across rows: the running maximum (`max_nan` is
//!    order-free), the rescale factor `c`, the weights `p = exp(s − m_new)` (lane-form
//!    exp), and the denominator `l = l·c` then `+ p_j` for `j` ascending — each row's
//!    chain sequential over keys, the rows in the lanes.
//! 3. **P·V** (micro-kernel, head dimension across lanes): `acc = acc·c`, then
//!    `acc = fma(p_j, v[j][d], acc)` for `j` ascending, four rows per register block.
//!
//! Memory per task is fixed by [`BQ`], [`KEY_TILE`] and the head width, never by the
//! sequence lengths.

use gpukit_core::abi::attention::{KEY_TILE, MASK_DROP};
use gpukit_core::numeric::{FloatElement, Real};

use super::lanes::{LaneBody, LaneReal, Lanes, max_l};
use super::micro::{tile, with_nv};
use super::{BQ, Rows, Scratch, load_row, load_transposed};
use crate::args::RawBuf;
use crate::vmath::LaneMath;

/// Which keys a row keeps, and what is added to its scores.
#[derive(Clone, Copy)]
pub(super) enum MaskSrc<'a, T> {
    /// Every key kept, nothing added.
    None,
    /// One additive row of `nkv` values shared by every query row of the task.
    Row(&'a [T]),
    /// One row per query: query `i`'s value of key `j` is `data[base + i·stride + j]`;
    /// `additive` (`false`: boolean keep-flags).
    PerRow {
        /// The mask tensor.
        data: &'a [T],
        /// This (sequence, head)'s offset.
        base: usize,
        /// The query stride (0 broadcasts one row).
        stride: usize,
        /// Additive (`true`) or boolean (`false`).
        additive: bool,
    },
}

/// One fused task (see the module docs).
pub(super) struct FusedTask<'a, T: FloatElement> {
    /// Queries (the whole tensor).
    pub(super) q: &'a [T],
    /// Keys (the whole tensor).
    pub(super) k: &'a [T],
    /// Values (the whole tensor).
    pub(super) v: &'a [T],
    /// This (sequence, head)'s mask.
    pub(super) mask: MaskSrc<'a, T>,
    /// Top-left causal masking (query `i` keeps keys `j <= i`).
    pub(super) causal: bool,
    /// A row that keeps no key writes `+0.0` (`false`: `acc / l`, NaN).
    pub(super) zero_empty: bool,
    /// Where the queries, keys, values and outputs of this (sequence, head) live.
    pub(super) rows: [Rows; 4],
    /// The block's first row and its number of rows (`1..=BQ`).
    pub(super) block: (usize, usize),
    /// Keys per sequence.
    pub(super) nkv: usize,
    /// Q/K head width and V/output head width (`1..=256`).
    pub(super) hd: (usize, usize),
    /// The scale in the compute type.
    pub(super) scale: T::Real,
    /// The output tensor.
    pub(super) out: RawBuf<'a, T>,
    /// The task's scratch.
    pub(super) w: &'a mut Scratch<T::Real>,
}

/// Rounds `x` up to a multiple of `m`.
#[inline(always)]
pub(super) fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m) * m
}

/// Four keys' scores for `NV` vectors of rows: `st[j0 + m][rows of v]`.
///
/// # Safety
/// `V`'s instruction set; 4 key rows of `hd` (row stride `ldk`) from `kp0`; `qt` has `hd` rows of
/// `ld` from `qt0` with `NV·W` readable columns; `st` 4 writable rows of `ld` likewise.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn qk_block<V: Lanes, const NV: usize>(
    hd: usize,
    (kp0, ldk): (*const V::R, usize),
    qt0: *const V::R,
    ld: usize,
    scale: V::R,
    bias: Option<&[V::R]>,
    st0: *mut V::R,
) {
    // SAFETY: the instruction set (caller).
    let zero = unsafe { V::splat(<V::R as Real>::ZERO) };
    let mut acc = [[zero; NV]; 4];
    // SAFETY: a(d, m) = kp[m][d] and b(d, v) = qt[d][v·W..] are in bounds (caller).
    unsafe { tile::<V, 4, NV>(hd, (kp0, 1, ldk), (qt0, ld), &mut acc) };
    // SAFETY: the instruction set (caller).
    let sc = unsafe { V::splat(scale) };
    for (m, row) in acc.iter().enumerate() {
        // SAFETY: the instruction set; `st` rows in bounds (caller).
        unsafe {
            let b = bias.map(|b| V::splat(b[m]));
            for (vi, &x) in row.iter().enumerate() {
                let mut s = x.mul(sc);
                if let Some(b) = b {
                    s = s.add(b);
                }
                s.store(st0.add(m * ld + vi * V::W));
            }
        }
    }
}

/// Four rows' accumulators for `NV` vectors of the head dimension: rescale by `c`, then
/// one fma per key `j < nk` ascending.
///
/// # Safety
/// `V`'s instruction set; `st` has `nk` rows of `ld` with 4 readable columns from
/// `st0`; the values `nk` rows of `ldv` with `NV·W` readable columns from `vp0`; `acc`
/// 4 rows of `lda` with `NV·W` writable columns from `acc0`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pv_block<V: Lanes, const NV: usize>(
    nk: usize,
    (st0, ld): (*const V::R, usize),
    (vp0, ldv): (*const V::R, usize),
    c: &[V::R],
    (acc0, lda): (*mut V::R, usize),
) {
    // SAFETY: the instruction set (caller); the accumulator rows are in bounds (caller).
    let mut acc: [[V; NV]; 4] = std::array::from_fn(|r| unsafe {
        let cr = V::splat(c[r]);
        std::array::from_fn(|v| V::load(acc0.add(r * lda + v * V::W)).mul(cr))
    });
    // SAFETY: a(j, r) = st[j][r] and b(j, v) = vp[j][v·W..] are in bounds (caller).
    unsafe { tile::<V, 4, NV>(nk, (st0, ld, 1), (vp0, ldv), &mut acc) };
    for (r, row) in acc.iter().enumerate() {
        for (v, &x) in row.iter().enumerate() {
            // SAFETY: in bounds (caller); the instruction set.
            unsafe { x.store(acc0.add(r * lda + v * V::W)) };
        }
    }
}

/// The running row maxima of `NV` vectors of rows over the scores of keys `j < nk`:
/// `m = max_nan(m, st[j])` per lane (`max_nan` is order-free, so the maxima stay in
/// registers across the keys).
///
/// # Safety
/// `V`'s instruction set; `st` has `nk` rows of `ld` with `NV·W` readable columns from
/// `st0`; `NV·W` elements are readable and writable at `m0`.
#[inline(always)]
unsafe fn max_block<V: Lanes, const NV: usize>(
    nk: usize,
    (st0, ld): (*const V::R, usize),
    m0: *mut V::R,
) {
    // SAFETY: `NV·W` elements at `m0` (caller); the instruction set.
    let mut m: [V; NV] = std::array::from_fn(|v| unsafe { V::load(m0.add(v * V::W)) });
    for j in 0..nk {
        for (v, a) in m.iter_mut().enumerate() {
            // SAFETY: row `j < nk` of st, columns `v·W..(v+1)·W` (caller).
            *a = unsafe { a.max_nan(V::load(st0.add(j * ld + v * V::W))) };
        }
    }
    for (v, a) in m.iter().enumerate() {
        // SAFETY: as the loads above.
        unsafe { a.store(m0.add(v * V::W)) };
    }
}

impl<T: FloatElement> LaneBody<T::Real> for FusedTask<'_, T>
where
    T::Real: LaneReal,
{
    type Out = ();

    #[inline(always)]
    fn run<V: Lanes<R = T::Real>>(self) {
        let FusedTask {
            q,
            k,
            v,
            mask,
            causal,
            zero_empty,
            rows: [qr, kr, vr, or],
            block: (i0, rows),
            nkv,
            hd: (hd, vd),
            scale,
            out,
            w,
        } = self;
        let zero = <T::Real as Real>::ZERO;
        let ninf = <T::Real as Real>::NEG_INFINITY;
        let drop_below = <T::Real as Real>::from_f64(MASK_DROP);
        let wv = V::W;
        // Rows padded to the vector width and to the 4-row blocks (64 is a multiple of
        // both, so `rp <= BQ`); V's head width padded to the vector width.
        let rp = round_up(rows, wv.max(4));
        let ld = rp;
        let vdp = round_up(vd, wv);
        w.ensure(BQ, hd.max(vd), vdp);

        // Queries, transposed: qt[d][r]; padded rows are zero.
        load_transposed(
            (rp, hd),
            |r| {
                let at = qr.base + (i0 + r) * qr.stride;
                (r < rows).then(|| &q[at..at + hd])
            },
            &mut w.row,
            (&mut w.qt[..hd * ld], ld),
        );
        // K and V as the compute type, when they are (f32, f64) and V's head width
        // needs no padding.
        let direct = (std::any::TypeId::of::<T>() == std::any::TypeId::of::<T::Real>()
            && vd == vdp)
            .then(|| (k.as_ptr().cast::<T::Real>(), v.as_ptr().cast::<T::Real>()));
        w.acc[..rp * vdp].fill(zero);
        w.m[..rp].fill(ninf);
        w.l[..rp].fill(zero);
        w.any[..rp].fill(false);
        let per_row = matches!(mask, MaskSrc::PerRow { .. });
        let row_bias = match mask {
            MaskSrc::PerRow { additive, .. } => additive,
            _ => false,
        };
        // With `causal`, no row of the block keeps a key past its last row.
        let kend = if causal { nkv.min(i0 + rows) } else { nkv };

        let nvq = rp / wv;
        let nvd = vdp / wv;
        let mut start = 0;
        while start < kend {
            let end = kend.min(start + KEY_TILE);
            // The tile's kept keys, ascending (`keys`); per row when the mask is per
            // row or the causal diagonal crosses the tile (`keep[jj][r]`, and the
            // per-row bias `bt[jj][r]`), else shared by every row (`bias[jj]`).
            let general = per_row || (causal && end - 1 > i0);
            let mut nk = 0;
            let mut uniform = true;
            if !general {
                for j in start..end {
                    if let MaskSrc::Row(mk) = mask {
                        let b = mk[j].load();
                        if b <= drop_below {
                            continue;
                        }
                        w.bias[nk] = b;
                    }
                    w.keys[nk] = j;
                    nk += 1;
                }
            } else {
                for j in start..end {
                    let (mut some, mut all) = (false, true);
                    for r in 0..rp {
                        let i = i0 + r;
                        let mut keep = r < rows && !(causal && j > i);
                        let mut b = zero;
                        if keep {
                            match mask {
                                MaskSrc::PerRow {
                                    data,
                                    base,
                                    stride,
                                    additive,
                                } => {
                                    let x = data[base + i * stride + j].load();
                                    if additive {
                                        keep = x > drop_below || x.is_nan();
                                        b = x;
                                    } else {
                                        keep = x != zero;
                                    }
                                }
                                MaskSrc::Row(mk) => {
                                    let x = mk[j].load();
                                    keep = x > drop_below || x.is_nan();
                                    b = x;
                                }
                                MaskSrc::None => {}
                            }
                        }
                        w.keep[nk * BQ + r] = keep;
                        w.bt[nk * BQ + r] = b;
                        some |= keep;
                        all &= keep || r >= rows;
                    }
                    if some {
                        w.keys[nk] = j;
                        nk += 1;
                        uniform &= all;
                    }
                }
                if nk == 0 {
                    // No row keeps a key of this tile: the contract's step is the
                    // identity (c = 1, nothing added), so the tile is skipped.
                    start = end;
                    continue;
                }
            }
            // Keys and values straight from the inputs when they are already the
            // compute type, nothing is dropped and the blocks need no padding; else
            // packed (kept keys only, zero padding).
            let (kp, vp) = match direct {
                Some((k, v)) if nk == end - start && nk % 4 == 0 => {
                    let (ak, av) = (kr.base + start * kr.stride, vr.base + start * vr.stride);
                    // SAFETY: `ak` / `av` are the tile's first key / value rows, inside
                    // the inputs.
                    unsafe { ((k.add(ak), kr.stride), (v.add(av), vr.stride)) }
                }
                _ => {
                    for jj in 0..nk {
                        let j = w.keys[jj];
                        let ak = kr.base + j * kr.stride;
                        load_row(&k[ak..ak + hd], &mut w.kp[jj * hd..(jj + 1) * hd]);
                        let av = vr.base + j * vr.stride;
                        let vrow = &mut w.vp[jj * vdp..(jj + 1) * vdp];
                        load_row(&v[av..av + vd], &mut vrow[..vd]);
                        vrow[vd..].fill(zero);
                    }
                    w.kp[nk * hd..round_up(nk, 4) * hd].fill(zero);
                    ((w.kp.as_ptr(), hd), (w.vp.as_ptr(), vdp))
                }
            };
            let nkp = round_up(nk, 4);
            w.bias[nk..nkp].fill(zero);

            // 1. Scores st[j][r] of the kept keys (padded keys computed, never used).
            let bias_all = match mask {
                MaskSrc::Row(_) if !general => Some(&w.bias[..]),
                _ => None,
            };
            for j0 in (0..nkp).step_by(4) {
                let bias = bias_all.map(|b| &b[j0..j0 + 4]);
                for v0 in (0..nvq).step_by(V::NV) {
                    let nv = V::NV.min(nvq - v0);
                    // SAFETY: we run inside `run_lanes` at `V`'s level; the keys have
                    // rows j0..j0+4 <= nkp of hd (packed, or the tile's own rows when
                    // nkp = nk); qt has hd rows of ld = rp >= (v0+nv)·W columns; st has
                    // 64 rows of ld.
                    unsafe {
                        let kp0 = (kp.0.add(j0 * kp.1), kp.1);
                        let qt0 = w.qt.as_ptr().add(v0 * wv);
                        let st0 = w.st.as_mut_ptr().add(j0 * ld + v0 * wv);
                        with_nv!(nv, qk_block::<V>(hd, kp0, qt0, ld, scale, bias, st0));
                    }
                }
            }
            // The per-row additions (the same IEEE addition after the scaling).
            if general && (row_bias || matches!(mask, MaskSrc::Row(_))) {
                for jj in 0..nk {
                    let srow = &mut w.st[jj * ld..jj * ld + rp];
                    for (s, &b) in srow.iter_mut().zip(&w.bt[jj * BQ..jj * BQ + rp]) {
                        *s = *s + b;
                    }
                }
            }

            // 2. Online softmax across the rows (lanes); keys j < nk in order.
            let (m, mnew, c, l) = (
                &mut w.m[..rp],
                &mut w.mnew[..rp],
                &mut w.c[..rp],
                &mut w.l[..rp],
            );
            mnew.copy_from_slice(m);
            if general {
                for jj in 0..nk {
                    let keep = &w.keep[jj * BQ..jj * BQ + rp];
                    for ((a, &s), (&kk, any)) in mnew
                        .iter_mut()
                        .zip(&w.st[jj * ld..jj * ld + rp])
                        .zip(keep.iter().zip(w.any.iter_mut()))
                    {
                        if kk {
                            *a = max_l(*a, s);
                            *any = true;
                        }
                    }
                }
            } else {
                for v0 in (0..nvq).step_by(V::NV) {
                    let nv = V::NV.min(nvq - v0);
                    // SAFETY: `V`'s level; st has nk <= 64 rows of ld = rp >= (v0+nv)·W
                    // columns; mnew has rp elements.
                    unsafe {
                        let st0 = (w.st.as_ptr().add(v0 * wv), ld);
                        let m0 = mnew.as_mut_ptr().add(v0 * wv);
                        with_nv!(nv, max_block::<V>(nk, st0, m0));
                    }
                }
                if nk > 0 {
                    w.any[..rp].fill(true);
                }
            }
            for ((cr, &mo), &mn) in c.iter_mut().zip(m.iter()).zip(mnew.iter()) {
                let e = (mo - mn).exp_l();
                *cr = if mn == ninf {
                    <T::Real as Real>::ONE
                } else {
                    e
                };
            }
            for (a, &cr) in l.iter_mut().zip(c.iter()) {
                *a = *a * cr;
            }
            // Weights, and the denominator's additions in ascending key order (a key a
            // row drops has weight 0 and is not added). Every key kept: the explicit
            // loop where there is one (f32 at AVX-512), the same values.
            let done = !general
                && <T::Real as LaneMath>::attn_weights(&mut w.st[..nk * ld], ld, nk, mnew, l);
            for j in 0..if done { 0 } else { nk } {
                let srow = &mut w.st[j * ld..j * ld + rp];
                let keep = &w.keep[j * BQ..j * BQ + rp];
                for (r, ((s, &mn), a)) in srow
                    .iter_mut()
                    .zip(mnew.iter())
                    .zip(l.iter_mut())
                    .enumerate()
                {
                    let e = (*s - mn).exp_l();
                    let kept = !general || keep[r];
                    let p = if mn == ninf || !kept { zero } else { e };
                    *s = p;
                    if kept {
                        *a = *a + p;
                    }
                }
            }
            m.copy_from_slice(mnew);

            // 3. acc = acc·c, then the kept keys' fmas in ascending order.
            if uniform {
                for r0 in (0..rp).step_by(4) {
                    let c4 = &w.c[r0..r0 + 4];
                    for v0 in (0..nvd).step_by(V::NV) {
                        let nv = V::NV.min(nvd - v0);
                        // SAFETY: `V`'s level; st has nk <= 64 rows of ld with columns
                        // r0..r0+4 <= rp; the values nk rows with (v0+nv)·W <= vdp
                        // readable columns (packed: vdp wide; direct: vdp = vd); acc
                        // rows r0..r0+4 <= rp of vdp.
                        unsafe {
                            let st0 = (w.st.as_ptr().add(r0), ld);
                            let vp0 = (vp.0.add(v0 * wv), vp.1);
                            let acc0 = (w.acc.as_mut_ptr().add(r0 * vdp + v0 * wv), vdp);
                            with_nv!(nv, pv_block::<V>(nk, st0, vp0, c4, acc0));
                        }
                    }
                }
            } else {
                // Rows keep different keys: each row's chain over its own kept keys.
                for r in 0..rows {
                    let cr = w.c[r];
                    let acc = &mut w.acc[r * vdp..r * vdp + vd];
                    for a in acc.iter_mut() {
                        *a = *a * cr;
                    }
                    for jj in 0..nk {
                        if !w.keep[jj * BQ + r] {
                            continue;
                        }
                        let p = w.st[jj * ld + r];
                        // SAFETY: value row `jj` of the packed or direct values has `vd`
                        // readable elements from `vp.0 + jj·vp.1`.
                        let vrow = unsafe { std::slice::from_raw_parts(vp.0.add(jj * vp.1), vd) };
                        for (a, &x) in acc.iter_mut().zip(vrow) {
                            *a = p.fma(x, *a);
                        }
                    }
                }
            }
            start = end;
        }

        // o = store(acc / l) (or +0.0 for a row without a kept key, when asked).
        for r in 0..rows {
            let at = or.base + (i0 + r) * or.stride;
            // SAFETY: (sequence, head, row) belongs to this task alone, so no other task
            // touches these `vd` elements; in bounds of the checked output length.
            let dst = unsafe { out.slice_mut(at, at + vd) };
            if zero_empty && !w.any[r] {
                dst.fill(T::store(zero));
                continue;
            }
            let lr = w.l[r];
            for (x, &a) in dst.iter_mut().zip(&w.acc[r * vdp..r * vdp + vd]) {
                *x = T::store(a / lr);
            }
        }
    }
}

const _: () = assert!(BQ.is_multiple_of(16) && KEY_TILE.is_multiple_of(4));
