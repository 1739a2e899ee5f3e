//! BTF for btfenc: the model, lowering from the DWARF model, deduplication,
//! split/distill/relocate, serialization in either byte order, and reading.
//!
//! ## API Structure
//! - [`raw`]: the on-disk format (`Documentation/bpf/btf.rst`): constants,
//!   header and record layouts. Every rule of the format lives there.
//! - [`types`]: the decoded in-memory model, [`Btf`] and [`Type`].
//! - [`strings`]: the deduplicating string table.
//! - [`write`](mod@write): serialization, [`read`]: parsing raw blobs and ELF `.BTF`.
//! - [`lower`]: DWARF model → BTF, with pahole's rules.
//! - [`encode`]: the whole pipeline, ELF file in, BTF bytes out.
//! - [`dedup`]: cross-CU deduplication with `btf__dedup` semantics.
//! - [`dump`]: bpftool's raw text format, [`diff`]: semantic comparison.
//! - [`distill`]: a split's distilled base (`.BTF.base`), and
//!   [`relocate`]: moving such a split onto a full base.
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

pub mod dedup;
pub mod diff;
pub mod distill;
pub mod dump;
pub mod dump_c;
#[cfg(feature = "dwarf")]
pub mod encode;
mod error;
#[cfg(feature = "dwarf")]
pub mod lower;
mod name;
pub mod raw;
pub mod read;
mod refs;
pub mod relocate;
pub mod strings;
pub mod types;
pub mod validate;
pub mod write;

pub use self::error::*;
pub use self::types::*;

#[cfg(test)]
mod test_reference;
#[cfg(test)]
mod test_types;
