//! Applying ELF relocations to a copy of a debug section of a relocatable
//! file (`.o`, `.ko`).
//!
//! Why patch a copy instead of relocating while reading (gimli's
//! `RelocateReader`): the walker then keeps using plain `EndianSlice`
//! readers, the same code path as for linked files, and each relocation is
//! applied once instead of on every read of the value.
//!
//! Only what compilers put in debug sections is supported: absolute
//! (`S + A`) relocations of 32 or 64 bits, and the TLS offset relocations
//! of thread-local variables' locations. Anything else is an error, never a
//! silently wrong value.

use object::{Object, ObjectSection, ObjectSymbol, RelocationEncoding, RelocationFlags};
use object::{RelocationKind, RelocationTarget};

/// Applies every relocation of `section` to `data` (the section's
/// uncompressed contents). Errors are messages; the caller adds the file
/// and section.
pub(crate) fn apply_relocations<'data>(
    file: &object::File<'data>,
    section: &object::Section<'data, '_>,
    data: &mut [u8],
    big_endian: bool,
) -> Result<(), String> {
    let machine = elf_machine(file);
    for (offset, relocation) in section.relocations() {
        let action = classify(&relocation, machine);
        let width = match action {
            Action::Skip => continue,
            Action::Store(width) | Action::Add(width) | Action::Sub(width) => width,
            Action::Set6 | Action::Sub6 => 1,
            Action::Reject => {
                let kind = match relocation.flags() {
                    RelocationFlags::Elf { r_type } => format!("type {r_type}"),
                    other => format!("{other:?}"),
                };
                return Err(format!(
                    "ELF relocation {kind} at offset {offset:#x} (e_machine {machine}) is not \
                     supported in a debug section"
                ));
            }
        };
        let symbol_value = match relocation.target() {
            RelocationTarget::Symbol(index) => file
                .symbol_by_index(index)
                .map_err(|_| format!("relocation at {offset:#x} names bad symbol {}", index.0))?
                .address(),
            // Section-relative values in a relocatable file start at 0.
            RelocationTarget::Section(_) | RelocationTarget::Absolute => 0,
            _ => return Err(format!("relocation at {offset:#x} has an unknown target")),
        };
        let start = usize::try_from(offset).map_err(|_| format!("offset {offset:#x} too large"))?;
        let place = start
            .checked_add(width)
            .and_then(|end| data.get_mut(start..end))
            .ok_or_else(|| format!("relocation at {offset:#x} lies outside the section"))?;
        let current = read_place(place, big_endian);
        let addend = if relocation.has_implicit_addend() {
            current as i64
        } else {
            relocation.addend()
        };
        let value = symbol_value.wrapping_add(addend as u64);
        let new = match action {
            Action::Add(_) => current.wrapping_add(value),
            Action::Sub(_) => current.wrapping_sub(value),
            Action::Set6 => (current & 0xc0) | (value & 0x3f),
            Action::Sub6 => (current & 0xc0) | (current.wrapping_sub(value) & 0x3f),
            _ => value,
        };
        write_place(place, new, big_endian);
    }
    Ok(())
}

/// What to do with one relocation.
enum Action {
    Skip,
    /// Store `S + A` into this many bytes.
    Store(usize),
    /// Add `S + A` to the value in this many bytes (RISC-V label
    /// differences: an ADD and a SUB at the same place).
    Add(usize),
    /// Subtract `S + A` from the value in this many bytes.
    Sub(usize),
    /// Set, or subtract from, the low 6 bits of one byte (RISC-V
    /// `DW_CFA_advance_loc`-style fields).
    Set6,
    Sub6,
    Reject,
}

fn classify(relocation: &object::Relocation, machine: u16) -> Action {
    if let RelocationFlags::Elf { r_type } = relocation.flags() {
        // Relocation types by object's names where it has them: the ABI's
        // numbers are easy to get wrong by one (AArch64's TLS_DTPMOD is 1028,
        // TLS_DTPREL 1029).
        //
        // Thread-local variables' DW_AT_location holds the offset in the TLS
        // block, which is the symbol value in a relocatable file; object does
        // not classify these as absolute.
        use object::elf::{RelocationType, R_AARCH64_TLS_DTPREL};
        use object::elf::{R_X86_64_DTPOFF32, R_X86_64_DTPOFF64};
        const EM_X86_64: u16 = object::elf::EM_X86_64.0;
        const EM_AARCH64: u16 = object::elf::EM_AARCH64.0;
        // BPF objects (clang -target bpf*): object does not classify BPF
        // relocations. Debug sections use the absolute S + A ones
        // (Documentation/bpf/llvm_reloc.rst); NODYLD32 is the same
        // computation, meant for .BTF/.BTF.ext.
        const R_BPF_64_ABS64: RelocationType = RelocationType(2);
        const R_BPF_64_ABS32: RelocationType = RelocationType(3);
        const R_BPF_64_NODYLD32: RelocationType = RelocationType(4);
        const EM_BPF: u16 = object::elf::EM_BPF.0;
        const EM_RISCV: u16 = object::elf::EM_RISCV.0;
        if machine == EM_RISCV {
            // Linker relaxation can change code sizes, so clang emits
            // address differences as ADD/SUB pairs in debug sections.
            use object::elf::{R_RISCV_ADD16, R_RISCV_ADD32, R_RISCV_ADD64, R_RISCV_ADD8};
            use object::elf::{R_RISCV_SET16, R_RISCV_SET32, R_RISCV_SET6, R_RISCV_SET8};
            use object::elf::{
                R_RISCV_SUB16, R_RISCV_SUB32, R_RISCV_SUB6, R_RISCV_SUB64, R_RISCV_SUB8,
            };
            match r_type {
                R_RISCV_ADD8 => return Action::Add(1),
                R_RISCV_ADD16 => return Action::Add(2),
                R_RISCV_ADD32 => return Action::Add(4),
                R_RISCV_ADD64 => return Action::Add(8),
                R_RISCV_SUB8 => return Action::Sub(1),
                R_RISCV_SUB16 => return Action::Sub(2),
                R_RISCV_SUB32 => return Action::Sub(4),
                R_RISCV_SUB64 => return Action::Sub(8),
                R_RISCV_SUB6 => return Action::Sub6,
                R_RISCV_SET6 => return Action::Set6,
                R_RISCV_SET8 => return Action::Store(1),
                R_RISCV_SET16 => return Action::Store(2),
                R_RISCV_SET32 => return Action::Store(4),
                _ => {}
            }
        }
        match (machine, r_type) {
            (EM_X86_64, R_X86_64_DTPOFF64) => return Action::Store(8),
            (EM_X86_64, R_X86_64_DTPOFF32) => return Action::Store(4),
            (EM_AARCH64, R_AARCH64_TLS_DTPREL) => return Action::Store(8),
            (EM_BPF, R_BPF_64_ABS64) => return Action::Store(8),
            (EM_BPF, R_BPF_64_ABS32 | R_BPF_64_NODYLD32) => return Action::Store(4),
            _ => {}
        }
    }
    match relocation.kind() {
        RelocationKind::None => Action::Skip,
        RelocationKind::Absolute => {
            let encoding_ok = matches!(
                relocation.encoding(),
                RelocationEncoding::Generic | RelocationEncoding::X86Signed
            );
            match relocation.size() {
                32 if encoding_ok => Action::Store(4),
                64 if encoding_ok => Action::Store(8),
                _ => Action::Reject,
            }
        }
        _ => Action::Reject,
    }
}

fn elf_machine(file: &object::File<'_>) -> u16 {
    use object::read::elf::FileHeader;
    match file {
        object::File::Elf32(elf) => elf.elf_header().e_machine(elf.endian()).0,
        object::File::Elf64(elf) => elf.elf_header().e_machine(elf.endian()).0,
        _ => 0,
    }
}

fn read_place(place: &[u8], big_endian: bool) -> u64 {
    let mut bytes = [0u8; 8];
    let n = place.len().min(8);
    if big_endian {
        bytes[8 - n..].copy_from_slice(&place[..n]);
        // Sign does not matter: only the low `n` bytes are written back.
        u64::from_be_bytes(bytes)
    } else {
        bytes[..n].copy_from_slice(&place[..n]);
        u64::from_le_bytes(bytes)
    }
}

fn write_place(place: &mut [u8], value: u64, big_endian: bool) {
    let n = place.len().min(8);
    if big_endian {
        let bytes = value.to_be_bytes();
        place[..n].copy_from_slice(&bytes[8 - n..]);
    } else {
        let bytes = value.to_le_bytes();
        place[..n].copy_from_slice(&bytes[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_round_trips_in_both_byte_orders() {
        let mut le = [0u8; 4];
        write_place(&mut le, 0x1122_3344, false);
        assert_eq!(le, [0x44, 0x33, 0x22, 0x11]);
        assert_eq!(read_place(&le, false), 0x1122_3344);
        let mut be = [0u8; 8];
        write_place(&mut be, 0x0102_0304_0506_0708, true);
        assert_eq!(be, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(read_place(&be, true), 0x0102_0304_0506_0708);
    }

    /// A relocatable AArch64 object whose `.debug_info` holds one 8-byte
    /// place relocated with `r_type` against a TLS symbol at 0x10, addend 4.
    fn aarch64_object_with_tls_relocation(r_type: u32) -> Vec<u8> {
        use object::write::{Object as Writer, Relocation, Symbol, SymbolSection};
        use object::{Architecture, BinaryFormat, Endianness, SectionKind, SymbolFlags};
        use object::{SymbolKind, SymbolScope};
        let mut obj = Writer::new(BinaryFormat::Elf, Architecture::Aarch64, Endianness::Little);
        let tbss = obj.add_section(Vec::new(), b".tbss".to_vec(), SectionKind::UninitializedTls);
        obj.append_section_bss(tbss, 0x20, 8);
        let tls = obj.add_symbol(Symbol {
            name: b"tls_counter".to_vec(),
            value: 0x10,
            size: 4,
            kind: SymbolKind::Tls,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Section(tbss),
            flags: SymbolFlags::None,
        });
        let info = obj.add_section(Vec::new(), b".debug_info".to_vec(), SectionKind::Debug);
        obj.append_section_data(info, &[0; 8], 1);
        let relocation = Relocation {
            offset: 0,
            symbol: tls,
            addend: 4,
            flags: RelocationFlags::Elf {
                r_type: object::elf::RelocationType(r_type),
            },
        };
        obj.add_relocation(info, relocation)
            .unwrap_or_else(|err| panic!("{err}"));
        obj.write().unwrap_or_else(|err| panic!("{err}"))
    }

    fn relocate_debug_info(bytes: &[u8]) -> Result<u64, String> {
        let file = object::File::parse(bytes).map_err(|err| err.to_string())?;
        let section = file
            .section_by_name(".debug_info")
            .ok_or("no .debug_info")?;
        let mut data = [0u8; 8];
        apply_relocations(&file, &section, &mut data, false)?;
        Ok(read_place(&data, false))
    }

    // glibc's elf.h: R_AARCH64_TLS_DTPMOD 1028 (module number),
    // R_AARCH64_TLS_DTPREL 1029 (module-relative offset): only the offset
    // is the value a DW_AT_location wants.
    #[test]
    fn aarch64_tls_offset_is_symbol_plus_addend() {
        let object = aarch64_object_with_tls_relocation(1029);
        assert_eq!(relocate_debug_info(&object), Ok(0x14));
    }

    #[test]
    fn aarch64_tls_module_number_is_refused() {
        let object = aarch64_object_with_tls_relocation(1028);
        assert!(relocate_debug_info(&object).is_err());
    }
}
