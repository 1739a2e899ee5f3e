//! Symbol facts of the committed fixtures, through the public API.

/// The committed fixture built from fixtures/src/kfuncs.c, whose
/// kfunc set lists kf_acquire (KF_ACQUIRE), kf_release (KF_RELEASE)
/// and kf_fast (KF_FASTCALL); kf_plain's set lacks BTF_SET8_KFUNCS and
/// kf_loose is outside any set.
#[test]
fn kfuncs_of_the_fixture_objects() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj/kfuncs");
    for name in ["gcc-dwarf5.o", "clang.o", "prog-gcc"] {
        let file = dwarf::ElfFile::open(fixtures.join(name)).expect("fixture opens");
        let facts = file.symbols().expect("symbols");
        let found: Vec<(&str, u32)> = facts
            .kfuncs
            .iter()
            .map(|kfunc| (kfunc.name, kfunc.flags))
            .collect();
        assert_eq!(
            found,
            vec![
                ("kf_acquire", 1),
                ("kf_fast", 1 << 12),
                ("kf_release", 1 << 1)
            ],
            "{name}"
        );
        // The id symbols stay among the data symbols, as before.
        assert!(facts
            .data
            .iter()
            .any(|d| d.name == "__BTF_ID__func__kf_fast__3"));
    }
}

/// Symbol names and DWARF strings are read from the string sections' own
/// maps, not from the whole file's, which the walk gives back page by
/// page: the same bytes, elsewhere in memory.
#[test]
fn names_are_borrowed_from_the_string_sections_own_maps() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj/kfuncs");
    let file = dwarf::ElfFile::open(fixtures.join("prog-gcc")).expect("fixture opens");
    let whole = file.bytes().as_ptr_range();
    let outside = |bytes: &[u8]| !whole.contains(&bytes.as_ptr());
    let facts = file.symbols().expect("symbols");
    let kf_fast = facts
        .functions
        .iter()
        .find(|f| f.name == "kf_fast")
        .expect("kf_fast has a symbol");
    assert!(outside(kf_fast.name.as_bytes()));
    assert!(facts.data.iter().all(|d| outside(d.name.as_bytes())));
    use gimli::Section as _;
    let dwarf = file.dwarf().expect("dwarf");
    let strings = dwarf.gimli.debug_str.reader().slice();
    assert!(!strings.is_empty() && outside(strings));
    // In memory, there is only the one copy.
    let bytes = std::fs::read(fixtures.join("prog-gcc")).expect("read");
    let in_memory = dwarf::ElfFile::from_bytes("prog-gcc", bytes).expect("parses");
    let whole = in_memory.bytes().as_ptr_range();
    let facts = in_memory.symbols().expect("symbols");
    assert!(facts
        .functions
        .iter()
        .all(|f| whole.contains(&f.name.as_ptr())));
}
