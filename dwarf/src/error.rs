//! The crate's one error type: which file, where in it, and what is wrong.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, without the "where".
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be opened or mapped.
    Io(String),
    /// The file is not an ELF file.
    NotElf,
    /// An ELF file of a type or layout this crate does not read.
    UnsupportedElf(String),
    /// The ELF headers or a section could not be parsed.
    Malformed(String),
    /// The file has no `.debug_info` section.
    NoDwarf,
    /// A relocation that cannot be applied to a debug section.
    Relocation(String),
    /// gimli could not parse the DWARF.
    Dwarf(gimli::Error),
    /// Well-formed DWARF that uses something this crate does not support
    /// (cross-unit references, type units, ...).
    UnsupportedDwarf(String),
    /// A DIE refers into another unit (`DW_FORM_ref_addr`, as LTO output
    /// has): the units must be walked together ([`crate::walk::walk_units`]).
    CrossUnitReference(String),
    /// DWARF that is structurally valid but makes no sense (a string that
    /// is not UTF-8, a size that does not fit, ...).
    InvalidDwarf(String),
    /// The supplementary file (`dwz -m`'s common file) the DWARF refers
    /// to was not found: where it was looked for.
    MissingSupplementary(String),
}

/// An error, with the file, section and offset it happened at.
///
/// Boxed: the walker returns a `Result` from nearly every step of every
/// DIE, and a pointer-sized error keeps those results small (errors
/// themselves are rare).
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Located>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Located {
    path: Arc<Path>,
    section: Option<&'static str>,
    offset: Option<u64>,
    /// The `.debug_info` offset of the unit holding `offset`, when the
    /// error is about one of its DIEs.
    unit: Option<u64>,
    kind: ErrorKind,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("path", &self.0.path)
            .field("section", &self.0.section)
            .field("offset", &self.0.offset)
            .field("unit", &self.0.unit)
            .field("kind", &self.0.kind)
            .finish()
    }
}

impl Error {
    /// An error about `path` as a whole.
    pub fn new(path: &Path, kind: ErrorKind) -> Error {
        Error(Box::new(Located {
            path: Arc::from(path),
            section: None,
            offset: None,
            unit: None,
            kind,
        }))
    }

    /// The same error, located at `offset` in `section`.
    pub fn at(mut self, section: &'static str, offset: u64) -> Error {
        self.0.section = Some(section);
        self.0.offset = Some(offset);
        self
    }

    /// The same error, about a DIE of the unit at `unit` (a
    /// `.debug_info` offset); shown when it is not the error's offset.
    pub fn in_unit(mut self, unit: u64) -> Error {
        self.0.unit = Some(unit);
        self
    }

    /// The same error, located in `section` (offset unknown).
    pub fn in_section(mut self, section: &'static str) -> Error {
        self.0.section = Some(section);
        self
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// The section the error is in, when known.
    pub fn section(&self) -> Option<&'static str> {
        self.0.section
    }

    /// The offset in [`Error::section`] (a DIE offset for `.debug_info`).
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// The `.debug_info` offset of the unit whose DIE the error is about,
    /// when known.
    pub fn unit(&self) -> Option<u64> {
        self.0.unit
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(msg) => write!(f, "cannot read: {msg}"),
            ErrorKind::NotElf => f.write_str("not an ELF file"),
            ErrorKind::UnsupportedElf(msg) => write!(f, "unsupported ELF file: {msg}"),
            ErrorKind::Malformed(msg) => write!(f, "truncated or corrupt ELF: {msg}"),
            ErrorKind::NoDwarf => f.write_str("no DWARF debug info (no .debug_info section)"),
            ErrorKind::Relocation(msg) => write!(f, "cannot relocate debug info: {msg}"),
            ErrorKind::Dwarf(err) => write!(f, "corrupt DWARF: {err}"),
            ErrorKind::UnsupportedDwarf(msg) => write!(f, "unsupported DWARF: {msg}"),
            ErrorKind::InvalidDwarf(msg) => write!(f, "invalid DWARF: {msg}"),
            ErrorKind::CrossUnitReference(msg) => write!(f, "cross-unit reference: {msg}"),
            ErrorKind::MissingSupplementary(msg) => {
                write!(f, "supplementary DWARF file not found: {msg}")
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.path.display())?;
        match (self.0.section, self.0.offset) {
            (Some(section), Some(offset)) => {
                write!(f, ": {section} at {offset:#x}")?;
                match self.0.unit {
                    Some(unit) if unit != offset => write!(f, " (unit at {unit:#x})")?,
                    _ => {}
                }
            }
            (Some(section), None) => write!(f, ": {section}")?,
            _ => {}
        }
        write!(f, ": {}", self.0.kind)
    }
}

/// A leaf error: what caused it (gimli's [`gimli::Error`], kept whole in
/// [`ErrorKind::Dwarf`]) is printed in its message, so `source` is `None`
/// and a chain printer says nothing twice.
impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_section_and_offset() {
        let err = Error::new(Path::new("/x/a.ko"), ErrorKind::NoDwarf);
        assert_eq!(
            err.to_string(),
            "/x/a.ko: no DWARF debug info (no .debug_info section)"
        );
        let err = Error::new(Path::new("a.o"), ErrorKind::InvalidDwarf("bad".into()))
            .at(".debug_info", 0x2a);
        assert_eq!(
            err.to_string(),
            "a.o: .debug_info at 0x2a: invalid DWARF: bad"
        );
        assert_eq!(err.offset(), Some(0x2a));
        assert_eq!(err.path(), Path::new("a.o"));
        // A DIE's error names its unit too, unless it is the unit's DIE.
        assert_eq!(
            err.clone().in_unit(0xb).to_string(),
            "a.o: .debug_info at 0x2a (unit at 0xb): invalid DWARF: bad"
        );
        assert_eq!(
            err.in_unit(0x2a).to_string(),
            "a.o: .debug_info at 0x2a: invalid DWARF: bad"
        );
    }
}
