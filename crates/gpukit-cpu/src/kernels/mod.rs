//! The CPU implementations of [`gpukit_core::abi::KERNELS`].

use std::sync::OnceLock;

use crate::builtins::BuiltinFn;

/// `(name, entry point)` for every built-in kernel.
pub(crate) fn table() -> &'static [(String, BuiltinFn)] {
    static TABLE: OnceLock<Vec<(String, BuiltinFn)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let v: Vec<(String, BuiltinFn)> = Vec::new();
        v
    })
}
