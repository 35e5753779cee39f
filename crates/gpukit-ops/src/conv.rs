//! The neural-network family: the `conv` group — [`gemm`], [`conv2d`],
//! [`conv_transpose2d`], [`max_pool2d`] (NCHW, float dtypes). The order of operations
//! of each op is the contract of docs/ops/conv.md; the parameter structs live in
//! [`gpukit_core::abi::conv`] and are re-exported here.

use gpukit_core::{Buf, DType, DevArg, Error, Kit, Result};

pub use gpukit_core::abi::conv::{
    Conv2dParams, ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams,
};

use crate::check;

/// Checks an optional operand: present, on the kit, of dtype `d`, `len` elements.
/// Returns the buffer to pass (the absent buffer when `None`) and the `has_*` flag.
fn optional(
    kit: &Kit,
    op: &str,
    name: &str,
    b: Option<&Buf>,
    d: DType,
    len: usize,
) -> Result<(Buf, i64)> {
    match b {
        None => Ok((Buf::absent(d), 0)),
        Some(b) => {
            check::on_kit(kit, op, &[(b, name)])?;
            if b.dtype() != d {
                return Err(Error::DType {
                    op: op.to_string(),
                    expected: d.to_string(),
                    got: b.dtype(),
                });
            }
            check::len(op, name, b, len)?;
            Ok((b.clone(), 1))
        }
    }
}

fn invalid(op: &str, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        op: op.to_string(),
        reason: reason.into(),
    }
}

/// Checks kernel sizes, strides, dilations and groups (all >= 1; groups divide both
/// channel counts).
fn check_window(
    op: &str,
    kernel: [usize; 2],
    strides: [usize; 2],
    dilations: [usize; 2],
) -> Result<()> {
    if kernel.contains(&0) {
        return Err(invalid(op, format!("kernel size {kernel:?} must be >= 1")));
    }
    if strides.contains(&0) {
        return Err(invalid(op, format!("strides {strides:?} must be >= 1")));
    }
    if dilations.contains(&0) {
        return Err(invalid(op, format!("dilations {dilations:?} must be >= 1")));
    }
    Ok(())
}

fn check_groups(op: &str, groups: usize, c_in: usize, c_out: usize) -> Result<()> {
    if groups == 0 || !c_in.is_multiple_of(groups) || !c_out.is_multiple_of(groups) {
        return Err(invalid(
            op,
            format!("groups = {groups} must be >= 1 and divide c_in = {c_in} and c_out = {c_out}"),
        ));
    }
    Ok(())
}

/// `Y[m×n] = alpha·(op(A)·op(B)) + beta·C + bias` (ONNX Gemm; float dtypes,
/// row-major, contiguous).
///
/// `a` is `[m, k]`, or `[k, m]` when `p.trans_a` (ONNX `transA`); `b` is `[k, n]`, or
/// `[n, k]` when `p.trans_b` (the layout of a PyTorch Linear weight); `c` (optional) is
/// laid out by `p.c_layout`: `[m, n]`, or broadcast without being materialised from a
/// row (`n` values), a column (`m` values) or a scalar (1 value) — see
/// [`GemmC::from_shape`] for ONNX's shapes; `bias` (optional, `[n]`, one value per
/// column). Per output, in the compute type: `acc = +0.0`; for `t = 0..k` ascending
/// `acc = fma(a(r, t), b(t, j), acc)`; `v = alpha * acc`; with C
/// `v = fma(beta, c(r, j), v)`; with a bias `v = v + bias[j]`; stored once. `alpha` and
/// `beta` are converted from f64 to the compute type by round to nearest even (f32 for
/// f16/bf16/f32). All four transpose combinations run the same packed micro-kernel
/// (only the packing differs), so they give the same bits for the same values. `y`
/// may be exactly `c` when C is full (in place); no other overlap is allowed.
///
/// Errors: [`Error::Absent`] / [`Error::DeviceMismatch`] for a missing or foreign
/// buffer (including a `Some` absent buffer), [`Error::DType`] (non-float, or operands
/// of different dtypes), [`Error::Length`] when a buffer does not hold its matrix (C:
/// the length its layout needs), [`Error::SizeOverflow`], [`Error::InvalidArgument`]
/// when `y` overlaps an input other than exactly a full `c`.
#[doc(alias = "Gemm")]
pub fn gemm(
    kit: &Kit,
    y: &Buf,
    a: &Buf,
    b: &Buf,
    c: Option<&Buf>,
    bias: Option<&Buf>,
    p: &GemmParams,
) -> Result<()> {
    let op = "gemm";
    let ops = [(y, "y"), (a, "a"), (b, "b")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let (m, k, n) = (p.m, p.k, p.n);
    let mn = check::product(op, "[m, n]", &[m, n])?;
    let mk = check::product(op, "[m, k]", &[m, k])?;
    let kn = check::product(op, "[k, n]", &[k, n])?;
    check::len(op, "y", y, mn)?;
    check::len(op, if p.trans_a { "a ([k, m])" } else { "a" }, a, mk)?;
    check::len(op, if p.trans_b { "b ([n, k])" } else { "b" }, b, kn)?;
    let c_len = p.c_layout.len(m, n).ok_or_else(|| Error::SizeOverflow {
        what: format!("{op}: c [m, n] = [{m}, {n}]"),
    })?;
    let c_name = match p.c_layout {
        GemmC::Full => "c",
        GemmC::Row => "c (a row [n])",
        GemmC::Column => "c (a column [m, 1])",
        GemmC::Scalar => "c (a scalar)",
    };
    let (cb, has_c) = optional(kit, op, c_name, c, d, c_len)?;
    let (bb, has_bias) = optional(kit, op, "bias", bias, d, n)?;
    check::no_overlap(op, y, &[(a, "a"), (b, "b"), (&bb, "bias")], false)?;
    // In place only over a full C (a broadcast C is read by many outputs).
    let c_exact_ok = p.c_layout == GemmC::Full;
    check::no_overlap(op, y, &[(&cb, "c")], c_exact_ok)?;
    if mn == 0 {
        return Ok(());
    }
    let (c_rs, c_cs) = p.c_layout.strides(n);
    let s = |what, v| check::i64_of(op, what, v);
    kit.launch_builtin(
        &check::name(op, d),
        check::launch_1d(mn)?,
        &[
            y.into(),
            a.into(),
            b.into(),
            (&cb).into(),
            (&bb).into(),
            DevArg::I64(s("m", m)?),
            DevArg::I64(s("k", k)?),
            DevArg::I64(s("n", n)?),
            DevArg::I64(i64::from(p.trans_b)),
            DevArg::I64(has_c),
            DevArg::I64(has_bias),
            DevArg::F64(p.alpha),
            DevArg::F64(p.beta),
            DevArg::I64(i64::from(p.trans_a)),
            DevArg::I64(s("c row stride", c_rs)?),
            DevArg::I64(s("c column stride", c_cs)?),
        ],
    )
}

/// The output shape `[n, c_out, oh, ow]` of [`conv2d`] with these parameters.
///
/// Errors: [`Error::InvalidArgument`] for a zero kernel size, stride or dilation, or
/// groups that do not divide both channel counts; [`Error::Shape`] when the (padded)
/// input is smaller than the dilated kernel (the ONNX size formula's numerator is
/// negative); [`Error::SizeOverflow`].
pub fn conv2d_out_shape(p: &Conv2dParams) -> Result<[usize; 4]> {
    let op = "conv2d";
    check_window(op, [p.kh, p.kw], p.strides, p.dilations)?;
    check_groups(op, p.groups, p.c_in, p.c_out)?;
    let [oh, ow] = p.out_hw().ok_or_else(|| Error::Shape {
        op: op.to_string(),
        detail: format!(
            "input {}x{} padded by {:?} is smaller than the {}x{} kernel dilated by {:?} \
             (or a size overflows)",
            p.h, p.w, p.pads, p.kh, p.kw, p.dilations
        ),
    })?;
    let shape = [p.n, p.c_out, oh, ow];
    check::product(op, "output [n, c_out, oh, ow]", &shape)?;
    Ok(shape)
}

/// The scalar arguments both convolution kernels take after their buffers, from a
/// parameter struct with the shared geometry fields and the output extent.
macro_rules! conv_geometry {
    ($p:expr, $oh:expr, $ow:expr) => {
        [
            ("n", $p.n),
            ("c_in", $p.c_in),
            ("h", $p.h),
            ("w", $p.w),
            ("c_out", $p.c_out),
            ("kh", $p.kh),
            ("kw", $p.kw),
            ("oh", $oh),
            ("ow", $ow),
            ("pad_t", $p.pads[0]),
            ("pad_l", $p.pads[1]),
            ("stride_h", $p.strides[0]),
            ("stride_w", $p.strides[1]),
            ("dil_h", $p.dilations[0]),
            ("dil_w", $p.dilations[1]),
            ("groups", $p.groups),
        ]
    };
}

/// Scalars of the conv kernels after `y, x, w, bias`.
fn conv_scalars(op: &str, v: &[(&str, usize)], has_bias: i64) -> Result<Vec<DevArg<'static>>> {
    let mut out = Vec::with_capacity(v.len() + 1);
    for &(what, x) in v {
        out.push(DevArg::I64(check::i64_of(op, what, x)?));
    }
    out.push(DevArg::I64(has_bias));
    Ok(out)
}

/// 2-D convolution, NCHW (ONNX Conv with zero padding), float dtypes: `x [n, c_in, h, w]`,
/// `w [c_out, c_in/groups, kh, kw]`, optional `bias [c_out]`, `y [n, c_out, oh, ow]`
/// with `[oh, ow]` from [`conv2d_out_shape`]. `groups = c_in = c_out` is a depthwise
/// convolution.
///
/// Per output (group `g` of `oc`): `acc = +0.0`; for the group's input channels
/// ascending, `kh` ascending, `kw` ascending `acc = fma(x_tap, w, acc)`, where a tap in
/// the padding is an explicit `+0.0` operand (as ONNX defines zero padding: `0 * inf` is
/// NaN); then `acc + bias[oc]`; stored once.
///
/// Errors: those of [`conv2d_out_shape`]; [`Error::Absent`], [`Error::DeviceMismatch`],
/// [`Error::DType`], [`Error::Length`] for a buffer that does not hold its shape,
/// [`Error::InvalidArgument`] when `y` overlaps an input.
pub fn conv2d(
    kit: &Kit,
    y: &Buf,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    p: &Conv2dParams,
) -> Result<()> {
    conv_launch(
        kit,
        "conv2d",
        [y, x, w],
        bias,
        || {
            let [n, c_out, oh, ow] = conv2d_out_shape(p)?;
            Ok(([n, c_out, oh, ow], [p.c_out, p.c_in / p.groups, p.kh, p.kw]))
        },
        |oh, ow| conv_geometry!(p, oh, ow),
    )
}

/// The output shape `[n, c_out, oh, ow]` of [`conv_transpose2d`]:
/// `oh = stride_h*(h-1) + out_pad_h + dil_h*(kh-1) + 1 - pad_t - pad_b` (ONNX
/// ConvTranspose), likewise `ow`; 0 is a valid (empty) size.
///
/// Errors: [`Error::InvalidArgument`] for a zero kernel size, stride or dilation, an
/// output padding not smaller than its stride, or groups that do not divide both
/// channel counts; [`Error::Shape`] when the formula is negative; [`Error::SizeOverflow`].
pub fn conv_transpose2d_out_shape(p: &ConvTranspose2dParams) -> Result<[usize; 4]> {
    let op = "conv_transpose2d";
    check_window(op, [p.kh, p.kw], p.strides, p.dilations)?;
    check_groups(op, p.groups, p.c_in, p.c_out)?;
    if p.output_padding[0] >= p.strides[0] || p.output_padding[1] >= p.strides[1] {
        return Err(invalid(
            op,
            format!(
                "output_padding {:?} must be smaller than the strides {:?}",
                p.output_padding, p.strides
            ),
        ));
    }
    let [oh, ow] = p.out_hw().ok_or_else(|| Error::Shape {
        op: op.to_string(),
        detail: format!(
            "the output size of a {}x{} input with pads {:?} is negative (or overflows)",
            p.h, p.w, p.pads
        ),
    })?;
    let shape = [p.n, p.c_out, oh, ow];
    check::product(op, "output [n, c_out, oh, ow]", &shape)?;
    Ok(shape)
}

/// 2-D transposed convolution, NCHW (ONNX ConvTranspose), float dtypes:
/// `x [n, c_in, h, w]`, `w [c_in, c_out/groups, kh, kw]`, optional `bias [c_out]`,
/// `y [n, c_out, oh, ow]` with `[oh, ow]` from [`conv_transpose2d_out_shape`].
///
/// Gather form, per output: `acc = +0.0`; for the group's input channels ascending,
/// `kh` ascending, `kw` ascending, for each tap whose input position
/// `ih = (oh + pad_t - kh*dil_h) / stride_h` is an exact integer inside the input (and
/// likewise `iw`): `acc = fma(x, w, acc)`; other taps are skipped; then `acc + bias`;
/// stored once. Deterministic: no scatter, no atomics.
///
/// Errors: those of [`conv_transpose2d_out_shape`]; [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`], [`Error::Length`],
/// [`Error::InvalidArgument`] when `y` overlaps an input.
pub fn conv_transpose2d(
    kit: &Kit,
    y: &Buf,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    p: &ConvTranspose2dParams,
) -> Result<()> {
    conv_launch(
        kit,
        "conv_transpose2d",
        [y, x, w],
        bias,
        || {
            let [n, c_out, oh, ow] = conv_transpose2d_out_shape(p)?;
            Ok(([n, c_out, oh, ow], [p.c_in, p.c_out / p.groups, p.kh, p.kw]))
        },
        |oh, ow| conv_geometry!(p, oh, ow),
    )
}

/// The shared body of [`conv2d`] and [`conv_transpose2d`]: operand checks, then
/// `shapes` (the output shape, which validates the parameters, and the weight shape),
/// the length checks of x `[n, c_in, h, w]`, w and y, the optional bias, the overlap
/// check, and the launch with `geometry(oh, ow)` as the scalars.
fn conv_launch(
    kit: &Kit,
    op: &str,
    [y, x, w]: [&Buf; 3],
    bias: Option<&Buf>,
    shapes: impl FnOnce() -> Result<([usize; 4], [usize; 4])>,
    geometry: impl FnOnce(usize, usize) -> [(&'static str, usize); 16],
) -> Result<()> {
    let ops = [(y, "y"), (x, "x"), (w, "w")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let ([n, c_out, oh, ow], w_shape) = shapes()?;
    let geometry = geometry(oh, ow);
    let (c_in, h, wd) = (geometry[1].1, geometry[2].1, geometry[3].1);
    check::len(op, "x", x, check::product(op, "x", &[n, c_in, h, wd])?)?;
    check::len(op, "w", w, check::product(op, "w", &w_shape)?)?;
    let y_len = check::product(op, "y", &[n, c_out, oh, ow])?;
    check::len(op, "y", y, y_len)?;
    let (bb, has_bias) = optional(kit, op, "bias", bias, d, c_out)?;
    check::no_overlap(op, y, &[(x, "x"), (w, "w"), (&bb, "bias")], false)?;
    if y_len == 0 {
        return Ok(());
    }
    let scalars = conv_scalars(op, &geometry, has_bias)?;
    let mut args: Vec<DevArg<'_>> = vec![y.into(), x.into(), w.into(), (&bb).into()];
    args.extend(scalars);
    kit.launch_builtin(&check::name(op, d), check::launch_1d(y_len)?, &args)
}

/// Whether every one of the `out` windows along one axis holds at least one position
/// inside `0..len` (taps at `o*s - pad + t*d`, `t < k`).
///
/// O(1) when `d <= len` or the windows run through every residue class of `d`;
/// otherwise (a dilation wider than the input) one step per output position, which
/// is bounded by the output the call writes. Never a loop over window taps.
fn every_window_has_a_tap(
    out: usize,
    len: usize,
    pad: usize,
    k: usize,
    s: usize,
    d: usize,
) -> bool {
    if out == 0 {
        return true;
    }
    if len == 0 || k == 0 || d == 0 {
        return false;
    }
    let (len, pad, k, s, d) = (len as u128, pad as u128, k as u128, s as u128, d as u128);
    let window = |o: u128| {
        let start = o * s;
        let last = pad + len - 1;
        if last < start {
            return false;
        }
        let t_lo = if pad > start {
            (pad - start).div_ceil(d)
        } else {
            0
        };
        let t_hi = ((last - start) / d).min(k - 1);
        t_lo <= t_hi
    };
    // The first tap index that can land inside, ceil((pad - o*s) / d), only falls as o
    // grows, and the window's reach only moves down: the clamps to 0..k bind hardest at
    // the first and the last window.
    if !window(0) || !window(out as u128 - 1) {
        return false;
    }
    if d <= len {
        // Every span of `len` positions holds a multiple of d: nothing else can fail.
        return true;
    }
    // d > len: window o holds a tap iff (o*s - pad) mod d < len (the one multiple of d
    // its span can hold). Over a full period the residues are every value congruent to
    // -pad mod g (g = gcd(s, d)); the largest is d - g + (-pad mod g).
    let g = gcd(s, d);
    let period = d / g;
    if out as u128 >= period {
        let r0 = (g - pad % g) % g;
        return d - g + r0 < len;
    }
    (0..out as u128).all(|o| (o * s % d + d - pad % d) % d < len)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The window check of [`max_pool2d_out_shape`], after the output size is known.
fn check_pool_windows(op: &str, p: &MaxPool2dParams, oh: usize, ow: usize) -> Result<()> {
    let ok_h = every_window_has_a_tap(oh, p.h, p.pads[0], p.kh, p.strides[0], p.dilations[0]);
    let ok_w = every_window_has_a_tap(ow, p.w, p.pads[1], p.kw, p.strides[1], p.dilations[1]);
    if ok_h && ok_w {
        return Ok(());
    }
    Err(invalid(
        op,
        format!(
            "a {}x{} window (pads {:?}, strides {:?}, dilations {:?}) lies entirely in \
             the padding of a {}x{} input",
            p.kh, p.kw, p.pads, p.strides, p.dilations, p.h, p.w
        ),
    ))
}

/// The output size of max_pool2d without the window check.
fn pool_shape(op: &str, p: &MaxPool2dParams) -> Result<[usize; 4]> {
    check_window(op, [p.kh, p.kw], p.strides, p.dilations)?;
    let [oh, ow] = p.out_hw().ok_or_else(|| Error::Shape {
        op: op.to_string(),
        detail: format!(
            "input {}x{} padded by {:?} is smaller than the {}x{} window dilated by {:?} \
             (or a size overflows)",
            p.h, p.w, p.pads, p.kh, p.kw, p.dilations
        ),
    })?;
    let shape = [p.n, p.c, oh, ow];
    check::product(op, "output [n, c, oh, ow]", &shape)?;
    Ok(shape)
}

/// Appends the pooling kernels' scalar arguments (n, c, h, w, kh, kw, oh, ow, pad_t,
/// pad_l, stride_h, stride_w, dil_h, dil_w).
fn pool_scalars(
    op: &str,
    p: &MaxPool2dParams,
    oh: usize,
    ow: usize,
    args: &mut Vec<DevArg<'_>>,
) -> Result<()> {
    for (what, v) in [
        ("n", p.n),
        ("c", p.c),
        ("h", p.h),
        ("w", p.w),
        ("kh", p.kh),
        ("kw", p.kw),
        ("oh", oh),
        ("ow", ow),
        ("pad_t", p.pads[0]),
        ("pad_l", p.pads[1]),
        ("stride_h", p.strides[0]),
        ("stride_w", p.strides[1]),
        ("dil_h", p.dilations[0]),
        ("dil_w", p.dilations[1]),
    ] {
        args.push(DevArg::I64(check::i64_of(op, what, v)?));
    }
    Ok(())
}

/// The output shape `[n, c, oh, ow]` of [`max_pool2d`] (the ONNX formula with
/// `ceil_mode = 0`, as [`conv2d_out_shape`]).
///
/// Errors: [`Error::InvalidArgument`] for a zero window size, stride or dilation, or
/// when some window holds no element of the input (only padding: ONNX leaves that
/// undefined, gpukit rejects it; checked in O(1) steps, or one per output position when a
/// dilation exceeds the input); [`Error::Shape`] when the padded input is smaller than
/// the dilated window; [`Error::SizeOverflow`].
pub fn max_pool2d_out_shape(p: &MaxPool2dParams) -> Result<[usize; 4]> {
    let op = "max_pool2d";
    let shape = pool_shape(op, p)?;
    check_pool_windows(op, p, shape[2], shape[3])?;
    Ok(shape)
}

/// 2-D max pooling, NCHW (ONNX MaxPool, `ceil_mode = 0`, no indices), float dtypes:
/// `x [n, c, h, w]`, `y [n, c, oh, ow]` with `[oh, ow]` from [`max_pool2d_out_shape`].
///
/// Per output: the `max_nan` fold of the window's taps inside the input (padding never
/// takes part, never wins); NaN if any tap is NaN; `max(-0, +0) = +0`; exact (no
/// rounding), so f16/bf16 return one of their inputs.
///
/// Errors: those of [`max_pool2d_out_shape`]; [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`], [`Error::Length`],
/// [`Error::InvalidArgument`] when `y` overlaps `x`.
pub fn max_pool2d(kit: &Kit, y: &Buf, x: &Buf, p: &MaxPool2dParams) -> Result<()> {
    let op = "max_pool2d";
    let ops = [(y, "y"), (x, "x")];
    check::on_kit(kit, op, &ops)?;
    let d = check::same_dtype(op, &ops)?;
    check::float(op, d)?;
    let [_, _, oh, ow] = pool_shape(op, p)?;
    check::len(op, "x", x, check::product(op, "x", &[p.n, p.c, p.h, p.w])?)?;
    let y_len = check::product(op, "y", &[p.n, p.c, oh, ow])?;
    check::len(op, "y", y, y_len)?;
    if y_len > 0 {
        // O(oh + ow) <= O(y_len): bounded by a real allocation.
        check_pool_windows(op, p, oh, ow)?;
    }
    check::no_overlap(op, y, &[(x, "x")], false)?;
    if y_len == 0 {
        return Ok(());
    }
    let mut args: Vec<DevArg<'_>> = vec![y.into(), x.into()];
    pool_scalars(op, p, oh, ow, &mut args)?;
    kit.launch_builtin(&check::name(op, d), check::launch_1d(y_len)?, &args)
}

/// The indices output of ONNX MaxPool for [`max_pool2d`]'s windows: `idx` (i64,
/// `[n, c, oh, ow]`) gets, per output, the flattened input index of the first in-image
/// tap of its window (row-major window order) whose value is the window's maximum bit
/// for bit (any NaN matching a NaN maximum, so NaN's first position wins). Flattened
/// over the whole input as ONNX does: `((b·c + ch)·h + ih)·w + iw`, or with
/// `column_major` (ONNX `storage_order = 1`) `((b·c + ch)·w + iw)·h + ih`. Float dtypes.
///
/// Errors: those of [`max_pool2d_out_shape`]; [`Error::Absent`],
/// [`Error::DeviceMismatch`], [`Error::DType`] (`idx` not i64, `x` not a float),
/// [`Error::Length`], [`Error::InvalidArgument`] when `idx` overlaps `x`.
pub fn max_pool2d_index(
    kit: &Kit,
    idx: &Buf,
    x: &Buf,
    p: &MaxPool2dParams,
    column_major: bool,
) -> Result<()> {
    let op = "max_pool2d_index";
    check::on_kit(kit, op, &[(idx, "idx"), (x, "x")])?;
    if idx.dtype() != DType::I64 {
        return Err(Error::DType {
            op: op.to_string(),
            expected: "i64 (indices)".into(),
            got: idx.dtype(),
        });
    }
    check::float(op, x.dtype())?;
    let [_, _, oh, ow] = pool_shape(op, p)?;
    check::len(op, "x", x, check::product(op, "x", &[p.n, p.c, p.h, p.w])?)?;
    let n_out = check::product(op, "idx", &[p.n, p.c, oh, ow])?;
    check::len(op, "idx", idx, n_out)?;
    if n_out > 0 {
        check_pool_windows(op, p, oh, ow)?;
    }
    check::no_overlap(op, idx, &[(x, "x")], false)?;
    if n_out == 0 {
        return Ok(());
    }
    let mut args: Vec<DevArg<'_>> = vec![idx.into(), x.into()];
    pool_scalars(op, p, oh, ow, &mut args)?;
    args.push(DevArg::I64(column_major as i64));
    kit.launch_builtin(&check::name(op, x.dtype()), check::launch_1d(n_out)?, &args)
}

#[cfg(test)]
mod tests {
    use super::every_window_has_a_tap;

    #[test]
    fn the_window_check_matches_brute_force() {
        for out in 0..6usize {
            for len in 0..5usize {
                for pad in 0..7usize {
                    for k in 0..5usize {
                        for s in 1..5usize {
                            for d in 1..7usize {
                                let brute = (0..out).all(|o| {
                                    (0..k).any(|t| {
                                        let p = (o * s + t * d) as i64 - pad as i64;
                                        (0..len as i64).contains(&p)
                                    })
                                });
                                assert_eq!(
                                    every_window_has_a_tap(out, len, pad, k, s, d),
                                    brute,
                                    "out {out} len {len} pad {pad} k {k} s {s} d {d}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_window_check_of_a_huge_input_is_immediate() {
        let t = std::time::Instant::now();
        assert!(every_window_has_a_tap(1 << 31, 1 << 31, 1, 3, 1, 1));
        assert!(every_window_has_a_tap(
            1 << 40,
            1 << 40,
            1 << 39,
            (1 << 39) + 1,
            1,
            1
        ));
        assert!(t.elapsed().as_secs_f64() < 0.01);
    }
}
