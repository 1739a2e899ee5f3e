//! What the walk records for the end of the unit, when facts that need
//! another DIE are settled (`resolve.rs`): functions, parameters and
//! variables as read, enums and DWARF 4 bitfields still to settle.

use super::rules::Value;
use crate::model::{NodeId, ParamEntry, ParamLocation, TypeRef};

/// A subprogram as read, before inheritance.
pub(super) struct RawFunction<'input, 'arena> {
    /// `.debug_info` offset of the DIE.
    pub offset: u64,
    pub name: Option<&'input str>,
    pub linkage_name: Option<&'input str>,
    pub ret: Option<TypeRef>,
    pub external: bool,
    pub declaration: bool,
    pub inline: bool,
    pub low_pc: Option<u64>,
    pub entry_pc: Option<u64>,
    pub nocall: bool,
    pub abstract_origin: Option<u64>,
    pub specification: Option<u64>,
    pub params: &'arena [RawParam<'input, 'arena>],
    pub varargs: bool,
    pub decl_tags: &'arena [&'input str],
}

/// A subprogram's formal parameter as read.
#[derive(Clone, Copy)]
pub(super) struct RawParam<'input, 'arena> {
    /// Unit offset of the DIE, for the locations its concrete copies share.
    pub offset: u64,
    pub name: Option<&'input str>,
    pub ty: Option<TypeRef>,
    pub origin: Option<u64>,
    pub location: ParamLocation,
    /// pahole 1436daf's facts of this DIE's own location.
    pub entry: ParamEntry,
    pub decl_tags: &'arena [&'input str],
}

/// What a parameter offers to parameters whose abstract origin it is.
#[derive(Clone, Copy)]
pub(super) struct ParamOrigin<'input> {
    pub name: Option<&'input str>,
    pub ty: Option<TypeRef>,
    pub origin: Option<u64>,
    /// Its position among its subprogram's formal parameters (pahole's
    /// `parameter->idx`).
    pub index: usize,
}

/// A variable as read, before inheritance.
pub(super) struct RawVariable<'input, 'arena> {
    /// `.debug_info` offset of the DIE.
    pub offset: u64,
    pub name: Option<&'input str>,
    pub ty: Option<TypeRef>,
    pub external: bool,
    pub declaration: bool,
    pub address: Option<u64>,
    pub in_function: bool,
    /// `DW_AT_specification` (or `DW_AT_abstract_origin`) target.
    pub origin: Option<u64>,
    pub decl_tags: &'arena [&'input str],
}

/// An enum whose enumerators wait for the underlying type's signedness.
pub(super) struct PendingEnum<'input, 'arena> {
    pub node: NodeId,
    pub die: u64,
    pub underlying: Option<TypeRef>,
    pub enumerators: bumpalo::collections::Vec<'arena, (&'input str, Value<'input>)>,
}

/// A DWARF 4 bitfield without `DW_AT_byte_size`: its storage unit is the
/// size of its type, known only once the type was read.
pub(super) struct PendingBitfield {
    pub composite: NodeId,
    pub member: usize,
    pub location_bits: u64,
    pub bit_offset: i64,
    pub bit_size: u64,
    pub ty: TypeRef,
    pub die: u64,
}
