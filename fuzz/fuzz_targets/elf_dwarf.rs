#![no_main]
//! See btfenc_fuzz::elf_dwarf.

libfuzzer_sys::fuzz_target!(|data: &[u8]| btfenc_fuzz::elf_dwarf(data));
