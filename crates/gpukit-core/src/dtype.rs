//! Element types: the runtime tag [`DType`] and the sealed compile-time trait [`Element`].

use std::fmt;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering};

use half::{bf16, f16};

use crate::{Error, Result};

/// The element type of a buffer, at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// IEEE binary16 (storage type: computed in f32).
    F16,
    /// bfloat16 (storage type: computed in f32).
    BF16,
    /// 64-bit two's complement integer.
    I64,
    /// 32-bit two's complement integer.
    I32,
}

impl DType {
    /// Every dtype, in a fixed order.
    pub const ALL: [DType; 6] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
    ];

    /// Bytes per element (also the alignment an element needs).
    pub const fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F64 | DType::I64 => 8,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// The short name used in kernel names (`add_f32`) and tables.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I64 => "i64",
            DType::I32 => "i32",
        }
    }

    /// Whether this is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// Parses a short name (`f32`, `bf16`, ...); `None` if unknown.
    pub fn parse(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
}

/// A Rust type that can live in a gpukit buffer. Sealed: exactly the types of [`DType`].
///
/// Conversion rules (the "f64 host view"):
/// - float → f64 is exact for every float dtype;
/// - f64 → f32/f16/bf16 rounds to nearest, ties to even (IEEE), overflow gives ±inf;
/// - f64 → i64/i32 must be exact: NaN, ±inf, a fraction or a value out of range is an
///   [`Error::Conversion`] (never a silent truncation or saturation);
/// - i64 → f64 rounds to nearest even when |v| > 2^53 (use the exact i64 paths for indices).
pub trait Element:
    sealed::Sealed + bytemuck::Pod + Copy + Send + Sync + PartialEq + fmt::Debug + Default + 'static
{
    /// The runtime tag of this type.
    const DTYPE: DType;

    /// Widens to f64 (exact for floats and i32; rounds for i64 beyond 2^53).
    fn to_f64(self) -> f64;

    /// Converts from f64 by the rules in the trait docs.
    fn from_f64(v: f64) -> Result<Self>;

    /// Atomically (relaxed) loads an element: the access CPU kernel bodies use so that
    /// two blocks touching the same element is a defined race, as on a GPU.
    ///
    /// # Safety
    /// `p` must be valid for reads of `Self` and aligned to `size_of::<Self>()`.
    unsafe fn load_relaxed(p: *const Self) -> Self;

    /// Atomically (relaxed) stores an element.
    ///
    /// # Safety
    /// `p` must be valid for writes of `Self` and aligned to `size_of::<Self>()`.
    unsafe fn store_relaxed(p: *mut Self, v: Self);
}

macro_rules! atomic_access {
    ($atomic:ty, $bits:ty) => {
        unsafe fn load_relaxed(p: *const Self) -> Self {
            // SAFETY: the caller guarantees `p` is valid and aligned to the element size,
            // which equals the atomic's size and alignment on every supported target
            // (64-bit targets: AtomicU64 is 8-aligned like f64/i64).
            let a = unsafe { <$atomic>::from_ptr(p as *mut $bits) };
            bytemuck::cast::<$bits, Self>(a.load(Ordering::Relaxed))
        }
        unsafe fn store_relaxed(p: *mut Self, v: Self) {
            // SAFETY: as in `load_relaxed`; the caller guarantees validity for writes.
            let a = unsafe { <$atomic>::from_ptr(p as *mut $bits) };
            a.store(bytemuck::cast::<Self, $bits>(v), Ordering::Relaxed)
        }
    };
}

fn exact_int(v: f64, min: f64, max_exclusive: f64, dtype: DType) -> Result<f64> {
    if v.is_finite() && v.fract() == 0.0 && v >= min && v < max_exclusive {
        Ok(v)
    } else {
        Err(Error::Conversion {
            value: format!("{v:?}"),
            dtype,
        })
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Result<Self> {
        Ok(v as f32)
    }
    atomic_access!(AtomicU32, u32);
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Result<Self> {
        Ok(v)
    }
    atomic_access!(AtomicU64, u64);
}

impl Element for f16 {
    const DTYPE: DType = DType::F16;
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn from_f64(v: f64) -> Result<Self> {
        Ok(f16::from_f64(v))
    }
    atomic_access!(AtomicU16, u16);
}

impl Element for bf16 {
    const DTYPE: DType = DType::BF16;
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    fn from_f64(v: f64) -> Result<Self> {
        Ok(bf16::from_f64(v))
    }
    atomic_access!(AtomicU16, u16);
}

impl Element for i64 {
    const DTYPE: DType = DType::I64;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Result<Self> {
        // [-2^63, 2^63): both bounds are exact in f64.
        exact_int(
            v,
            -9_223_372_036_854_775_808.0,
            9_223_372_036_854_775_808.0,
            DType::I64,
        )
        .map(|v| v as i64)
    }
    atomic_access!(AtomicU64, u64);
}

impl Element for i32 {
    const DTYPE: DType = DType::I32;
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Result<Self> {
        exact_int(v, -2_147_483_648.0, 2_147_483_648.0, DType::I32).map(|v| v as i32)
    }
    atomic_access!(AtomicU32, u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
        }
        assert_eq!(DType::parse("u8"), None);
        assert_eq!(DType::BF16.size(), 2);
        assert_eq!(<f64 as Element>::DTYPE.size(), std::mem::size_of::<f64>());
    }

    #[test]
    fn float_narrowing_rounds_to_nearest_even() {
        // 1 + 2^-24 is exactly half an f32 ulp above 1: ties to even gives 1.0.
        assert_eq!(f32::from_f64(1.0 + 2f64.powi(-24)).unwrap(), 1.0);
        // 1 + 3*2^-24 ties up to 1 + 2^-22 (even mantissa).
        assert_eq!(
            f32::from_f64(1.0 + 3.0 * 2f64.powi(-24)).unwrap(),
            1.0 + 2f32.powi(-22)
        );
        assert_eq!(f32::from_f64(1e300).unwrap(), f32::INFINITY);
        assert_eq!(<f16 as Element>::from_f64(65520.0).unwrap(), f16::INFINITY);
        assert_eq!(<bf16 as Element>::from_f64(1.0).unwrap().to_bits(), 0x3f80);
    }

    #[test]
    fn integer_conversion_is_exact_or_an_error() {
        assert_eq!(
            i64::from_f64(-9_223_372_036_854_775_808.0).unwrap(),
            i64::MIN
        );
        assert!(i64::from_f64(9_223_372_036_854_775_808.0).is_err());
        assert!(i64::from_f64(1.5).is_err());
        assert!(i64::from_f64(f64::NAN).is_err());
        assert!(i32::from_f64(2_147_483_648.0).is_err());
        assert_eq!(i32::from_f64(-2_147_483_648.0).unwrap(), i32::MIN);
        assert!(matches!(
            i32::from_f64(f64::INFINITY),
            Err(Error::Conversion {
                dtype: DType::I32,
                ..
            })
        ));
    }

    #[test]
    fn relaxed_access_round_trips_bits() {
        let mut x = [f32::from_bits(0x7fc0_0001), -0.0];
        // SAFETY: pointers into a live, aligned local array.
        unsafe {
            let p = x.as_mut_ptr();
            assert_eq!(f32::load_relaxed(p).to_bits(), 0x7fc0_0001);
            f32::store_relaxed(p.add(1), 3.5);
        }
        assert_eq!(x[1], 3.5);
    }
}
