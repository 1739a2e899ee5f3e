//! Finding BTF inside ELF files: `.BTF` (and `.BTF.base` for modules with
//! a distilled base), via the `object` crate.

use object::{Object, ObjectSection};

use super::blob::{parse, parse_with, Parsed};
use super::names::NameArena;
use crate::error::{ErrorKind, FormatError};

/// The ELF magic; anything else is taken to be a raw BTF blob.
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// The bytes of section `name` of an ELF file, `None` if there is no such
/// section. A compressed section is an error: it cannot be borrowed.
pub fn elf_section<'a>(elf: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, FormatError> {
    let file = object::File::parse(elf).map_err(|e| ErrorKind::Elf(e.to_string()))?;
    let Some(section) = file.section_by_name(name) else {
        return Ok(None);
    };
    let compressed = section
        .compressed_data()
        .map_err(|e| ErrorKind::Elf(e.to_string()))?;
    if compressed.format != object::CompressionFormat::None {
        return Err(ErrorKind::CompressedSection(name.to_owned()).into());
    }
    section
        .data()
        .map(Some)
        .map_err(|e| ErrorKind::Elf(e.to_string()).into())
}

/// Parses the BTF in `bytes`, either a raw blob or an ELF file's `.BTF`
/// section (then an ELF without `.BTF` is [`ErrorKind::NoBtfSection`]).
pub fn parse_file<'a>(
    bytes: &'a [u8],
    base: Option<&Parsed<'a>>,
) -> Result<Parsed<'a>, FormatError> {
    if bytes.starts_with(ELF_MAGIC) {
        let section = elf_section(bytes, ".BTF")?.ok_or(ErrorKind::NoBtfSection)?;
        parse(section, base)
    } else {
        parse(bytes, base)
    }
}

/// [`parse_file`] with names that are not UTF-8 read into `arena` (see
/// [`parse_with`]).
pub fn parse_file_with<'a>(
    bytes: &'a [u8],
    base: Option<&Parsed<'a>>,
    arena: &'a NameArena,
) -> Result<Parsed<'a>, FormatError> {
    if bytes.starts_with(ELF_MAGIC) {
        let section = elf_section(bytes, ".BTF")?.ok_or(ErrorKind::NoBtfSection)?;
        parse_with(section, base, arena)
    } else {
        parse_with(bytes, base, arena)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::{Object as WriteObject, StandardSection};
    use object::{Architecture, BinaryFormat, Endianness, SectionKind};

    fn elf_with(name: &str, data: &[u8]) -> Vec<u8> {
        let mut obj = WriteObject::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        let _text = obj.section_id(StandardSection::Text);
        let id = obj.add_section(Vec::new(), name.as_bytes().to_vec(), SectionKind::Metadata);
        obj.append_section_data(id, data, 1);
        obj.write().unwrap()
    }

    #[test]
    fn finds_section_and_reports_absence() {
        let elf = elf_with(".BTF", b"hello");
        assert_eq!(
            elf_section(&elf, ".BTF").unwrap(),
            Some(b"hello".as_slice())
        );
        assert_eq!(elf_section(&elf, ".BTF.base").unwrap(), None);
    }

    #[test]
    fn elf_without_btf_is_an_error_and_garbage_elf_too() {
        let elf = elf_with(".other", b"x");
        assert_eq!(
            parse_file(&elf, None).unwrap_err().kind,
            ErrorKind::NoBtfSection
        );
        let garbage = b"\x7fELFgarbage";
        assert!(matches!(
            parse_file(garbage, None).unwrap_err().kind,
            ErrorKind::Elf(_)
        ));
    }
}
