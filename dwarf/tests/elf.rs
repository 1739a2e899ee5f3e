//! Opening the committed fixtures, through the public API.

use dwarf::ElfFile;

#[test]
fn copied_sections_are_those_relocated_or_decompressed() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
    for (name, copied) in [
        ("gcc-dwarf5/kinds.o", true),
        ("exec/prog-gcc", false),
        ("compressed/prog-zlib", true),
    ] {
        let file = ElfFile::open(fixtures.join(name)).expect("fixture opens");
        assert!(!file.has_copied_sections(), "{name}: nothing read yet");
        file.dwarf().expect("DWARF reads");
        assert_eq!(file.has_copied_sections(), copied, "{name}");
    }
}
