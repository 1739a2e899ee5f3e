//! The ELF symbol facts that BTF selection rules need, and nothing more.
//!
//! pahole decides which functions get a `FUNC` by looking the name up among
//! `STT_FUNC` symbols, and which variables get a `VAR` by their symbol's
//! section and address. The rest of the symbol table is of no interest, so
//! only these facts are kept (names borrow from the mapped `.strtab`).
//!
//! The one exception is `.BTF_ids`: the kernel's `btf_ids.h` macros mark
//! kfunc sets there with local symbols, and pahole 1.31 tags the functions
//! of those sets (`decl_tag_kfuncs`); [`kfuncs_in_btf_ids`] reads them.

use foldhash::fast::FixedState;

/// Fixed hashing: the same probes on every run (fuzzing replays, profiles).
type HashMap<K, V> = std::collections::HashMap<K, V, FixedState>;

/// An ELF section by index, with its name and address range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionInfo<'input> {
    /// Section header index.
    pub index: usize,
    /// Section name.
    pub name: &'input str,
    /// `sh_addr` (0 in relocatable files).
    pub address: u64,
    /// `sh_size`.
    pub size: u64,
}

/// A data symbol (`STT_OBJECT`), for variable selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataSymbol<'input> {
    /// Symbol name.
    pub name: &'input str,
    /// `st_value` (in ET_REL: offset within its section).
    pub address: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_shndx`.
    pub section_index: usize,
    /// `STB_GLOBAL`/`STB_WEAK` rather than `STB_LOCAL`.
    pub global: bool,
}

/// A function symbol (`STT_FUNC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncSymbol<'input> {
    /// Full symbol name, suffixes (`.isra.0`, `.cold`, ...) included.
    pub name: &'input str,
    /// `st_value`.
    pub address: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_shndx`.
    pub section_index: usize,
    /// `STB_GLOBAL`/`STB_WEAK` rather than `STB_LOCAL`.
    pub global: bool,
}

/// What the encoder needs from `.symtab`.
#[derive(Debug, Default)]
pub struct SymbolFacts<'input> {
    /// Every `STT_FUNC` symbol, in symbol table order.
    pub functions: Vec<FuncSymbol<'input>>,
    /// Every `STT_OBJECT` symbol, sorted by (section, address, name).
    pub data: Vec<DataSymbol<'input>>,
    /// The `.data..percpu` section, when the file has one.
    pub percpu: Option<SectionInfo<'input>>,
    /// All sections by name (for DATASEC names and `.BTF_ids` lookup).
    pub sections: HashMap<&'input str, SectionInfo<'input>>,
    /// Functions listed in a `.BTF_ids` kfunc set, sorted by name, one
    /// entry per name (see [`kfuncs_in_btf_ids`]).
    pub kfuncs: Vec<Kfunc<'input>>,
}

/// A function the kernel registers as a kfunc: it is listed in a
/// `BTF_SET8` of `.BTF_ids` whose set flags carry [`BTF_SET8_KFUNCS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kfunc<'input> {
    /// The function name, as written in the `BTF_ID_FLAGS(func, name)`.
    pub name: &'input str,
    /// The `KF_*` flags stored next to its id in the set.
    pub flags: u32,
}

/// A symbol defined in `.BTF_ids` (of any type: set symbols have none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtfIdsSymbol<'input> {
    /// Symbol name.
    pub name: &'input str,
    /// `st_value`.
    pub address: u64,
    /// `st_size`.
    pub size: u64,
}

/// The set8 flag that marks a set of kfuncs (kernel `btf_ids.h`, since
/// 6.8; older kernels have set8s with flags 0, which are not kfunc sets
/// for pahole).
pub const BTF_SET8_KFUNCS: u32 = 1;

/// Prefix of the symbol at the start of a `BTF_SET8`.
const SET8_PREFIX: &str = "__BTF_ID__set8__";
/// Prefix of the symbol at each function id: `__BTF_ID__func__NAME__N`.
const FUNC_ID_PREFIX: &str = "__BTF_ID__func__";

/// The kfuncs of a `.BTF_ids` section, the way pahole 1.31 finds them.
///
/// A set8 is `{ u32 cnt; u32 flags; { u32 id; u32 flags; } pairs[cnt] }`
/// in the file's byte order, and its `__BTF_ID__set8__` symbol's size
/// spans it. A set is a kfunc set when its flags have
/// [`BTF_SET8_KFUNCS`]; each `__BTF_ID__func__` symbol inside such a set
/// names a kfunc, and the word after its id holds its `KF_*` flags. When a
/// name appears in several sets, the last one in `symbols` order gives the
/// flags (pahole overwrites as it walks the symbol table).
///
/// `data` is the section's contents and `section_address` its `sh_addr`;
/// symbols whose words fall outside `data` are ignored.
pub fn kfuncs_in_btf_ids<'input>(
    data: &[u8],
    section_address: u64,
    big_endian: bool,
    symbols: &[BtfIdsSymbol<'input>],
) -> Vec<Kfunc<'input>> {
    let word_at = |address: u64, index: u64| -> Option<u32> {
        let offset = address.checked_sub(section_address)?;
        let start = usize::try_from(offset.checked_add(index.checked_mul(4)?)?).ok()?;
        let bytes: [u8; 4] = data.get(start..start.checked_add(4)?)?.try_into().ok()?;
        Some(if big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        })
    };
    let kfunc_sets: Vec<(u64, u64)> = symbols
        .iter()
        .filter(|symbol| symbol.name.starts_with(SET8_PREFIX))
        .filter(|symbol| {
            word_at(symbol.address, 1).is_some_and(|flags| flags & BTF_SET8_KFUNCS != 0)
        })
        .map(|symbol| (symbol.address, symbol.address.saturating_add(symbol.size)))
        .collect();
    if kfunc_sets.is_empty() {
        return Vec::new();
    }
    let mut by_name: HashMap<&'input str, u32> = HashMap::default();
    for symbol in symbols {
        let Some(name) = func_id_name(symbol.name) else {
            continue;
        };
        let in_kfunc_set = kfunc_sets
            .iter()
            .any(|(start, end)| (*start..*end).contains(&symbol.address));
        if !in_kfunc_set {
            continue;
        }
        if let Some(flags) = word_at(symbol.address, 1) {
            by_name.insert(name, flags);
        }
    }
    let mut kfuncs: Vec<Kfunc<'input>> = by_name
        .into_iter()
        .map(|(name, flags)| Kfunc { name, flags })
        .collect();
    kfuncs.sort_unstable_by_key(|kfunc| kfunc.name);
    kfuncs
}

/// `NAME` from `__BTF_ID__func__NAME__N` (the `__N` suffix makes each
/// symbol unique; the name itself may contain `__`).
fn func_id_name(symbol: &str) -> Option<&str> {
    let rest = symbol.strip_prefix(FUNC_ID_PREFIX)?;
    let last = rest.rfind('_')?;
    let cut = last.checked_sub(1)?;
    (rest.as_bytes().get(cut) == Some(&b'_')).then(|| &rest[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(name: &'static str, address: u64, size: u64) -> BtfIdsSymbol<'static> {
        BtfIdsSymbol {
            name,
            address,
            size,
        }
    }

    fn words(values: &[u32], big_endian: bool) -> Vec<u8> {
        values
            .iter()
            .flat_map(|value| {
                if big_endian {
                    value.to_be_bytes()
                } else {
                    value.to_le_bytes()
                }
            })
            .collect()
    }

    #[test]
    fn func_id_names() {
        assert_eq!(
            func_id_name("__BTF_ID__func__vfs_close__1"),
            Some("vfs_close")
        );
        assert_eq!(
            func_id_name("__BTF_ID__func__bpf__odd__name__12"),
            Some("bpf__odd__name")
        );
        assert_eq!(func_id_name("__BTF_ID__func__nosuffix"), None);
        assert_eq!(func_id_name("__BTF_ID__struct__task_struct__3"), None);
        assert_eq!(func_id_name("__BTF_ID__func___"), None);
    }

    #[test]
    fn only_sets_with_the_kfuncs_flag_count() {
        // Section at 0x1000, two sets laid out as btf_ids.h does:
        //   0x1000 set8 "plain" {cnt 1, flags 0}  pair {0, 0}
        //   0x1010 set8 "kf"    {cnt 2, flags 1}  pairs {0, 0x1000}, {0, 2}
        // then a loose BTF_ID after the sets.
        for big_endian in [false, true] {
            let data = words(&[1, 0, 0, 0, 2, 1, 0, 0x1000, 0, 2, 0], big_endian);
            let symbols = [
                symbol("__BTF_ID__set8__plain", 0x1000, 16),
                symbol("__BTF_ID__func__not_a_kfunc__1", 0x1008, 4),
                symbol("__BTF_ID__set8__kf", 0x1010, 24),
                symbol("__BTF_ID__func__fast__2", 0x1018, 4),
                symbol("__BTF_ID__func__acquire__3", 0x1020, 4),
                symbol("__BTF_ID__func__outside__4", 0x1028, 4),
            ];
            let kfuncs = kfuncs_in_btf_ids(&data, 0x1000, big_endian, &symbols);
            assert_eq!(
                kfuncs,
                vec![
                    Kfunc {
                        name: "acquire",
                        flags: 2
                    },
                    Kfunc {
                        name: "fast",
                        flags: 0x1000
                    },
                ]
            );
        }
    }

    #[test]
    fn malformed_sections_give_nothing_rather_than_panic() {
        let symbols = [
            symbol("__BTF_ID__set8__kf", 0x10, u64::MAX),
            symbol("__BTF_ID__func__f__1", 0x18, 4),
        ];
        assert!(kfuncs_in_btf_ids(&[1, 0, 0], 0x10, false, &symbols).is_empty());
        assert!(kfuncs_in_btf_ids(&words(&[1, 1], false), 0x20, false, &symbols).is_empty());
        // The set header is there but the pair is cut off.
        assert!(kfuncs_in_btf_ids(&words(&[1, 1, 0], false), 0x10, false, &symbols).is_empty());
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

    fn facts_of(file: &crate::ElfFile) -> (Vec<Fact<'_>>, Vec<Fact<'_>>) {
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
        let mut broken_names = 0;
        for path in crate::test_fixtures::fixture_objects() {
            let bytes = std::fs::read(&path).expect("fixture reads");
            let file = crate::ElfFile::open(&path).expect("fixture opens");
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
            let file =
                crate::ElfFile::from_bytes(path.clone(), broken.clone()).expect("copy parses");
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
}
