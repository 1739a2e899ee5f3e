//! Describing one side's types: each type id becomes the node of its
//! canonical description, with references to named types cut to their
//! names.

use super::desc::{Desc, Interner, MemberDesc, NodeId, RefKind, NO_NODE};
use crate::types::{Btf, Composite, Enum, Type, TypeId};

/// Progress of one type id's description.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Unvisited,
    InProgress,
    Done(NodeId),
}

/// Describes the types of one side (a table and its optional base),
/// memoizing per type id.
pub(super) struct Describer<'t, 's> {
    btf: &'t Btf<'s>,
    base: Option<&'t Btf<'s>>,
    /// Number of base ids with a slot (those the base really holds).
    base_slots: u32,
    /// [`super::DiffOptions::datasec_layout`].
    datasec_layout: bool,
    /// Indexed by [`Describer::slot`].
    states: Vec<State>,
    /// The interned name-only (or void/dangling) reference node of each id,
    /// `NO_NODE` until first needed: most references are to named types.
    leaf_nodes: Vec<NodeId>,
}

/// What a reference to a type id is described as.
enum Reference<'s> {
    /// A fixed description (void, dangling, a named-type reference).
    Leaf(Desc<'s>),
    /// The full description of the type, which needs describing first.
    Expand,
}

impl<'t, 's> Describer<'t, 's> {
    pub(super) fn new(btf: &'t Btf<'s>, base: Option<&'t Btf<'s>>, datasec_layout: bool) -> Self {
        let base_slots = base.map_or(0, |base| base.count().min(btf.base_type_count));
        let slots = base_slots as usize + btf.types.len() + 1;
        Describer {
            btf,
            base,
            base_slots,
            datasec_layout,
            states: vec![State::Unvisited; slots],
            leaf_nodes: vec![NO_NODE; slots],
        }
    }

    /// Where `id` is kept in `states` and `leaf_nodes`: slots exist only
    /// for ids that resolve, so a table claiming a huge base without
    /// supplying one costs nothing.
    fn slot(&self, id: TypeId) -> Option<usize> {
        if id.0 <= self.btf.base_type_count {
            (id.0 <= self.base_slots).then_some(id.0 as usize)
        } else {
            let index = id.0 - self.btf.base_type_count - 1;
            (index < self.btf.count()).then_some(self.base_slots as usize + 1 + index as usize)
        }
    }

    fn get(&self, id: TypeId) -> Option<&'t Type<'s>> {
        if id == TypeId::VOID {
            None
        } else if id.0 <= self.btf.base_type_count {
            self.base.and_then(|base| base.get(id))
        } else {
            self.btf.get(id)
        }
    }

    fn state(&self, id: TypeId) -> State {
        self.slot(id)
            .and_then(|slot| self.states.get(slot))
            .copied()
            .unwrap_or(State::Unvisited)
    }

    fn set_state(&mut self, id: TypeId, state: State) {
        if let Some(slot) = self.slot(id).and_then(|slot| self.states.get_mut(slot)) {
            *slot = state;
        }
    }

    fn classify(&self, id: TypeId) -> Reference<'s> {
        if id == TypeId::VOID {
            return Reference::Leaf(Desc::Void);
        }
        let Some(ty) = self.get(id) else {
            return Reference::Leaf(Desc::Dangling);
        };
        match named_reference(ty) {
            Some(desc) => Reference::Leaf(desc),
            None => Reference::Expand,
        }
    }

    /// The node of `root`'s own full description (not its name-only
    /// reference form).
    ///
    /// Walks the graph with an explicit stack, so that long reference
    /// chains cannot overflow the call stack; every id is described once.
    pub(super) fn describe(&mut self, interner: &mut Interner<'s>, root: TypeId) -> NodeId {
        if let State::Done(node) = self.state(root) {
            return node;
        }
        let Some(_) = self.get(root) else {
            let desc = if root == TypeId::VOID {
                Desc::Void
            } else {
                Desc::Dangling
            };
            return interner.intern(desc);
        };
        // (type id, index of the next reference to look at)
        let mut stack: Vec<(TypeId, usize)> = vec![(root, 0)];
        self.set_state(root, State::InProgress);
        'walk: while let Some(&(id, start)) = stack.last() {
            let Some(ty) = self.get(id) else {
                // Only ids that resolved are pushed; treat defensively.
                stack.pop();
                continue;
            };
            let mut index = start;
            while let Some(child) = ty.ref_at(index) {
                index += 1;
                if let Reference::Expand = self.classify(child) {
                    if self.state(child) == State::Unvisited {
                        if let Some(top) = stack.last_mut() {
                            top.1 = index;
                        }
                        self.set_state(child, State::InProgress);
                        stack.push((child, 0));
                        continue 'walk;
                    }
                }
            }
            let desc = self.build(interner, ty);
            let node = interner.intern(desc);
            self.set_state(id, State::Done(node));
            stack.pop();
        }
        match self.state(root) {
            State::Done(node) => node,
            // Unreachable: the walk finishes the root last.
            State::Unvisited | State::InProgress => interner.intern(Desc::Cycle),
        }
    }

    /// The node a reference to `id` is described by; every expandable
    /// child has been described (or is on the walk stack) by now.
    fn reference_node(&mut self, interner: &mut Interner<'s>, id: TypeId) -> NodeId {
        let slot = self.slot(id);
        let cached = slot
            .and_then(|slot| self.leaf_nodes.get(slot))
            .copied()
            .unwrap_or(NO_NODE);
        if cached != NO_NODE {
            return cached;
        }
        match self.classify(id) {
            Reference::Leaf(desc) => {
                let node = interner.intern(desc);
                if let Some(cache) = slot.and_then(|slot| self.leaf_nodes.get_mut(slot)) {
                    *cache = node;
                }
                node
            }
            Reference::Expand => match self.state(id) {
                State::Done(node) => node,
                State::InProgress | State::Unvisited => interner.intern(Desc::Cycle),
            },
        }
    }

    fn build(&mut self, interner: &mut Interner<'s>, ty: &'t Type<'s>) -> Desc<'s> {
        let layout = self.datasec_layout;
        let mut node = |id: TypeId| self.reference_node(interner, id);
        match ty {
            Type::Int(int) => Desc::Int {
                name: int.name,
                size: int.size,
                encoding: int.encoding.0,
                offset: int.offset,
                bits: int.bits,
            },
            Type::Ptr(target) => Desc::Ptr(node(*target)),
            Type::Volatile(target) => Desc::Volatile(node(*target)),
            Type::Const(target) => Desc::Const(node(*target)),
            Type::Restrict(target) => Desc::Restrict(node(*target)),
            Type::Array(array) => Desc::Array {
                elem: node(array.elem),
                index: node(array.index),
                nelems: array.nelems,
            },
            Type::Struct(composite) => {
                let (name, size, kind_flag, members) = aggregate_fields(composite, &mut node);
                Desc::Struct {
                    name,
                    size,
                    kind_flag,
                    members,
                }
            }
            Type::Union(composite) => {
                let (name, size, kind_flag, members) = aggregate_fields(composite, &mut node);
                Desc::Union {
                    name,
                    size,
                    kind_flag,
                    members,
                }
            }
            Type::Enum(e) => Desc::Enum {
                name: e.name,
                size: e.size,
                signed: e.signed,
                // ENUM stores 32 bits; compare those, sign-extended when
                // signed, whatever extension the model chose.
                values: enum_values(e, |value| {
                    if e.signed {
                        value as u32 as i32 as i64 as u64
                    } else {
                        u64::from(value as u32)
                    }
                }),
            },
            Type::Enum64(e) => Desc::Enum64 {
                name: e.name,
                size: e.size,
                signed: e.signed,
                values: enum_values(e, |value| value),
            },
            Type::Fwd(fwd) => Desc::Fwd {
                name: fwd.name,
                union: fwd.union,
            },
            Type::Typedef(named) => Desc::Typedef {
                name: named.name,
                ty: node(named.ty),
            },
            Type::TypeTag(tag) => Desc::TypeTag {
                name: tag.name,
                ty: node(tag.ty),
                attribute: tag.attribute,
            },
            Type::Func(func) => Desc::Func {
                name: func.name,
                ty: node(func.ty),
                linkage: func.linkage,
            },
            Type::Var(var) => Desc::Var {
                name: var.name,
                ty: node(var.ty),
                linkage: var.linkage,
            },
            Type::FuncProto(proto) => Desc::FuncProto {
                ret: node(proto.ret),
                params: proto
                    .params
                    .iter()
                    .map(|param| (param.name.as_str(), node(param.ty)))
                    .collect(),
            },
            Type::Datasec(datasec) => {
                let mut vars: Vec<(NodeId, Option<u32>, u32)> = datasec
                    .vars
                    .iter()
                    .map(|var| (node(var.ty), layout.then_some(var.offset), var.size))
                    .collect();
                if !layout {
                    // Node ids come from the interner both sides share, so
                    // equal multisets sort to equal sequences.
                    vars.sort_unstable();
                }
                Desc::Datasec {
                    name: datasec.name,
                    size: layout.then_some(datasec.size),
                    vars: vars.into_boxed_slice(),
                }
            }
            Type::Float(float) => Desc::Float {
                name: float.name,
                size: float.size,
            },
            Type::DeclTag(tag) => Desc::DeclTag {
                name: tag.name,
                ty: node(tag.ty),
                component_idx: tag.component_idx,
                attribute: tag.attribute,
            },
        }
    }
}

type AggregateFields<'s> = (&'s str, u32, bool, Box<[MemberDesc<'s>]>);

fn aggregate_fields<'s>(
    composite: &Composite<'s>,
    node: &mut impl FnMut(TypeId) -> NodeId,
) -> AggregateFields<'s> {
    let members = composite
        .members
        .iter()
        .map(|member| {
            (
                member.name.as_str(),
                node(member.ty),
                member.bit_offset,
                member.bitfield_size,
            )
        })
        .collect();
    (composite.name, composite.size, composite.kind_flag, members)
}

fn enum_values<'s>(e: &Enum<'s>, normalize: impl Fn(u64) -> u64) -> Box<[(&'s str, u64)]> {
    e.values
        .iter()
        .map(|value| (value.name, normalize(value.value)))
        .collect()
}

/// The name-only description of a reference to `ty`, for the kinds that
/// are referenced by name; `None` when the type must be expanded inline.
fn named_reference<'s>(ty: &Type<'s>) -> Option<Desc<'s>> {
    let (kind, name) = match ty {
        Type::Struct(c) => (RefKind::Struct, c.name),
        Type::Union(c) => (RefKind::Union, c.name),
        Type::Enum(e) => (RefKind::Enum, e.name),
        Type::Enum64(e) => (RefKind::Enum64, e.name),
        Type::Fwd(fwd) if fwd.union => (RefKind::FwdUnion, fwd.name),
        Type::Fwd(fwd) => (RefKind::FwdStruct, fwd.name),
        Type::Typedef(named) => (RefKind::Typedef, named.name),
        _ => return None,
    };
    if name.is_empty() {
        None
    } else {
        Some(Desc::Ref(kind, name))
    }
}
