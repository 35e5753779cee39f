//! Plans for `kernels-cuda/conv.cu`: `conv2d`, `conv_transpose2d`, `max_pool2d`
//! (`gemm` is planned with `bmm` in [`super::linalg`]).
//!
//! * `conv2d`: the implicit GEMM (`conv2d_{dtype}`): per (image, group) the product of
//!   the group's weights `[og, cg·kh·kw]` and the im2col panel `[cg·kh·kw, oh·ow]`, one
//!   block of [`MM_THREADS`] threads per `64 × 64` tile (`32 × 32` for f64) of
//!   (output channels × pixels): x over pixel tiles, y over channel tiles, z over
//!   `n · groups` (capped; the kernel strides). Groups with fewer than
//!   [`MM_MIN_OG`] output channels (depthwise and the like), and shapes whose indices
//!   would leave int32 ([`mm_fits_i32`]), take `conv2d_direct_{dtype}` instead: one
//!   grid-stride launch, one thread per output. Both give the same bits (one fma chain
//!   per output over the taps in the contract's order).
//! * `conv_transpose2d`, `max_pool2d`, `max_pool2d_index`: one grid-stride launch, one
//!   thread per output.
//!
//! Every call passes the ABI arguments through unchanged; no scratch.

use super::linalg::{MM_THREADS, tiled_step};
use super::{Call, Plan, PlanArg, grid_stride};
use gpukit_core::{DType, KernelArg, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[("conv2d_direct", "conv2d")];

/// Output channels per group from which conv2d takes the implicit GEMM.
const MM_MIN_OG: u64 = 8;

/// The implicit GEMM's output tile `(channels, pixels)` (the kernels' small
/// `GkMmCfg`).
fn mm_tile(dtype: DType) -> (u64, u64) {
    if dtype == DType::F64 {
        (32, 32)
    } else {
        (64, 64)
    }
}

/// The conv2d scalars (ABI args 4..=20).
struct ConvDims {
    n: u64,
    c_in: u64,
    h: u64,
    w: u64,
    c_out: u64,
    kh: u64,
    kw: u64,
    oh: u64,
    ow: u64,
    pt: u64,
    pl: u64,
    sh: u64,
    sw: u64,
    dh: u64,
    dw: u64,
    groups: u64,
}

impl ConvDims {
    fn read(c: &Call<'_>) -> Result<ConvDims> {
        Ok(ConvDims {
            n: c.count(4)?,
            c_in: c.count(5)?,
            h: c.count(6)?,
            w: c.count(7)?,
            c_out: c.count(8)?,
            kh: c.count(9)?,
            kw: c.count(10)?,
            oh: c.count(11)?,
            ow: c.count(12)?,
            pt: c.count(13)?,
            pl: c.count(14)?,
            sh: c.count(15)?,
            sw: c.count(16)?,
            dh: c.count(17)?,
            dw: c.count(18)?,
            groups: c.count(19)?,
        })
    }
}

/// Whether the implicit GEMM's 32-bit indices hold: the group's weights with a tile's
/// worth of slack (`128·K`), its input planes `cg·h·w`, the pixels `oh·ow` (plus a
/// tile), and every window position (`(o-1)·stride + (k-1)·dil`, and the pads) fit in
/// int32 (`GkIm2col` and `GkConvW` in conv.cu).
fn mm_fits_i32(d: &ConvDims) -> bool {
    const MAX: u128 = i32::MAX as u128;
    let u = |v: u64| v as u128;
    let cg = u(d.c_in / d.groups);
    let k = cg * u(d.kh) * u(d.kw);
    let reach = |o: u64, s: u64, k: u64, dil: u64| {
        u(o.saturating_sub(1)) * u(s) + u(k.saturating_sub(1)) * u(dil)
    };
    128 * k <= MAX
        && cg * u(d.h) * u(d.w) <= MAX
        && u(d.h) * u(d.w) <= MAX
        && u(d.oh) * u(d.ow) + 64 <= MAX
        && reach(d.oh, d.sh, d.kh, d.dh) <= MAX
        && reach(d.ow, d.sw, d.kw, d.dw) <= MAX
        && u(d.pt) <= MAX
        && u(d.pl) <= MAX
}

/// `a · b · c · d`, or an argument error when it overflows i64 (a kernel indexes every
/// output with i64).
fn outputs(c: &Call<'_>, idx: usize, [a, b, e, f]: [u64; 4]) -> Result<u64> {
    a.checked_mul(b)
        .and_then(|v| v.checked_mul(e))
        .and_then(|v| v.checked_mul(f))
        .filter(|&v| v <= i64::MAX as u64)
        .ok_or_else(|| c.bad(idx, "an output count within i64"))
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    match c.op {
        "max_pool2d" | "max_pool2d_index" => {
            // [y|idx], x, n, c, h, w, kh, kw, oh, ow, pad_t, pad_l, stride_h, stride_w,
            // dil_h, dil_w (, storage_order)
            let total = outputs(c, 9, [c.count(2)?, c.count(3)?, c.count(8)?, c.count(9)?])?;
            // Window taps that lie in the padding for every output are dropped (their
            // pad shrinks with them): a thread's loop is bounded by the image, not by a
            // padded window, and the same real taps are folded (max_nan is
            // order-independent), so the bits are the same.
            let mut args = c.all_args();
            for (len, k, out, pad, stride, dil) in [(4, 6, 8, 10, 12, 14), (5, 7, 9, 11, 13, 15)] {
                let (skip, keep) = gpukit_core::abi::conv::pool_tap_range(
                    c.count(len)?,
                    c.count(k)?,
                    c.count(pad)?,
                    c.count(stride)?,
                    c.count(dil)?,
                    c.count(out)?,
                );
                let new_pad = c.count(pad)? - skip * c.count(dil)?;
                args[k] = PlanArg::Arg(KernelArg::I64(keep as i64));
                args[pad] = PlanArg::Arg(KernelArg::I64(new_pad as i64));
            }
            Ok(grid_stride(c.entry(), total, args))
        }
        _ => {
            // y, x, weight, bias, n, c_in, h, w, c_out, kh, kw, oh, ow, pad_t, pad_l,
            // stride_h, stride_w, dil_h, dil_w, groups, has_bias
            let d = ConvDims::read(c)?;
            let total = outputs(c, 12, [d.n, d.c_out, d.oh, d.ow])?;
            if total == 0 {
                return Ok(Plan::default());
            }
            if d.groups == 0 || d.c_out % d.groups != 0 || d.c_in % d.groups != 0 {
                return Err(c.bad(19, "groups >= 1 dividing c_in and c_out"));
            }
            if c.op == "conv_transpose2d" {
                return Ok(grid_stride(c.entry(), total, c.all_args()));
            }
            let og = d.c_out / d.groups;
            if og < MM_MIN_OG || !mm_fits_i32(&d) {
                return Ok(grid_stride(c.aux("conv2d_direct"), total, c.all_args()));
            }
            let tile = mm_tile(c.dtype);
            let step = tiled_step(
                c.entry(),
                tile,
                (d.n * d.groups, og, d.oh * d.ow),
                c.all_args(),
            );
            debug_assert_eq!(step.cfg.block.x, MM_THREADS);
            Ok(Plan {
                scratch_bytes: 0,
                steps: vec![step],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanArg, Step, plan};
    use super::*;
    use gpukit_core::{Dim3, KernelArg};

    fn buf(p: u64) -> KernelArg {
        crate::plan::testing::buf(p, DType::F32)
    }

    /// conv args: n, c_in, h, w, c_out, kh, kw, oh, ow, pads (t, l), strides, dils,
    /// groups, has_bias 1.
    #[allow(clippy::too_many_arguments)]
    fn conv_args(
        n: i64,
        c_in: i64,
        hw: i64,
        c_out: i64,
        k: i64,
        ohw: i64,
        s: i64,
        groups: i64,
    ) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=4).map(|p| buf(p << 24)).collect();
        a.extend(
            [
                n, c_in, hw, hw, c_out, k, k, ohw, ohw, 1, 1, s, s, 1, 1, groups, 1,
            ]
            .map(KernelArg::I64),
        );
        a
    }

    fn pool_args(n: i64, c: i64, oh: i64, ow: i64) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=2).map(|p| buf(p << 24)).collect();
        a.extend([n, c, 2 * oh, 2 * ow, 2, 2, oh, ow, 0, 0, 2, 2, 1, 1].map(KernelArg::I64));
        a
    }

    fn one_step(p: &Plan) -> &Step {
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1, "{p:?}");
        &p.steps[0]
    }

    #[test]
    fn conv2d_takes_the_implicit_gemm() {
        // 2 images, 64 -> 128 channels, 56 × 56 output: f32 tiles of 64 × 64:
        // 3136 pixels -> 49 tiles, 128 channels -> 2 tiles, z = 2 images × 1 group.
        let args = conv_args(2, 64, 56, 128, 3, 56, 1, 1);
        let p = plan("conv2d_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "conv2d_f32");
        assert_eq!(s.cfg.grid, Dim3::new(49, 2, 2));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        // f64 tiles of 32 × 32; 4 groups of 16 channels: z = 3 images × 4 groups.
        let p = plan("conv2d_f64", &conv_args(3, 32, 20, 64, 3, 10, 2, 4)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "conv2d_f64");
        assert_eq!(s.cfg.grid, Dim3::new(4, 1, 12));
    }

    #[test]
    fn depthwise_conv2d_is_direct() {
        // 32 groups of 1 channel: one thread per output, 1·32·28·28 = 25088 -> 98 blocks.
        let args = conv_args(1, 32, 28, 32, 3, 28, 1, 32);
        let p = plan("conv2d_bf16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "conv2d_direct_bf16");
        assert_eq!(s.cfg.grid, Dim3::x(98));
        assert_eq!(s.cfg.block, Dim3::x(256));
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
    }

    #[test]
    fn conv2d_beyond_int32_indices_is_direct() {
        // A 1 × 1 kernel over 3 × 2^20 × 2^10 input elements per group: too many for
        // the implicit GEMM's int32 plane offsets.
        let mut args = conv_args(1, 3, 1, 16, 1, 1, 1, 1);
        args[6] = KernelArg::I64(1 << 20); // h
        args[7] = KernelArg::I64(1 << 10); // w
        args[11] = KernelArg::I64(1 << 20); // oh
        args[12] = KernelArg::I64(1 << 10); // ow
        args[13] = KernelArg::I64(0);
        args[14] = KernelArg::I64(0);
        let p = plan("conv2d_f16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "conv2d_direct_f16");
        // 16 · 2^30 outputs: the grid-stride cap.
        assert_eq!(s.cfg.grid, Dim3::x(65_535));
    }

    #[test]
    fn conv_transpose2d_and_max_pool2d_are_one_thread_per_output() {
        let args = conv_args(2, 8, 14, 4, 4, 28, 2, 1);
        let p = plan("conv_transpose2d_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "conv_transpose2d_f32");
        // 2·4·28·28 = 6272 outputs -> 24.5 -> 25 blocks.
        assert_eq!(s.cfg.grid, Dim3::x(25));
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        let args = pool_args(2, 3, 10, 20);
        let p = plan("max_pool2d_f64", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "max_pool2d_f64");
        // 1200 outputs -> 5 blocks.
        assert_eq!(s.cfg.grid, Dim3::x(5));
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
    }

    #[test]
    fn empty_outputs_launch_nothing() {
        for (n, c_out, ohw) in [(0, 4, 5), (2, 0, 5), (2, 4, 0)] {
            for op in ["conv2d_f32", "conv_transpose2d_f32"] {
                let p = plan(op, &conv_args(n, 4, 5, c_out, 1, ohw, 1, 1)).unwrap();
                assert_eq!(p, Plan::default(), "{op} {n} {c_out} {ohw}");
            }
        }
        assert_eq!(
            plan("max_pool2d_f32", &pool_args(0, 3, 4, 4)).unwrap(),
            Plan::default()
        );
        assert_eq!(
            plan("max_pool2d_f32", &pool_args(1, 3, 0, 4)).unwrap(),
            Plan::default()
        );
        // c_in = 0 is not empty: every output is +0.0 (+ bias).
        let p = plan("conv2d_f32", &conv_args(1, 0, 5, 16, 3, 5, 1, 1)).unwrap();
        assert_eq!(one_step(&p).entry, "conv2d_f32");
    }

    #[test]
    fn bad_groups_and_sizes_are_argument_errors() {
        assert!(plan("conv2d_f32", &conv_args(1, 4, 5, 4, 1, 5, 1, 0)).is_err());
        assert!(plan("conv2d_f32", &conv_args(1, 4, 5, 6, 1, 5, 1, 4)).is_err());
        assert!(plan("conv_transpose2d_f32", &conv_args(1, -4, 5, 4, 1, 5, 1, 1)).is_err());
        assert!(plan("max_pool2d_f32", &pool_args(1 << 40, 1 << 30, 4, 4)).is_err());
    }

    #[test]
    fn committed_ptx_entries_match_the_abi() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "conv")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let mut names = 0;
        for op in [
            "conv2d",
            "conv_transpose2d",
            "max_pool2d",
            "max_pool2d_index",
        ] {
            let sig = gpukit_core::abi::signature(op).unwrap();
            let want: Vec<&str> = sig
                .args
                .split(',')
                .map(|a| if a.contains(": f64") { "f64" } else { "u64" })
                .collect();
            let auxes: &[&str] = if op == "conv2d" {
                &["conv2d_direct"]
            } else {
                &[]
            };
            for &d in sig.dtypes {
                for name in std::iter::once(op)
                    .chain(auxes.iter().copied())
                    .map(|o| gpukit_core::abi::kernel_name(o, d))
                {
                    let e = entries
                        .iter()
                        .find(|e| e.name == name)
                        .unwrap_or_else(|| panic!("{name} missing from conv.ptx"));
                    assert_eq!(e.params, want, "{name}");
                    names += 1;
                }
            }
        }
        assert_eq!(entries.len(), names);
        assert_eq!(names, 20);
    }
}
