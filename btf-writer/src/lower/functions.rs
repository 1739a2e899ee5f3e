//! Which functions get a FUNC, following pahole's rules.
//!
//! Each CU proposes candidates ([`FunctionCandidate`]): definitions with
//! named parameters whose name the ELF symbol table knows. Which candidate
//! becomes the FUNC is decided once all CUs are lowered
//! ([`emit_functions`]), because both pahole generations decide across CUs:
//! 1.24 keeps the first definition of a name, 1.31 merges all of them and
//! may drop the name when they disagree.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;

/// Maps keyed by symbol names: SipHash's protection against chosen keys is
/// not needed for a file's own symbols, and it was most of the time spent
/// indexing the ~60k functions of a vmlinux.
type HashMap<K, V> = std::collections::HashMap<K, V, FixedState>;
type HashSet<K> = std::collections::HashSet<K, FixedState>;

use dwarf::model::{CuModel, Function};
use dwarf::SymbolFacts;

use super::candidate::{FunctionCandidate, TrueSignature};
use super::error::Error;
use super::features::{Features, Rules};
use super::true_signature::{self, SuffixedSymbols};
use super::type_map::{TypeMap, UNSIZED_RETURN};
use crate::types::{Btf, DeclTag, FuncProto, Linkage, Name, Object, Param, Type, TypeId};

/// Suffixes (after the first '.') of symbols that are pieces of a function
/// rather than a callable copy of it: pahole 1.31 ignores such symbols.
const NON_FUNCTION_SUFFIXES: [&str; 2] = [".cold", ".part"];
/// Suffixes of the compiler's optimized copies (pahole 1.31's
/// `str_contains_optimized_fn_suffix`).
const OPTIMIZED_SUFFIXES: [&str; 2] = [".constprop", ".isra"];

/// The DECL_TAG pahole 1.31 puts on every encoded kfunc.
const KFUNC_TAG: &str = "bpf_kfunc";
/// The DECL_TAG it adds for kfuncs the verifier may call without
/// spilling caller-saved registers.
const FASTCALL_TAG: &str = "bpf_fastcall";
/// `KF_FASTCALL` among a kfunc's set flags (kernel `include/linux/btf.h`).
const KF_FASTCALL: u32 = 1 << 12;

/// What pahole knows about an ELF function name (1.31: suffix stripped).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ElfFunction {
    /// Symbols of this name sit at more than one address, so a tracer
    /// attaching by name cannot know which one is meant. Under 1.31's
    /// rules, as pahole 1436daf decides it
    /// (`elf_function__has_ambiguous_address` in `elf_functions__collect`):
    /// walking the symbols in symbol-table order, an address differs from
    /// the previous one *and that one is not 0* (0 reads as "none yet", so
    /// a symbol at address 0, the first function of a relocatable file's
    /// `.text`, never conflicts with the one after it); and never for the
    /// last name in byte order, which its loop ends before checking.
    ambiguous_address: bool,
    /// Symbols of this name sit at more than one address (whatever
    /// pahole concludes): `other_addresses` holds the others.
    several_addresses: bool,
    /// The function is a kfunc; its `KF_*` flags.
    kfunc_flags: Option<u32>,
}

/// The ELF function names candidates are matched against.
#[derive(Debug, Default)]
pub(crate) struct FunctionTable<'input> {
    names: HashMap<&'input str, NameEntry>,
    /// (name as matched, symbol address) of the symbols of ambiguous names
    /// that are not at the name's `first_address`: few, so most names need
    /// no entry beyond their own.
    other_addresses: HashSet<(&'input str, u64)>,
    /// 1.31: (name as matched, address) of the symbols whose suffix names
    /// an optimized copy (`.isra`, `.constprop`): pahole's
    /// `optimized_symbol` for a definition at that address.
    optimized_addresses: HashSet<(&'input str, u64)>,
    /// The file has no function symbols at all: pahole 1.24 then takes
    /// every external definition, 1.31 none.
    empty: bool,
    /// `true_signature`: its symbol index (see [`true_signature`]).
    true_signature: Option<SuffixedSymbols<'input>>,
    /// Built with pahole 1.31's rules.
    v1_31: bool,
}

/// One matched name of the [`FunctionTable`].
#[derive(Clone, Copy, Debug, Default)]
struct NameEntry {
    /// pahole 1436daf's running address in
    /// `elf_function__has_ambiguous_address` (0: none yet).
    previous_address: u64,
    function: ElfFunction,
    /// The address of the first symbol of this name.
    first_address: u64,
}

impl<'input> FunctionTable<'input> {
    /// Builds the table from `STT_FUNC` symbols: exact names for pahole
    /// 1.24, names cut at the first '.' (ignoring `.cold`/`.part` pieces)
    /// for 1.31.
    pub(crate) fn new(symbols: &SymbolFacts<'input>, rules: Rules) -> Self {
        let mut names: HashMap<&'input str, NameEntry> =
            HashMap::with_capacity_and_hasher(symbols.functions.len(), FixedState::default());
        let mut other_addresses = HashSet::default();
        let mut optimized_addresses = HashSet::default();
        // The greatest name in byte order, kept as names come: looking for
        // it among the table's keys afterwards took 6 ms of Debian 7.3.4's
        // sequential start (116,000 names at random places).
        let mut greatest: Option<&'input str> = None;
        for symbol in &symbols.functions {
            let name = match rules {
                Rules::V1_24 => symbol.name,
                Rules::V1_31 => match symbol.name.find('.') {
                    Some(dot) => {
                        let suffix = &symbol.name[dot..];
                        if NON_FUNCTION_SUFFIXES
                            .iter()
                            .any(|skip| suffix.contains(skip))
                        {
                            continue;
                        }
                        if OPTIMIZED_SUFFIXES.iter().any(|opt| suffix.contains(opt)) {
                            optimized_addresses.insert((&symbol.name[..dot], symbol.address));
                        }
                        &symbol.name[..dot]
                    }
                    None => symbol.name,
                },
            };
            let entry = match names.entry(name) {
                std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
                std::collections::hash_map::Entry::Vacant(entry) => {
                    if greatest.is_none_or(|greatest| name > greatest) {
                        greatest = Some(name);
                    }
                    entry.insert(NameEntry {
                        first_address: symbol.address,
                        ..NameEntry::default()
                    })
                }
            };
            if entry.first_address != symbol.address {
                entry.function.several_addresses = true;
                other_addresses.insert((name, symbol.address));
            }
            match rules {
                Rules::V1_24 => entry.function.ambiguous_address = entry.function.several_addresses,
                Rules::V1_31 => {
                    if entry.previous_address != 0 && entry.previous_address != symbol.address {
                        entry.function.ambiguous_address = true;
                    }
                    entry.previous_address = symbol.address;
                }
            }
        }
        if rules == Rules::V1_31 {
            // pahole's loop checks a name when the next one starts: the
            // last name in its byte-order sort is never checked.
            if let Some(last) = greatest {
                if let Some(entry) = names.get_mut(last) {
                    entry.function.ambiguous_address = false;
                }
            }
        }
        // pahole marks the ELF function of the kfunc's name, so a kfunc
        // without a function symbol (or whose name pahole cut differently)
        // stays untagged.
        for kfunc in &symbols.kfuncs {
            if let Some(entry) = names.get_mut(kfunc.name) {
                entry.function.kfunc_flags = Some(kfunc.flags);
            }
        }
        FunctionTable {
            empty: match rules {
                Rules::V1_24 => symbols.functions.is_empty(),
                Rules::V1_31 => names.is_empty(),
            },
            names,
            other_addresses,
            true_signature: None,
            optimized_addresses,
            v1_31: rules == Rules::V1_31,
        }
    }

    /// The table for `features`: with `true_signature`, it also indexes
    /// the '.'-suffixed symbols.
    pub(crate) fn for_features(symbols: &SymbolFacts<'input>, features: &Features) -> Self {
        let mut table = FunctionTable::new(symbols, features.rules);
        if features.true_signature {
            table.true_signature = Some(SuffixedSymbols::new(symbols));
        }
        table
    }

    fn lookup(&self, name: &str) -> Option<ElfFunction> {
        self.names.get(name).map(|entry| entry.function)
    }

    /// Whether an `.isra`/`.constprop` symbol of this (matched) name sits
    /// at `address`.
    fn has_optimized_symbol_at(&self, name: &str, address: Option<u64>) -> bool {
        address.is_some_and(|address| self.optimized_addresses.contains(&(name, address)))
    }

    /// Whether a symbol of this (matched) name sits at `address`.
    fn has_symbol_at(&self, name: &str, address: Option<u64>) -> bool {
        let Some(address) = address else { return false };
        self.names.get(name).is_some_and(|entry| {
            entry.first_address == address
                || (entry.function.several_addresses
                    && self.other_addresses.contains(&(name, address)))
        })
    }
}

/// The CU's FUNC candidates, in DIE order.
pub(crate) fn function_candidates<'input>(
    cu: &CuModel<'input, '_>,
    map: &TypeMap<'_, 'input, '_>,
    table: &FunctionTable<'input>,
    pointer_size: u32,
    relocatable: bool,
    machine: u16,
    decl_tag: bool,
) -> Result<Vec<FunctionCandidate<'input>>, Error> {
    let abi = Abi::of(machine, pointer_size);
    let mut candidates = Vec::new();
    for function in &cu.functions {
        // pahole skips declarations, and functions with an unnamed
        // parameter (their BTF would be useless to tracers).
        if function.declaration || function.params.iter().any(|param| param.name.is_none()) {
            continue;
        }
        let elf = if table.empty {
            // pahole 1.31 looks every name up in an empty table and finds
            // none.
            if !function.external || table.v1_31 {
                continue;
            }
            ElfFunction::default()
        } else {
            match table.lookup(function.name) {
                Some(elf) => elf,
                None => continue,
            }
        };
        // btf_func_check_meta and btf_func_check: the FUNC's name and
        // every parameter's are C identifiers ("Invalid name", "Invalid
        // arg#N"); with encode_force the function is left out.
        let bad_name = std::iter::once(function.name)
            .chain(function.params.iter().filter_map(|param| param.name))
            .find(|name| !map.name_ok(name));
        if let Some(bad) = bad_name {
            map.leave_out_die(
                map.force,
                Some(function.die_offset),
                format!(
                    "function {:?}: the name {bad:?} is not a C identifier",
                    function.name
                ),
            )?;
            continue;
        }
        // btf_func_proto_check: every argument, and a return type other
        // than void itself, has a size ("Invalid arg#N", "Invalid return
        // type"); DWARF that lost a parameter's DW_AT_type gives void.
        if let Some(what) = unsized_in_signature(function, map)? {
            map.leave_out_die(
                map.force,
                Some(function.die_offset),
                format!("function {:?}: {what}", function.name),
            )?;
            continue;
        }
        let mut found = candidate(function, map, elf, decl_tag)?;
        // pahole 1436daf's verdict on the parameters (its clang and gcc
        // rules differ; see parameter_verdict).
        let verdict = parameter_verdict(function, map, &abi, cu.producer_clang)?;
        found.optimized_params = verdict.optimized_params;
        found.unexpected_register = verdict.unexpected_register;
        found.signature_changed = cu.producer_clang && function.signature_changed;
        if !relocatable {
            found.at_symbol = table.has_symbol_at(function.name, function.entry_pc);
            found.optimized_symbol =
                table.has_optimized_symbol_at(function.name, function.entry_pc);
        }
        if let Some(symbols) = &table.true_signature {
            let symbols = (!relocatable).then_some(symbols);
            true_signature::rewrite(
                &mut found,
                function,
                cu,
                map,
                machine,
                pointer_size,
                symbols,
            )?;
        }
        candidates.push(found);
    }
    Ok(candidates)
}

/// What in `function`'s signature has no size (see
/// [`super::type_map::ChainEnd::is_sizeless`] and [`TypeMap::undefined_declaration`]), if
/// anything.
fn unsized_in_signature(
    function: &Function<'_, '_>,
    map: &TypeMap<'_, '_, '_>,
) -> Result<Option<String>, Error> {
    for (index, param) in function.params.iter().enumerate() {
        let chain = map.chain_end(param.ty)?;
        if chain.is_sizeless() {
            return Ok(Some(format!(
                "parameter {} ({:?}) is void or a function type",
                index + 1,
                param.name.unwrap_or("")
            )));
        }
        if let Some(declared) = map.undefined_declaration(&chain) {
            return Ok(Some(format!(
                "parameter {} ({:?}) is a {declared} only declared in this unit",
                index + 1,
                param.name.unwrap_or("")
            )));
        }
    }
    if let Some(declared) = map.undefined_declaration(&map.chain_end(function.ret)?) {
        return Ok(Some(format!(
            "it returns a {declared} only declared in this unit"
        )));
    }
    if map.returns_unsized(function.ret)? {
        return Ok(Some(UNSIZED_RETURN.to_string()));
    }
    Ok(None)
}

fn candidate<'input>(
    function: &Function<'input, '_>,
    map: &TypeMap<'_, 'input, '_>,
    elf: ElfFunction,
    decl_tag: bool,
) -> Result<FunctionCandidate<'input>, Error> {
    let mut params = Vec::with_capacity(function.params.len() + usize::from(function.varargs));
    let mut decl_tags = Vec::new();
    // Tags are only looked at when they are encoded; an empty one is left
    // out with encode_force, and the function kept.
    let mut keep_tags =
        |tags: &[&'input str], component_idx: i32, component: &dyn Fn() -> String| {
            for tag in tags.iter().filter(|_| decl_tag) {
                let die = Some(function.die_offset);
                if map.decl_tag_ok(tag, die, || {
                    format!("function {:?}: {}", function.name, component())
                })? {
                    decl_tags.push((*tag, component_idx));
                }
            }
            Ok::<(), Error>(())
        };
    for (index, param) in function.params.iter().enumerate() {
        params.push(Param {
            name: map.name(param.name)?,
            ty: map.id(param.ty)?,
        });
        keep_tags(param.decl_tags, index as i32, &|| {
            format!("parameter {} ({:?})", index + 1, param.name.unwrap_or(""))
        })?;
    }
    if function.varargs {
        params.push(Param {
            name: Name::EMPTY,
            ty: TypeId::VOID,
        });
    }
    keep_tags(function.decl_tags, -1, &|| "the function".to_string())?;
    Ok(FunctionCandidate {
        name: function.name,
        proto: FuncProto {
            ret: map.id(function.ret)?,
            params: params.into_boxed_slice(),
        },
        decl_tags,
        // Set from parameter_verdict by the caller.
        optimized_params: false,
        unexpected_register: false,
        ambiguous_address: elf.ambiguous_address,
        at_symbol: false,
        optimized_symbol: false,
        kfunc_flags: elf.kfunc_flags,
        signature_changed: false,
        true_signature: TrueSignature::default(),
        reordered: function.reordered,
    })
}

/// The calling-convention facts pahole's parameter rules use
/// (dwarves 1436daf, `dwarf_loader.c`).
#[derive(Clone, Copy, Debug)]
struct Abi {
    /// `arch__set_register_params`: the register expected per argument
    /// index; indices past it expect none.
    registers: &'static [u8],
    /// `arch__nr_register_params`: how many arguments travel in registers.
    count: usize,
    /// `arch__agg_use_two_regs`.
    two_register_aggregates: bool,
    /// `cu->addr_size`.
    pointer_size: u32,
}

impl Abi {
    fn of(machine: u16, pointer_size: u32) -> Abi {
        Abi {
            registers: dwarf::walk::entry_register_params(machine),
            count: dwarf::walk::nr_register_params(machine),
            two_register_aggregates: dwarf::walk::aggregates_use_two_registers(machine),
            pointer_size,
        }
    }

    /// `cu->register_params[index]` (`-1`, no register, past the list).
    fn expected(&self, index: usize) -> Option<u8> {
        self.registers.get(index).copied()
    }
}

/// What pahole concludes about a function's parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Verdict {
    /// `ftype->optimized_parms`: a parameter is optimized or has no
    /// location.
    optimized_params: bool,
    /// `ftype->unexpected_reg`.
    unexpected_register: bool,
}

/// One parameter as pahole's location rules see it.
#[derive(Clone, Copy, Debug, Default)]
struct ParamState {
    has_location: bool,
    has_const_value: bool,
    /// `loc_reg`.
    register: Option<u8>,
    /// `passed_in_memory`: wider than the registers an argument may take.
    in_memory: bool,
    /// `parameter__abi_slots`: registers the argument takes.
    slots: usize,
    optimized: bool,
    unexpected: bool,
}

/// pahole's verdict on a function definition's parameters (dwarves
/// 1436daf, without `true_signature`): `parameter__new` sizes each
/// parameter, `function__analyze_parameter_locations` marks parameters
/// optimized or in an unexpected register, and
/// `cu__resolve_func_ret_types_optimized` sums them up, excusing the
/// unexpected registers of a function with a struct parameter.
fn parameter_verdict(
    function: &Function<'_, '_>,
    map: &TypeMap<'_, '_, '_>,
    abi: &Abi,
    producer_clang: bool,
) -> Result<Verdict, Error> {
    let pointer_size = u64::from(abi.pointer_size);
    let mut params = Vec::with_capacity(function.params.len());
    let mut has_struct = false;
    for param in function.params {
        // parameter__new: type_byte_size, passed_in_memory.
        let chain = map.chain_end(param.ty)?;
        let byte_size = map.chain_byte_size(&chain)?;
        let widest = if abi.two_register_aggregates {
            2 * pointer_size
        } else {
            pointer_size
        };
        // parameter__abi_slots.
        let slots = if !abi.two_register_aggregates || byte_size <= pointer_size {
            1
        } else {
            usize::try_from(byte_size.div_ceil(pointer_size.max(1)))
                .unwrap_or(usize::MAX)
                .max(1)
        };
        params.push(ParamState {
            has_location: param.entry.has_location,
            has_const_value: param.entry.has_const_value,
            register: param.entry.register_for(
                byte_size,
                abi.pointer_size,
                abi.two_register_aggregates,
            ),
            in_memory: byte_size > widest,
            slots,
            ..ParamState::default()
        });
        // param__is_struct, asked of every parameter.
        has_struct |= chain.is_struct();
    }
    if producer_clang && !function.signature_changed {
        match_clang_locations(&mut params, abi);
    } else {
        analyze_locations(&mut params, abi, producer_clang);
    }
    let optimized_params = params.iter().any(|p| p.optimized || !p.has_location);
    let unexpected = params.iter().any(|p| p.unexpected);
    Ok(Verdict {
        optimized_params,
        unexpected_register: unexpected && !has_struct,
    })
}

/// pahole's `function__match_clang_parameter_locations`, for clang's
/// functions whose signature did not change: each parameter passed in
/// registers takes the next `slots` argument registers, and a known
/// `loc_reg` outside them is unexpected. Parameters passed in memory take
/// none; the check ends when the argument registers run out.
fn match_clang_locations(params: &mut [ParamState], abi: &Abi) {
    let mut index = 0usize;
    for param in params {
        if param.in_memory {
            continue;
        }
        if index >= abi.count {
            break;
        }
        if let Some(register) = param.register {
            // parameter__reg_in_expected_window.
            let end = index.saturating_add(param.slots).min(abi.count);
            if !(index..end).any(|slot| abi.expected(slot) == Some(register)) {
                param.unexpected = true;
            }
        }
        index = index.saturating_add(param.slots);
    }
}

/// pahole's `function__analyze_parameter_locations` for gcc's functions
/// (and clang's whose signature changed), `true_signature` off: while
/// argument registers remain, a located parameter without `loc_reg` is
/// optimized and one in another register than expected is unexpected; a
/// parameter with only `DW_AT_const_value` is optimized (not for clang).
fn analyze_locations(params: &mut [ParamState], abi: &Abi, producer_clang: bool) {
    let mut index = 0usize;
    for param in params {
        let available = index < abi.count;
        let expected = if available { abi.expected(index) } else { None };
        let taken = if param.in_memory { 1 } else { param.slots };
        let mut consumes = true;
        if param.has_location {
            if !available {
                consumes = false;
            } else if param.register.is_none() {
                param.optimized = true;
            } else if expected.is_some() && expected != param.register {
                param.unexpected = true;
            }
        } else if param.has_const_value && !producer_clang {
            param.optimized = true;
        }
        if consumes {
            index = index.saturating_add(taken);
        }
    }
}

/// Adds FUNC_PROTO + FUNC (+ DECL_TAGs) to `btf` for the chosen candidates.
/// `candidates` holds, per CU in CU order, the id shift of that CU and its
/// candidates (ids already shifted).
pub(crate) fn emit_functions<'input>(
    btf: &mut Btf<'input>,
    mut candidates: Vec<FunctionCandidate<'input>>,
    features: &Features,
    skips: &mut Vec<String>,
) {
    // Room for every record a candidate can add: the table is big, and
    // growing it would copy it.
    let most = candidates.iter().map(|c| 4 + c.decl_tags.len()).sum();
    btf.types.reserve(most);
    match features.rules {
        Rules::V1_24 => {
            // One FUNC per name: the first definition in CU order wins.
            // Hashing reads every name, mostly cache misses in the file's
            // string section: all threads hash them first.
            let hasher = FixedState::default();
            let hashes: Vec<u64> = candidates
                .par_iter()
                .map(|candidate| hasher.hash_one(candidate.name))
                .collect();
            let mut seen: HashTable<&str> = HashTable::with_capacity(candidates.len());
            for (candidate, &hash) in candidates.iter_mut().zip(&hashes) {
                let name = candidate.name;
                let entry = seen.entry(hash, |seen| *seen == name, |seen| hasher.hash_one(*seen));
                if let Entry::Vacant(slot) = entry {
                    slot.insert(name);
                    add_function(btf, candidate, features);
                }
            }
        }
        Rules::V1_31 => {
            let by_name = sorted_by_name(&candidates);
            for group in by_name.chunk_by(|a, b| a.0.name == b.0.name) {
                emit_group_v1_31(btf, &mut candidates, group, features, skips);
            }
        }
    }
}

/// The candidates' names with their indices, sorted by name (pahole walks
/// its tree of functions in name order), then index (CU order).
fn sorted_by_name<'a>(candidates: &[FunctionCandidate<'a>]) -> Vec<(NameKey<'a>, usize)> {
    let mut order: Vec<(NameKey<'a>, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(index, candidate)| (NameKey::new(candidate.name), index))
        .collect();
    // A total order (indices are unique): the same result on any thread
    // count.
    order.par_sort_unstable();
    order
}

/// A name that sorts as the name does, most comparisons settled by its
/// first bytes as one integer (BTF names hold no NUL, so the zeros that pad
/// a short name sort it first, as its end does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct NameKey<'a> {
    prefix: u64,
    name: &'a str,
}

impl<'a> NameKey<'a> {
    fn new(name: &'a str) -> Self {
        let mut bytes = [0u8; 8];
        for (byte, &from) in bytes.iter_mut().zip(name.as_bytes()) {
            *byte = from;
        }
        NameKey {
            prefix: u64::from_be_bytes(bytes),
            name,
        }
    }
}

/// pahole 1.31 (`btf_encoder__add_saved_funcs`): the FUNC of one name,
/// if its definitions (`group`, by index into `candidates`, in CU order,
/// as glibc's stable merge sort leaves pahole's saved states) agree.
/// Skip lines, worded as pahole's `--verbose` prints them, go to `skips`.
fn emit_group_v1_31<'input>(
    btf: &mut Btf<'input>,
    candidates: &mut [FunctionCandidate<'input>],
    group: &[(NameKey<'_>, usize)],
    features: &Features,
    skips: &mut Vec<String>,
) {
    let members = || group.iter().filter_map(|&(_, index)| candidates.get(index));
    let Some(first) = members().next() else {
        return;
    };
    // saved_functions_combine, the first state against each later one:
    // register and order problems accumulate, and while there is none the
    // prototypes must match.
    let mut unexpected = first.unexpected_register;
    let mut inconsistent = false;
    let mut reordered = first.reordered;
    for other in members().skip(1) {
        unexpected |= other.unexpected_register;
        reordered |= other.reordered;
        if !unexpected && !inconsistent && !reordered {
            if let Some(why) = proto_mismatch(btf, &first.proto, &other.proto) {
                skips.push(skip_line(first.name, &why));
                inconsistent = true;
            }
        }
    }
    // true_signature: after the states are combined (their skip lines
    // printed), a definition at a suffixed symbol is encoded under that
    // name and nothing else is decided.
    let (name, ambiguous) = (first.name, first.ambiguous_address);
    if features.true_signature && emit_true_signature(btf, candidates, group, features) {
        return;
    }
    let members = || group.iter().filter_map(|&(_, index)| candidates.get(index));
    let canonical = if group.len() > 1 {
        canonical_state(members(), features)
    } else {
        0
    };
    let Some(&(_, canonical_index)) = group.get(canonical) else {
        return;
    };
    let skip_optimized = candidates
        .get(canonical_index)
        .is_some_and(|c| skips_optimized_params(c, features));
    // As pahole: the last reason that holds is the one reported.
    let mut reason = None;
    if unexpected {
        reason = Some("unexpected register usage for parameter");
    }
    if features.consistent_func && inconsistent {
        // pahole's spelling.
        reason = Some("inconsistet prototype");
    }
    if reordered {
        reason = Some("reordered parameters");
    }
    if skip_optimized {
        reason = Some("optimized parameters");
    }
    if ambiguous {
        reason = Some("ambiguous address");
    }
    if let Some(reason) = reason {
        skips.push(skip_line(name, reason));
        return;
    }
    if let Some(chosen) = candidates.get_mut(canonical_index) {
        add_function(btf, chosen, features);
    }
}

/// `true_signature`: encodes the definition [`true_signature::pick`]
/// chooses under its suffixed symbol name, without kfunc tags; false when
/// there is none.
fn emit_true_signature<'input>(
    btf: &mut Btf<'input>,
    candidates: &mut [FunctionCandidate<'input>],
    group: &[(NameKey<'_>, usize)],
    features: &Features,
) -> bool {
    let members = group.iter().filter_map(|&(_, index)| candidates.get(index));
    let Some(&(_, index)) = true_signature::pick(members).and_then(|at| group.get(at)) else {
        return false;
    };
    let Some(chosen) = candidates.get_mut(index) else {
        return false;
    };
    let Some(symbol) = chosen.true_signature.symbol else {
        return false;
    };
    chosen.name = symbol;
    chosen.kfunc_flags = None;
    add_function(btf, chosen, features);
    true
}

/// pahole's skip line (`btf_encoder__log_func_skip`), without the newline.
fn skip_line(name: &str, reason: &str) -> String {
    format!("{name} : skipping BTF encoding of function due to {reason}")
}

/// pahole's `btf_encoder_func_state__skip_optimized_parms`: optimized
/// parameters matter only when the signature changed (clang's
/// `DW_CC_nocall`) or the definition is the code of an
/// `.isra`/`.constprop` symbol, and never with `true_signature` (which
/// still leaves out reordered parameters, the reason before it).
fn skips_optimized_params(candidate: &FunctionCandidate<'_>, features: &Features) -> bool {
    !features.true_signature
        && candidate.optimized_params
        && (candidate.signature_changed || candidate.optimized_symbol)
}

/// pahole's `btf_encoder__select_canonical_state`: the first definition
/// at a symbol's address whose parameters do not rule it out, else the
/// first one at a symbol's address, else the first one (position in the
/// group).
fn canonical_state<'a, 'input: 'a>(
    members: impl Iterator<Item = &'a FunctionCandidate<'input>> + Clone,
    features: &Features,
) -> usize {
    members
        .clone()
        .position(|c| c.at_symbol && !skips_optimized_params(c, features))
        .or_else(|| members.clone().position(|c| c.at_symbol))
        .unwrap_or(0)
}

/// Adds the FUNC_PROTO, FUNC and DECL_TAGs of `candidate`, whose prototype
/// and tags move into the table.
fn add_function<'input>(
    btf: &mut Btf<'input>,
    candidate: &mut FunctionCandidate<'input>,
    features: &Features,
) {
    let proto = FuncProto {
        ret: candidate.proto.ret,
        params: std::mem::take(&mut candidate.proto.params),
    };
    let proto = btf.add(Type::FuncProto(proto));
    // pahole writes every FUNC as static, whatever DW_AT_external says.
    let func = btf.add(Type::Func(Object {
        name: candidate.name,
        ty: proto,
        linkage: Linkage::Static,
    }));
    if features.decl_tag {
        // As pahole: the kfunc tags come before the source's own tags.
        if let Some(flags) = candidate.kfunc_flags.filter(|_| features.decl_tag_kfuncs) {
            btf.add(Type::DeclTag(DeclTag {
                name: KFUNC_TAG,
                ty: func,
                component_idx: -1,
                attribute: false,
            }));
            if flags & KF_FASTCALL != 0 {
                btf.add(Type::DeclTag(DeclTag {
                    name: FASTCALL_TAG,
                    ty: func,
                    component_idx: -1,
                    attribute: false,
                }));
            }
        }
        for &(name, component_idx) in &candidate.decl_tags {
            btf.add(Type::DeclTag(DeclTag {
                name,
                ty: func,
                component_idx,
                attribute: false,
            }));
        }
    }
}

/// pahole 1.31's `funcs__match`: same parameter count (`...` counts as
/// one), and return and parameter types that match loosely (see
/// [`types_match`]). `None` when they match, else pahole's reason.
fn proto_mismatch(btf: &Btf<'_>, a: &FuncProto<'_>, b: &FuncProto<'_>) -> Option<String> {
    if a.params.len() != b.params.len() {
        // pahole counts in a u8.
        return Some(format!(
            "param count mismatch; {} params != {} params",
            a.params.len() as u8,
            b.params.len() as u8
        ));
    }
    if !types_match(btf, a.ret, b.ret) {
        return Some("return type mismatch".to_owned());
    }
    a.params
        .iter()
        .zip(&b.params)
        .position(|(pa, pb)| !types_match(btf, pa.ty, pb.ty))
        .map(|index| {
            let (pa, pb) = (&a.params[index], &b.params[index]);
            format!(
                "param type mismatch for param#{} {} != {}",
                index + 1,
                pa.name.as_str(),
                pb.name.as_str()
            )
        })
}

/// pahole 1.31's `types__match`: follows both chains; `const` on one side
/// only is skipped; INT/FLOAT compare size, bits and name; named aggregates,
/// enums and typedefs compare by name only (a FWD matches its struct or
/// union); arrays by element count and element type; FUNC_PROTOs (behind
/// function pointers) by parameter count, return and parameter types.
fn types_match(btf: &Btf<'_>, mut a: TypeId, mut b: TypeId) -> bool {
    // Reference chains are finite in well-formed BTF; the bound only
    // protects against cycles in bad input.
    for _ in 0..1024 {
        if a == b {
            return true;
        }
        if a == TypeId::VOID || b == TypeId::VOID {
            return false;
        }
        let (Some(ta), Some(tb)) = (btf.get(a), btf.get(b)) else {
            return false;
        };
        let (ka, kb) = (match_kind(ta), match_kind(tb));
        if ka != kb {
            match (ta, tb) {
                (Type::Const(inner), _) => a = *inner,
                (_, Type::Const(inner)) => b = *inner,
                _ => return false,
            }
            continue;
        }
        match (ta, tb) {
            (Type::Int(x), Type::Int(y)) => return x == y,
            (Type::Float(x), Type::Float(y)) => return x == y,
            (Type::Ptr(x), Type::Ptr(y))
            | (Type::Const(x), Type::Const(y))
            | (Type::Volatile(x), Type::Volatile(y))
            | (Type::Restrict(x), Type::Restrict(y)) => (a, b) = (*x, *y),
            (Type::TypeTag(x), Type::TypeTag(y)) => (a, b) = (x.ty, y.ty),
            (Type::Array(x), Type::Array(y)) => {
                if x.nelems != y.nelems {
                    return false;
                }
                (a, b) = (x.elem, y.elem);
            }
            (Type::FuncProto(x), Type::FuncProto(y)) => {
                return x.params.len() == y.params.len()
                    && types_match(btf, x.ret, y.ret)
                    && x.params
                        .iter()
                        .zip(&y.params)
                        .all(|(px, py)| types_match(btf, px.ty, py.ty))
            }
            _ => return type_name(ta) == type_name(tb),
        }
    }
    false
}

/// Kind for matching purposes: a FWD counts as the struct or union it
/// declares.
fn match_kind(ty: &Type<'_>) -> crate::raw::Kind {
    use crate::raw::Kind;
    match ty {
        Type::Fwd(crate::types::Fwd { union: false, .. }) => Kind::STRUCT,
        Type::Fwd(crate::types::Fwd { union: true, .. }) => Kind::UNION,
        other => Kind::of(other),
    }
}

fn type_name<'a>(ty: &Type<'a>) -> Option<&'a str> {
    match ty {
        Type::Struct(c) | Type::Union(c) => Some(c.name),
        Type::Fwd(f) => Some(f.name),
        Type::Enum(e) | Type::Enum64(e) => Some(e.name),
        Type::Typedef(t) => Some(t.name),
        _ => None,
    }
}

/// Turns a candidate's CU-local ids into the assembled table's.
pub(crate) fn remap_candidate<E>(
    candidate: &mut FunctionCandidate<'_>,
    remap: impl Fn(TypeId) -> Result<TypeId, E>,
) -> Result<(), E> {
    candidate.proto.ret = remap(candidate.proto.ret)?;
    for param in &mut candidate.proto.params {
        param.ty = remap(param.ty)?;
    }
    Ok(())
}

/// DWARF register numbers of the integer argument registers, in argument
/// order, for an ELF `e_machine`; empty when unknown (no register check).
/// The table is the walker's, which resolves parameter locations with it.
pub fn register_params_for_machine(e_machine: u16) -> &'static [u16] {
    dwarf::walk::register_params(e_machine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::test_support::*;
    use crate::test_types::test_name;
    use crate::types::{Composite, Fwd, Int, IntEncoding};
    use dwarf::model::ParamLocation;
    use dwarf::symbols::FuncSymbol;

    fn symbols(names: &[(&'static str, u64)]) -> SymbolFacts<'static> {
        let mut facts = SymbolFacts::default();
        for (name, address) in names {
            facts.functions.push(FuncSymbol {
                name,
                address: *address,
                size: 1,
                section_index: 1,
                global: true,
            });
        }
        facts
    }

    #[test]
    fn v1_24_matches_exact_names_only() {
        let facts = symbols(&[
            ("foo", 0x10),
            ("bar.isra.0", 0x20),
            ("baz.cold", 0x30),
            ("baz", 0x40),
        ]);
        let table = FunctionTable::new(&facts, Rules::V1_24);
        assert!(table.lookup("foo").is_some() && table.lookup("baz").is_some());
        assert!(table.lookup("bar").is_none());
    }

    #[test]
    fn v1_31_strips_suffixes_and_skips_pieces() {
        let facts = symbols(&[
            ("bar.isra.0", 0x20),
            ("baz.cold", 0x30),
            ("dup", 0x50),
            ("dup", 0x60),
            ("same", 0x70),
            ("same.constprop.0", 0x70),
        ]);
        let table = FunctionTable::new(&facts, Rules::V1_31);
        assert!(table.lookup("bar").is_some());
        assert!(table.lookup("baz").is_none());
        assert!(table.lookup("dup").unwrap().ambiguous_address);
        assert!(!table.lookup("same").unwrap().ambiguous_address);
    }

    #[test]
    fn name_keys_sort_as_names() {
        let names = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefg",
            "abcdefghi",
            "abcdefgha",
            "abcdefgh_",
            "b",
            "__x64_sys_read",
            "__x64_sys_readv",
            "__x64_sys_rea",
            "é",
            "z\u{7f}",
            "zz",
            "Z",
        ];
        let mut by_name = names.to_vec();
        by_name.sort_unstable();
        let mut by_key: Vec<NameKey<'_>> = names.iter().map(|n| NameKey::new(n)).collect();
        by_key.sort_unstable();
        let by_key: Vec<&str> = by_key.iter().map(|key| key.name).collect();
        assert_eq!(by_key, by_name);
    }

    #[test]
    fn table_does_not_depend_on_symbol_order() {
        let listed = [
            ("dup.isra.0", 0x50),
            ("dup", 0x60),
            ("dup", 0x50),
            ("one", 0x70),
            ("one.cold", 0x90),
            ("clone.constprop.0", 0x80),
        ];
        let mut reversed = listed;
        reversed.reverse();
        for rules in [Rules::V1_24, Rules::V1_31] {
            let (a, b) = (symbols(&listed), symbols(&reversed));
            let (a, b) = (FunctionTable::new(&a, rules), FunctionTable::new(&b, rules));
            for name in [
                "dup",
                "dup.isra.0",
                "one",
                "clone",
                "clone.constprop.0",
                "none",
            ] {
                assert_eq!(a.lookup(name), b.lookup(name), "{name}");
                for address in [0x50, 0x60, 0x70, 0x80, 0x90] {
                    let at = Some(address);
                    assert_eq!(a.has_symbol_at(name, at), b.has_symbol_at(name, at));
                }
            }
        }
        // Every address of an ambiguous name is found, and no other.
        let table = FunctionTable::new(&symbols(&listed), Rules::V1_31);
        assert!(table.lookup("dup").unwrap().ambiguous_address);
        assert!(table.has_symbol_at("dup", Some(0x50)) && table.has_symbol_at("dup", Some(0x60)));
        assert!(!table.has_symbol_at("dup", Some(0x70)) && !table.has_symbol_at("dup", None));
        let one = table.lookup("one").unwrap();
        assert!(!one.ambiguous_address);
        assert!(!table.has_symbol_at("one", Some(0x90)));
    }

    /// pahole 1436daf's `elf_function__has_ambiguous_address`, as
    /// `elf_functions__collect` calls it: address 0 reads as "none yet",
    /// and the last name in byte order is never checked.
    #[test]
    fn ambiguous_addresses_as_pahole_1436daf_decides() {
        let facts = symbols(&[
            ("zero_first", 0),
            ("zero_first", 0x10),
            ("zero_later", 0x10),
            ("zero_later", 0),
            ("two", 0x10),
            ("two", 0x20),
            ("same", 0x30),
            ("same", 0x30),
            ("zz_last", 0x40),
            ("zz_last", 0x50),
        ]);
        let table = FunctionTable::new(&facts, Rules::V1_31);
        let ambiguous = |name| table.lookup(name).unwrap().ambiguous_address;
        assert!(!ambiguous("zero_first"));
        assert!(ambiguous("zero_later"));
        assert!(ambiguous("two"));
        assert!(!ambiguous("same"));
        assert!(!ambiguous("zz_last"));
        // Every address still counts as the name's symbol.
        assert!(table.has_symbol_at("zz_last", Some(0x50)));
        assert!(table.has_symbol_at("zero_first", Some(0x10)));
    }

    /// pahole 1436daf's verdicts (dwarf_loader.c), worked out by hand for
    /// x86-64 (rdi=5, rsi=4, rdx=1, rcx=2) on hand-made CUs.
    #[test]
    fn parameter_verdicts_follow_pahole_1436daf() {
        use dwarf::model::{BaseEncoding, CompositeKind, Node, Qualifier};
        let arena = bumpalo::Bump::new();
        let nodes = vec![
            base_int(),
            composite(CompositeKind::Union, Some("big"), 64, false, &[]),
            composite(CompositeKind::Struct, Some("small_s"), 8, false, &[]),
            composite(CompositeKind::Union, Some("small_u"), 8, false, &[]),
            base("__int128", 16, BaseEncoding::Signed),
            Node::Typedef {
                name: "small_t",
                target: node(2),
                decl_tags: &[],
            },
            Node::Qualified {
                qualifier: Qualifier::Const,
                target: node(5),
            },
            Node::Qualified {
                qualifier: Qualifier::Volatile,
                target: node(2),
            },
        ];
        let cu = cu_with(nodes);
        let map = TypeMap::new(&cu, 8).unwrap();
        let abi = Abi::of(62, 8);
        let verdict = |params: &[(u32, ParamLocation)], clang: bool, changed: bool| {
            let params: Vec<_> = params
                .iter()
                .map(|&(ty, location)| param(Some("p"), node(ty), location))
                .collect();
            let mut f = function("f", arena.alloc_slice_copy(&params), false);
            f.signature_changed = changed;
            parameter_verdict(&f, &map, &abi, clang).unwrap()
        };
        use ParamLocation::{Constant, OptimizedOut, Other, Register};
        let unexpected = |v: Verdict| v.unexpected_register;
        // A 64-byte union travels in memory and takes no register; the
        // dropped `dead` takes slot 0, so x in rdi is unexpected (slot 1
        // is rsi), and a union excuses nothing.
        let big = [(1, Other), (0, OptimizedOut), (0, Register(5))];
        assert!(unexpected(verdict(&big, true, false)));
        // Every struct parameter excuses it, through typedef and const;
        // not through volatile (param__is_struct).
        for excusing in [2, 5, 6] {
            let v = verdict(
                &[(excusing, Register(5)), (0, OptimizedOut), (0, Register(4))],
                true,
                false,
            );
            assert!(!unexpected(v), "type {excusing}");
        }
        for not_excusing in [3, 7] {
            let v = verdict(
                &[
                    (not_excusing, Register(5)),
                    (0, OptimizedOut),
                    (0, Register(4)),
                ],
                true,
                false,
            );
            assert!(unexpected(v), "type {not_excusing}");
        }
        // A 16-byte scalar takes two slots: x is expected in rdx, or in
        // rcx after a dropped parameter.
        assert!(!unexpected(verdict(
            &[(4, Register(5)), (0, Register(1))],
            true,
            false
        )));
        assert!(unexpected(verdict(
            &[(4, Register(5)), (0, OptimizedOut), (0, Register(1))],
            true,
            false
        )));
        // clang: a parameter without register says nothing; no location
        // marks the function optimized (which alone does not skip it).
        let v = verdict(&[(0, Other), (0, OptimizedOut)], true, false);
        assert_eq!(
            v,
            Verdict {
                optimized_params: true,
                unexpected_register: false
            }
        );
        // The seventh argument is past the registers: not checked.
        let seven: Vec<_> = (0..6)
            .map(|i| (0, Register(u16::from(abi.registers[i]))))
            .chain([(0, Register(3))])
            .collect();
        assert!(!unexpected(verdict(&seven, true, false)));
        // gcc (and clang with DW_CC_nocall): a located parameter without
        // register is optimized, a constant one too (gcc only), a wrong
        // register is unexpected.
        assert!(verdict(&[(0, Register(5)), (0, Other)], false, false).optimized_params);
        assert!(!verdict(&[(0, Register(5)), (0, Register(4))], false, false).optimized_params);
        assert!(unexpected(verdict(&[(0, Register(4))], false, false)));
        assert!(unexpected(verdict(&[(0, Register(4))], true, true)));
        assert!(unexpected(verdict(&[(0, Register(4))], true, false)));
        // A located parameter without register: optimized by the gcc
        // rules (which clang's DW_CC_nocall functions follow), not by the
        // clang matching.
        assert!(verdict(&[(0, Other)], true, true).optimized_params);
        assert!(!verdict(&[(0, Other)], true, false).optimized_params);
        let constant = verdict(&[(0, Register(5)), (0, Constant)], false, false);
        assert!(constant.optimized_params && !constant.unexpected_register);
    }

    /// pahole's canonical state: the first definition at a symbol that is
    /// not ruled out speaks for the name.
    #[test]
    fn changed_signatures_skip_through_the_canonical_definition() {
        let mut at = cand(1, &[]);
        at.at_symbol = true;
        let mut changed = at.clone();
        changed.optimized_params = true;
        changed.signature_changed = true;
        let mut elsewhere = changed.clone();
        elsewhere.at_symbol = false;
        let plain = Features::default();
        assert_eq!(canonical_state([&elsewhere, &at].into_iter(), &plain), 1);
        assert_eq!(canonical_state([&changed, &at].into_iter(), &plain), 1);
        assert_eq!(
            canonical_state([&changed, &elsewhere].into_iter(), &plain),
            0
        );
        assert_eq!(
            canonical_state([&elsewhere, &elsewhere].into_iter(), &plain),
            0
        );
        assert!(skips_optimized_params(&changed, &plain) && !skips_optimized_params(&at, &plain));
        // true_signature: optimized parameters rule no definition out, so
        // the first one at a symbol speaks for the name.
        let true_sig = Features {
            true_signature: true,
            ..Features::default()
        };
        assert!(!skips_optimized_params(&changed, &true_sig));
        assert_eq!(canonical_state([&changed, &at].into_iter(), &true_sig), 0);
    }

    #[test]
    fn candidates_skip_declarations_and_unnamed_params() {
        let arena = bumpalo::Bump::new();
        let named =
            arena.alloc_slice_copy(&[param(Some("a"), node(0), ParamLocation::Register(5))]);
        let unnamed = arena.alloc_slice_copy(&[param(None, node(0), ParamLocation::Register(5))]);
        let mut cu = cu_with(vec![base_int()]);
        cu.functions = vec![
            function("f", named, false),
            function("g", unnamed, false),
            function("h", named, true),
            function("nosym", named, false),
        ];
        let facts = symbols(&[("f", 1), ("g", 2), ("h", 3)]);
        let table = FunctionTable::new(&facts, Rules::V1_24);
        let map = TypeMap::new(&cu, 8).unwrap();
        let found = function_candidates(&cu, &map, &table, 8, false, 62, true).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "f");
        assert_eq!(
            found[0].proto.params,
            vec![Param {
                name: test_name("a"),
                ty: TypeId(1)
            }]
            .into()
        );
        assert!(!found[0].unexpected_register && !found[0].optimized_params);

        // Without function symbols, only external definitions.
        let empty = FunctionTable::new(&SymbolFacts::default(), Rules::V1_24);
        cu.functions[0].external = true;
        let map = TypeMap::new(&cu, 8).unwrap();
        let found = function_candidates(&cu, &map, &empty, 8, false, 62, true).unwrap();
        assert_eq!(found.iter().map(|c| c.name).collect::<Vec<_>>(), vec!["f"]);
        // pahole 1436daf (btf_encoder__encode_cu) finds no ELF function
        // for any name in an empty table and encodes none.
        let empty = FunctionTable::new(&SymbolFacts::default(), Rules::V1_31);
        assert!(function_candidates(&cu, &map, &empty, 8, false, 62, true)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn unexpected_register_unless_a_wide_param() {
        let arena = bumpalo::Bump::new();
        // First argument in rsi (DWARF 4) instead of rdi (5).
        let params =
            arena.alloc_slice_copy(&[param(Some("a"), node(0), ParamLocation::Register(4))]);
        let mut cu = cu_with(vec![
            base_int(),
            composite(
                dwarf::model::CompositeKind::Struct,
                Some("big"),
                16,
                false,
                &[],
            ),
        ]);
        cu.functions = vec![function("f", params, false)];
        let facts = symbols(&[("f", 1)]);
        let table = FunctionTable::new(&facts, Rules::V1_31);
        let map = TypeMap::new(&cu, 8).unwrap();
        let found = function_candidates(&cu, &map, &table, 8, false, 62, true).unwrap();
        assert!(found[0].unexpected_register);

        let wide = arena.alloc_slice_copy(&[
            param(Some("s"), node(1), ParamLocation::Other),
            param(Some("a"), node(0), ParamLocation::Register(4)),
        ]);
        cu.functions = vec![function("f", wide, false)];
        let map = TypeMap::new(&cu, 8).unwrap();
        let found = function_candidates(&cu, &map, &table, 8, false, 62, true).unwrap();
        assert!(!found[0].unexpected_register && found[0].optimized_params);
    }

    #[test]
    fn stack_arguments_are_not_optimized_out() {
        // x86-64 passes the 7th argument on the stack: a frame-relative
        // location there is normal, not an optimization.
        let arena = bumpalo::Bump::new();
        let mut params: Vec<_> = [5u16, 4, 1, 2, 8, 9]
            .iter()
            .map(|register| param(Some("r"), node(0), ParamLocation::Register(*register)))
            .collect();
        params.push(param(Some("stack"), node(0), ParamLocation::Other));
        let params = arena.alloc_slice_copy(&params);
        let mut cu = cu_with(vec![base_int()]);
        cu.functions = vec![function("f", params, false)];
        let facts = symbols(&[("f.isra.0", 1)]);
        let table = FunctionTable::new(&facts, Rules::V1_31);
        let map = TypeMap::new(&cu, 8).unwrap();
        let found = function_candidates(&cu, &map, &table, 8, false, 62, true).unwrap();
        assert!(!found[0].optimized_params && !found[0].unexpected_register);
        // The DWARF code is at 0x1000, the clone's symbol at 1.
        assert!(!found[0].at_symbol && !found[0].optimized_symbol);
    }

    fn proto_btf() -> Btf<'static> {
        let mut btf = Btf::default();
        btf.add(Type::Int(Int {
            name: "int",
            size: 4,
            encoding: IntEncoding(IntEncoding::SIGNED),
            offset: 0,
            bits: 32,
        })); // 1
        btf.add(Type::Const(TypeId(1))); // 2
        btf.add(Type::Struct(Composite {
            name: "s",
            size: 4,
            members: Box::default(),
            kind_flag: false,
        })); // 3
        btf.add(Type::Fwd(Fwd {
            name: "s",
            union: false,
        })); // 4
        btf.add(Type::Ptr(TypeId(3))); // 5
        btf.add(Type::Ptr(TypeId(4))); // 6
        btf.add(Type::Int(Int {
            name: "long int",
            size: 8,
            encoding: IntEncoding(IntEncoding::SIGNED),
            offset: 0,
            bits: 64,
        })); // 7
        btf
    }

    #[test]
    fn loose_type_matching() {
        let btf = proto_btf();
        assert!(types_match(&btf, TypeId(1), TypeId(2)), "const is ignored");
        assert!(
            types_match(&btf, TypeId(5), TypeId(6)),
            "struct matches its FWD by name"
        );
        assert!(!types_match(&btf, TypeId(1), TypeId(7)));
        assert!(!types_match(&btf, TypeId(1), TypeId::VOID));
        // Function pointers: pahole 1436daf's types__match compares the
        // parameter types too (its loop over btf_params), not only the
        // count and the return type.
        let mut btf = btf;
        let proto = |btf: &mut Btf<'static>, param: u32| {
            btf.add(Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name: test_name("x"),
                    ty: TypeId(param),
                }]
                .into(),
            }))
        };
        let (int_arg, const_arg, long_arg) =
            (proto(&mut btf, 1), proto(&mut btf, 2), proto(&mut btf, 7));
        assert!(types_match(&btf, int_arg, const_arg));
        assert!(!types_match(&btf, int_arg, long_arg));
    }

    fn cand(ret: u32, params: &[u32]) -> FunctionCandidate<'static> {
        FunctionCandidate {
            name: "f",
            proto: FuncProto {
                ret: TypeId(ret),
                params: params
                    .iter()
                    .map(|ty| Param {
                        name: test_name("x"),
                        ty: TypeId(*ty),
                    })
                    .collect(),
            },
            decl_tags: vec![("tag", -1)],
            optimized_params: false,
            unexpected_register: false,
            ambiguous_address: false,
            at_symbol: false,
            optimized_symbol: false,
            kfunc_flags: None,
            signature_changed: false,
            true_signature: TrueSignature::default(),
            reordered: false,
        }
    }

    #[test]
    fn v1_24_first_definition_wins() {
        let mut btf = proto_btf();
        let before = btf.count();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), cand(7, &[])],
            &Features::default(),
            &mut Vec::new(),
        );
        // FUNC_PROTO + FUNC + DECL_TAG, once.
        assert_eq!(btf.count(), before + 3);
        assert_eq!(
            btf.types[before as usize],
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![Param {
                    name: test_name("x"),
                    ty: TypeId(1)
                }]
                .into()
            })
        );
        assert_eq!(
            btf.types[before as usize + 1],
            Type::Func(Object {
                name: "f",
                ty: TypeId(before + 1),
                linkage: Linkage::Static
            })
        );
        assert_eq!(
            btf.types[before as usize + 2],
            Type::DeclTag(DeclTag {
                name: "tag",
                ty: TypeId(before + 2),
                component_idx: -1,
                attribute: false,
            })
        );
    }

    #[test]
    fn v1_31_prefers_the_definition_at_the_symbol_address() {
        // A weak definition overridden at link time keeps its DWARF; the
        // FUNC must describe the definition the symbol points to.
        let strict = Features::parse("default", true).unwrap();
        let mut weak = cand(1, &[1]);
        weak.proto.params[0].name = test_name("__unused");
        let mut strong = cand(1, &[1]);
        strong.proto.params[0].name = test_name("regs");
        strong.at_symbol = true;
        let mut btf = proto_btf();
        let before = btf.count() as usize;
        emit_functions(&mut btf, vec![weak, strong], &strict, &mut Vec::new());
        let Type::FuncProto(proto) = &btf.types[before] else {
            panic!("{:?}", btf.types[before])
        };
        assert_eq!(proto.params[0].name, "regs");
    }

    #[test]
    fn v1_31_reordered_parameters_skip_whatever_the_features() {
        // ext4_es_can_be_merged.isra.0: the out-of-line copy lists (es2,
        // es1), its abstract origin (es1, es2): pahole's reordered_parm.
        let lenient = Features::parse("var,float", true).unwrap();
        let mut reordered = cand(1, &[1]);
        reordered.reordered = true;
        let mut btf = proto_btf();
        let before = btf.count();
        let mut skips = Vec::new();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), reordered],
            &lenient,
            &mut skips,
        );
        assert_eq!(btf.count(), before);
        assert_eq!(
            skips,
            ["f : skipping BTF encoding of function due to reordered parameters"]
        );
    }

    #[test]
    fn v1_31_clones_with_optimized_parameters() {
        let strict = Features::parse("default", true).unwrap();
        let clone = |optimized, at_clone| FunctionCandidate {
            optimized_params: optimized,
            at_symbol: at_clone,
            optimized_symbol: at_clone,
            ..cand(1, &[1])
        };
        let count = |candidates| {
            let mut btf = proto_btf();
            let before = btf.count();
            emit_functions(&mut btf, candidates, &strict, &mut Vec::new());
            btf.count() - before
        };
        // The code at `f.constprop.0`'s address lost a parameter: the
        // source signature is no longer what callers use.
        assert_eq!(count(vec![clone(true, true)]), 0);
        assert_eq!(count(vec![clone(false, true)]), 3);
        // pahole cannot tell (no DW_AT_low_pc at a symbol: a module, or a
        // function split into ranges): the FUNC stays.
        assert_eq!(count(vec![clone(true, false)]), 3);
        // optimized_func changes nothing in pahole 1436daf (its flag is
        // read by no encoder code).
        let no_clones = Features {
            optimized_func: false,
            ..strict
        };
        let mut btf = proto_btf();
        let before = btf.count();
        emit_functions(
            &mut btf,
            vec![clone(false, true)],
            &no_clones,
            &mut Vec::new(),
        );
        assert_eq!(btf.count(), before + 3);
    }

    #[test]
    fn v1_31_consistent_func_drops_disagreeing_prototypes() {
        let strict = Features::parse("default", true).unwrap();
        let mut btf = proto_btf();
        let before = btf.count();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), cand(7, &[1])],
            &strict,
            &mut Vec::new(),
        );
        assert_eq!(btf.count(), before, "return types differ: no FUNC");

        let mut btf = proto_btf();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), cand(2, &[2])],
            &strict,
            &mut Vec::new(),
        );
        assert_eq!(
            btf.count(),
            before + 3,
            "const on one side only still matches"
        );

        let mut btf = proto_btf();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), cand(1, &[7])],
            &strict,
            &mut Vec::new(),
        );
        assert_eq!(btf.count(), before, "parameter types differ: no FUNC");

        let lenient = Features::parse("var,float", true).unwrap();
        let mut btf = proto_btf();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), cand(7, &[1])],
            &lenient,
            &mut Vec::new(),
        );
        assert_eq!(
            btf.count(),
            before + 2,
            "without consistent_func one FUNC per name; no decl_tag feature"
        );

        let mut unexpected = cand(1, &[1]);
        unexpected.unexpected_register = true;
        let mut btf = proto_btf();
        emit_functions(
            &mut btf,
            vec![cand(1, &[1]), unexpected],
            &strict,
            &mut Vec::new(),
        );
        assert_eq!(btf.count(), before);
    }

    #[test]
    fn kfuncs_are_marked_by_their_matched_name() {
        let mut facts = symbols(&[
            ("bpf_obj_new", 0x10),
            ("bpf_iter.isra.0", 0x20),
            ("plain", 0x30),
        ]);
        facts.kfuncs = vec![
            dwarf::symbols::Kfunc {
                name: "bpf_iter",
                flags: KF_FASTCALL,
            },
            dwarf::symbols::Kfunc {
                name: "bpf_obj_new",
                flags: 0,
            },
            // Listed in a set but without a function symbol: nothing to tag.
            dwarf::symbols::Kfunc {
                name: "gone",
                flags: 0,
            },
        ];
        let table = FunctionTable::new(&facts, Rules::V1_31);
        assert_eq!(table.lookup("bpf_obj_new").unwrap().kfunc_flags, Some(0));
        assert_eq!(
            table.lookup("bpf_iter").unwrap().kfunc_flags,
            Some(KF_FASTCALL)
        );
        assert_eq!(table.lookup("plain").unwrap().kfunc_flags, None);
        assert!(table.lookup("gone").is_none());
    }

    #[test]
    fn kfunc_decl_tags_come_first_and_only_with_the_feature() {
        let strict = Features::parse("default", true).unwrap();
        let tags_of = |features: &Features, flags: Option<u32>| {
            let mut btf = proto_btf();
            let before = btf.count() as usize;
            let candidate = FunctionCandidate {
                kfunc_flags: flags,
                ..cand(1, &[1])
            };
            emit_functions(&mut btf, vec![candidate], features, &mut Vec::new());
            let func = TypeId(before as u32 + 2);
            btf.types[before..]
                .iter()
                .filter_map(|ty| match ty {
                    Type::DeclTag(tag) => {
                        assert_eq!((tag.ty, tag.component_idx), (func, -1));
                        Some(tag.name)
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(tags_of(&strict, None), vec!["tag"]);
        assert_eq!(tags_of(&strict, Some(0)), vec!["bpf_kfunc", "tag"]);
        assert_eq!(
            tags_of(&strict, Some(KF_FASTCALL | 1)),
            vec!["bpf_kfunc", "bpf_fastcall", "tag"]
        );
        let no_kfunc_tags = Features {
            decl_tag_kfuncs: false,
            ..strict
        };
        assert_eq!(tags_of(&no_kfunc_tags, Some(0)), vec!["tag"]);
        let no_decl_tags = Features {
            decl_tag: false,
            ..strict
        };
        assert!(tags_of(&no_decl_tags, Some(KF_FASTCALL)).is_empty());
    }
}
