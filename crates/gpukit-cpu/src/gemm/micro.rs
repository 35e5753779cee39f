//! The register-tiled micro-kernels, one family per instruction set.
//!
//! A micro-kernel computes an `MR × NR` tile of partial sums from a packed A panel
//! (`[MR][kc]`, row-major: packing A is a plain copy) and a packed B panel
//! (`[kc][NR]`, or NR-wide runs of B's own rows, at a stride `ldb` or at per-row
//! offsets): for every `r < MR`, `j < NR`, `acc = fma(a[r][t], b[t][j], acc)` for
//! `t = 0..kc` ascending, where `acc` starts as
//! `+0.0` (the first k-block) or as the stored partial `c[r*ldc + j]` (later k-blocks).
//! Each output lives in one vector lane of one accumulator, so the chain is exactly the
//! contract's scalar chain, whatever the vector width.

use gpukit_core::numeric::Real;

use crate::kernels::simd::SimdLevel;

/// The micro-kernel signature: `(kc, a, b, ldb, boffs, c, ldc, load)`; see
/// [`Kernel::run`]. Each kernel is built twice: B's rows at the stride `ldb` (`boffs`
/// unused) and at the offsets `boffs` (`ldb` unused).
pub(crate) type MicroFn<R> =
    unsafe fn(usize, *const R, *const R, usize, *const usize, *mut R, usize, bool);

/// A micro-kernel and its tile.
#[derive(Clone, Copy)]
pub(crate) struct Kernel<R> {
    /// Rows of the tile (the broadcast operand A).
    pub(crate) mr: usize,
    /// Columns of the tile (the vector operand B).
    pub(crate) nr: usize,
    /// B's rows at a stride.
    f: MicroFn<R>,
    /// The same tile and chains with B's rows at per-row offsets.
    g: MicroFn<R>,
}

/// Where B's rows lie for one micro-kernel call.
#[derive(Clone, Copy)]
pub(crate) enum BRows {
    /// Row `t` at `b + t*ldb` (`ldb = nr`: a packed panel).
    Stride(usize),
    /// Row `t` at `b + boffs[t]`: an implicit GEMM reading its operand in place, rows
    /// at uneven distances (a convolution's taps). The same operations in the same
    /// order, so the same bits as on a packed panel of the same values.
    Offsets(*const usize),
}

impl<R> Kernel<R> {
    /// Runs the kernel on one tile.
    ///
    /// # Safety
    /// `a` holds `mr * kc` (`[mr][kc]`) readable values and `b` `kc` rows of `nr`
    /// readable values where `rows` places them (with [`BRows::Offsets`], `kc` offsets
    /// are readable there); `c` is valid for reads and writes of `mr` rows of `nr`
    /// values at stride `ldc`, and nothing else accesses them during the call. With
    /// `load` false the chains start from `+0.0` and `c` is only written.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn run(
        &self,
        kc: usize,
        a: *const R,
        b: *const R,
        rows: BRows,
        c: *mut R,
        ldc: usize,
        load: bool,
    ) {
        // SAFETY: the caller's contract is the kernel's; the kernel was picked for a
        // level the CPU supports (see `GemmReal::kernel`).
        unsafe {
            match rows {
                BRows::Stride(ldb) => (self.f)(kc, a, b, ldb, std::ptr::null(), c, ldc, load),
                BRows::Offsets(boffs) => (self.g)(kc, a, b, 0, boffs, c, ldc, load),
            }
        }
    }
}

/// The portable micro-kernel: B's rows at `b + boffs[t]` when `ROWS`, else at
/// `b + t*ldb`.
///
/// # Safety
/// As [`Kernel::run`] (B's rows as [`BRows::Offsets`] with `ROWS`, else
/// [`BRows::Stride`]) with `mr = MR`, `nr = NR`.
#[allow(clippy::too_many_arguments)]
unsafe fn micro_scalar<R: Real, const MR: usize, const NR: usize, const ROWS: bool>(
    kc: usize,
    a: *const R,
    b: *const R,
    ldb: usize,
    boffs: *const usize,
    c: *mut R,
    ldc: usize,
    load: bool,
) {
    let mut acc = [[R::ZERO; NR]; MR];
    // SAFETY: the bounds are the function's contract.
    unsafe {
        if load {
            for (r, row) in acc.iter_mut().enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = *c.add(r * ldc + j);
                }
            }
        }
        for t in 0..kc {
            let bp = if ROWS {
                b.add(*boffs.add(t))
            } else {
                b.add(t * ldb)
            };
            for (r, row) in acc.iter_mut().enumerate() {
                let x = *a.add(r * kc + t);
                for (j, v) in row.iter_mut().enumerate() {
                    *v = x.fma(*bp.add(j), *v);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                *c.add(r * ldc + j) = *v;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    macro_rules! micro {
        ($name:ident, $feat:literal, $t:ty, $v:ty, $w:literal, $mr:literal, $nv:literal,
         $load:ident, $store:ident, $set1:ident, $zero:ident, $fmadd:ident) => {
            /// A `$mr` x `$nv * $w` micro-kernel (see `Kernel::run`; with `ROWS`, B's
            /// rows at `b + boffs[t]`, as `BRows::Offsets`).
            ///
            /// # Safety
            /// As `Kernel::run`, and the CPU supports the target features.
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn $name<const ROWS: bool>(
                kc: usize,
                a: *const $t,
                b: *const $t,
                ldb: usize,
                boffs: *const usize,
                c: *mut $t,
                ldc: usize,
                load: bool,
            ) {
                const MR: usize = $mr;
                const NV: usize = $nv;
                // SAFETY: `a` holds MR*kc ([MR][kc]), `b` kc rows of NR values at stride
                // ldb (with ROWS: at the offsets boffs[t]); `c` holds MR rows of NR
                // values at stride ldc (the contract); unaligned loads and stores.
                unsafe {
                    let mut acc: [[$v; NV]; MR] = [[$zero(); NV]; MR];
                    if load {
                        for r in 0..MR {
                            for v in 0..NV {
                                acc[r][v] = $load(c.add(r * ldc + v * $w));
                            }
                        }
                    }
                    let mut ap = a;
                    let mut bp = b;
                    for t in 0..kc {
                        if ROWS {
                            bp = b.add(*boffs.add(t));
                        }
                        let mut bv: [$v; NV] = [$zero(); NV];
                        for v in 0..NV {
                            bv[v] = $load(bp.add(v * $w));
                        }
                        for r in 0..MR {
                            let x = $set1(*ap.add(r * kc));
                            for v in 0..NV {
                                acc[r][v] = $fmadd(x, bv[v], acc[r][v]);
                            }
                        }
                        ap = ap.add(1);
                        if !ROWS {
                            bp = bp.add(ldb);
                        }
                    }
                    for r in 0..MR {
                        for v in 0..NV {
                            $store(c.add(r * ldc + v * $w), acc[r][v]);
                        }
                    }
                }
            }
        };
    }

    micro!(
        f32_avx512_14x32,
        "avx512f,fma",
        f32,
        __m512,
        16,
        14,
        2,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_setzero_ps,
        _mm512_fmadd_ps
    );
    micro!(
        f32_avx512_8x48,
        "avx512f,fma",
        f32,
        __m512,
        16,
        8,
        3,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_setzero_ps,
        _mm512_fmadd_ps
    );
    micro!(
        f64_avx512_14x16,
        "avx512f,fma",
        f64,
        __m512d,
        8,
        14,
        2,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_setzero_pd,
        _mm512_fmadd_pd
    );
    micro!(
        f64_avx512_8x24,
        "avx512f,fma",
        f64,
        __m512d,
        8,
        8,
        3,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_setzero_pd,
        _mm512_fmadd_pd
    );
    micro!(
        f32_avx2_6x16,
        "avx2,fma",
        f32,
        __m256,
        8,
        6,
        2,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_setzero_ps,
        _mm256_fmadd_ps
    );
    micro!(
        f64_avx2_6x8,
        "avx2,fma",
        f64,
        __m256d,
        4,
        6,
        2,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_set1_pd,
        _mm256_setzero_pd,
        _mm256_fmadd_pd
    );
}

/// Compute types with micro-kernels.
pub(crate) trait GemmReal: Real + super::ScratchReal {
    /// The micro-kernel for `level` and a product with `m` rows (the tile whose row
    /// count wastes least on `m`, where the level has a choice).
    fn kernel(level: SimdLevel, m: usize) -> Kernel<Self>;
}

const fn k<R>(mr: usize, nr: usize, f: MicroFn<R>, g: MicroFn<R>) -> Kernel<R> {
    Kernel { mr, nr, f, g }
}

/// Whether `m` rows waste less padding in tiles of `narrow` rows than of `wide`
/// (the narrow tile is used then).
#[cfg(target_arch = "x86_64")]
fn prefer_narrow(m: usize, narrow: usize, wide: usize) -> bool {
    // Padded rows relative to m; the wide tile is faster per row, so it wins ties
    // within ~3%.
    let pad = |mr: usize| m.div_ceil(mr) * mr;
    (pad(narrow) as f64) * 1.03 < pad(wide) as f64
}

impl GemmReal for f32 {
    fn kernel(level: SimdLevel, m: usize) -> Kernel<f32> {
        match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 if prefer_narrow(m, 8, 14) => k(
                8,
                48,
                x86::f32_avx512_8x48::<false>,
                x86::f32_avx512_8x48::<true>,
            ),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => k(
                14,
                32,
                x86::f32_avx512_14x32::<false>,
                x86::f32_avx512_14x32::<true>,
            ),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => k(
                6,
                16,
                x86::f32_avx2_6x16::<false>,
                x86::f32_avx2_6x16::<true>,
            ),
            _ => k(
                4,
                8,
                micro_scalar::<f32, 4, 8, false>,
                micro_scalar::<f32, 4, 8, true>,
            ),
        }
    }
}

impl GemmReal for f64 {
    fn kernel(level: SimdLevel, m: usize) -> Kernel<f64> {
        match level {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 if prefer_narrow(m, 8, 14) => k(
                8,
                24,
                x86::f64_avx512_8x24::<false>,
                x86::f64_avx512_8x24::<true>,
            ),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => k(
                14,
                16,
                x86::f64_avx512_14x16::<false>,
                x86::f64_avx512_14x16::<true>,
            ),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => k(6, 8, x86::f64_avx2_6x8::<false>, x86::f64_avx2_6x8::<true>),
            _ => k(
                4,
                4,
                micro_scalar::<f64, 4, 4, false>,
                micro_scalar::<f64, 4, 4, true>,
            ),
        }
    }
}
