//! What a JNI entry hands back to Java when it fails: a kind (the crate's error variant, or
//! `InvalidConfig`, `Closed`, `Panic`, `Jni`) and a message naming the cause. Thrown as
//! `io.github.ringflake.RingflakeException`.

use jni::JNIEnv;
use jni::objects::JValue;

/// The Java exception class every failure is thrown as.
pub const EXCEPTION_CLASS: &str = "io/github/ringflake/RingflakeException";

/// A failed entry: thrown into Java as a `RingflakeException(kind, message)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `RingflakeException.kind()`: the name of the crate's `Error` variant
    /// (`TimeBitsExhausted`, `WorkerIdOutOfRange`, `Database`, …) or one of this crate's
    /// (`InvalidConfig`, `Closed`, `Panic`, `Jni`).
    pub kind: String,
    /// The message, naming the value and the limit.
    pub message: String,
}

impl Failure {
    /// A setting the builder cannot use.
    pub fn config(message: impl Into<String>) -> Failure {
        Failure {
            kind: "InvalidConfig".into(),
            message: message.into(),
        }
    }

    /// A call on a closed generator.
    pub fn closed() -> Failure {
        Failure {
            kind: "Closed".into(),
            message: "the generator is closed".into(),
        }
    }

    /// A panic caught at the JNI boundary (a bug: it never reaches the JVM as a crash).
    pub fn panic(payload: &(dyn std::any::Any + Send)) -> Failure {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".into());
        Failure {
            kind: "Panic".into(),
            message: format!(
                "ringflake's native library panicked (a bug, please report it): {what}"
            ),
        }
    }

    /// A JNI call that failed (an exception already pending, a bad array).
    pub fn jni(e: jni::errors::Error) -> Failure {
        Failure {
            kind: "Jni".into(),
            message: format!("JNI call failed: {e}"),
        }
    }

    /// Throws this failure into Java (unless an exception is already pending, which then
    /// stands).
    pub fn throw(&self, env: &mut JNIEnv) {
        if env.exception_check().unwrap_or(true) {
            return;
        }
        let thrown = (|| -> jni::errors::Result<()> {
            let kind = env.new_string(&self.kind)?;
            let message = env.new_string(&self.message)?;
            let e = env.new_object(
                EXCEPTION_CLASS,
                "(Ljava/lang/String;Ljava/lang/String;)V",
                &[JValue::Object(&kind), JValue::Object(&message)],
            )?;
            env.throw(jni::objects::JThrowable::from(e))
        })();
        if thrown.is_err() && !env.exception_check().unwrap_or(true) {
            let _ = env.throw_new(
                "java/lang/IllegalStateException",
                format!("{}: {}", self.kind, self.message),
            );
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl From<ringflake::Error> for Failure {
    fn from(e: ringflake::Error) -> Failure {
        Failure {
            kind: variant_name(&format!("{e:?}")),
            message: e.to_string(),
        }
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Failure {
        Failure::jni(e)
    }
}

/// The variant's name at the start of a derived `Debug` output (`WorkerIdOutOfRange { .. }`).
fn variant_name(debug: &str) -> String {
    debug
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_variant_names() {
        let e = ringflake::Error::WorkerIdOutOfRange {
            worker_id: 5000,
            max: 1023,
        };
        let f = Failure::from(e.clone());
        assert_eq!(f.kind, "WorkerIdOutOfRange");
        assert_eq!(f.message, e.to_string());
        assert_eq!(Failure::from(ringflake::Error::Shutdown).kind, "Shutdown");
    }

    #[test]
    fn panics_keep_their_message() {
        let p = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
        assert!(Failure::panic(&*p).message.ends_with("boom 1"));
    }
}
