//! Checks of what index-bearing buffers HOLD: the `dims`/strides of the broadcast and
//! strided copies, the `idx` of gather and scatter. [`check_args`](super::check_args)
//! checks every buffer's length against the scalars; these check the contents the
//! kernels index with, so one lying content is refused alike on every backend that can
//! read it before a launch.
//!
//! The CPU kernels call the per-op functions ([`broadcast_dims`], [`strided_layout`],
//! [`resolve_indices`]) on the contents they read (and index with what they return);
//! the emulator, whose device memory is host memory, calls [`check_contents`] before
//! it runs the PTX. Both therefore return the same error for the same launch. The
//! CUDA backend cannot read device memory cheaply: there the ops validate before they
//! launch (docs/reliability.md, known limits).
//!
//! `check_index` (its result is the answer, not a fault) and `eos_gather` (its ids
//! pick a row by argmax, always in range) have no content to refuse.

use crate::numeric::resolve_index;
use crate::{Error, KernelArg, Result};

fn err<T>(kernel: &str, index: usize, reason: String) -> Result<T> {
    Err(Error::Argument {
        kernel: kernel.to_string(),
        index,
        reason,
    })
}

/// The index range `[min, max]` an operand is read at, given dims and strides (`None`
/// when it overflows i128).
fn offset_range(dims: &[usize], strides: &[i64]) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in dims.iter().zip(strides) {
        let span = (d as i128 - 1).checked_mul(s as i128)?;
        if span < 0 {
            lo = lo.checked_add(span)?;
        } else {
            hi = hi.checked_add(span)?;
        }
    }
    Some((lo, hi))
}

/// The contents of a broadcast binary launch (`{add,sub,mul,div}_bc`: args out, a, b,
/// dims, astr, bstr, ndim, n_out): `dims` non-negative with product `n_out`, and —
/// for a non-empty output — every element of `a` (`a_len` elements) and `b` read at
/// `Σ coord·stride` inside its buffer. Returns the dims as `usize`.
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault (3 for a
/// negative or overflowing dim, 7 for a product other than `n_out`, 1 or 2 for strides
/// reading outside `a` or `b`).
pub fn broadcast_dims(
    kernel: &str,
    dims: &[i64],
    astr: &[i64],
    bstr: &[i64],
    n_out: usize,
    a_len: usize,
    b_len: usize,
) -> Result<Vec<usize>> {
    // As long as `dims` itself (which is in memory): bounded by the launch's buffers.
    let mut out = Vec::with_capacity(dims.len());
    let mut total: usize = 1;
    for &d in dims {
        let Ok(d) = usize::try_from(d) else {
            return err(kernel, 3, format!("negative dimension {d}"));
        };
        total = match total.checked_mul(d) {
            Some(t) => t,
            None => return err(kernel, 3, "the dimensions' product overflows".into()),
        };
        out.push(d);
    }
    if total != n_out {
        return err(
            kernel,
            7,
            format!("n_out {n_out} is not the product of dims {dims:?} ({total})"),
        );
    }
    if n_out == 0 {
        return Ok(out);
    }
    for (idx, len, strides) in [(1usize, a_len, astr), (2, b_len, bstr)] {
        match offset_range(&out, strides) {
            Some((lo, hi)) if lo >= 0 && hi < len as i128 => {}
            _ => {
                return err(
                    kernel,
                    idx,
                    format!(
                        "strides {strides:?} over dims {dims:?} read outside the buffer's {len} elements"
                    ),
                );
            }
        }
    }
    Ok(out)
}

/// A checked strided-copy layout: dims and strides as `usize`, and how many leading
/// elements of the source the copy reads (`n_x`: the last element read plus one; 0 for
/// an empty copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StridedLayout {
    /// The output's dims.
    pub dims: Vec<usize>,
    /// The source stride of each dim, in elements.
    pub strides: Vec<usize>,
    /// Source elements the copy reads from: `offset + Σ (dim − 1)·stride + 1`.
    pub n_x: usize,
}

/// The contents of a strided copy (`strided_copy`: args out, x, dims, strides, ndim,
/// offset, n_out): dims and strides non-negative, the dims' product `n_out`, and the
/// last element read, `offset + Σ (dim − 1)·stride`, inside `x` (`x_len` elements).
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault (2 for a
/// negative or overflowing dim or stride, 6 for a product other than `n_out`, 1 for a
/// read outside `x`).
pub fn strided_layout(
    kernel: &str,
    dims: &[i64],
    strides: &[i64],
    offset: usize,
    n_out: usize,
    x_len: usize,
) -> Result<StridedLayout> {
    let mut d_out = Vec::with_capacity(dims.len().min(64));
    let mut s_out = Vec::with_capacity(dims.len().min(64));
    let mut total = 1usize;
    for (&d, &s) in dims.iter().zip(strides) {
        let (Ok(d), Ok(s)) = (usize::try_from(d), usize::try_from(s)) else {
            return err(
                kernel,
                2,
                format!("negative dim or stride in {dims:?} / {strides:?}"),
            );
        };
        total = match total.checked_mul(d) {
            Some(t) => t,
            None => return err(kernel, 2, format!("size {total} * {d} overflows")),
        };
        d_out.push(d);
        s_out.push(s);
    }
    if total != n_out {
        return err(
            kernel,
            6,
            format!("n_out {n_out} is not the product of {dims:?}"),
        );
    }
    if n_out == 0 {
        return Ok(StridedLayout {
            dims: d_out,
            strides: s_out,
            n_x: 0,
        });
    }
    let mut last = Some(offset);
    for (&d, &s) in d_out.iter().zip(&s_out) {
        last = last.and_then(|l| (d - 1).checked_mul(s).and_then(|v| v.checked_add(l)));
    }
    match last {
        Some(l) if l < x_len => Ok(StridedLayout {
            dims: d_out,
            strides: s_out,
            n_x: l + 1,
        }),
        _ => err(
            kernel,
            1,
            format!("reads outside the buffer's {x_len} elements"),
        ),
    }
}

/// Resolves every index of a gather or scatter against `axis_len` (negative counts
/// from the end); returns the resolved indices.
///
/// Errors: [`Error::IndexOutOfRange`] naming `op` and the first index outside
/// `[-axis_len, axis_len)`; [`Error::OutOfMemory`] if the result cannot be allocated.
pub fn resolve_indices(op: &str, idx: &[i64], axis_len: usize) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    let requested = idx.len().saturating_mul(std::mem::size_of::<usize>());
    out.try_reserve_exact(idx.len())
        .map_err(|_| Error::OutOfMemory {
            requested,
            available: usize::try_from(crate::host_memory().available).unwrap_or(usize::MAX),
        })?;
    for &i in idx {
        match resolve_index(i, axis_len) {
            Some(j) => out.push(j),
            None => {
                return Err(Error::IndexOutOfRange {
                    op: op.to_string(),
                    index: i,
                    axis_len,
                });
            }
        }
    }
    Ok(out)
}

/// The i64 scalar at `index` as usize (0 if it is not one: [`super::check_args`] has
/// refused that already).
fn scalar(args: &[KernelArg], index: usize) -> usize {
    match args.get(index) {
        Some(&KernelArg::I64(v)) => usize::try_from(v).unwrap_or(0),
        _ => 0,
    }
}

/// Elements of the buffer argument at `index` of an element of `size` bytes.
fn elems(args: &[KernelArg], index: usize, size: usize) -> usize {
    match args.get(index) {
        Some(&KernelArg::Buffer { bytes, .. }) => bytes / size.max(1),
        _ => 0,
    }
}

/// Checks the contents of the index-bearing buffers of built-in launch `name`
/// (`{op}_{dtype}`), the same checks the CPU kernels apply: the broadcast ops' `dims`
/// and strides, the strided copy's `dims` and `strides`, the indices of gather and
/// scatter. Call it after [`super::check_args`] accepted the launch (it relies on the
/// kinds and lengths that checks). Names without index-bearing contents pass.
///
/// `read(index, n)` returns the first `n` i64 elements of buffer argument `index`; it
/// is called only with `n` at most the buffer's length.
///
/// Errors: those of [`broadcast_dims`], [`strided_layout`] and [`resolve_indices`];
/// whatever `read` returns.
pub fn check_contents(
    name: &str,
    args: &[KernelArg],
    mut read: impl FnMut(usize, usize) -> Result<Vec<i64>>,
) -> Result<()> {
    let Some((op, d)) = name.rsplit_once('_') else {
        return Ok(());
    };
    let Some(dtype) = crate::DType::ALL.into_iter().find(|t| t.name() == d) else {
        return Ok(());
    };
    let size = dtype.size();
    // Reads `n` i64 of argument `index`, refusing a count past the buffer (a caller
    // that skipped check_args).
    let mut get = |index: usize, n: usize| -> Result<Vec<i64>> {
        if elems(args, index, 8) < n {
            return err(
                name,
                index,
                format!("the buffer holds fewer than {n} indices"),
            );
        }
        read(index, n)
    };
    match op {
        "add_bc" | "sub_bc" | "mul_bc" | "div_bc" | "pow_bc" => {
            let (ndim, n_out) = (scalar(args, 6), scalar(args, 7));
            let dims = get(3, ndim)?;
            let astr = get(4, ndim)?;
            let bstr = get(5, ndim)?;
            let (a_len, b_len) = (elems(args, 1, size), elems(args, 2, size));
            broadcast_dims(name, &dims, &astr, &bstr, n_out, a_len, b_len).map(|_| ())
        }
        "strided_copy" => {
            let (ndim, offset, n_out) = (scalar(args, 4), scalar(args, 5), scalar(args, 6));
            let dims = get(2, ndim)?;
            let strides = get(3, ndim)?;
            strided_layout(name, &dims, &strides, offset, n_out, elems(args, 1, size)).map(|_| ())
        }
        "reduce_axes" => {
            let (ndim, nkeep) = (scalar(args, 4), scalar(args, 5));
            let dims = get(2, ndim)?;
            let strides = get(3, ndim)?;
            let (n_out, n_red) = (scalar(args, 6), scalar(args, 7));
            let x_len = elems(args, 1, size);
            super::reduce_axes::reduce_layout(name, &dims, &strides, nkeep, n_out, n_red, x_len)
                .map(|_| ())
        }
        "resize" => {
            let (ndim, k, rows) = (scalar(args, 5), scalar(args, 6), scalar(args, 7));
            let (n_out, interp) = (scalar(args, 8), scalar(args, 9) == 1);
            let dims = get(2, 2 * ndim)?;
            let taps = get(3, rows.saturating_mul(1 + k))?;
            let x_len = elems(args, 1, size);
            super::resize::resize_layout(name, &dims, &taps, k, rows, n_out, interp, x_len)
                .map(|_| ())
        }
        "gather" => {
            let idx = get(2, scalar(args, 6))?;
            resolve_indices("gather", &idx, scalar(args, 4)).map(|_| ())
        }
        "scatter" => {
            let idx = get(1, scalar(args, 6))?;
            resolve_indices("scatter", &idx, scalar(args, 4)).map(|_| ())
        }
        // Element-wise gather / scatter: every one of the outer * nidx * inner indices.
        "gather_elements" | "scatter_elements" => {
            let (outer, axis_len, inner, nidx) = (
                scalar(args, 3),
                scalar(args, 4),
                scalar(args, 5),
                scalar(args, 6),
            );
            let n = outer.saturating_mul(nidx).saturating_mul(inner);
            let at = if op == "gather_elements" { 2 } else { 1 };
            resolve_indices(op, &get(at, n)?, axis_len).map(|_| ())
        }
        "pad" => {
            let (ndim, mode, n_out) = (scalar(args, 4), scalar(args, 5), scalar(args, 6));
            let layout = get(3, ndim.saturating_mul(5))?;
            pad_layout(name, &layout, ndim, mode == 0, n_out, elems(args, 1, size)).map(|_| ())
        }
        _ => Ok(()),
    }
}

/// The layout of a `pad` launch, resolved: per axis the output length, the input
/// length, the crop start, the cropped length and the padding before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PadLayout {
    /// Output dims.
    pub out: Vec<usize>,
    /// Input dims (the input is contiguous over them).
    pub input: Vec<usize>,
    /// Crop start per axis.
    pub start: Vec<usize>,
    /// Cropped length per axis.
    pub len: Vec<usize>,
    /// Padding before per axis.
    pub before: Vec<usize>,
}

/// Checks the contents of a `pad` launch (args out, x, value, layout, ndim, mode,
/// n_out): `layout` holds `[out | input | start | len | before]`, `ndim` entries each,
/// all non-negative; the out dims' product is `n_out`; the input dims' product fits in
/// `x_len`; `start + len <= input` on each axis; and for a non-empty output under a
/// mode other than constant, `len >= 1` on every axis. Returns the resolved layout.
///
/// Errors: [`Error::Argument`] naming `kernel` and the argument at fault (3 for the
/// layout, 6 for `n_out`, 1 for an input past `x`).
pub fn pad_layout(
    kernel: &str,
    layout: &[i64],
    ndim: usize,
    constant: bool,
    n_out: usize,
    x_len: usize,
) -> Result<PadLayout> {
    let mut v = Vec::with_capacity(layout.len());
    for &e in layout {
        match usize::try_from(e) {
            Ok(u) => v.push(u),
            Err(_) => return err(kernel, 3, format!("negative layout entry {e}")),
        }
    }
    if v.len() != 5 * ndim {
        return err(
            kernel,
            3,
            format!("layout holds {} entries, not 5 * {ndim}", v.len()),
        );
    }
    let part = |k: usize| v[k * ndim..(k + 1) * ndim].to_vec();
    let l = PadLayout {
        out: part(0),
        input: part(1),
        start: part(2),
        len: part(3),
        before: part(4),
    };
    let prod = |d: &[usize]| d.iter().try_fold(1usize, |p, &x| p.checked_mul(x));
    if prod(&l.out) != Some(n_out) {
        return err(
            kernel,
            6,
            format!("n_out {n_out} is not the product of {:?}", l.out),
        );
    }
    match prod(&l.input) {
        Some(n) if n <= x_len => {}
        _ => {
            return err(
                kernel,
                1,
                format!("input dims {:?} exceed x's {x_len} elements", l.input),
            );
        }
    }
    for d in 0..ndim {
        if l.start[d]
            .checked_add(l.len[d])
            .is_none_or(|e| e > l.input[d])
        {
            return err(
                kernel,
                3,
                format!(
                    "axis {d}: crop {}+{} past {}",
                    l.start[d], l.len[d], l.input[d]
                ),
            );
        }
        if !constant && n_out > 0 && l.len[d] == 0 {
            return err(
                kernel,
                3,
                format!("axis {d}: nothing to pad from in this mode"),
            );
        }
        if l.before[d] > i64::MAX as usize / 2 || l.out[d] > i64::MAX as usize / 2 {
            return err(kernel, 3, format!("axis {d}: extent too large"));
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, DevicePtr};

    fn buf(elems: usize, d: DType) -> KernelArg {
        KernelArg::Buffer {
            ptr: DevicePtr(0x1000 * (elems as u64 + 1)),
            bytes: elems * d.size(),
            dtype: Some(d),
        }
    }

    #[test]
    fn broadcast_contents() {
        // [2, 3] = a [2, 3] + b [3] (stride 0 on the outer axis).
        let d = broadcast_dims("add_bc_f32", &[2, 3], &[3, 1], &[0, 1], 6, 6, 3).unwrap();
        assert_eq!(d, vec![2, 3]);
        // b's strides reach element 5 of a 3-element buffer.
        let e = broadcast_dims("add_bc_f32", &[2, 3], &[3, 1], &[3, 1], 6, 6, 3).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 2, .. }), "{e}");
        // A negative dim, a wrong product, a negative reach.
        let e = broadcast_dims("add_bc_f32", &[-1], &[1], &[1], 1, 6, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 3, .. }), "{e}");
        let e = broadcast_dims("add_bc_f32", &[2, 2], &[2, 1], &[2, 1], 6, 6, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 7, .. }), "{e}");
        let e = broadcast_dims("add_bc_f32", &[2], &[-1], &[1], 2, 6, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        // An empty output reads nothing: strides are not checked.
        assert!(broadcast_dims("add_bc_f32", &[0, 5], &[99, 99], &[1, 1], 0, 0, 0).is_ok());
    }

    #[test]
    fn strided_contents() {
        // A transpose of a 2x3 matrix.
        let l = strided_layout("strided_copy_f32", &[3, 2], &[1, 3], 0, 6, 6).unwrap();
        assert_eq!((l.dims, l.strides, l.n_x), (vec![3, 2], vec![1, 3], 6));
        let e = strided_layout("strided_copy_f32", &[3, 2], &[1, 3], 1, 6, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        let e = strided_layout("strided_copy_f32", &[3, -2], &[1, 3], 0, 6, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 2, .. }), "{e}");
        let e = strided_layout("strided_copy_f32", &[3, 2], &[1, 3], 0, 5, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 6, .. }), "{e}");
        let big = i64::MAX;
        let e = strided_layout("strided_copy_f32", &[2, 2], &[big, 1], 0, 4, 6).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
    }

    #[test]
    fn indices_resolve_or_name_the_first_bad_one() {
        assert_eq!(
            resolve_indices("gather", &[0, -1, 2], 3).unwrap(),
            vec![0, 2, 2]
        );
        let e = resolve_indices("gather", &[0, 3, -9], 3).unwrap_err();
        assert!(
            matches!(
                e,
                Error::IndexOutOfRange {
                    index: 3,
                    axis_len: 3,
                    ..
                }
            ),
            "{e}"
        );
        let e = resolve_indices("scatter", &[i64::MIN], 3).unwrap_err();
        assert!(matches!(e, Error::IndexOutOfRange { .. }), "{e}");
    }

    #[test]
    fn check_contents_reads_the_index_buffers_it_names() {
        let (f, i) = (DType::F32, DType::I64);
        // gather: out, data, idx, outer, axis_len, inner, nidx.
        let args = [
            buf(2, f),
            buf(3, f),
            buf(2, i),
            KernelArg::I64(1),
            KernelArg::I64(3),
            KernelArg::I64(1),
            KernelArg::I64(2),
        ];
        let read_ok = |index: usize, n: usize| {
            assert_eq!((index, n), (2, 2));
            Ok(vec![0, -3])
        };
        assert!(check_contents("gather_f32", &args, read_ok).is_ok());
        let e = check_contents("gather_f32", &args, |_, _| Ok(vec![0, 3])).unwrap_err();
        assert!(matches!(e, Error::IndexOutOfRange { index: 3, .. }), "{e}");
        // A name without index contents never reads.
        let sum = [buf(1, f), buf(3, f), KernelArg::I64(3)];
        assert!(check_contents("sum_f32", &sum, |_, _| panic!("read")).is_ok());
        // A count past the buffer is refused before any read.
        let mut lying = args;
        lying[6] = KernelArg::I64(9);
        let e = check_contents("gather_f32", &lying, |_, _| panic!("read")).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 2, .. }), "{e}");
    }
}
