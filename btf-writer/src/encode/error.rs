//! Why an encoding failed: the error of the stage that failed, kept whole,
//! with what the pipeline was doing around it.

use std::fmt;

/// An encoding failure.
///
/// Each stage's own error is kept as it is (its kind can be matched, its
/// `source()` chain followed); [`Error::Context`] layers say which file,
/// unit or step it happened in. Printed as a chain (`{:#}` through
/// `anyhow`, or by walking [`std::error::Error::source`]), it reads
/// `FILE: STEP: CAUSE` on one line.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading the ELF file or walking its DWARF.
    Dwarf(dwarf::Error),
    /// Lowering a unit's DWARF model to BTF with pahole's rules.
    Lower(crate::lower::Error),
    /// Collapsing or deduplicating the types.
    Dedup(crate::dedup::Error),
    /// Reading, distilling or writing BTF.
    Btf(crate::Error),
    /// `source` happened while doing what `context` says.
    Context {
        /// The file, unit or step (for example `vmlinux: dedup`).
        context: String,
        /// What went wrong there.
        source: Box<Error>,
    },
}

impl Error {
    /// The same error, said to have happened in `context`.
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The stage error at the bottom of the context layers.
    pub fn root(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.root(),
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Each variant prints only its own part: the chain printer adds
        // the sources, so nothing is said twice.
        match self {
            Error::Dwarf(err) => err.fmt(f),
            Error::Lower(err) => err.fmt(f),
            Error::Dedup(err) => err.fmt(f),
            Error::Btf(err) => err.fmt(f),
            Error::Context { context, .. } => f.write_str(context),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: the stage error's own sources follow.
            Error::Dwarf(err) => err.source(),
            Error::Lower(err) => err.source(),
            Error::Dedup(err) => err.source(),
            Error::Btf(err) => err.source(),
            Error::Context { source, .. } => Some(source.as_ref()),
        }
    }
}

impl From<dwarf::Error> for Error {
    fn from(err: dwarf::Error) -> Error {
        Error::Dwarf(err)
    }
}

impl From<crate::lower::Error> for Error {
    fn from(err: crate::lower::Error) -> Error {
        Error::Lower(err)
    }
}

impl From<crate::dedup::Error> for Error {
    fn from(err: crate::dedup::Error) -> Error {
        Error::Dedup(err)
    }
}

impl From<crate::Error> for Error {
    fn from(err: crate::Error) -> Error {
        Error::Btf(err)
    }
}

/// `.context(...)` / `.with_context(|| ...)` on results whose error becomes
/// an [`Error`].
pub(crate) trait ResultExt<T> {
    /// Adds `context` to the error, computed only on failure.
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T, Error>;
}

impl<T, E: Into<Error>> ResultExt<T> for Result<T, E> {
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T, Error> {
        self.map_err(|err| err.into().context(context()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints the chain as `anyhow`'s `{:#}` does.
    fn chain(err: &dyn std::error::Error) -> String {
        let mut text = err.to_string();
        let mut next = err.source();
        while let Some(cause) = next {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            next = cause.source();
        }
        text
    }

    #[test]
    fn context_layers_print_outermost_first_and_keep_the_cause() {
        let err = Error::from(crate::dedup::Error::TooManyTypes { count: 5 })
            .context("x.ko: dedup")
            .context("batch");
        assert_eq!(
            chain(&err),
            "batch: x.ko: dedup: dedup: 5 type ids exceed BTF's limit"
        );
        assert!(matches!(
            err.root(),
            Error::Dedup(crate::dedup::Error::TooManyTypes { count: 5 })
        ));
    }
}
