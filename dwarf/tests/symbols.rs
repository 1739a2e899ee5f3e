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

/// What `SymbolFacts` should hold, read with object's generic symbol API
/// instead (each name checked as UTF-8 on its own): the functions in
/// table order, the data symbols as `symbols()` sorts them.
fn facts_as_object_reads_them(bytes: &[u8]) -> (Vec<Fact<'_>>, Vec<Fact<'_>>) {
    use object::{Object, ObjectSymbol, SymbolFlags, SymbolSection};
    let file = object::File::parse(bytes).expect("fixture parses");
    let mut functions = Vec::new();
    let mut data = Vec::new();
    for symbol in file.symbols() {
        let SymbolFlags::Elf { st_info, .. } = symbol.flags() else {
            continue;
        };
        let st_type = st_info.st_type();
        if st_type != object::elf::STT_FUNC && st_type != object::elf::STT_OBJECT {
            continue;
        }
        let Some(name) = symbol
            .name_bytes()
            .ok()
            .and_then(|name| std::str::from_utf8(name).ok())
        else {
            continue;
        };
        let section = match symbol.section() {
            SymbolSection::Section(index) => index.0,
            SymbolSection::Absolute => usize::from(object::elf::SHN_ABS.0),
            SymbolSection::Common => usize::from(object::elf::SHN_COMMON.0),
            _ => 0,
        };
        let fact = (
            section,
            symbol.address(),
            name,
            symbol.size(),
            !symbol.is_local(),
        );
        if st_type == object::elf::STT_FUNC {
            functions.push(fact);
        } else {
            data.push(fact);
        }
    }
    data.sort_unstable();
    (functions, data)
}

/// (section, address, name, size, global).
type Fact<'a> = (usize, u64, &'a str, u64, bool);

fn facts_of(file: &dwarf::ElfFile) -> (Vec<Fact<'_>>, Vec<Fact<'_>>) {
    let facts = file.symbols().expect("symbols");
    let functions = facts
        .functions
        .iter()
        .map(|f| (f.section_index, f.address, f.name, f.size, f.global))
        .collect();
    let data = facts
        .data
        .iter()
        .map(|d| (d.section_index, d.address, d.name, d.size, d.global))
        .collect();
    (functions, data)
}

/// The symbol facts are object's reading of `.symtab`: for every
/// committed ELF fixture, and for copies whose `.strtab` has a byte that
/// is not UTF-8 in the middle, so that the names before it come from the
/// string table checked at once and those after it are checked one by
/// one (the name holding the byte is no name at all).
#[test]
fn symbol_facts_are_what_object_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/obj");
    let mut pending = vec![root];
    let mut files = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixtures directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut broken_names = 0;
    for path in files {
        let bytes = std::fs::read(&path).expect("fixture reads");
        if !bytes.starts_with(b"\x7fELF") {
            continue;
        }
        let file = dwarf::ElfFile::open(&path).expect("fixture opens");
        assert_eq!(
            facts_of(&file),
            facts_as_object_reads_them(&bytes),
            "{}",
            path.display()
        );
        // The copy: a byte of `.strtab` halfway through, inside a name,
        // made 0xff.
        let Some(at) = strtab_middle_of_a_name(&bytes) else {
            continue;
        };
        let mut broken = bytes;
        broken[at] = 0xff;
        let file = dwarf::ElfFile::from_bytes(path.clone(), broken.clone()).expect("copy parses");
        let (functions, data) = facts_of(&file);
        let expected = facts_as_object_reads_them(&broken);
        assert_eq!((functions, data), expected, "{} broken", path.display());
        broken_names += 1;
    }
    assert!(broken_names > 20, "only {broken_names} copies were broken");
}

/// An offset into `.strtab`, about halfway, of a byte that is neither a NUL
/// nor next to one.
fn strtab_middle_of_a_name(bytes: &[u8]) -> Option<usize> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(bytes).ok()?;
    let strtab = file.section_by_name(".strtab")?;
    let (start, size) = strtab.file_range()?;
    let (start, size) = (usize::try_from(start).ok()?, usize::try_from(size).ok()?);
    let table = bytes.get(start..start + size)?;
    (size / 2..size.saturating_sub(1))
        .find(|&i| table[i - 1] != 0 && table[i] != 0 && table[i + 1] != 0)
        .map(|i| start + i)
}
