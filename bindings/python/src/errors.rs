//! The Python exceptions, and the library's errors turned into them.
//!
//! Every exception is a `ringflake.Error`; its message is the library's own (it names the value
//! and the limit) and its `kind` attribute the name of the library's error variant
//! (`WorkerIdOutOfRange`, `Database`, …) or one of this package's (`Closed`, `Fork`, `Panic`).

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::{PyErr, create_exception};

/// `InvalidArgument`: a subclass of both `Error` and `ValueError`, which `create_exception!`
/// (one base) cannot make; made once by `type(...)` at import.
static INVALID_ARGUMENT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The docstring of `InvalidArgument`.
const INVALID_ARGUMENT_DOC: &str = "A bad argument: a layout, a setting or an ID the layout \
    cannot have made. Both a ringflake.Error and a ValueError.";

create_exception!(
    ringflake,
    Error,
    PyException,
    "The base of every ringflake exception. `kind` names the library's error variant."
);
create_exception!(
    ringflake,
    WorkerIdError,
    Error,
    "No worker id: the database refused or did not answer, or the lease was lost."
);
create_exception!(
    ringflake,
    ForkError,
    Error,
    "A forked child cannot take from its parent's generator (a fixed worker id)."
);
create_exception!(ringflake, ClosedError, Error, "The generator is closed.");

/// The library's error variants that mean a bad argument (`InvalidArgument`).
const ARGUMENT_KINDS: &[&str] = &[
    "InvalidBitWidths",
    "InvalidEpoch",
    "EpochInFuture",
    "DeltaOutOfRange",
    "WorkerIdOutOfRange",
    "SequenceOutOfRange",
    "NegativeId",
    "IdText",
    "InvalidConfig",
    "TimeZone",
    "BatchTooLarge",
    "UnknownTimeUnit",
    "UnknownLayout",
    "EpochNotOnTick",
    "IdOutOfRange",
    "UnsupportedLayout",
    "TimeBitsExhausted",
    "AboveUnreachable",
];

/// The library's error variants about the worker id source (`WorkerIdError`).
const WORKER_KINDS: &[&str] = &[
    "WorkerAssignment",
    "Database",
    "LeaseExpired",
    "Fenced",
    "ClockSkew",
];

/// The variant's name at the start of a derived `Debug` output (`WorkerIdOutOfRange { .. }`).
fn variant_name(debug: &str) -> String {
    debug
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// An exception of class `E` with `message`, its `kind` attribute set.
fn with_kind<E: pyo3::PyTypeInfo>(kind: &str, message: String) -> PyErr {
    Python::attach(|py| kinded(py, PyErr::new::<E, _>(message), kind))
}

/// `err` with its `kind` attribute set.
fn kinded(py: Python<'_>, err: PyErr, kind: &str) -> PyErr {
    // Setting an attribute on a fresh exception instance cannot fail but for memory.
    let _ = err.value(py).setattr("kind", kind);
    err
}

/// An `InvalidArgument` with `message`, its `kind` attribute set.
fn invalid_argument(kind: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let err = match INVALID_ARGUMENT.get(py) {
            Some(t) => PyErr::from_type(t.bind(py).clone(), message),
            // Only before the module is initialised, which no caller can be.
            None => PyValueError::new_err(message),
        };
        kinded(py, err, kind)
    })
}

/// The exception for one of the library's errors.
pub fn from_lib(e: ringflake::Error) -> PyErr {
    let kind = variant_name(&format!("{e:?}"));
    let message = e.to_string();
    if ARGUMENT_KINDS.contains(&kind.as_str()) {
        invalid_argument(&kind, message)
    } else if WORKER_KINDS.contains(&kind.as_str()) {
        with_kind::<WorkerIdError>(&kind, message)
    } else {
        with_kind::<Error>(&kind, message)
    }
}

/// A bad keyword argument: `name = value`, and what is allowed.
pub fn invalid(name: &str, value: impl std::fmt::Display, allowed: &str) -> PyErr {
    invalid_argument(
        "InvalidConfig",
        format!("invalid {name} = {value}: expected {allowed}"),
    )
}

/// A take or a call on a closed generator.
pub fn closed() -> PyErr {
    with_kind::<ClosedError>("Closed", "the generator is closed".into())
}

/// A take in a forked child whose generator has a fixed worker id.
pub fn forked(worker_id: u64) -> PyErr {
    with_kind::<ForkError>(
        "Fork",
        format!(
            "this process was forked from the one that built this generator, with the fixed \
             worker id {worker_id}: a child taking from it would hand out the parent's IDs. \
             Build a Generator in the child with a worker id of its own, or give the generator a \
             database, whose table gives a forked child a worker id of its own"
        ),
    )
}

/// A panic caught at the boundary (a bug: it never crashes the interpreter).
pub fn panic(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    with_kind::<Error>(
        "Panic",
        format!("ringflake's native library panicked (a bug, please report it): {what}"),
    )
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    let bases = PyTuple::new(
        py,
        [
            py.get_type::<Error>().into_any(),
            py.get_type::<PyValueError>().into_any(),
        ],
    )?;
    let namespace = PyDict::new(py);
    namespace.set_item("__doc__", INVALID_ARGUMENT_DOC)?;
    namespace.set_item("__module__", "ringflake")?;
    let invalid = py
        .get_type::<PyType>()
        .call1(("InvalidArgument", bases, namespace))?
        .cast_into::<PyType>()?;
    m.add("InvalidArgument", &invalid)?;
    let _ = INVALID_ARGUMENT.set(py, invalid.unbind());
    m.add("WorkerIdError", py.get_type::<WorkerIdError>())?;
    m.add("ForkError", py.get_type::<ForkError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_names() {
        let e = ringflake::Error::WorkerIdOutOfRange {
            worker_id: 5000,
            max: 1023,
        };
        assert_eq!(variant_name(&format!("{e:?}")), "WorkerIdOutOfRange");
        assert_eq!(
            variant_name(&format!("{:?}", ringflake::Error::Shutdown)),
            "Shutdown"
        );
    }
}
