/*!
Adding or replacing non-ALLOC sections of an ELF file without rewriting it.

Why not a general ELF rewriter (object's `build::elf::Builder`): it must
understand every section type to re-lay the file out, and refuses the ones
it does not (clang's `SHT_LLVM_ADDRSIG`, vendor sections), although a
`.BTF` patch never needs to touch them. Here every byte of the original
file stays where it is; the new section contents, a grown copy of the
section-name table and a new section header table are appended, and the
ELF header is pointed at the new table. Program headers and everything
they map are untouched, so an executable still runs.

What is left behind as unreferenced bytes: the old section header table
(dropped instead when it ends the file, as linkers put it), a replaced
section's old contents, and the old section-name table when names were
added.
*/

use anyhow::{bail, Result};

/// `SHT_PROGBITS`: what pahole gives `.BTF`.
const SHT_PROGBITS: u32 = 1;
/// `SHT_RELA` and `SHT_REL`: relocations for the section `sh_info` names.
const SHT_RELA: u64 = 4;
const SHT_REL: u64 = 9;
/// `SHF_ALLOC`: the section is part of the loaded image.
const SHF_ALLOC: u64 = 0x2;
/// `e_shnum` at or above this lives in section 0's `sh_size`.
const SHN_LORESERVE: u64 = 0xff00;
/// `e_shstrndx` escape: the index lives in section 0's `sh_link`.
const SHN_XINDEX: u64 = 0xffff;
/// Alignment of the appended section contents (BTF is read as u32 words).
const SECTION_ALIGN: usize = 4;

/// Byte offsets of the fields this module reads or writes, which differ
/// between ELFCLASS32 and ELFCLASS64.
#[derive(Clone, Copy, Debug)]
struct Layout {
    is_64: bool,
    big_endian: bool,
}

/// A field of a header: its offset and width in bytes.
type Field = (usize, usize);

impl Layout {
    fn e_shoff(self) -> Field {
        if self.is_64 {
            (0x28, 8)
        } else {
            (0x20, 4)
        }
    }
    fn e_shentsize(self) -> Field {
        if self.is_64 {
            (0x3a, 2)
        } else {
            (0x2e, 2)
        }
    }
    fn e_shnum(self) -> Field {
        if self.is_64 {
            (0x3c, 2)
        } else {
            (0x30, 2)
        }
    }
    fn e_shstrndx(self) -> Field {
        if self.is_64 {
            (0x3e, 2)
        } else {
            (0x32, 2)
        }
    }
    fn shdr_size(self) -> usize {
        if self.is_64 {
            64
        } else {
            40
        }
    }
    fn sh_name(self) -> Field {
        (0, 4)
    }
    fn sh_type(self) -> Field {
        (4, 4)
    }
    fn sh_flags(self) -> Field {
        if self.is_64 {
            (8, 8)
        } else {
            (8, 4)
        }
    }
    fn sh_addr(self) -> Field {
        if self.is_64 {
            (16, 8)
        } else {
            (12, 4)
        }
    }
    fn sh_offset(self) -> Field {
        if self.is_64 {
            (24, 8)
        } else {
            (16, 4)
        }
    }
    fn sh_size(self) -> Field {
        if self.is_64 {
            (32, 8)
        } else {
            (20, 4)
        }
    }
    fn sh_link(self) -> Field {
        if self.is_64 {
            (40, 4)
        } else {
            (24, 4)
        }
    }
    fn sh_info(self) -> Field {
        if self.is_64 {
            (44, 4)
        } else {
            (28, 4)
        }
    }
    fn sh_addralign(self) -> Field {
        if self.is_64 {
            (48, 8)
        } else {
            (32, 4)
        }
    }
    fn sh_entsize(self) -> Field {
        if self.is_64 {
            (56, 8)
        } else {
            (36, 4)
        }
    }

    fn read(self, bytes: &[u8], at: usize, (offset, width): Field) -> Option<u64> {
        let field =
            bytes.get(at.checked_add(offset)?..at.checked_add(offset)?.checked_add(width)?)?;
        let mut value = 0u64;
        if self.big_endian {
            for byte in field {
                value = (value << 8) | u64::from(*byte);
            }
        } else {
            for byte in field.iter().rev() {
                value = (value << 8) | u64::from(*byte);
            }
        }
        Some(value)
    }

    /// Writes `value` into a field of `bytes`, which the caller has sized.
    fn write(self, bytes: &mut [u8], at: usize, (offset, width): Field, value: u64) -> Result<()> {
        let too_large = width < 8 && value >> (width * 8) != 0;
        let place = at
            .checked_add(offset)
            .and_then(|start| bytes.get_mut(start..start.checked_add(width)?));
        let Some(place) = place.filter(|_| !too_large) else {
            bail!(
                "ELF field at {:#x} cannot hold {value:#x}",
                at.saturating_add(offset)
            );
        };
        for (i, byte) in place.iter_mut().enumerate() {
            let shift = if self.big_endian {
                (width - 1 - i) * 8
            } else {
                i * 8
            };
            *byte = (value >> shift) as u8;
        }
        Ok(())
    }
}

/// Returns `elf` with each `(name, contents)` of `wanted` as a non-ALLOC
/// PROGBITS section: an existing section of that name gets the new
/// contents, otherwise a section is added. An existing ALLOC section of
/// that name is refused (it is part of the loaded image).
pub fn set_sections(elf: &[u8], wanted: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let layout = identify(elf)?;
    let header_field = |field| {
        layout
            .read(elf, 0, field)
            .ok_or_else(|| anyhow::anyhow!("truncated ELF header"))
    };
    let shoff = usize::try_from(header_field(layout.e_shoff())?)?;
    let shentsize = usize::try_from(header_field(layout.e_shentsize())?)?;
    if shoff == 0 {
        bail!("no section header table");
    }
    if shentsize != layout.shdr_size() {
        bail!("unexpected section header size {shentsize}");
    }
    let mut count = header_field(layout.e_shnum())?;
    let mut shstrndx = header_field(layout.e_shstrndx())?;
    // Extended numbering: the real values are in section 0.
    if count == 0 {
        count = layout
            .read(elf, shoff, layout.sh_size())
            .ok_or_else(|| anyhow::anyhow!("truncated section 0"))?;
    }
    if shstrndx == SHN_XINDEX {
        shstrndx = layout
            .read(elf, shoff, layout.sh_link())
            .ok_or_else(|| anyhow::anyhow!("truncated section 0"))?;
    }
    let count = usize::try_from(count)?;
    let table_len = count
        .checked_mul(shentsize)
        .filter(|len| shoff.checked_add(*len).is_some_and(|end| end <= elf.len()))
        .ok_or_else(|| anyhow::anyhow!("section header table lies outside the file"))?;
    let mut headers = elf
        .get(shoff..shoff + table_len)
        .ok_or_else(|| anyhow::anyhow!("section header table lies outside the file"))?
        .to_vec();
    let shstrndx = usize::try_from(shstrndx)?;
    if shstrndx == 0 || shstrndx >= count {
        bail!("no section name table");
    }
    let header_at = |index: usize| index * shentsize;
    let names_offset = usize::try_from(
        layout
            .read(&headers, header_at(shstrndx), layout.sh_offset())
            .unwrap_or(0),
    )?;
    let names_size = usize::try_from(
        layout
            .read(&headers, header_at(shstrndx), layout.sh_size())
            .unwrap_or(0),
    )?;
    let names = names_offset
        .checked_add(names_size)
        .and_then(|end| elf.get(names_offset..end))
        .ok_or_else(|| anyhow::anyhow!("section name table lies outside the file"))?;
    let mut new_names = names.to_vec();

    // The old table is dropped when nothing follows it; everything else
    // stays byte for byte.
    let keep = if shoff + table_len == elf.len() {
        shoff
    } else {
        elf.len()
    };
    let mut out = elf.get(..keep).unwrap_or(elf).to_vec();
    for (name, contents) in wanted {
        let existing = (1..count).find(|&index| {
            let name_offset = layout
                .read(&headers, header_at(index), layout.sh_name())
                .unwrap_or(u64::MAX);
            usize::try_from(name_offset)
                .ok()
                .and_then(|at| c_string_at(names, at))
                == Some(name.as_bytes())
        });
        let at = match existing {
            Some(index) => {
                let flags = layout
                    .read(&headers, header_at(index), layout.sh_flags())
                    .unwrap_or(0);
                if flags & SHF_ALLOC != 0 {
                    bail!(
                        "its {name} section is ALLOC (part of the loaded image); refusing to rewrite it in place, use --btf_encode_detached"
                    );
                }
                // clang's BPF objects relocate their own .BTF; those
                // relocations would then be applied to the new contents.
                let relocated = (1..count).any(|other| {
                    let kind = layout.read(&headers, header_at(other), layout.sh_type());
                    let target = layout.read(&headers, header_at(other), layout.sh_info());
                    matches!(kind, Some(SHT_REL | SHT_RELA)) && target == Some(index as u64)
                });
                if relocated {
                    bail!("its {name} section has relocations; refusing to replace it in place, use --btf_encode_detached");
                }
                header_at(index)
            }
            None => {
                let at = headers.len();
                headers.resize(at + shentsize, 0);
                let name_offset = new_names.len() as u64;
                new_names.extend_from_slice(name.as_bytes());
                new_names.push(0);
                layout.write(&mut headers, at, layout.sh_name(), name_offset)?;
                at
            }
        };
        pad_to(&mut out, SECTION_ALIGN);
        let offset = out.len() as u64;
        out.extend_from_slice(contents);
        layout.write(&mut headers, at, layout.sh_type(), u64::from(SHT_PROGBITS))?;
        layout.write(&mut headers, at, layout.sh_flags(), 0)?;
        layout.write(&mut headers, at, layout.sh_addr(), 0)?;
        layout.write(&mut headers, at, layout.sh_offset(), offset)?;
        layout.write(&mut headers, at, layout.sh_size(), contents.len() as u64)?;
        layout.write(
            &mut headers,
            at,
            layout.sh_addralign(),
            SECTION_ALIGN as u64,
        )?;
        layout.write(&mut headers, at, layout.sh_entsize(), 0)?;
    }
    if new_names.len() != names.len() {
        let offset = out.len() as u64;
        out.extend_from_slice(&new_names);
        layout.write(
            &mut headers,
            header_at(shstrndx),
            layout.sh_offset(),
            offset,
        )?;
        layout.write(
            &mut headers,
            header_at(shstrndx),
            layout.sh_size(),
            new_names.len() as u64,
        )?;
    }

    let new_count = (headers.len() / shentsize) as u64;
    if new_count >= SHN_LORESERVE {
        layout.write(&mut headers, 0, layout.sh_size(), new_count)?;
        layout.write(&mut out, 0, layout.e_shnum(), 0)?;
    } else {
        // Section 0's sh_size carries the count only in extended numbering.
        layout.write(&mut headers, 0, layout.sh_size(), 0)?;
        layout.write(&mut out, 0, layout.e_shnum(), new_count)?;
    }
    pad_to(&mut out, if layout.is_64 { 8 } else { 4 });
    let table_offset = out.len() as u64;
    out.extend_from_slice(&headers);
    layout.write(&mut out, 0, layout.e_shoff(), table_offset)?;
    Ok(out)
}

/// Class and byte order from `e_ident`, after checking the magic.
fn identify(elf: &[u8]) -> Result<Layout> {
    let Some(ident) = elf.get(..16) else {
        bail!("not an ELF file (too short)");
    };
    if ident[..4] != *b"\x7fELF" {
        bail!("not an ELF file");
    }
    let is_64 = match ident[4] {
        1 => false,
        2 => true,
        other => bail!("unknown ELF class {other}"),
    };
    let big_endian = match ident[5] {
        1 => false,
        2 => true,
        other => bail!("unknown ELF data encoding {other}"),
    };
    Ok(Layout { is_64, big_endian })
}

/// The NUL-terminated string at `at` in a string table, without the NUL.
fn c_string_at(table: &[u8], at: usize) -> Option<&[u8]> {
    let rest = table.get(at..)?;
    let end = rest.iter().position(|&byte| byte == 0)?;
    rest.get(..end)
}

fn pad_to(bytes: &mut Vec<u8>, align: usize) {
    let padded = bytes.len().div_ceil(align) * align;
    bytes.resize(padded, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Section names of `elf` with (type, flags, offset, size), read back
    /// with the object crate, which nobody here wrote.
    fn sections(elf: &[u8]) -> Vec<(String, Vec<u8>, u64)> {
        use object::{Object, ObjectSection};
        let file = object::File::parse(elf).expect("patched ELF parses");
        file.sections()
            .map(|s| {
                let flags = match s.flags() {
                    object::SectionFlags::Elf { sh_flags, .. } => sh_flags.0,
                    _ => 0,
                };
                (
                    s.name().unwrap_or("?").to_string(),
                    s.data().unwrap_or(&[]).to_vec(),
                    flags,
                )
            })
            .collect()
    }

    fn fixture(path: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(path);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn adds_a_section_and_keeps_every_other_one() {
        // clang's object has SHT_LLVM_ADDRSIG, which a rewriter refused.
        let original = fixture("obj/multi-cu/clang.o");
        let patched = set_sections(&original, &[(".BTF", b"\x9f\xeb\x01\x00")]).expect("patches");
        let before = sections(&original);
        let after = sections(&patched);
        assert_eq!(after.len(), before.len() + 1);
        for (old, new) in before.iter().zip(&after) {
            assert_eq!(
                (&old.0, old.2),
                (&new.0, new.2),
                "name and flags of {}",
                old.0
            );
            if old.0 == ".shstrtab" {
                // The names table only grows: old names keep their offsets.
                assert!(new.1.starts_with(&old.1), ".shstrtab was rewritten");
            } else {
                assert!(old.1 == new.1, "contents of {} changed", old.0);
            }
        }
        let added = after.last().expect("one more section");
        assert_eq!(
            (added.0.as_str(), added.1.as_slice(), added.2),
            (".BTF", &b"\x9f\xeb\x01\x00"[..], 0)
        );
    }

    #[test]
    fn replaces_an_existing_section_in_place_of_adding() {
        let original = fixture("obj/gcc-dwarf5/funcs.o");
        let once = set_sections(&original, &[(".BTF", b"first")]).expect("patches");
        let twice = set_sections(&once, &[(".BTF", b"second!")]).expect("patches again");
        let after = sections(&twice);
        let btf: Vec<_> = after.iter().filter(|s| s.0 == ".BTF").collect();
        assert_eq!(btf.len(), 1);
        assert_eq!(btf[0].1, b"second!");
        assert_eq!(after.len(), sections(&original).len() + 1);
    }

    #[test]
    fn big_endian_objects_are_patched_in_their_byte_order() {
        let original = fixture("obj/bpf/structs-bpfeb.o");
        let patched = set_sections(&original, &[(".BTF.extra", b"x")]).expect("patches");
        let after = sections(&patched);
        assert!(after.iter().any(|s| s.0 == ".BTF.extra" && s.1 == b"x"));
        assert_eq!(after.len(), sections(&original).len() + 1);
    }

    #[test]
    fn alloc_sections_and_garbage_are_refused() {
        let original = fixture("obj/exec/prog-gcc");
        assert!(set_sections(&original, &[(".text", b"no")]).is_err());
        assert!(set_sections(b"not an elf file at all", &[(".BTF", b"")]).is_err());
        assert!(set_sections(&original[..70], &[(".BTF", b"")]).is_err());
    }
}
