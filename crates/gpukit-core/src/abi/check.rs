//! [`check_args`]: every built-in launch's arguments checked against the ABI table
//! before anything runs or is allocated, on every backend.
//!
//! The table's argument lists say each argument's kind (`buf`, `buf<i64>`, an i64
//! scalar, `name: f64`); the extents below say how many elements each buffer must hold
//! given the scalars. [`crate::Kit::launch_builtin`] calls this first, so a launch whose
//! scalars lie about its buffers is an [`Error::Argument`] before a backend sizes a
//! table, a scratch block or a plan from them.

use super::{KernelSig, signature};
use crate::{DType, Error, KernelArg, Result};

/// What one ABI argument is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A buffer of the kernel's dtype.
    Buf,
    /// A buffer of a fixed dtype (`buf<i64>`, a cast's `buf<f16>`, ...).
    BufOf(DType),
    /// A buffer of the kernel's compute type (`buf<real>`: f64 for f64, else f32).
    BufReal,
    /// An i64 scalar (a count, flag or offset: never negative).
    I64,
    /// An f64 scalar.
    F64,
}

fn kinds(sig: &KernelSig) -> Vec<(&'static str, Kind)> {
    sig.args
        .split(',')
        .map(|a| {
            let a = a.trim();
            match a.split_once(':') {
                Some((name, ty)) => {
                    let ty = ty.trim();
                    let fixed = ty
                        .strip_prefix("buf<")
                        .and_then(|t| t.strip_suffix('>'))
                        .and_then(DType::parse);
                    let kind = match (ty, fixed) {
                        ("buf<real>", _) => Kind::BufReal,
                        (_, Some(d)) => Kind::BufOf(d),
                        ("f64", None) => Kind::F64,
                        _ => Kind::Buf,
                    };
                    (name.trim(), kind)
                }
                None => (a, Kind::I64),
            }
        })
        .collect()
}

/// The compute type of a float dtype (f64 for f64, else f32).
fn real_of(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Splits `{op}_{dtype}` into a table signature and its dtype.
fn split(name: &str) -> Option<(&'static KernelSig, DType)> {
    let (op, d) = name.rsplit_once('_')?;
    let dtype = DType::ALL.into_iter().find(|t| t.name() == d)?;
    let sig = signature(op)?;
    sig.dtypes.contains(&dtype).then_some((sig, dtype))
}

struct Checker<'a> {
    kernel: &'a str,
    args: &'a [KernelArg],
    /// The i64 scalars by position (0 where the argument is not a scalar).
    s: Vec<u64>,
}

impl Checker<'_> {
    fn err<T>(&self, index: usize, reason: String) -> Result<T> {
        Err(Error::Argument {
            kernel: self.kernel.to_string(),
            index,
            reason,
        })
    }

    /// Checked product of scalars; an overflow is an error naming `index`, also when
    /// another factor is 0 (the nonzero factors alone must fit: a lying size is refused
    /// whatever it is multiplied by, as the CPU kernels refuse it).
    fn prod(&self, index: usize, factors: &[u64]) -> Result<u64> {
        let mut p: u64 = 1;
        for &f in factors.iter().filter(|&&f| f != 0) {
            // Every kernel indexes with i64: an extent must fit in it.
            match p.checked_mul(f).filter(|&v| v <= i64::MAX as u64) {
                Some(v) => p = v,
                None => {
                    return self.err(
                        index,
                        format!("the extent {factors:?} overflows an i64 count"),
                    );
                }
            }
        }
        Ok(if factors.contains(&0) { 0 } else { p })
    }

    /// Buffer argument `index` must hold at least `need` elements.
    fn need(&self, index: usize, need: u64) -> Result<()> {
        let (bytes, size) = match self.args[index] {
            KernelArg::Buffer { bytes, dtype, .. } => (bytes, dtype.map_or(1, |d| d.size())),
            _ => unreachable!("kinds are checked first"),
        };
        let have = (bytes / size) as u64;
        if have < need {
            return self.err(
                index,
                format!("buffer holds {have} elements, the launch needs {need}"),
            );
        }
        Ok(())
    }

    /// `need(index, product of factors)`.
    fn need_prod(&self, index: usize, factors: &[u64]) -> Result<()> {
        let n = self.prod(index, factors)?;
        self.need(index, n)
    }
}

/// Checks the arguments of built-in kernel `name` (`{op}_{dtype}`) against its ABI
/// signature: the count, each argument's kind and dtype, every i64 scalar non-negative,
/// and every buffer at least as long as the scalars say it is read or written (extents
/// computed without overflow). Names outside the ABI table are left to the backend.
///
/// Contents of index buffers (`dims`, `strides`, `idx`) are device data and are not
/// read here: [`super::check_contents`] checks them where a backend can read them.
///
/// Errors: [`Error::Argument`] naming the kernel and the first offending argument.
pub fn check_args(name: &str, args: &[KernelArg]) -> Result<()> {
    let Some((sig, dtype)) = split(name) else {
        return Ok(());
    };
    let kinds = kinds(sig);
    let mut c = Checker {
        kernel: name,
        args,
        s: vec![0; args.len()],
    };
    if args.len() != kinds.len() {
        return c.err(
            args.len().min(kinds.len()),
            format!(
                "the kernel takes {} arguments ({}), {} were passed",
                kinds.len(),
                sig.args,
                args.len()
            ),
        );
    }
    for (i, (&(arg_name, kind), a)) in kinds.iter().zip(args).enumerate() {
        let ok = match (kind, *a) {
            (
                Kind::Buf | Kind::BufOf(_) | Kind::BufReal,
                KernelArg::Buffer {
                    ptr,
                    bytes,
                    dtype: d,
                },
            ) => {
                let want = match kind {
                    Kind::BufOf(fixed) => fixed,
                    Kind::BufReal => real_of(dtype),
                    _ => dtype,
                };
                // The absent buffer (null, empty) stands for an unused operand of any dtype.
                (ptr.0 == 0 && bytes == 0) || d == Some(want)
            }
            (Kind::I64, KernelArg::I64(v)) => {
                if v < 0 {
                    return c.err(i, format!("`{arg_name}` = {v} is negative"));
                }
                c.s[i] = v as u64;
                true
            }
            (Kind::F64, KernelArg::F64(_)) => true,
            _ => false,
        };
        if !ok {
            let want = match kind {
                Kind::Buf => format!("a buffer of {dtype}"),
                Kind::BufOf(d) => format!("a buffer of {d}"),
                Kind::BufReal => format!("a buffer of {}", real_of(dtype)),
                Kind::I64 => "an i64 scalar".to_string(),
                Kind::F64 => "an f64 scalar".to_string(),
            };
            return c.err(i, format!("`{arg_name}`: expected {want}, got {a:?}"));
        }
    }
    extents(&mut c, sig.op)
}

/// The per-op extents: which buffer must hold how many elements.
fn extents(c: &mut Checker<'_>, op: &str) -> Result<()> {
    let s = c.s.clone();
    match op {
        "add" | "sub" | "mul" | "div" | "pow" => {
            for i in 0..3 {
                c.need(i, s[3])?;
            }
        }
        "add_bc" | "sub_bc" | "mul_bc" | "div_bc" | "pow_bc" => {
            if s[6] == 0 {
                return c.err(6, "ndim must be at least 1".into());
            }
            c.need(0, s[7])?;
            if s[7] > 0 {
                // The first output reads a[0] and b[0].
                c.need(1, 1)?;
                c.need(2, 1)?;
            }
            for i in 3..6 {
                c.need(i, s[6])?;
            }
        }
        "relu" | "sigmoid" | "exp" | "tanh" | "sqrt" | "log" | "abs" | "neg" | "rsqrt" | "silu"
        | "softplus" | "sin" | "cos" | "leaky_relu" | "clip" | "erf" | "gelu" | "gelu_tanh" => {
            c.need(0, s[2])?;
            c.need(1, s[2])?;
        }
        "bmm" => {
            let (batch, m, k, n, asb, bsb) = (s[3], s[4], s[5], s[6], s[7], s[8]);
            c.need_prod(0, &[batch, m, n])?;
            // Each operand's size must fit even when the batch is empty (the CPU
            // kernel sizes its operands first: the same verdict on every backend).
            let (a_each, b_each) = (c.prod(1, &[m, k])?, c.prod(2, &[k, n])?);
            if batch > 0 {
                // Batch i reads [i*stride, i*stride + m*k): the last batch reaches furthest.
                for (i, each, stride) in [(1, a_each, asb), (2, b_each, bsb)] {
                    if each > 0 {
                        let end = c.prod(i, &[batch - 1, stride])?.checked_add(each);
                        match end {
                            Some(e) => c.need(i, e)?,
                            None => return c.err(i, "the operand extent overflows".into()),
                        }
                    }
                }
            }
        }
        "gather" => {
            let (outer, axis, inner, nidx) = (s[3], s[4], s[5], s[6]);
            c.need_prod(0, &[outer, nidx, inner])?;
            c.need_prod(1, &[outer, axis, inner])?;
            c.need(2, nidx)?;
        }
        "scatter" => {
            let (outer, axis, inner, nidx) = (s[3], s[4], s[5], s[6]);
            c.need_prod(0, &[outer, axis, inner])?;
            c.need(1, nidx)?;
            c.need_prod(2, &[outer, nidx, inner])?;
        }
        "check_index" => {
            c.need(0, s[1])?;
            c.need(3, 1)?;
        }
        "softmax" => {
            c.need_prod(0, &[s[2], s[3]])?;
            c.need_prod(1, &[s[2], s[3]])?;
        }
        "sum" => {
            c.need(0, 1)?;
            c.need(1, s[2])?;
        }
        "dot" => {
            c.need(0, 1)?;
            c.need(1, s[3])?;
            c.need(2, s[3])?;
        }
        "attention" => {
            let (has_mask, batch, heads, n, nkv, hd, hpb) =
                (s[5], s[6], s[7], s[8], s[9], s[10], s[11]);
            c.need_prod(0, &[batch, heads, n, hd])?;
            c.need_prod(1, &[batch, heads, n, hd])?;
            c.need_prod(2, &[batch, heads, nkv, hd])?;
            c.need_prod(3, &[batch, heads, nkv, hd])?;
            if has_mask != 0 {
                if hpb == 0 {
                    return c.err(11, "`hpb` is 0 with a mask".into());
                }
                c.need_prod(4, &[batch, heads / hpb, nkv])?;
            }
        }
        "attention_general" => {
            let spec = super::attention::general_spec_of(&s, 0.0)
                .or_else(|(i, reason)| c.err(i, reason))?;
            if let Some(reason) = spec.invalid() {
                return c.err(12, reason);
            }
            let (q, k, v, o) = spec
                .lens()
                .ok_or(())
                .or_else(|()| c.err(7, "the tensor sizes overflow".into()))?;
            let m = spec
                .mask_len()
                .ok_or(())
                .or_else(|()| c.err(15, "the mask extent overflows".into()))?;
            for (i, len) in [(0, o), (1, q), (2, k), (3, v), (4, m)] {
                c.need(i, len as u64)?;
            }
        }
        "attention_scores" => {
            let (has_mask, heads, n, nkv, hd, hpb) = (s[4], s[5], s[6], s[7], s[8], s[9]);
            c.need_prod(0, &[heads, n, nkv])?;
            c.need_prod(1, &[heads, n, hd])?;
            c.need_prod(2, &[heads, nkv, hd])?;
            if has_mask != 0 {
                if hpb == 0 {
                    return c.err(9, "`hpb` is 0 with a mask".into());
                }
                c.need_prod(3, &[heads / hpb, nkv])?;
            }
        }
        "gemm" => {
            let (m, k, n, has_c, has_bias) = (s[5], s[6], s[7], s[9], s[10]);
            let (c_rs, c_cs) = (s[14], s[15]);
            c.need_prod(0, &[m, n])?;
            c.need_prod(1, &[m, k])?;
            c.need_prod(2, &[k, n])?;
            if has_c != 0 && m != 0 && n != 0 {
                // The last element C is read at: (m-1)*c_rs + (n-1)*c_cs.
                let last = (m - 1)
                    .checked_mul(c_rs)
                    .and_then(|x| (n - 1).checked_mul(c_cs).and_then(|y| x.checked_add(y)))
                    .and_then(|x| x.checked_add(1));
                match last {
                    Some(v) => c.need(3, v)?,
                    None => return c.err(14, "C's strides overflow".into()),
                }
            }
            if has_bias != 0 {
                c.need(4, n)?;
            }
        }
        "conv2d" | "conv_transpose2d" => {
            let (n, c_in, h, w, c_out, kh, kw, oh, ow) =
                (s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12]);
            let (groups, has_bias) = (s[19], s[20]);
            if groups == 0 || c_in % groups != 0 || c_out % groups != 0 {
                return c.err(19, "groups must be >= 1 and divide c_in and c_out".into());
            }
            if [s[15], s[16], s[17], s[18], kh, kw].contains(&0) {
                return c.err(9, "kernel sizes, strides and dilations must be >= 1".into());
            }
            positions_fit(
                c,
                [
                    (11, oh, s[15], kh, s[17], s[13]),
                    (12, ow, s[16], kw, s[18], s[14]),
                ],
            )?;
            c.need_prod(0, &[n, c_out, oh, ow])?;
            c.need_prod(1, &[n, c_in, h, w])?;
            if op == "conv2d" {
                c.need_prod(2, &[c_out, c_in / groups, kh, kw])?;
            } else {
                c.need_prod(2, &[c_in, c_out / groups, kh, kw])?;
            }
            if has_bias != 0 {
                c.need(3, c_out)?;
            }
        }
        "max_pool2d" | "max_pool2d_index" => {
            if op == "max_pool2d_index" && s[16] > 1 {
                return c.err(16, format!("storage_order {} is not 0 or 1", s[16]));
            }
            let (n, ch, h, w, oh, ow) = (s[2], s[3], s[4], s[5], s[8], s[9]);
            if [s[12], s[13], s[14], s[15]].contains(&0) {
                return c.err(12, "strides and dilations must be >= 1".into());
            }
            positions_fit(
                c,
                [
                    (8, oh, s[12], s[6], s[14], s[10]),
                    (9, ow, s[13], s[7], s[15], s[11]),
                ],
            )?;
            c.need_prod(0, &[n, ch, oh, ow])?;
            c.need_prod(1, &[n, ch, h, w])?;
        }
        "copy_axis" => {
            let (outer, src_axis, inner, dst_axis, offset) = (s[2], s[3], s[4], s[5], s[6]);
            if offset.checked_add(src_axis).is_none_or(|e| e > dst_axis) {
                return c.err(
                    6,
                    format!("slot {offset}..{offset}+{src_axis} exceeds the axis of {dst_axis}"),
                );
            }
            c.need_prod(0, &[outer, dst_axis, inner])?;
            c.need_prod(1, &[outer, src_axis, inner])?;
        }
        "strided_copy" => {
            let rank = super::movement::MAX_RANK as u64;
            if s[4] == 0 || s[4] > rank {
                return c.err(4, format!("ndim {} outside 1..={rank}", s[4]));
            }
            c.need(0, s[6])?;
            if s[6] > 0 {
                // The first output reads x[offset] (every coordinate 0).
                match s[5].checked_add(1) {
                    Some(e) => c.need(1, e)?,
                    None => return c.err(5, "`offset` overflows".into()),
                }
            }
            c.need(2, s[4])?;
            c.need(3, s[4])?;
        }
        "resize_bilinear" | "resize_nearest" => {
            let (planes, ih, iw, oh, ow) = (s[2], s[3], s[4], s[5], s[6]);
            c.need_prod(0, &[planes, oh, ow])?;
            c.need_prod(1, &[planes, ih, iw])?;
            if planes > 0 && oh > 0 && ow > 0 && (ih == 0 || iw == 0) {
                return c.err(3, "an empty input cannot fill a non-empty output".into());
            }
            // The kernels' source-coordinate arithmetic (products up to (2*out + 1)*in)
            // is exact below 2^53: refused alike on every backend beyond it.
            for (idx, i, o) in [(5, ih, oh), (6, iw, ow)] {
                let big = o
                    .checked_mul(2)
                    .and_then(|v| v.checked_add(1))
                    .and_then(|v| v.checked_mul(i.max(1)));
                if !matches!(big, Some(v) if v < 1 << 53) {
                    return c.err(idx, "tap arithmetic beyond 2^53".into());
                }
            }
        }
        "eos_gather" => {
            let (batch, seq, d) = (s[3], s[4], s[5]);
            if seq == 0 {
                // Every row picks one of its seq tokens: none to pick is refused on
                // every backend (the CPU kernel alone refused it before).
                return c.err(4, "seq must be at least 1".into());
            }
            c.need_prod(0, &[batch, d])?;
            c.need_prod(1, &[batch, seq, d])?;
            c.need_prod(2, &[batch, seq])?;
        }
        "batch_norm" => {
            let (n, ch, sp) = (s[6], s[7], s[8]);
            c.need_prod(0, &[n, ch, sp])?;
            c.need_prod(1, &[n, ch, sp])?;
            for i in 2..6 {
                c.need(i, ch)?;
            }
        }
        "layer_norm" => {
            let (rows, n) = (s[4], s[5]);
            c.need_prod(0, &[rows, n])?;
            c.need_prod(1, &[rows, n])?;
            c.need(2, n)?;
            c.need(3, n)?;
        }
        // --- norm_ext block (layer_norm_ex, group_norm, rms_norm) ---
        "layer_norm_ex" => {
            let (rows, n, has_bias, has_stats) = (s[6], s[7], s[8], s[9]);
            for (i, f) in [(8, has_bias), (9, has_stats)] {
                if f > 1 {
                    return c.err(i, format!("flag {f} is not 0 or 1"));
                }
            }
            c.need_prod(0, &[rows, n])?;
            c.need_prod(1, &[rows, n])?;
            c.need(2, n)?;
            if has_bias == 1 {
                c.need(3, n)?;
            }
            if has_stats == 1 {
                c.need(4, rows)?;
                c.need(5, rows)?;
            }
        }
        "group_norm" => {
            let (batch, ch, sp, groups) = (s[4], s[5], s[6], s[7]);
            if groups == 0 || !ch.is_multiple_of(groups) {
                return c.err(7, format!("groups {groups} does not divide c = {ch}"));
            }
            c.need_prod(0, &[batch, ch, sp])?;
            c.need_prod(1, &[batch, ch, sp])?;
            c.need(2, ch)?;
            c.need(3, ch)?;
        }
        "rms_norm" => {
            c.need_prod(0, &[s[3], s[4]])?;
            c.need_prod(1, &[s[3], s[4]])?;
            c.need(2, s[4])?;
        }
        // --- end norm_ext block ---
        "softmax_axis" => {
            c.need_prod(0, &[s[2], s[3], s[4]])?;
            c.need_prod(1, &[s[2], s[3], s[4]])?;
        }
        "argmax" | "reduce_l2" => {
            c.need(0, s[2])?;
            c.need_prod(1, &[s[2], s[3]])?;
        }
        "reduce_axes" => {
            let (ndim, nkeep, n_out, code) = (s[4], s[5], s[6], s[8]);
            let rank = crate::reduce_axes::MAX_RANK as u64;
            if ndim == 0 || ndim > rank {
                return c.err(4, format!("ndim {ndim} outside 1..={rank}"));
            }
            if nkeep > ndim {
                return c.err(5, format!("nkeep {nkeep} exceeds ndim {ndim}"));
            }
            let int = c.kernel.ends_with("_i64") || c.kernel.ends_with("_i32");
            match crate::reduce_axes::ReduceOp::from_code(code as i64) {
                Some(r) if !int || r.supports_ints() => {}
                Some(r) => return c.err(8, format!("{r} is not defined for integers")),
                None => return c.err(8, format!("code {code} is not a reduction (0..8)")),
            }
            c.need(0, n_out)?;
            c.need(2, ndim)?;
            c.need(3, ndim)?;
            // The layout against x (contents) is checked where the dims can be read.
        }
        // The general resize (abi::resize).
        "resize" => {
            let (ndim, k, rows, n_out, interp) = (s[5], s[6], s[7], s[8], s[9]);
            let float = !(c.kernel.ends_with("_i64") || c.kernel.ends_with("_i32"));
            super::resize::resize_scalars(c.kernel, float, ndim, k, interp)?;
            c.need(0, n_out)?;
            c.need(2, 2 * ndim)?;
            c.need_prod(3, &[rows, 1 + k])?;
            c.need_prod(4, &[rows, k])?;
            // The extents and taps (contents) are checked where they can be read.
        }
        // The casts (abi::cast): out, a, n.
        _ if super::cast::source_of(op).is_some() => {
            c.need(0, s[2])?;
            c.need(1, s[2])?;
        }
        // Element-wise gather / scatter (abi::elements): data [outer, axis_len, inner],
        // idx (and upd, out) [outer, nidx, inner].
        "gather_elements" => {
            c.need_prod(0, &[s[3], s[6], s[5]])?;
            c.need_prod(1, &[s[3], s[4], s[5]])?;
            c.need_prod(2, &[s[3], s[6], s[5]])?;
        }
        "pad" => {
            if s[5] > 3 {
                return c.err(5, format!("pad mode {} is not in 0..=3", s[5]));
            }
            c.need(0, s[6])?;
            c.need(2, 1)?;
            c.need_prod(3, &[s[4], 5])?;
        }
        "cumsum" => {
            for i in [5, 6] {
                if s[i] > 1 {
                    return c.err(i, format!("flag {} is not 0 or 1", s[i]));
                }
            }
            c.need_prod(0, &[s[2], s[3], s[4]])?;
            c.need_prod(1, &[s[2], s[3], s[4]])?;
        }
        "topk" => {
            if s[7] > 1 {
                return c.err(7, format!("flag {} is not 0 or 1", s[7]));
            }
            if s[6] > s[4] {
                return c.err(6, format!("k = {} exceeds the axis length {}", s[6], s[4]));
            }
            c.need_prod(0, &[s[3], s[6], s[5]])?;
            c.need_prod(1, &[s[3], s[6], s[5]])?;
            c.need_prod(2, &[s[3], s[4], s[5]])?;
        }
        "scatter_elements" => {
            if s[7] > 4 {
                return c.err(7, format!("reduction code {} is not in 0..=4", s[7]));
            }
            c.need_prod(0, &[s[3], s[4], s[5]])?;
            c.need_prod(1, &[s[3], s[6], s[5]])?;
            c.need_prod(2, &[s[3], s[6], s[5]])?;
        }
        // Comparisons, select, logical (abi::compare).
        _ if super::compare::family(op).is_some() => {
            use super::compare::Family;
            let family = super::compare::family(op);
            let (op_max, n) = match family {
                Some(Family::Compare(_)) => (5, s[4]),
                Some(Family::Logical(_)) => (3, s[4]),
                _ => (0, s[4]),
            };
            if !matches!(family, Some(Family::Where(_))) && s[3] > op_max {
                return c.err(3, format!("op code {} is not in 0..={op_max}", s[3]));
            }
            let bufs = if matches!(family, Some(Family::Where(_))) {
                4
            } else {
                3
            };
            for i in 0..bufs {
                c.need(i, n)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every position a window kernel forms (`i*stride + k*dil`, plus a pad) fits in i64
/// with room to spare: `(index, out, stride, k, dil, pad)` per axis.
fn positions_fit(c: &Checker<'_>, axes: [(usize, u64, u64, u64, u64, u64); 2]) -> Result<()> {
    for (i, len, s, k, d, pad) in axes {
        let span = (len as u128) * (s as u128) + (k as u128) * (d as u128) + pad as u128;
        if span > (i64::MAX as u128) / 2 {
            return c.err(i, "positions overflow".into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DevicePtr;

    fn buf(elems: usize, d: DType) -> KernelArg {
        KernelArg::Buffer {
            ptr: DevicePtr(0x1000),
            bytes: elems * d.size(),
            dtype: Some(d),
        }
    }

    #[test]
    fn every_table_entry_has_readable_kinds() {
        for sig in super::super::all_kernels() {
            let k = kinds(sig);
            assert!(!k.is_empty(), "{}", sig.op);
            assert!(k.iter().all(|(n, _)| !n.is_empty()), "{}", sig.op);
        }
    }

    #[test]
    fn bmm_operand_sizes_must_fit_even_for_an_empty_batch() {
        // The long fuzz run's case: batch 0, k * n beyond i64.
        let h = DType::F16;
        let i = KernelArg::I64;
        let args = [
            buf(40, h),
            buf(41, h),
            buf(11, h),
            i(0),
            i(1),
            i(6),
            i(i64::MAX),
            i(13),
            i(4294967297),
        ];
        let e = check_args("bmm_f16", &args).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 2, .. }), "{e}");
    }

    #[test]
    fn resize_limits_are_checked_before_any_backend() {
        let b = DType::BF16;
        let i = KernelArg::I64;
        // out, x, planes, in_h, in_w, out_h, out_w.
        let ok = [buf(256, b), buf(64, b), i(1), i(8), i(8), i(16), i(16)];
        assert!(check_args("resize_nearest_bf16", &ok).is_ok());
        // The long fuzz run's case (the CPU kernel refused it, the emulator ran it):
        // out_h = i64::MAX with an empty output.
        let huge = [buf(29, b), buf(36, b), i(0), i(0), i(19), i(i64::MAX), i(0)];
        let e = check_args("resize_nearest_bf16", &huge).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 5, .. }), "{e}");
        // (2*out + 1) * in reaching 2^53 (planes = 0: no buffer needed).
        let wide = [
            buf(0, b),
            buf(0, b),
            i(0),
            i(1),
            i(1 << 41),
            i(1),
            i(1 << 12),
            i(0),
        ];
        let e = check_args("resize_bilinear_bf16", &wide).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 6, .. }), "{e}");
        // An empty input for a non-empty output.
        let empty = [buf(16, b), buf(0, b), i(1), i(0), i(8), i(4), i(4)];
        let e = check_args("resize_nearest_bf16", &empty).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 3, .. }), "{e}");
    }

    #[test]
    fn casts_check_both_dtypes_and_the_length() {
        let (h, f) = (DType::F16, DType::F32);
        let i = KernelArg::I64;
        // out: f32 (the kernel's dtype), a: f16 (the family's source).
        assert!(check_args("cast_f16_to_f32", &[buf(8, f), buf(8, h), i(8)]).is_ok());
        let e = check_args("cast_f16_to_f32", &[buf(8, f), buf(8, f), i(8)]).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        assert!(e.to_string().contains("a buffer of f16"), "{e}");
        let e = check_args("cast_f16_to_f32", &[buf(8, h), buf(8, h), i(8)]).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 0, .. }), "{e}");
        let e = check_args("cast_f16_to_f32", &[buf(8, f), buf(7, h), i(8)]).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        let e = check_args(
            "cast_i64_to_i32",
            &[buf(3, DType::I32), buf(9, DType::I64), i(4)],
        )
        .unwrap_err();
        assert!(matches!(e, Error::Argument { index: 0, .. }), "{e}");
    }

    #[test]
    fn lying_scalars_and_wrong_kinds_are_argument_errors() {
        let f = DType::F32;
        let ok = [buf(1, f), buf(10, f), KernelArg::I64(10)];
        assert!(check_args("sum_f32", &ok).is_ok());
        let lie = [buf(1, f), buf(10, f), KernelArg::I64(1 << 40)];
        let e = check_args("sum_f32", &lie).unwrap_err();
        assert!(matches!(e, Error::Argument { index: 1, .. }), "{e}");
        let neg = [buf(1, f), buf(10, f), KernelArg::I64(-1)];
        assert!(matches!(
            check_args("sum_f32", &neg),
            Err(Error::Argument { index: 2, .. })
        ));
        let dt = [buf(1, f), buf(10, DType::F64), KernelArg::I64(1)];
        assert!(matches!(
            check_args("sum_f32", &dt),
            Err(Error::Argument { index: 1, .. })
        ));
        assert!(matches!(
            check_args("sum_f32", &ok[..2]),
            Err(Error::Argument { index: 2, .. })
        ));
        // batch_norm: n = 0, c = 2^31 over 2-element parameter buffers.
        let mut bn = vec![buf(4, f), buf(4, f)];
        bn.extend((0..4).map(|_| buf(2, f)));
        bn.extend([
            KernelArg::I64(0),
            KernelArg::I64(1 << 31),
            KernelArg::I64(1),
            KernelArg::F64(1e-5),
        ]);
        assert!(matches!(
            check_args("batch_norm_f32", &bn),
            Err(Error::Argument { index: 2, .. })
        ));
        // Overflowing extents are errors, not wrapped products.
        let big = i64::MAX;
        let mm = [
            buf(4, f),
            buf(4, f),
            buf(4, f),
            KernelArg::I64(1),
            KernelArg::I64(big),
            KernelArg::I64(1),
            KernelArg::I64(big),
            KernelArg::I64(0),
            KernelArg::I64(0),
        ];
        assert!(matches!(
            check_args("bmm_f32", &mm),
            Err(Error::Argument { index: 0, .. })
        ));
        // eos_gather with no token to pick (seq = 0), whatever the other sizes.
        let eos = [
            buf(2, f),
            buf(0, f),
            buf(0, DType::I64),
            KernelArg::I64(2),
            KernelArg::I64(0),
            KernelArg::I64(1),
        ];
        assert!(matches!(
            check_args("eos_gather_f32", &eos),
            Err(Error::Argument { index: 4, .. })
        ));
        // Names outside the table are the backend's to refuse.
        assert!(check_args("no_such_f32", &[]).is_ok());
    }
}
