//! The register-tiled micro-kernel shared by the attention kernels: an `MR × NV`
//! block of vectors of accumulators, each lane one output's fma chain over the inner
//! index ascending, exactly the contract's chain for that output.

use super::lanes::Lanes;

/// `acc[r][v] = fma(a(kk, r), b(kk, v), acc[r][v])` for `kk = 0, 1, ..., kdim - 1` in
/// that order, where `a(kk, r) = *a.add(kk * sa_k + r * sa_r)` is broadcast to every
/// lane and `b(kk, v)` is the vector at `b.add(kk * ldb + v * W)`. Lane `i` of
/// `acc[r][v]` therefore runs the scalar chain `acc = fma(a, b_i, acc)` over `kk`
/// ascending (the product is commutative, so `fma(x, y, c)` and `fma(y, x, c)` are the
/// same value).
///
/// # Safety
/// The CPU supports `V`'s instruction set; every `a(kk, r)` for `kk < kdim`, `r < MR`
/// and every `W` elements of `b(kk, v)` for `v < NV` are readable.
#[inline(always)]
pub(super) unsafe fn tile<V: Lanes, const MR: usize, const NV: usize>(
    kdim: usize,
    (a, sa_k, sa_r): (*const V::R, usize, usize),
    (b, ldb): (*const V::R, usize),
    acc: &mut [[V; NV]; MR],
) {
    for kk in 0..kdim {
        // SAFETY: in bounds by the caller's guarantee for `kk < kdim`.
        let (ap, bp) = unsafe { (a.add(kk * sa_k), b.add(kk * ldb)) };
        // SAFETY: `W` readable elements per `v < NV` (caller); the instruction set too.
        let bv: [V; NV] = std::array::from_fn(|v| unsafe { V::load(bp.add(v * V::W)) });
        for (r, row) in acc.iter_mut().enumerate() {
            // SAFETY: `a(kk, r)` is readable (caller); the instruction set too.
            let x = unsafe { V::splat(*ap.add(r * sa_r)) };
            for (o, &y) in row.iter_mut().zip(&bv) {
                // SAFETY: the instruction set (caller).
                *o = unsafe { x.fma(y, *o) };
            }
        }
    }
}

/// Calls `$f::<V, NV>($args)` with the const `NV` equal to the run-time `$nv`
/// (1 to 4).
macro_rules! with_nv {
    ($nv:expr, $f:ident::<$v:ty>($($arg:expr),* $(,)?)) => {
        match $nv {
            1 => $f::<$v, 1>($($arg),*),
            2 => $f::<$v, 2>($($arg),*),
            3 => $f::<$v, 3>($($arg),*),
            _ => $f::<$v, 4>($($arg),*),
        }
    };
}
pub(super) use with_nv;
