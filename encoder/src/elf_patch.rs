/*!
Adding or replacing non-ALLOC sections of an ELF file while every other
section keeps its bytes and its offset.

Why not rebuild the file with a general ELF writer: such writers re-create
`.symtab`/`.strtab` (the `object` builder re-interns symbol names, so
`st_name` offsets move) and may re-layout sections. The kernel build, and
anyone comparing before/after, expects what pahole does through libelf:
only `.BTF` (and `.BTF.base`) and the section header string table change.

How: every kept section stays where it is. The replaced sections, the
section name table (it may gain names) and the section header table go
after the last kept byte; the space an old `.BTF` occupied in the middle of
the file is zeroed. Section indices never change (new sections are
appended to the header table), so symbols, relocation sections and
`sh_link`s stay valid without rewriting. Running it again on its own
output gives the same bytes.

An ALLOC section of such a name is part of a linked image and is refused,
with one exception: an empty one (size 0). lld keeps the kernel linker
script's empty `.BTF` output section, ALLOC, in `.tmp_vmlinux.btf`, and
pahole fills it: libelf replaces the section's data and keeps its header
(type, flags, address, alignment), only the size and offset change. The
kernel then copies `.BTF` out with `objcopy --only-section=.BTF`. btfenc
does the same to the header; the data goes after the last kept byte as
always, so unlike libelf's re-layout no other section moves and the
program headers stay true.
*/

use std::ops::Range;

use anyhow::{bail, Context, Result};

const SHT_NULL: u32 = 0;
const SHT_PROGBITS: u32 = 1;
const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u64 = 0x2;
/// Section indices from here up do not fit `e_shnum`/`e_shstrndx`
/// (ELF "extended section numbering").
const SHN_LORESERVE: u64 = 0xff00;
const SHN_XINDEX: u64 = 0xffff;
/// What pahole gives `.BTF` (the kernel reads the section as u32 words).
const BTF_ALIGN: u64 = 4;

/// One section to add or replace.
#[derive(Debug)]
pub struct NewSection<'a> {
    /// Section name, e.g. `.BTF`.
    pub name: &'a str,
    /// Contents.
    pub data: &'a [u8],
}

/// The ELF file class and byte order: where each header field lives.
#[derive(Clone, Copy, Debug)]
struct Format {
    is_64: bool,
    big_endian: bool,
}

impl Format {
    fn read(self, bytes: &[u8], at: usize, width: usize) -> Result<u64> {
        let field = bytes.get(at..at + width).with_context(|| {
            format!("ELF header field at {at:#x} lies past the end of the file")
        })?;
        let fold = |value: u64, byte: &u8| value << 8 | u64::from(*byte);
        let value = if self.big_endian {
            field.iter().fold(0, fold)
        } else {
            field.iter().rev().fold(0, fold)
        };
        Ok(value)
    }

    fn write(self, out: &mut [u8], at: usize, width: usize, value: u64) -> Result<()> {
        if width < 8 && value >> (width * 8) != 0 {
            bail!("value {value:#x} does not fit a {width}-byte ELF field");
        }
        let field = out
            .get_mut(at..at + width)
            .context("ELF field out of range")?;
        for (i, byte) in field.iter_mut().enumerate() {
            let shift = if self.big_endian {
                (width - 1 - i) * 8
            } else {
                i * 8
            };
            *byte = (value >> shift) as u8;
        }
        Ok(())
    }

    /// Width of an address/offset/size-class field.
    fn word(self) -> usize {
        if self.is_64 {
            8
        } else {
            4
        }
    }

    fn shdr_size(self) -> usize {
        if self.is_64 {
            64
        } else {
            40
        }
    }
}

/// A section header, widened to 64 bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct SectionHeader {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    addralign: u64,
    entsize: u64,
}

impl SectionHeader {
    /// Field layout of Elf32_Shdr / Elf64_Shdr: (offset, width) per field.
    fn layout(format: Format) -> [(usize, usize); 10] {
        if format.is_64 {
            [
                (0, 4),
                (4, 4),
                (8, 8),
                (16, 8),
                (24, 8),
                (32, 8),
                (40, 4),
                (44, 4),
                (48, 8),
                (56, 8),
            ]
        } else {
            [
                (0, 4),
                (4, 4),
                (8, 4),
                (12, 4),
                (16, 4),
                (20, 4),
                (24, 4),
                (28, 4),
                (32, 4),
                (36, 4),
            ]
        }
    }

    fn parse(format: Format, bytes: &[u8], at: usize) -> Result<SectionHeader> {
        let l = Self::layout(format);
        let f = |i: usize| format.read(bytes, at + l[i].0, l[i].1);
        Ok(SectionHeader {
            name: f(0)? as u32,
            kind: f(1)? as u32,
            flags: f(2)?,
            addr: f(3)?,
            offset: f(4)?,
            size: f(5)?,
            link: f(6)? as u32,
            info: f(7)? as u32,
            addralign: f(8)?,
            entsize: f(9)?,
        })
    }

    fn write(&self, format: Format, out: &mut [u8], at: usize) -> Result<()> {
        let l = Self::layout(format);
        let values = [
            u64::from(self.name),
            u64::from(self.kind),
            self.flags,
            self.addr,
            self.offset,
            self.size,
            u64::from(self.link),
            u64::from(self.info),
            self.addralign,
            self.entsize,
        ];
        for (&(off, width), value) in l.iter().zip(values) {
            format.write(out, at + off, width, value)?;
        }
        Ok(())
    }

    fn file_range(&self) -> Option<Range<u64>> {
        if self.kind == SHT_NOBITS || self.kind == SHT_NULL {
            return None;
        }
        Some(self.offset..self.offset.saturating_add(self.size))
    }
}

/// ELF header fields this module reads and rewrites.
struct Header {
    format: Format,
    phoff: u64,
    phentsize: u64,
    phnum: u64,
    shoff: u64,
    shnum: u64,
    shstrndx: u64,
}

/// Offsets of the ELF header fields that differ between the classes.
fn header_offsets(format: Format) -> (usize, usize, usize) {
    // (e_phoff, e_shoff, e_ehsize)
    if format.is_64 {
        (32, 40, 52)
    } else {
        (28, 32, 40)
    }
}

fn parse_header(bytes: &[u8]) -> Result<Header> {
    if !bytes.starts_with(b"\x7fELF") {
        bail!("not an ELF file");
    }
    let format = match (bytes.get(4), bytes.get(5)) {
        (Some(1), Some(1)) => Format {
            is_64: false,
            big_endian: false,
        },
        (Some(1), Some(2)) => Format {
            is_64: false,
            big_endian: true,
        },
        (Some(2), Some(1)) => Format {
            is_64: true,
            big_endian: false,
        },
        (Some(2), Some(2)) => Format {
            is_64: true,
            big_endian: true,
        },
        _ => bail!("unknown ELF class or byte order"),
    };
    let (phoff_at, shoff_at, ehsize_at) = header_offsets(format);
    let word = format.word();
    let shentsize = format.read(bytes, ehsize_at + 6, 2)?;
    if shentsize != format.shdr_size() as u64 {
        bail!("unexpected section header size {shentsize}");
    }
    let mut header = Header {
        format,
        phoff: format.read(bytes, phoff_at, word)?,
        phentsize: format.read(bytes, ehsize_at + 2, 2)?,
        phnum: format.read(bytes, ehsize_at + 4, 2)?,
        shoff: format.read(bytes, shoff_at, word)?,
        shnum: format.read(bytes, ehsize_at + 8, 2)?,
        shstrndx: format.read(bytes, ehsize_at + 10, 2)?,
    };
    if header.shoff == 0 {
        bail!("no section header table");
    }
    // Extended numbering keeps the real values in section 0's header.
    let to_usize = |v: u64| usize::try_from(v).context("offset does not fit in memory");
    if header.shnum == 0 || header.shstrndx == SHN_XINDEX {
        let zero = SectionHeader::parse(format, bytes, to_usize(header.shoff)?)?;
        if header.shnum == 0 {
            header.shnum = zero.size;
        }
        if header.shstrndx == SHN_XINDEX {
            header.shstrndx = u64::from(zero.link);
        }
    }
    Ok(header)
}

fn align_up(value: u64, align: u64) -> u64 {
    if align <= 1 {
        value
    } else {
        value.div_ceil(align) * align
    }
}

/// Finds `name` as a NUL-terminated string in a string table (possibly as
/// the tail of a longer name, as linkers share suffixes).
fn find_name(table: &[u8], name: &str) -> Option<u32> {
    let mut needle = name.as_bytes().to_vec();
    needle.push(0);
    table
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .and_then(|pos| u32::try_from(pos).ok())
}

/// Fails, as [`patch`] would, when `elf` has an ALLOC section named like
/// one of `names`: checked before encoding, so a fully linked image is
/// refused at once instead of after the whole encoding.
pub fn check_patchable(elf: &[u8], names: &[&str]) -> Result<()> {
    let table = SectionTable::read(elf)?;
    for name in names {
        if let Some(h) = table
            .headers
            .iter()
            .find(|h| h.kind != SHT_NULL && table.name_of(h) == name.as_bytes())
        {
            refuse_loaded(h, name)?;
        }
    }
    Ok(())
}

/// An empty ALLOC PROGBITS section: the placeholder lld leaves for `.BTF`.
fn is_placeholder(h: &SectionHeader) -> bool {
    h.flags & SHF_ALLOC != 0 && h.kind == SHT_PROGBITS && h.size == 0
}

/// Refuses an ALLOC section that holds something (part of the loaded
/// image); an empty placeholder may be filled.
fn refuse_loaded(h: &SectionHeader, name: &str) -> Result<()> {
    if h.flags & SHF_ALLOC != 0 && !is_placeholder(h) {
        bail!(
            "its {name} section is ALLOC (part of the loaded image); refusing to rewrite it in place, use --btf_encode_detached"
        );
    }
    Ok(())
}

/// The parsed section header table and section name table of an ELF file.
struct SectionTable<'e> {
    header: Header,
    headers: Vec<SectionHeader>,
    /// Where the old header table lies in the file.
    old_table: Range<u64>,
    /// Contents of the section name table.
    names: &'e [u8],
}

impl<'e> SectionTable<'e> {
    fn read(elf: &'e [u8]) -> Result<SectionTable<'e>> {
        let header = parse_header(elf)?;
        let format = header.format;
        let shdr_size = format.shdr_size() as u64;
        let to_usize = |v: u64| usize::try_from(v).context("offset does not fit in memory");
        let old_table = header
            .shnum
            .checked_mul(shdr_size)
            .and_then(|len| Some(header.shoff..header.shoff.checked_add(len)?))
            .filter(|table| table.end <= elf.len() as u64)
            .context("section header table lies past the end of the file")?;
        let headers = (0..header.shnum)
            .map(|i| SectionHeader::parse(format, elf, to_usize(header.shoff + i * shdr_size)?))
            .collect::<Result<Vec<_>>>()?;
        let names = headers
            .get(to_usize(header.shstrndx)?)
            .and_then(|h| h.file_range())
            .and_then(|r| elf.get(to_usize(r.start).ok()?..to_usize(r.end).ok()?))
            .context("section name table lies outside the file")?;
        Ok(SectionTable {
            header,
            headers,
            old_table,
            names,
        })
    }

    fn name_of(&self, h: &SectionHeader) -> &'e [u8] {
        let tail = self.names.get(h.name as usize..).unwrap_or_default();
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        &tail[..end]
    }
}

/// Returns `elf` with each of `sections` added (or replaced, when a
/// section of that name exists) as a non-ALLOC PROGBITS section. An
/// existing ALLOC section of such a name is an error.
pub fn patch(elf: &[u8], sections: &[NewSection<'_>]) -> Result<Vec<u8>> {
    let table = SectionTable::read(elf)?;
    let mut headers = table.headers.clone();
    let (header, old_table, old_names) = (&table.header, table.old_table.clone(), table.names);
    let format = header.format;
    let to_usize = |v: u64| usize::try_from(v).context("offset does not fit in memory");

    let strtab_index = to_usize(header.shstrndx)?;
    let name_of = |h: &SectionHeader| table.name_of(h);

    // Which header each new section goes to: the existing one of that
    // name, or a new one at the end of the table.
    let mut names = old_names.to_vec();
    let mut targets = Vec::with_capacity(sections.len());
    for section in sections {
        let existing = headers
            .iter()
            .position(|h| h.kind != SHT_NULL && name_of(h) == section.name.as_bytes());
        let index = match existing {
            Some(index) => {
                refuse_loaded(&headers[index], section.name)?;
                index
            }
            None => {
                let name = match find_name(&names, section.name) {
                    Some(offset) => offset,
                    None => {
                        let offset =
                            u32::try_from(names.len()).context("section name table too large")?;
                        names.extend_from_slice(section.name.as_bytes());
                        names.push(0);
                        offset
                    }
                };
                headers.push(SectionHeader {
                    name,
                    ..SectionHeader::default()
                });
                headers.len() - 1
            }
        };
        targets.push(index);
    }

    // Everything not moving keeps its bytes; the new data goes after the
    // last of them (and after the ELF and program headers).
    let moving = |index: usize| index == strtab_index || targets.contains(&index);
    let mut kept_end = {
        let (_, _, ehsize_at) = header_offsets(format);
        format.read(elf, ehsize_at, 2)?
    };
    if header.phnum > 0 {
        kept_end = kept_end.max(
            header
                .phoff
                .saturating_add(header.phnum.saturating_mul(header.phentsize)),
        );
    }
    for (index, h) in headers.iter().enumerate().take(to_usize(header.shnum)?) {
        if moving(index) {
            continue;
        }
        if let Some(range) = h.file_range() {
            kept_end = kept_end.max(range.end);
        }
    }
    if kept_end > elf.len() as u64 {
        bail!("a section extends past the end of the file");
    }

    let mut out = elf
        .get(..to_usize(kept_end)?)
        .context("truncated ELF")?
        .to_vec();
    // Old contents of moved sections that sit among kept ones become
    // zeroed holes rather than stale data.
    let moved_ranges = headers
        .iter()
        .enumerate()
        .take(to_usize(header.shnum)?)
        .filter(|&(index, _)| moving(index))
        .filter_map(|(_, h)| h.file_range());
    for range in moved_ranges.chain([old_table]) {
        {
            let start = to_usize(range.start.min(kept_end))?;
            let end = to_usize(range.end.min(kept_end))?;
            if let Some(hole) = out.get_mut(start..end) {
                hole.fill(0);
            }
        }
    }

    let place = |out: &mut Vec<u8>, data: &[u8], align: u64| -> Result<u64> {
        let offset = align_up(out.len() as u64, align);
        out.resize(to_usize(offset)?, 0);
        out.extend_from_slice(data);
        Ok(offset)
    };
    for (section, &index) in sections.iter().zip(&targets) {
        if is_placeholder(&headers[index]) {
            // Filled as libelf fills it for pahole: the header stays. (Its
            // alignment is honoured up to 64 KiB, whatever the file says.)
            let align = BTF_ALIGN.max(headers[index].addralign.min(1 << 16));
            let offset = place(&mut out, section.data, align)?;
            let h = &mut headers[index];
            h.offset = offset;
            h.size = section.data.len() as u64;
            continue;
        }
        let offset = place(&mut out, section.data, BTF_ALIGN)?;
        let h = &mut headers[index];
        h.kind = SHT_PROGBITS;
        h.flags = 0;
        h.addr = 0;
        h.offset = offset;
        h.size = section.data.len() as u64;
        h.link = 0;
        h.info = 0;
        h.addralign = BTF_ALIGN;
        h.entsize = 0;
    }
    let names_offset = place(&mut out, &names, 1)?;
    {
        let h = headers
            .get_mut(strtab_index)
            .context("no section name table")?;
        h.offset = names_offset;
        h.size = names.len() as u64;
    }

    let count = headers.len() as u64;
    if count >= SHN_LORESERVE {
        headers[0].size = count;
    }
    let shoff = align_up(out.len() as u64, format.word() as u64);
    out.resize(to_usize(shoff)?, 0);
    let table_at = out.len();
    out.resize(table_at + headers.len() * format.shdr_size(), 0);
    for (i, h) in headers.iter().enumerate() {
        h.write(format, &mut out, table_at + i * format.shdr_size())?;
    }
    let (_, shoff_at, ehsize_at) = header_offsets(format);
    format.write(&mut out, shoff_at, format.word(), shoff)?;
    format.write(
        &mut out,
        ehsize_at + 8,
        2,
        if count >= SHN_LORESERVE { 0 } else { count },
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::{Object as WriteObject, StandardSection, Symbol, SymbolSection};
    use object::{
        Architecture, BinaryFormat, Endianness, Object, ObjectSection, ObjectSymbol, SectionKind,
        SymbolFlags, SymbolKind, SymbolScope,
    };

    fn relocatable(endian: Endianness, arch: Architecture) -> Vec<u8> {
        let mut obj = WriteObject::new(BinaryFormat::Elf, arch, endian);
        let text = obj.section_id(StandardSection::Text);
        obj.append_section_data(text, &[0x90; 16], 16);
        let debug = obj.add_section(Vec::new(), b".debug_info".to_vec(), SectionKind::Debug);
        obj.append_section_data(debug, b"dwarf bytes", 1);
        obj.add_symbol(Symbol {
            name: b"fx_function".to_vec(),
            value: 0,
            size: 16,
            kind: SymbolKind::Text,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Section(text),
            flags: SymbolFlags::None,
        });
        obj.write().expect("object writes an ELF")
    }

    fn section<'d>(file: &'d object::File<'d>, name: &str) -> Option<(Vec<u8>, u64)> {
        let s = file.section_by_name(name)?;
        Some((s.data().ok()?.to_vec(), s.file_range()?.0))
    }

    #[test]
    fn adds_sections_and_keeps_everything_else_in_place() {
        for (endian, arch) in [
            (Endianness::Little, Architecture::X86_64),
            (Endianness::Big, Architecture::PowerPc),
        ] {
            let before = relocatable(endian, arch);
            let after = patch(
                &before,
                &[
                    NewSection {
                        name: ".BTF",
                        data: b"btf!",
                    },
                    NewSection {
                        name: ".BTF.base",
                        data: b"base",
                    },
                ],
            )
            .expect("patches");
            let (old, new) = (
                object::File::parse(&*before).unwrap(),
                object::File::parse(&*after).unwrap(),
            );
            for s in old.sections() {
                let name = s.name().unwrap();
                if name == ".shstrtab" {
                    continue;
                }
                assert_eq!(
                    section(&new, name),
                    section(&old, name),
                    "{name} moved or changed"
                );
            }
            assert_eq!(section(&new, ".BTF").map(|s| s.0), Some(b"btf!".to_vec()));
            assert_eq!(
                section(&new, ".BTF.base").map(|s| s.0),
                Some(b"base".to_vec())
            );
            let symbols: Vec<_> = new
                .symbols()
                .map(|s| (s.name().unwrap().to_owned(), s.section_index()))
                .collect();
            let old_symbols: Vec<_> = old
                .symbols()
                .map(|s| (s.name().unwrap().to_owned(), s.section_index()))
                .collect();
            assert_eq!(symbols, old_symbols);
        }
    }

    #[test]
    fn replacing_is_idempotent_and_does_not_grow() {
        let original = relocatable(Endianness::Little, Architecture::X86_64);
        let once = patch(
            &original,
            &[NewSection {
                name: ".BTF",
                data: b"0123456789",
            }],
        )
        .unwrap();
        let twice = patch(
            &once,
            &[NewSection {
                name: ".BTF",
                data: b"0123456789",
            }],
        )
        .unwrap();
        assert_eq!(once, twice);
        let smaller = patch(
            &once,
            &[NewSection {
                name: ".BTF",
                data: b"01",
            }],
        )
        .unwrap();
        let file = object::File::parse(&*smaller).unwrap();
        assert_eq!(section(&file, ".BTF").map(|s| s.0), Some(b"01".to_vec()));
        assert_eq!(
            file.sections().filter(|s| s.name() == Ok(".BTF")).count(),
            1
        );
        assert!(smaller.len() <= once.len());
    }

    #[test]
    fn a_replaced_section_in_the_middle_becomes_a_zeroed_hole() {
        // .BTF first, then another section added after it: replacing .BTF
        // must not move the later section.
        let original = relocatable(Endianness::Little, Architecture::X86_64);
        let with_btf = patch(
            &original,
            &[NewSection {
                name: ".BTF",
                data: b"OLDBTFOLDBTF",
            }],
        )
        .unwrap();
        let with_more = patch(
            &with_btf,
            &[NewSection {
                name: ".later",
                data: b"later",
            }],
        )
        .unwrap();
        let replaced = patch(
            &with_more,
            &[NewSection {
                name: ".BTF",
                data: b"new",
            }],
        )
        .unwrap();
        let (a, b) = (
            object::File::parse(&*with_more).unwrap(),
            object::File::parse(&*replaced).unwrap(),
        );
        assert_eq!(section(&b, ".later"), section(&a, ".later"));
        assert_eq!(section(&b, ".BTF").map(|s| s.0), Some(b"new".to_vec()));
        assert!(
            !replaced.windows(6).any(|w| w == b"OLDBTF"),
            "stale .BTF bytes remain"
        );
    }

    #[test]
    fn refuses_alloc_and_garbage() {
        assert!(patch(b"not an elf", &[]).is_err());
        let mut obj = WriteObject::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let id = obj.add_section(Vec::new(), b".BTF".to_vec(), SectionKind::ReadOnlyData);
        obj.append_section_data(id, b"x", 1);
        let elf = obj.write().unwrap();
        let err = patch(
            &elf,
            &[NewSection {
                name: ".BTF",
                data: b"y",
            }],
        )
        .unwrap_err();
        assert!(err.to_string().contains("ALLOC"), "{err}");
        assert!(check_patchable(&elf, &[".BTF"]).is_err());
    }

    /// An empty ALLOC `.BTF` (lld's placeholder) is filled: its header
    /// keeps type, flags, address and alignment; the data goes after the
    /// kept bytes; every other section stays where it was.
    #[test]
    fn fills_an_empty_alloc_placeholder() {
        let mut obj = WriteObject::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let text = obj.section_id(StandardSection::Text);
        obj.append_section_data(text, &[0xc3; 8], 16);
        obj.add_section(Vec::new(), b".BTF".to_vec(), SectionKind::ReadOnlyData);
        let elf = obj.write().unwrap();
        check_patchable(&elf, &[".BTF"]).expect("an empty ALLOC .BTF may be filled");
        let data = b"btf bytes";
        let out = patch(&elf, &[NewSection { name: ".BTF", data }]).expect("patches");

        let (old, new) = (
            SectionTable::read(&elf).unwrap(),
            SectionTable::read(&out).unwrap(),
        );
        assert_eq!(old.headers.len(), new.headers.len(), "no section added");
        for (before, after) in old.headers.iter().zip(&new.headers) {
            match old.name_of(before) {
                b".BTF" => {
                    assert_eq!(after.flags, before.flags);
                    assert!(after.flags & SHF_ALLOC != 0);
                    assert_eq!(
                        (after.kind, after.addr, after.addralign),
                        (before.kind, before.addr, before.addralign)
                    );
                    assert_eq!(after.size, data.len() as u64);
                    assert_eq!(after.offset % BTF_ALIGN, 0);
                    let at = after.offset as usize;
                    assert_eq!(&out[at..at + data.len()], data);
                }
                b".shstrtab" => {}
                _ => {
                    assert_eq!(before, after);
                    if let Some(range) = before.file_range() {
                        let range = range.start as usize..range.end as usize;
                        assert_eq!(elf[range.clone()], out[range]);
                    }
                }
            }
        }
        // Filled, it is part of the image: refused from now on.
        assert!(check_patchable(&out, &[".BTF"]).is_err());
        assert!(patch(&out, &[NewSection { name: ".BTF", data }]).is_err());
    }
}
