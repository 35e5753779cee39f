//! The CPU backend's built-in kernels, by name (`{op}_{dtype}`): the implementations of
//! the table in [`gpukit_core::abi`], which the operator family launches through
//! [`gpukit_core::Kit::launch_builtin`].
//!
//! A built-in is called once per launch (the launch's grid is for GPUs) and does its own
//! tiling and rayon parallelism. It reads its arguments through [`BuiltinArgs`], which
//! checks every argument's kind and dtype, and it checks that the buffers cover what the
//! scalar arguments say before touching memory, so even a wrong launch cannot read or
//! write outside the buffers it was given.

pub use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};
pub use crate::kernels::simd::{SimdLevel, detected_simd_level, set_simd_limit, simd_level};

/// The built-in kernel called `name`, if the CPU backend has one.
pub fn lookup(name: &str) -> Option<BuiltinFn> {
    crate::kernels::table()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, f)| *f)
}

/// Names of every built-in kernel the CPU backend has, sorted.
pub fn names() -> Vec<String> {
    let mut v: Vec<String> = crate::kernels::table()
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    v.sort();
    v
}
