//! The general visit path: a wanted DIE's attributes decoded by its plan
//! (`attrs.rs`), turned into model nodes, functions and variables, and the
//! scope its children open.

use gimli::constants as dw;

use super::attrs::Attrs;
use super::location;
use super::pending::{
    ParamOrigin, PendingBitfield, PendingEnum, RawFunction, RawParam, RawVariable,
};
use super::rules::{
    self, base_encoding, count_of_bounds, dwarf4_bit_offset, is_type_tag, unsigned, Value,
    DW_TAG_LLVM_ANNOTATION,
};
use super::scope::{AnnotationTarget, ArenaVec, Scope};
use super::Walker;
use crate::error::{ErrorKind, Result};
use crate::model::{CompositeKind, Member, Node, NodeId, Param, Qualifier, TypeRef};

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
    /// Handles a wanted DIE; returns the scope its children (if any) open.
    pub(super) fn visit(
        &mut self,
        tag: dw::DwTag,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        if is_type_tag(tag) {
            return self.visit_type(tag, attrs, offset);
        }
        match tag {
            dw::DW_TAG_subprogram => self.visit_function(attrs, offset),
            dw::DW_TAG_variable => self.visit_variable(attrs, offset),
            dw::DW_TAG_namespace => Ok(Scope::Unit),
            // A partial unit (dwz's) this unit includes: walked with it when
            // the units are walked together, refused (as a cross-unit
            // reference) when this unit is walked alone.
            dw::DW_TAG_imported_unit => {
                self.reference(attrs, dw::DW_AT_import, offset)?;
                Ok(Scope::Leaf)
            }
            dw::DW_TAG_lexical_block => Ok(Scope::Body),
            dw::DW_TAG_member => self.visit_member(attrs, offset),
            dw::DW_TAG_enumerator => {
                let name = self.noted_name(attrs, offset)?;
                let name = self.required_name(name);
                let value = attrs.get(dw::DW_AT_const_value).ok_or_else(|| {
                    self.error(
                        ErrorKind::InvalidDwarf("enumerator without a value".into()),
                        offset,
                    )
                })?;
                if let Some(Scope::Enum(pending)) = self.stack.last_mut() {
                    pending.enumerators.push((name, value));
                }
                Ok(Scope::Leaf)
            }
            dw::DW_TAG_subrange_type => {
                let count = subrange_count(attrs);
                if let Some(Scope::Array { dims, .. }) = self.stack.last_mut() {
                    dims.push(count);
                }
                Ok(Scope::Leaf)
            }
            dw::DW_TAG_formal_parameter => self.visit_param(attrs, offset),
            dw::DW_TAG_unspecified_parameters => {
                match self.stack.last_mut() {
                    Some(Scope::Function { varargs, .. })
                    | Some(Scope::Subroutine { varargs, .. }) => *varargs = true,
                    _ => {}
                }
                Ok(Scope::Leaf)
            }
            DW_TAG_LLVM_ANNOTATION => {
                self.visit_annotation(attrs, offset)?;
                Ok(Scope::Leaf)
            }
            _ => Ok(Scope::Skip),
        }
    }

    /// Notes a name read for a type, member, enumerator, parameter or
    /// function: one that is no C identifier (empty counts as odd) marks
    /// the model ([`crate::model::CuModel::odd_names`]), while its bytes
    /// are still in the cache. Names in `.debug_str` are noted as they are
    /// looked up ([`Walker::noted_name`]).
    #[inline(always)]
    pub(super) fn note_required_name(&mut self, name: &str) {
        if !crate::model::is_c_identifier(name) {
            self.odd_names = true;
        }
    }

    pub(super) fn set_node(&mut self, id: NodeId, node: Node<'input, 'arena>) {
        if let Some(slot) = self.nodes.get_mut(id.0 as usize) {
            *slot = node;
        }
    }

    pub(super) fn visit_type(
        &mut self,
        tag: dw::DwTag,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        let id = self.node_id(offset);
        let scope = match tag {
            dw::DW_TAG_base_type => {
                let name = self.string(attrs, dw::DW_AT_name, offset)?.unwrap_or("");
                let byte_size = self
                    .size_u32(attrs, dw::DW_AT_byte_size, offset)?
                    .unwrap_or(0);
                let bit_size = self.size_u32(attrs, dw::DW_AT_bit_size, offset)?;
                let encoding = base_encoding(attrs.udata(dw::DW_AT_encoding).unwrap_or(0));
                self.set_node(
                    id,
                    Node::Base {
                        name,
                        byte_size,
                        encoding,
                        bit_size,
                    },
                );
                Scope::Leaf
            }
            dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type => {
                let target = self.type_ref(attrs, offset)?;
                self.set_node(
                    id,
                    Node::Pointer {
                        target,
                        type_tags: &[],
                    },
                );
                Scope::Pointer {
                    node: id,
                    target,
                    type_tags: Vec::new(),
                }
            }
            dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type => {
                let qualifier = match tag {
                    dw::DW_TAG_const_type => Qualifier::Const,
                    dw::DW_TAG_volatile_type => Qualifier::Volatile,
                    dw::DW_TAG_restrict_type => Qualifier::Restrict,
                    _ => Qualifier::Atomic,
                };
                let target = self.type_ref(attrs, offset)?;
                self.set_node(id, Node::Qualified { qualifier, target });
                Scope::Leaf
            }
            dw::DW_TAG_typedef => {
                let name = self.noted_name(attrs, offset)?;
                let name = self.required_name(name);
                let target = self.type_ref(attrs, offset)?;
                self.set_node(
                    id,
                    Node::Typedef {
                        name,
                        target,
                        decl_tags: &[],
                    },
                );
                Scope::Typedef {
                    node: id,
                    name,
                    target,
                    decl_tags: Vec::new(),
                }
            }
            dw::DW_TAG_array_type => {
                let elem = self.type_ref(attrs, offset)?;
                self.open_array(id, elem)
            }
            dw::DW_TAG_structure_type | dw::DW_TAG_union_type | dw::DW_TAG_class_type => {
                let kind = match tag {
                    dw::DW_TAG_structure_type => CompositeKind::Struct,
                    dw::DW_TAG_union_type => CompositeKind::Union,
                    _ => CompositeKind::Class,
                };
                let name = self.noted_name(attrs, offset)?;
                let byte_size = self
                    .size_u32(attrs, dw::DW_AT_byte_size, offset)?
                    .unwrap_or(0);
                let declaration = attrs.flag(dw::DW_AT_declaration);
                self.open_composite(id, kind, name, byte_size, declaration)
            }
            dw::DW_TAG_enumeration_type => {
                let name = self.noted_name(attrs, offset)?;
                let byte_size = self
                    .size_u32(attrs, dw::DW_AT_byte_size, offset)?
                    .unwrap_or(0);
                let declaration = attrs.flag(dw::DW_AT_declaration);
                let underlying = self.optional_type_ref(attrs, offset)?;
                self.set_node(
                    id,
                    Node::Enum {
                        name,
                        byte_size,
                        declaration,
                        underlying_signed: None,
                        enumerators: &[],
                    },
                );
                Scope::Enum(PendingEnum {
                    node: id,
                    die: offset,
                    underlying,
                    enumerators: ArenaVec::new_in(self.arena),
                })
            }
            dw::DW_TAG_subroutine_type => {
                let ret = self.type_ref(attrs, offset)?;
                self.open_subroutine(id, ret)
            }
            other => {
                self.set_node(id, Node::Unsupported { tag: other.0 });
                Scope::Skip
            }
        };
        Ok(scope)
    }

    /// The node of a struct, union or class, and the scope that collects
    /// its members.
    pub(super) fn open_composite(
        &mut self,
        id: NodeId,
        kind: CompositeKind,
        name: Option<&'input str>,
        byte_size: u32,
        declaration: bool,
    ) -> Scope<'input, 'arena> {
        let node = Node::Composite {
            kind,
            name,
            byte_size,
            declaration,
            members: &[],
            decl_tags: &[],
        };
        self.set_node(id, node);
        Scope::Composite {
            node: id,
            kind,
            name,
            byte_size,
            declaration,
            first_member: self.open_members.len(),
            decl_tags: Vec::new(),
        }
    }

    /// The node of a function type, and the scope that collects its
    /// parameters.
    pub(super) fn open_subroutine(&mut self, id: NodeId, ret: TypeRef) -> Scope<'input, 'arena> {
        self.set_node(
            id,
            Node::Subroutine {
                ret,
                params: &[],
                varargs: false,
            },
        );
        Scope::Subroutine {
            node: id,
            ret,
            first_param: self.open_params.len(),
            varargs: false,
        }
    }

    /// The node of an array type, and the scope that collects its
    /// dimensions.
    pub(super) fn open_array(&mut self, id: NodeId, elem: TypeRef) -> Scope<'input, 'arena> {
        self.set_node(id, Node::Array { elem, dims: &[] });
        Scope::Array {
            node: id,
            elem,
            dims: ArenaVec::new_in(self.arena),
        }
    }

    pub(super) fn visit_member(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        // Static data members (C++, DWARF 4) are declarations, not layout.
        if attrs.flag(dw::DW_AT_external) || attrs.flag(dw::DW_AT_declaration) {
            return Ok(Scope::Skip);
        }
        let name = self.noted_name(attrs, offset)?;
        let ty = self.type_ref(attrs, offset)?;
        let location_bits = self
            .member_location(attrs, offset)?
            .checked_mul(8)
            .ok_or_else(|| {
                self.error(
                    ErrorKind::InvalidDwarf("member offset overflows".into()),
                    offset,
                )
            })?;
        let bit_size = attrs.udata(dw::DW_AT_bit_size);
        let bitfield_size = match bit_size {
            None => 0,
            Some(size) => u32::try_from(size).map_err(|_| {
                self.error(
                    ErrorKind::InvalidDwarf(format!("bit size {size} too large")),
                    offset,
                )
            })?,
        };
        let mut pending = None;
        let bit_offset = if let Some(data_bit_offset) = attrs.udata(dw::DW_AT_data_bit_offset) {
            location_bits.checked_add(data_bit_offset)
        } else if let Some(old_offset) = attrs
            .get(dw::DW_AT_bit_offset)
            .and_then(|v| rules::signed(&v))
        {
            // DWARF 2-4: bits counted from the storage unit's most
            // significant end.
            match attrs.udata(dw::DW_AT_byte_size) {
                Some(storage) => dwarf4_bit_offset(
                    self.big_endian,
                    location_bits,
                    storage,
                    old_offset,
                    bit_size.unwrap_or(0),
                ),
                None => {
                    pending = Some((old_offset, bit_size.unwrap_or(0)));
                    Some(location_bits)
                }
            }
        } else {
            Some(location_bits)
        };
        let bit_offset = bit_offset.ok_or_else(|| {
            self.error(
                ErrorKind::InvalidDwarf("bitfield position out of range".into()),
                offset,
            )
        })?;
        let member = Member {
            name,
            ty,
            bit_offset,
            bitfield_size,
            decl_tags: &[],
        };
        if let Some(&Scope::Composite {
            node, first_member, ..
        }) = self.stack.last()
        {
            if let Some((old_offset, bit_size)) = pending {
                self.bitfields.push(PendingBitfield {
                    composite: node,
                    member: self.open_members.len().saturating_sub(first_member),
                    location_bits,
                    bit_offset: old_offset,
                    bit_size,
                    ty,
                    die: offset,
                });
            }
            self.open_members.push(member);
        }
        Ok(Scope::Annotated {
            target: AnnotationTarget::LastMember,
            tags: Vec::new(),
        })
    }

    /// `DW_AT_data_member_location` in bytes: a constant, or the old
    /// `DW_OP_plus_uconst N` expression form.
    pub(super) fn member_location(&self, attrs: &Attrs<'input>, offset: u64) -> Result<u64> {
        let Some(value) = attrs.get(dw::DW_AT_data_member_location) else {
            return Ok(0);
        };
        if let Some(bytes) = unsigned(&value) {
            return Ok(bytes);
        }
        match value {
            // DWARF 2/3 data4/data8 forms, which gimli reads as offsets.
            gimli::AttributeValue::SecOffset(bytes) => Ok(bytes as u64),
            gimli::AttributeValue::LocationListsRef(bytes) => Ok(bytes.0 as u64),
            gimli::AttributeValue::Exprloc(expr) => {
                let mut input = expr.0;
                match gimli::Operation::parse(&mut input, self.unit.encoding()) {
                    Ok(gimli::Operation::PlusConstant { value })
                    | Ok(gimli::Operation::UnsignedConstant { value }) => Ok(value),
                    _ => Err(self.error(
                        ErrorKind::UnsupportedDwarf("member location expression".into()),
                        offset,
                    )),
                }
            }
            other => Err(self.error(
                ErrorKind::InvalidDwarf(format!("member location {other:?}")),
                offset,
            )),
        }
    }

    pub(super) fn visit_param(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        let name = self.noted_name(attrs, offset)?;
        let in_function = matches!(self.stack.last(), Some(Scope::Function { .. }));
        if !in_function {
            let ty = self.type_ref(attrs, offset)?;
            if let Some(Scope::Subroutine { .. }) = self.stack.last() {
                self.open_params.push(Param::of_prototype(name, ty));
            }
            return Ok(Scope::Skip);
        }
        let ty = self.optional_type_ref(attrs, offset)?;
        let origin = self.reference(attrs, dw::DW_AT_abstract_origin, offset)?;
        let index = match self.stack.last() {
            Some(Scope::Function { first_param, .. }) => {
                self.open_function_params.len().saturating_sub(*first_param)
            }
            _ => 0,
        };
        self.param_by_offset.insert(
            offset,
            ParamOrigin {
                name,
                ty,
                origin,
                index,
            },
        );
        let (location, mut entry) = location::param_facts(
            self.dwarf,
            self.unit,
            attrs.get(dw::DW_AT_location),
            attrs.get(dw::DW_AT_const_value).is_some(),
            self.register_params,
            index,
            &mut self.location_exprs,
        );
        // parameter__record_true_sig_member looks the member up in the
        // DIE's own type, and only for a DIE with its own name.
        if name.is_none() || ty.is_none() {
            entry.piece_member_offset = None;
        }
        // pahole's ftype__recode_dwarf_types: a concrete parameter's facts
        // go to its abstract origin, later DIEs over earlier ones.
        if let Some(origin) = origin {
            self.shared_entries.entry(origin).or_default().merge(entry);
        }
        if let Some(Scope::Function { .. }) = self.stack.last() {
            self.open_function_params.push(RawParam {
                offset,
                name,
                ty,
                origin,
                location,
                entry,
                decl_tags: &[],
            });
        }
        Ok(Scope::Annotated {
            target: AnnotationTarget::LastParam,
            tags: Vec::new(),
        })
    }

    pub(super) fn visit_annotation(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<()> {
        let Some(kind) = self.string(attrs, dw::DW_AT_name, offset)? else {
            return Ok(());
        };
        // Annotations with a non-string value are not BTF tags.
        let value = match attrs.get(dw::DW_AT_const_value) {
            Some(value) => self.string_value(value).ok(),
            None => None,
        };
        let Some(value) = value else { return Ok(()) };
        match (kind, self.stack.last_mut()) {
            ("btf_type_tag", Some(Scope::Pointer { type_tags, .. })) => type_tags.push(value),
            ("btf_decl_tag", Some(Scope::Typedef { decl_tags, .. }))
            | ("btf_decl_tag", Some(Scope::Composite { decl_tags, .. }))
            | ("btf_decl_tag", Some(Scope::Function { decl_tags, .. }))
            | (
                "btf_decl_tag",
                Some(Scope::Annotated {
                    tags: decl_tags, ..
                }),
            ) => {
                decl_tags.push(value);
                self.decl_tags = true;
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn visit_function(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        let name = self.noted_name(attrs, offset)?;
        let linkage_name = match self.string(attrs, dw::DW_AT_linkage_name, offset)? {
            Some(name) => Some(name),
            None => self.string(attrs, dw::DW_AT_MIPS_linkage_name, offset)?,
        };
        let ret = self.optional_type_ref(attrs, offset)?;
        let (low_pc, entry_pc) = self.low_pc(attrs, offset)?;
        let function = RawFunction {
            offset,
            name,
            linkage_name,
            ret,
            external: attrs.flag(dw::DW_AT_external),
            declaration: attrs.flag(dw::DW_AT_declaration),
            inline: attrs
                .udata(dw::DW_AT_inline)
                .is_some_and(|inline| inline != 0),
            low_pc,
            entry_pc,
            nocall: attrs.udata(dw::DW_AT_calling_convention)
                == Some(u64::from(dw::DW_CC_nocall.0)),
            abstract_origin: self.reference(attrs, dw::DW_AT_abstract_origin, offset)?,
            specification: self.reference(attrs, dw::DW_AT_specification, offset)?,
            params: &[],
            varargs: false,
            decl_tags: &[],
        };
        let index = self.functions.len();
        self.functions.push(function);
        self.function_by_offset.insert(offset, index);
        Ok(Scope::Function {
            index,
            first_param: self.open_function_params.len(),
            varargs: false,
            decl_tags: Vec::new(),
        })
    }

    /// `DW_AT_low_pc`, or the start of the first `DW_AT_ranges` range;
    /// and `DW_AT_low_pc` alone.
    pub(super) fn low_pc(
        &self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<(Option<u64>, Option<u64>)> {
        if let Some(value) = attrs.get(dw::DW_AT_low_pc) {
            let address = self
                .dwarf
                .attr_address(self.unit, value)
                .map_err(|err| self.gimli_error(err, offset))?;
            return Ok((address, address));
        }
        let Some(value) = attrs.get(dw::DW_AT_ranges) else {
            return Ok((None, None));
        };
        let ranges = self
            .dwarf
            .attr_ranges(self.unit, value)
            .map_err(|err| self.gimli_error(err, offset))?;
        match ranges {
            Some(mut ranges) => Ok((
                ranges
                    .next()
                    .map_err(|err| self.gimli_error(err, offset))?
                    .map(|range| range.begin),
                None,
            )),
            None => Ok((None, None)),
        }
    }

    pub(super) fn visit_variable(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        let in_function = !matches!(self.stack.last(), Some(Scope::Unit));
        let address = attrs
            .get(dw::DW_AT_location)
            .and_then(|location| location::static_address(self.dwarf, self.unit, &location));
        // Automatic variables are of no interest; only static ones are
        // reported from function bodies.
        if in_function && address.is_none() {
            return Ok(Scope::Skip);
        }
        // (VAR names are checked on the ELF symbols' side.)
        let name = self.string(attrs, dw::DW_AT_name, offset)?;
        let ty = self.optional_type_ref(attrs, offset)?;
        let origin = match self.reference(attrs, dw::DW_AT_specification, offset)? {
            Some(target) => Some(target),
            None => self.reference(attrs, dw::DW_AT_abstract_origin, offset)?,
        };
        let variable = RawVariable {
            offset,
            name,
            ty,
            external: attrs.flag(dw::DW_AT_external),
            declaration: attrs.flag(dw::DW_AT_declaration),
            address,
            in_function,
            origin,
            decl_tags: &[],
        };
        let index = self.variables.len();
        self.variables.push(variable);
        self.variable_by_offset.insert(offset, index);
        Ok(Scope::Annotated {
            target: AnnotationTarget::Variable(index),
            tags: Vec::new(),
        })
    }
}

/// Element count of one array dimension: `DW_AT_count`, or
/// `DW_AT_upper_bound - DW_AT_lower_bound + 1`; 0 for flexible arrays
/// (no bound), variable-length arrays (non-constant bound) and gcc's
/// zero-length arrays (upper bound -1), a count that does not fit BTF's
/// 32 bits being 0 as in pahole.
pub(super) fn subrange_count(attrs: &Attrs<'_>) -> u64 {
    if let Some(count) = attrs.get(dw::DW_AT_count) {
        return unsigned(&count).unwrap_or(0);
    }
    let Some(upper) = attrs.get(dw::DW_AT_upper_bound) else {
        return 0;
    };
    let upper = match upper {
        Value::Sdata(value) => value as u64,
        other => match unsigned(&other) {
            Some(value) => value,
            None => return 0,
        },
    };
    let lower = attrs.udata(dw::DW_AT_lower_bound).unwrap_or(0);
    count_of_bounds(upper, lower)
}
