//! `unary_owned` / `binary_owned`: the result is written over the operand exactly when
//! the tensor is the only handle on its buffer (same address, no allocation), never
//! when a clone or a view shares it (which keeps its values), and the bits are those of
//! `unary` / `binary` in every case, on the CPU and the PTX emulator.

mod common;

use common::*;
use gpukit::Tensor;
use gpukit::ops::{BinaryOp, UnaryOp};

fn addr(t: &Tensor) -> u64 {
    t.to_buf().unwrap().device_ptr().0
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|v| {
            if v.is_nan() {
                f32::NAN.to_bits()
            } else {
                v.to_bits()
            }
        })
        .collect()
}

const X: [f32; 6] = [1.5, -0.0, f32::NAN, f32::NEG_INFINITY, 1e-40, -3.25];
const Y: [f32; 6] = [2.0, 0.0, 1.0, f32::INFINITY, -1e-40, 0.5];

#[test]
fn owned_unary_writes_in_place_only_when_alone() {
    for kit in kits() {
        for op in [UnaryOp::Exp, UnaryOp::Relu, UnaryOp::Tanh, UnaryOp::Sqrt] {
            let want = bits(
                &Tensor::from_slice(&kit, &X, &[2, 3])
                    .unwrap()
                    .unary(op)
                    .unwrap(),
            );
            // Alone: the same buffer comes back, holding the result.
            let t = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let a = addr(&t);
            let y = t.unary_owned(op).unwrap();
            assert_eq!(addr(&y), a, "{op:?} alone");
            assert_eq!(bits(&y), want, "{op:?}");
            // A clone alive: a new buffer; the clone keeps its values.
            let t = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let keep = t.clone();
            let y = t.unary_owned(op).unwrap();
            assert_ne!(addr(&y), addr(&keep));
            assert_eq!(bits(&y), want);
            assert_eq!(keep.to_vec::<f32>().unwrap().len(), 6);
            assert_eq!(
                bits(&keep),
                bits(&Tensor::from_slice(&kit, &X, &[2, 3]).unwrap())
            );
            // A view alive (a reshape shares the buffer): the view keeps its values.
            let t = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let v = t.reshape(&[6]).unwrap();
            let y = t.unary_owned(op).unwrap();
            assert_eq!(bits(&y), want);
            assert_eq!(bits(&v), bits(&Tensor::from_slice(&kit, &X, &[6]).unwrap()));
            // A strided (transposed) operand is not written over either.
            let t = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap().t().unwrap();
            let want_t = bits(&t.unary(op).unwrap());
            assert_eq!(bits(&t.unary_owned(op).unwrap()), want_t);
        }
    }
}

#[test]
fn owned_binary_writes_in_place_only_with_the_same_dims_and_alone() {
    for kit in kits() {
        for op in [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Div] {
            let a0 = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let b = Tensor::from_slice(&kit, &Y, &[2, 3]).unwrap();
            let want = bits(&a0.binary(op, &b).unwrap());
            let a = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let p = addr(&a);
            let y = a.binary_owned(op, &b).unwrap();
            assert_eq!(addr(&y), p, "{op:?} alone, same dims");
            assert_eq!(bits(&y), want, "{op:?}");
            assert_eq!(
                bits(&b),
                bits(&Tensor::from_slice(&kit, &Y, &[2, 3]).unwrap())
            );
            // A broadcast right operand: a new buffer, the broadcast's bits.
            let row = Tensor::from_slice(&kit, &Y[..3], &[3]).unwrap();
            let want_b = bits(&a0.binary(op, &row).unwrap());
            let a = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            assert_eq!(bits(&a.binary_owned(op, &row).unwrap()), want_b);
            // The same tensor on both sides is shared: never written over.
            let a = Tensor::from_slice(&kit, &X, &[2, 3]).unwrap();
            let again = a.clone();
            let y = a.binary_owned(op, &again).unwrap();
            assert_eq!(bits(&y), bits(&a0.binary(op, &a0).unwrap()));
            assert_eq!(bits(&again), bits(&a0));
        }
        // Integers too (wrapping, as `binary`).
        let a = Tensor::from_slice(&kit, &[i32::MAX, -7, 3], &[3]).unwrap();
        let b = Tensor::from_slice(&kit, &[1i32, 2, -3], &[3]).unwrap();
        let y = a.binary_owned(BinaryOp::Add, &b).unwrap();
        assert_eq!(y.to_vec::<i32>().unwrap(), vec![i32::MIN, -5, 0]);
    }
}
