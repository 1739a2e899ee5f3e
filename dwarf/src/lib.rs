//! ELF + DWARF reading for btfenc: the first stage of the pipeline.
//!
//! ## API Structure
//! - [`ElfFile`] maps an ELF file and gives its (decompressed, and for
//!   ET_REL relocated) DWARF sections as a [`Dwarf`] (`Sync`: units can be
//!   walked on several threads) and its [`SymbolFacts`].
//! - [`walk::walk_unit`] turns one compilation unit into a
//!   [`model::CuModel`], the intermediate type model the BTF lowering
//!   consumes; [`walk::walk_units`] walks several units as one, for LTO
//!   output that refers across units ([`Dwarf::has_cross_unit_references`]).
//! - [`ElfFile::supplementary_link`] and [`find_supplementary`] find the
//!   common file of `dwz -m` output, which [`ElfFile::dwarf_with_sup`] reads
//!   along with the file.
//! - [`Error`] names the file, the section or DIE offset, and what is wrong.
//!
//! ## Inside
//! One DIE's way: [`ElfFile::open`] maps the file (`elf.rs`; `decompress.rs`
//! and `reloc.rs` prepare the sections, `strings.rs` the string sections,
//! `sup.rs` the `dwz` file, `symbols.rs` the symbol facts), and
//! [`walk::walk_unit`] reads the unit's DIEs in order: the module docs of
//! [`walk`] list its parts, from the pure DWARF rules up to the walker's
//! loop, which turns a struct DIE into a `Node::Composite` of the
//! [`model::CuModel`]. `reader.rs` holds the [`Reader`] type both the ELF
//! and the DWARF side use. No module depends on itself through others
//! (`tests/integration/module_cycles.rs`).
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

mod decompress;
mod elf;
mod error;
pub mod model;
mod reader;
mod reloc;
mod strings;
mod sup;
pub mod symbols;
#[cfg(test)]
mod test_fixtures;
pub mod walk;

pub use self::elf::*;
pub use self::error::*;
pub use self::reader::Reader;
pub use self::sup::*;
pub use self::symbols::*;
