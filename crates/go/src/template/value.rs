//! Runtime values: the Go types Loki's templates can produce.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::time::GoTime;

/// Go's integer types that templates can meet; they print alike but Go's
/// reflection refuses to pass one where another is expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntKind {
    /// `int` (literals, `len`, `int`, `count`).
    Int,
    /// `int64` (sprig arithmetic).
    Int64,
    /// `uint8` (`index` on a string).
    Uint8,
}

/// A template value.
#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    /// Go's invalid value / nil interface.
    Nil,
    /// `string`.
    Str(Cow<'a, str>),
    /// Integers.
    Int(i64, IntKind),
    /// `float64`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// `time.Time`.
    Time(GoTime),
    /// `[]interface{}` (from `fromJson`).
    List(Rc<Vec<Value<'a>>>),
    /// `map[string]interface{}` (from `fromJson`).
    Map(Rc<BTreeMap<String, Value<'a>>>),
    /// The label map, Loki's `map[string]string` data.
    Labels,
}

impl<'a> Value<'a> {
    /// Go's type name, as fmt prints it in `%!d(string=x)`.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "<nil>",
            Value::Str(_) => "string",
            Value::Int(_, IntKind::Int) => "int",
            Value::Int(_, IntKind::Int64) => "int64",
            Value::Int(_, IntKind::Uint8) => "uint8",
            Value::Float(_) => "float64",
            Value::Bool(_) => "bool",
            Value::Time(_) => "time.Time",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Labels => "map[string]string",
        }
    }

    /// text/template's truth (`isTrue`).
    pub(crate) fn truth(&self, ctx: &dyn super::Context) -> bool {
        match self {
            Value::Nil => false,
            Value::Str(s) => !s.is_empty(),
            Value::Int(i, _) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Bool(b) => *b,
            Value::Time(_) => true,
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Labels => {
                let mut any = false;
                ctx.for_each_label(&mut |_, _| any = true);
                any
            }
        }
    }

    /// Bytes a clone of this value copies: an owned string's length (lists
    /// and maps are shared, borrowed strings are not copied).
    pub(crate) fn weight(&self) -> usize {
        match self {
            Value::Str(Cow::Owned(s)) => s.len(),
            _ => 0,
        }
    }

    /// Borrows the string if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Converts a JSON value as Go's `json.Unmarshal` into `interface{}` does.
    pub(crate) fn from_json(v: serde_json::Value) -> Value<'static> {
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::Str(Cow::Owned(s)),
            serde_json::Value::Array(a) => {
                Value::List(Rc::new(a.into_iter().map(Value::from_json).collect()))
            }
            serde_json::Value::Object(o) => Value::Map(Rc::new(
                o.into_iter()
                    .map(|(k, v)| (k, Value::from_json(v)))
                    .collect(),
            )),
        }
    }
}

/// Writes a value as `fmt.Fprint` does for a single operand (`%v`).
pub(crate) fn write_value(out: &mut String, v: &Value<'_>, ctx: &dyn super::Context) {
    match v {
        Value::Nil => out.push_str("<no value>"),
        _ => write_v(out, v, ctx),
    }
}

/// `%v` formatting (nil is `<nil>`, as fmt prints it).
pub(crate) fn write_v(out: &mut String, v: &Value<'_>, ctx: &dyn super::Context) {
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Str(s) => out.push_str(s),
        Value::Int(i, _) => {
            let mut b = itoa::Buffer::new();
            out.push_str(b.format(*i));
        }
        Value::Float(f) => crate::strconv::format_float_g(out, *f, None, false),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Time(t) => t.write_string(out),
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, e, ctx);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, e, ctx);
            }
            out.push(']');
        }
        Value::Labels => {
            let mut pairs: Vec<(String, String)> = Vec::new();
            ctx.for_each_label(&mut |k, v| pairs.push((k.to_string(), v.to_string())));
            pairs.sort();
            out.push_str("map[");
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                out.push_str(v);
            }
            out.push(']');
        }
    }
}
