//! The argument generator of the raw content-launch fuzz target
//! (tests/tests/fuzz_ops.rs): launches of the built-ins whose buffers' contents index
//! others (the broadcast ops' and the strided copy's dims and strides, gather/scatter
//! indices, `check_index`, `eos_gather` ids), small and plausible or lying.

use gpukit::prelude::*;

use super::{MAX_FIT, Rng};

/// The kernel ops (besides the `*_bc` broadcasts) whose buffers' contents index others.
pub const CONTENT_OPS: [&str; 6] = [
    "strided_copy",
    "gather",
    "scatter",
    "check_index",
    "eos_gather",
    "reduce_axes",
];

/// One argument of a raw launch, generated once and materialised on each kit.
pub enum Arg {
    /// A buffer of this dtype holding these bytes (whole elements).
    Buf(DType, Vec<u8>),
    /// An i64 scalar.
    I64(i64),
}

/// The error class compared across backends: the variant and, for argument errors,
/// the argument at fault.
pub fn class(r: &Result<()>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(Error::Argument { index, .. }) => format!("Argument({index})"),
        Err(Error::IndexOutOfRange {
            index, axis_len, ..
        }) => {
            format!("IndexOutOfRange({index}, {axis_len})")
        }
        Err(e) => {
            let s = format!("{e:?}");
            s.split([' ', '(', '{'])
                .next()
                .unwrap_or_default()
                .to_string()
        }
    }
}

/// i64 values as buffer bytes.
fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// A small count, sometimes a lie.
fn small(r: &mut Rng) -> i64 {
    match r.below(10) {
        0 => *r.pick(&[-1, 1 << 31, 1 << 40, i64::MAX]),
        1 => 0,
        _ => r.below(5) as i64,
    }
}

/// A dim or stride content: small, sometimes negative or extreme.
fn content(r: &mut Rng, lo: i64) -> i64 {
    match r.below(12) {
        0 => *r.pick(&[-1, i64::MIN, i64::MAX, 1 << 32, -(1 << 32)]),
        _ => lo + r.below(5) as i64,
    }
}

/// A length: `fitting` most of the time (when it is small), else random small.
fn length(r: &mut Rng, fitting: i64) -> usize {
    if (0..=MAX_FIT as i64).contains(&fitting) && !r.one_in(4) {
        fitting as usize
    } else {
        r.below(40) as usize
    }
}

/// Random (sometimes lying) arguments of a launch of `{op}_{d}`, `op` one of the
/// kernels with index-bearing buffers ([`CONTENT_OPS`], `*_bc`).
pub fn content_case(op: &str, d: DType, r: &mut Rng) -> Vec<Arg> {
    let data = |r: &mut Rng, n: usize| Arg::Buf(d, r.contents(d, n));
    match op {
        "add_bc" | "sub_bc" | "mul_bc" | "div_bc" | "pow_bc" => {
            let ndim = if r.one_in(12) {
                *r.pick(&[0i64, 9, -1])
            } else {
                1 + r.below(4) as i64
            };
            let nd = ndim.clamp(0, 8) as usize;
            let dims: Vec<i64> = (0..nd).map(|_| content(r, 1)).collect();
            // Contiguous strides with broadcast axes, sometimes a lie.
            let strides = |r: &mut Rng| -> Vec<i64> {
                let mut s = vec![0i64; nd];
                let mut acc = 1i64;
                for i in (0..nd).rev() {
                    if !r.one_in(3) {
                        s[i] = acc;
                        acc = acc.saturating_mul(dims[i].max(0));
                    }
                }
                if r.one_in(5) && nd > 0 {
                    let at = r.below(nd as u64) as usize;
                    s[at] = content(r, -1);
                }
                s
            };
            let (sa, sb) = (strides(r), strides(r));
            let n_out = dims
                .iter()
                .try_fold(1i64, |p, &x| p.checked_mul(x))
                .unwrap_or(-1);
            let n_out = if r.one_in(10) { small(r) } else { n_out.max(0) };
            let reach = |s: &[i64]| -> i64 {
                dims.iter()
                    .zip(s)
                    .map(|(&x, &st)| (x - 1).saturating_mul(st).max(0))
                    .fold(1i64, |a, b| a.saturating_add(b))
            };
            let (la, lb, lo) = (
                length(r, reach(&sa)),
                length(r, reach(&sb)),
                length(r, n_out),
            );
            vec![
                data(r, lo),
                data(r, la),
                data(r, lb),
                Arg::Buf(DType::I64, i64s(&dims)),
                Arg::Buf(DType::I64, i64s(&sa)),
                Arg::Buf(DType::I64, i64s(&sb)),
                Arg::I64(ndim),
                Arg::I64(n_out),
            ]
        }
        "strided_copy" => {
            let ndim = if r.one_in(12) {
                *r.pick(&[0i64, 9, -1])
            } else {
                1 + r.below(4) as i64
            };
            let nd = ndim.clamp(0, 8) as usize;
            let dims: Vec<i64> = (0..nd).map(|_| content(r, 1)).collect();
            let strides: Vec<i64> = (0..nd).map(|_| content(r, 0)).collect();
            let offset = if r.one_in(8) {
                small(r)
            } else {
                r.below(4) as i64
            };
            let n_out = dims
                .iter()
                .try_fold(1i64, |p, &x| p.checked_mul(x))
                .unwrap_or(-1);
            let n_out = if r.one_in(10) { small(r) } else { n_out.max(0) };
            let last = dims
                .iter()
                .zip(&strides)
                .map(|(&x, &s)| (x - 1).saturating_mul(s).max(0))
                .fold(offset.saturating_add(1), |a, b| a.saturating_add(b));
            let (lo, lx) = (length(r, n_out), length(r, last));
            vec![
                data(r, lo),
                data(r, lx),
                Arg::Buf(DType::I64, i64s(&dims)),
                Arg::Buf(DType::I64, i64s(&strides)),
                Arg::I64(ndim),
                Arg::I64(offset),
                Arg::I64(n_out),
            ]
        }
        "reduce_axes" => {
            let ndim = if r.one_in(12) {
                *r.pick(&[0i64, 9, -1])
            } else {
                1 + r.below(4) as i64
            };
            let nd = ndim.clamp(0, 8) as usize;
            let nkeep = if r.one_in(12) {
                small(r)
            } else {
                r.below(nd as u64 + 1) as i64
            };
            let dims: Vec<i64> = (0..nd).map(|_| content(r, 0)).collect();
            let strides: Vec<i64> = (0..nd).map(|_| content(r, 0)).collect();
            let k = (nkeep.clamp(0, nd as i64)) as usize;
            let prod = |v: &[i64]| v.iter().try_fold(1i64, |p, &x| p.checked_mul(x));
            let n_out = prod(&dims[..k]).unwrap_or(-1);
            let n_red = prod(&dims[k..]).unwrap_or(-1);
            let n_out = if r.one_in(10) { small(r) } else { n_out.max(0) };
            let n_red = if r.one_in(10) { small(r) } else { n_red.max(0) };
            let last = dims
                .iter()
                .zip(&strides)
                .map(|(&x, &s)| (x - 1).saturating_mul(s).max(0))
                .fold(1i64, |a, b| a.saturating_add(b));
            let code = if r.one_in(8) {
                *r.pick(&[-1i64, 8, 1 << 40])
            } else {
                r.below(8) as i64
            };
            let (lo, lx) = (
                length(r, n_out),
                length(r, last.max(n_out.saturating_mul(n_red))),
            );
            vec![
                data(r, lo),
                data(r, lx),
                Arg::Buf(DType::I64, i64s(&dims)),
                Arg::Buf(DType::I64, i64s(&strides)),
                Arg::I64(ndim),
                Arg::I64(nkeep),
                Arg::I64(n_out),
                Arg::I64(n_red),
                Arg::I64(code),
            ]
        }
        "gather" | "scatter" => {
            let (outer, axis, inner, nidx) = (small(r), small(r), small(r), small(r));
            let p = |v: &[i64]| {
                v.iter()
                    .try_fold(1i64, |a, &b| a.checked_mul(b))
                    .unwrap_or(-1)
            };
            let nidx_len = length(r, nidx);
            let idx = Arg::Buf(
                DType::I64,
                r.indices(nidx_len, axis.clamp(0, 1 << 20) as usize),
            );
            let big = length(r, p(&[outer, axis, inner]));
            let per = length(r, p(&[outer, nidx, inner]));
            let scalars = [outer, axis, inner, nidx].map(Arg::I64);
            let mut v = if op == "gather" {
                vec![data(r, per), data(r, big), idx]
            } else {
                let y = data(r, big);
                vec![y, idx, data(r, per)]
            };
            v.extend(scalars);
            v
        }
        "check_index" => {
            let (n, axis) = (small(r), small(r));
            let len = length(r, n);
            vec![
                Arg::Buf(DType::I64, r.indices(len, axis.clamp(0, 1 << 20) as usize)),
                Arg::I64(n),
                Arg::I64(axis),
                Arg::Buf(DType::I64, i64s(&[7])),
            ]
        }
        _ => {
            // eos_gather: out, x, ids, batch, seq, d.
            let (batch, seq, dd) = (small(r), small(r), small(r));
            let p = |v: &[i64]| {
                v.iter()
                    .try_fold(1i64, |a, &b| a.checked_mul(b))
                    .unwrap_or(-1)
            };
            let (lo, lx, li) = (
                length(r, p(&[batch, dd])),
                length(r, p(&[batch, seq, dd])),
                length(r, p(&[batch, seq])),
            );
            vec![
                data(r, lo),
                data(r, lx),
                Arg::Buf(DType::I64, r.contents(DType::I64, li)),
                Arg::I64(batch),
                Arg::I64(seq),
                Arg::I64(dd),
            ]
        }
    }
}

/// Whether two buffers' bytes are equal as elements of `d`, any NaN equal to any NaN
/// (i64 index buffers compare exactly: their length says which they are).
pub fn same_bytes(d: DType, a: &[u8], b: &[u8]) -> bool {
    use gpukit::half::{bf16, f16};
    if a.len() != b.len() {
        return false;
    }
    if a == b {
        return true;
    }
    let nan_eq = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    match d {
        DType::F32 if a.len().is_multiple_of(4) => {
            a.chunks_exact(4).zip(b.chunks_exact(4)).all(|(x, y)| {
                let f = |c: &[u8]| f32::from_ne_bytes(c.try_into().unwrap()) as f64;
                nan_eq(f(x), f(y))
            })
        }
        DType::F64 if a.len().is_multiple_of(8) => {
            a.chunks_exact(8).zip(b.chunks_exact(8)).all(|(x, y)| {
                let f = |c: &[u8]| f64::from_ne_bytes(c.try_into().unwrap());
                nan_eq(f(x), f(y))
            })
        }
        DType::F16 | DType::BF16 if a.len().is_multiple_of(2) => {
            a.chunks_exact(2).zip(b.chunks_exact(2)).all(|(x, y)| {
                let bits = |c: &[u8]| u16::from_ne_bytes(c.try_into().unwrap());
                let f = |c: &[u8]| {
                    if d == DType::F16 {
                        f16::from_bits(bits(c)).to_f64()
                    } else {
                        bf16::from_bits(bits(c)).to_f64()
                    }
                };
                (bits(x) == bits(y)) || (f(x).is_nan() && f(y).is_nan())
            })
        }
        _ => false,
    }
}
