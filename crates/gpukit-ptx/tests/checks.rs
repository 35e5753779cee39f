//! Memcheck and racecheck on planted faults (tests/fixtures/faults.cu), and their
//! correct twins.

mod common;

use common::*;
use gpukit_ptx::{EmuOptions, ErrorKind, ParamValue, RaceKind, Space};

#[test]
fn out_of_bounds_global_write_is_reported() {
    let m = fixture("faults");
    let n = 300usize;
    let out = Buf::zeroed(n * 4);
    let params = |p: &[u64], extra: i32| {
        vec![
            ParamValue::ptr(p[0]),
            ParamValue::i32(n as i32),
            ParamValue::i32(extra),
        ]
    };
    // Twin: exactly n elements.
    run(
        &m,
        "global_write",
        (2, 1, 1),
        (256, 1, 1),
        0,
        &[&out],
        |p| params(p, 0),
        &EmuOptions::default(),
    )
    .unwrap();
    let got: Vec<f32> = read(&out);
    assert!(got.iter().enumerate().all(|(i, v)| *v == i as f32));
    // One past the end.
    let base = {
        let mut mem = gpukit_ptx::GlobalMemory::new();
        mem.insert_atomic(out.words()).unwrap()
    };
    let e = run(
        &m,
        "global_write",
        (2, 1, 1),
        (256, 1, 1),
        0,
        &[&out],
        |p| params(p, 1),
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kernel, "global_write");
    assert_eq!(
        e.kind,
        ErrorKind::OutOfBounds {
            space: Space::Global,
            size: 4,
            write: true
        },
        "{e}"
    );
    // Thread 300 = block 1, thread 44 writes out[300].
    assert_eq!(e.block, Some((1, 0, 0)));
    assert_eq!(e.thread, Some((44, 0, 0)));
    assert_eq!(e.address, Some(base + 4 * n as u64));
    let i = e.instruction.as_ref().unwrap();
    assert!(i.text.starts_with("st.global.f32"), "{i}");
    assert!(i.line > 0);
    // The same report with memcheck "off": the emulator never touches memory outside
    // the allocations.
    let e2 = run(
        &m,
        "global_write",
        (2, 1, 1),
        (256, 1, 1),
        0,
        &[&out],
        |p| params(p, 1),
        &EmuOptions::fast(),
    )
    .unwrap_err();
    assert_eq!(e2.kind, e.kind);
    let msg = e.to_string();
    assert!(
        msg.contains("global_write")
            && msg.contains("out-of-bounds")
            && msg.contains("st.global.f32"),
        "{msg}"
    );
}

#[test]
fn out_of_bounds_shared_read_is_reported() {
    let m = fixture("faults");
    assert_eq!(m.kernel("shared_read").unwrap().static_shared_bytes, 1024);
    let out = Buf::zeroed(256 * 4);
    let params = |p: &[u64], off: i32| vec![ParamValue::ptr(p[0]), ParamValue::i32(off)];
    run(
        &m,
        "shared_read",
        (1, 1, 1),
        (256, 1, 1),
        0,
        &[&out],
        |p| params(p, 0),
        &EmuOptions::default(),
    )
    .unwrap();
    let got: Vec<f32> = read(&out);
    assert!(got.iter().enumerate().all(|(i, v)| *v == (3 * i) as f32));
    let e = run(
        &m,
        "shared_read",
        (1, 1, 1),
        (256, 1, 1),
        0,
        &[&out],
        |p| params(p, 1),
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::OutOfBounds {
            space: Space::Shared,
            size: 4,
            write: false
        },
        "{e}"
    );
    // The first thread to read past the end: thread 255 reads s[256] (byte 1024).
    assert_eq!(e.thread, Some((255, 0, 0)));
    assert_eq!(e.address, Some(1024));
    assert!(e.instruction.unwrap().text.starts_with("ld.shared.f32"));
}

#[test]
fn missing_syncthreads_is_a_shared_race() {
    let m = fixture("faults");
    let n = 256usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let (bi, out) = (buf_of(&input), Buf::zeroed(n * 4));
    let params = |p: &[u64]| vec![ParamValue::ptr(p[0]), ParamValue::ptr(p[1])];
    // The twin with the barrier: no report, the neighbour's value.
    run(
        &m,
        "neighbour_sync",
        (1, 1, 1),
        (256, 1, 1),
        0,
        &[&out, &bi],
        params,
        &EmuOptions::default(),
    )
    .unwrap();
    let got: Vec<f32> = read(&out);
    for i in 0..n {
        assert_eq!(got[i], input[(i + 1) % n]);
    }
    let e = run(
        &m,
        "neighbour_nosync",
        (1, 1, 1),
        (256, 1, 1),
        0,
        &[&out, &bi],
        params,
        &EmuOptions::default(),
    )
    .unwrap_err();
    let ErrorKind::SharedRace {
        kind,
        other_thread,
        other_instruction,
    } = &e.kind
    else {
        panic!("expected a race, got {e}");
    };
    // Lane 0 of warp 0 reads s[1], written by thread 1 in the same step (no barrier,
    // and no __syncwarp either).
    assert_eq!(*kind, RaceKind::ReadAfterWrite, "{e}");
    assert_eq!(e.thread, Some((0, 0, 0)));
    assert_eq!(*other_thread, (1, 0, 0));
    assert!(other_instruction.text.starts_with("st.shared.f32"), "{e}");
    assert!(
        e.instruction
            .as_ref()
            .unwrap()
            .text
            .starts_with("ld.shared.f32"),
        "{e}"
    );
    assert_eq!(e.address, Some(4));
    // Racecheck off: no report.
    run(
        &m,
        "neighbour_nosync",
        (1, 1, 1),
        (256, 1, 1),
        0,
        &[&out, &bi],
        params,
        &EmuOptions::fast(),
    )
    .unwrap();
}

#[test]
fn misaligned_store_is_reported() {
    let m = fixture("faults");
    let out = Buf::zeroed(64);
    let params = |p: &[u64], off: i32| vec![ParamValue::ptr(p[0]), ParamValue::i32(off)];
    run(
        &m,
        "misaligned",
        (1, 1, 1),
        (32, 1, 1),
        0,
        &[&out],
        |p| params(p, 4),
        &EmuOptions::default(),
    )
    .unwrap();
    assert_eq!(read::<u32>(&out)[1], 7);
    let e = run(
        &m,
        "misaligned",
        (1, 1, 1),
        (32, 1, 1),
        0,
        &[&out],
        |p| params(p, 2),
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Misaligned {
            space: Space::Global,
            size: 4,
            write: true
        },
        "{e}"
    );
    assert_eq!(e.thread, Some((0, 0, 0)));
    assert_eq!(e.block, Some((0, 0, 0)));
}

#[test]
fn the_lowest_failing_block_is_reported() {
    let m = fixture("faults");
    // Every block but the first writes out of bounds (the buffer holds one block).
    let out = Buf::zeroed(256 * 4);
    for _ in 0..3 {
        let e = run(
            &m,
            "global_write",
            (64, 1, 1),
            (256, 1, 1),
            0,
            &[&out],
            |p| {
                vec![
                    ParamValue::ptr(p[0]),
                    ParamValue::i32(1 << 20),
                    ParamValue::i32(0),
                ]
            },
            &EmuOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e.block, Some((1, 0, 0)));
        assert_eq!(e.thread, Some((0, 0, 0)));
    }
}

#[test]
fn bad_launches_are_rejected() {
    let m = fixture("faults");
    let out = Buf::zeroed(64);
    let e = run(
        &m,
        "nope",
        (1, 1, 1),
        (32, 1, 1),
        0,
        &[&out],
        |_| vec![],
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownKernel);
    let e = run(
        &m,
        "misaligned",
        (1, 1, 1),
        (32, 1, 1),
        0,
        &[&out],
        |p| vec![ParamValue::ptr(p[0])],
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadLaunch(_)), "{e}");
    let e = run(
        &m,
        "misaligned",
        (1, 1, 1),
        (32, 1, 1),
        0,
        &[&out],
        |p| vec![ParamValue::ptr(p[0]), ParamValue::i64(0)],
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadLaunch(_)), "{e}");
    let e = run(
        &m,
        "misaligned",
        (1, 1, 1),
        (2048, 1, 1),
        0,
        &[&out],
        |p| vec![ParamValue::ptr(p[0]), ParamValue::i32(0)],
        &EmuOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::BadLaunch(_)), "{e}");
}

/// Runs `kernel` of `m` on one block of 64 threads, `mode` its only parameter.
#[allow(clippy::result_large_err)]
fn run_mode(
    m: &gpukit_ptx::Module,
    kernel: &str,
    mode: i32,
) -> Result<gpukit_ptx::LaunchStats, gpukit_ptx::EmuError> {
    run(
        m,
        kernel,
        (1, 1, 1),
        (64, 1, 1),
        0,
        &[],
        |_| vec![ParamValue::i32(mode)],
        &EmuOptions::default(),
    )
}

/// Racecheck keeps a record per 4-byte word until part of a word is accessed, then per
/// byte: races stay exact at byte granularity either way.
#[test]
#[allow(clippy::result_large_err)]
fn racecheck_is_exact_per_byte_across_whole_and_partial_word_accesses() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry words(.param .u32 mode)
{
    .reg .b32 %r<8>;
    .reg .b16 %h<2>;
    .reg .pred %p<8>;
    .shared .align 4 .b8 buf[64];
    ld.param.u32 %r1, [mode];
    mov.u32 %r2, %tid.x;
    cvt.u16.u32 %h1, %r2;
    setp.eq.u32 %p1, %r2, 0;
    setp.eq.u32 %p2, %r2, 32;
    setp.eq.u32 %p3, %r2, 33;
    setp.eq.u32 %p4, %r2, 34;
    // Two threads of two warps write the two halves of word 0: no race between them.
    @%p1 st.shared.u16 [buf], %h1;
    @%p2 st.shared.u16 [buf+2], %h1;
    // Thread 0 writes word 1 whole.
    @%p1 st.shared.u32 [buf+4], %r2;
    setp.eq.u32 %p5, %r1, 0;
    @%p5 bar.sync 0;
    setp.eq.u32 %p6, %r1, 3;
    @%p6 bar.sync 0;
    // Mode 3: after the barrier, threads 32 and 33 write bytes 5 and 6 of word 1.
    @%p6 bra.uni BYTES;
    bra.uni READ;
BYTES:
    @%p2 st.shared.u8 [buf+5], %h1;
    @%p3 st.shared.u8 [buf+6], %h1;
READ:
    setp.eq.u32 %p7, %r1, 2;
    @%p7 bra.uni PART;
    // Modes 0, 1, 3: thread 34 reads words 0 and 1 whole.
    @%p4 ld.shared.u32 %r3, [buf];
    @%p4 ld.shared.u32 %r4, [buf+4];
    ret;
PART:
    // Mode 2: thread 33 reads byte 7 of word 1 (written whole by thread 0).
    @%p3 ld.shared.u8 %h1, [buf+7];
    ret;
}
"#;
    let m = gpukit_ptx::Module::parse(ptx).unwrap();
    let go = |mode: i32| run_mode(&m, "words", mode);
    // Mode 0: a barrier orders every write before the reads.
    go(0).unwrap();
    let race = |mode: i32| {
        let e = go(mode).unwrap_err();
        let ErrorKind::SharedRace {
            kind, other_thread, ..
        } = e.kind.clone()
        else {
            panic!("mode {mode}: expected a race, got {e}");
        };
        (kind, e.thread, other_thread, e.address)
    };
    let want = [
        // Mode 1: no barrier; the whole-word read meets thread 0's half first (byte 0).
        (1, (34, 0, 0), (0, 0, 0), 0),
        // Mode 2: the byte read of a word written whole, no barrier.
        (2, (33, 0, 0), (0, 0, 0), 7),
        // Mode 3: word 0 and byte 4 are ordered by the barrier; bytes 5 and 6 are not.
        (3, (34, 0, 0), (32, 0, 0), 4),
    ];
    for (mode, thread, other, address) in want {
        assert_eq!(
            race(mode),
            (RaceKind::ReadAfterWrite, Some(thread), other, Some(address)),
            "mode {mode}"
        );
    }
}

/// A warp's lanes reading the same shared word (a broadcast) leave exactly the records
/// lane-by-lane reading leaves: the races found after it name the same threads and
/// instructions.
#[test]
#[allow(clippy::result_large_err)]
fn broadcast_reads_keep_exact_race_records() {
    let ptx = r#"
.version 7.0
.target sm_80
.address_size 64
.visible .entry broadcast(.param .u32 mode)
{
    .reg .b32 %r<8>;
    .reg .pred %p<8>;
    .shared .align 4 .b8 buf[16];
    ld.param.u32 %r1, [mode];
    mov.u32 %r2, %tid.x;
    setp.eq.u32 %p1, %r2, 0;
    setp.eq.u32 %p2, %r2, 5;
    setp.eq.u32 %p3, %r2, 32;
    setp.lt.u32 %p4, %r2, 32;
    setp.eq.u32 %p5, %r1, 0;
    @%p5 bra.uni MODE0;
    // Modes 1 and 2: thread 0 writes the word, then warp 0 reads it (mode 2: with
    // barriers around the reads), then thread 32 writes it.
    @%p1 st.shared.u32 [buf], %r2;
    setp.eq.u32 %p6, %r1, 2;
    @%p6 bar.sync 0;
    @%p4 ld.shared.u32 %r6, [buf];
    @%p6 bar.sync 0;
    @%p3 st.shared.u32 [buf], %r2;
    ret;
MODE0:
    // Thread 5 reads the word, then all of warp 0 reads it, then thread 32 writes it.
    @%p2 ld.shared.u32 %r4, [buf];
    @%p4 ld.shared.u32 %r5, [buf];
    @%p3 st.shared.u32 [buf], %r2;
    ret;
}
"#;
    let m = gpukit_ptx::Module::parse(ptx).unwrap();
    let go = |mode: i32| run_mode(&m, "broadcast", mode);
    let race = |mode: i32| {
        let e = go(mode).unwrap_err();
        let ErrorKind::SharedRace {
            kind,
            other_thread,
            other_instruction,
        } = e.kind.clone()
        else {
            panic!("mode {mode}: expected a race, got {e}");
        };
        (kind, e.thread, other_thread, other_instruction.text)
    };
    // Thread 5's second read (the broadcast) replaced its first as the first recorded
    // reader: the write races with that read.
    let (kind, thread, other, text) = race(0);
    assert_eq!(
        (kind, thread, other),
        (RaceKind::WriteAfterRead, Some((32, 0, 0)), (5, 0, 0))
    );
    assert!(text.contains("%r5"), "{text}");
    // Lane 0 reads its own write; lane 1 is the first to race with it.
    let (kind, thread, other, text) = race(1);
    assert_eq!(
        (kind, thread, other),
        (RaceKind::ReadAfterWrite, Some((1, 0, 0)), (0, 0, 0))
    );
    assert!(text.contains("st.shared.u32"), "{text}");
    go(2).unwrap();
}
