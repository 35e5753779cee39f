//! The reference oracle of [`linear`] (a PyTorch `nn.Linear`) and
//! [`matmul_broadcast`] (numpy `matmul` with batch broadcasting), written as the
//! contract reads: one output element at a time, its chain in the contract's order.

use gpukit_core::numeric::{FloatElement, Real};

use crate::{assert_len, numel};

/// `y[r][o] = Σ_i x[r][i]·w[o][i] + bias[o]` for `x` `[rows, in]` (the leading dims of
/// a `[..., in]` input, flattened), `w` `[out, in]` (PyTorch's layout), `bias` `[out]`.
///
/// Per output, in the compute type `R`: `acc = +0.0`; for `i = 0..in` ascending
/// `acc = fma(load(x[r][i]), load(w[o][i]), acc)`; `v = 1·acc` (gemm's `alpha = 1`,
/// exact); with a bias `v = v + load(bias[o])`; one store.
///
/// # Panics
/// If a slice length does not match the shape.
pub fn linear<T: FloatElement>(
    x: &[T],
    w: &[T],
    bias: Option<&[T]>,
    rows: usize,
    inf: usize,
    outf: usize,
) -> Vec<T> {
    assert_len("linear", "x", x.len(), numel(&[rows, inf], "linear"));
    assert_len("linear", "w", w.len(), numel(&[outf, inf], "linear"));
    if let Some(b) = bias {
        assert_len("linear", "bias", b.len(), outf);
    }
    let one = <T::Real as Real>::from_f64(1.0);
    let mut y = Vec::with_capacity(rows * outf);
    for r in 0..rows {
        for o in 0..outf {
            let mut acc = <T::Real as Real>::ZERO;
            for i in 0..inf {
                acc = x[r * inf + i].load().fma(w[o * inf + i].load(), acc);
            }
            let mut v = one * acc;
            if let Some(b) = bias {
                v = v + b[o].load();
            }
            y.push(T::store(v));
        }
    }
    y
}

/// numpy `matmul` of `a` `[..., m, k]` and `b` `[..., k, n]` (both rank >= 2,
/// contiguous) with the batch dims broadcast (aligned from the right, a dim of 1 or a
/// missing dim repeats): returns the output dims and the contiguous output. Each output
/// matrix is the product of the matrices the numpy index rules pick, each element the
/// fma chain over `t` ascending from +0.0 (as [`crate::matmul`]).
///
/// # Panics
/// If the shapes do not match numpy's rules or a slice length does not match its shape.
pub fn matmul_broadcast<T: FloatElement>(
    a: &[T],
    a_dims: &[usize],
    b: &[T],
    b_dims: &[usize],
) -> (Vec<usize>, Vec<T>) {
    let what = "matmul_broadcast";
    assert!(a_dims.len() >= 2 && b_dims.len() >= 2, "{what}: rank < 2");
    assert_len(what, "a", a.len(), numel(a_dims, what));
    assert_len(what, "b", b.len(), numel(b_dims, what));
    let (ra, rb) = (a_dims.len(), b_dims.len());
    let (m, k, n) = (a_dims[ra - 2], a_dims[ra - 1], b_dims[rb - 1]);
    assert_eq!(b_dims[rb - 2], k, "{what}: inner dims differ");
    let r = (ra - 2).max(rb - 2);
    // Each operand's batch dims, padded on the left with 1s.
    let pad = |d: &[usize]| -> Vec<usize> {
        let mut v = vec![1; r - (d.len() - 2)];
        v.extend_from_slice(&d[..d.len() - 2]);
        v
    };
    let (pa, pb) = (pad(a_dims), pad(b_dims));
    let batch: Vec<usize> = pa
        .iter()
        .zip(&pb)
        .map(|(&x, &y)| {
            assert!(
                x == y || x == 1 || y == 1,
                "{what}: batch dims do not broadcast"
            );
            if x == 1 { y } else { x }
        })
        .collect();
    let nb = numel(&batch, what);
    // The flat matrix index of an operand for output batch multi-index `idx`.
    let flat = |own: &[usize], idx: &[usize]| -> usize {
        own.iter()
            .zip(idx)
            .fold(0, |acc, (&d, &i)| acc * d + if d == 1 { 0 } else { i })
    };
    let mut out = Vec::with_capacity(nb * m * n);
    let mut idx = vec![0usize; r];
    for _ in 0..nb {
        let (ia, ib) = (flat(&pa, &idx) * m * k, flat(&pb, &idx) * k * n);
        for i in 0..m {
            for j in 0..n {
                let mut acc = <T::Real as Real>::ZERO;
                for t in 0..k {
                    acc = a[ia + i * k + t].load().fma(b[ib + t * n + j].load(), acc);
                }
                out.push(T::store(acc));
            }
        }
        // Next batch index, last axis fastest.
        for p in (0..r).rev() {
            idx[p] += 1;
            if idx[p] < batch[p] {
                break;
            }
            idx[p] = 0;
        }
    }
    let mut dims = batch;
    dims.extend([m, n]);
    (dims, out)
}
