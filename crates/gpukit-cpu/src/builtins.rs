//! The CPU backend's built-in kernels, by name (`{op}_{dtype}`): the table the
//! operator family launches through [`gpukit_core::Kit::launch_builtin`].
//!
//! The arithmetic core and the neural-network ops fill this table in the issues after
//! the foundation; until then it is empty and every lookup is
//! [`gpukit_core::Error::KernelNotFound`].

use gpukit_core::CpuBody;

/// The built-in kernel called `name`, if the CPU backend has one.
pub fn lookup(name: &str) -> Option<CpuBody> {
    let _ = name;
    None
}

/// Names of every built-in kernel, sorted.
pub fn names() -> Vec<&'static str> {
    Vec::new()
}
