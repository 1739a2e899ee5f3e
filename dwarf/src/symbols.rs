//! The ELF symbol facts that BTF selection rules need, and nothing more.
//!
//! pahole decides which functions get a `FUNC` by looking the name up among
//! `STT_FUNC` symbols, and which variables get a `VAR` by their symbol's
//! section and address. The rest of the symbol table is of no interest, so
//! only these facts are kept (names borrow from the mapped `.strtab`).

use std::collections::HashMap;

/// An ELF section by index, with its name and address range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionInfo<'input> {
    /// Section header index.
    pub index: usize,
    /// Section name.
    pub name: &'input str,
    /// `sh_addr` (0 in relocatable files).
    pub address: u64,
    /// `sh_size`.
    pub size: u64,
}

/// A data symbol (`STT_OBJECT`), for variable selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSymbol<'input> {
    /// Symbol name.
    pub name: &'input str,
    /// `st_value` (in ET_REL: offset within its section).
    pub address: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_shndx`.
    pub section_index: usize,
    /// `STB_GLOBAL`/`STB_WEAK` rather than `STB_LOCAL`.
    pub global: bool,
}

/// A function symbol (`STT_FUNC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncSymbol<'input> {
    /// Full symbol name, suffixes (`.isra.0`, `.cold`, ...) included.
    pub name: &'input str,
    /// `st_value`.
    pub address: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_shndx`.
    pub section_index: usize,
    /// `STB_GLOBAL`/`STB_WEAK` rather than `STB_LOCAL`.
    pub global: bool,
}

/// What the encoder needs from `.symtab`.
#[derive(Debug, Default)]
pub struct SymbolFacts<'input> {
    /// Every `STT_FUNC` symbol, sorted by (name, address).
    pub functions: Vec<FuncSymbol<'input>>,
    /// Every `STT_OBJECT` symbol, sorted by (section, address, name).
    pub data: Vec<DataSymbol<'input>>,
    /// The `.data..percpu` section, when the file has one.
    pub percpu: Option<SectionInfo<'input>>,
    /// All sections by name (for DATASEC names and `.BTF_ids` lookup).
    pub sections: HashMap<&'input str, SectionInfo<'input>>,
}
