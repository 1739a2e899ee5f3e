//! pahole's `true_signature` feature (dwarves 1436daf, pahole 1.31):
//! FUNCs for the signature a function's code really has.
//!
//! With the feature, pahole changes three things, all reproduced here:
//! - **The name.** A definition whose code starts where an ELF symbol with
//!   a '.' in its name points (gcc's `foo.isra.0`, `foo.constprop.0`) is
//!   encoded under that symbol's name, the first such symbol in symbol
//!   table order (`btf_encoder__save_func`, `btf_encoder__add_func`). Of
//!   the definitions of one name, in the order pahole merges them, the
//!   first that has such a symbol is the one encoded, unless it or one
//!   before it has a parameter in an unexpected register (pahole's merged
//!   `unexpected_reg`); the name then gets no suffixed FUNC, and the usual
//!   rules decide (`btf_encoder__add_true_signature`). This FUNC bypasses
//!   the consistency, ambiguous-address and kfunc handling: it is neither
//!   compared with the other definitions nor tagged as a kfunc.
//! - **The parameters.** For a clang function whose signature changed
//!   (`DW_CC_nocall`), parameters optimized out are dropped, a parameter on
//!   the stack or in no register makes the register check fail instead of
//!   counting as optimized, and an aggregate of which only one member
//!   travels in a register (`DW_OP_piece`s) becomes that member, named
//!   `<param>__<member>` (`function__analyze_parameter_locations` with
//!   `true_sig_enabled`). For a definition whose parameters sit at other
//!   indices than in its abstract origin (gcc's clones: `reordered_parm`),
//!   parameters without a location or optimized are dropped, as pahole does
//!   with or without the feature.
//! - **The skips.** Optimized parameters never exclude a function
//!   (`btf_encoder_func_state__skip_optimized_parms` is false).
//!
//! Not modelled, as elsewhere in btfenc: pahole's `uncertain_parm_loc`
//! (packed structs past the register arguments).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use foldhash::fast::FixedState;

use dwarf::model::{CompositeKind, CuModel, Function, Node, TypeRef};
use dwarf::SymbolFacts;

use super::candidate::{FunctionCandidate, TrueSignature};
use super::error::Error;
use super::type_map::TypeMap;
use crate::types::{FuncProto, Name, Param, TypeId};

type HashMap<K, V> = std::collections::HashMap<K, V, FixedState>;

/// Suffixes of symbols pahole does not collect as functions at all.
const NON_FUNCTION_SUFFIXES: [&str; 2] = [".cold", ".part"];

/// The '.'-suffixed function symbols, by (name before the first '.',
/// address): the first one in symbol-table order.
#[derive(Debug, Default)]
pub(crate) struct SuffixedSymbols<'input> {
    by_address: HashMap<(&'input str, u64), &'input str>,
}

impl<'input> SuffixedSymbols<'input> {
    pub(crate) fn new(symbols: &SymbolFacts<'input>) -> Self {
        let mut by_address: HashMap<(&'input str, u64), &'input str> = HashMap::default();
        for symbol in &symbols.functions {
            let Some(dot) = symbol.name.find('.') else {
                continue;
            };
            if NON_FUNCTION_SUFFIXES
                .iter()
                .any(|skip| symbol.name.contains(skip))
            {
                continue;
            }
            by_address
                .entry((&symbol.name[..dot], symbol.address))
                .or_insert(symbol.name);
        }
        SuffixedSymbols { by_address }
    }

    /// pahole's `state->sym`: only for a definition with an address
    /// (`state->addr` is 0 for one without, and for the first function of
    /// a relocatable file's `.text`).
    fn at(&self, name: &str, address: Option<u64>) -> Option<&'input str> {
        let address = address.filter(|&address| address != 0)?;
        self.by_address.get(&(name, address)).copied()
    }
}

/// The calling convention pahole's location rules assume
/// (`arch__set_register_params`, `arch__nr_register_params`,
/// `arch__agg_use_two_regs`, `cu->addr_size`).
struct Abi {
    registers: &'static [u8],
    count: usize,
    two_register_aggregates: bool,
    pointer_size: u64,
}

/// One parameter as `function__analyze_parameter_locations` sees it.
#[derive(Clone, Copy, Debug)]
struct State<'input> {
    has_location: bool,
    has_const_value: bool,
    loc_stack: bool,
    loc_const_value: bool,
    register: Option<u8>,
    in_memory: bool,
    slots: usize,
    /// Which of `first_reg_fields` / `second_reg_fields` are non-zero
    /// (bits 0 and 1), for an aggregate wider than a register, passed in
    /// two; 0 otherwise.
    pieces: u8,
    /// `true_sig_member_name` with the member's type.
    member: Option<(&'input str, TypeRef)>,
    ty: TypeRef,
    optimized: bool,
    unexpected: bool,
}

/// Adjusts a FUNC candidate of `function` for `true_signature`: its
/// verdict and prototype as pahole computes them with the feature on, and
/// the suffixed symbol it may be encoded under. `symbols` is `None` for a
/// relocatable file: libdwfl gives its sections addresses of its own
/// (after a red zone), which never equal the symbols' section offsets, so
/// pahole finds no suffixed symbol at a definition's address there.
pub(crate) fn rewrite<'input>(
    candidate: &mut FunctionCandidate<'input>,
    function: &Function<'input, '_>,
    cu: &CuModel<'input, '_>,
    map: &TypeMap<'_, 'input, '_>,
    machine: u16,
    pointer_size: u32,
    symbols: Option<&SuffixedSymbols<'input>>,
) -> Result<(), Error> {
    let abi = Abi {
        registers: dwarf::walk::entry_register_params(machine),
        count: dwarf::walk::nr_register_params(machine),
        two_register_aggregates: dwarf::walk::aggregates_use_two_registers(machine),
        pointer_size: u64::from(pointer_size),
    };
    // pahole asks for DW_CC_nocall in clang's units only.
    let changed = cu.producer_clang && function.signature_changed;
    let mut states = Vec::with_capacity(function.params.len());
    // param__is_struct, asked of every parameter.
    let mut has_struct = false;
    for param in function.params {
        let chain = map.chain_end(param.ty)?;
        has_struct |= chain.is_struct();
        let byte_size = map.chain_byte_size(&chain)?;
        let wide = abi.two_register_aggregates && byte_size > abi.pointer_size;
        let widest = if abi.two_register_aggregates {
            2 * abi.pointer_size
        } else {
            abi.pointer_size
        };
        let slots = if wide {
            usize::try_from(byte_size.div_ceil(abi.pointer_size.max(1)))
                .unwrap_or(usize::MAX)
                .max(1)
        } else {
            1
        };
        let entry = param.entry;
        let member = if wide {
            entry
                .piece_member_offset
                .and_then(|offset| member_at(cu, param.ty, u32::from(offset)))
        } else {
            None
        };
        states.push(State {
            has_location: entry.has_location,
            has_const_value: entry.has_const_value,
            loc_stack: entry.loc_stack,
            loc_const_value: entry.loc_const_value,
            register: entry.register_for(byte_size, pointer_size, abi.two_register_aggregates),
            in_memory: byte_size > widest,
            slots,
            pieces: if wide { entry.piece_halves } else { 0 },
            member,
            ty: param.ty,
            optimized: false,
            unexpected: false,
        });
    }
    if cu.producer_clang && !changed {
        match_clang_locations(&mut states, &abi);
    } else {
        analyze_locations(&mut states, &abi, cu.producer_clang, changed);
    }
    candidate.optimized_params = states.iter().any(|s| s.optimized || !s.has_location);
    candidate.unexpected_register = states.iter().any(|s| s.unexpected) && !has_struct;

    // btf_encoder__save_func: the parameters the FUNC_PROTO lists.
    let reordered = function.reordered;
    let mut params = Vec::with_capacity(candidate.proto.params.len());
    for (param, state) in function.params.iter().zip(&states) {
        if (reordered && (!state.has_location || state.optimized)) || (changed && state.optimized) {
            continue;
        }
        let name = match (param.name, state.member) {
            (Some(name), Some((member, _))) if changed => {
                Name::new(synthesized(name, member)).unwrap_or(Name::EMPTY)
            }
            _ => map.name(param.name)?,
        };
        params.push(Param {
            name,
            ty: map.id(state.ty)?,
        });
    }
    if function.varargs {
        params.push(Param {
            name: Name::EMPTY,
            ty: TypeId::VOID,
        });
    }
    candidate.proto = FuncProto {
        ret: candidate.proto.ret,
        params: params.into_boxed_slice(),
    };
    candidate.true_signature = TrueSignature {
        symbol: symbols.and_then(|symbols| symbols.at(function.name, function.entry_pc)),
    };
    Ok(())
}

/// `get_member_with_offset`: through typedefs and qualifiers (DIEs without
/// `DW_AT_byte_size`) to a struct, and its named member at byte `offset`.
fn member_at<'input>(
    cu: &CuModel<'input, '_>,
    mut ty: TypeRef,
    offset: u32,
) -> Option<(&'input str, TypeRef)> {
    for _ in 0..64 {
        let TypeRef::Node(id) = ty else { return None };
        match cu.nodes.get(id.0 as usize)? {
            Node::Typedef { target, .. } | Node::Qualified { target, .. } => ty = *target,
            Node::Composite {
                kind: CompositeKind::Struct,
                members,
                declaration: false,
                ..
            } => {
                return members
                    .iter()
                    .find(|member| member.bit_offset == u64::from(offset) * 8)
                    .and_then(|member| Some((member.name?, member.ty)));
            }
            _ => return None,
        }
    }
    None
}

/// `<param>__<member>`, interned for the life of the process: few
/// functions have one, and the BTF being built borrows its names.
fn synthesized(param: &str, member: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str, FixedState>>> = OnceLock::new();
    let text = format!("{param}__{member}");
    let names = NAMES.get_or_init(|| Mutex::new(HashSet::with_hasher(FixedState::default())));
    let mut names = names
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(text.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// `function__match_clang_parameter_locations` (clang, signature not
/// changed): unchanged by the feature.
fn match_clang_locations(states: &mut [State<'_>], abi: &Abi) {
    let mut index = 0usize;
    for state in states {
        if state.in_memory {
            continue;
        }
        if index >= abi.count {
            break;
        }
        if let Some(register) = state.register {
            let end = index.saturating_add(state.slots).min(abi.count);
            if !(index..end).any(|slot| abi.registers.get(slot) == Some(&register)) {
                state.unexpected = true;
            }
        }
        index = index.saturating_add(state.slots);
    }
}

/// `ftype__next_parameter_preserves_slots`: the next parameter is in the
/// register that follows this one's `slots`.
fn next_preserves_slots(next: Option<&State<'_>>, index: usize, slots: usize, abi: &Abi) -> bool {
    let Some(register) = next.and_then(|next| next.register) else {
        return false;
    };
    let at = index.saturating_add(slots);
    at < abi.count && abi.registers.get(at) == Some(&register)
}

/// `function__analyze_parameter_locations` for gcc's functions and clang's
/// whose signature changed; `enabled` is its `true_sig_enabled`.
fn analyze_locations(states: &mut [State<'_>], abi: &Abi, producer_clang: bool, enabled: bool) {
    let mut index = 0usize;
    for at in 0..states.len() {
        let next = states.get(at + 1).copied();
        let Some(state) = states.get_mut(at) else {
            break;
        };
        let available = index < abi.count;
        let expected = if available {
            abi.registers.get(index).copied()
        } else {
            None
        };
        let taken = if state.in_memory { 1 } else { state.slots };
        let mut consumes = true;
        if state.has_location {
            if enabled && state.loc_const_value {
                state.optimized = true;
                consumes = false;
            } else if !available {
                consumes = false;
            } else if enabled && state.loc_stack {
                if state.in_memory {
                    consumes = false;
                } else {
                    state.unexpected = true;
                }
            } else if state.register.is_none() {
                if enabled {
                    state.unexpected = true;
                } else {
                    state.optimized = true;
                }
            } else if expected.is_some() && expected != state.register {
                state.unexpected = true;
            } else if enabled && state.pieces != 0 {
                if state.pieces == 0b11 {
                    index = index.saturating_add(state.slots);
                    continue;
                }
                if next_preserves_slots(next.as_ref(), index, state.slots, abi) {
                    state.member = None;
                    index = index.saturating_add(state.slots);
                    continue;
                }
                if let Some((_, ty)) = state.member {
                    state.ty = ty;
                    index = index.saturating_add(1);
                    continue;
                }
            }
        } else if state.has_const_value && !producer_clang {
            state.optimized = true;
        } else if enabled {
            if available && next_preserves_slots(next.as_ref(), index, state.slots, abi) {
                index = index.saturating_add(state.slots);
                continue;
            }
            state.optimized = true;
            consumes = false;
        }
        if consumes {
            index = index.saturating_add(taken);
        }
    }
}

/// `btf_encoder__add_true_signature` for the definitions of one name, in
/// pahole's merge order: the index of the one to encode under its
/// suffixed symbol, if any. pahole reads each state's `unexpected_reg`
/// after `saved_functions_combine`: the first state then carries the flag
/// of the whole group, a later one that of itself and those before it.
pub(crate) fn pick<'a, 'input: 'a>(
    members: impl Iterator<Item = &'a FunctionCandidate<'input>> + Clone,
) -> Option<usize> {
    let all = members.clone().any(|member| member.unexpected_register);
    let mut unexpected = false;
    for (at, member) in members.enumerate() {
        unexpected |= member.unexpected_register;
        if member.true_signature.symbol.is_some() {
            let merged = if at == 0 { all } else { unexpected };
            return (!merged).then_some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use dwarf::model::NodeId;

    /// x86-64 as pahole 1436daf sets it up: rdi, rsi, rdx, rcx, r8, r9.
    fn x86_64() -> Abi {
        Abi {
            registers: &[5, 4, 1, 2, 8, 9],
            count: 6,
            two_register_aggregates: true,
            pointer_size: 8,
        }
    }

    fn located(register: Option<u8>) -> State<'static> {
        State {
            has_location: true,
            has_const_value: false,
            loc_stack: false,
            loc_const_value: false,
            register,
            in_memory: false,
            slots: 1,
            pieces: 0,
            member: None,
            ty: TypeRef::Node(NodeId(0)),
            optimized: false,
            unexpected: false,
        }
    }

    fn wide(register: u8, pieces: u8, member: Option<&'static str>) -> State<'static> {
        State {
            slots: 2,
            pieces,
            member: member.map(|name| (name, TypeRef::Node(NodeId(9)))),
            ..located(Some(register))
        }
    }

    /// `tc_pieces(struct tc_pair a, struct tc_pair b, int i)` of
    /// fixtures/src/truesig-clang.c as clang 19 describes it: `a` is
    /// `DW_OP_reg5, DW_OP_piece 8` (only f1), `b` rsi:rdx whole, `i` in
    /// rcx. `a` becomes its member and takes one register, so `b` and `i`
    /// are where they should be.
    #[test]
    fn one_member_left_takes_one_register() {
        let mut states = [
            wide(5, 0b01, Some("f1")),
            wide(4, 0b11, None),
            located(Some(2)),
        ];
        analyze_locations(&mut states, &x86_64(), true, true);
        assert_eq!(states[0].ty, TypeRef::Node(NodeId(9)));
        assert_eq!(states[0].member.map(|m| m.0), Some("f1"));
        assert!(states.iter().all(|s| !s.unexpected && !s.optimized));
        // Without the feature the same DWARF reads as the source's
        // signature with `i` one register early: unexpected.
        let mut states = [
            wide(5, 0b01, Some("f1")),
            wide(4, 0b11, None),
            located(Some(2)),
        ];
        analyze_locations(&mut states, &x86_64(), true, false);
        assert!(states[2].unexpected);
    }

    /// A member candidate whose next parameter still sits after the whole
    /// aggregate keeps the aggregate (and its name).
    #[test]
    fn aggregate_kept_when_the_next_parameter_follows_it() {
        let mut states = [wide(5, 0b01, Some("f1")), located(Some(1))];
        analyze_locations(&mut states, &x86_64(), true, true);
        assert_eq!(states[0].member, None);
        assert_eq!(states[0].ty, TypeRef::Node(NodeId(0)));
        assert!(!states[1].unexpected);
    }

    /// clang's dead argument: no location, dropped, and the next one
    /// takes its register; one on the stack or in no register is
    /// unexpected; a constant first location is optimized.
    #[test]
    fn clang_changed_signature_rules() {
        let dead = State {
            has_location: false,
            ..located(None)
        };
        let mut states = [located(Some(5)), dead, located(Some(4))];
        analyze_locations(&mut states, &x86_64(), true, true);
        assert!(states[1].optimized && !states[2].unexpected);

        let stack = State {
            loc_stack: true,
            ..located(None)
        };
        let mut states = [stack];
        analyze_locations(&mut states, &x86_64(), true, true);
        assert!(states[0].unexpected);

        let constant = State {
            loc_const_value: true,
            ..located(None)
        };
        let mut states = [constant, located(Some(5))];
        analyze_locations(&mut states, &x86_64(), true, true);
        assert!(states[0].optimized && !states[1].unexpected);
    }
}
