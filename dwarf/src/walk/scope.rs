//! What an open DIE with children collects, and what each kind of DIE
//! contributes when it is visited and when its children end.

use gimli::constants as dw;

use super::attrs::{self, Attrs, Value};
use super::layout::{Die, Kind, Layout};
use super::location;
use super::resolve::{
    ParamOrigin, PendingBitfield, PendingEnum, RawFunction, RawParam, RawVariable,
};
use super::{Walker, DW_TAG_LLVM_ANNOTATION};
use crate::error::{ErrorKind, Result};
use crate::model::{
    BaseEncoding, CompositeKind, Member, Node, NodeId, Param, ParamEntry, ParamLocation, Qualifier,
    TypeRef,
};

/// A growing list allocated in the CU's arena: it becomes the model's slice
/// without a copy, and costs no heap allocation and free per aggregate.
type ArenaVec<'arena, T> = bumpalo::collections::Vec<'arena, T>;

/// Where the `btf_decl_tag`s of an annotated child DIE go when its
/// children end.
#[derive(Clone, Copy)]
pub(super) enum AnnotationTarget {
    /// The last member of the enclosing struct/union.
    LastMember,
    /// The last parameter of the enclosing function or subroutine type.
    LastParam,
    /// A recorded variable.
    Variable(usize),
}

/// An open DIE whose children are being read.
pub(super) enum Scope<'input, 'arena> {
    /// Children cannot contribute anything: they are skipped.
    Skip,
    /// A DIE that was fully handled when visited; children are skipped.
    Leaf,
    /// The unit DIE (or a namespace): top-level declarations.
    Unit,
    /// A lexical block: only nested types and static variables matter.
    Body,
    /// A subprogram: parameters, annotations, and its body.
    Function {
        index: usize,
        /// Where this function's parameters start in
        /// `Walker::open_function_params`.
        first_param: usize,
        varargs: bool,
        decl_tags: Vec<&'input str>,
    },
    Composite {
        node: NodeId,
        kind: CompositeKind,
        name: Option<&'input str>,
        byte_size: u32,
        declaration: bool,
        /// Where this aggregate's members start in `Walker::open_members`.
        first_member: usize,
        decl_tags: Vec<&'input str>,
    },
    Enum(PendingEnum<'input, 'arena>),
    Array {
        node: NodeId,
        elem: TypeRef,
        dims: ArenaVec<'arena, u64>,
    },
    Subroutine {
        node: NodeId,
        ret: TypeRef,
        /// Where this type's parameters start in `Walker::open_params`.
        first_param: usize,
        varargs: bool,
    },
    Pointer {
        node: NodeId,
        target: TypeRef,
        type_tags: Vec<&'input str>,
    },
    Typedef {
        node: NodeId,
        name: &'input str,
        target: TypeRef,
        decl_tags: Vec<&'input str>,
    },
    /// A member, parameter or variable with children: its annotations.
    Annotated {
        target: AnnotationTarget,
        tags: Vec<&'input str>,
    },
}

/// Tags of DIEs that are types, wherever they appear.
fn is_type_tag(tag: dw::DwTag) -> bool {
    matches!(
        tag,
        dw::DW_TAG_base_type
            | dw::DW_TAG_unspecified_type
            | dw::DW_TAG_pointer_type
            | dw::DW_TAG_reference_type
            | dw::DW_TAG_rvalue_reference_type
            | dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type
            | dw::DW_TAG_immutable_type
            | dw::DW_TAG_packed_type
            | dw::DW_TAG_shared_type
            | dw::DW_TAG_typedef
            | dw::DW_TAG_array_type
            | dw::DW_TAG_structure_type
            | dw::DW_TAG_union_type
            | dw::DW_TAG_class_type
            | dw::DW_TAG_interface_type
            | dw::DW_TAG_enumeration_type
            | dw::DW_TAG_subroutine_type
            | dw::DW_TAG_ptr_to_member_type
            | dw::DW_TAG_string_type
            | dw::DW_TAG_set_type
            | dw::DW_TAG_file_type
            | dw::DW_TAG_coarray_type
            | dw::DW_TAG_dynamic_type
    )
}

/// Scopes grouped by what children they want: a bit each in a
/// declaration's [`wanted_in`] mask.
#[derive(Clone, Copy)]
enum Wants {
    Nothing,
    Unit,
    Function,
    Body,
    Composite,
    Enum,
    Array,
    Subroutine,
    Annotations,
}

const ALL_WANTS: [Wants; 9] = [
    Wants::Nothing,
    Wants::Unit,
    Wants::Function,
    Wants::Body,
    Wants::Composite,
    Wants::Enum,
    Wants::Array,
    Wants::Subroutine,
    Wants::Annotations,
];

impl Scope<'_, '_> {
    fn class(&self) -> Wants {
        match self {
            Scope::Skip | Scope::Leaf => Wants::Nothing,
            Scope::Unit => Wants::Unit,
            Scope::Function { .. } => Wants::Function,
            Scope::Body => Wants::Body,
            Scope::Composite { .. } => Wants::Composite,
            Scope::Enum(_) => Wants::Enum,
            Scope::Array { .. } => Wants::Array,
            Scope::Subroutine { .. } => Wants::Subroutine,
            Scope::Pointer { .. } | Scope::Typedef { .. } | Scope::Annotated { .. } => {
                Wants::Annotations
            }
        }
    }

    /// Whether a child DIE whose declaration has the [`wanted_in`] mask
    /// `wanted_in` is worth decoding here; all others are skipped with
    /// their subtrees. One bit test per DIE instead of matching its tag
    /// against the scope's list.
    #[inline(always)]
    pub(super) fn wants(&self, wanted_in: u16) -> bool {
        wanted_in & (1 << self.class() as u16) != 0
    }
}

/// The scopes, by [`Wants`] bit, in which DIEs with `tag` are worth
/// decoding; `never_static` says a variable can never have a static
/// address (see `locals.rs`): only a unit keeps such variables.
pub(super) fn wanted_in(tag: dw::DwTag, never_static: bool) -> u16 {
    ALL_WANTS
        .iter()
        .filter(|&&class| wants(class, tag))
        .filter(|&&class| {
            !(never_static && tag == dw::DW_TAG_variable && !matches!(class, Wants::Unit))
        })
        .fold(0, |mask, &class| mask | 1 << class as u16)
}

/// Whether a child DIE with `tag` is worth decoding in a scope of `class`.
fn wants(class: Wants, tag: dw::DwTag) -> bool {
    match class {
        Wants::Nothing => false,
        Wants::Unit => {
            is_type_tag(tag)
                || matches!(
                    tag,
                    dw::DW_TAG_subprogram
                        | dw::DW_TAG_variable
                        | dw::DW_TAG_namespace
                        | dw::DW_TAG_imported_unit
                )
        }
        Wants::Function => {
            is_type_tag(tag)
                || matches!(
                    tag,
                    dw::DW_TAG_formal_parameter
                        | dw::DW_TAG_unspecified_parameters
                        | DW_TAG_LLVM_ANNOTATION
                        | dw::DW_TAG_lexical_block
                        | dw::DW_TAG_variable
                )
        }
        Wants::Body => {
            is_type_tag(tag) || matches!(tag, dw::DW_TAG_lexical_block | dw::DW_TAG_variable)
        }
        Wants::Composite => {
            is_type_tag(tag) || matches!(tag, dw::DW_TAG_member | DW_TAG_LLVM_ANNOTATION)
        }
        Wants::Enum => tag == dw::DW_TAG_enumerator,
        Wants::Array => tag == dw::DW_TAG_subrange_type,
        Wants::Subroutine => {
            matches!(
                tag,
                dw::DW_TAG_formal_parameter | dw::DW_TAG_unspecified_parameters
            )
        }
        Wants::Annotations => tag == DW_TAG_LLVM_ANNOTATION,
    }
}

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
                let name = self.string(attrs, dw::DW_AT_name, offset)?.unwrap_or("");
                self.note_required_name(name);
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
    /// function (`None`: anonymous): one that is no C
    /// identifier marks the model ([`crate::model::CuModel::odd_names`]),
    /// while its bytes are still in the cache.
    #[inline(always)]
    fn note_name(&mut self, name: Option<&str>) {
        if let Some(name) = name {
            self.note_required_name(name);
        }
    }

    /// [`Walker::note_name`] for a name that must be there (empty counts
    /// as odd).
    #[inline(always)]
    fn note_required_name(&mut self, name: &str) {
        if !crate::model::is_c_identifier(name) {
            self.odd_names = true;
        }
    }

    fn set_node(&mut self, id: NodeId, node: Node<'input, 'arena>) {
        if let Some(slot) = self.nodes.get_mut(id.0 as usize) {
            *slot = node;
        }
    }

    fn visit_type(
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
                let name = self.string(attrs, dw::DW_AT_name, offset)?.unwrap_or("");
                self.note_required_name(name);
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
                let name = self.string(attrs, dw::DW_AT_name, offset)?;
                self.note_name(name);
                let byte_size = self
                    .size_u32(attrs, dw::DW_AT_byte_size, offset)?
                    .unwrap_or(0);
                let declaration = attrs.flag(dw::DW_AT_declaration);
                self.open_composite(id, kind, name, byte_size, declaration)
            }
            dw::DW_TAG_enumeration_type => {
                let name = self.string(attrs, dw::DW_AT_name, offset)?;
                self.note_name(name);
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
    fn open_composite(
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
    fn open_subroutine(&mut self, id: NodeId, ret: TypeRef) -> Scope<'input, 'arena> {
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
    fn open_array(&mut self, id: NodeId, elem: TypeRef) -> Scope<'input, 'arena> {
        self.set_node(id, Node::Array { elem, dims: &[] });
        Scope::Array {
            node: id,
            elem,
            dims: ArenaVec::new_in(self.arena),
        }
    }

    fn visit_member(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        // Static data members (C++, DWARF 4) are declarations, not layout.
        if attrs.flag(dw::DW_AT_external) || attrs.flag(dw::DW_AT_declaration) {
            return Ok(Scope::Skip);
        }
        let name = self.string(attrs, dw::DW_AT_name, offset)?;
        self.note_name(name);
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
            .and_then(|v| attrs::signed(&v))
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

    /// Handles a DIE read through its [layout](super::layout), making what
    /// [`Walker::visit`] makes of the same attributes, and opens the scope
    /// of its children if it `has_children`. `false`, with nothing done,
    /// for a parameter of a function (not of a function type): those take
    /// the general path.
    pub(super) fn visit_fixed(
        &mut self,
        layout: &Layout,
        die: Die<'input>,
        offset: u64,
        has_children: bool,
    ) -> Result<bool> {
        let scope = match layout.kind {
            Kind::Composite(kind) => {
                let id = self.node_id(offset);
                let name = self.fixed_name(layout, &die, offset)?;
                self.note_name(name);
                let byte_size = layout.byte_size(&die).unwrap_or(0);
                self.open_composite(id, kind, name, byte_size, layout.declaration(&die))
            }
            Kind::Subroutine => {
                let id = self.node_id(offset);
                let ret = self.fixed_type(layout.ty(&die));
                self.open_subroutine(id, ret)
            }
            Kind::Array => {
                let id = self.node_id(offset);
                let elem = self.fixed_type(layout.ty(&die));
                self.open_array(id, elem)
            }
            // What `visit` makes of a lexical block.
            Kind::Block => Scope::Body,
            _ => return self.visit_fixed_leaf(layout, die, offset),
        };
        if has_children {
            self.stack.push(scope);
        } else {
            self.close(scope);
        }
        Ok(true)
    }

    /// [`Walker::visit_fixed`] for DIEs without children.
    #[inline(always)]
    fn visit_fixed_leaf(&mut self, layout: &Layout, die: Die<'input>, offset: u64) -> Result<bool> {
        match layout.kind {
            Kind::Member => {
                let name = self.fixed_name(layout, &die, offset)?;
                self.note_name(name);
                let ty = self.fixed_type(layout.ty(&die));
                // Offsets of at most four bytes: in bits they cannot overflow.
                let bit_offset = layout.location(&die) << 3;
                if let Some(Scope::Composite { .. }) = self.stack.last() {
                    self.open_members.push(Member {
                        name,
                        ty,
                        bit_offset,
                        bitfield_size: 0,
                        decl_tags: &[],
                    });
                }
            }
            Kind::Bitfield => {
                let name = self.fixed_name(layout, &die, offset)?;
                self.note_name(name);
                let ty = self.fixed_type(layout.ty(&die));
                // Offsets and bitfield positions of at most four bytes: in
                // bits their sum cannot overflow.
                let bit_offset =
                    (layout.location(&die) << 3) + layout.data_bit_offset(&die).unwrap_or(0);
                if let Some(Scope::Composite { .. }) = self.stack.last() {
                    self.open_members.push(Member {
                        name,
                        ty,
                        bit_offset,
                        bitfield_size: layout.bit_size(&die).unwrap_or(0),
                        decl_tags: &[],
                    });
                }
            }
            Kind::Pointer => {
                let id = self.node_id(offset);
                let target = self.fixed_type(layout.ty(&die));
                self.set_node(
                    id,
                    Node::Pointer {
                        target,
                        type_tags: &[],
                    },
                );
            }
            Kind::Qualified(qualifier) => {
                let id = self.node_id(offset);
                let target = self.fixed_type(layout.ty(&die));
                self.set_node(id, Node::Qualified { qualifier, target });
            }
            Kind::Typedef => {
                let id = self.node_id(offset);
                let name = self.fixed_name(layout, &die, offset)?.unwrap_or("");
                self.note_required_name(name);
                let target = self.fixed_type(layout.ty(&die));
                self.set_node(
                    id,
                    Node::Typedef {
                        name,
                        target,
                        decl_tags: &[],
                    },
                );
            }
            Kind::Enumerator => {
                let name = self.fixed_name(layout, &die, offset)?.unwrap_or("");
                self.note_required_name(name);
                if let (Some(Scope::Enum(pending)), Some(value)) =
                    (self.stack.last_mut(), layout.constant(&die))
                {
                    pending.enumerators.push((name, value));
                }
            }
            Kind::Subrange => {
                let count = layout.subrange_count(&die);
                if let Some(Scope::Array { dims, .. }) = self.stack.last_mut() {
                    dims.push(count);
                }
            }
            Kind::Param => {
                if !matches!(self.stack.last(), Some(Scope::Subroutine { .. })) {
                    return Ok(false);
                }
                let name = self.fixed_name(layout, &die, offset)?;
                self.note_name(name);
                let ty = self.fixed_type(layout.ty(&die));
                if let Some(Scope::Subroutine { .. }) = self.stack.last() {
                    self.open_params.push(Param {
                        name,
                        ty,
                        location: ParamLocation::Unknown,
                        entry: ParamEntry::default(),
                        decl_tags: &[],
                    });
                }
            }
            // Opened scopes, handled by the caller.
            Kind::Composite(_) | Kind::Subroutine | Kind::Array | Kind::Block => {}
        }
        Ok(true)
    }

    /// The name of a DIE read through a layout. A `.debug_str` offset or
    /// an inline name, nearly every name, is taken straight away: going
    /// through the attribute value the general path would have decoded
    /// costs more than the lookup itself.
    #[inline(always)]
    fn fixed_name(
        &self,
        layout: &Layout,
        die: &Die<'input>,
        offset: u64,
    ) -> Result<Option<&'input str>> {
        if let Some(text) = layout
            .strp(die)
            .and_then(|strp| self.strings.debug_str(strp))
        {
            return Ok(Some(text));
        }
        if let Some(text) = layout
            .inline_name(die)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
        {
            // Copied where the caller wants, as `Walker::string_value` does.
            return Ok(Some(match self.inline_names {
                Some(names) => names.alloc_str(text),
                None => text,
            }));
        }
        self.fixed_name_slowly(layout.name(die), offset)
    }

    /// [`Walker::fixed_name`] for the other cases, and for errors.
    fn fixed_name_slowly(
        &self,
        name: Option<Value<'input>>,
        offset: u64,
    ) -> Result<Option<&'input str>> {
        match name {
            Some(value) => self.string_at(value, offset).map(Some),
            None => Ok(None),
        }
    }

    /// The type at a unit offset read through a layout.
    fn fixed_type(&mut self, target: Option<u64>) -> TypeRef {
        match target {
            Some(target) => TypeRef::Node(self.node_id(self.unit_offset + target)),
            None => TypeRef::Void,
        }
    }

    /// `DW_AT_data_member_location` in bytes: a constant, or the old
    /// `DW_OP_plus_uconst N` expression form.
    fn member_location(&self, attrs: &Attrs<'input>, offset: u64) -> Result<u64> {
        let Some(value) = attrs.get(dw::DW_AT_data_member_location) else {
            return Ok(0);
        };
        if let Some(bytes) = attrs::unsigned(&value) {
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

    fn visit_param(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<Scope<'input, 'arena>> {
        let name = self.string(attrs, dw::DW_AT_name, offset)?;
        self.note_name(name);
        let in_function = matches!(self.stack.last(), Some(Scope::Function { .. }));
        if !in_function {
            let ty = self.type_ref(attrs, offset)?;
            if let Some(Scope::Subroutine { .. }) = self.stack.last() {
                self.open_params.push(Param {
                    name,
                    ty,
                    location: ParamLocation::Unknown,
                    entry: ParamEntry::default(),
                    decl_tags: &[],
                });
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

    fn visit_annotation(&mut self, attrs: &Attrs<'input>, offset: u64) -> Result<()> {
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
            ) => decl_tags.push(value),
            _ => {}
        }
        Ok(())
    }

    fn visit_function(
        &mut self,
        attrs: &Attrs<'input>,
        offset: u64,
    ) -> Result<Scope<'input, 'arena>> {
        let name = self.string(attrs, dw::DW_AT_name, offset)?;
        self.note_name(name);
        let linkage_name = match self.string(attrs, dw::DW_AT_linkage_name, offset)? {
            Some(name) => Some(name),
            None => self.string(attrs, dw::DW_AT_MIPS_linkage_name, offset)?,
        };
        let ret = self.optional_type_ref(attrs, offset)?;
        let (low_pc, entry_pc) = self.low_pc(attrs, offset)?;
        let function = RawFunction {
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
    fn low_pc(&self, attrs: &Attrs<'input>, offset: u64) -> Result<(Option<u64>, Option<u64>)> {
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

    fn visit_variable(
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

    /// Finishes a scope whose children have all been read.
    pub(super) fn close(&mut self, scope: Scope<'input, 'arena>) {
        match scope {
            Scope::Skip | Scope::Leaf | Scope::Unit | Scope::Body => {}
            Scope::Function {
                index,
                first_param,
                varargs,
                decl_tags,
            } => {
                let params = self
                    .arena
                    .alloc_slice_copy(self.open_function_params.get(first_param..).unwrap_or(&[]));
                self.open_function_params.truncate(first_param);
                let decl_tags = self.arena.alloc_slice_copy(&decl_tags);
                if let Some(function) = self.functions.get_mut(index) {
                    function.params = params;
                    function.varargs = varargs;
                    function.decl_tags = decl_tags;
                }
            }
            Scope::Composite {
                node,
                kind,
                name,
                byte_size,
                declaration,
                first_member,
                decl_tags,
            } => {
                let members = self
                    .arena
                    .alloc_slice_copy(self.open_members.get(first_member..).unwrap_or(&[]));
                self.open_members.truncate(first_member);
                let decl_tags = self.arena.alloc_slice_copy(&decl_tags);
                self.set_node(
                    node,
                    Node::Composite {
                        kind,
                        name,
                        byte_size,
                        declaration,
                        members,
                        decl_tags,
                    },
                );
            }
            Scope::Enum(pending) => self.enums.push(pending),
            Scope::Array { node, elem, dims } => {
                let dims = dims.into_bump_slice();
                self.set_node(node, Node::Array { elem, dims });
            }
            Scope::Subroutine {
                node,
                ret,
                first_param,
                varargs,
            } => {
                let params = self
                    .arena
                    .alloc_slice_copy(self.open_params.get(first_param..).unwrap_or(&[]));
                self.open_params.truncate(first_param);
                self.set_node(
                    node,
                    Node::Subroutine {
                        ret,
                        params,
                        varargs,
                    },
                );
            }
            Scope::Pointer {
                node,
                target,
                type_tags,
            } => {
                if !type_tags.is_empty() {
                    let type_tags = self.arena.alloc_slice_copy(&type_tags);
                    self.set_node(node, Node::Pointer { target, type_tags });
                }
            }
            Scope::Typedef {
                node,
                name,
                target,
                decl_tags,
            } => {
                if !decl_tags.is_empty() {
                    let decl_tags = self.arena.alloc_slice_copy(&decl_tags);
                    self.set_node(
                        node,
                        Node::Typedef {
                            name,
                            target,
                            decl_tags,
                        },
                    );
                }
            }
            Scope::Annotated { target, tags } => {
                if tags.is_empty() {
                    return;
                }
                let tags = self.arena.alloc_slice_copy(&tags);
                match (target, self.stack.last_mut()) {
                    (AnnotationTarget::LastMember, Some(Scope::Composite { .. })) => {
                        if let Some(member) = self.open_members.last_mut() {
                            member.decl_tags = tags;
                        }
                    }
                    (AnnotationTarget::LastParam, Some(Scope::Function { first_param, .. })) => {
                        let params = self
                            .open_function_params
                            .get_mut(*first_param..)
                            .unwrap_or(&mut []);
                        if let Some(param) = params.last_mut() {
                            param.decl_tags = tags;
                        }
                    }
                    (AnnotationTarget::Variable(index), _) => {
                        if let Some(variable) = self.variables.get_mut(index) {
                            variable.decl_tags = tags;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Element count of one array dimension: `DW_AT_count`, or
/// `DW_AT_upper_bound - DW_AT_lower_bound + 1`; 0 for flexible arrays
/// (no bound), variable-length arrays (non-constant bound) and gcc's
/// zero-length arrays (upper bound -1), a count that does not fit BTF's
/// 32 bits being 0 as in pahole.
pub(super) fn subrange_count(attrs: &Attrs<'_>) -> u64 {
    if let Some(count) = attrs.get(dw::DW_AT_count) {
        return attrs::unsigned(&count).unwrap_or(0);
    }
    let Some(upper) = attrs.get(dw::DW_AT_upper_bound) else {
        return 0;
    };
    let upper = match upper {
        Value::Sdata(value) => value as u64,
        other => match attrs::unsigned(&other) {
            Some(value) => value,
            None => return 0,
        },
    };
    let lower = attrs.udata(dw::DW_AT_lower_bound).unwrap_or(0);
    count_of_bounds(upper, lower)
}

/// The number of elements from `lower` to `upper` inclusive; 0 (unknown)
/// when that does not fit 32 bits, as for `upper` -1 of a zero-length
/// array.
pub(super) fn count_of_bounds(upper: u64, lower: u64) -> u64 {
    let count = upper.wrapping_sub(lower).wrapping_add(1);
    if u32::try_from(count).is_ok() {
        count
    } else {
        0
    }
}

/// Bit offset of a DWARF 2-4 bitfield (`DW_AT_bit_offset` counts from the
/// most significant bit of a `storage`-byte unit at `location_bits`, and is
/// negative when gcc packs a field across the end of that unit).
pub(super) fn dwarf4_bit_offset(
    big_endian: bool,
    location_bits: u64,
    storage: u64,
    bit_offset: i64,
    bit_size: u64,
) -> Option<u64> {
    let location = i128::from(location_bits);
    let offset = if big_endian {
        location + i128::from(bit_offset)
    } else {
        location + i128::from(storage) * 8 - i128::from(bit_offset) - i128::from(bit_size)
    };
    u64::try_from(offset).ok()
}

fn base_encoding(encoding: u64) -> BaseEncoding {
    let encoding = u8::try_from(encoding).unwrap_or(u8::MAX);
    match dw::DwAte(encoding) {
        dw::DW_ATE_signed => BaseEncoding::Signed,
        dw::DW_ATE_unsigned => BaseEncoding::Unsigned,
        dw::DW_ATE_signed_char => BaseEncoding::SignedChar,
        dw::DW_ATE_unsigned_char => BaseEncoding::UnsignedChar,
        dw::DW_ATE_boolean => BaseEncoding::Boolean,
        dw::DW_ATE_float => BaseEncoding::Float,
        _ => BaseEncoding::Other(encoding),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dwarf4_bitfield_positions() {
        // struct { int a:3; int b:5; } on little-endian: a at bit 0, b at 3.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, 29, 3), Some(0));
        assert_eq!(dwarf4_bit_offset(false, 0, 4, 24, 5), Some(3));
        // Big-endian counts from the same end as DW_AT_bit_offset.
        assert_eq!(dwarf4_bit_offset(true, 32, 4, 3, 5), Some(35));
        assert_eq!(dwarf4_bit_offset(false, 0, 1, 9, 3), None);
        // gcc's packed field across its storage unit: negative bit offset.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, -7, 31), Some(8));
        // clang's straddling bitfield in a packed struct: offset -8.
        assert_eq!(dwarf4_bit_offset(false, 0, 4, -8, 10), Some(30));
    }
}
