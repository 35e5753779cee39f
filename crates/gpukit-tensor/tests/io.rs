//! `gpukit_tensor::io`: safetensors and .npy/.npz, on the CPU and the PTX emulator.
//! The .npy/.npz fixtures were written by numpy (tools/fixtures/make_io_fixtures.py);
//! the safetensors files are built byte by byte here (an independent writer) and by
//! `save_safetensors` (a round trip).

use std::path::PathBuf;

use gpukit::half::{bf16, f16};
use gpukit_core::{DType, Error, Kit};
use gpukit_tensor::Tensor;
use gpukit_tensor::io::{
    NpyInt, SafeTensorsFile, load_safetensors, read_npy, read_npz, save_safetensors, write_npy,
    write_npy_bool, write_npy_int,
};

fn kits() -> Vec<(&'static str, Kit)> {
    vec![
        ("cpu", gpukit::cpu().unwrap()),
        ("ptx-emu", gpukit::open("ptx-emu").unwrap()),
    ]
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gpukit-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn npy_fixtures_load_with_numpys_values() {
    for (name, kit) in kits() {
        let t = read_npy(&kit, fixture("f32_2x3.npy")).unwrap();
        assert_eq!(t.dims(), &[2, 3], "{name}");
        assert_eq!(
            t.to_vec::<f32>().unwrap(),
            vec![-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]
        );

        // Fortran order: the logical [3, 2] array, row-major after loading.
        let t = read_npy(&kit, fixture("f64_fortran_3x2.npy")).unwrap();
        assert_eq!(t.dims(), &[3, 2]);
        assert_eq!(
            t.to_vec::<f64>().unwrap(),
            vec![0.25, 1.25, 2.25, 3.25, 4.25, 5.25]
        );

        // Big-endian, with the special values (NaN by bits: numpy's quiet NaN).
        let t = read_npy(&kit, fixture("f32_big_endian.npy")).unwrap();
        let want = [
            1.5f32,
            -2.0,
            f32::INFINITY,
            f32::NAN,
            -0.0,
            f32::from_bits(1),
        ];
        let got = t.to_vec::<f32>().unwrap();
        assert_eq!(got.len(), 6);
        assert!(got[3].is_nan());
        assert_eq!(bits32(&got[..3]), bits32(&want[..3]), "{name}");
        assert_eq!(bits32(&got[4..]), bits32(&want[4..]), "{name}");

        let t = read_npy(&kit, fixture("i64_scalar.npy")).unwrap();
        assert_eq!((t.rank(), t.to_vec::<i64>().unwrap()), (0, vec![-7]));

        let t = read_npy(&kit, fixture("f16_empty_0x4.npy")).unwrap();
        assert_eq!((t.dims(), t.dtype()), (&[0usize, 4][..], DType::F16));
        assert!(t.to_vec::<f16>().unwrap().is_empty());

        let t = read_npy(&kit, fixture("i32_3.npy")).unwrap();
        assert_eq!(t.to_vec::<i32>().unwrap(), vec![1, -2, i32::MAX]);
    }
}

#[test]
fn npz_archives_stored_and_deflated() {
    for (name, kit) in kits() {
        let m = read_npz(&kit, fixture("stored.npz")).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b"], "{name}");
        assert_eq!(
            m["a"].to_vec2::<f32>().unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
        assert_eq!(m["b"].to_vec::<i64>().unwrap(), vec![5, 6, 7]);

        let m = read_npz(&kit, fixture("deflated.npz")).unwrap();
        let want: Vec<f32> = (0..1000).map(|i| i as f32 / 8.0).collect();
        assert_eq!(m["big"].to_vec::<f32>().unwrap(), want, "{name}");
        assert_eq!(m["b"].to_vec::<i64>().unwrap(), vec![5, 6, 7]);
    }
}

#[test]
fn npy_refusals_name_the_file_and_the_reason() {
    let kit = gpukit::cpu().unwrap();
    // numpy's bool reads as i32 0/1.
    let b = read_npy(&kit, fixture("bool_2.npy")).unwrap();
    assert_eq!(
        (b.dtype(), b.to_vec::<i32>().unwrap()),
        (DType::I32, vec![1, 0])
    );
    // A dtype gpukit does not have (complex64) is refused, naming the file and dtype.
    let u2 = std::env::temp_dir().join(format!("gpukit_u2_{}.npy", std::process::id()));
    let header = "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[1, 0, 2, 0]);
    std::fs::write(&u2, bytes).unwrap();
    let e = read_npy(&kit, &u2).unwrap_err().to_string();
    std::fs::remove_file(&u2).unwrap();
    assert!(e.contains("gpukit_u2_") && e.contains("<c8"), "{e}");
    let e = read_npy(&kit, fixture("missing.npy")).unwrap_err();
    assert!(
        matches!(&e, Error::Io(m) if m.contains("missing.npy")),
        "{e}"
    );
    // A .npz is not a .npy, and a .npy is not a zip archive.
    assert!(matches!(
        read_npy(&kit, fixture("stored.npz")),
        Err(Error::Io(_))
    ));
    assert!(matches!(
        read_npz(&kit, fixture("f32_2x3.npy")),
        Err(Error::Io(_))
    ));

    // Truncated data: a length error naming the shape; every truncation of a fixture
    // is an error, never a panic.
    let bytes = std::fs::read(fixture("f32_2x3.npy")).unwrap();
    let p = tmp("truncated.npy");
    std::fs::write(&p, &bytes[..bytes.len() - 4]).unwrap();
    assert!(matches!(read_npy(&kit, &p), Err(Error::Length { .. })));
    for cut in 0..bytes.len() {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        assert!(read_npy(&kit, &p).is_err(), "cut at {cut}");
    }
    let z = std::fs::read(fixture("deflated.npz")).unwrap();
    let p = tmp("truncated.npz");
    for cut in (0..z.len()).step_by(7) {
        std::fs::write(&p, &z[..cut]).unwrap();
        assert!(read_npz(&kit, &p).is_err(), "cut at {cut}");
    }
    // A flipped byte in the deflated data: a CRC or inflate error, never a wrong array.
    let mut zz = z.clone();
    zz[200] ^= 0x40;
    std::fs::write(&p, &zz).unwrap();
    assert!(read_npz(&kit, &p).is_err());
}

#[test]
fn npy_round_trip_through_numpys_format() {
    let kit = gpukit::cpu().unwrap();
    let x =
        Tensor::from_slice(&kit, &[1.0f64, -0.0, f64::INFINITY, 2.5, 3.0, 4.0], &[3, 2]).unwrap();
    // A transposed view is written row-major in its logical order.
    let xt = x.t().unwrap();
    let p = tmp("round.npy");
    write_npy(&p, &xt).unwrap();
    let y = read_npy(&kit, &p).unwrap();
    assert_eq!(y.dims(), &[2, 3]);
    let want = xt.contiguous().unwrap().to_vec::<f64>().unwrap();
    let got = y.to_vec::<f64>().unwrap();
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    // The header is padded so the data starts on a 64-byte boundary, as numpy does.
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!((bytes.len() - 6 * 8) % 64, 0);
    // Scalars and rank 1.
    for shape in [&[][..], &[4][..]] {
        let n = shape.iter().product::<usize>();
        let t = Tensor::from_vec(&kit, (0..n as i32).collect(), shape).unwrap();
        write_npy(&p, &t).unwrap();
        let u = read_npy(&kit, &p).unwrap();
        assert_eq!(
            (u.dims(), u.to_vec::<i32>().unwrap()),
            (shape, t.to_vec::<i32>().unwrap())
        );
    }
    let b = Tensor::from_slice(&kit, &[bf16::ONE], &[1]).unwrap();
    assert!(matches!(
        write_npy(&p, &b),
        Err(Error::InvalidArgument { .. })
    ));
}

/// A safetensors image written by hand: 8-byte header length, JSON, data.
fn safetensors_bytes(entries: &[(&str, &str, &[usize], &[u8])]) -> Vec<u8> {
    let mut json = String::from("{");
    let mut data = Vec::new();
    for (i, (name, dtype, shape, bytes)) in entries.iter().enumerate() {
        let shape: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            shape.join(","),
            data.len(),
            data.len() + bytes.len()
        ));
        data.extend_from_slice(bytes);
    }
    json.push('}');
    while json.len() % 8 != 0 {
        json.push(' ');
    }
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(&data);
    out
}

fn le<T: Copy>(v: &[T], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    v.iter().flat_map(|&x| f(x)).collect()
}

#[test]
fn safetensors_written_by_hand_load_in_their_own_dtypes() {
    let w: Vec<f32> = vec![0.5, -1.25, f32::NAN, -0.0, 1e-40, 7.0];
    let h: Vec<f16> = [1.0f32, -2.0, 65504.0]
        .iter()
        .map(|&v| f16::from_f32(v))
        .collect();
    let b: Vec<bf16> = [3.0f32, -0.0].iter().map(|&v| bf16::from_f32(v)).collect();
    let img = safetensors_bytes(&[
        ("w", "F32", &[2, 3], &le(&w, |x| x.to_le_bytes().to_vec())),
        ("h", "F16", &[3], &le(&h, |x| x.to_le_bytes().to_vec())),
        ("b", "BF16", &[1, 2], &le(&b, |x| x.to_le_bytes().to_vec())),
        ("d", "F64", &[], &2.5f64.to_le_bytes()),
        (
            "i",
            "I32",
            &[2],
            &le(&[-3i32, 4], |x| x.to_le_bytes().to_vec()),
        ),
        ("l", "I64", &[0, 5], &[]),
        ("mask", "BOOL", &[2], &[1, 0]),
    ]);
    let p = tmp("hand.safetensors");
    std::fs::write(&p, &img).unwrap();
    for (name, kit) in kits() {
        let f = SafeTensorsFile::open(&p).unwrap();
        assert_eq!(f.names(), ["b", "d", "h", "i", "l", "mask", "w"], "{name}");
        // `infos` lists what gpukit can load; `info` on the bool names its dtype.
        assert_eq!(f.infos().len(), 6);
        let e = f.info("mask").unwrap_err().to_string();
        assert!(e.contains("BOOL") && e.contains("mask"), "{e}");

        let t = f.load(&kit, "w").unwrap();
        assert_eq!((t.dtype(), t.dims()), (DType::F32, &[2usize, 3][..]));
        assert_eq!(bits32(&t.to_vec::<f32>().unwrap()), bits32(&w), "{name}");
        let t = f.load(&kit, "h").unwrap();
        assert_eq!(t.dtype(), DType::F16);
        assert_eq!(t.to_vec::<f16>().unwrap(), h);
        let t = f.load(&kit, "b").unwrap();
        assert_eq!(t.dtype(), DType::BF16);
        assert_eq!(
            t.to_vec::<bf16>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>(),
            b.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        let t = f.load(&kit, "d").unwrap();
        assert_eq!((t.rank(), t.to_vec::<f64>().unwrap()), (0, vec![2.5]));
        assert_eq!(
            f.load(&kit, "i").unwrap().to_vec::<i32>().unwrap(),
            vec![-3, 4]
        );
        assert_eq!(f.load(&kit, "l").unwrap().dims(), &[0, 5]);

        // Checked loads: a model's expectations.
        assert!(f.load_checked(&kit, "w", DType::F32, &[2, 3]).is_ok());
        assert!(matches!(
            f.load_checked(&kit, "w", DType::F16, &[2, 3]),
            Err(Error::DType { .. })
        ));
        let e = f.load_checked(&kit, "w", DType::F32, &[3, 2]).unwrap_err();
        assert!(
            matches!(&e, Error::Shape { .. }) && e.to_string().contains("[3, 2]"),
            "{e}"
        );
        let e = f.load(&kit, "nope").unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("hand.safetensors"), "{e}");
        // load_all refuses the whole file because of the bool, by name.
        let e = f.load_all(&kit).unwrap_err().to_string();
        assert!(e.contains("mask"), "{e}");
    }
}

#[test]
fn safetensors_round_trip_and_corrupt_files() {
    let kit = gpukit::cpu().unwrap();
    let a = Tensor::from_slice(&kit, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let at = a.t().unwrap(); // a view: saved in its logical order
    let h = Tensor::from_slice(&kit, &[f16::from_f32(0.5), f16::NEG_INFINITY], &[2]).unwrap();
    let p = tmp("round.safetensors");
    save_safetensors(&p, &[("a_t", &at), ("h", &h)]).unwrap();
    for (name, k) in kits() {
        let m = load_safetensors(&k, &p).unwrap();
        assert_eq!(m["a_t"].dims(), &[3, 2], "{name}");
        assert_eq!(
            m["a_t"].to_vec::<f32>().unwrap(),
            vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
        );
        assert_eq!(m["h"].to_vec::<f16>().unwrap(), h.to_vec::<f16>().unwrap());
    }
    assert!(matches!(
        save_safetensors(&p, &[("x", &h), ("x", &h)]),
        Err(Error::InvalidArgument { .. })
    ));

    // Every truncation and a lying header are errors naming the file, never a panic.
    let img = std::fs::read(&p).unwrap();
    let q = tmp("corrupt.safetensors");
    for cut in 0..img.len() {
        std::fs::write(&q, &img[..cut]).unwrap();
        match SafeTensorsFile::open(&q) {
            Err(Error::Io(m)) => assert!(m.contains("corrupt.safetensors"), "{m}"),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
    let lying = safetensors_bytes(&[("w", "F32", &[1000], &[0u8; 8])]);
    std::fs::write(&q, &lying).unwrap();
    assert!(matches!(SafeTensorsFile::open(&q), Err(Error::Io(_))));
    let mut huge = img.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    std::fs::write(&q, &huge).unwrap();
    assert!(matches!(SafeTensorsFile::open(&q), Err(Error::Io(_))));
}

#[test]
fn bool_npy_round_trips_as_numpy_bool() {
    let kit = gpukit::cpu().unwrap();
    let p = std::env::temp_dir().join(format!("gpukit_bool_{}.npy", std::process::id()));
    let t = Tensor::from_slice(&kit, &[0i64, 3, -1, 0, 1, 0], &[2, 3]).unwrap();
    write_npy_bool(&p, &t).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert!(String::from_utf8_lossy(&bytes[..64]).contains("'descr': '|b1'"));
    assert_eq!(&bytes[bytes.len() - 6..], &[0, 1, 1, 0, 1, 0]);
    let back = read_npy(&kit, &p).unwrap();
    std::fs::remove_file(&p).unwrap();
    assert_eq!(back.dims(), &[2, 3]);
    assert_eq!(back.to_vec::<i32>().unwrap(), [0, 1, 1, 0, 1, 0]);
    let f = Tensor::from_slice(&kit, &[1.0f32], &[1]).unwrap();
    assert!(matches!(write_npy_bool(&p, &f), Err(Error::DType { .. })));
}

/// numpy's narrow integers: written with their own dtype and byte image, read back
/// widened exactly (i1/u1/i2/u2 to i32, u4/u8 to i64); a big-endian file reads the
/// same; out-of-range values and uint64 above i64::MAX are errors.
#[test]
fn narrow_integer_npy_round_trips() {
    let kit = gpukit::cpu().unwrap();
    let cases: [(NpyInt, &str, Vec<i64>, Vec<u8>); 6] = [
        (
            NpyInt::I8,
            "|i1",
            vec![-128, 127, -1],
            vec![0x80, 0x7f, 0xff],
        ),
        (NpyInt::U8, "|u1", vec![0, 255, 7], vec![0, 0xff, 7]),
        (
            NpyInt::I16,
            "<i2",
            vec![-2, 300],
            vec![0xfe, 0xff, 0x2c, 0x01],
        ),
        (NpyInt::U16, "<u2", vec![65535, 1], vec![0xff, 0xff, 1, 0]),
        (
            NpyInt::U32,
            "<u4",
            vec![4_000_000_000],
            4_000_000_000u32.to_le_bytes().to_vec(),
        ),
        (
            NpyInt::U64Bits,
            "<u8",
            vec![-1, 5],
            [u64::MAX.to_le_bytes(), 5u64.to_le_bytes()].concat(),
        ),
    ];
    for (as_, descr, vals, image) in cases {
        let p = tmp(&format!("narrow_{}.npy", descr.replace(['<', '|'], "")));
        let t = Tensor::from_slice(&kit, &vals, &[vals.len()]).unwrap();
        write_npy_int(&p, &t, as_).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert!(String::from_utf8_lossy(&bytes[..64]).contains(&format!("'descr': '{descr}'")));
        assert_eq!(&bytes[bytes.len() - image.len()..], &image[..], "{descr}");
        if as_ == NpyInt::U64Bits {
            // u64::MAX does not fit gpukit's i64: refused on reading.
            let e = read_npy(&kit, &p).unwrap_err().to_string();
            assert!(e.contains("18446744073709551615"), "{e}");
            continue;
        }
        let back = read_npy(&kit, &p).unwrap();
        let wide = back.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(wide, vals, "{descr}");
        let want = if matches!(as_, NpyInt::U32) {
            DType::I64
        } else {
            DType::I32
        };
        assert_eq!(back.dtype(), want);
        // The same values written big-endian read the same.
        let size: usize = descr[2..].parse().unwrap();
        let mut big = bytes.clone();
        let start = big.len() - image.len();
        for c in big[start..].chunks_exact_mut(size) {
            c.reverse();
        }
        // The descr's byte-order character becomes '>' (same header length).
        let key = format!("'{descr}'");
        let at = big
            .windows(key.len())
            .position(|w| w == key.as_bytes())
            .unwrap();
        big[at + 1] = b'>';
        let img = big;
        std::fs::write(&p, img).unwrap();
        let back = read_npy(&kit, &p).unwrap();
        let wide = back.to_dtype(DType::I64).unwrap().to_vec::<i64>().unwrap();
        assert_eq!(wide, vals, "big-endian {descr}");
        std::fs::remove_file(&p).unwrap();
    }
    let t = Tensor::from_slice(&kit, &[300i64], &[1]).unwrap();
    let e = write_npy_int(tmp("bad.npy"), &t, NpyInt::I8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("300") && e.contains("|i1"), "{e}");
    let f = Tensor::from_slice(&kit, &[1.0f32], &[1]).unwrap();
    assert!(matches!(
        write_npy_int(tmp("bad.npy"), &f, NpyInt::U8),
        Err(Error::DType { .. })
    ));
}
