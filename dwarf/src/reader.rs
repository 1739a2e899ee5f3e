//! The reader every DWARF section is read through: a leaf module, so that
//! the ELF side (`elf.rs`) and the DWARF side (`strings.rs`, `walk/`) can
//! both name it without depending on each other.

/// The reader every DWARF section is read through.
pub type Reader<'input> = gimli::EndianSlice<'input, gimli::RunTimeEndian>;
