//! Packing of dense operands (storage type in, compute type out, loaded exactly).

use gpukit_core::numeric::{FloatElement, Real};

use super::{PackA, PackB};

/// A row-major matrix per batch item: element `(r, c)` of item `bi` is
/// `data[bi*bstride + r*ld + c]`. As A it is `[m, k]`; as B `[k, n]`.
pub(crate) struct RowMajor<'a, T> {
    /// The elements.
    pub(crate) data: &'a [T],
    /// Row stride.
    pub(crate) ld: usize,
    /// Batch stride.
    pub(crate) bstride: usize,
}

impl<T: FloatElement + Sync> PackA<T::Real> for RowMajor<'_, T> {
    #[inline(always)]
    fn pack_a(
        &self,
        bi: usize,
        r0: usize,
        rows: usize,
        t0: usize,
        kc: usize,
        mr: usize,
        dst: &mut [T::Real],
    ) {
        let zero = <T::Real as Real>::ZERO;
        let base = bi * self.bstride + t0;
        for (p, panel) in dst.chunks_exact_mut(kc * mr).enumerate() {
            let rlo = p * mr;
            let rn = mr.min(rows - rlo);
            for (i, d) in panel.chunks_exact_mut(kc).enumerate() {
                if i < rn {
                    let src = &self.data[base + (r0 + rlo + i) * self.ld..][..kc];
                    for (o, v) in d.iter_mut().zip(src) {
                        *o = v.load();
                    }
                } else {
                    d.fill(zero);
                }
            }
        }
    }
}

impl<T: FloatElement + Sync> PackB<T::Real> for RowMajor<'_, T> {
    #[inline(always)]
    fn pack_b(
        &self,
        bi: usize,
        t0: usize,
        kc: usize,
        c0: usize,
        cols: usize,
        nr: usize,
        dst: &mut [T::Real],
    ) {
        let zero = <T::Real as Real>::ZERO;
        let base = bi * self.bstride + t0 * self.ld + c0;
        for (p, panel) in dst.chunks_exact_mut(kc * nr).enumerate() {
            let j0 = p * nr;
            let cn = nr.min(cols - j0);
            for (t, d) in panel.chunks_exact_mut(nr).enumerate() {
                let src = &self.data[base + t * self.ld + j0..][..cn];
                for (o, v) in d.iter_mut().zip(src) {
                    *o = v.load();
                }
                d[cn..].fill(zero);
            }
        }
    }

    #[inline(always)]
    fn direct(&self, bi: usize, t0: usize, c0: usize) -> Option<(*const T::Real, usize)> {
        // Only when the storage type is the compute type (f32, f64): then `T` and
        // `T::Real` are one type and the elements are read as they are.
        if std::any::TypeId::of::<T>() != std::any::TypeId::of::<T::Real>() {
            return None;
        }
        let at = bi * self.bstride + t0 * self.ld + c0;
        // The caller reads only elements of the matrix (rows t0.. < k, columns c0.. < n),
        // all inside `data` (its length was checked against every item's extent).
        (at < self.data.len()).then(|| (self.data[at..].as_ptr().cast::<T::Real>(), self.ld))
    }
}

/// A stored transposed, `[k, m]` per batch item: `a(r, t)` of item `bi` is
/// `data[bi*bstride + t*ld + r]` (ONNX Gemm `transA`). Packs into the same panels as
/// [`RowMajor`] does, so the micro-kernel and every chain are those of the plain case.
pub(crate) struct TransA<'a, T> {
    /// The elements.
    pub(crate) data: &'a [T],
    /// Row stride of the stored `[k, m]` matrix.
    pub(crate) ld: usize,
    /// Batch stride.
    pub(crate) bstride: usize,
}

impl<T: FloatElement + Sync> PackA<T::Real> for TransA<'_, T> {
    #[inline(always)]
    fn pack_a(
        &self,
        bi: usize,
        r0: usize,
        rows: usize,
        t0: usize,
        kc: usize,
        mr: usize,
        dst: &mut [T::Real],
    ) {
        let zero = <T::Real as Real>::ZERO;
        let base = bi * self.bstride + t0 * self.ld + r0;
        for (p, panel) in dst.chunks_exact_mut(kc * mr).enumerate() {
            let rlo = p * mr;
            let rn = mr.min(rows - rlo);
            // Stored row t holds the panel's rows contiguously: one short read per t,
            // written down the panel's column t.
            for t in 0..kc {
                let src = &self.data[base + t * self.ld + rlo..][..rn];
                for (d, v) in panel[t..].iter_mut().step_by(kc).zip(src) {
                    *d = v.load();
                }
            }
            for d in panel.chunks_exact_mut(kc).skip(rn) {
                d.fill(zero);
            }
        }
    }
}

/// B stored transposed, `[n, k]` per batch item: `b(t, j)` of item `bi` is
/// `data[bi*bstride + j*ld + t]` (a PyTorch Linear weight).
pub(crate) struct TransB<'a, T> {
    /// The elements.
    pub(crate) data: &'a [T],
    /// Row stride of the stored `[n, k]` matrix.
    pub(crate) ld: usize,
    /// Batch stride.
    pub(crate) bstride: usize,
}

impl<T: FloatElement + Sync> PackB<T::Real> for TransB<'_, T> {
    #[inline(always)]
    fn pack_b(
        &self,
        bi: usize,
        t0: usize,
        kc: usize,
        c0: usize,
        cols: usize,
        nr: usize,
        dst: &mut [T::Real],
    ) {
        let zero = <T::Real as Real>::ZERO;
        let base = bi * self.bstride + t0;
        for (p, panel) in dst.chunks_exact_mut(kc * nr).enumerate() {
            let j0 = p * nr;
            let cn = nr.min(cols - j0);
            for j in 0..cn {
                let src = &self.data[base + (c0 + j0 + j) * self.ld..][..kc];
                for (d, v) in panel[j..].iter_mut().step_by(nr).zip(src) {
                    *d = v.load();
                }
            }
            if cn < nr {
                for t in 0..kc {
                    panel[t * nr + cn..(t + 1) * nr].fill(zero);
                }
            }
        }
    }
}
