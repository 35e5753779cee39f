//! The composed attention's scores task: one head and a block of up to [`BQS`] query
//! rows, `S[h][i][j] = store(fma chain over d ascending from +0.0 of q·k · scale
//! [+ mask[j]])` (no key dropped), through the register-tiled micro-kernel with the keys
//! across lanes (`kt[d][j]`, one tile of [`KEY_TILE`] keys at a time) so that each
//! query row's scores come out contiguous.

use gpukit_core::abi::attention::KEY_TILE;
use gpukit_core::numeric::{FloatElement, Real};

use super::fused::round_up;
use super::lanes::{LaneBody, LaneReal, Lanes};
use super::micro::{tile, with_nv};
use super::{BQS, Scratch, load_transposed};
use crate::args::RawBuf;

/// One scores task (see the module docs).
pub(super) struct ScoresTask<'a, T: FloatElement> {
    /// Queries `[heads, n, hd]`.
    pub(super) q: &'a [T],
    /// Keys `[heads, nkv, hd]`.
    pub(super) k: &'a [T],
    /// This head's mask row of `nkv` values.
    pub(super) mask: Option<&'a [T]>,
    /// Head, first row of the block, rows in the block (`1..=BQS`).
    pub(super) block: (usize, usize, usize),
    /// Queries per head and keys per head.
    pub(super) n_nkv: (usize, usize),
    /// Head width (any).
    pub(super) hd: usize,
    /// The scale in the compute type.
    pub(super) scale: T::Real,
    /// The scores tensor `[heads, n, nkv]`.
    pub(super) out: RawBuf<'a, T>,
    /// The task's scratch.
    pub(super) w: &'a mut Scratch<T::Real>,
}

/// Four rows' scores for `NV` vectors of keys, into `st[r][keys of v]` (row stride
/// [`KEY_TILE`]).
///
/// # Safety
/// `V`'s instruction set; `qt` has `hd` rows of `ld` with 4 readable columns from
/// `qt0`; `kt` `hd` rows of `KEY_TILE` with `NV·W` readable columns from `kt0`; `bias`
/// (when given) and `st` `NV·W` columns from `bias0`/`st0` (4 rows for `st`).
#[inline(always)]
unsafe fn sc_block<V: Lanes, const NV: usize>(
    hd: usize,
    (qt0, ld): (*const V::R, usize),
    kt0: *const V::R,
    scale: V::R,
    bias0: Option<*const V::R>,
    st0: *mut V::R,
) {
    // SAFETY: the instruction set (caller).
    let zero = unsafe { V::splat(<V::R as Real>::ZERO) };
    let mut acc = [[zero; NV]; 4];
    // SAFETY: a(d, r) = qt[d][r] and b(d, v) = kt[d][v·W..] are in bounds (caller).
    unsafe { tile::<V, 4, NV>(hd, (qt0, ld, 1), (kt0, KEY_TILE), &mut acc) };
    // SAFETY: the instruction set; bias and st in bounds (caller).
    unsafe {
        let sc = V::splat(scale);
        let b: Option<[V; NV]> = bias0.map(|p| std::array::from_fn(|v| V::load(p.add(v * V::W))));
        for (r, row) in acc.iter().enumerate() {
            for (vi, &x) in row.iter().enumerate() {
                let mut s = x.mul(sc);
                if let Some(b) = &b {
                    s = s.add(b[vi]);
                }
                s.store(st0.add(r * KEY_TILE + vi * V::W));
            }
        }
    }
}

impl<T: FloatElement> LaneBody<T::Real> for ScoresTask<'_, T>
where
    T::Real: LaneReal,
{
    type Out = ();

    #[inline(always)]
    fn run<V: Lanes<R = T::Real>>(self) {
        let ScoresTask {
            q,
            k,
            mask,
            block: (h, i0, rows),
            n_nkv: (n, nkv),
            hd,
            scale,
            out,
            w,
        } = self;
        let zero = <T::Real as Real>::ZERO;
        let wv = V::W;
        let rp = round_up(rows, 4);
        let ld = rp;
        w.ensure(BQS, hd, round_up(hd, wv));

        // Queries, transposed: qt[d][r]; padded rows are zero.
        load_transposed(
            (rp, hd),
            |r| {
                let at = (h * n + i0 + r) * hd;
                (r < rows).then(|| &q[at..at + hd])
            },
            &mut w.row,
            (&mut w.qt[..hd * ld], ld),
        );

        let mut start = 0;
        while start < nkv {
            let end = nkv.min(start + KEY_TILE);
            let nk = end - start;
            let nkp = round_up(nk, wv);
            // Keys, transposed: kt[d][j] (row stride KEY_TILE); padded keys are zero.
            load_transposed(
                (nkp, hd),
                |jj| {
                    let at = (h * nkv + start + jj) * hd;
                    (jj < nk).then(|| &k[at..at + hd])
                },
                &mut w.row,
                (&mut w.kp[..hd * KEY_TILE], KEY_TILE),
            );
            if let Some(mk) = mask {
                for (o, x) in w.bias[..nk].iter_mut().zip(&mk[start..end]) {
                    *o = x.load();
                }
                w.bias[nk..nkp].fill(zero);
            }
            let nvk = nkp / wv;
            for r0 in (0..rp).step_by(4) {
                for v0 in (0..nvk).step_by(V::NV) {
                    let nv = V::NV.min(nvk - v0);
                    // SAFETY: `V`'s level (inside `run_lanes`); qt has hd rows of
                    // ld = rp >= r0 + 4 columns; kt hd rows of KEY_TILE >= nkp columns;
                    // bias KEY_TILE values; st BQS >= rp rows of KEY_TILE.
                    unsafe {
                        let qt0 = w.qt.as_ptr().add(r0);
                        let kt0 = w.kp.as_ptr().add(v0 * wv);
                        let b0 = mask.map(|_| w.bias.as_ptr().add(v0 * wv));
                        let st0 = w.st.as_mut_ptr().add(r0 * KEY_TILE + v0 * wv);
                        with_nv!(nv, sc_block::<V>(hd, (qt0, ld), kt0, scale, b0, st0));
                    }
                }
            }
            for r in 0..rows {
                let at = (h * n + i0 + r) * nkv + start;
                // SAFETY: row (h, i0 + r) belongs to this task alone; inside the checked
                // length of the scores tensor.
                let dst = unsafe { out.slice_mut(at, at + nk) };
                for (x, &s) in dst.iter_mut().zip(&w.st[r * KEY_TILE..r * KEY_TILE + nk]) {
                    *x = T::store(s);
                }
            }
            start = end;
        }
    }
}

const _: () = assert!(BQS.is_multiple_of(4) && KEY_TILE.is_multiple_of(16));
