//! Synchronisation semantics and their failure reports, on hand-written PTX: deadlocks,
//! divergent aligned barriers, member-mask misuse, barriers with thread counts,
//! intra-warp progress of diverged groups, traps, the step limit, and unknown
//! instructions.

mod common;

use common::*;
use gpukit_ptx::{EmuOptions, ErrorKind, Module, ParamValue};

fn module(body: &str) -> Module {
    let text = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_p0\n)\n{{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\tld.param.u64 %rd1, [k_p0];\n\tmov.u32 %r1, %tid.x;\n\tand.b32 %r2, %r1, 31;\n{body}\n}}\n"
    );
    Module::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[allow(clippy::result_large_err)]
fn launch1(
    m: &Module,
    threads: u32,
    out: &Buf,
    opts: &EmuOptions,
) -> Result<(), gpukit_ptx::EmuError> {
    run(
        m,
        "k",
        (1, 1, 1),
        (threads, 1, 1),
        0,
        &[out],
        |p| vec![ParamValue::ptr(p[0])],
        opts,
    )
    .map(|_| ())
}

#[test]
fn warp_sync_waiting_for_a_barrier_is_a_deadlock() {
    // Lanes 0..15 wait at bar.warp.sync for lanes 16..31, which wait at bar.sync.
    let m = module(
        "\tsetp.lt.u32 %p1, %r2, 16;\n\t@!%p1 bra L_BAR;\n\tbar.warp.sync -1;\n\tbra.uni L_END;\nL_BAR:\n\tbar.sync 0;\nL_END:\n\tret;",
    );
    let out = Buf::zeroed(64);
    let e = launch1(&m, 32, &out, &EmuOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Deadlock(_)), "{e}");
    assert!(e.to_string().contains("deadlock"), "{e}");
}

#[test]
fn warps_at_different_aligned_barriers_diverge() {
    // Warp 0 and warp 1 reach different bar.sync instructions for barrier 0.
    let m = module(
        "\tsetp.lt.u32 %p1, %r1, 32;\n\t@%p1 bra L_A;\n\tbar.sync 0;\n\tbra.uni L_END;\nL_A:\n\tbar.sync 0;\nL_END:\n\tret;",
    );
    let out = Buf::zeroed(64);
    let e = launch1(&m, 64, &out, &EmuOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BarrierDivergence(_)), "{e}");
}

#[test]
fn exited_threads_do_not_block_a_barrier() {
    // Warp 1 exits; warp 0's barrier completes, then it stores.
    let m = module(
        "\tsetp.ge.u32 %p1, %r1, 32;\n\t@%p1 bra L_END;\n\tbar.sync 0;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], 7;\nL_END:\n\tret;",
    );
    let out = Buf::zeroed(64 * 4);
    launch1(&m, 64, &out, &EmuOptions::default()).unwrap();
    let got: Vec<u32> = read(&out);
    assert!(got[..32].iter().all(|&v| v == 7) && got[32..].iter().all(|&v| v == 0));
}

#[test]
fn counted_barrier_waits_only_for_its_threads() {
    // Warps 0 and 1 use barrier 1 with 64 threads; warps 2 and 3 never reach it.
    let m = module(
        "\tsetp.ge.u32 %p1, %r1, 64;\n\t@%p1 bra L_END;\n\tbar.sync 1, 64;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], 9;\nL_END:\n\tret;",
    );
    let out = Buf::zeroed(128 * 4);
    launch1(&m, 128, &out, &EmuOptions::default()).unwrap();
    let got: Vec<u32> = read(&out);
    assert!(got[..64].iter().all(|&v| v == 9) && got[64..].iter().all(|&v| v == 0));
}

#[test]
fn shuffle_member_mask_must_include_the_lane() {
    let m = module("\tshfl.sync.idx.b32 %r3, %r1, 0, 31, 1;\n\tret;");
    let out = Buf::zeroed(64);
    let e = launch1(&m, 32, &out, &EmuOptions::default()).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::WarpSync(_)), "{e}");
    assert_eq!(e.thread, Some((1, 0, 0)));
}

#[test]
fn diverged_groups_make_progress() {
    // Lane 0 spins on a flag in global memory that lane 1 (another group of the same
    // warp) sets: independent thread scheduling lets lane 1 run.
    let m = module(
        "\tsetp.eq.u32 %p1, %r2, 0;\n\tsetp.eq.u32 %p2, %r2, 1;\n\t@%p2 bra L_SET;\n\t@!%p1 bra L_END;\nL_SPIN:\n\tld.volatile.global.u32 %r3, [%rd1];\n\tsetp.eq.u32 %p3, %r3, 0;\n\t@%p3 bra L_SPIN;\n\tst.global.u32 [%rd1+4], 5;\n\tbra.uni L_END;\nL_SET:\n\tst.volatile.global.u32 [%rd1], 1;\nL_END:\n\tret;",
    );
    let out = Buf::zeroed(8);
    launch1(&m, 32, &out, &EmuOptions::default()).unwrap();
    assert_eq!(read::<u32>(&out), vec![1, 5]);
}

#[test]
fn trap_and_step_limit_are_reported() {
    let m = module("\tsetp.eq.u32 %p1, %r1, 3;\n\t@%p1 trap;\n\tret;");
    let out = Buf::zeroed(8);
    let e = launch1(&m, 32, &out, &EmuOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Trap);
    assert_eq!(e.thread, Some((3, 0, 0)));
    let m = module("L_LOOP:\n\tbra.uni L_LOOP;\n\tret;");
    let opts = EmuOptions {
        max_steps_per_block: Some(10_000),
        ..EmuOptions::default()
    };
    let e = launch1(&m, 32, &out, &opts).unwrap_err();
    assert_eq!(e.kind, ErrorKind::StepLimit(10_000));
}

#[test]
fn unknown_instructions_are_named_with_their_line() {
    let text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\tmov.u32 %r1, 1;\n\tfrobnicate.b32 %r2, %r1;\n\tret;\n}\n";
    let e = Module::parse(text).unwrap_err();
    assert_eq!(e.line, 8);
    assert!(e.message.contains("frobnicate.b32"), "{e}");
    // A known instruction with a modifier the emulator does not implement.
    let text = text.replace("frobnicate.b32 %r2, %r1", "add.sat.u32 %r2, %r1, %r1");
    let e = Module::parse(&text).unwrap_err();
    assert_eq!(e.line, 8);
    assert!(e.message.contains("add.sat.u32"), "{e}");
}

#[test]
fn modules_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Module>();
}

#[test]
fn narrow_address_registers_are_zero_extended() {
    // A 32-bit shared address computed with a negative offset: the register's upper
    // bits are not part of its value.
    let m = Module::parse(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_p0)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\t.shared .align 4 .b8 sm[128];\n\tld.param.u64 %rd1, [k_p0];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, sm;\n\tshl.b32 %r3, %r1, 2;\n\tadd.s32 %r4, %r2, %r3;\n\tadd.s32 %r5, %r4, -4;\n\tst.shared.u32 [%r5+4], %r1;\n\tbar.sync 0;\n\tld.shared.u32 %r6, [%r4];\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r6;\n\tret;\n}\n",
    )
    .unwrap();
    let out = Buf::zeroed(32 * 4);
    launch1(&m, 32, &out, &EmuOptions::default()).unwrap();
    assert_eq!(read::<u32>(&out), (0..32).collect::<Vec<u32>>());
}

#[test]
fn indexed_branches_and_barrier_reductions() {
    let m = module(
        "\tand.b32 %r3, %r1, 3;\nts: .branchtargets L0, L1, L2, L3;\n\tbrx.idx %r3, ts;\nL0:\n\tmov.u32 %r4, 10;\n\tbra.uni J;\nL1:\n\tmov.u32 %r4, 11;\n\tbra.uni J;\nL2:\n\tmov.u32 %r4, 12;\n\tbra.uni J;\nL3:\n\tmov.u32 %r4, 13;\nJ:\n\tsetp.lt.u32 %p1, %r3, 2;\n\tbar.red.popc.u32 %r5, 0, %p1;\n\tbar.red.and.pred %p2, 0, %p1;\n\tbar.red.or.pred %p3, 0, %p1;\n\tselp.u32 %r6, 1000, 0, %p2;\n\tselp.u32 %r7, 10000, 0, %p3;\n\tmad.lo.s32 %r8, %r5, 100, %r4;\n\tadd.s32 %r8, %r8, %r6;\n\tadd.s32 %r8, %r8, %r7;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r8;\n\tret;",
    );
    let out = Buf::zeroed(64 * 4);
    launch1(&m, 64, &out, &EmuOptions::default()).unwrap();
    let got: Vec<u32> = read(&out);
    for (t, v) in got.iter().enumerate() {
        assert_eq!(*v, 10 + (t as u32 & 3) + 32 * 100 + 10000, "thread {t}");
    }
}

#[test]
fn shared_broadcast_loads_sign_extend_and_split_vectors() {
    // Every lane reads the same shared bytes (the warp-wide broadcast path): a signed
    // byte, then a two-word vector; the stores before the barrier are lane by lane.
    let m = Module::parse(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 k_p0)\n{\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<4>;\n\t.shared .align 8 .b8 sm[64];\n\tld.param.u64 %rd1, [k_p0];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, sm;\n\tadd.s32 %r3, %r2, %r1;\n\tadd.s32 %r4, %r1, -16;\n\tst.shared.u8 [%r3], %r4;\n\tbar.sync 0;\n\tld.shared.s8 %r6, [%r2+3];\n\tld.shared.v2.u32 {%r7, %r8}, [%r2+8];\n\tmul.wide.u32 %rd2, %r1, 12;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r6;\n\tst.global.u32 [%rd3+4], %r7;\n\tst.global.u32 [%rd3+8], %r8;\n\tret;\n}\n",
    )
    .unwrap();
    let out = Buf::zeroed(32 * 12);
    launch1(&m, 32, &out, &EmuOptions::default()).unwrap();
    let got: Vec<u32> = read(&out);
    for t in 0..32 {
        assert_eq!(
            &got[3 * t..3 * t + 3],
            &[0xFFFF_FFF3, 0xFBFA_F9F8, 0xFFFE_FDFC],
            "thread {t}"
        );
    }
}
