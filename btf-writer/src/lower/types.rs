//! One CU's type nodes to BTF types, with CU-local ids, following pahole's
//! `btf_encoder__encode_tag` rules.
//!
//! Ids: every node that BTF can express gets the next id, in node order
//! (pahole keeps DWARF order too, which keeps output easy to compare by eye).
//! Nodes BTF cannot express (`_Atomic`, unsupported tags) get no id and
//! every reference to them becomes void, as with pahole, whose loader drops
//! them. Types that have no node of their own (TYPE_TAG chains, the array
//! index `int`, type-level DECL_TAGs) follow after the nodes.

use dwarf::model::{CompositeKind, Node, NodeId, Qualifier, TypeRef};

use super::base::{lower_base, lowers_to_float};
use super::error::Error;
use super::features::Features;
use super::known::{self, KnownTypes, Shape, ADDED_INT};
use super::loops::check_resolvable;
use super::type_map::{is_expressible, kind_name, quoted, TypeMap, UNSIZED_RETURN};
use crate::types::{
    Array, Composite, DeclTag, Enum, EnumValue, FuncProto, Fwd, Int, IntEncoding, Member, Name,
    Named, Param, Type, TypeId, TypeTag,
};

/// A CU's types as [`lower_types`] lowered them.
#[derive(Debug, Default)]
pub(crate) struct LoweredTypes<'input> {
    /// The types; local id `i + 1` is `types[i]`. A node found in the
    /// known types has a stand-in here (see `known`).
    pub types: Vec<Type<'input>>,
    /// The index in `types` and the table id of each node found in the
    /// known types: references to it are references to that table type.
    pub known: Vec<(u32, u32)>,
    /// The shape and local id of each node with a shape that was lowered,
    /// to be filed once the CU's table ids are known.
    pub shaped: Vec<(Shape, TypeId)>,
}

/// What stands in `types` for a node found in the known types: it is
/// never read as a type (its table id replaces it) and refers to nothing.
const STAND_IN: Type<'static> = Type::Ptr(TypeId::VOID);

/// Lowers every node of the CU, then the types without a node of their own
/// (TYPE_TAG chains, the array index type, type-level DECL_TAGs). A node
/// `known` holds (see [`super::known`]) is not lowered again.
pub(crate) fn lower_types<'input>(
    map: &TypeMap<'_, 'input, '_>,
    features: &Features,
    known_types: Option<&KnownTypes>,
) -> Result<LoweredTypes<'input>, Error> {
    let cu = map.cu;
    let mut types: Vec<Type<'input>> = Vec::with_capacity(cu.nodes.len() + cu.nodes.len() / 8);
    // Types appended after the nodes get ids from here on.
    let mut extra: Vec<Type<'input>> = Vec::new();
    let first_extra = map.node_type_count() + 1;
    let next_extra_id = |extra: &Vec<Type<'input>>| TypeId(first_extra + extra.len() as u32);

    let force = features.encode_force;
    // pahole indexes arrays with the CU's `int` (the first base type of
    // that name), or adds one when the CU has none.
    let has_arrays = || {
        cu.nodes
            .iter()
            .any(|node| matches!(node, Node::Array { .. }))
    };
    let int_node = cu
        .nodes
        .iter()
        .position(|node| matches!(node, Node::Base { name: "int", .. }));
    // btf_array_resolve: an index that is no integer is an "Invalid
    // index", and an `int` of float encoding lowers to a FLOAT with the
    // float feature (pahole would index with it all the same). With
    // encode_force the unit gets an `int` of its own, as one without.
    let int_node = match int_node {
        Some(position)
            if matches!(
                cu.nodes.get(position),
                Some(Node::Base { encoding, .. }) if lowers_to_float(*encoding, features.float)
            ) && has_arrays() =>
        {
            map.leave_out(
                force,
                Some(NodeId(position as u32)),
                "the unit's arrays would be indexed by its \"int\", here a float base type: \
                 the kernel wants an integer index (\"Invalid index\", btf_array_resolve)"
                    .to_string(),
            )?;
            None
        }
        other => other,
    };
    let index_type = match int_node {
        Some(position) => map.id(TypeRef::Node(NodeId(position as u32)))?,
        None if has_arrays() => {
            let id = next_extra_id(&extra);
            extra.push(Type::Int(Int {
                name: "int",
                size: 4,
                encoding: IntEncoding(IntEncoding::SIGNED),
                offset: 0,
                bits: 32,
            }));
            id
        }
        None => TypeId::VOID,
    };
    // What the CU's arrays are indexed by, as a shape: the `int` node's,
    // or the `int` added above.
    let shapes = known_types.map(|known_types| {
        let index_shape = match int_node.and_then(|position| cu.nodes.get(position)) {
            Some(int) => known::shape_of_leaf(int),
            None => Some(ADDED_INT),
        };
        known::shapes(cu, index_shape, known_types)
    });
    let mut found: Vec<(u32, u32)> = Vec::new();
    let mut shaped: Vec<(Shape, TypeId)> = Vec::new();

    // The composites that may be on a by-value loop (see
    // `check_resolvable`), by index in `types`.
    let mut may_hold_themselves: Vec<usize> = Vec::new();
    for (index, node) in cu.nodes.iter().enumerate() {
        if !is_expressible(node) {
            continue;
        }
        let this = Some(NodeId(index as u32));
        if let (Some(known_types), Some(shape)) = (
            known_types,
            shapes.as_ref().and_then(|shapes| shapes.get(index)),
        ) {
            // A node found known stands in at its own id: the next one, as
            // for every node lowered here (checked, not assumed).
            let local = TypeId(types.len() as u32 + 1);
            if map.id(TypeRef::Node(NodeId(index as u32)))? == local {
                match known_types.get(shape) {
                    Some(table_id) => {
                        found.push((local.0 - 1, table_id));
                        types.push(STAND_IN);
                        continue;
                    }
                    None => shaped.push((shape, local)),
                }
            }
        }
        let ty = match node {
            Node::Base {
                name,
                byte_size,
                encoding,
                ..
            } => {
                let ty = lower_base(name, *byte_size, *encoding, features, cu.offset)?;
                if let Type::Float(float) = &ty {
                    // btf_float_check_meta: "Invalid type_size".
                    if !matches!(float.size, 2 | 4 | 8 | 12 | 16) {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "float '{name}' of {} bytes: BTF FLOAT sizes are 2, 4, 8, 12 and 16",
                                float.size
                            ),
                        ));
                    }
                }
                ty
            }
            Node::Pointer { target, type_tags } => {
                let mut pointee = map.id(*target)?;
                if features.type_tag {
                    // DWARF lists a pointer's tags in source order; the tag
                    // written last is the one the pointer points to, and
                    // each tag points to the one before it (pahole and
                    // LLVM agree on this order).
                    for tag in type_tags.iter() {
                        // btf_ref_type_check_meta: a TYPE_TAG has a value
                        // ("Invalid name"); without, the pointer skips it.
                        if tag.is_empty() {
                            map.leave_out(
                                features.encode_force,
                                this,
                                "pointer with an empty btf_type_tag (the kernel wants a value)"
                                    .to_string(),
                            )?;
                            continue;
                        }
                        let id = next_extra_id(&extra);
                        extra.push(Type::TypeTag(TypeTag {
                            name: tag,
                            ty: pointee,
                            attribute: false,
                        }));
                        pointee = id;
                    }
                }
                Type::Ptr(pointee)
            }
            Node::Qualified { qualifier, target } => {
                let target = map.id(*target)?;
                match qualifier {
                    Qualifier::Const => Type::Const(target),
                    Qualifier::Volatile => Type::Volatile(target),
                    Qualifier::Restrict => Type::Restrict(target),
                    // Filtered out by is_expressible.
                    Qualifier::Atomic => continue,
                }
            }
            Node::Typedef { name, target, .. } => {
                // btf_typedef_check_meta wants a C identifier.
                if !map.name_ok(name) {
                    return Err(map.unencodable(
                        this,
                        format!("typedef {}: the kernel wants a C identifier", quoted(name)),
                    ));
                }
                Type::Typedef(Named {
                    name,
                    ty: map.id(*target)?,
                })
            }
            // btf_array_resolve: "Invalid elem" for an element of void or
            // function type.
            Node::Array { elem, .. } if map.is_sizeless(*elem)? => {
                return Err(map.unencodable(
                    this,
                    "array whose element is void or a function type".to_string(),
                ));
            }
            Node::Array { elem, dims } => Type::Array(Array {
                elem: map.id(*elem)?,
                index: index_type,
                // pahole multiplies the dimensions in 32 bits, which wraps
                // past 2^32 - 1 elements: BTF cannot count that many.
                nelems: {
                    let product = dims.iter().try_fold(1u128, |acc, dim| {
                        acc.checked_mul(u128::from(*dim)).map(|p| p.min(1 << 64))
                    });
                    match product.and_then(|p| u32::try_from(p).ok()) {
                        Some(nelems) => nelems,
                        None => {
                            return Err(map.unencodable(
                                this,
                                format!(
                                    "array of dimensions {dims:?}: more than 2^32 - 1 elements \
                                     (BTF counts them in 32 bits)"
                                ),
                            ))
                        }
                    }
                },
            }),
            Node::Composite {
                kind,
                name,
                byte_size,
                declaration,
                members,
                ..
            } => {
                let name = name.unwrap_or("");
                if *declaration {
                    // btf_fwd_check_meta wants a C identifier (an
                    // anonymous declaration too: found by the fuzzer).
                    if name.is_empty() || !map.name_ok(name) {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "declaration of {} {}: the kernel wants a C identifier",
                                kind_name(*kind),
                                quoted(name)
                            ),
                        ));
                    }
                    Type::Fwd(Fwd {
                        name,
                        union: *kind == CompositeKind::Union,
                    })
                } else {
                    let lowered =
                        lower_composite(map, this, features, *kind, name, *byte_size, members)?;
                    if lowered.may_hold_itself {
                        may_hold_themselves.push(types.len());
                    }
                    lowered.ty
                }
            }
            Node::Enum {
                name,
                byte_size,
                underlying_signed,
                enumerators,
                ..
            } => lower_enum(
                map,
                this,
                name.unwrap_or(""),
                *byte_size,
                *underlying_signed,
                enumerators,
                features,
            )?,
            Node::Subroutine {
                ret,
                params,
                varargs,
            } => {
                // btf_func_proto_check: a return type other than void
                // itself has a size ("Invalid return type").
                if map.returns_unsized(*ret)? {
                    return Err(map.unencodable(this, format!("function type: {UNSIZED_RETURN}")));
                }
                let mut lowered = Vec::with_capacity(params.len() + usize::from(*varargs));
                for (number, param) in params.iter().enumerate() {
                    // btf_func_proto_check: "Invalid arg#N" (a parameter
                    // cannot be left out: the prototype would change).
                    if map.is_sizeless(param.ty)? {
                        return Err(map.unencodable(
                            this,
                            format!(
                                "function type: parameter {} is void or a function type",
                                number + 1
                            ),
                        ));
                    }
                    let mut name = map.name(param.name)?;
                    // btf_func_proto_check: a name, if any, is a C
                    // identifier ("Invalid arg#N").
                    if !name.is_empty() && !map.name_ok(&name) {
                        map.leave_out(
                            force,
                            this,
                            format!(
                                "function type: parameter {} is named {}, not a C identifier",
                                number + 1,
                                quoted(&name)
                            ),
                        )?;
                        name = Name::EMPTY;
                    }
                    lowered.push(Param {
                        name,
                        ty: map.id(param.ty)?,
                    });
                }
                if lowered.len() + usize::from(*varargs) > MAX_VLEN {
                    return Err(map.unencodable(
                        this,
                        format!(
                            "function type with {} parameters: BTF holds at most {MAX_VLEN}",
                            lowered.len() + usize::from(*varargs)
                        ),
                    ));
                }
                if *varargs {
                    lowered.push(Param {
                        name: Name::EMPTY,
                        ty: TypeId::VOID,
                    });
                }
                Type::FuncProto(FuncProto {
                    ret: map.id(*ret)?,
                    params: lowered.into_boxed_slice(),
                })
            }
            Node::Unsupported { .. } => continue,
        };
        types.push(ty);
    }

    // Going through every member of every struct only to find no tag took
    // 0.7% of btfenc's samples on Debian 6.1's vmlinux, whose gcc writes
    // none.
    if features.decl_tag && cu.decl_tags {
        for (index, node) in cu.nodes.iter().enumerate() {
            let (own_tags, members): (&[&str], &[dwarf::model::Member<'_, '_>]) = match node {
                Node::Composite {
                    decl_tags,
                    members,
                    declaration: false,
                    ..
                } => (decl_tags, members),
                Node::Typedef { decl_tags, .. } => (decl_tags, &[]),
                _ => continue,
            };
            // GCC emits no tags at all: most of the time there is nothing
            // to look up.
            if own_tags.is_empty() && members.iter().all(|member| member.decl_tags.is_empty()) {
                continue;
            }
            let tagged = map.id(TypeRef::Node(NodeId(index as u32)))?;
            // pahole emits member tags before the aggregate's own.
            let die = cu.die_offset(NodeId(index as u32));
            let kept = map.kept_members.borrow();
            let kept = kept.get(&(index as u32));
            for (member_index, member) in members.iter().enumerate() {
                // A member encode_force left out takes its tags along.
                let member_index = match kept {
                    None => member_index,
                    Some(kept) => match kept.iter().position(|&i| i == member_index) {
                        Some(position) => position,
                        None => continue,
                    },
                };
                for tag in member.decl_tags.iter() {
                    if !map.decl_tag_ok(tag, die, || format!("member {member_index}"))? {
                        continue;
                    }
                    extra.push(Type::DeclTag(DeclTag {
                        name: tag,
                        ty: tagged,
                        component_idx: member_index as i32,
                        attribute: false,
                    }));
                }
            }
            for tag in own_tags.iter() {
                if !map.decl_tag_ok(tag, die, || "the type".to_string())? {
                    continue;
                }
                extra.push(Type::DeclTag(DeclTag {
                    name: tag,
                    ty: tagged,
                    component_idx: -1,
                    attribute: false,
                }));
            }
        }
    }

    types.append(&mut extra);
    check_resolvable(map, &types, &may_hold_themselves)?;
    // The table lives until every CU is lowered: slack from the capacity
    // guess above would add up to tens of MB on a vmlinux.
    types.shrink_to_fit();
    Ok(LoweredTypes {
        types,
        known: found,
        shaped,
    })
}

/// A struct or union as lowered, and whether it may be on a loop of
/// types holding each other by value (see [`check_resolvable`]).
struct LoweredComposite<'input> {
    ty: Type<'input>,
    may_hold_itself: bool,
}

#[allow(clippy::too_many_arguments)]
fn lower_composite<'input>(
    map: &TypeMap<'_, 'input, '_>,
    this: Option<NodeId>,
    features: &Features,
    kind: CompositeKind,
    mut name: &'input str,
    byte_size: u32,
    members: &[dwarf::model::Member<'input, '_>],
) -> Result<LoweredComposite<'input>, Error> {
    let (force, float) = (features.encode_force, features.float);
    let is_union = kind == CompositeKind::Union;
    let describe = |name: &str| format!("{} {}", kind_name(kind), quoted(name));
    // btf_struct_check_meta: a name, if any, is a C identifier.
    if !name.is_empty() && !map.name_ok(name) {
        map.leave_out(
            force,
            this,
            format!("{}: the kernel wants a C identifier", describe(name)),
        )?;
        name = "";
    }
    let mut lowered = Vec::with_capacity(members.len());
    let mut kind_flag = false;
    let mut may_hold_itself = false;
    // Which member each lowered one is, once one was left out.
    let mut kept: Option<Vec<usize>> = None;
    let mut last_offset = 0u64;
    // A struct with bitfields gets kind_flag, and the kernel checks all
    // its members as such (btf_*_check_kflag_member).
    let has_bitfields = members.iter().any(|m| m.bitfield_size != 0);
    for (index, member) in members.iter().enumerate() {
        let ty = map.id(member.ty)?;
        let chain = map.chain_end(member.ty)?;
        let mut member_name = map.name(member.name)?;
        // What BTF cannot hold or the kernel's btf_struct_check_meta and
        // member checks refuse; with encode_force the member is left out.
        let bit_offset = member.bit_offset;
        // The member's size, once the checks below read it (those of a
        // member that is no bitfield and has no problem do).
        let mut size = None;
        // btf_struct_resolve: a member of type void (a member DIE without
        // DW_AT_type) is an "Invalid member".
        let problem = if ty == TypeId::VOID {
            Some(match member.ty {
                TypeRef::Void => "it has no type (no DW_AT_type: void)".to_string(),
                TypeRef::Node(_) => "its type (_Atomic or unsupported) has no BTF form".to_string(),
            })
        } else if chain.is_sizeless() {
            Some("its type is void or a function type (through typedefs or qualifiers)".to_string())
        } else if let Some(declared) = map.undefined_declaration(&chain) {
            Some(format!(
                "its type, {declared}, is only declared in this unit: the kernel takes no \
                 member of an incomplete type"
            ))
        } else if member.bitfield_size == 0 && bit_offset % 8 != 0 {
            // btf_*_check_member: "Member is not byte aligned".
            Some(format!(
                "bit offset {bit_offset} is not on a byte, and it is no bitfield"
            ))
        } else if bit_offset > u64::from(u32::MAX) {
            Some(format!(
                "bit offset {bit_offset} does not fit BTF's 32 bits"
            ))
        } else if is_union && bit_offset != 0 {
            Some(format!("a union member at bit {bit_offset}, not 0"))
        } else if bit_offset < last_offset {
            Some(format!(
                "bit offset {bit_offset} is before the previous member's ({last_offset})"
            ))
        } else if bit_offset.div_ceil(8) > u64::from(byte_size) {
            Some(format!(
                "bit offset {bit_offset} is past the end of the {byte_size} bytes"
            ))
        } else if member.bitfield_size == 0
            && (bit_offset / 8).saturating_add(*size.insert(map.lowered_size(&chain)?))
                > u64::from(byte_size)
        {
            Some(format!(
                "at byte {} with {} bytes, it ends past the {byte_size} bytes",
                bit_offset / 8,
                map.lowered_size(&chain)?
            ))
        } else if member.bitfield_size > 255 {
            Some(format!("a bitfield of {} bits", member.bitfield_size))
        } else if has_bitfields {
            TypeMap::kflag_member_problem(member, &chain, byte_size, float)
        } else {
            map.float_member_problem(member, &chain, float)
        };
        if let Some(problem) = problem {
            map.leave_out(
                force,
                this,
                format!(
                    "{}: {problem}",
                    describe_member(&describe(name), index, member)
                ),
            )?;
            kept.get_or_insert_with(|| (0..index).collect());
            continue;
        }
        if let Some(kept) = &mut kept {
            kept.push(index);
        }
        if !may_hold_itself {
            may_hold_itself = match size {
                // It fits (checked above), so if it is on a by-value loop
                // it is as large as the composite and at its start, or of
                // no size (see check_resolvable).
                Some(size) => size == 0 || (bit_offset == 0 && size == u64::from(byte_size)),
                // A bitfield, whose fit is not checked: any that is not an
                // integer may be on a loop.
                None => !matches!(chain.node, Some(Node::Base { .. } | Node::Enum { .. })),
            };
        }
        // A name that is no C identifier: with encode_force the member
        // stays, anonymous (the kernel takes anonymous members).
        if !member_name.is_empty() && !map.name_ok(&member_name) {
            map.leave_out(
                force,
                this,
                format!(
                    "{}: its name is not a C identifier",
                    describe_member(&describe(name), index, member)
                ),
            )?;
            member_name = Name::EMPTY;
        }
        last_offset = bit_offset;
        let bitfield_size = member.bitfield_size as u8;
        kind_flag |= bitfield_size != 0;
        lowered.push(Member {
            name: member_name,
            ty,
            bit_offset: bit_offset as u32,
            bitfield_size,
        });
    }
    if lowered.len() > MAX_VLEN {
        map.leave_out(
            force,
            this,
            format!(
                "{} has {} members, BTF holds at most {MAX_VLEN}: the rest",
                describe(name),
                lowered.len()
            ),
        )?;
        lowered.truncate(MAX_VLEN);
        kept.get_or_insert_with(|| (0..MAX_VLEN).collect())
            .truncate(MAX_VLEN);
    }
    if let (Some(kept), Some(node)) = (kept, this) {
        map.kept_members.borrow_mut().insert(node.0, kept);
    }
    let composite = Composite {
        name,
        size: byte_size,
        members: lowered.into_boxed_slice(),
        kind_flag,
    };
    let ty = match kind {
        CompositeKind::Union => Type::Union(composite),
        CompositeKind::Struct | CompositeKind::Class => Type::Struct(composite),
    };
    Ok(LoweredComposite {
        ty,
        may_hold_itself,
    })
}

/// How a left-out member is named: after its aggregate (`composite`),
/// by position and name. Built only when one is left out.
#[cold]
fn describe_member(composite: &str, index: usize, member: &dwarf::model::Member<'_, '_>) -> String {
    format!(
        "{composite}: member {index} ({})",
        quoted(member.name.unwrap_or(""))
    )
}

/// Most members, enumerators or parameters a BTF type holds (its 16-bit
/// `vlen`).
const MAX_VLEN: usize = 0xffff;

/// ENUM or ENUM64. pahole: 4 bytes or less, or `enum64` off → ENUM, whose
/// kind_flag (signed) libbpf sets when a value is negative; wider → ENUM64,
/// signed as the enum's type is. Without `enum64` the values are cut to
/// their low 32 bits and read as unsigned.
fn lower_enum<'input>(
    map: &TypeMap<'_, 'input, '_>,
    this: Option<NodeId>,
    mut name: &'input str,
    byte_size: u32,
    underlying_signed: Option<bool>,
    all_enumerators: &[dwarf::model::Enumerator<'input>],
    features: &Features,
) -> Result<Type<'input>, Error> {
    let force = features.encode_force;
    // A forward-declared enum has no DW_AT_byte_size; pahole gives it the
    // size of an int (pahole 1.24 writes `ENUM 'e' size=4 vlen=0`).
    let byte_size = if byte_size == 0 { 4 } else { byte_size };
    // btf_enum_check_meta: "Unexpected size", and "Invalid name" for the
    // enum's name (optional) and each enumerator's (required).
    if !matches!(byte_size, 1 | 2 | 4 | 8) {
        return Err(map.unencodable(
            this,
            format!(
                "enum {} of {byte_size} bytes: BTF enums have 1, 2, 4 or 8",
                quoted(name)
            ),
        ));
    }
    let original_name = name;
    if !name.is_empty() && !map.name_ok(name) {
        map.leave_out(
            force,
            this,
            format!("enum {}: the kernel wants a C identifier", quoted(name)),
        )?;
        name = "";
    }
    let mut valid = Vec::new();
    let enumerators: &[dwarf::model::Enumerator<'input>] =
        if all_enumerators.iter().all(|e| map.name_ok(e.name)) {
            all_enumerators
        } else {
            for e in all_enumerators {
                if map.name_ok(e.name) {
                    valid.push(*e);
                } else {
                    map.leave_out(
                        force,
                        this,
                        format!(
                            "enum {}: enumerator {} is no C identifier",
                            quoted(name),
                            quoted(e.name)
                        ),
                    )?;
                }
            }
            &valid
        };
    if enumerators.len() > MAX_VLEN {
        map.leave_out(
            force,
            this,
            format!(
                "enum {} has {} enumerators, BTF holds at most {MAX_VLEN}: the rest",
                quoted(name),
                enumerators.len()
            ),
        )?;
    }
    let enumerators = &enumerators[..enumerators.len().min(MAX_VLEN)];
    // libbpf's dedup takes an ENUM without values for a declaration, and
    // one without a name too for a declaration of every anonymous enum,
    // whatever their sizes (btf_compat_enum): a member of this one could
    // end up with an 8-byte anonymous enum's id and end past its struct.
    // C has no such enum (an empty one is a named declaration); crafted
    // DWARF, or the leave-outs above, can make one, and nothing can be
    // left out in its place.
    if name.is_empty() && enumerators.is_empty() {
        let what = if original_name.is_empty() && all_enumerators.is_empty() {
            "enum without a name or an enumerator".to_string()
        } else {
            format!(
                "enum {} is left without a name or an enumerator the kernel takes",
                quoted(original_name)
            )
        };
        return Err(map.unencodable(
            this,
            format!(
                "{what}: libbpf's dedup would take it for a declaration of any \
                 anonymous enum, whatever the size"
            ),
        ));
    }
    let any_negative = enumerators.iter().any(|e| e.negative);
    if byte_size <= 4 || !features.enum64 {
        let signed = features.enum64 && any_negative;
        // The model keeps ENUM values as the i64 libbpf was given: the low
        // 32 bits, sign-extended when the enum is signed.
        let widen = |value: u64| match signed {
            true => i64::from(value as u32 as i32) as u64,
            false => u64::from(value as u32),
        };
        let values = enumerators
            .iter()
            .map(|e| EnumValue {
                name: e.name,
                value: widen(e.value),
            })
            .collect();
        Ok(Type::Enum(Enum {
            name,
            size: byte_size,
            signed,
            values,
        }))
    } else {
        let values = enumerators
            .iter()
            .map(|e| EnumValue {
                name: e.name,
                value: e.value,
            })
            .collect();
        let signed = underlying_signed.unwrap_or(any_negative);
        Ok(Type::Enum64(Enum {
            name,
            size: byte_size,
            signed,
            values,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::base::{DW_ATE_COMPLEX_FLOAT, SANITIZED_INT_NAME};
    use super::*;
    use crate::lower::test_support::*;
    use crate::test_types::test_name;
    use crate::types::Float;
    use dwarf::model::{BaseEncoding, CuModel};
    use dwarf::model::{Enumerator, Member as DwMember, Param as DwParam, ParamLocation};

    fn lower(cu: &CuModel<'static, '_>, features: &Features) -> Vec<Type<'static>> {
        let map = TypeMap::new(cu, 8).unwrap();
        lower_types(&map, features, None).unwrap().types
    }

    #[test]
    fn base_types_follow_pahole_encoding() {
        // Facts from pahole's add_base_type: signed (incl. signed char and
        // plain char) → SIGNED, _Bool → BOOL, never CHAR; floats are INT
        // without `float`.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            base("char", 1, BaseEncoding::SignedChar),
            base("unsigned char", 1, BaseEncoding::UnsignedChar),
            base("_Bool", 1, BaseEncoding::Boolean),
            base("double", 8, BaseEncoding::Float),
            base("DW_ATE_unsigned_24", 3, BaseEncoding::Unsigned),
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types[0], int("int", 4, IntEncoding::SIGNED));
        assert_eq!(types[1], int("char", 1, IntEncoding::SIGNED));
        assert_eq!(types[2], int("unsigned char", 1, 0));
        assert_eq!(types[3], int("_Bool", 1, IntEncoding::BOOL));
        assert_eq!(types[4], int("double", 8, 0));
        assert_eq!(types[5], int(SANITIZED_INT_NAME, 4, 0));

        let floats = Features {
            float: true,
            ..Features::default()
        };
        let types = lower(&cu, &floats);
        assert_eq!(
            types[4],
            Type::Float(Float {
                name: "double",
                size: 8
            })
        );
    }

    #[test]
    fn complex_float_is_an_error_with_float_feature() {
        let cu = cu_with(vec![base(
            "complex double",
            16,
            BaseEncoding::Other(DW_ATE_COMPLEX_FLOAT),
        )]);
        let features = Features {
            float: true,
            ..Features::default()
        };
        let map = TypeMap::new(&cu, 8).unwrap();
        assert!(matches!(
            lower_types(&map, &features, None).map(|lowered| lowered.types),
            Err(Error::UnsupportedFloat { .. })
        ));
        // Without it, an INT as wide as the type.
        assert_eq!(
            lower(&cu, &Features::default())[0],
            int("complex double", 16, 0)
        );
    }

    #[test]
    fn arrays_flatten_and_use_int_index() {
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("char", 1, BaseEncoding::SignedChar),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[3, 4]),
            },
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[0]),
            },
        ]);
        let types = lower(&cu, &Features::default());
        // No `int` in the CU: one is added after the nodes (id 4).
        assert_eq!(types[3], int("int", 4, IntEncoding::SIGNED));
        assert_eq!(
            types[1],
            Type::Array(Array {
                elem: TypeId(1),
                index: TypeId(4),
                nelems: 12
            })
        );
        assert_eq!(
            types[2],
            Type::Array(Array {
                elem: TypeId(1),
                index: TypeId(4),
                nelems: 0
            })
        );

        let cu = cu_with(vec![
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[5]),
            },
            base("int", 4, BaseEncoding::Signed),
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types.len(), 2);
        assert_eq!(
            types[0],
            Type::Array(Array {
                elem: TypeId(2),
                index: TypeId(2),
                nelems: 5
            })
        );
    }

    #[test]
    fn bitfields_set_kind_flag_and_declarations_are_fwd() {
        let arena = bumpalo::Bump::new();
        let members = arena.alloc_slice_copy(&[
            DwMember {
                name: Some("a"),
                ty: node(0),
                bit_offset: 0,
                bitfield_size: 3,
                decl_tags: &[],
            },
            DwMember {
                name: None,
                ty: node(0),
                bit_offset: 32,
                bitfield_size: 0,
                decl_tags: &[],
            },
        ]);
        let cu = cu_with(vec![
            base("unsigned int", 4, BaseEncoding::Unsigned),
            composite(CompositeKind::Struct, Some("s"), 8, false, members),
            composite(CompositeKind::Union, Some("u"), 0, true, &[]),
            // A union's members are all at bit 0 (btf_struct_check_meta).
            composite(
                CompositeKind::Union,
                Some("v"),
                4,
                false,
                arena.alloc_slice_copy(&[DwMember {
                    bit_offset: 0,
                    ..members[1]
                }]),
            ),
        ]);
        let types = lower(&cu, &Features::default());
        let Type::Struct(s) = &types[1] else {
            panic!("{:?}", types[1])
        };
        assert!(s.kind_flag);
        assert_eq!(
            s.members[0],
            Member {
                name: test_name("a"),
                ty: TypeId(1),
                bit_offset: 0,
                bitfield_size: 3
            }
        );
        assert_eq!(s.members[1].name, "");
        assert_eq!(
            types[2],
            Type::Fwd(Fwd {
                name: "u",
                union: true
            })
        );
        let Type::Union(u) = &types[3] else { panic!() };
        assert!(!u.kind_flag);
    }

    #[test]
    fn enums_signedness_and_enum64() {
        let arena = bumpalo::Bump::new();
        let neg = arena.alloc_slice_copy(&[
            Enumerator {
                name: "A",
                value: u64::MAX,
                negative: true,
            },
            Enumerator {
                name: "B",
                value: 2,
                negative: false,
            },
        ]);
        let big = arena.alloc_slice_copy(&[Enumerator {
            name: "BIG",
            value: 1 << 32,
            negative: false,
        }]);
        let cu = cu_with(vec![
            Node::Enum {
                name: Some("n"),
                byte_size: 4,
                declaration: false,
                underlying_signed: Some(true),
                enumerators: neg,
            },
            Node::Enum {
                name: Some("b"),
                byte_size: 8,
                declaration: false,
                underlying_signed: Some(false),
                enumerators: big,
            },
        ]);
        let types = lower(&cu, &Features::default());
        let Type::Enum(n) = &types[0] else { panic!() };
        assert!(n.signed);
        assert_eq!(
            n.values[0].value,
            u64::MAX,
            "-1, sign-extended as the reader widens it"
        );
        let Type::Enum64(b) = &types[1] else {
            panic!("{:?}", types[1])
        };
        assert!(!b.signed && b.values[0].value == 1 << 32);

        // --skip_encoding_btf_enum64: an 8-byte ENUM with values cut to 32
        // bits, unsigned (pahole passes (uint32_t)value).
        let declared = cu_with(vec![Node::Enum {
            name: Some("fwd_e"),
            byte_size: 0,
            declaration: true,
            underlying_signed: None,
            enumerators: &[],
        }]);
        assert_eq!(
            lower(&declared, &Features::default())[0],
            Type::Enum(Enum {
                name: "fwd_e",
                size: 4,
                signed: false,
                values: Box::default()
            })
        );

        let no64 = Features {
            enum64: false,
            ..Features::default()
        };
        let types = lower(&cu, &no64);
        let Type::Enum(b) = &types[1] else { panic!() };
        assert_eq!((b.size, b.signed, b.values[0].value), (8, false, 0));
        let Type::Enum(n) = &types[0] else { panic!() };
        assert!(!n.signed);
    }

    #[test]
    fn atomic_and_unsupported_read_as_void() {
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Qualified {
                qualifier: Qualifier::Atomic,
                target: node(0),
            },
            Node::Pointer {
                target: node(1),
                type_tags: &[],
            },
            Node::Unsupported { tag: 0x4107 },
            Node::Qualified {
                qualifier: Qualifier::Const,
                target: node(3),
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            types,
            vec![
                int("int", 4, IntEncoding::SIGNED),
                Type::Ptr(TypeId::VOID),
                Type::Const(TypeId::VOID)
            ]
        );
    }

    #[test]
    fn type_tags_chain_last_tag_first() {
        // `int __tag1 __tag2 *p` with clang 14: pahole gives
        // PTR -> TYPE_TAG tag2 -> TYPE_TAG tag1 -> int.
        let arena = bumpalo::Bump::new();
        let tags: &[&str] = arena.alloc_slice_copy(&["tag1", "tag2"]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Pointer {
                target: node(0),
                type_tags: tags,
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(types[1], Type::Ptr(TypeId(4)));
        assert_eq!(
            types[2],
            Type::TypeTag(TypeTag {
                name: "tag1",
                ty: TypeId(1),
                attribute: false,
            })
        );
        assert_eq!(
            types[3],
            Type::TypeTag(TypeTag {
                name: "tag2",
                ty: TypeId(3),
                attribute: false,
            })
        );

        let off = Features {
            type_tag: false,
            ..Features::default()
        };
        assert_eq!(
            lower(&cu, &off),
            vec![int("int", 4, IntEncoding::SIGNED), Type::Ptr(TypeId(1))]
        );
    }

    #[test]
    fn decl_tags_on_members_aggregates_and_typedefs() {
        let arena = bumpalo::Bump::new();
        let mtag: &[&str] = arena.alloc_slice_copy(&["mtag"]);
        let members = arena.alloc_slice_copy(&[
            DwMember {
                name: Some("p"),
                ty: node(0),
                bit_offset: 0,
                bitfield_size: 0,
                decl_tags: &[],
            },
            DwMember {
                name: Some("m"),
                ty: node(0),
                bit_offset: 32,
                bitfield_size: 0,
                decl_tags: mtag,
            },
        ]);
        let stag: &[&str] = arena.alloc_slice_copy(&["stag"]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Composite {
                kind: CompositeKind::Struct,
                name: Some("st"),
                byte_size: 8,
                declaration: false,
                members,
                decl_tags: stag,
            },
            Node::Typedef {
                name: "myint",
                target: node(0),
                decl_tags: arena.alloc_slice_copy(&["tdtag"]),
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            &types[3..],
            &[
                Type::DeclTag(DeclTag {
                    name: "mtag",
                    ty: TypeId(2),
                    component_idx: 1,
                    attribute: false,
                }),
                Type::DeclTag(DeclTag {
                    name: "stag",
                    ty: TypeId(2),
                    component_idx: -1,
                    attribute: false,
                }),
                Type::DeclTag(DeclTag {
                    name: "tdtag",
                    ty: TypeId(3),
                    component_idx: -1,
                    attribute: false,
                }),
            ]
        );
        let off = Features {
            decl_tag: false,
            ..Features::default()
        };
        assert_eq!(lower(&cu, &off).len(), 3);
    }

    #[test]
    fn subroutine_varargs_marker() {
        let arena = bumpalo::Bump::new();
        let params = arena.alloc_slice_copy(&[DwParam {
            name: None,
            ty: node(0),
            location: ParamLocation::Unknown,
            entry: Default::default(),
            decl_tags: &[],
        }]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Subroutine {
                ret: node(0),
                params,
                varargs: true,
            },
            Node::Subroutine {
                ret: TypeRef::Void,
                params: &[],
                varargs: false,
            },
        ]);
        let types = lower(&cu, &Features::default());
        assert_eq!(
            types[1],
            Type::FuncProto(FuncProto {
                ret: TypeId(1),
                params: vec![
                    Param {
                        name: test_name(""),
                        ty: TypeId(1)
                    },
                    Param {
                        name: test_name(""),
                        ty: TypeId::VOID
                    }
                ]
                .into(),
            })
        );
        assert_eq!(
            types[2],
            Type::FuncProto(FuncProto {
                ret: TypeId::VOID,
                params: Box::default()
            })
        );
    }

    #[test]
    fn byte_size_follows_typedefs_and_arrays() {
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Typedef {
                name: "t",
                target: node(0),
                decl_tags: &[],
            },
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[2, 3]),
            },
            Node::Pointer {
                target: TypeRef::Void,
                type_tags: &[],
            },
            // A typedef cycle (bad input) must not hang.
            Node::Typedef {
                name: "loop",
                target: node(4),
                decl_tags: &[],
            },
        ]);
        let map = TypeMap::new(&cu, 8).unwrap();
        assert_eq!(map.byte_size(node(2)).unwrap(), 24);
        assert_eq!(map.byte_size(node(3)).unwrap(), 8);
        assert_eq!(map.byte_size(node(4)).unwrap(), 0);
        assert!(map.id(node(99)).is_err());
    }

    /// Lowers `cu`, returning the types or the error's text, and the
    /// warnings.
    fn try_lower(
        cu: &CuModel<'static, '_>,
        force: bool,
    ) -> (Result<Vec<Type<'static>>, String>, Vec<String>) {
        let features = Features {
            encode_force: force,
            float: true,
            ..Features::default()
        };
        let mut map = TypeMap::new(cu, 8).unwrap();
        map.force = force;
        map.float = features.float;
        let types = lower_types(&map, &features, None)
            .map(|lowered| lowered.types)
            .map_err(|err| err.to_string());
        (types, map.take_warnings())
    }

    fn member(
        name: Option<&'static str>,
        bit_offset: u64,
        tags: &'static [&'static str],
    ) -> DwMember<'static, 'static> {
        DwMember {
            name,
            ty: node(0),
            bit_offset,
            bitfield_size: 0,
            decl_tags: tags,
        }
    }

    #[test]
    fn what_btf_cannot_hold_is_an_error_or_left_out_with_force() {
        let arena = bumpalo::Bump::new();
        // struct bigs { char pad[0x20000000]; int after; }: `after` at bit
        // 2^32, which BTF's 32-bit offset would cut to 0.
        let members = arena.alloc_slice_copy(&[
            member(Some("pad"), 0, &[]),
            member(Some("after"), 1 << 32, &["t"]),
        ]);
        let mut cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            composite(
                CompositeKind::Struct,
                Some("bigs"),
                0x2000_0004,
                false,
                members,
            ),
        ]);
        cu.node_offsets = vec![0x10, 0x2a];
        let (types, warnings) = try_lower(&cu, false);
        let err = types.unwrap_err();
        assert!(
            err.contains("DIE 0x2a") && err.contains("\"bigs\"") && err.contains("\"after\""),
            "{err}"
        );
        assert!(warnings.is_empty());
        let (types, warnings) = try_lower(&cu, true);
        let types = types.unwrap();
        let Type::Struct(s) = &types[1] else { panic!() };
        assert_eq!(s.members.len(), 1);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("left out"));
        // The left-out member's decl tag goes with it.
        assert!(!types.iter().any(|t| matches!(t, Type::DeclTag(_))));

        // int a[65536][65536][16]: the element count wraps in 32 bits.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[65536, 65536, 16]),
            },
        ]);
        assert!(try_lower(&cu, true)
            .0
            .unwrap_err()
            .contains("2^32 - 1 elements"));
        // Wide dimensions with a zero among them are no elements.
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            Node::Array {
                elem: node(0),
                dims: arena.alloc_slice_copy(&[u64::MAX, u64::MAX, 0]),
            },
        ]);
        assert!(try_lower(&cu, false).0.is_ok());
    }

    #[test]
    fn kernel_layout_and_size_rules() {
        let arena = bumpalo::Bump::new();
        let out_of_order =
            arena.alloc_slice_copy(&[member(Some("a"), 32, &[]), member(Some("b"), 0, &[])]);
        let past_end = arena.alloc_slice_copy(&[member(Some("a"), 64, &[])]);
        let union_at_32 = arena.alloc_slice_copy(&[member(Some("a"), 32, &[])]);
        for (kind, size, members, what) in [
            (
                CompositeKind::Struct,
                8,
                &out_of_order[..],
                "before the previous",
            ),
            (CompositeKind::Struct, 8, &past_end[..], "past"),
            (CompositeKind::Struct, 2, &out_of_order[..1], "past the end"),
            (CompositeKind::Union, 8, &union_at_32[..], "not 0"),
        ] {
            let cu = cu_with(vec![
                base("int", 4, BaseEncoding::Signed),
                composite(kind, Some("s"), size, false, members),
            ]);
            let err = try_lower(&cu, false).0.unwrap_err();
            assert!(err.contains(what), "{err}");
        }
        let enumerators = arena.alloc_slice_copy(&[Enumerator {
            name: "A",
            value: 1,
            negative: false,
        }]);
        let cu = cu_with(vec![Node::Enum {
            name: Some("e"),
            byte_size: 3,
            declaration: false,
            underlying_signed: None,
            enumerators,
        }]);
        assert!(try_lower(&cu, true).0.unwrap_err().contains("1, 2, 4 or 8"));
        // An enum with neither a name nor an enumerator (crafted, or left
        // so by encode_force) is an error even with encode_force: libbpf's
        // dedup would merge it with any anonymous enum. Named, it is a
        // declaration, and kept.
        let bad_names = arena.alloc_slice_copy(&[Enumerator {
            name: "1x",
            value: 1,
            negative: false,
        }]);
        for (name, enumerators, forced_ok) in [
            (None, &[][..], false),
            (Some("not an identifier"), &[][..], false),
            (None, &*bad_names, false),
            (Some("e"), &[][..], true),
            (Some("e"), &*bad_names, true),
            (None, &*enumerators, true),
        ] {
            let cu = cu_with(vec![Node::Enum {
                name,
                byte_size: 2,
                declaration: false,
                underlying_signed: None,
                enumerators,
            }]);
            let forced = try_lower(&cu, true).0;
            assert_eq!(forced.is_ok(), forced_ok, "{name:?} {forced:?}");
            if !forced_ok {
                assert!(
                    forced
                        .unwrap_err()
                        .contains("without a name or an enumerator"),
                    "{name:?}"
                );
            }
        }
        let cu = cu_with(vec![base("long double", 6, BaseEncoding::Float)]);
        assert!(try_lower(&cu, true).0.unwrap_err().contains("FLOAT sizes"));
        let cu = cu_with(vec![base("long double", 12, BaseEncoding::Float)]);
        assert!(try_lower(&cu, false).0.is_ok());
    }

    /// The kernel's checks of the members of a struct with bitfields
    /// (kind_flag; the integration test causes::members_of_a_struct_with_bitfields
    /// has the kernel's verdicts): an error, or the member left out.
    #[test]
    fn members_of_a_struct_with_bitfields() {
        let arena = bumpalo::Bump::new();
        // 0 int, 1 enum e (1 byte), 2 int *, 3 double (FLOAT), 4 __int128.
        let enumerators = arena.alloc_slice_copy(&[Enumerator {
            name: "A",
            value: 1,
            negative: false,
        }]);
        let nodes = || {
            vec![
                base("int", 4, BaseEncoding::Signed),
                Node::Enum {
                    name: Some("e"),
                    byte_size: 1,
                    declaration: false,
                    underlying_signed: None,
                    enumerators,
                },
                Node::Pointer {
                    target: node(0),
                    type_tags: &[],
                },
                base("double", 8, BaseEncoding::Float),
                base("__int128", 16, BaseEncoding::Signed),
            ]
        };
        let field = |name, ty: u32, bit_offset, bitfield_size| DwMember {
            name: Some(name),
            ty: node(ty),
            bit_offset,
            bitfield_size,
            decl_tags: &[],
        };
        for (size, members, what) in [
            (
                8,
                vec![field("a", 0, 0, 33)],
                "a bitfield of 33 bits of a 32-bit integer",
            ),
            (8, vec![field("a", 1, 0, 33)], "an enum bitfield of 33 bits"),
            (8, vec![field("a", 2, 0, 3)], "a bitfield of a pointer"),
            (
                8,
                vec![field("a", 3, 0, 3)],
                "a bitfield of a floating-point type",
            ),
            (
                4,
                vec![field("a", 0, 30, 5)],
                "bits 30..35 end past the 4 bytes",
            ),
            (
                4,
                vec![field("a", 0, 0, 3), field("b", 1, 8, 0)],
                "bits 8..40 end past the 4 bytes (an enum member counts as 32 bits",
            ),
            (32, vec![field("a", 4, 4, 125)], "nr_copy_bits exceeds 128"),
            (
                0x20_0004,
                vec![field("a", 0, 1 << 24, 3)],
                "bit offset 16777216 does not fit the 24 bits",
            ),
        ] {
            let members = arena.alloc_slice_copy(&members);
            let mut all = nodes();
            all.push(composite(
                CompositeKind::Struct,
                Some("s"),
                size,
                false,
                members,
            ));
            let cu = cu_with(all);
            let (types, warnings) = try_lower(&cu, false);
            let err = types.unwrap_err();
            assert!(err.contains(what), "{what}: {err}");
            assert!(warnings.is_empty());
            let (types, warnings) = try_lower(&cu, true);
            let Type::Struct(s) = &types.unwrap()[5] else {
                panic!()
            };
            assert_eq!(s.members.len(), members.len() - 1, "{what}");
            assert!(warnings[0].contains(what), "{warnings:?}");
        }
        // Without bitfields the enum member is counted by its size, and
        // fits.
        let members = arena.alloc_slice_copy(&[field("a", 0, 0, 0), field("b", 1, 32, 0)]);
        let mut all = nodes();
        all.push(composite(
            CompositeKind::Struct,
            Some("s"),
            8,
            false,
            members,
        ));
        assert!(try_lower(&cu_with(all), false).0.is_ok());
    }

    #[test]
    fn names_the_kernel_refuses() {
        let arena = bumpalo::Bump::new();
        let members = arena.alloc_slice_copy(&[member(Some("a-b"), 0, &[])]);
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Signed),
            composite(CompositeKind::Struct, Some("s t"), 4, false, members),
        ]);
        let err = try_lower(&cu, false).0.unwrap_err();
        assert!(err.contains("\"s t\""), "{err}");
        let (types, warnings) = try_lower(&cu, true);
        let Type::Struct(s) = &types.unwrap()[1] else {
            panic!()
        };
        assert_eq!((s.name, s.members[0].name.is_empty()), ("", true));
        assert_eq!(warnings.len(), 2);

        let enumerators = arena.alloc_slice_copy(&[
            Enumerator {
                name: "",
                value: 1,
                negative: false,
            },
            Enumerator {
                name: "B",
                value: 2,
                negative: false,
            },
        ]);
        let cu = cu_with(vec![Node::Enum {
            name: Some("e"),
            byte_size: 4,
            declaration: false,
            underlying_signed: None,
            enumerators,
        }]);
        assert!(try_lower(&cu, false).0.unwrap_err().contains("enumerator"));
        let Type::Enum(e) = &try_lower(&cu, true).0.unwrap()[0] else {
            panic!()
        };
        assert_eq!(e.values.len(), 1);

        let long = "x".repeat(129);
        let long: &'static str = Box::leak(long.into_boxed_str());
        for node in [
            Node::Typedef {
                name: long,
                target: TypeRef::Void,
                decl_tags: &[],
            },
            Node::Typedef {
                name: "",
                target: TypeRef::Void,
                decl_tags: &[],
            },
            composite(CompositeKind::Union, Some("1u"), 0, true, &[]),
        ] {
            assert!(try_lower(&cu_with(vec![node]), true).0.is_err());
        }
        assert!(try_lower(
            &cu_with(vec![Node::Typedef {
                name: &long[..128],
                target: TypeRef::Void,
                decl_tags: &[]
            }]),
            false
        )
        .0
        .is_ok());

        // An empty btf_decl_tag value: "Invalid value" in the kernel.
        let cu = cu_with(vec![Node::Typedef {
            name: "t",
            target: TypeRef::Void,
            decl_tags: arena.alloc_slice_copy(&[""]),
        }]);
        assert!(try_lower(&cu, false)
            .0
            .unwrap_err()
            .contains("btf_decl_tag"));
        assert_eq!(try_lower(&cu, true).0.unwrap().len(), 1);
    }

    #[test]
    fn loops_and_chains_the_kernel_cannot_resolve() {
        let arena = bumpalo::Bump::new();
        let ptr = |to: u32| Node::Pointer {
            target: node(to),
            type_tags: &[],
        };
        let typedef = |name: &'static str, to: u32| Node::Typedef {
            name,
            target: node(to),
            decl_tags: &[],
        };
        // A typedef loop, and a struct holding itself through a typedef
        // and an array (a pointer to itself is fine).
        let cu = cu_with(vec![typedef("a", 1), typedef("b", 0)]);
        assert!(try_lower(&cu, true)
            .0
            .unwrap_err()
            .contains("Loop detected"));
        let members =
            arena.alloc_slice_copy(&[member(Some("next"), 0, &[]), member(Some("self"), 0, &[])]);
        let members: &[DwMember<'static, '_>] = arena.alloc_slice_copy(&[
            DwMember {
                ty: node(1),
                ..members[0]
            },
            DwMember {
                ty: node(3),
                ..members[1]
            },
        ]);
        let cu = cu_with(vec![
            composite(CompositeKind::Struct, Some("s"), 16, false, members),
            ptr(0),
            typedef("t", 0),
            Node::Array {
                elem: node(2),
                dims: arena.alloc_slice_copy(&[1]),
            },
        ]);
        assert!(try_lower(&cu, false)
            .0
            .unwrap_err()
            .contains("Loop detected"));
        let cu = cu_with(vec![
            composite(CompositeKind::Struct, Some("s"), 16, false, &members[..1]),
            ptr(0),
        ]);
        assert!(try_lower(&cu, false).0.is_ok());

        // 40 pointers, outermost first as gcc writes them: each refers to
        // a later id, 40 deep (the kernel stops at 32); innermost first,
        // each refers to an earlier one and the kernel takes it.
        let mut nodes: Vec<Node<'static, '_>> = (1..=40).map(ptr).collect();
        nodes.push(base("int", 4, BaseEncoding::Signed));
        assert!(try_lower(&cu_with(nodes), false)
            .0
            .unwrap_err()
            .contains("MAX_RESOLVE_DEPTH"));
        let mut nodes = vec![base("int", 4, BaseEncoding::Signed)];
        nodes.extend((0..40).map(ptr));
        assert!(try_lower(&cu_with(nodes), false).0.is_ok());
        let mut nodes: Vec<Node<'static, '_>> = (1..=32).map(ptr).collect();
        nodes.push(base("int", 4, BaseEncoding::Signed));
        assert!(try_lower(&cu_with(nodes), false).0.is_ok());
    }

    #[test]
    fn an_int_of_float_encoding_is_no_array_index() {
        // pahole indexes arrays by the unit's first base type named `int`;
        // with the float feature one of float encoding is a FLOAT, which
        // the kernel refuses as an index ("Invalid index").
        let arena = bumpalo::Bump::new();
        let cu = cu_with(vec![
            base("int", 4, BaseEncoding::Float),
            base("long", 8, BaseEncoding::Signed),
            Node::Array {
                elem: node(1),
                dims: arena.alloc_slice_copy(&[4]),
            },
        ]);
        let error = try_lower(&cu, false).0.unwrap_err();
        assert!(error.contains("Invalid index"), "{error}");
        // encode_force: the arrays get an int of their own (id 4, after
        // the three nodes), as in a unit without `int`.
        let (types, warnings) = try_lower(&cu, true);
        let types = types.unwrap();
        assert!(
            warnings.len() == 1 && warnings[0].contains("Invalid index"),
            "{warnings:?}"
        );
        assert!(matches!(&types[0], Type::Float(f) if f.name == "int"));
        assert!(matches!(&types[2], Type::Array(a) if a.index == TypeId(4)));
        assert!(
            matches!(&types[3], Type::Int(i) if i.name == "int" && i.size == 4 && i.bits == 32),
            "{:?}",
            types[3]
        );
        // Without the float feature the same `int` is an INT, and the index.
        let features = Features::default();
        let types = lower(&cu, &features);
        assert!(matches!(&types[0], Type::Int(_)));
        assert!(matches!(&types[2], Type::Array(a) if a.index == TypeId(1)));
        // A unit without arrays needs no index: nothing is said.
        let cu = cu_with(vec![base("int", 4, BaseEncoding::Float)]);
        let (types, warnings) = try_lower(&cu, true);
        assert!(types.is_ok() && warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn loops_of_every_shape_are_found_and_others_pass() {
        // The loop check searches only composites with a member as large
        // as they are at their start, or of no size: every loop of
        // composites holding each other by value has one.
        let arena = bumpalo::Bump::new();
        let holding = |name: &'static str, to: u32, bit_offset: u64| DwMember {
            ty: node(to),
            ..member(Some(name), bit_offset, &[])
        };
        let members = |list: &[DwMember<'static, 'static>]| -> &[DwMember<'static, 'static>] {
            arena.alloc_slice_copy(list)
        };
        let int = || base("int", 4, BaseEncoding::Signed);
        let array = |to: u32, dims: &[u64]| Node::Array {
            elem: node(to),
            dims: arena.alloc_slice_copy(dims),
        };
        use CompositeKind::{Struct, Union};
        let loops = [
            // Two structs of one size, each at the other's start.
            vec![
                composite(Struct, Some("a"), 8, false, members(&[holding("b", 1, 0)])),
                composite(Struct, Some("b"), 8, false, members(&[holding("a", 0, 0)])),
            ],
            // A union holding itself beside a smaller member.
            vec![
                composite(
                    Union,
                    Some("u"),
                    8,
                    false,
                    members(&[holding("i", 1, 0), holding("u", 0, 0)]),
                ),
                int(),
            ],
            // A struct ending in a flexible array of itself (no size),
            // through a const typedef; no other member is as large.
            vec![
                composite(
                    Struct,
                    Some("f"),
                    8,
                    false,
                    members(&[
                        holding("i", 1, 0),
                        holding("j", 1, 32),
                        holding("tail", 2, 64),
                    ]),
                ),
                int(),
                array(3, &[0]),
                Node::Qualified {
                    qualifier: Qualifier::Const,
                    target: node(4),
                },
                Node::Typedef {
                    name: "f_t",
                    target: node(0),
                    decl_tags: &[],
                },
            ],
            // An empty struct holding an empty struct holding the first.
            vec![
                composite(Struct, Some("e"), 0, false, members(&[holding("g", 1, 0)])),
                composite(Struct, Some("g"), 0, false, members(&[holding("e", 0, 0)])),
            ],
        ];
        for nodes in loops {
            let error = try_lower(&cu_with(nodes), false).0.unwrap_err();
            assert!(error.contains("Loop detected"), "{error}");
        }
        // A struct holding a smaller one that holds an int, at the start
        // and after it, is no loop.
        let cu = cu_with(vec![
            composite(
                Struct,
                Some("big"),
                16,
                false,
                members(&[holding("first", 1, 0), holding("second", 1, 64)]),
            ),
            composite(
                Struct,
                Some("small"),
                8,
                false,
                members(&[holding("i", 2, 0)]),
            ),
            int(),
        ]);
        assert!(try_lower(&cu, false).0.is_ok());
    }
}
