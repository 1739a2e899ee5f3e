//! Opening an ELF file and handing out its DWARF and symbol facts.
//!
//! The file is memory-mapped; sections are borrowed from the map when they
//! can be used as they are, and copied only when they must change:
//! `SHF_COMPRESSED` sections are inflated and relocatable files' debug
//! sections get their relocations applied. The copies live inside the
//! [`ElfFile`], so everything handed out borrows from it alone.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use gimli::Section as _;
use object::read::elf::Sym as _;
use object::{Object, ObjectSection, ObjectSymbol, SectionIndex, SymbolSection};

use crate::error::{Error, ErrorKind, Result};
use crate::reader::Reader;
use crate::reloc;
use crate::strings::{StrSection, Strings};
use crate::symbols::{
    kfuncs_in_btf_ids, BtfIdsSymbol, DataSymbol, FuncSymbol, SectionInfo, SymbolFacts,
};

/// A compilation (or type) unit header, as listed by [`Dwarf::units`].
pub type UnitHeader<'input> = gimli::UnitHeader<Reader<'input>>;

/// The ELF object type, as far as DWARF reading cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfKind {
    /// `ET_EXEC` (vmlinux).
    Executable,
    /// `ET_DYN` (shared objects, PIE).
    Shared,
    /// `ET_REL` (`.o`, `.ko`): debug sections need relocating.
    Relocatable,
}

/// The bytes of the file: normally a map, a buffer for in-memory inputs.
enum Storage {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Map(map) => map,
            Storage::Owned(vec) => vec,
        }
    }
}

/// Debug sections that had to be copied (decompressed or relocated).
#[derive(Debug, Default)]
struct OwnedSections {
    by_id: Vec<(gimli::SectionId, Box<[u8]>)>,
}

/// An opened ELF file.
pub struct ElfFile {
    path: PathBuf,
    storage: Storage,
    endian: gimli::RunTimeEndian,
    is_64: bool,
    machine: u16,
    kind: ElfKind,
    owned: OnceLock<Result<OwnedSections>>,
    /// The string sections' own maps (see [`STRING_SECTIONS`]), which
    /// everything borrowed from those sections is borrowed from instead of
    /// the whole file's map; none for an in-memory file.
    string_maps: Vec<StringMap>,
    /// Whether a linker merged `.debug_str` (see [`Dwarf::merged_debug_str`]).
    debug_str_merged: bool,
}

/// Sections read at random places from start to end while units are
/// walked, each mapped on its own; a `true` marks those kept mapped while
/// the whole file's map is given back as the units are walked
/// ([`ElfFile::release_resident_pages`]).
///
/// The DWARF string sections are kept: every unit reads them, and the BTF
/// borrows its names from them until it is written, so giving their pages
/// back with the rest only had them read again at once (on Debian 7.3.4's
/// vmlinux, about 110 page faults per release, the 6.5 MB `.debug_str`
/// again and again). The symbol names (`.strtab`, where each function's
/// name is looked up) are given back with the rest: kept, most of them
/// would stay (5.4 MB on 7.3.4) where a lookup touches a few.
///
/// Why maps of their own: where the page cache holds the file in large
/// folios (ext4 on Linux 6.18), a read maps the folio around it whole when
/// the folio lies in the map, and a section's first and last folios hold
/// its neighbours' bytes too (on Debian 6.1's vmlinux, 1.8 MB of
/// `.debug_frame` before `.debug_str`, and all 2.8 MB of `.symtab` beside
/// `.strtab`). A map of the section alone does not hold those folios
/// whole, so only the section's own pages are mapped.
const STRING_SECTIONS: [(&str, bool); 4] = [
    (".debug_str", true),
    (".debug_line_str", true),
    (".debug_str_offsets", true),
    (".strtab", false),
];

/// Where in the file the [`STRING_SECTIONS`] it has are, as stored (a
/// compressed one is read from a copy, never from the file).
fn string_section_ranges(file: &object::File<'_>) -> Vec<(std::ops::Range<usize>, bool)> {
    STRING_SECTIONS
        .iter()
        .filter_map(|&(name, kept)| {
            let stored = file.section_by_name(name)?.compressed_file_range().ok()?;
            if stored.format != object::CompressionFormat::None {
                return None;
            }
            let start = usize::try_from(stored.offset).ok()?;
            let end = start.checked_add(usize::try_from(stored.compressed_size).ok()?)?;
            Some((start..end, kept))
        })
        .collect()
}

/// One of [`STRING_SECTIONS`] mapped on its own.
struct StringMap {
    /// Where the section is in the file.
    range: std::ops::Range<usize>,
    /// The section's bytes (memmap2 maps from the page they start in).
    map: memmap2::Mmap,
    /// Whether [`ElfFile::release_resident_pages`] leaves it mapped.
    kept: bool,
}

impl std::fmt::Debug for ElfFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfFile")
            .field("path", &self.path)
            .field("len", &self.storage.bytes().len())
            .field("endian", &self.endian)
            .field("is_64", &self.is_64)
            .field("machine", &self.machine)
            .field("kind", &self.kind)
            .finish()
    }
}

/// The DWARF of one [`ElfFile`], ready to be walked unit by unit from
/// several threads (it is `Sync`).
#[derive(Debug)]
pub struct Dwarf<'input> {
    /// The gimli view of all DWARF sections.
    pub gimli: gimli::Dwarf<Reader<'input>>,
    units: Vec<UnitHeader<'input>>,
    pub(crate) strings: Strings<'input>,
    /// The supplementary file's units and strings; its gimli view is
    /// `gimli.sup()`.
    pub(crate) sup: Option<SupDwarf<'input>>,
    path: &'input Path,
    machine: u16,
    big_endian: bool,
    /// Whether a linker merged `.debug_str` (see [`Dwarf::merged_debug_str`]).
    debug_str_merged: bool,
}

/// The supplementary file's part of a [`Dwarf`].
#[derive(Debug)]
pub(crate) struct SupDwarf<'input> {
    pub(crate) units: Vec<UnitHeader<'input>>,
    pub(crate) strings: Strings<'input>,
    pub(crate) path: &'input Path,
}

impl<'input> Dwarf<'input> {
    /// Every unit header of `.debug_info`, in section order.
    pub fn units(&self) -> &[UnitHeader<'input>] {
        &self.units
    }

    /// The file this DWARF came from, for error messages.
    pub fn path(&self) -> &'input Path {
        self.path
    }

    /// The supplementary file read along with this one, if any.
    pub fn sup_path(&self) -> Option<&'input Path> {
        self.sup.as_ref().map(|sup| sup.path)
    }

    /// The file's `.debug_str`, whose strings most names in the walked
    /// models borrow, when a linker merged it: equal strings in it are then
    /// the same bytes, so that their places tell them apart. That is a
    /// linked file's (a vmlinux) whose section has `SHF_MERGE` and
    /// `SHF_STRINGS`. A relocatable file's is not (yet): a kernel module's
    /// holds each CU's strings one after the other, the same names again
    /// and again.
    pub fn merged_debug_str(&self) -> Option<&'input [u8]> {
        self.debug_str_merged
            .then(|| self.gimli.debug_str.reader().slice())
    }

    /// The bytes of a unit (header included) in `.debug_info`.
    pub fn unit_bytes(&self, header: &UnitHeader<'input>) -> &'input [u8] {
        let section = self.gimli.debug_info.reader().slice();
        // Units listed by `Dwarf::units` are all in `.debug_info`.
        let start = header.offset().0;
        let end = start.saturating_add(header.length_including_self());
        section.get(start..end).unwrap_or(&[])
    }

    /// `e_machine` of the file (decides the parameter registers).
    pub fn machine(&self) -> u16 {
        self.machine
    }

    /// Whether the file's data is big-endian.
    pub fn is_big_endian(&self) -> bool {
        self.big_endian
    }

    /// Whether some DIE may refer into another unit (`DW_FORM_ref_addr`
    /// in an abbreviation, as LTO and dwz output have, or a reference into
    /// the supplementary file): such units must be walked
    /// together with [`crate::walk::walk_units`]. Abbreviation codes are
    /// scanned from 1 while they are dense, as gcc and clang number them.
    pub fn has_cross_unit_references(&self) -> Result<bool> {
        let mut seen =
            std::collections::HashSet::with_hasher(foldhash::fast::FixedState::default());
        for header in &self.units {
            if !seen.insert(header.debug_abbrev_offset()) {
                continue;
            }
            let abbreviations = self.gimli.abbreviations(header).map_err(|err| {
                Error::new(self.path, ErrorKind::Dwarf(err))
                    .at(".debug_abbrev", header.debug_abbrev_offset().0 as u64)
            })?;
            let mut code = 1;
            while let Some(abbreviation) = abbreviations.get(code) {
                if abbreviation.attributes().iter().any(|spec| {
                    matches!(
                        spec.form(),
                        gimli::DW_FORM_ref_addr
                            | gimli::DW_FORM_GNU_ref_alt
                            | gimli::DW_FORM_ref_sup4
                            | gimli::DW_FORM_ref_sup8
                    )
                }) {
                    return Ok(true);
                }
                code += 1;
            }
        }
        Ok(false)
    }
}

/// The debug sections that may need a copy (compressed or relocated).
/// Split-DWARF `.dwo` sections are not read.
const DWARF_SECTIONS: [gimli::SectionId; 14] = [
    gimli::SectionId::DebugAbbrev,
    gimli::SectionId::DebugAddr,
    gimli::SectionId::DebugAranges,
    gimli::SectionId::DebugInfo,
    gimli::SectionId::DebugLine,
    gimli::SectionId::DebugLineStr,
    gimli::SectionId::DebugLoc,
    gimli::SectionId::DebugLocLists,
    gimli::SectionId::DebugRanges,
    gimli::SectionId::DebugRngLists,
    gimli::SectionId::DebugStr,
    gimli::SectionId::DebugStrOffsets,
    gimli::SectionId::DebugTypes,
    gimli::SectionId::DebugMacro,
];

/// Units listed between two releases of the mapped pages (see
/// [`ElfFile::release_resident_pages`]) while the unit headers are read.
const UNITS_PER_RELEASE: usize = 16;

impl ElfFile {
    /// Maps and checks `path`: it must be an ELF executable, shared object
    /// or relocatable file, of either class and byte order.
    pub fn open(path: impl AsRef<Path>) -> Result<ElfFile> {
        let path = path.as_ref();
        let io_error = |err: std::io::Error| Error::new(path, ErrorKind::Io(err.to_string()));
        let file = File::open(path).map_err(io_error)?;
        // SAFETY: the map is only read. Like every mmap user, we rely on the
        // file not being truncated or rewritten while it is mapped; the
        // inputs (vmlinux, modules, objects) are build outputs at rest.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_error)?;
        let mut elf = ElfFile::from_storage(path.to_path_buf(), Storage::Map(map))?;
        let file_len = elf.storage.bytes().len();
        for (range, kept) in string_section_ranges(&elf.object()?) {
            // A header may claim bytes past the end of the file; reading
            // the section reports that, where mapping them would fault.
            if range.is_empty() || range.end > file_len {
                continue;
            }
            // SAFETY: as for the whole file's map above.
            let map = unsafe {
                memmap2::MmapOptions::new()
                    .offset(range.start as u64)
                    .len(range.len())
                    .map(&file)
            }
            .map_err(io_error)?;
            elf.string_maps.push(StringMap { range, map, kept });
        }
        Ok(elf)
    }

    /// `data`, when it lies in one of the string sections' own maps, read
    /// from that map (the same bytes); otherwise `data` itself.
    fn in_string_map<'a>(&'a self, data: &'a [u8]) -> &'a [u8] {
        let Some(place) = self.map_range_of(data) else {
            return data;
        };
        self.string_maps
            .iter()
            .find(|string| string.range.start <= place.start && place.end <= string.range.end)
            .and_then(|string| {
                let start = place.start - string.range.start;
                string.map.get(start..start + data.len())
            })
            .unwrap_or(data)
    }

    /// A symbol's name as UTF-8 (`None` otherwise: it cannot become a BTF
    /// name anyway), read from `.strtab`'s own map; checked once, there.
    fn symbol_name<'a>(&'a self, symbol: &impl ObjectSymbol<'a>) -> Option<&'a str> {
        std::str::from_utf8(self.in_string_map(symbol.name_bytes().ok()?)).ok()
    }

    /// Lets the kernel take back the mapped file's pages from this process
    /// (they stay in the page cache and are read back if touched again),
    /// but for the DWARF string sections' own maps (`.debug_str` and the
    /// like), which every unit reads. Call as the DWARF is
    /// read: the debug sections are most of a vmlinux's 590 MB, and pages
    /// walked once would otherwise count in the peak memory of everything
    /// after the walk. Borrowed data stays valid. Does nothing for
    /// in-memory inputs.
    pub fn release_resident_pages(&self) {
        self.release_pages_within(0..usize::MAX);
        for string in self.string_maps.iter().filter(|string| !string.kept) {
            // SAFETY: as in `release_pages_within`: a read-only shared
            // file mapping, read back from the file when touched again.
            let _ = unsafe {
                string
                    .map
                    .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
            };
        }
    }

    /// [`ElfFile::release_resident_pages`] for the map's bytes in `within`
    /// only (whole pages).
    fn release_pages_within(&self, within: std::ops::Range<usize>) {
        let Storage::Map(map) = &self.storage else {
            return;
        };
        // Whole pages of 4 KiB, x86's: with larger ones the kernel widens
        // the range to its pages, which are read back if touched, as any
        // page given back is. Only the map's bytes count, which also
        // keeps the rounding from overflowing.
        let page: usize = 4096;
        let start = within.start.min(map.len()).next_multiple_of(page);
        let end = within.end.min(map.len()) / page * page;
        if end > start {
            // SAFETY: the map is a read-only shared file mapping: after
            // MADV_DONTNEED its pages are filled again from the file on
            // the next access, so every borrow keeps reading the same
            // bytes. A failure only means the pages stay resident.
            let _ = unsafe {
                map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
            };
        }
    }

    /// Where `data`, borrowed from the file, sits in the map; `None` for
    /// bytes that are not the map's (a copied section, an in-memory file).
    fn map_range_of(&self, data: &[u8]) -> Option<std::ops::Range<usize>> {
        let Storage::Map(map) = &self.storage else {
            return None;
        };
        let start = (data.as_ptr() as usize).checked_sub(map.as_ptr() as usize)?;
        let end = start.checked_add(data.len())?;
        (end <= map.len()).then_some(start..end)
    }

    /// Whether [`ElfFile::dwarf`] copied some DWARF section out of the map
    /// (to decompress it, or to relocate it in a relocatable file): reading
    /// it whole left all its mapped pages resident, which
    /// [`ElfFile::release_resident_pages`] gives back.
    pub fn has_copied_sections(&self) -> bool {
        self.owned
            .get()
            .is_some_and(|owned| owned.as_ref().is_ok_and(|owned| !owned.by_id.is_empty()))
    }

    /// Reads an ELF image already in memory; `path` is only used in error
    /// messages.
    pub fn from_bytes(path: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<ElfFile> {
        ElfFile::from_storage(path.into(), Storage::Owned(bytes))
    }

    fn from_storage(path: PathBuf, storage: Storage) -> Result<ElfFile> {
        let bytes = storage.bytes();
        let kind =
            object::FileKind::parse(bytes).map_err(|_| Error::new(&path, ErrorKind::NotElf))?;
        let is_64 = match kind {
            object::FileKind::Elf32 => false,
            object::FileKind::Elf64 => true,
            _ => return Err(Error::new(&path, ErrorKind::NotElf)),
        };
        let parsed = object::File::parse(bytes)
            .map_err(|err| Error::new(&path, ErrorKind::Malformed(err.to_string())))?;
        let endian = if parsed.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let kind = match parsed.kind() {
            object::ObjectKind::Executable => ElfKind::Executable,
            object::ObjectKind::Dynamic => ElfKind::Shared,
            object::ObjectKind::Relocatable => ElfKind::Relocatable,
            other => {
                return Err(Error::new(
                    &path,
                    ErrorKind::UnsupportedElf(format!("object kind {other:?}")),
                ))
            }
        };
        let machine = e_machine(&parsed);
        let debug_str_merged = kind != ElfKind::Relocatable
            && parsed.section_by_name(".debug_str").is_some_and(|section| {
                let merged = object::elf::SHF_MERGE | object::elf::SHF_STRINGS;
                match section.flags() {
                    object::SectionFlags::Elf { sh_flags, .. } => sh_flags & merged == merged,
                    _ => false,
                }
            });
        drop(parsed);
        Ok(ElfFile {
            path,
            storage,
            endian,
            is_64,
            machine,
            kind,
            owned: OnceLock::new(),
            string_maps: Vec::new(),
            debug_str_merged,
        })
    }

    /// The path the file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw bytes of the whole file.
    pub fn bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    /// `e_machine`.
    pub fn machine(&self) -> u16 {
        self.machine
    }

    /// `ELFCLASS64` rather than `ELFCLASS32`.
    pub fn is_64(&self) -> bool {
        self.is_64
    }

    /// Data byte order.
    pub fn is_big_endian(&self) -> bool {
        matches!(self.endian, gimli::RunTimeEndian::Big)
    }

    /// Executable, shared object or relocatable.
    pub fn kind(&self) -> ElfKind {
        self.kind
    }

    fn object(&self) -> Result<object::File<'_>> {
        object::File::parse(self.storage.bytes())
            .map_err(|err| Error::new(&self.path, ErrorKind::Malformed(err.to_string())))
    }

    fn malformed(&self, section: &'static str, err: impl std::fmt::Display) -> Error {
        Error::new(&self.path, ErrorKind::Malformed(err.to_string())).in_section(section)
    }

    /// The uncompressed contents of a section by name, or `None` when the
    /// file has no such section. Relocations are not applied (use
    /// [`ElfFile::dwarf`] for debug sections).
    pub fn section_data(&self, name: &str) -> Result<Option<std::borrow::Cow<'_, [u8]>>> {
        let file = self.object()?;
        let Some(section) = file.section_by_name(name) else {
            return Ok(None);
        };
        let malformed = |err: String| {
            Error::new(
                &self.path,
                ErrorKind::Malformed(format!("section {name}: {err}")),
            )
        };
        let compressed = section
            .compressed_data()
            .map_err(|err| malformed(err.to_string()))?;
        let data = crate::decompress::decompress(&compressed).map_err(malformed)?;
        Ok(Some(data))
    }

    /// Decompresses and relocates, once, the debug sections that need it.
    fn owned_sections(&self) -> Result<&OwnedSections> {
        let result = self.owned.get_or_init(|| self.load_owned_sections());
        result.as_ref().map_err(Clone::clone)
    }

    fn load_owned_sections(&self) -> Result<OwnedSections> {
        let file = self.object()?;
        let mut owned = OwnedSections::default();
        for id in DWARF_SECTIONS {
            let name = id.name();
            let Some(section) = file.section_by_name(name) else {
                continue;
            };
            let packed = section
                .compressed_data()
                .map_err(|err| self.malformed(name, err))?;
            let compressed = packed.format != object::CompressionFormat::None;
            let relocated =
                self.kind == ElfKind::Relocatable && section.relocations().next().is_some();
            if !compressed && !relocated {
                continue;
            }
            let mut data = crate::decompress::decompress(&packed)
                .map_err(|err| self.malformed(name, err))?
                .into_owned()
                .into_boxed_slice();
            if relocated {
                reloc::apply_relocations(&file, &section, &mut data, self.is_big_endian())
                    .map_err(|msg| {
                        Error::new(&self.path, ErrorKind::Relocation(msg)).in_section(name)
                    })?;
            }
            owned.by_id.push((id, data));
        }
        Ok(owned)
    }

    /// The file's DWARF: all sections loaded (decompressed, relocated) and
    /// every unit header listed. Fails if there is no `.debug_info`.
    /// DWARF that refers to a supplementary file (see
    /// [`ElfFile::supplementary_link`]) needs [`ElfFile::dwarf_with_sup`].
    pub fn dwarf(&self) -> Result<Dwarf<'_>> {
        self.dwarf_with_sup(None)
    }

    /// [`ElfFile::dwarf`], with `sup`'s DWARF as the supplementary file's
    /// (`dwz -m`'s common file, found with [`crate::find_supplementary`]):
    /// the alternate forms (`DW_FORM_GNU_ref_alt`, `DW_FORM_GNU_strp_alt`,
    /// `DW_FORM_ref_sup4/8`, `DW_FORM_strp_sup`) then resolve into it.
    pub fn dwarf_with_sup<'a>(&'a self, sup: Option<&'a ElfFile>) -> Result<Dwarf<'a>> {
        let (mut gimli_dwarf, units) = self.load_gimli()?;
        let sup = match sup {
            Some(file) => {
                let (sup_gimli, sup_units) = file.load_gimli()?;
                let sup_strings = Strings::new(&sup_gimli);
                gimli_dwarf.set_sup(sup_gimli);
                Some(SupDwarf {
                    units: sup_units,
                    strings: sup_strings,
                    path: &file.path,
                })
            }
            None => None,
        };
        let mut strings = Strings::new(&gimli_dwarf);
        if let Some(sup) = &sup {
            strings.set_sup(&sup.strings);
        }
        Ok(Dwarf {
            strings,
            gimli: gimli_dwarf,
            units,
            sup,
            path: &self.path,
            machine: self.machine,
            big_endian: self.is_big_endian(),
            debug_str_merged: self.debug_str_merged,
        })
    }

    /// The gimli view of the file's DWARF sections, and its unit headers.
    #[allow(clippy::type_complexity)]
    fn load_gimli(&self) -> Result<(gimli::Dwarf<Reader<'_>>, Vec<UnitHeader<'_>>)> {
        let owned = self.owned_sections()?;
        let file = self.object()?;
        if file.section_by_name(".debug_info").is_none() {
            return Err(Error::new(&self.path, ErrorKind::NoDwarf));
        }
        // gcc's -fdebug-types-section puts DWARF 5 type units in COMDAT
        // copies of .debug_info; reading only the first copy would lose the
        // compile unit without a word.
        let copies = file
            .sections()
            .filter(|section| {
                let name = section.name().unwrap_or("");
                name == ".debug_info" || name == ".zdebug_info"
            })
            .count();
        if copies > 1 {
            return Err(Error::new(
                &self.path,
                ErrorKind::UnsupportedDwarf(format!(
                    "{copies} .debug_info sections (type units in COMDAT groups, \
                     from -fdebug-types-section?)"
                )),
            )
            .in_section(".debug_info"));
        }
        let load = |id: gimli::SectionId| -> Result<Reader<'_>> {
            if let Some((_, data)) = owned.by_id.iter().find(|(owned_id, _)| *owned_id == id) {
                return Ok(gimli::EndianSlice::new(data, self.endian));
            }
            let name = id.name();
            let data: &[u8] = match file.section_by_name(name) {
                // Not in `owned`, so neither compressed nor relocated:
                // borrowing from the map is exact.
                Some(section) => {
                    self.in_string_map(section.data().map_err(|err| self.malformed(name, err))?)
                }
                None => &[],
            };
            Ok(gimli::EndianSlice::new(data, self.endian))
        };
        // No abbreviations cache: the walker reads units' tables itself
        // and shares what it derives between units (`walk/abbrev_cache.rs`).
        let gimli_dwarf = gimli::Dwarf::load(load)?;
        // Reading a unit's header maps the file's pages around it, and
        // where the page cache holds the file in large folios (ext4 on
        // Linux 6.18 fills it so), the kernel maps each header's whole
        // folio: listing Debian 6.1's 2,172 units mapped all of its
        // .debug_info, 170 MB at once, above the peak of everything after.
        // The pages of the units listed are given back as the listing goes,
        // and only theirs: the symbol table is read meanwhile.
        let info_in_map = self.map_range_of(gimli_dwarf.debug_info.reader().slice());
        let mut listed_from = 0;
        let mut units = Vec::new();
        let mut iter = gimli_dwarf.units();
        loop {
            let offset = iter_offset(&units);
            match iter.next() {
                Ok(Some(header)) => {
                    units.push(header);
                    if let (Some(info), true) =
                        (&info_in_map, units.len().is_multiple_of(UNITS_PER_RELEASE))
                    {
                        let listed_to = iter_offset(&units) as usize;
                        self.release_pages_within(
                            info.start.saturating_add(listed_from)
                                ..info.start.saturating_add(listed_to).min(info.end),
                        );
                        listed_from = listed_to;
                    }
                }
                Ok(None) => break,
                Err(err) => {
                    return Err(
                        Error::new(&self.path, ErrorKind::Dwarf(err)).at(".debug_info", offset)
                    )
                }
            }
        }
        Ok((gimli_dwarf, units))
    }

    /// The `STT_FUNC`/`STT_OBJECT` symbols and the section table.
    pub fn symbols(&self) -> Result<SymbolFacts<'_>> {
        let file = self.object()?;
        let mut facts = SymbolFacts::default();
        for section in file.sections() {
            let Ok(name) = section.name() else { continue };
            let info = SectionInfo {
                index: section.index().0,
                name,
                address: section.address(),
                size: section.size(),
            };
            if name == ".data..percpu" {
                facts.percpu = Some(info);
            }
            facts.sections.entry(name).or_insert(info);
        }
        let btf_ids = facts.sections.get(".BTF_ids").copied();
        let mut btf_ids_symbols = Vec::new();
        // By ELF class, so that every symbol's fields are read without
        // going through `object::File`'s dispatch (231,000 symbols on
        // Debian 7.3.4's vmlinux, on the sequential start).
        match &file {
            object::File::Elf32(elf) => {
                self.read_symbols(elf, btf_ids, &mut facts, &mut btf_ids_symbols);
            }
            object::File::Elf64(elf) => {
                self.read_symbols(elf, btf_ids, &mut facts, &mut btf_ids_symbols);
            }
            // Opening refused every other format.
            _ => {}
        }
        // A total order (every field is a key), so that equal-looking
        // symbols cannot come out in an order that depends on the sort.
        // Functions stay in symbol table order: their users index them by
        // name, and sorting a kernel's names was a sizable part of the
        // sequential start.
        facts
            .data
            .sort_unstable_by_key(|d| (d.section_index, d.address, d.name, d.size, d.global));
        // Only `decl_tag_kfuncs` needs `.BTF_ids`: an unreadable one means
        // no kfuncs rather than no BTF at all.
        let btf_ids_data = btf_ids
            .filter(|_| !btf_ids_symbols.is_empty())
            .and_then(|section| {
                let found = file.section_by_index(SectionIndex(section.index)).ok()?;
                Some((section.address, found.data().ok()?))
            });
        if let Some((address, data)) = btf_ids_data {
            facts.kfuncs = kfuncs_in_btf_ids(data, address, self.is_big_endian(), &btf_ids_symbols);
        }
        Ok(facts)
    }

    /// The `STT_FUNC`/`STT_OBJECT` symbols of `elf`'s `.symtab` into
    /// `facts`, and the symbols in `.BTF_ids` (whatever their type) into
    /// `btf_ids_symbols`.
    fn read_symbols<'a, Elf: object::read::elf::FileHeader>(
        &'a self,
        elf: &object::read::elf::ElfFile<'a, Elf>,
        btf_ids: Option<SectionInfo<'a>>,
        facts: &mut SymbolFacts<'a>,
        btf_ids_symbols: &mut Vec<BtfIdsSymbol<'a>>,
    ) {
        let endian = elf.endian();
        // The names' string table, checked as UTF-8 once rather than name
        // by name (from `.strtab`'s own map, see `STRING_SECTIONS`).
        let names = elf
            .section_by_index(elf.elf_symbol_table().string_section())
            .ok()
            .and_then(|section| section.data().ok())
            .map(|data| StrSection::new(self.in_string_map(data)))
            .unwrap_or_default();
        // The fast lookup answers for every name in the checked prefix;
        // the rest take the general path, with the same answer.
        let name_of = |symbol: &object::read::elf::ElfSymbol<'a, '_, Elf>| {
            let offset = symbol.elf_symbol().st_name(endian);
            usize::try_from(offset)
                .ok()
                .and_then(|offset| names.get(offset))
                .or_else(|| self.symbol_name(symbol))
        };
        for symbol in elf.symbols() {
            // Set symbols in `.BTF_ids` have no type, so this section's
            // symbols are gathered before the type filter (its id symbols
            // still go on to `data` below, as before).
            if let (Some(section), SymbolSection::Section(SectionIndex(index))) =
                (btf_ids, symbol.section())
            {
                if index == section.index {
                    if let Some(name) = name_of(&symbol) {
                        btf_ids_symbols.push(BtfIdsSymbol {
                            name,
                            address: symbol.address(),
                            size: symbol.size(),
                        });
                    }
                }
            }
            // Exactly `STT_FUNC` and `STT_OBJECT`: object's `SymbolKind`
            // would also take `STT_GNU_IFUNC`, `STT_COMMON` and `STT_TLS`.
            let st_type = symbol.elf_symbol().st_type();
            let is_function = st_type == object::elf::STT_FUNC;
            if !is_function && st_type != object::elf::STT_OBJECT {
                continue;
            }
            // Looked up as each function is lowered.
            let Some(name) = name_of(&symbol) else {
                continue;
            };
            let section_index = match symbol.section() {
                SymbolSection::Section(SectionIndex(index)) => index,
                SymbolSection::Absolute => usize::from(object::elf::SHN_ABS.0),
                SymbolSection::Common => usize::from(object::elf::SHN_COMMON.0),
                _ => 0,
            };
            let global = symbol.is_global() || symbol.is_weak();
            if is_function {
                facts.functions.push(FuncSymbol {
                    name,
                    address: symbol.address(),
                    size: symbol.size(),
                    section_index,
                    global,
                });
            } else {
                facts.data.push(DataSymbol {
                    name,
                    address: symbol.address(),
                    size: symbol.size(),
                    section_index,
                    global,
                });
            }
        }
    }
}

/// Offset in `.debug_info` of the unit after the ones already read.
fn iter_offset(units: &[UnitHeader<'_>]) -> u64 {
    units
        .last()
        .map(|last| last.offset().0 as u64 + last.length_including_self() as u64)
        .unwrap_or(0)
}

fn e_machine(file: &object::File<'_>) -> u16 {
    use object::read::elf::FileHeader;
    match file {
        object::File::Elf32(elf) => elf.elf_header().e_machine(elf.endian()).0,
        object::File::Elf64(elf) => elf.elf_header().e_machine(elf.endian()).0,
        _ => 0,
    }
}
