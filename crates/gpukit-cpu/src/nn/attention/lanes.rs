//! SIMD vectors for the attention micro-kernels: one [`Lanes`] type per instruction set
//! and compute type, each operation one IEEE operation per lane (a lane's `fma` is the
//! scalar `mul_add`, its `mul`/`add` the scalar `*`/`+`), so a value computed in a lane
//! has exactly the bits of the scalar chain. [`run_lanes`] runs a [`LaneBody`] with the
//! widest vector the current [`simd_level`] allows, compiled for that instruction set.

use gpukit_core::numeric::Real;

use crate::kernels::simd::{SimdLevel, simd_level};
use crate::vmath::LaneMath;

/// A vector of [`Lanes::W`] values of the compute type `R`.
///
/// Every method is `unsafe`: the CPU must support the instruction set of the type (the
/// caller runs inside [`run_lanes`], which only picks supported types), and `load` and
/// `store` read or write `W` elements at the pointer.
pub(crate) trait Lanes: Copy {
    /// The compute type of one lane.
    type R: LaneReal;
    /// Lanes per vector.
    const W: usize;
    /// How many vectors the micro-kernels keep across (four rows of accumulators each).
    const NV: usize;
    /// Every lane `x`.
    unsafe fn splat(x: Self::R) -> Self;
    /// `W` elements from `p` (no alignment needed).
    unsafe fn load(p: *const Self::R) -> Self;
    /// Writes the lanes to `p..p + W` (no alignment needed).
    unsafe fn store(self, p: *mut Self::R);
    /// `self * b + c` per lane, one rounding (the scalar `mul_add`).
    unsafe fn fma(self, b: Self, c: Self) -> Self;
    /// `self * b` per lane.
    unsafe fn mul(self, b: Self) -> Self;
    /// `self + b` per lane.
    unsafe fn add(self, b: Self) -> Self;
    /// The contract's `max_nan` per lane (NaN wins, `max(-0, +0) = +0`): the value
    /// [`max_l`] gives for each lane.
    unsafe fn max_nan(self, b: Self) -> Self;
}

/// One value: the scalar path (`W = 1`), any compute type.
#[derive(Clone, Copy)]
pub(crate) struct One<R>(R);

impl<R: LaneReal> Lanes for One<R> {
    type R = R;
    const W: usize = 1;
    const NV: usize = 4;
    #[inline(always)]
    unsafe fn splat(x: R) -> Self {
        One(x)
    }
    #[inline(always)]
    unsafe fn load(p: *const R) -> Self {
        // SAFETY: the caller guarantees `p` is valid for one read.
        One(unsafe { *p })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut R) {
        // SAFETY: the caller guarantees `p` is valid for one write.
        unsafe { *p = self.0 }
    }
    #[inline(always)]
    unsafe fn fma(self, b: Self, c: Self) -> Self {
        One(self.0.fma(b.0, c.0))
    }
    #[inline(always)]
    unsafe fn mul(self, b: Self) -> Self {
        One(self.0 * b.0)
    }
    #[inline(always)]
    unsafe fn add(self, b: Self) -> Self {
        One(self.0 + b.0)
    }
    #[inline(always)]
    unsafe fn max_nan(self, b: Self) -> Self {
        One(max_l(self.0, b.0))
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    // The contract's `max_nan` per lane, as `max_l`: where the lanes are both zero or
    // either is NaN, `a + b` (+0 unless both are -0; NaN with a NaN); elsewhere the
    // larger (`max(b, a)` returns `b` exactly when `b > a`).

    /// An AVX-512 `max_nan`: the special lanes as a mask, then a masked addition.
    macro_rules! max512 {
        ($name:ident, $v:ty, $zero:ident, $cmp:ident, $max:ident, $madd:ident) => {
            /// # Safety
            /// AVX-512F.
            #[inline(always)]
            unsafe fn $name(a: $v, b: $v) -> $v {
                // SAFETY: the caller guarantees AVX-512F.
                unsafe {
                    let z = $zero();
                    let special = $cmp::<_CMP_UNORD_Q>(a, b)
                        | ($cmp::<_CMP_EQ_OQ>(a, z) & $cmp::<_CMP_EQ_OQ>(b, z));
                    $madd($max(b, a), special, a, b)
                }
            }
        };
    }

    /// An AVX `max_nan`: the special lanes as an all-ones mask, then a blend.
    macro_rules! max256 {
        ($name:ident, $v:ty, $zero:ident, $cmp:ident, $and:ident, $or:ident, $max:ident,
         $add:ident, $blend:ident) => {
            /// # Safety
            /// AVX (part of AVX2).
            #[inline(always)]
            unsafe fn $name(a: $v, b: $v) -> $v {
                // SAFETY: the caller guarantees AVX.
                unsafe {
                    let z = $zero();
                    let zeros = $and($cmp::<_CMP_EQ_OQ>(a, z), $cmp::<_CMP_EQ_OQ>(b, z));
                    let special = $or($cmp::<_CMP_UNORD_Q>(a, b), zeros);
                    $blend($max(b, a), $add(a, b), special)
                }
            }
        };
    }

    max512!(
        max_f32x16,
        __m512,
        _mm512_setzero_ps,
        _mm512_cmp_ps_mask,
        _mm512_max_ps,
        _mm512_mask_add_ps
    );
    max512!(
        max_f64x8,
        __m512d,
        _mm512_setzero_pd,
        _mm512_cmp_pd_mask,
        _mm512_max_pd,
        _mm512_mask_add_pd
    );
    max256!(
        max_f32x8,
        __m256,
        _mm256_setzero_ps,
        _mm256_cmp_ps,
        _mm256_and_ps,
        _mm256_or_ps,
        _mm256_max_ps,
        _mm256_add_ps,
        _mm256_blendv_ps
    );
    max256!(
        max_f64x4,
        __m256d,
        _mm256_setzero_pd,
        _mm256_cmp_pd,
        _mm256_and_pd,
        _mm256_or_pd,
        _mm256_max_pd,
        _mm256_add_pd,
        _mm256_blendv_pd
    );

    macro_rules! lanes {
        ($name:ident, $doc:literal, $r:ty, $v:ty, $w:expr, $nv:expr,
         $splat:ident, $load:ident, $store:ident, $fma:ident, $mul:ident, $add:ident,
         $max:ident) => {
            #[doc = $doc]
            #[derive(Clone, Copy)]
            pub(crate) struct $name($v);

            impl Lanes for $name {
                type R = $r;
                const W: usize = $w;
                const NV: usize = $nv;
                #[inline(always)]
                unsafe fn splat(x: $r) -> Self {
                    // SAFETY: the caller guarantees the CPU has this instruction set.
                    $name(unsafe { $splat(x) })
                }
                #[inline(always)]
                unsafe fn load(p: *const $r) -> Self {
                    // SAFETY: the caller guarantees the instruction set and `W` readable
                    // elements at `p`; the load is unaligned.
                    $name(unsafe { $load(p) })
                }
                #[inline(always)]
                unsafe fn store(self, p: *mut $r) {
                    // SAFETY: as `load`, for `W` writable elements.
                    unsafe { $store(p, self.0) }
                }
                #[inline(always)]
                unsafe fn fma(self, b: Self, c: Self) -> Self {
                    // SAFETY: the caller guarantees the instruction set.
                    $name(unsafe { $fma(self.0, b.0, c.0) })
                }
                #[inline(always)]
                unsafe fn mul(self, b: Self) -> Self {
                    // SAFETY: as `fma`.
                    $name(unsafe { $mul(self.0, b.0) })
                }
                #[inline(always)]
                unsafe fn add(self, b: Self) -> Self {
                    // SAFETY: as `fma`.
                    $name(unsafe { $add(self.0, b.0) })
                }
                #[inline(always)]
                unsafe fn max_nan(self, b: Self) -> Self {
                    // SAFETY: as `fma`.
                    $name(unsafe { $max(self.0, b.0) })
                }
            }
        };
    }

    lanes!(
        F32x16,
        "16 f32 lanes (AVX-512F).",
        f32,
        __m512,
        16,
        4,
        _mm512_set1_ps,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_fmadd_ps,
        _mm512_mul_ps,
        _mm512_add_ps,
        max_f32x16
    );
    lanes!(
        F64x8,
        "8 f64 lanes (AVX-512F).",
        f64,
        __m512d,
        8,
        4,
        _mm512_set1_pd,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_fmadd_pd,
        _mm512_mul_pd,
        _mm512_add_pd,
        max_f64x8
    );
    lanes!(
        F32x8,
        "8 f32 lanes (AVX2 + FMA).",
        f32,
        __m256,
        8,
        2,
        _mm256_set1_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_fmadd_ps,
        _mm256_mul_ps,
        _mm256_add_ps,
        max_f32x8
    );
    lanes!(
        F64x4,
        "4 f64 lanes (AVX2 + FMA).",
        f64,
        __m256d,
        4,
        2,
        _mm256_set1_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_fmadd_pd,
        _mm256_mul_pd,
        _mm256_add_pd,
        max_f64x4
    );
}

/// A compute type with its vector types per instruction set.
pub(crate) trait LaneReal: LaneMath {
    /// The AVX-512 vector.
    type V512: Lanes<R = Self>;
    /// The AVX2 vector.
    type V256: Lanes<R = Self>;
}

#[cfg(target_arch = "x86_64")]
impl LaneReal for f32 {
    type V512 = x86::F32x16;
    type V256 = x86::F32x8;
}

#[cfg(target_arch = "x86_64")]
impl LaneReal for f64 {
    type V512 = x86::F64x8;
    type V256 = x86::F64x4;
}

#[cfg(not(target_arch = "x86_64"))]
impl LaneReal for f32 {
    type V512 = One<f32>;
    type V256 = One<f32>;
}

#[cfg(not(target_arch = "x86_64"))]
impl LaneReal for f64 {
    type V512 = One<f64>;
    type V256 = One<f64>;
}

/// A computation generic over the vector type (Rust has no generic closures).
pub(crate) trait LaneBody<R: LaneReal> {
    /// What the computation returns.
    type Out;
    /// Runs with vectors `V`; must be `#[inline(always)]` so that it is compiled for the
    /// instruction set of the [`run_lanes`] branch that calls it.
    fn run<V: Lanes<R = R>>(self) -> Self::Out;
}

/// Runs `body` with the vector type of the current [`simd_level`], compiled with that
/// level's target features (so the plain loops in it vectorise for that level too).
#[inline(always)]
pub(crate) fn run_lanes<R: LaneReal, B: LaneBody<R>>(body: B) -> B::Out {
    match simd_level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `simd_level` never exceeds what the CPU supports.
        SimdLevel::Avx512 => unsafe { run_avx512(body) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        SimdLevel::Avx2 => unsafe { run_avx2(body) },
        _ => body.run::<One<R>>(),
    }
}

/// # Safety
/// The CPU must support AVX-512F, AVX2, FMA and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma,f16c")]
unsafe fn run_avx512<R: LaneReal, B: LaneBody<R>>(body: B) -> B::Out {
    body.run::<R::V512>()
}

/// # Safety
/// The CPU must support AVX2, FMA and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn run_avx2<R: LaneReal, B: LaneBody<R>>(body: B) -> B::Out {
    body.run::<R::V256>()
}

/// The contract's `max_nan` (NaN wins, `max(-0, +0) = +0`, order-free) without
/// branches, so a loop of it vectorises: equal zeros and NaNs take `a + b` (which is
/// `+0` unless both are `-0`, and NaN when either is NaN); otherwise the larger.
#[inline(always)]
pub(crate) fn max_l<R: Real>(a: R, b: R) -> R {
    let larger = if b > a { b } else { a };
    let special = (a == R::ZERO && b == R::ZERO) || a.is_nan() || b.is_nan();
    if special { a + b } else { larger }
}

#[cfg(test)]
mod tests {
    use super::{LaneBody, LaneReal, Lanes, One, max_l};
    use crate::kernels::simd::{levels, set_thread_simd_limit};
    use gpukit_core::numeric::max_nan;

    /// Every pair of `xs` through `V::max_nan`, lane by lane, as `(a, b, result)`.
    struct VecMax<'a, R>(&'a [R]);

    impl<R: LaneReal> LaneBody<R> for VecMax<'_, R> {
        type Out = Vec<(R, R, R)>;
        #[inline(always)]
        fn run<V: Lanes<R = R>>(self) -> Self::Out {
            let pairs: Vec<(R, R)> = self
                .0
                .iter()
                .flat_map(|&a| self.0.iter().map(move |&b| (a, b)))
                .collect();
            let mut out = Vec::new();
            for chunk in pairs.chunks(V::W) {
                let mut a: Vec<R> = chunk.iter().map(|p| p.0).collect();
                let mut b: Vec<R> = chunk.iter().map(|p| p.1).collect();
                a.resize(V::W, R::ZERO);
                b.resize(V::W, R::ZERO);
                let mut r = vec![R::ZERO; V::W];
                // SAFETY: `run_lanes` picked `V` for the CPU's level; each buffer has `W`
                // elements.
                unsafe {
                    V::load(a.as_ptr())
                        .max_nan(V::load(b.as_ptr()))
                        .store(r.as_mut_ptr())
                };
                out.extend(chunk.iter().zip(r).map(|(&(a, b), r)| (a, b, r)));
            }
            out
        }
    }

    #[test]
    fn vector_max_nan_is_max_nan_at_every_level() {
        let xs = [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            -3.5,
            2.5,
        ];
        let xf: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let same = |x: f64, y: f64| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits();
        for level in levels() {
            set_thread_simd_limit(Some(level));
            for (a, b, r) in super::run_lanes(VecMax(&xs)) {
                assert!(same(r, max_nan(a, b)), "{level:?} f64 {a} {b}: {r}");
            }
            for (a, b, r) in super::run_lanes(VecMax(&xf)) {
                let want = max_nan(a, b);
                assert!(same(r as f64, want as f64), "{level:?} f32 {a} {b}: {r}");
            }
            let one = VecMax(&xs[..2]).run::<One<f64>>();
            assert_eq!(one.len(), 4);
        }
        set_thread_simd_limit(None);
    }

    #[test]
    fn max_l_is_max_nan() {
        let xs = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::MAX,
            -3.5,
        ];
        for &a in &xs {
            for &b in &xs {
                let (x, y) = (max_l(a, b), max_nan(a, b));
                assert!(
                    (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
                    "{a} {b}"
                );
                let (x, y) = (max_l(a as f64, b as f64), max_nan(a as f64, b as f64));
                assert!((x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits());
            }
        }
    }
}
