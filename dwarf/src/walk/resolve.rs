//! The facts settled after the whole unit was read: attributes inherited
//! through `DW_AT_abstract_origin`/`DW_AT_specification`, enumerator signs,
//! and DWARF 4 bitfields whose storage size is their type's.

use super::pending::{RawFunction, RawParam};
use super::rules::{constant_bits, dwarf4_bit_offset};
use super::Walker;
use crate::error::{ErrorKind, Result};
use crate::model::{
    BaseEncoding, CuModel, Enumerator, Function, Node, Param, ParamEntry, ParamLocation, TypeRef,
    Variable,
};

/// How many `DW_AT_abstract_origin`/`DW_AT_specification` links are
/// followed; real chains have two at most, and a cycle must end.
const MAX_CHAIN: usize = 8;

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
    fn node_at(&self, ty: TypeRef) -> Option<&Node<'input, 'arena>> {
        match ty {
            TypeRef::Void => None,
            TypeRef::Node(id) => self.nodes.get(id.0 as usize),
        }
    }

    /// Byte size of a type, through typedefs and qualifiers.
    fn type_size(&self, mut ty: TypeRef) -> Option<u64> {
        // Arrays multiply instead of recursing, so a cyclic type in bad
        // input ends with the step limit, not with the stack.
        let mut factor = 1u64;
        for _ in 0..MAX_CHAIN * 4 {
            match *self.node_at(ty)? {
                Node::Base { byte_size, .. }
                | Node::Enum { byte_size, .. }
                | Node::Composite { byte_size, .. } => return factor.checked_mul(byte_size.into()),
                Node::Pointer { .. } => {
                    return factor.checked_mul(self.unit.header.address_size().into())
                }
                Node::Typedef { target, .. } | Node::Qualified { target, .. } => ty = target,
                Node::Array { elem, dims } => {
                    for dim in dims {
                        factor = factor.checked_mul(*dim)?;
                    }
                    ty = elem;
                }
                Node::Subroutine { .. } | Node::Unsupported { .. } => return None,
            }
        }
        None
    }

    fn finish_enums(&mut self) -> Result<()> {
        for pending in std::mem::take(&mut self.enums) {
            // pahole looks at the encoding of the DW_AT_type DIE itself.
            let underlying_signed = pending.underlying.map(|ty| {
                matches!(
                    self.node_at(ty),
                    Some(Node::Base {
                        encoding: BaseEncoding::Signed | BaseEncoding::SignedChar,
                        ..
                    })
                )
            });
            let mut enumerators =
                bumpalo::collections::Vec::with_capacity_in(pending.enumerators.len(), self.arena);
            for (name, value) in &pending.enumerators {
                let (value, negative) = constant_bits(value).ok_or_else(|| {
                    self.error(
                        ErrorKind::InvalidDwarf(format!("enumerator {name} has value {value:?}")),
                        pending.die,
                    )
                })?;
                enumerators.push(Enumerator {
                    name,
                    value,
                    negative,
                });
            }
            let enumerators = enumerators.into_bump_slice();
            if let Some(Node::Enum {
                underlying_signed: slot_signed,
                enumerators: slot,
                ..
            }) = self.nodes.get_mut(pending.node.0 as usize)
            {
                *slot_signed = underlying_signed;
                *slot = enumerators;
            }
        }
        Ok(())
    }

    fn finish_bitfields(&mut self) -> Result<()> {
        for pending in std::mem::take(&mut self.bitfields) {
            let storage = self.type_size(pending.ty).ok_or_else(|| {
                self.error(
                    ErrorKind::InvalidDwarf("bitfield without a storage size".into()),
                    pending.die,
                )
            })?;
            let bit_offset = dwarf4_bit_offset(
                self.big_endian,
                pending.location_bits,
                storage,
                pending.bit_offset,
                pending.bit_size,
            )
            .ok_or_else(|| {
                self.error(
                    ErrorKind::InvalidDwarf("bitfield position out of range".into()),
                    pending.die,
                )
            })?;
            let arena = self.arena;
            if let Some(Node::Composite { members, .. }) =
                self.nodes.get_mut(pending.composite.0 as usize)
            {
                let mut copy = members.to_vec();
                if let Some(member) = copy.get_mut(pending.member) {
                    member.bit_offset = bit_offset;
                }
                *members = arena.alloc_slice_copy(&copy);
            }
        }
        Ok(())
    }

    /// Indices of the functions `index` inherits from, nearest first.
    fn function_chain(&self, index: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut current = index;
        for _ in 0..MAX_CHAIN {
            let Some(function) = self.functions.get(current) else {
                break;
            };
            let Some(next) = function.abstract_origin.or(function.specification) else {
                break;
            };
            let Some(&next_index) = self.function_by_offset.get(next) else {
                break;
            };
            if next_index == index || chain.contains(&next_index) {
                break;
            }
            chain.push(next_index);
            current = next_index;
        }
        chain
    }

    /// A parameter's name and type, from its own DIE or its origins.
    fn resolve_param(&self, param: &RawParam<'input, 'arena>) -> (Option<&'input str>, TypeRef) {
        let (mut name, mut ty, mut origin) = (param.name, param.ty, param.origin);
        for _ in 0..MAX_CHAIN {
            if name.is_some() && ty.is_some() {
                break;
            }
            let Some(found) = origin.and_then(|offset| self.param_by_offset.get(offset)) else {
                break;
            };
            name = name.or(found.name);
            ty = ty.or(found.ty);
            origin = found.origin;
        }
        (name, ty.unwrap_or(TypeRef::Void))
    }

    /// A parameter's pahole 1436daf facts, with what its concrete copies
    /// said merged in (see [`ParamEntry::merge`]).
    fn shared_entry(&self, param: &RawParam<'input, 'arena>) -> ParamEntry {
        let mut entry = param.entry;
        if let Some(shared) = self.shared_entries.get(&param.offset) {
            entry.merge(*shared);
        }
        entry
    }

    /// pahole's `function__signature_changed`: never for an inlined
    /// abstract instance; else `DW_CC_nocall` on the DIE itself, or on
    /// its direct `DW_AT_abstract_origin` when it has one.
    fn signature_changed(&self, raw: &RawFunction<'input, 'arena>) -> bool {
        if raw.inline {
            return false;
        }
        match raw.abstract_origin {
            None => raw.nocall,
            Some(origin) => self
                .function_by_offset
                .get(origin)
                .and_then(|&index| self.functions.get(index))
                .is_some_and(|origin| origin.nocall),
        }
    }

    /// pahole's `reordered_parm` (`ftype__recode_dwarf_types`): a formal
    /// parameter of this DIE sits at another position than the parameter
    /// it names as its `DW_AT_abstract_origin` (a clone dropped or moved
    /// one).
    fn reordered(&self, raw: &RawFunction<'input, 'arena>) -> bool {
        raw.params.iter().enumerate().any(|(index, param)| {
            param
                .origin
                .and_then(|origin| self.param_by_offset.get(origin))
                .is_some_and(|origin| origin.index != index)
        })
    }

    fn finish_functions(&self) -> Vec<Function<'input, 'arena>> {
        let mut functions = Vec::with_capacity(self.functions.len());
        for (index, raw) in self.functions.iter().enumerate() {
            let chain = self.function_chain(index);
            let inherited = || chain.iter().filter_map(|&i| self.functions.get(i));
            let Some(name) = raw.name.or_else(|| inherited().find_map(|f| f.name)) else {
                continue;
            };
            // Straight into the arena, where the model's slices live: a
            // `Vec` copied there cost a malloc and a free per function
            // (202 K on Debian 6.1's vmlinux).
            let params: &'arena [Param<'input, 'arena>] = if !raw.params.is_empty() {
                self.arena
                    .alloc_slice_fill_iter(raw.params.iter().map(|param| {
                        let (name, ty) = self.resolve_param(param);
                        Param {
                            name,
                            ty,
                            location: param.location,
                            entry: self.shared_entry(param),
                            decl_tags: param.decl_tags,
                        }
                    }))
            } else {
                // No parameter DIEs of its own: the origin's say what the
                // signature is, and nothing says where the values are.
                match inherited().find(|f| !f.params.is_empty()) {
                    Some(f) => self
                        .arena
                        .alloc_slice_fill_iter(f.params.iter().map(|param| {
                            let (name, ty) = self.resolve_param(param);
                            Param {
                                name,
                                ty,
                                location: ParamLocation::OptimizedOut,
                                entry: ParamEntry::default(),
                                decl_tags: param.decl_tags,
                            }
                        })),
                    None => &[],
                }
            };
            let varargs = raw.varargs || (raw.params.is_empty() && inherited().any(|f| f.varargs));
            let decl_tags = if raw.decl_tags.is_empty() {
                inherited()
                    .map(|f| f.decl_tags)
                    .find(|tags| !tags.is_empty())
                    .unwrap_or(&[])
            } else {
                raw.decl_tags
            };
            functions.push(Function {
                die_offset: raw.offset,
                name,
                linkage_name: raw
                    .linkage_name
                    .or_else(|| inherited().find_map(|f| f.linkage_name)),
                ret: raw
                    .ret
                    .or_else(|| inherited().find_map(|f| f.ret))
                    .unwrap_or(TypeRef::Void),
                params,
                varargs,
                external: raw.external || inherited().any(|f| f.external),
                declaration: raw.declaration,
                inline: raw.inline,
                low_pc: raw.low_pc,
                entry_pc: raw.entry_pc,
                nocall: raw.nocall || inherited().any(|f| f.nocall),
                signature_changed: self.signature_changed(raw),
                reordered: self.reordered(raw),
                decl_tags,
            });
        }
        functions
    }

    fn finish_variables(&self) -> Vec<Variable<'input, 'arena>> {
        let mut variables = Vec::with_capacity(self.variables.len());
        for raw in &self.variables {
            let mut chain = Vec::new();
            let mut origin = raw.origin;
            while let Some(&index) = origin.and_then(|offset| self.variable_by_offset.get(offset)) {
                if chain.len() >= MAX_CHAIN {
                    break;
                }
                let Some(found) = self.variables.get(index) else {
                    break;
                };
                chain.push(found);
                origin = found.origin;
            }
            let Some(name) = raw.name.or_else(|| chain.iter().find_map(|v| v.name)) else {
                continue;
            };
            let decl_tags = if raw.decl_tags.is_empty() {
                chain
                    .iter()
                    .map(|v| v.decl_tags)
                    .find(|tags| !tags.is_empty())
                    .unwrap_or(&[])
            } else {
                raw.decl_tags
            };
            variables.push(Variable {
                die_offset: raw.offset,
                name,
                ty: raw
                    .ty
                    .or_else(|| chain.iter().find_map(|v| v.ty))
                    .unwrap_or(TypeRef::Void),
                external: raw.external || chain.iter().any(|v| v.external),
                declaration: raw.declaration,
                address: raw.address,
                in_function: raw.in_function,
                decl_tags,
            });
        }
        variables
    }

    /// Settles everything that needed the whole unit, and hands the model
    /// over.
    pub(super) fn finish(mut self) -> Result<CuModel<'input, 'arena>> {
        self.function_by_offset.seal();
        self.param_by_offset.seal();
        self.variable_by_offset.seal();
        self.finish_enums()?;
        self.finish_bitfields()?;
        self.check_references()?;
        let functions = self.finish_functions();
        let variables = self.finish_variables();
        Ok(CuModel {
            offset: self.first_unit_offset,
            name: self.name,
            language: self.language,
            producer_clang: self.producer_clang,
            nodes: self.nodes,
            functions,
            variables,
            die_count: self.die_count,
            node_offsets: self.node_offsets,
            odd_names: self.odd_names,
            decl_tags: self.decl_tags,
        })
    }

    /// Every node a reference made must have been filled by a type DIE
    /// read at its offset. One that was not (an offset past the unit, in
    /// the middle of a DIE, at a DIE that is no type, or in a subtree the
    /// walk jumped over) would otherwise become `void`.
    fn check_references(&self) -> Result<()> {
        for (index, (node, &die)) in self.nodes.iter().zip(&self.node_offsets).enumerate() {
            if matches!(node, Node::Unsupported { tag: 0 }) {
                let referrer = self
                    .first_refs
                    .iter()
                    .find(|&&(node, _)| node as usize == index)
                    .map_or(die, |&(_, referrer)| referrer);
                return Err(self.error(
                    ErrorKind::InvalidDwarf(format!(
                        "unit at {:#x}: DIE {referrer:#x} refers to {die:#x}, where no type DIE \
                         was read",
                        self.unit_offset
                    )),
                    referrer,
                ));
            }
        }
        Ok(())
    }
}
