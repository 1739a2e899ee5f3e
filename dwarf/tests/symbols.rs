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
