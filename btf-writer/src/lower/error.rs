//! What can go wrong while lowering: the cases where pahole itself refuses
//! to produce BTF, plus ids that do not fit the format.

use std::fmt;

/// A lowering failure, naming the CU (by `.debug_info` offset) and the item.
/// Joined into the crate's [`crate::Error`] by `From`. The messages say
/// what is wrong, not which option of a tool would change it: a tool adds
/// its own hint (btfenc suggests `--btf_encode_force` for
/// [`Error::VoidVariable`] and [`Error::InvalidSymbolName`], see
/// [`Error::skipped_when_forced`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A complex or imaginary floating point type with the `float` feature
    /// on: BTF FLOAT cannot express it and pahole stops ("Complex, interval
    /// and imaginary float types are not supported").
    UnsupportedFloat {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// Base type name.
        name: String,
    },
    /// A per-CPU/global variable of type void (pahole errors out unless
    /// `encode_force`, [`crate::lower::Features::encode_force`]).
    VoidVariable {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// Variable name.
        name: String,
    },
    /// A symbol name BTF cannot hold (pahole errors out unless
    /// `encode_force`).
    InvalidSymbolName {
        /// The symbol name.
        name: String,
    },
    /// A type reference to a node the CU does not have (a walker bug, kept
    /// as an error so that bad input never panics).
    DanglingReference {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// The missing node index.
        node: u32,
    },
    /// A `--lang_exclude` name pahole does not know either.
    UnknownLanguage {
        /// The name.
        name: String,
    },
    /// A member or parameter name longer than a BTF string can be.
    NameTooLong {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// The name's length in bytes.
        len: usize,
    },
    /// A type, member or name that BTF cannot hold, or that the kernel's
    /// BTF checks refuse (an offset past 32 bits, a name that is no C
    /// identifier, an ENUM of 3 bytes, ...): an error rather than a
    /// truncated value or a BTF the kernel rejects.
    Unencodable {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// `.debug_info` offset of the DIE of the type concerned.
        die: Option<u64>,
        /// The type and what is wrong with it.
        what: String,
    },
    /// A variable whose place in its section the kernel would refuse in a
    /// DATASEC (it overlaps the one before it); found when the CUs'
    /// variables are put together, so it names its own CU.
    Unplaceable {
        /// CU offset in `.debug_info`.
        cu_offset: u64,
        /// `.debug_info` offset of the variable's DIE.
        die: u64,
        /// The variable, its place and what is wrong with it.
        what: String,
    },
    /// More types than a BTF type id can number.
    TooManyTypes {
        /// The count that overflowed.
        count: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnsupportedFloat { cu_offset, name } => write!(
                f,
                "CU at .debug_info+{cu_offset:#x}: base type '{name}': complex, interval and imaginary float types are not supported"
            ),
            Error::VoidVariable { cu_offset, name } => {
                write!(f, "CU at .debug_info+{cu_offset:#x}: variable '{name}' has void type")
            }
            Error::InvalidSymbolName { name } => {
                write!(f, "symbol '{name}' has a name BTF cannot hold")
            }
            Error::DanglingReference { cu_offset, node } => {
                write!(f, "CU at .debug_info+{cu_offset:#x}: reference to missing type node {node}")
            }
            Error::NameTooLong { cu_offset, len } => {
                write!(f, "CU at .debug_info+{cu_offset:#x}: a name of {len} bytes is longer than BTF can hold")
            }
            // The CU is named by the caller's context (see encoder/src/units.rs).
            Error::Unencodable { die: Some(die), what, .. } => write!(f, "DIE {die:#x}: {what}"),
            Error::Unencodable { die: None, what, .. } => f.write_str(what),
            Error::Unplaceable { cu_offset, die, what } => {
                write!(f, "CU at .debug_info+{cu_offset:#x}: DIE {die:#x}: {what}")
            }
            Error::UnknownLanguage { name } => write!(f, "unknown language '{name}'"),
            Error::TooManyTypes { count } => write!(f, "{count} types do not fit 32-bit BTF type ids"),
        }
    }
}

impl Error {
    /// Whether `encode_force` ([`crate::lower::Features::encode_force`]) skips
    /// the item instead of failing, as pahole's `--btf_encode_force` does.
    pub fn skipped_when_forced(&self) -> bool {
        matches!(
            self,
            Error::VoidVariable { .. } | Error::InvalidSymbolName { .. }
        )
    }
}

impl std::error::Error for Error {}
