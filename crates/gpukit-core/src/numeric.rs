//! The scalar half of the numerics contract: the compute types ([`Real`]: f32, f64),
//! how storage types load and store ([`FloatElement`]), and every elementwise rule
//! (NaN and signed-zero rules of max/min/relu, integer division by zero, ...).
//!
//! These functions *are* the contract for one element; the reference oracle and every
//! backend's kernels call them (the CUDA header mirrors them line for line), so the
//! rules cannot drift between backends. What differs between the oracle and a kernel is
//! only the loop structure around them, which the equivalence suite checks.

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

use half::{bf16, f16};

use crate::{DType, Element, math};

/// A compute type: f32 or f64. Every method is one correctly rounded IEEE operation or
/// one of gpukit's portable functions ([`crate::math`]).
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialEq
    + PartialOrd
    + Debug
    + Default
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// +0.0: the starting value of every accumulation.
    const ZERO: Self;
    /// 1.0.
    const ONE: Self;
    /// -inf.
    const NEG_INFINITY: Self;
    /// `self * b + c` with one rounding.
    fn fma(self, b: Self, c: Self) -> Self;
    /// Correctly rounded square root.
    fn sqrt(self) -> Self;
    /// The absolute value: the sign bit cleared, nothing else changed (NaN payloads
    /// kept, `-0.0` gives `+0.0`).
    fn abs(self) -> Self;
    /// gpukit's portable `exp`.
    fn exp(self) -> Self;
    /// gpukit's portable `log`.
    fn log(self) -> Self;
    /// gpukit's portable `tanh`.
    fn tanh(self) -> Self;
    /// gpukit's portable `sigmoid`.
    fn sigmoid(self) -> Self;
    /// gpukit's portable `sin`.
    fn sin(self) -> Self;
    /// gpukit's portable `cos`.
    fn cos(self) -> Self;
    /// gpukit's portable `erf`.
    fn erf(self) -> Self;
    /// gpukit's portable `pow` (`self^y`, C99 special values).
    fn pow(self, y: Self) -> Self;
    /// Whether this is a NaN.
    fn is_nan(self) -> bool;
    /// Whether the sign bit is set.
    fn is_sign_negative(self) -> bool;
    /// Converts an f64 scalar argument to this type (round to nearest even).
    fn from_f64(v: f64) -> Self;
}

macro_rules! real {
    ($t:ty, $exp:path, $log:path, $tanh:path, $sig:path, $erf:path, $sin:path, $cos:path, $pow:path) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn fma(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                // std's float abs clears the sign bit and touches nothing else.
                <$t>::abs(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn log(self) -> Self {
                $log(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                $sig(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn pow(self, y: Self) -> Self {
                $pow(self, y)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $cos(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}

real!(
    f32,
    math::exp_f32,
    math::log_f32,
    math::tanh_f32,
    math::sigmoid_f32,
    math::erf_f32,
    math::sin_f32,
    math::cos_f32,
    math::pow_f32
);
real!(
    f64,
    math::exp_f64,
    math::log_f64,
    math::tanh_f64,
    math::sigmoid_f64,
    math::erf_f64,
    math::sin_f64,
    math::cos_f64,
    math::pow_f64
);

/// A floating-point storage type and its compute type (rule 6): f32 and f64 compute in
/// themselves; f16 and bf16 load exactly into f32 and store rounding to nearest even.
pub trait FloatElement: Element {
    /// The compute type.
    type Real: Real;
    /// Exact widening load.
    fn load(self) -> Self::Real;
    /// Store, rounding to nearest even (identity for f32/f64).
    fn store(r: Self::Real) -> Self;
}

impl FloatElement for f32 {
    type Real = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        self
    }
    #[inline(always)]
    fn store(r: f32) -> f32 {
        r
    }
}

impl FloatElement for f64 {
    type Real = f64;
    #[inline(always)]
    fn load(self) -> f64 {
        self
    }
    #[inline(always)]
    fn store(r: f64) -> f64 {
        r
    }
}

impl FloatElement for f16 {
    type Real = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        crate::halfconv::f16_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn store(r: f32) -> f16 {
        f16::from_bits(crate::halfconv::f32_to_f16(r))
    }
}

impl FloatElement for bf16 {
    type Real = f32;
    #[inline(always)]
    fn load(self) -> f32 {
        crate::halfconv::bf16_to_f32(self.to_bits())
    }
    #[inline(always)]
    fn store(r: f32) -> bf16 {
        bf16::from_bits(crate::halfconv::f32_to_bf16(r))
    }
}

/// The float dtypes (every op on floats supports these four).
pub const FLOAT_DTYPES: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];
/// The integer dtypes.
pub const INT_DTYPES: [DType; 2] = [DType::I64, DType::I32];

/// `max` with the contract's rules: NaN if either operand is NaN; `max(-0, +0) = +0`
/// in either order; otherwise the larger value.
#[inline(always)]
pub fn max_nan<R: Real>(a: R, b: R) -> R {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a > b {
        a
    } else if b > a {
        b
    } else if a.is_sign_negative() {
        // Equal: only ±0 pairs differ in bits; prefer +0.
        b
    } else {
        a
    }
}

/// `min` with the contract's rules: NaN if either operand is NaN; `min(-0, +0) = -0`
/// in either order; otherwise the smaller value.
#[inline(always)]
pub fn min_nan<R: Real>(a: R, b: R) -> R {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a < b {
        a
    } else if b < a {
        b
    } else if a.is_sign_negative() {
        a
    } else {
        b
    }
}

/// `relu(x)`: NaN passes through (ONNX: NaN propagates through elementwise ops);
/// `x > 0` gives `x`; everything else (negatives, -0.0, +0.0, -inf) gives +0.0.
#[inline(always)]
pub fn relu<R: Real>(x: R) -> R {
    if x.is_nan() || x > R::ZERO {
        x
    } else {
        R::ZERO
    }
}

/// The elementwise binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (integers: see [`int_div`]).
    Div,
    /// `a^b`: gpukit's portable `pow` for floats (C99 special values,
    /// [`crate::math::pow_f32`]); integers: see [`int_pow`].
    Pow,
}

impl BinaryOp {
    /// Every binary op.
    pub const ALL: [BinaryOp; 5] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
    ];

    /// The op's name in kernel names (`add`).
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Pow => "pow",
        }
    }

    /// Applies the op in a compute type (one IEEE operation; `pow` is gpukit's
    /// portable function).
    #[inline(always)]
    pub fn real<R: Real>(self, a: R, b: R) -> R {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Pow => a.pow(b),
        }
    }

    /// Applies the op to float storage elements: load, compute, store (rule 6).
    #[inline(always)]
    pub fn float<T: FloatElement>(self, a: T, b: T) -> T {
        T::store(self.real(a.load(), b.load()))
    }

    /// Applies the op to i64 (wrapping; division by [`int_div`]).
    #[inline(always)]
    pub fn i64(self, a: i64, b: i64) -> i64 {
        match self {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            BinaryOp::Div => int_div(a, b),
            BinaryOp::Pow => int_pow(a, b),
        }
    }

    /// Applies the op to i32 (wrapping; division by [`int_div32`]).
    #[inline(always)]
    pub fn i32(self, a: i32, b: i32) -> i32 {
        match self {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            BinaryOp::Div => int_div32(a, b),
            BinaryOp::Pow => int_pow32(a, b),
        }
    }
}

/// Integer division, defined everywhere: truncates toward zero; `a / 0 = 0`;
/// `MIN / -1 = MIN` (wrapping). A GPU does not trap, and a CPU must not panic.
#[inline(always)]
pub fn int_div(a: i64, b: i64) -> i64 {
    if b == 0 { 0 } else { a.wrapping_div(b) }
}

/// [`int_div`] for i32.
#[inline(always)]
pub fn int_div32(a: i32, b: i32) -> i32 {
    if b == 0 { 0 } else { a.wrapping_div(b) }
}

macro_rules! int_pow_impl {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(a: $t, b: $t) -> $t {
            if b < 0 {
                return match a {
                    1 => 1,
                    -1 => 1 - 2 * (b & 1),
                    _ => 0,
                };
            }
            // Square and multiply over the exponent's bits, low to high.
            let (mut acc, mut base, mut e): ($t, $t, $t) = (1, a, b);
            while e > 0 {
                if e & 1 == 1 {
                    acc = acc.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            acc
        }
    };
}

int_pow_impl!(
    /// Integer power, defined everywhere: `a^b` wrapping (the product modulo 2^64, so any
    /// multiplication order gives it); `a^0 = 1` (also `0^0`); a negative exponent gives
    /// the truncated `1 / a^|b|`: `1` for `a = 1`, `±1` for `a = -1` (by the exponent's
    /// parity), `0` otherwise (also for `a = 0`, as [`int_div`] defines `1 / 0 = 0`).
    int_pow,
    i64
);
int_pow_impl!(
    /// [`int_pow`] for i32 (the product modulo 2^32).
    int_pow32,
    i32
);

/// `abs(x)`: the sign bit cleared, every other bit kept (a NaN keeps its payload;
/// `-0.0` gives `+0.0`, `-inf` gives `+inf`). Exact.
#[inline(always)]
pub fn abs<R: Real>(x: R) -> R {
    x.abs()
}

/// `neg(x)`: the sign bit flipped, every other bit kept (`neg(+0.0) = -0.0`; a NaN
/// keeps its payload). Exact. This is IEEE `negate`, not `0 - x` (which gives `+0.0`
/// for `x = +0.0`).
#[inline(always)]
pub fn neg<R: Real>(x: R) -> R {
    -x
}

/// `rsqrt(x) = 1 / sqrt(x)`: the correctly rounded square root, then a correctly rounded
/// division, so **two roundings**: the result is within 2 ulp of `1/√x` (measured
/// 1.47), not always the correctly rounded value. Specials follow from the two IEEE operations: `rsqrt(+0) = +inf`,
/// `rsqrt(-0) = -inf` (`sqrt(-0) = -0`), `rsqrt(+inf) = +0`, `x < 0` and NaN give NaN.
#[inline(always)]
pub fn rsqrt<R: Real>(x: R) -> R {
    R::ONE / x.sqrt()
}

/// `silu(x) = x * sigmoid(x)` (also called swish): gpukit's portable sigmoid, then one
/// correctly rounded multiplication. `silu(-inf) = -0.0` (the limit; the product
/// itself would be `-inf * 0 = NaN`, which is what PyTorch's `x / (1 + exp(-x))`
/// gives there); `silu(+inf) = +inf`; NaN passes through.
#[inline(always)]
pub fn silu<R: Real>(x: R) -> R {
    if x == R::NEG_INFINITY {
        -R::ZERO
    } else {
        x * x.sigmoid()
    }
}

/// `softplus(x) = log(1 + exp(x))` (ONNX Softplus, PyTorch `softplus` with beta 1),
/// in a form that neither overflows for large `x` nor loses small results for very
/// negative `x`, built from gpukit's portable `exp` and `log`:
///
/// ```text
/// NaN          -> x (passes through)
/// u  = exp(-|x|)                    u in [0, 1]; exact |x| (sign bit cleared)
/// w  = 1 + u                        rounded; w in [1, 2]
/// l  = u                            if w == 1
///      log(w) * (u / (w - 1))       otherwise (w - 1 is exact)
/// result = x + l  if x > 0,  else l
/// ```
///
/// `l` is `log1p(u)` by Goldberg's method: the division by `w - 1` (the value `log`
/// was actually given, minus one) cancels the rounding of `w`. After `exp`: the
/// roundings of `1 + u`, `/` and `*`, `log`'s own error, and the final `+` for positive
/// `x`; the measured error (at most 2.63 ulp in f32, 2.16 in f64) is in
/// docs/numerics.md. `softplus(+inf) = +inf`, `softplus(-inf) = +0.0`,
/// `softplus(±0) = log(2)`; for `x` below `-24·ln 2 ≈ -16.6` (f32) / `-53·ln 2 ≈ -36.7`
/// (f64), where `1 + u` rounds to 1, the result is `exp(x)` itself, down through the
/// subnormals to `+0.0`.
#[inline(always)]
pub fn softplus<R: Real>(x: R) -> R {
    if x.is_nan() {
        return x;
    }
    let u = (-x.abs()).exp();
    let w = R::ONE + u;
    let l = if w == R::ONE {
        u
    } else {
        w.log() * (u / (w - R::ONE))
    };
    if x > R::ZERO { x + l } else { l }
}

/// The elementwise unary maps of the arithmetic core (floats only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// [`relu`].
    Relu,
    /// gpukit's `sigmoid`.
    Sigmoid,
    /// gpukit's `exp`.
    Exp,
    /// gpukit's `tanh`.
    Tanh,
    /// IEEE `sqrt`.
    Sqrt,
    /// gpukit's `log`.
    Log,
    /// [`abs`]: the sign bit cleared.
    Abs,
    /// [`neg`]: the sign bit flipped.
    Neg,
    /// [`rsqrt`]: `1 / sqrt(x)`, two roundings.
    Rsqrt,
    /// [`silu`]: `x * sigmoid(x)`.
    Silu,
    /// [`softplus`]: `log(1 + exp(x))`, overflow-free.
    Softplus,
    // Trigonometric maps (rotary embeddings): gpukit's portable sin and cos.
    /// gpukit's portable `sin` ([`crate::math::sin_f32`], [`crate::math::sin_f64`]).
    Sin,
    /// gpukit's portable `cos` ([`crate::math::cos_f32`], [`crate::math::cos_f64`]).
    Cos,
}

impl UnaryOp {
    /// Every unary op.
    pub const ALL: [UnaryOp; 13] = [
        UnaryOp::Relu,
        UnaryOp::Sigmoid,
        UnaryOp::Exp,
        UnaryOp::Tanh,
        UnaryOp::Sqrt,
        UnaryOp::Log,
        UnaryOp::Abs,
        UnaryOp::Neg,
        UnaryOp::Rsqrt,
        UnaryOp::Silu,
        UnaryOp::Softplus,
        UnaryOp::Sin,
        UnaryOp::Cos,
    ];

    /// The op's name in kernel names (`relu`).
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Relu => "relu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Exp => "exp",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Log => "log",
            UnaryOp::Abs => "abs",
            UnaryOp::Neg => "neg",
            UnaryOp::Rsqrt => "rsqrt",
            UnaryOp::Silu => "silu",
            UnaryOp::Softplus => "softplus",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
        }
    }

    /// Applies the op in a compute type.
    #[inline(always)]
    pub fn real<R: Real>(self, x: R) -> R {
        match self {
            UnaryOp::Relu => relu(x),
            UnaryOp::Sigmoid => x.sigmoid(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Log => x.log(),
            UnaryOp::Abs => abs(x),
            UnaryOp::Neg => neg(x),
            UnaryOp::Rsqrt => rsqrt(x),
            UnaryOp::Silu => silu(x),
            UnaryOp::Softplus => softplus(x),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
        }
    }

    /// Applies the op to a float storage element: load, compute, store.
    #[inline(always)]
    pub fn float<T: FloatElement>(self, x: T) -> T {
        T::store(self.real(x.load()))
    }
}

/// Arithmetic on any element type: the binary ops and the sum accumulation, with each
/// dtype's rules (floats: load, compute in the compute type, store; integers: wrapping,
/// [`int_div`]). Implemented for all six dtypes.
pub trait Arith: Element {
    /// The accumulator of a sum (the compute type for floats, the type itself for ints).
    type Acc: Copy + Send + Sync + Debug + 'static;
    /// `op(a, b)` under this dtype's rules.
    fn binary(op: BinaryOp, a: Self, b: Self) -> Self;
    /// The starting value of every accumulation lane: +0.0 or 0.
    fn acc_zero() -> Self::Acc;
    /// One element as an accumulator on its own: `load(x)` (keeps `-0.0`, unlike
    /// `acc_step(acc_zero(), x)`); the start of a running sum such as `cumsum`'s.
    fn acc_load(x: Self) -> Self::Acc;
    /// Folds one element into a lane: `acc + load(x)` (one rounding; wrapping for ints).
    fn acc_step(acc: Self::Acc, x: Self) -> Self::Acc;
    /// Merges two partial sums: `a + b`.
    fn acc_combine(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Stores a finished sum (rounding to nearest even for f16/bf16).
    fn acc_store(acc: Self::Acc) -> Self;
}

macro_rules! arith_float {
    ($t:ty) => {
        impl Arith for $t {
            type Acc = <$t as FloatElement>::Real;
            #[inline(always)]
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                op.float(a, b)
            }
            #[inline(always)]
            fn acc_zero() -> Self::Acc {
                Real::ZERO
            }
            #[inline(always)]
            fn acc_load(x: Self) -> Self::Acc {
                x.load()
            }
            #[inline(always)]
            fn acc_step(acc: Self::Acc, x: Self) -> Self::Acc {
                acc + x.load()
            }
            #[inline(always)]
            fn acc_combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
                a + b
            }
            #[inline(always)]
            fn acc_store(acc: Self::Acc) -> Self {
                <$t as FloatElement>::store(acc)
            }
        }
    };
}

arith_float!(f32);
arith_float!(f64);
arith_float!(f16);
arith_float!(bf16);

macro_rules! arith_int {
    ($t:ty, $method:ident) => {
        impl Arith for $t {
            type Acc = $t;
            #[inline(always)]
            fn binary(op: BinaryOp, a: Self, b: Self) -> Self {
                op.$method(a, b)
            }
            #[inline(always)]
            fn acc_zero() -> Self::Acc {
                0
            }
            #[inline(always)]
            fn acc_load(x: Self) -> Self::Acc {
                x
            }
            #[inline(always)]
            fn acc_step(acc: Self::Acc, x: Self) -> Self::Acc {
                acc.wrapping_add(x)
            }
            #[inline(always)]
            fn acc_combine(a: Self::Acc, b: Self::Acc) -> Self::Acc {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn acc_store(acc: Self::Acc) -> Self {
                acc
            }
        }
    };
}

arith_int!(i64, i64);
arith_int!(i32, i32);

/// Resolves an index along an axis of length `len`: negative counts from the end.
/// `None` when out of range (the caller reports [`crate::Error::IndexOutOfRange`]).
#[inline(always)]
pub fn resolve_index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let j = if i < 0 { i.checked_add(len)? } else { i };
    (0..len).contains(&j).then_some(j as usize)
}

/// Bitwise equality with the contract's NaN rule (rule 8): every non-NaN compares by
/// `to_bits()` (signed zeros differ); any NaN equals any NaN. Integers compare exactly.
pub fn same_bits<T: Element>(a: T, b: T) -> bool {
    let (x, y) = (a.to_f64(), b.to_f64());
    if T::DTYPE.is_float() && x.is_nan() && y.is_nan() {
        return true;
    }
    bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_nan_and_zero_rules() {
        assert!(max_nan(f32::NAN, 1.0).is_nan() && max_nan(1.0, f32::NAN).is_nan());
        assert!(min_nan(f64::NAN, 1.0).is_nan() && min_nan(1.0, f64::NAN).is_nan());
        for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
            assert_eq!(max_nan(a, b).to_bits(), 0.0f32.to_bits());
            assert_eq!(min_nan(a, b).to_bits(), (-0.0f32).to_bits());
        }
        assert_eq!(max_nan(-0.0f32, -0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(max_nan(2.0f32, f32::NEG_INFINITY), 2.0);
        assert_eq!(min_nan(2.0f32, f32::NEG_INFINITY), f32::NEG_INFINITY);
    }

    #[test]
    fn int_pow_matches_repeated_multiplication() {
        // Oracle: b multiplications in i128, reduced modulo 2^64 / 2^32 at the end.
        for a in [-7i64, -2, -1, 0, 1, 2, 3, 10, i64::MAX, i64::MIN] {
            for b in 0..70i64 {
                let mut p: i128 = 1;
                for _ in 0..b {
                    p = p.wrapping_mul(a as i128);
                }
                assert_eq!(int_pow(a, b), p as i64, "{a}^{b}");
                assert_eq!(int_pow32(a as i32, b as i32), p as i32, "{a}^{b} (i32)");
            }
        }
        for b in [-1i64, -2, -3, i64::MIN] {
            assert_eq!(int_pow(1, b), 1);
            assert_eq!(int_pow(-1, b), if b % 2 == 0 { 1 } else { -1 });
            assert_eq!(int_pow(0, b), 0);
            assert_eq!(int_pow(5, b), 0);
        }
        assert_eq!(int_pow32(-1, -3), -1);
        assert_eq!(int_pow32(-1, i32::MIN), 1);
        assert_eq!(int_pow32(2, -1), 0);
    }

    #[test]
    fn relu_rules() {
        assert_eq!(relu(-0.0f32).to_bits(), 0);
        assert_eq!(relu(-3.0f64), 0.0);
        assert_eq!(relu(f32::INFINITY), f32::INFINITY);
        assert!(relu(f32::NAN).is_nan());
        assert_eq!(relu(f32::from_bits(1)).to_bits(), 1);
    }

    #[test]
    fn integer_division_is_total() {
        assert_eq!(int_div(7, 0), 0);
        assert_eq!(int_div(i64::MIN, -1), i64::MIN);
        assert_eq!(int_div(-7, 2), -3);
        assert_eq!(int_div32(i32::MIN, -1), i32::MIN);
        assert_eq!(BinaryOp::Add.i32(i32::MAX, 1), i32::MIN);
    }

    #[test]
    fn storage_types_round_to_nearest_even() {
        // 1 + 2^-11 is half an f16 ulp above 1: ties to even gives 1.
        assert_eq!(f16::store(1.0 + 2f32.powi(-11)), f16::ONE);
        assert_eq!(
            BinaryOp::Add.float(f16::ONE, f16::from_f32(2f32.powi(-11))),
            f16::ONE
        );
        assert_eq!(bf16::store(1.0 + 2f32.powi(-8)), bf16::ONE);
        assert_eq!(f16::from_bits(1).load(), 2f32.powi(-24));
    }

    #[test]
    fn index_resolution() {
        assert_eq!(resolve_index(0, 3), Some(0));
        assert_eq!(resolve_index(-1, 3), Some(2));
        assert_eq!(resolve_index(-3, 3), Some(0));
        assert_eq!(resolve_index(-4, 3), None);
        assert_eq!(resolve_index(3, 3), None);
        assert_eq!(resolve_index(i64::MIN, 3), None);
        assert_eq!(resolve_index(0, 0), None);
    }

    #[test]
    fn same_bits_rule() {
        assert!(same_bits(f32::NAN, -f32::NAN));
        assert!(!same_bits(0.0f32, -0.0));
        assert!(same_bits(f16::NAN, f16::from_bits(0x7e01)));
        assert!(!same_bits(1i64, 2));
    }
}
