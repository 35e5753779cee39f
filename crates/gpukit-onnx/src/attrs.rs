//! Node attributes: decoded once at load time, read by the ops with their ONNX
//! defaults.

use std::collections::BTreeMap;

use crate::error::{OpError, OpResult};
use crate::host::{self, HostTensor};
use crate::proto::{AttributeProto, attr_type};

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Attr {
    Float(f32),
    Int(i64),
    Str(String),
    Tensor(HostTensor),
    Floats(Vec<f32>),
    Ints(Vec<i64>),
    Strings(Vec<String>),
}

impl Attr {
    fn kind(&self) -> &'static str {
        match self {
            Attr::Float(_) => "a float",
            Attr::Int(_) => "an int",
            Attr::Str(_) => "a string",
            Attr::Tensor(_) => "a tensor",
            Attr::Floats(_) => "a float list",
            Attr::Ints(_) => "an int list",
            Attr::Strings(_) => "a string list",
        }
    }
}

/// A node's attributes by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Attrs(pub BTreeMap<String, Attr>);

/// Decodes one attribute; `Err` names what is not supported or malformed.
pub(crate) fn decode(a: &AttributeProto) -> Result<(String, Attr), String> {
    let name = a.name.clone().unwrap_or_default();
    if a.ref_attr_name.is_some() {
        return Err(format!(
            "attribute `{name}` refers to a function attribute (functions are not supported)"
        ));
    }
    let s = |b: &[u8]| {
        String::from_utf8(b.to_vec()).map_err(|_| format!("attribute `{name}` is not UTF-8"))
    };
    // Old writers may leave `type` unset: infer it from the field present.
    let ty = match a.r#type {
        Some(t) if t != 0 => t,
        _ => {
            if a.f.is_some() {
                attr_type::FLOAT
            } else if a.i.is_some() {
                attr_type::INT
            } else if a.s.is_some() {
                attr_type::STRING
            } else if a.t.is_some() {
                attr_type::TENSOR
            } else if !a.floats.is_empty() {
                attr_type::FLOATS
            } else if !a.ints.is_empty() {
                attr_type::INTS
            } else if !a.strings.is_empty() {
                attr_type::STRINGS
            } else {
                return Err(format!("attribute `{name}` has no type and no value"));
            }
        }
    };
    let v = match ty {
        attr_type::FLOAT => Attr::Float(a.f.unwrap_or(0.0)),
        attr_type::INT => Attr::Int(a.i.unwrap_or(0)),
        attr_type::STRING => Attr::Str(s(a.s.as_deref().unwrap_or(&[]))?),
        attr_type::TENSOR => {
            let t =
                a.t.as_ref()
                    .ok_or_else(|| format!("tensor attribute `{name}` without a tensor"))?;
            Attr::Tensor(host::decode(t, None).map_err(host::TensorErr::message)?)
        }
        attr_type::FLOATS => Attr::Floats(a.floats.clone()),
        attr_type::INTS => Attr::Ints(a.ints.clone()),
        attr_type::STRINGS => Attr::Strings(
            a.strings
                .iter()
                .map(|b| s(b))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        attr_type::GRAPH | attr_type::GRAPHS => {
            return Err(format!(
                "attribute `{name}` is a graph (control flow is not supported)"
            ));
        }
        attr_type::SPARSE_TENSOR | attr_type::SPARSE_TENSORS => {
            return Err(format!("attribute `{name}` is a sparse tensor"));
        }
        attr_type::TENSORS | attr_type::TYPE_PROTO | attr_type::TYPE_PROTOS => {
            return Err(format!(
                "attribute `{name}` is a tensor or type list (not supported)"
            ));
        }
        t => return Err(format!("attribute `{name}` has unknown type {t}")),
    };
    Ok((name, v))
}

fn wrong(key: &str, want: &str, got: &Attr) -> OpError {
    OpError::Invalid(format!("attribute `{key}` is {}, want {want}", got.kind()))
}

impl Attrs {
    /// Whether the attribute is present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// An int attribute, or `default` when absent.
    pub(crate) fn int(&self, key: &str, default: i64) -> OpResult<i64> {
        match self.0.get(key) {
            None => Ok(default),
            Some(Attr::Int(i)) => Ok(*i),
            Some(a) => Err(wrong(key, "an int", a)),
        }
    }

    /// A 0/1 flag attribute.
    pub(crate) fn flag(&self, key: &str, default: bool) -> OpResult<bool> {
        match self.int(key, i64::from(default))? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(OpError::Invalid(format!(
                "attribute `{key}` = {v}, want 0 or 1"
            ))),
        }
    }

    /// A float attribute as f64 (ONNX stores f32: the value is exactly the f32),
    /// `default` rounded to f32 when absent (as ONNX's reference sees the default).
    pub(crate) fn float(&self, key: &str, default: f64) -> OpResult<f64> {
        match self.0.get(key) {
            None => Ok(f64::from(default as f32)),
            Some(Attr::Float(f)) => Ok(f64::from(*f)),
            Some(Attr::Int(i)) => Ok(f64::from(*i as f32)),
            Some(a) => Err(wrong(key, "a float", a)),
        }
    }

    /// An optional float attribute.
    pub(crate) fn opt_float(&self, key: &str) -> OpResult<Option<f64>> {
        if self.has(key) {
            self.float(key, 0.0).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An int-list attribute, `None` when absent.
    pub(crate) fn ints(&self, key: &str) -> OpResult<Option<Vec<i64>>> {
        match self.0.get(key) {
            None => Ok(None),
            Some(Attr::Ints(v)) => Ok(Some(v.clone())),
            Some(Attr::Int(i)) => Ok(Some(vec![*i])),
            Some(a) => Err(wrong(key, "an int list", a)),
        }
    }

    /// A string attribute, or `default` when absent.
    pub(crate) fn string(&self, key: &str, default: &str) -> OpResult<String> {
        match self.0.get(key) {
            None => Ok(default.to_string()),
            Some(Attr::Str(s)) => Ok(s.clone()),
            Some(a) => Err(wrong(key, "a string", a)),
        }
    }

    /// A tensor attribute, `None` when absent.
    pub(crate) fn tensor(&self, key: &str) -> OpResult<Option<&HostTensor>> {
        match self.0.get(key) {
            None => Ok(None),
            Some(Attr::Tensor(t)) => Ok(Some(t)),
            Some(a) => Err(wrong(key, "a tensor", a)),
        }
    }
}
