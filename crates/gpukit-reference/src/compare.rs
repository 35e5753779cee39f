//! Comparisons, `where` and logical ops on masks, as plain loops over exact values
//! (docs/numerics.md, "Comparisons and masks"). Independent of `gpukit_core::compare`:
//! every value is read as an exact f64 (floats: f16/bf16/f32 widen exactly) or an exact
//! i64 (integers, never through a float), and the IEEE rules are spelled out.

use std::cmp::Ordering;

use gpukit_core::compare::{CmpOp, LogicOp};
use gpukit_core::{DType, Element};

/// An element's exact value.
#[derive(Clone, Copy)]
enum Exact {
    Float(f64),
    Int(i64),
}

fn exact<T: Element>(x: T) -> Exact {
    match T::DTYPE {
        DType::I64 => Exact::Int(gpukit_core::bytemuck::cast::<T, i64>(x)),
        DType::I32 => Exact::Int(i64::from(gpukit_core::bytemuck::cast::<T, i32>(x))),
        _ => Exact::Float(x.to_f64()),
    }
}

/// `None` when unordered (a NaN is involved).
fn order(a: Exact, b: Exact) -> Option<Ordering> {
    match (a, b) {
        (Exact::Int(x), Exact::Int(y)) => Some(x.cmp(&y)),
        (Exact::Float(x), Exact::Float(y)) => {
            if x.is_nan() || y.is_nan() {
                None
            } else if x == y {
                // -0.0 == +0.0.
                Some(Ordering::Equal)
            } else if x < y {
                Some(Ordering::Less)
            } else {
                Some(Ordering::Greater)
            }
        }
        _ => unreachable!("both operands have one dtype"),
    }
}

fn holds(op: CmpOp, ord: Option<Ordering>) -> bool {
    match ord {
        None => op == CmpOp::Ne,
        Some(o) => match op {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        },
    }
}

fn truth<T: Element>(x: T) -> bool {
    match exact(x) {
        Exact::Int(v) => v != 0,
        Exact::Float(v) => v.is_nan() || v != 0.0,
    }
}

fn mask<D: Element>(b: bool) -> D {
    D::from_f64(if b { 1.0 } else { 0.0 }).expect("0 and 1 are exact in every dtype")
}

/// `op(a[i], b[i])` as 1 / 0 in `D`.
///
/// # Panics
/// When `a` and `b` differ in length.
pub fn compare<S: Element, D: Element>(a: &[S], b: &[S], op: CmpOp) -> Vec<D> {
    assert_eq!(a.len(), b.len(), "compare: operand lengths");
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        out.push(mask(holds(op, order(exact(a[i]), exact(b[i])))));
    }
    out
}

/// `a[i]` where `cond[i]` is nonzero (NaN included, -0.0 not), else `b[i]`.
///
/// # Panics
/// When the lengths differ.
pub fn where_<C: Element, T: Element>(cond: &[C], a: &[T], b: &[T]) -> Vec<T> {
    assert!(
        cond.len() == a.len() && a.len() == b.len(),
        "where: operand lengths"
    );
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        out.push(if truth(cond[i]) { a[i] } else { b[i] });
    }
    out
}

/// `op(a[i] != 0, b[i] != 0)` as 1 / 0 in `D` (`Not` reads only `a`; `b` may then be
/// empty).
///
/// # Panics
/// When the lengths differ (for a binary op).
pub fn logical<S: Element, D: Element>(a: &[S], b: &[S], op: LogicOp) -> Vec<D> {
    if op != LogicOp::Not {
        assert_eq!(a.len(), b.len(), "logical: operand lengths");
    }
    let mut out = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let x = truth(a[i]);
        let r = match op {
            LogicOp::Not => !x,
            LogicOp::And => x && truth(b[i]),
            LogicOp::Or => x || truth(b[i]),
            LogicOp::Xor => x != truth(b[i]),
        };
        out.push(mask(r));
    }
    out
}
