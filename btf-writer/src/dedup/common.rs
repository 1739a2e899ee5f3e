//! What every deduplication pass shares: the [`Error`] it reports, the
//! libbpf [`Flavor`] it reproduces and the [`Dedup`] result. A leaf module,
//! so that the passes and the entry points in `dedup/mod.rs` can all use
//! it.

use std::fmt;

use crate::types::{Btf, TypeId};

/// Why deduplication failed. Each names the offending type by input id.
/// Joined into the crate's [`crate::Error`] by `From`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `btf.base_type_count` is not the number of types in the base given
    /// (or a base count is set but no base given).
    BaseMismatch {
        /// `btf.base_type_count`.
        expected: u32,
        /// Types in the base passed in.
        found: u32,
    },
    /// More types than BTF ids can number.
    TooManyTypes {
        /// Ids needed, void included.
        count: u64,
    },
    /// A type references an id past the last type.
    DanglingReference {
        /// The referencing type.
        type_id: TypeId,
        /// The missing id.
        referenced: TypeId,
    },
    /// A chain of reference types loops (or nests absurdly deep) without
    /// passing a struct, union or typedef; libbpf fails with `-ELOOP`.
    ReferenceLoop {
        /// A type on the chain.
        type_id: TypeId,
    },
    /// A kind met where libbpf cannot handle it (`-EINVAL`), such as a
    /// VAR reached through a struct member.
    UnexpectedKind {
        /// The type.
        type_id: TypeId,
        /// Its BTF kind number.
        kind: u8,
    },
    /// A reference resolved to a dropped type: a dedup invariant broke.
    Unresolved {
        /// The input id that could not be renumbered.
        type_id: TypeId,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BaseMismatch { expected, found } => {
                write!(
                    f,
                    "dedup: split BTF expects {expected} base types, base has {found}"
                )
            }
            Error::TooManyTypes { count } => {
                write!(f, "dedup: {count} type ids exceed BTF's limit")
            }
            Error::DanglingReference {
                type_id,
                referenced,
            } => {
                write!(
                    f,
                    "dedup: type [{}] references missing type [{}]",
                    type_id.0, referenced.0
                )
            }
            Error::ReferenceLoop { type_id } => {
                write!(
                    f,
                    "dedup: reference types loop through type [{}]",
                    type_id.0
                )
            }
            Error::UnexpectedKind { type_id, kind } => {
                write!(
                    f,
                    "dedup: type [{}] of kind {kind} cannot be deduplicated here",
                    type_id.0
                )
            }
            Error::Unresolved { type_id } => {
                write!(
                    f,
                    "dedup: type [{}] has no canonical representative",
                    type_id.0
                )
            }
        }
    }
}

impl std::error::Error for Error {}

/// Which libbpf's `btf__dedup` to reproduce. They differ in corner cases
/// only: 1.7 (pahole 1.31) dedups TYPEDEFs by graph equivalence with the
/// structs (and so never against base typedefs) and accepts more kinds
/// of in-CU identical duplicates; 1.1 (Debian's 1.1.2, which pahole 1.24
/// links) dedups TYPEDEFs as plain reference types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// libbpf 1.1, as used by pahole 1.24.
    Libbpf1_1,
    /// libbpf 1.7, as embedded in pahole 1.31.
    #[default]
    Libbpf1_7,
}

/// A deduplicated table and how input ids map into it.
#[derive(Clone, Debug)]
pub struct Dedup<'a> {
    /// The unique types, first occurrences in input order, references
    /// renumbered. Same `base_type_count`/`base_str_len` as the input.
    pub btf: Btf<'a>,
    /// `remap[old_id]` is the id references to `old_id` now use (void and
    /// base ids map to themselves, except a base FWD resolved to a split
    /// STRUCT/UNION, which maps to that type as in libbpf).
    pub remap: Vec<TypeId>,
}
