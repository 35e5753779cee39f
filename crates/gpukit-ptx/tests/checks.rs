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
