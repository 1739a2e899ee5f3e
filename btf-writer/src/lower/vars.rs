//! Which variables get a VAR, and the DATASECs that place them, following
//! pahole's rules: per-CPU variables with `var`, every global variable with
//! `global_var` (pahole 1.31).
//!
//! The CU side ([`variable_candidates`]) matches DWARF variables with ELF
//! data symbols; the assembly side ([`emit_variables`]) writes one VAR per
//! symbol placement and one DATASEC per section.

use std::collections::BTreeMap;

use foldhash::fast::FixedState;

/// Maps keyed by a file's own addresses, which need no SipHash.
type HashMap<K, V> = std::collections::HashMap<K, V, FixedState>;
type HashSet<K> = std::collections::HashSet<K, FixedState>;

use dwarf::model::{CuModel, TypeRef, Variable};
use dwarf::symbols::{DataSymbol, SectionInfo};
use dwarf::SymbolFacts;

use super::error::Error;
use super::features::{Features, Rules};
use super::type_map::TypeMap;
use crate::types::{Btf, Datasec, DeclTag, Linkage, Object, Type, TypeId, VarSecInfo};

/// The section pahole 1.24 encodes variables of.
pub const PERCPU_SECTION: &str = ".data..percpu";

/// Name prefixes of compiler/kernel-generated variables pahole 1.31 leaves
/// out (`filter_variable_name`).
const FILTERED_PREFIXES: [&str; 5] = [
    "__UNIQUE_ID",
    "__tpstrtab_",
    "__exitcall_",
    "__gendwarfksyms_ptr_",
    "__func_stack_frame_non_standard_",
];

/// Data symbols indexed for variable matching.
#[derive(Debug, Default)]
pub(crate) struct DataSymbols<'facts, 'input> {
    /// Per-CPU symbols of non-zero size, by offset within the section.
    percpu: BTreeMap<u64, &'facts DataSymbol<'input>>,
    /// All data symbols by value (`st_value`): the symbols at an address,
    /// in `SymbolFacts::data` order, are a range of `by_value`.
    by_address: HashMap<u64, std::ops::Range<u32>>,
    /// All data symbols, ordered by value (and within a value as in
    /// `SymbolFacts::data`). One list rather than one per address: that
    /// was 100,000 allocations on Debian 7.3.4's vmlinux, most of building
    /// this index.
    by_value: Vec<&'facts DataSymbol<'input>>,
    /// Sections by index.
    sections: HashMap<usize, SectionInfo<'input>>,
}

impl<'facts, 'input> DataSymbols<'facts, 'input> {
    pub(crate) fn new(symbols: &'facts SymbolFacts<'input>) -> Self {
        let mut percpu = BTreeMap::new();
        if let Some(section) = symbols.percpu {
            for symbol in &symbols.data {
                if symbol.section_index == section.index && symbol.size != 0 {
                    if let Some(offset) = symbol.address.checked_sub(section.address) {
                        // `data` is sorted by (section, address, name): the
                        // first symbol at an offset is kept, deterministically.
                        percpu.entry(offset).or_insert(symbol);
                    }
                }
            }
        }
        let mut by_value: Vec<&DataSymbol<'input>> = symbols.data.iter().collect();
        // Stable: symbols of one value keep their order in `data`.
        by_value.sort_by_key(|symbol| symbol.address);
        let mut by_address: HashMap<u64, std::ops::Range<u32>> =
            HashMap::with_capacity_and_hasher(by_value.len(), FixedState::default());
        let mut start = 0;
        // Fewer data symbols than u32 can count: a symbol table entry
        // takes 16 bytes or more.
        for group in by_value.chunk_by(|a, b| a.address == b.address) {
            let end = start + group.len() as u32;
            if let Some(first) = group.first() {
                by_address.insert(first.address, start..end);
            }
            start = end;
        }
        let sections = symbols
            .sections
            .values()
            .map(|section| (section.index, *section))
            .collect();
        DataSymbols {
            percpu,
            by_address,
            by_value,
            sections,
        }
    }

    /// The data symbols whose value is `address`, in `SymbolFacts::data`
    /// order.
    fn at(&self, address: u64) -> Option<&[&'facts DataSymbol<'input>]> {
        let range = self.by_address.get(&address)?;
        self.by_value.get(range.start as usize..range.end as usize)
    }
}

/// A variable one CU proposes for a VAR, already placed in its section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableCandidate<'input> {
    /// VAR name (the ELF symbol's for pahole 1.24, DWARF's for 1.31).
    pub name: &'input str,
    /// Its type, with a CU-local id.
    pub ty: TypeId,
    /// Global (external) or static.
    pub linkage: Linkage,
    /// Section index of the placement.
    pub section_index: usize,
    /// Section name (the DATASEC name).
    pub section_name: &'input str,
    /// Offset within the section.
    pub offset: u32,
    /// Size of the placement.
    pub size: u32,
    /// `btf_decl_tag` values.
    pub decl_tags: Vec<&'input str>,
    /// The CU's `.debug_info` offset and the variable's DIE, for messages.
    pub cu_offset: u64,
    /// `.debug_info` offset of the variable's DIE.
    pub die_offset: u64,
}

/// Everything [`variable_candidates`] needs besides the CU.
#[derive(Debug)]
pub(crate) struct VariableRules<'c, 'facts, 'input> {
    pub(crate) features: &'c Features,
    pub(crate) symbols: &'c SymbolFacts<'input>,
    pub(crate) index: &'c DataSymbols<'facts, 'input>,
    /// ET_REL: every section starts at address 0, so an address alone does
    /// not tell sections apart and the symbol name must agree too.
    pub(crate) relocatable: bool,
    /// ELF `e_machine`.
    pub(crate) machine: u16,
}

/// `EM_BPF`.
const EM_BPF: u16 = 247;

/// The CU's VAR candidates, in DIE order.
pub(crate) fn variable_candidates<'input>(
    cu: &CuModel<'input, '_>,
    map: &TypeMap<'_, 'input, '_>,
    rules: &VariableRules<'_, '_, 'input>,
) -> Result<Vec<VariableCandidate<'input>>, Error> {
    let features = rules.features;
    if !features.var && !features.global_var {
        return Ok(Vec::new());
    }
    // gcc describes a definition that follows an extern declaration in the
    // same CU by a nameless DIE pointing (DW_AT_specification) at the
    // declaration. pahole 1.24 checks names before following that pointer,
    // so such a definition has no name where it checks one (address 0).
    let declared: HashSet<&str> = match features.rules {
        Rules::V1_24 => cu
            .variables
            .iter()
            .filter(|v| v.declaration)
            .map(|v| v.name)
            .collect(),
        Rules::V1_31 => HashSet::default(),
    };
    let mut candidates = Vec::new();
    for variable in &cu.variables {
        // Declarations have no storage; without a DW_OP_addr location the
        // variable is not in static storage.
        if variable.declaration {
            continue;
        }
        let Some(address) = variable.address else {
            continue;
        };
        let placement = match features.rules {
            Rules::V1_24 => {
                place_percpu_v1_24(variable, address, declared.contains(variable.name), rules)?
            }
            Rules::V1_31 => place_v1_31(variable, address, rules)?,
        };
        let Some(placement) = placement else { continue };

        if variable.ty == TypeRef::Void {
            if features.encode_force {
                continue;
            }
            return Err(Error::VoidVariable {
                cu_offset: cu.offset,
                name: placement.name.to_string(),
            });
        }
        let type_size = map.byte_size(variable.ty)?;
        if type_size == 0 || type_size > u64::from(u32::MAX) {
            continue;
        }
        let size = match features.rules {
            // The kernel wants a VAR's place to hold its type as lowered
            // (btf_datasec_resolve, "Invalid size"); pahole 1.24 writes
            // the symbol's size whatever the type's.
            Rules::V1_24 if placement.symbol_size < map.lowered_byte_size(variable.ty)? => {
                map.leave_out_die(
                    features.encode_force,
                    Some(variable.die_offset),
                    format!(
                        "variable {:?}: its symbol has {} bytes, fewer than the {} of its type (the kernel wants the place to hold the type)",
                        placement.name,
                        placement.symbol_size,
                        map.lowered_byte_size(variable.ty)?
                    ),
                )?;
                continue;
            }
            Rules::V1_24 => placement.symbol_size,
            Rules::V1_31 => type_size,
        };
        let (Ok(offset), Ok(size)) = (u32::try_from(placement.offset), u32::try_from(size)) else {
            continue;
        };
        // Tags are only looked at when they are encoded; an empty one is
        // left out with encode_force, and the variable kept.
        let mut decl_tags = Vec::new();
        for tag in variable.decl_tags.iter().filter(|_| features.decl_tag) {
            let die = Some(variable.die_offset);
            if map.decl_tag_ok(tag, die, || format!("variable {:?}", placement.name))? {
                decl_tags.push(*tag);
            }
        }
        candidates.push(VariableCandidate {
            name: placement.name,
            ty: map.id(variable.ty)?,
            linkage: if variable.external {
                Linkage::Global
            } else {
                Linkage::Static
            },
            section_index: placement.section.index,
            section_name: placement.section.name,
            offset,
            size,
            decl_tags,
            cu_offset: cu.offset,
            die_offset: variable.die_offset,
        });
    }
    Ok(candidates)
}

/// Where a variable lives, by ELF's account.
struct Placement<'input> {
    name: &'input str,
    section: SectionInfo<'input>,
    offset: u64,
    symbol_size: u64,
}

/// pahole 1.24: the variable's address must fall in `.data..percpu` and a
/// per-CPU symbol must start there; the VAR takes the symbol's name and
/// size. Function-local statics count (1.24 walks them too), which is how
/// `foo.0` style symbol names reach its BTF.
fn place_percpu_v1_24<'input>(
    variable: &Variable<'input, '_>,
    address: u64,
    nameless_definition: bool,
    rules: &VariableRules<'_, '_, 'input>,
) -> Result<Option<Placement<'input>>, Error> {
    if !rules.features.var {
        return Ok(None);
    }
    // pahole 1.24 encodes no per-CPU VAR for relocatable BPF objects
    // (clang -target bpfel/bpfeb): elfutils 0.188, which it reads DWARF
    // with, cannot apply R_BPF_64_ABS64, so every variable's address is
    // lost (rewriting those relocations as R_BPF_64_64 makes pahole find
    // the VAR). Kernel objects are never BPF-target.
    if rules.relocatable && rules.machine == EM_BPF {
        return Ok(None);
    }
    let Some(section) = rules.symbols.percpu else {
        return Ok(None);
    };
    let Some(offset) = address
        .checked_sub(section.address)
        .filter(|offset| *offset < section.size)
    else {
        return Ok(None);
    };
    let Some(symbol) = rules.index.percpu.get(&offset) else {
        return Ok(None);
    };
    // Address 0 is also where the linker leaves discarded and special
    // variables, so there the names must agree as well; the same goes for
    // any address in a relocatable file.
    if (address == 0 || rules.relocatable)
        && !names_agree(variable.name, symbol.name, rules.relocatable)
    {
        return Ok(None);
    }
    if address == 0 && !rules.relocatable && nameless_definition {
        return Ok(None);
    }
    if !btf_name_valid(symbol.name) {
        if rules.features.encode_force {
            return Ok(None);
        }
        return Err(Error::InvalidSymbolName {
            name: symbol.name.to_string(),
        });
    }
    Ok(Some(Placement {
        name: symbol.name,
        section,
        offset,
        symbol_size: symbol.size,
    }))
}

/// pahole 1.31: top-level variables only; the section is the one holding
/// the address, which must be `.data..percpu` with `var`, or any section
/// with `global_var`; the VAR takes the DWARF name.
fn place_v1_31<'input>(
    variable: &Variable<'input, '_>,
    address: u64,
    rules: &VariableRules<'_, '_, 'input>,
) -> Result<Option<Placement<'input>>, Error> {
    if variable.in_function {
        return Ok(None);
    }
    // The symbol at this address (with the same name where addresses are
    // ambiguous) tells the section.
    let Some(symbols) = rules.index.at(address) else {
        return Ok(None);
    };
    let named = symbols
        .iter()
        .find(|symbol| names_agree(variable.name, symbol.name, true));
    let symbol = match named {
        Some(symbol) => *symbol,
        None if address != 0 && !rules.relocatable => match symbols.first() {
            Some(symbol) => *symbol,
            None => return Ok(None),
        },
        None => return Ok(None),
    };
    let Some(section) = rules.index.sections.get(&symbol.section_index).copied() else {
        return Ok(None);
    };
    let included =
        rules.features.global_var || (rules.features.var && section.name == PERCPU_SECTION);
    if !included {
        return Ok(None);
    }
    let Some(offset) = address.checked_sub(section.address) else {
        return Ok(None);
    };
    if FILTERED_PREFIXES
        .iter()
        .any(|prefix| variable.name.starts_with(prefix))
    {
        return Ok(None);
    }
    if !btf_name_valid(variable.name) {
        if rules.features.encode_force {
            return Ok(None);
        }
        return Err(Error::InvalidSymbolName {
            name: variable.name.to_string(),
        });
    }
    Ok(Some(Placement {
        name: variable.name,
        section,
        offset,
        symbol_size: symbol.size,
    }))
}

/// Whether an ELF symbol is the DWARF variable's: the same name, or (for
/// function-local statics, which compilers rename) the name plus a `.N`
/// suffix.
fn names_agree(dwarf_name: &str, symbol_name: &str, allow_suffix: bool) -> bool {
    symbol_name == dwarf_name
        || (allow_suffix
            && symbol_name
                .strip_prefix(dwarf_name)
                .is_some_and(|rest| rest.starts_with('.')))
}

/// pahole's `btf_name_valid`: `[A-Za-z_.][A-Za-z0-9_.]*`, at most
/// KSYM_NAME_LEN characters.
#[inline]
pub(crate) fn btf_name_valid(name: &str) -> bool {
    dwarf::model::is_c_identifier(name)
}

/// Adds VARs (+ DECL_TAGs) and one DATASEC per section, sorted by offset.
/// Candidates are in CU order with ids already shifted; a placement claimed
/// twice keeps its first VAR. A variable whose place overlaps an earlier
/// one's in its section ([`overlapping`]) is an error, or with
/// `encode_force` left out with a warning (returned, one line each).
pub(crate) fn emit_variables<'input>(
    btf: &mut Btf<'input>,
    candidates: Vec<VariableCandidate<'input>>,
    features: &Features,
) -> Result<Vec<String>, Error> {
    let mut seen: HashSet<(usize, u32)> = HashSet::default();
    let candidates: Vec<_> = candidates
        .into_iter()
        .filter(|candidate| seen.insert((candidate.section_index, candidate.offset)))
        .collect();
    let mut warnings = Vec::new();
    let mut left_out = vec![false; candidates.len()];
    for error in overlapping(&candidates) {
        if !features.encode_force {
            return Err(error.error);
        }
        warnings.push(format!("{}; left out (encode_force)", error.error));
        if let Some(flag) = left_out.get_mut(error.index) {
            *flag = true;
        }
    }
    let mut sections: BTreeMap<usize, (&'input str, Vec<VarSecInfo>)> = BTreeMap::new();
    for (candidate, _) in candidates
        .into_iter()
        .zip(left_out)
        .filter(|(_, left_out)| !left_out)
    {
        let var = btf.add(Type::Var(Object {
            name: candidate.name,
            ty: candidate.ty,
            linkage: candidate.linkage,
        }));
        if features.decl_tag {
            for name in candidate.decl_tags {
                btf.add(Type::DeclTag(DeclTag {
                    name,
                    ty: var,
                    component_idx: -1,
                    attribute: false,
                }));
            }
        }
        sections
            .entry(candidate.section_index)
            .or_insert_with(|| (candidate.section_name, Vec::new()))
            .1
            .push(VarSecInfo {
                ty: var,
                offset: candidate.offset,
                size: candidate.size,
            });
    }
    for (_, (name, mut vars)) in sections {
        vars.sort_by_key(|var| var.offset);
        // pahole sizes the DATASEC to the end of its last variable, not to
        // the ELF section.
        let size = vars
            .last()
            .map_or(0, |last| last.offset.saturating_add(last.size));
        btf.add(Type::Datasec(Datasec {
            name,
            size,
            vars: vars.into_boxed_slice(),
        }));
    }
    Ok(warnings)
}

/// A candidate [`emit_variables`] cannot place, by index, and why.
struct Unplaceable {
    index: usize,
    error: Error,
}

/// The candidates whose places the kernel would refuse in a DATASEC
/// (btf_datasec_check_meta): one that starts before the variable before
/// it in its section ends ("Invalid offset"; pahole writes it, as when a
/// struct is larger than the symbol it is placed at), or that ends past
/// what a 32-bit DATASEC size can say. Sections in index order, each by
/// offset; the earlier variable is the one kept, so that a section's
/// variables are judged in one pass.
fn overlapping(candidates: &[VariableCandidate<'_>]) -> Vec<Unplaceable> {
    let mut by_section: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (index, candidate) in candidates.iter().enumerate() {
        by_section
            .entry(candidate.section_index)
            .or_default()
            .push(index);
    }
    let mut unplaceable = Vec::new();
    for mut indices in by_section.into_values() {
        indices.sort_by_key(|&index| candidates.get(index).map(|c| c.offset));
        let mut previous: Option<&VariableCandidate<'_>> = None;
        for index in indices {
            let Some(candidate) = candidates.get(index) else {
                continue;
            };
            let start = u64::from(candidate.offset);
            let end = start + u64::from(candidate.size);
            let why = match previous {
                Some(before) if start < u64::from(before.offset) + u64::from(before.size) => {
                    format!(
                        "overlaps variable {:?} at +{:#x} ({} bytes; CU at .debug_info+{:#x}, DIE {:#x}), and the kernel takes no overlapping variables in a DATASEC",
                        before.name, before.offset, before.size, before.cu_offset, before.die_offset
                    )
                }
                _ if end > u64::from(u32::MAX) => {
                    "ends past the 4 GiB a DATASEC can hold".to_string()
                }
                _ => {
                    previous = Some(candidate);
                    continue;
                }
            };
            unplaceable.push(Unplaceable {
                index,
                error: Error::Unplaceable {
                    cu_offset: candidate.cu_offset,
                    die: candidate.die_offset,
                    what: format!(
                        "variable {:?} at {}+{:#x} ({} bytes) {why}",
                        candidate.name, candidate.section_name, candidate.offset, candidate.size
                    ),
                },
            });
        }
    }
    unplaceable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::test_support::*;
    use crate::types::Int;

    fn percpu_facts() -> SymbolFacts<'static> {
        let percpu = SectionInfo {
            index: 5,
            name: PERCPU_SECTION,
            address: 0,
            size: 0x80,
        };
        let data = SectionInfo {
            index: 3,
            name: ".data",
            address: 0x1000,
            size: 0x100,
        };
        let mut facts = SymbolFacts {
            percpu: Some(percpu),
            ..SymbolFacts::default()
        };
        facts.sections.insert(PERCPU_SECTION, percpu);
        facts.sections.insert(".data", data);
        facts.data = vec![
            DataSymbol {
                name: "a",
                address: 0x0,
                size: 4,
                section_index: 3,
                global: true,
            },
            DataSymbol {
                name: "loc.0",
                address: 0x0,
                size: 4,
                section_index: 5,
                global: false,
            },
            DataSymbol {
                name: "a",
                address: 0x4,
                size: 4,
                section_index: 5,
                global: true,
            },
            DataSymbol {
                name: "gdata",
                address: 0x1010,
                size: 8,
                section_index: 3,
                global: true,
            },
        ];
        facts
    }

    fn variable(
        name: &'static str,
        address: Option<u64>,
        in_function: bool,
    ) -> Variable<'static, 'static> {
        Variable {
            die_offset: 0,
            name,
            ty: node(0),
            external: !in_function,
            declaration: false,
            address,
            in_function,
            decl_tags: &[],
        }
    }

    fn run(
        features: Features,
        cu: &CuModel<'static, '_>,
        relocatable: bool,
    ) -> Result<Vec<VariableCandidate<'static>>, Error> {
        let facts = percpu_facts();
        let index = DataSymbols::new(&facts);
        let map = TypeMap::new(cu, 8).unwrap();
        let rules = VariableRules {
            features: &features,
            symbols: &facts,
            index: &index,
            relocatable,
            machine: 62,
        };
        variable_candidates(cu, &map, &rules)
    }

    #[test]
    fn v1_24_percpu_uses_symbol_names_and_function_statics() {
        let mut cu = cu_with(vec![base_int()]);
        cu.variables = vec![
            variable("loc", Some(0x0), true),
            variable("a", Some(0x4), false),
            variable("gdata", Some(0x1010), false),
            variable("nowhere", None, false),
        ];
        let found = run(Features::default(), &cu, false).unwrap();
        let names: Vec<_> = found
            .iter()
            .map(|c| (c.name, c.offset, c.size, c.linkage))
            .collect();
        // At address 0 the names must agree: "loc" is not "loc.0" for the
        // non-relocatable 1.24 rule, so only "a" is kept.
        assert_eq!(names, vec![("a", 4, 4, Linkage::Global)]);

        // In a relocatable file a `.N` suffix is accepted.
        let found = run(Features::default(), &cu, true).unwrap();
        let names: Vec<_> = found.iter().map(|c| c.name).collect();
        assert_eq!(names, vec!["loc.0", "a"]);
    }

    #[test]
    fn v1_24_skips_address_zero_definitions_of_declared_variables() {
        // vmlinux's fixed_percpu_data: declared extern, defined at offset 0
        // of .data..percpu; pahole 1.24 (Debian's .BTF) has no VAR for it,
        // pahole 1.31 has one.
        let mut cu = cu_with(vec![base_int()]);
        let mut declaration = variable("a", None, false);
        declaration.declaration = true;
        cu.variables = vec![declaration, variable("a", Some(0x0), false)];
        let facts = SymbolFacts {
            percpu: Some(SectionInfo {
                index: 5,
                name: PERCPU_SECTION,
                address: 0,
                size: 0x80,
            }),
            data: vec![DataSymbol {
                name: "a",
                address: 0,
                size: 4,
                section_index: 5,
                global: true,
            }],
            ..SymbolFacts::default()
        };
        let index = DataSymbols::new(&facts);
        let map = TypeMap::new(&cu, 8).unwrap();
        let legacy = Features::default();
        let rules = VariableRules {
            features: &legacy,
            symbols: &facts,
            index: &index,
            relocatable: false,
            machine: 62,
        };
        assert!(variable_candidates(&cu, &map, &rules).unwrap().is_empty());
        // Without the declaration, the name is on the definition: kept.
        cu.variables.remove(0);
        let map = TypeMap::new(&cu, 8).unwrap();
        assert_eq!(variable_candidates(&cu, &map, &rules).unwrap().len(), 1);
    }

    #[test]
    fn v1_31_top_level_dwarf_names_and_global_var() {
        let mut cu = cu_with(vec![base_int()]);
        cu.variables = vec![
            variable("loc", Some(0x0), true),
            variable("a", Some(0x4), false),
            variable("gdata", Some(0x1010), false),
            variable("__UNIQUE_ID_x", Some(0x1010), false),
        ];
        let percpu_only = Features::parse("var", true).unwrap();
        let found = run(percpu_only, &cu, false).unwrap();
        assert_eq!(found.iter().map(|c| c.name).collect::<Vec<_>>(), vec!["a"]);

        let global = Features::parse("var,global_var", true).unwrap();
        let found = run(global, &cu, false).unwrap();
        let placed: Vec<_> = found
            .iter()
            .map(|c| (c.name, c.section_name, c.offset))
            .collect();
        assert_eq!(
            placed,
            vec![("a", PERCPU_SECTION, 4), ("gdata", ".data", 0x10)]
        );
    }

    #[test]
    fn void_variables_fail_unless_forced() {
        let mut cu = cu_with(vec![base_int()]);
        let mut void = variable("a", Some(0x4), false);
        void.ty = TypeRef::Void;
        cu.variables = vec![void];
        assert!(matches!(
            run(Features::default(), &cu, false),
            Err(Error::VoidVariable { .. })
        ));
        let forced = Features {
            encode_force: true,
            ..Features::default()
        };
        assert!(run(forced, &cu, false).unwrap().is_empty());
    }

    /// A table holding `int` (id 1), for VARs to refer to.
    fn int_table() -> Btf<'static> {
        let mut btf = Btf::default();
        btf.add(Type::Int(Int {
            name: "int",
            size: 4,
            encoding: Default::default(),
            offset: 0,
            bits: 32,
        }));
        btf
    }

    /// An `int` candidate in `.data..percpu` (section 5), of CU 0x40.
    fn percpu_candidate(
        name: &'static str,
        offset: u32,
        size: u32,
        die_offset: u64,
        decl_tags: Vec<&'static str>,
    ) -> VariableCandidate<'static> {
        VariableCandidate {
            name,
            ty: TypeId(1),
            linkage: Linkage::Global,
            section_index: 5,
            section_name: PERCPU_SECTION,
            offset,
            size,
            decl_tags,
            cu_offset: 0x40,
            die_offset,
        }
    }

    #[test]
    fn datasec_sorted_and_sized_to_last_variable() {
        let mut btf = int_table();
        let cand = |name, offset| percpu_candidate(name, offset, 4, 0x10, vec!["t"]);
        let warnings = emit_variables(
            &mut btf,
            vec![cand("b", 32), cand("a", 0), cand("dup", 0)],
            &Features::default(),
        )
        .unwrap();
        assert!(warnings.is_empty());
        // int, VAR b, DECL_TAG, VAR a, DECL_TAG, DATASEC.
        assert_eq!(btf.count(), 6);
        let Some(Type::Datasec(sec)) = btf.types.last() else {
            panic!()
        };
        assert_eq!(sec.name, PERCPU_SECTION);
        assert_eq!(sec.size, 36);
        assert_eq!(
            sec.vars
                .iter()
                .map(|v| (v.ty, v.offset))
                .collect::<Vec<_>>(),
            vec![(TypeId(4), 0), (TypeId(2), 32)]
        );
    }

    /// btf_datasec_check_meta refuses a variable that starts before the
    /// one before it ends: an error naming both, or with encode_force the
    /// later one left out (and no VAR written for it).
    #[test]
    fn overlapping_variables_fail_or_are_left_out() {
        let cand = |name, offset, size, die_offset| {
            percpu_candidate(name, offset, size, die_offset, Vec::new())
        };
        // "wide" (0x8..0x24) covers "inside" (0x20) and touches "after".
        let candidates = || {
            vec![
                cand("inside", 0x20, 4, 0x30),
                cand("wide", 0x8, 28, 0x10),
                cand("after", 0x24, 4, 0x50),
            ]
        };
        let mut btf = int_table();
        let err = emit_variables(&mut btf, candidates(), &Features::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "CU at .debug_info+0x40: DIE 0x30: variable \"inside\" at .data..percpu+0x20 \
             (4 bytes) overlaps variable \"wide\" at +0x8 (28 bytes; CU at .debug_info+0x40, \
             DIE 0x10), and the kernel takes no overlapping variables in a DATASEC"
        );
        let forced = Features {
            encode_force: true,
            ..Features::default()
        };
        let mut btf = int_table();
        let warnings = emit_variables(&mut btf, candidates(), &forced).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("CU at .debug_info+0x40: DIE 0x30: variable \"inside\""));
        assert!(warnings[0].ends_with("; left out (encode_force)"));
        let vars: Vec<&str> = btf
            .types
            .iter()
            .filter_map(|ty| match ty {
                Type::Var(var) => Some(var.name),
                _ => None,
            })
            .collect();
        assert_eq!(vars, ["wide", "after"]);
        let Some(Type::Datasec(sec)) = btf.types.last() else {
            panic!()
        };
        assert_eq!(sec.size, 0x28);
        assert_eq!(
            sec.vars.iter().map(|v| v.offset).collect::<Vec<_>>(),
            [0x8, 0x24]
        );
    }

    #[test]
    fn name_validity() {
        assert!(btf_name_valid("foo_1.2") && btf_name_valid(".x") && btf_name_valid("_"));
        assert!(!btf_name_valid("") && !btf_name_valid("1a") && !btf_name_valid("a-b"));
        assert!(!btf_name_valid(&"a".repeat(129)));
    }
}
