//! BTF for btfenc: the model, lowering from the DWARF model, deduplication,
//! split/distill/relocate, serialization in either byte order, and reading.
//!
//! ## API Structure
//! - [`raw`]: the on-disk format (`Documentation/bpf/btf.rst`): kinds,
//!   headers, the `info` word, record layouts and limits. Every rule of
//!   the format lives there, and it depends on nothing else here.
//! - [`types`]: the decoded in-memory model, [`Btf`] and [`Type`]; `Type`'s
//!   methods ([`Type::kind`], [`Type::name`], [`Type::info`],
//!   [`Type::size_or_type`], [`Type::for_each_ref`], [`Type::remap_refs`])
//!   are what every pass asks of a type, whatever its kind.
//! - [`strings`]: the deduplicating string table.
//! - [`write`](mod@write): serialization, [`read`]: parsing raw blobs and ELF `.BTF`.
//! - [`lower`]: DWARF model → BTF, with pahole's rules (feature `dwarf`).
//! - [`encode`]: the whole pipeline, ELF file in, BTF bytes out (feature
//!   `dwarf`).
//! - [`dedup`]: cross-CU deduplication with `btf__dedup` semantics.
//! - [`dump`]: bpftool's raw text format, [`diff`]: semantic comparison.
//! - [`distill`]: a split's distilled base (`.BTF.base`), and
//!   [`relocate`]: moving such a split onto a full base.
//! - [`validate`]: the kernel's checks of a BTF, rule for rule.
//! - [`Error`]: the crate's one error, holding the failing area's own
//!   ([`FormatError`], [`dedup::Error`], `lower::Error`, `dwarf::Error`)
//!   with context layers.
//!
//! ## From one DIE to one BTF type
//! [`encode::encode`] opens the ELF file; `dwarf::walk` turns each unit's
//! DIEs into a `CuModel` (a struct DIE becomes a `Node::Composite`);
//! [`lower::lower_cu`] makes it a [`Type::Struct`] with CU-local ids;
//! [`encode::Assembler`] adds the units in order to one table, collapsing
//! exact duplicates ([`dedup::Collapser`]), and picks the FUNCs and VARs;
//! [`dedup`] merges what is equal across units; [`write`](mod@write) encodes
//! each type's head from [`Type::info`] and [`Type::size_or_type`] and its
//! trailing records from [`raw`]'s layouts.
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

mod cache_hint;
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
