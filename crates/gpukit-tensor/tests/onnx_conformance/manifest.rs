//! The manifest: one [`Case`] per line of `tests/fixtures/onnx/cases.tsv` (op,
//! attributes, inputs, outputs, tolerance), and where the fixtures live.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One ONNX attribute value as the manifest writes it.
#[derive(Debug, Clone)]
pub(crate) enum Attr {
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    Str(String),
}

impl Attr {
    fn parse(s: &str) -> Attr {
        if let Some(body) = s.strip_prefix('[').and_then(|b| b.strip_suffix(']')) {
            if body.is_empty() {
                return Attr::Ints(Vec::new());
            }
            return Attr::Ints(
                body.split(',')
                    .map(|v| v.parse().expect("integer list attribute"))
                    .collect(),
            );
        }
        if let Ok(i) = s.parse::<i64>() {
            Attr::Int(i)
        } else if let Ok(f) = s.parse::<f64>() {
            Attr::Float(f)
        } else {
            Attr::Str(s.to_string())
        }
    }
}

/// One line of `cases.tsv`.
#[derive(Debug)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) op: String,
    pub(crate) attrs: BTreeMap<String, Attr>,
    pub(crate) inputs: Vec<Option<String>>,
    pub(crate) outputs: Vec<String>,
    pub(crate) tol: Tol,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Tol {
    Exact,
    Rel { rel: f64, abs: f64 },
}

impl Case {
    pub(crate) fn int(&self, key: &str, default: i64) -> i64 {
        match self.attrs.get(key) {
            Some(Attr::Int(i)) => *i,
            None => default,
            Some(a) => panic!("{}: attribute {key} = {a:?} is not an int", self.name),
        }
    }
    /// A float attribute: ONNX stores them as f32, so the value is rounded to f32 (as
    /// the reference and onnxruntime see it) before it widens to gpukit's f64 parameter.
    pub(crate) fn float(&self, key: &str, default: f64) -> f64 {
        match self.attrs.get(key) {
            Some(Attr::Float(f)) => *f as f32 as f64,
            Some(Attr::Int(i)) => *i as f32 as f64,
            None => default as f32 as f64,
            Some(a) => panic!("{}: attribute {key} = {a:?} is not a float", self.name),
        }
    }
    pub(crate) fn ints(&self, key: &str) -> Option<Vec<i64>> {
        match self.attrs.get(key) {
            Some(Attr::Ints(v)) => Some(v.clone()),
            Some(Attr::Int(i)) => Some(vec![*i]),
            None => None,
            Some(a) => panic!("{}: attribute {key} = {a:?} is not an int list", self.name),
        }
    }
    pub(crate) fn string(&self, key: &str, default: &str) -> String {
        match self.attrs.get(key) {
            Some(Attr::Str(s)) => s.clone(),
            None => default.to_string(),
            Some(a) => panic!("{}: attribute {key} = {a:?} is not a string", self.name),
        }
    }
}

pub(crate) fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/onnx")
}

pub(crate) fn load_cases() -> Vec<Case> {
    let text = std::fs::read_to_string(fixture_dir().join("cases.tsv")).expect("cases.tsv");
    let mut cases = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 8, "bad manifest line {line:?}");
        let attrs = if f[2] == "-" {
            BTreeMap::new()
        } else {
            f[2].split(';')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').expect("key=value");
                    (k.to_string(), Attr::parse(v))
                })
                .collect()
        };
        let inputs = f[3]
            .split(',')
            .map(|d| (d != "-").then(|| d.to_string()))
            .collect();
        let tol = if f[5] == "exact" {
            Tol::Exact
        } else {
            let p: Vec<&str> = f[5].split(':').collect();
            assert_eq!(p[0], "rel", "tolerance {:?}", f[5]);
            Tol::Rel {
                rel: p[1].parse().expect("rel"),
                abs: p[2].parse().expect("abs"),
            }
        };
        cases.push(Case {
            name: f[0].to_string(),
            op: f[1].to_string(),
            attrs,
            inputs,
            outputs: f[4].split(',').map(str::to_string).collect(),
            tol,
        });
    }
    cases
}
