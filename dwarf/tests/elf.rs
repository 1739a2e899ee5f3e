//! Opening the committed fixtures, through the public API.

use dwarf::ElfFile;

/// The committed fixture `name` (under `fixtures/obj`), opened.
fn open_fixture(name: &str) -> ElfFile {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
    ElfFile::open(fixtures.join(name)).expect("fixture opens")
}

#[test]
fn copied_sections_are_those_relocated_or_decompressed() {
    for (name, copied) in [
        ("gcc-dwarf5/kinds.o", true),
        ("exec/prog-gcc", false),
        ("compressed/prog-zlib", true),
    ] {
        let file = open_fixture(name);
        assert!(!file.has_copied_sections(), "{name}: nothing read yet");
        file.dwarf().expect("DWARF reads");
        assert_eq!(file.has_copied_sections(), copied, "{name}");
    }
}

#[test]
fn debug_str_counts_as_merged_only_in_linked_files() {
    // Every one of these has SHF_MERGE|SHF_STRINGS on .debug_str; only a
    // linker's output has its strings merged.
    for (name, merged) in [
        ("exec/prog-gcc", true),
        ("exec/prog-clang", true),
        ("compressed/prog-zlib", true),
        ("gcc-dwarf5/kinds.o", false),
        ("multi-cu/gcc-dwarf5.o", false),
    ] {
        let file = open_fixture(name);
        let dwarf = file.dwarf().expect("DWARF reads");
        match dwarf.merged_debug_str() {
            Some(strings) => {
                assert!(merged, "{name}: merged");
                // The section as read (decompressed for prog-zlib).
                let section = file
                    .section_data(".debug_str")
                    .expect("reads")
                    .expect("has .debug_str");
                assert_eq!(strings, &*section, "{name}");
            }
            None => assert!(!merged, "{name}: not merged"),
        }
    }
}
