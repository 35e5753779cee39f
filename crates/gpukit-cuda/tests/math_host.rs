//! `kernels-cuda/gpukit_math.cuh` against `gpukit_core::math`, bit for bit, on the host.
//!
//! Compiles `kernels-cuda/math_host_check.cpp` (which includes the CUDA math header
//! through its host shim) with `g++ -O2 -ffp-contract=off` (no fast math, warnings
//! are errors, any implicit float-to-double promotion is an error), runs it, and
//! compares its outputs for the unary functions (exp, log, tanh, sigmoid, erf, sin, cos
//! and the composites silu and softplus, in f32 and f64) over its fixed input set
//! (specials, thresholds, pseudo-random values), and for `pow` over as many `(x, y)`
//! pairs, with the Rust functions. A NaN equals any NaN
//! (docs/numerics.md, rule 8). Skipped, visibly, where `g++` is missing.
//!
//! A last-bit change in a high-degree coefficient changes almost no output, so a
//! second test compares the constants themselves: every constant of `math.rs`, read
//! from its source, must appear in the header as an exact hexadecimal literal of the
//! same value (arrays as consecutive literals, in order).

use std::path::{Path, PathBuf};
use std::process::Command;

use gpukit_core::{math, numeric};

const NAMES: [&str; 9] = [
    "exp", "log", "tanh", "sigmoid", "erf", "silu", "softplus", "sin", "cos",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds and runs the host check; `None` when g++ is not installed.
fn host_output() -> Option<Vec<u8>> {
    if Command::new("g++").arg("--version").output().is_err() {
        return None;
    }
    let kernels = repo_root().join("kernels-cuda");
    let exe = Path::new(env!("CARGO_TARGET_TMPDIR")).join("math_host_check");
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-O2",
            "-ffp-contract=off",
            "-fno-fast-math",
            "-Wall",
            "-Wextra",
            "-Wconversion",
            "-Wdouble-promotion",
            "-Werror",
        ])
        .arg("-I")
        .arg(&kernels)
        .arg(kernels.join("math_host_check.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run g++");
    assert!(
        out.status.success(),
        "g++ failed on math_host_check.cpp:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run math_host_check");
    assert!(
        run.status.success(),
        "math_host_check failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    Some(run.stdout)
}

/// A little-endian reader over the program's output.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let s: [u8; N] = self.b[self.at..self.at + N]
            .try_into()
            .expect("truncated output");
        self.at += N;
        s
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

/// Compares one record; returns the mismatches as printable lines.
fn check<B: PartialEq + std::fmt::LowerHex + Copy>(
    ty: &str,
    x: B,
    got: [B; 9],
    want: [B; 9],
    is_nan: impl Fn(B) -> bool,
    bad: &mut Vec<String>,
) {
    for f in 0..9 {
        let (g, w) = (got[f], want[f]);
        let same = if is_nan(w) { is_nan(g) } else { g == w };
        if !same {
            bad.push(format!(
                "{}_{ty}(0x{x:x}): cuda header 0x{g:x}, rust 0x{w:x}",
                NAMES[f]
            ));
        }
    }
}

#[test]
fn cuda_math_header_matches_rust_bit_for_bit() {
    let Some(bytes) = host_output() else {
        eprintln!("skipped: g++ not found");
        return;
    };
    let mut r = Reader { b: &bytes, at: 0 };
    assert_eq!(&r.take::<4>(), b"GKM1", "bad header");
    let mut bad = Vec::new();

    let n32 = r.u32() as usize;
    assert!(n32 >= 1 << 20, "only {n32} f32 inputs");
    let nan32 = |b: u32| f32::from_bits(b).is_nan();
    for _ in 0..n32 {
        let xb = r.u32();
        let got = [
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
            r.u32(),
        ];
        let x = f32::from_bits(xb);
        let want = [
            math::exp_f32(x).to_bits(),
            math::log_f32(x).to_bits(),
            math::tanh_f32(x).to_bits(),
            math::sigmoid_f32(x).to_bits(),
            math::erf_f32(x).to_bits(),
            numeric::silu(x).to_bits(),
            numeric::softplus(x).to_bits(),
            math::sin_f32(x).to_bits(),
            math::cos_f32(x).to_bits(),
        ];
        check("f32", xb, got, want, nan32, &mut bad);
    }

    let n64 = r.u32() as usize;
    assert!(n64 >= 1 << 16, "only {n64} f64 inputs");
    let nan64 = |b: u64| f64::from_bits(b).is_nan();
    for _ in 0..n64 {
        let xb = r.u64();
        let got = [
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
            r.u64(),
        ];
        let x = f64::from_bits(xb);
        let want = [
            math::exp_f64(x).to_bits(),
            math::log_f64(x).to_bits(),
            math::tanh_f64(x).to_bits(),
            math::sigmoid_f64(x).to_bits(),
            math::erf_f64(x).to_bits(),
            numeric::silu(x).to_bits(),
            numeric::softplus(x).to_bits(),
            math::sin_f64(x).to_bits(),
            math::cos_f64(x).to_bits(),
        ];
        check("f64", xb, got, want, nan64, &mut bad);
    }
    // pow: (x, y, pow) records.
    let p32 = r.u32() as usize;
    assert_eq!(p32, n32, "pow f32 records");
    for _ in 0..p32 {
        let (xb, yb, got) = (r.u32(), r.u32(), r.u32());
        let want = math::pow_f32(f32::from_bits(xb), f32::from_bits(yb)).to_bits();
        if !(got == want || (nan32(got) && nan32(want))) {
            bad.push(format!(
                "pow_f32(0x{xb:x}, 0x{yb:x}): cuda header 0x{got:x}, rust 0x{want:x}"
            ));
        }
    }
    let p64 = r.u32() as usize;
    assert_eq!(p64, n64, "pow f64 records");
    for _ in 0..p64 {
        let (xb, yb, got) = (r.u64(), r.u64(), r.u64());
        let want = math::pow_f64(f64::from_bits(xb), f64::from_bits(yb)).to_bits();
        if !(got == want || (nan64(got) && nan64(want))) {
            bad.push(format!(
                "pow_f64(0x{xb:x}, 0x{yb:x}): cuda header 0x{got:x}, rust 0x{want:x}"
            ));
        }
    }
    assert_eq!(r.at, bytes.len(), "trailing output");

    assert!(
        bad.is_empty(),
        "{} mismatches over {n32} f32 and {n64} f64 inputs; first:\n{}",
        bad.len(),
        bad.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
    eprintln!(
        "gpukit_math.cuh == gpukit_core::math on {n32} f32 and {n64} f64 inputs x 9 functions, \
         and as many (x, y) pairs of pow"
    );
}

/// Parses a C hexadecimal float literal (`-0x1.8p+23f`); `f` suffix = f32.
fn parse_hex(lit: &str) -> (bool, f64) {
    let (neg, t) = match lit.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, lit),
    };
    let (t, is_f32) = match t.strip_suffix('f') {
        Some(t) => (t, true),
        None => (t, false),
    };
    let t = t.strip_prefix("0x").expect("hex literal");
    let (mant, exp) = t.split_once('p').expect("binary exponent");
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits = format!("{int}{frac}");
    assert!(digits.len() <= 14, "literal {lit} too long");
    let m = u64::from_str_radix(&digits, 16).expect("hex digits");
    assert!(m < 1 << 53, "literal {lit} not exact");
    let e: i32 = exp.parse::<i32>().expect("exponent") - 4 * frac.len() as i32;
    // Exact: m < 2^53 and the constants are normal numbers.
    let v = m as f64 * 2f64.powi(e);
    (is_f32, if neg { -v } else { v })
}

/// The hexadecimal float literals of the header, in order, as (is_f32, bits as u64).
fn header_literals(src: &str) -> Vec<(bool, u64)> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < b.len() {
        let starts = b[i] == b'0'
            && b[i + 1] == b'x'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i + 2;
        while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'.') {
            j += 1;
        }
        if j >= b.len() || b[j] != b'p' {
            i = j; // an integer literal (bit pattern)
            continue;
        }
        j += 1;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j] == b'f' {
            j += 1;
        }
        let neg = i > 0 && b[i - 1] == b'-';
        let lit = format!("{}{}", if neg { "-" } else { "" }, &src[i..j]);
        let (is_f32, v) = parse_hex(&lit);
        let bits = if is_f32 {
            assert_eq!(v as f32 as f64, v, "f32 literal {lit} is not an f32 value");
            u64::from((v as f32).to_bits())
        } else {
            v.to_bits()
        };
        out.push((is_f32, bits));
        i = j;
    }
    out
}

/// `pub const NAME: TYPE = VALUE;` items of math.rs with float types, values as bits.
fn rust_constants(src: &str) -> Vec<(String, bool, Vec<u64>)> {
    let mut out = Vec::new();
    for item in src.split("\npub const ").skip(1) {
        let (head, value) = item.split_once('=').expect("const value");
        let value = &value[..value.find(';').expect("const ends")];
        let (name, ty) = head.split_once(':').expect("const type");
        let ty = ty.trim();
        let is_f32 = if ty == "f32" || ty.starts_with("[f32;") {
            true
        } else if ty == "f64" || ty.starts_with("[f64;") {
            false
        } else {
            continue;
        };
        let value = value.trim();
        let parts: Vec<&str> = match value.strip_prefix('[') {
            Some(v) => v.trim_end_matches(']').split(',').map(str::trim).collect(),
            None => vec![value],
        };
        let bits = parts
            .iter()
            .map(|p| p.split("//").next().unwrap().trim())
            .filter(|p| !p.is_empty())
            .map(|p| {
                let named = |s: &str| p.ends_with(s);
                if is_f32 {
                    let v = if named("consts::LOG2_E") {
                        std::f32::consts::LOG2_E
                    } else if named("consts::LN_2") {
                        std::f32::consts::LN_2
                    } else {
                        p.parse::<f32>().unwrap_or_else(|_| panic!("{name}: {p}"))
                    };
                    u64::from(v.to_bits())
                } else {
                    let v = if named("consts::LOG2_E") {
                        std::f64::consts::LOG2_E
                    } else if named("consts::LN_2") {
                        std::f64::consts::LN_2
                    } else {
                        p.parse::<f64>().unwrap_or_else(|_| panic!("{name}: {p}"))
                    };
                    v.to_bits()
                }
            })
            .collect();
        out.push((name.trim().to_string(), is_f32, bits));
    }
    out
}

#[test]
fn cuda_math_header_constants_match_math_rs() {
    let root = repo_root();
    // math.rs and its pow module (trig's constants live in gpukit_trig.cuh).
    let rs = std::fs::read_to_string(root.join("crates/gpukit-core/src/math.rs")).unwrap()
        + &std::fs::read_to_string(root.join("crates/gpukit-core/src/math/pow.rs")).unwrap();
    let cuh = std::fs::read_to_string(root.join("kernels-cuda/gpukit_math.cuh")).unwrap();
    let lits = header_literals(&cuh);
    let consts = rust_constants(&rs);
    assert!(
        consts.len() >= 20,
        "parsed only {} constants of math.rs",
        consts.len()
    );
    let mut arrays = 0;
    for (name, is_f32, bits) in &consts {
        let want: Vec<(bool, u64)> = bits.iter().map(|&b| (*is_f32, b)).collect();
        let found = lits.windows(want.len()).any(|w| w == want.as_slice());
        assert!(
            found,
            "math.rs constant {name} ({bits:x?}) is not in gpukit_math.cuh"
        );
        arrays += usize::from(bits.len() > 1);
    }
    assert_eq!(
        arrays, 18,
        "expected the 18 coefficient arrays of math.rs and math/pow.rs"
    );
}
