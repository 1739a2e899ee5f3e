//! What one CU proposes for a FUNC ([`FunctionCandidate`]), shared by
//! the FUNC selection ([`super::functions`]) and pahole's `true_signature`
//! feature ([`super::true_signature`]); it depends on neither.

use crate::types::FuncProto;

/// A function definition one CU proposes for a FUNC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCandidate<'input> {
    /// The name, which is also the ELF function name it matched.
    pub name: &'input str,
    /// Its prototype, with CU-local type ids.
    pub proto: FuncProto<'input>,
    /// `btf_decl_tag` values with their component index (-1: the function,
    /// else the parameter index).
    pub decl_tags: Vec<(&'input str, i32)>,
    /// A parameter is optimized out or only known as a constant.
    pub optimized_params: bool,
    /// A parameter is not in the register the calling convention puts it
    /// in, so the BTF signature would mislead tracers.
    pub unexpected_register: bool,
    /// The ELF symbols of this name are at several addresses.
    pub ambiguous_address: bool,
    /// pahole 1.31's address match (`state->addr` equal to a symbol's of
    /// this name): the definition's `DW_AT_low_pc` is where an ELF symbol
    /// of its name points, so it is the copy the symbol names (not, say, a
    /// weak definition the linker overrode). Never for a function given
    /// by address ranges (a `.cold` piece split off), whose `DW_AT_low_pc`
    /// libdw does not find; never in a relocatable file, whose DWARF
    /// addresses libdwfl lays out from 0x10000 while its symbols stay
    /// section offsets.
    pub at_symbol: bool,
    /// pahole 1.31's `optimized_symbol`: as `at_symbol`, and the symbol
    /// at that address is an `.isra`/`.constprop` copy.
    pub optimized_symbol: bool,
    /// The function is a kfunc (listed in a `.BTF_ids` kfunc set), with
    /// its `KF_*` flags: with `decl_tag_kfuncs` its FUNC is tagged.
    pub kfunc_flags: Option<u32>,
    /// pahole's `signature_changed` for a function of a clang unit
    /// (`DW_CC_nocall`, see [`dwarf::model::Function::signature_changed`]):
    /// with `optimized_params`, pahole leaves the name out when this
    /// definition is the one that speaks for it.
    pub signature_changed: bool,
    /// `true_signature`'s facts (default without the feature).
    pub true_signature: TrueSignature<'input>,
    /// pahole's `reordered_parm` (see [`dwarf::model::Function::reordered`]).
    pub reordered: bool,
}

/// What `true_signature` adds to a FUNC candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrueSignature<'input> {
    /// The first symbol (in symbol-table order) of the candidate's name
    /// that has a '.' in it and sits at the candidate's `DW_AT_low_pc`
    /// (pahole's `state->sym`).
    pub symbol: Option<&'input str>,
}
