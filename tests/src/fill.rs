//! A tiny hand-written kernel shared by the launch-validation tests and the fuzz
//! targets: `out[i] = v` for `i < n` (arguments `out: *f32, v: f32, n: u64`), as PTX
//! and as the equivalent CPU body, and the two backends both run it on.

use gpukit::prelude::*;

/// The fill kernel's entry name.
pub const FILL_NAME: &str = "gk_fill";

/// The fill kernel as PTX (entry [`FILL_NAME`]).
pub const FILL_PTX: &str = r#".version 7.0
.target sm_70
.address_size 64
.visible .entry gk_fill(
    .param .u64 p_out,
    .param .f32 p_v,
    .param .u64 p_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<5>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p_out];
    ld.param.f32 %f1, [p_v];
    ld.param.u64 %rd2, [p_n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    cvt.u64.u32 %rd3, %r4;
    setp.ge.u64 %p1, %rd3, %rd2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd4, %rd1;
    shl.b64 %rd5, %rd3, 2;
    add.s64 %rd6, %rd4, %rd5;
    st.global.f32 [%rd6], %f1;
DONE:
    ret;
}
"#;

/// The fill kernel with `ptx` as its PTX text (the fuzz target passes mutants) and the
/// CPU body.
pub fn fill_def(ptx: impl Into<String>) -> KernelDef {
    KernelDef::new(FILL_NAME).ptx(ptx).cpu(|blk| {
        let (out, v, n) = (blk.buf::<f32>(0)?, blk.f32(1)?, blk.i64(2)?);
        for i in blk.thread_range(usize::try_from(n).unwrap_or(0)) {
            out.set(i, v);
        }
        Ok(())
    })
}

/// The CPU backend and the PTX emulator, named.
pub fn cpu_and_emu() -> Vec<(&'static str, Kit)> {
    vec![
        ("cpu", gpukit::cpu().unwrap()),
        ("ptx-emu", gpukit::open("ptx-emu").unwrap()),
    ]
}
