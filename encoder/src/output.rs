/*!
Getting encoded BTF onto disk: detached files, and `.BTF`/`.BTF.base`
patched into an ELF image.

Why everything goes through [`replace_atomically`]: a kernel build that is
interrupted (or an encoder that fails half-way) must never leave a vmlinux
or `.ko` with a truncated section table. The new file is fully written next
to the old one, given the old one's mode, and renamed over it; on any error
the temporary file is removed and the original is untouched.
*/

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::elf_patch::{self, NewSection};

/// The sections that make up encoded BTF: `.BTF`, and `.BTF.base` when the
/// base was distilled.
#[derive(Debug)]
pub struct Sections<'a> {
    /// Contents of `.BTF`.
    pub btf: &'a [u8],
    /// Contents of `.BTF.base`, for split BTF with a distilled base.
    pub base: Option<&'a [u8]>,
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a
/// rename, so `path` is either the old file or the complete new one.
pub fn replace_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .with_context(|| format!("{}: not a file path", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.btfenc-{}.tmp",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = write_then_rename(&tmp, path, bytes);
    if result.is_err() {
        // Best effort: the error that matters is the one being returned.
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_then_rename(tmp: &Path, path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = fs::File::create(tmp).with_context(|| {
        format!(
            "{}: cannot create temporary file {}",
            path.display(),
            tmp.display()
        )
    })?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("{}: cannot write {}", path.display(), tmp.display()))?;
    if let Ok(meta) = fs::metadata(path) {
        fs::set_permissions(tmp, meta.permissions())
            .with_context(|| format!("{}: cannot copy file mode", path.display()))?;
    }
    fs::rename(tmp, path).with_context(|| {
        format!(
            "{}: cannot rename {} over it",
            path.display(),
            tmp.display()
        )
    })?;
    Ok(())
}

/// Writes detached output: `OUT` holds `.BTF`, and `OUT.base` holds the
/// distilled `.BTF.base` when there is one.
pub fn write_detached(out: &Path, sections: &Sections<'_>) -> Result<()> {
    if let Some(base) = sections.base {
        replace_atomically(&detached_base_path(out), base)?;
    }
    replace_atomically(out, sections.btf)
}

/// Where the distilled base of detached output `out` goes.
pub fn detached_base_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".base");
    PathBuf::from(name)
}

/// Returns `elf_bytes` with `.BTF` (and `.BTF.base`) added or replaced as
/// non-ALLOC PROGBITS sections, as pahole writes them. Every other section
/// keeps its bytes and its offset (see [`crate::elf_patch`]).
///
/// An existing ALLOC `.BTF` belongs to a fully linked image whose loader
/// maps it (Debian's debug vmlinux): rewriting it would move data the
/// program headers point at, so it is refused. An empty one is lld's
/// placeholder in a clang-built `.tmp_vmlinux.btf`: filled as pahole fills
/// it, keeping its header (see [`crate::elf_patch`]).
pub fn patch_elf(path: &Path, elf_bytes: &[u8], sections: &Sections<'_>) -> Result<Vec<u8>> {
    let mut wanted = vec![NewSection {
        name: ".BTF",
        data: sections.btf,
    }];
    if let Some(base) = sections.base {
        wanted.push(NewSection {
            name: ".BTF.base",
            data: base,
        });
    }
    // Errors (an ALLOC .BTF included) already say what is wrong; they
    // only need the file name in front.
    elf_patch::patch(elf_bytes, &wanted).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::build::elf::{Builder, SectionData};
    use object::elf;
    use object::read::elf::{ElfFile64, ProgramHeader as _, SectionHeader as _};
    use object::{Object, ObjectSection};

    /// A small linked executable: one ALLOC section in one LOAD segment, and
    /// an empty non-ALLOC section that carries an address, as ld leaves
    /// some orphan sections in vmlinux.
    fn executable_with_addressed_empty_section() -> Vec<u8> {
        const TEXT_OFFSET: u64 = 0x1000;
        const TEXT_ADDR: u64 = 0xffff_ffff_8100_0000;
        let mut builder = Builder::new(object::Endianness::Little, true);
        builder.header.e_type = elf::ET_EXEC;
        builder.header.e_machine = elf::EM_X86_64;
        builder.header.e_phoff = 0x40;
        let text = builder.sections.add();
        text.name = b".text".to_vec().into();
        text.sh_type = elf::SHT_PROGBITS;
        text.sh_flags = elf::SHF_ALLOC | elf::SHF_EXECINSTR;
        text.sh_addralign = 16;
        text.sh_offset = TEXT_OFFSET;
        text.sh_addr = TEXT_ADDR;
        text.sh_size = 32;
        text.data = SectionData::Data(vec![0xc3; 32].into());
        let text_id = text.id();
        let empty = builder.sections.add();
        empty.name = b".data_nosave".to_vec().into();
        empty.sh_type = elf::SHT_PROGBITS;
        empty.sh_flags = elf::SHF_WRITE;
        empty.sh_addralign = 1;
        empty.data = SectionData::Data(Vec::new().into());
        let shstrtab = builder.sections.add();
        shstrtab.name = b".shstrtab".to_vec().into();
        shstrtab.sh_type = elf::SHT_STRTAB;
        shstrtab.sh_addralign = 1;
        shstrtab.data = SectionData::SectionString;
        let segment = builder.segments.add();
        segment.p_type = elf::PT_LOAD;
        segment.p_flags = elf::PF_R | elf::PF_X;
        segment.p_offset = TEXT_OFFSET;
        segment.p_vaddr = TEXT_ADDR;
        segment.p_paddr = TEXT_ADDR;
        segment.p_filesz = 32;
        segment.p_memsz = 32;
        segment.p_align = 0x1000;
        segment.sections.push(text_id);
        let mut bytes = Vec::new();
        builder.write(&mut bytes).expect("test ELF writes");
        // What object's writer cannot produce but ld and the ELF spec allow:
        // an address on a non-ALLOC section, and alignment 0 ("none").
        set_section_field(&mut bytes, 2, SH_ADDR, 0xffff_ffff_8180_0000);
        set_section_field(&mut bytes, 2, SH_ADDRALIGN, 0);
        bytes
    }

    const SH_ADDR: usize = 16;
    const SH_ADDRALIGN: usize = 48;

    /// Overwrites the 8-byte field at `field` of ELF64 LE section header `index`.
    fn set_section_field(bytes: &mut [u8], index: usize, field: usize, value: u64) {
        let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().expect("8 bytes")) as usize;
        let at = shoff + index * 64 + field;
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    #[test]
    fn patching_an_executable_keeps_segments_addresses_and_contents() {
        let input = executable_with_addressed_empty_section();
        let btf = [
            0x9f, 0xeb, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
        ];
        let output = patch_elf(
            Path::new("t"),
            &input,
            &Sections {
                btf: &btf,
                base: None,
            },
        )
        .expect("patches");

        let before = ElfFile64::<object::Endianness>::parse(&*input).expect("input parses");
        let after = ElfFile64::<object::Endianness>::parse(&*output).expect("output parses");
        let endian = before.endian();
        let segments = |f: &ElfFile64<'_, object::Endianness>| -> Vec<(u64, u64, u64, u64)> {
            f.elf_program_headers()
                .iter()
                .map(|p| {
                    (
                        p.p_offset(endian),
                        p.p_vaddr(endian),
                        p.p_filesz(endian),
                        p.p_memsz(endian),
                    )
                })
                .collect()
        };
        assert_eq!(
            segments(&before),
            segments(&after),
            "program headers changed"
        );
        for old in before.sections() {
            let name = old.name().expect("name");
            let new = after.section_by_name(name).expect("section kept");
            assert_eq!(old.address(), new.address(), "{name}: address changed");
            let (o, n) = (old.elf_section_header(), new.elf_section_header());
            // The section-name table gains ".BTF"; everything else is as it was.
            if o.sh_type(endian) != elf::SHT_STRTAB {
                assert_eq!(old.data().ok(), new.data().ok(), "{name}: contents changed");
            }
            if o.sh_flags(endian).contains(elf::SHF_ALLOC) {
                assert_eq!(
                    o.sh_offset(endian),
                    n.sh_offset(endian),
                    "{name}: ALLOC section moved in the file"
                );
            }
        }
        let btf_section = after.section_by_name(".BTF").expect(".BTF added");
        assert_eq!(btf_section.data().ok(), Some(&btf[..]));
        assert!(
            !btf_section
                .elf_section_header()
                .sh_flags(endian)
                .contains(elf::SHF_ALLOC),
            ".BTF must not be ALLOC"
        );
    }
}
