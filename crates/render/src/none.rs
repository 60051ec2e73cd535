//! Python's `None` as it arrives from conversation data.
//!
//! MiniJinja treats its own `none` as an empty sequence when looped over, while Python
//! raises `TypeError: 'NoneType' object is not iterable`. A template that does
//! `{% for tool in tools %}` without a guard fails in transformers when no tools are
//! given, and chatplate must fail too. So every `null` in the input (and `tools` /
//! `documents` when absent) becomes this object: falsy, printed as `None`, serialized as
//! `null`, matched by `is none`, but not iterable, indexable or measurable.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};

/// The stand-in for a Python `None` that came from input data.
#[derive(Debug)]
pub(crate) struct PyNone;

impl Object for PyNone {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        super::undefined::note_miss(key, "None");
        None
    }

    fn is_true(self: &Arc<Self>) -> bool {
        false
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("None")
    }
}

/// A fresh `None` value that fails iteration like Python's.
pub(crate) fn python_none() -> Value {
    Value::from_object(PyNone)
}

/// True for both MiniJinja's `none` and the input-data [`PyNone`].
pub(crate) fn is_python_none(value: &Value) -> bool {
    value.is_none() || value.downcast_object_ref::<PyNone>().is_some()
}
