//! ELF + DWARF reading for btfenc: the first stage of the pipeline.
//!
//! ## API Structure
//! - [`ElfFile`] maps an ELF file and gives its (decompressed, and for
//!   ET_REL relocated) DWARF sections and its [`SymbolFacts`].
//! - [`walk`] turns one compilation unit into a [`model::CuModel`], the
//!   intermediate type model the BTF lowering consumes.
//! - [`Error`] names the file, the section or DIE offset, and what is wrong.
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]

mod elf;
mod error;
pub mod model;
mod reloc;
pub mod symbols;
pub mod walk;

pub use self::elf::*;
pub use self::error::*;
pub use self::symbols::*;
