//! CPU kernels of the normalisations added to the `norm` group: `layer_norm_ex` (optional
//! bias, optional mean / inverse-std outputs), `group_norm` and `rms_norm`. The order of
//! operations of each is in [`gpukit_core::abi::norm_ext`] and docs/ops/norm.md.
//!
//! Same structure and speed class as the `layer_norm` kernel: rows in parallel (rayon,
//! [`PAR_GRAIN`] elements per task), each row loaded once into the compute type, the
//! mean and the (centred) sum of squares by [`shape_sum`] / [`shape_dot`] (the
//! reduction shape with 32 SIMD lanes), the output by a plain loop in the detected SIMD
//! level.

use gpukit_core::half::{bf16, f16};
use gpukit_core::numeric::Real;
use gpukit_core::{DType, Element, Error, Result};

use super::norm::{for_tasks, source};
use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
use crate::kernels::reduce::{CpuFloat, shape_dot, shape_sum};
use crate::kernels::simd::{SimdLevel, dispatch, simd_level};
use crate::kernels::softmax::SoftReal;
use crate::kernels::{PAR_GRAIN, input_slice, mul, out_range};

/// Loads `n` elements of `b` (read only) into the compute type.
///
/// # Safety
/// `b` holds at least `n` elements and nothing writes it during the launch.
unsafe fn load_param<T: CpuFloat + Element>(
    b: &RawBuf<'_, T>,
    out: &RawBuf<'_, T>,
    n: usize,
) -> Vec<T::Real> {
    // SAFETY: the caller's contract; copied if it overlaps out (the op forbids it).
    let v = unsafe { input_slice(b, n, &[out_range(out)]) };
    v.iter().map(|e| e.load()).collect()
}

/// Runs `row(r, e, o)` for every row `r < rows` of `n` elements, in parallel: `e` holds
/// the row loaded into the compute type, `o` the output row (which may be the input,
/// already loaded). `row` runs in the detected SIMD level.
fn for_rows<T: CpuFloat + Element>(
    out: &RawBuf<'_, T>,
    x: &RawBuf<'_, T>,
    rows: usize,
    n: usize,
    row: impl Fn(usize, &mut [T::Real], &mut [T]) + Sync + Send,
) {
    // SAFETY: both hold rows * n elements (checked by every caller); only that range of
    // out is written.
    let src = unsafe { source(out, x, rows * n) };
    let src = src.as_deref();
    let per_task = (PAR_GRAIN / n.max(1)).max(1);
    for_tasks(rows.div_ceil(per_task), |t| {
        let mut e: Vec<T::Real> = vec![<T::Real as Real>::ZERO; n];
        for r in t * per_task..((t + 1) * per_task).min(rows) {
            // SAFETY: rows are disjoint across tasks and inside out[..rows * n]; in
            // place, the row is loaded into `e` before it is written.
            let o = unsafe { out.slice_mut(r * n, (r + 1) * n) };
            dispatch(
                #[inline(always)]
                || {
                    match src {
                        Some(x) => T::load_slice(&x[r * n..(r + 1) * n], &mut e),
                        None => T::load_slice(o, &mut e),
                    }
                    row(r, &mut e, o);
                },
            );
        }
    });
}

/// Layer norm's statistics of a loaded row: returns `(mean, den)` and leaves `e_j =
/// x_j - mean` in `e` (the variance's and the output's `d_j`).
#[inline(always)]
fn centre<R: SoftReal>(level: SimdLevel, e: &mut [R], count: R, eps: R) -> (R, R) {
    let mean = shape_sum(level, e) / count;
    for v in e.iter_mut() {
        *v = *v - mean;
    }
    let var = shape_dot(level, e, e) / count;
    (mean, (var + eps).sqrt())
}

// ---------------------------------------------------------------------------------------
// layer_norm_ex. Args: out, x, scale, bias, mean, inv_std, rows, n, has_bias, has_stats,
// eps.
// ---------------------------------------------------------------------------------------

fn flag(args: &BuiltinArgs<'_>, index: usize) -> Result<bool> {
    match args.i64(index)? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(Error::Argument {
            kernel: args.kernel().to_string(),
            index,
            reason: format!("flag {v} is not 0 or 1"),
        }),
    }
}

fn layer_norm_ex<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (rows, n) = (args.usize(6)?, args.usize(7)?);
    let (has_bias, has_stats) = (flag(args, 8)?, flag(args, 9)?);
    let eps = <T::Real as Real>::from_f64(args.f64(10)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let scale = args.buf::<T>(2)?;
    let total = mul(args, 7, rows, n)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    args.need(2, &scale, n)?;
    let bias = if has_bias {
        let b = args.buf::<T>(3)?;
        args.need(3, &b, n)?;
        Some(b)
    } else {
        None
    };
    let stats = if has_stats {
        let (m, s) = (args.buf::<T::Real>(4)?, args.buf::<T::Real>(5)?);
        args.need(4, &m, rows)?;
        args.need(5, &s, rows)?;
        Some((m, s))
    } else {
        None
    };
    if rows == 0 {
        return Ok(());
    }
    let count = <T::Real as Real>::from_f64(n as f64);
    if n == 0 {
        // No row to read: mean = 0 / count = 0 / 0 and inv_std = 1 / sqrt(NaN), NaN.
        if let Some((m, s)) = &stats {
            let nan = <T::Real as Real>::ZERO / count;
            // SAFETY: both hold rows elements (checked); nothing else runs.
            unsafe {
                m.slice_mut(0, rows).fill(nan);
                s.slice_mut(0, rows).fill(nan);
            }
        }
        return Ok(());
    }
    // (scale, bias) per element; no bias is -0.0 (fma(t, s, -0.0) = t * s exactly).
    let sb: Vec<(T::Real, T::Real)> = {
        // SAFETY: scale and bias hold n elements (checked) and are only read.
        let s = unsafe { load_param(&scale, &out, n) };
        let b = match &bias {
            // SAFETY: as above.
            Some(b) => unsafe { load_param(b, &out, n) },
            None => vec![-<T::Real as Real>::ZERO; n],
        };
        s.into_iter().zip(b).collect()
    };
    let level = simd_level();
    let sb = &sb;
    let stats = &stats;
    for_rows(
        &out,
        &x,
        rows,
        n,
        #[inline(always)]
        |r, e, o| {
            let (mean, den) = centre(level, e, count, eps);
            for ((d, &v), &(sc, bi)) in o.iter_mut().zip(e.iter()).zip(sb) {
                *d = T::store((v / den).fma(sc, bi));
            }
            if let Some((m, s)) = stats {
                // SAFETY: row r's statistics are written by this task alone; the
                // buffers hold rows elements (checked) and the op forbids any overlap.
                unsafe {
                    m.slice_mut(r, r + 1)[0] = mean;
                    s.slice_mut(r, r + 1)[0] = <T::Real as Real>::ONE / den;
                }
            }
        },
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// group_norm. Args: out, x, scale, bias, batch, c, s, groups, eps.
// ---------------------------------------------------------------------------------------

fn group_norm<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (batch, c, s, groups) = (
        args.usize(4)?,
        args.usize(5)?,
        args.usize(6)?,
        args.usize(7)?,
    );
    let eps = <T::Real as Real>::from_f64(args.f64(8)?);
    if groups == 0 || !c.is_multiple_of(groups) {
        return Err(Error::Argument {
            kernel: args.kernel().to_string(),
            index: 7,
            reason: format!("groups {groups} does not divide c = {c}"),
        });
    }
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let planes = mul(args, 5, batch, c)?;
    let total = mul(args, 6, planes, s)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    let (scale, bias) = (args.buf::<T>(2)?, args.buf::<T>(3)?);
    args.need(2, &scale, c)?;
    args.need(3, &bias, c)?;
    if total == 0 {
        return Ok(());
    }
    // SAFETY: scale and bias hold c elements (checked) and are only read.
    let sb: Vec<(T::Real, T::Real)> = unsafe { load_param(&scale, &out, c) }
        .into_iter()
        // SAFETY: as above.
        .zip(unsafe { load_param(&bias, &out, c) })
        .collect();
    let cg = c / groups;
    let m = cg * s;
    let count = <T::Real as Real>::from_f64(m as f64);
    let level = simd_level();
    let sb = &sb;
    for_rows(
        &out,
        &x,
        batch * groups,
        m,
        #[inline(always)]
        |r, e, o| {
            let (_, den) = centre(level, e, count, eps);
            let k0 = (r % groups) * cg;
            for (k, (oc, ec)) in o.chunks_exact_mut(s).zip(e.chunks_exact(s)).enumerate() {
                let (sc, bi) = sb[k0 + k];
                for (d, &v) in oc.iter_mut().zip(ec) {
                    *d = T::store((v / den).fma(sc, bi));
                }
            }
        },
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// rms_norm. Args: out, x, scale, rows, n, eps.
// ---------------------------------------------------------------------------------------

fn rms_norm<T: CpuFloat + Element>(args: &BuiltinArgs<'_>) -> Result<()>
where
    T::Real: SoftReal,
{
    let (rows, n) = (args.usize(3)?, args.usize(4)?);
    let eps = <T::Real as Real>::from_f64(args.f64(5)?);
    let out = args.buf::<T>(0)?;
    let x = args.buf::<T>(1)?;
    let scale = args.buf::<T>(2)?;
    let total = mul(args, 4, rows, n)?;
    args.need(0, &out, total)?;
    args.need(1, &x, total)?;
    args.need(2, &scale, n)?;
    if total == 0 {
        return Ok(());
    }
    // SAFETY: scale holds n elements (checked) and is only read.
    let sc = unsafe { load_param(&scale, &out, n) };
    let count = <T::Real as Real>::from_f64(n as f64);
    let level = simd_level();
    let sc = &sc;
    for_rows(
        &out,
        &x,
        rows,
        n,
        #[inline(always)]
        |_, e, o| {
            let den = (shape_dot(level, e, e) / count + eps).sqrt();
            for ((d, &v), &w) in o.iter_mut().zip(e.iter()).zip(sc) {
                *d = T::store((v / den) * w);
            }
        },
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Registration.
// ---------------------------------------------------------------------------------------

/// The entry point of `op` at `dtype`.
fn entry(op: &str, dtype: DType) -> Option<BuiltinFn> {
    macro_rules! floats {
        ($f:ident) => {
            match dtype {
                DType::F32 => $f::<f32> as BuiltinFn,
                DType::F64 => $f::<f64>,
                DType::F16 => $f::<f16>,
                DType::BF16 => $f::<bf16>,
                DType::I64 | DType::I32 => return None,
            }
        };
    }
    Some(match op {
        "layer_norm_ex" => floats!(layer_norm_ex),
        "group_norm" => floats!(group_norm),
        "rms_norm" => floats!(rms_norm),
        _ => return None,
    })
}

/// `(name, entry point)` for every kernel of [`gpukit_core::abi::norm_ext::KERNELS`].
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = Vec::new();
    for sig in gpukit_core::abi::norm_ext::KERNELS {
        for &d in sig.dtypes {
            if let Some(f) = entry(sig.op, d) {
                v.push((gpukit_core::abi::kernel_name(sig.op, d), f));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_norm_ext_kernel_is_registered() {
        for sig in gpukit_core::abi::norm_ext::KERNELS {
            for &d in sig.dtypes {
                assert!(entry(sig.op, d).is_some(), "{}_{d}", sig.op);
            }
        }
    }
}
