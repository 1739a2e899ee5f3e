//! Types an earlier CU already lowered, found by their shape so that a
//! later CU refers to them instead of lowering them again.
//!
//! Why: every CU repeats the types of the headers it includes. The table
//! the CUs are added to keeps one copy of each exact duplicate (see
//! `dedup::collapse`), but only after each copy was lowered, prepared and
//! matched: on Debian 6.1's vmlinux half of the 3.3 M types lowered are
//! copies of a type with no cycle below it (an `int`, a pointer to a
//! struct whose members hold no pointer back, a typedef of either).
//!
//! How: each such node gets a [`Shape`], a 128-bit hash of everything its
//! lowering reads: its own fields, with names taken by address (the same
//! bytes of a `.debug_str` a linker merged), and the shapes of the nodes
//! it refers to. A node that reaches a cycle, or whose lowering adds types
//! of its own (tags), gets none. Once a CU is in the table, each of its
//! shaped nodes that the table already had a copy of is filed under its
//! shape in [`KnownTypes`], with that copy's id; a later CU looks each of
//! its shaped nodes up there, and lowers only those not found.
//!
//! Why the table is the same: a node found has the shape of one the
//! collapse matched to table type `T`, so it lowers to the same fields
//! referring to the same table types, and the collapse would match it to
//! `T` too (it takes the oldest identical type, and `T` was that when the
//! shape was filed; types added since are younger). Only matched nodes
//! are filed, not new ones: a CU's new type may refer to a duplicate made
//! in its own CU (compilers repeat an array or a pointer within a unit)
//! where the next copy is matched to the older one. A node not found (its
//! twin's CU not yet added, the registry full) is lowered and matched as
//! before. So which nodes are found, which depends on how far the other
//! worker got, changes the time and not the table (checked on real files:
//! `encode::assemble`'s tests). The one way this could go wrong is two
//! shapes that differ agreeing in the 95 bits the registry compares: on
//! a vmlinux, about 1.7 * 10^4 shapes filed and 3 * 10^6 looked up, the
//! odds are below 10^-17.
//!
//! Why cycles get no shape, although the collapse matches 0.7 M of their
//! members on Debian 6.1's vmlinux: shaping them was tried (November
//! 2026) and cost more than it saved. A cycle was shaped whole: Tarjan's
//! components, each member's own hash, a start (the member with the
//! smallest own hash, if no other member shares it), the members numbered
//! depth first from it, and one hash over all of them. Found nodes went
//! from 1.64 M to 2.33 M and the output stayed the same, but instructions
//! went up 2.5% (11.93 G to 12.23 G at `-j1`), and the single-thread time
//! by 11% (10 alternating pairs). The components cost the most: the
//! `task_struct` graph of each unit (hundreds to thousands of nodes)
//! differs from unit to unit by which structs the unit defines, so its
//! copies are rarely found (344 K of 1.16 M members of cycles over 256
//! nodes), yet each must be followed edge by edge to be shaped, and all
//! that reaches it with it. Running Tarjan only on the nodes this DFS
//! marks as reaching a cycle, and shaping only cycles of up to 256
//! members, still cost 1.5% more instructions than not shaping cycles
//! (12.11 G; about 1% once the test build's lookup of its size limit,
//! once per cycle, is taken out, an estimate).
//!
//! The most that finding every copy of a struct or union could save was
//! measured too (November 2026, throwaway build): a first run listed, by
//! DIE offset, the 927,689 of Debian 6.1's 1,065,438 composites that are
//! exact copies of a table type (634,146 found by their shape here,
//! 293,543 matched by the collapse), and a second run read that list,
//! stood each in for its table type as a found node does, and skipped its
//! members' names and lists in the walk (their type references still
//! taken, which keeps the node order). The output stayed byte-identical,
//! with one change to the collapse: a new cycle's members must also be
//! filed as single types, or a pointer to a stood-in struct, now outside
//! any cycle, is not matched to the table's copy of it (that alone cost
//! 1.4% more instructions). With that change, instructions at `-j1` were
//! 12.26 G without the list and 10.51 G with it: 12% below the 11.93 G of
//! the code as it was then, without the change or the list (the walk's
//! fast path has been inlined since: 11.68 G). That is a ceiling:
//! the list came free, and a real build would have to tell an exact copy
//! before reading its members (from a key of the members' own fields,
//! confirmed once its member types are known), which costs part of it.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use dwarf::model::{
    BaseEncoding, CompositeKind, CuModel, Enumerator, Member, Node, Param, Qualifier, TypeRef,
};

/// A 128-bit hash of a node's lowering (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape(u64, u64);

/// The folded 128-bit product of two words, as wyhash and foldhash mix.
#[inline(always)]
fn mum(x: u64, y: u64) -> u64 {
    let product = u128::from(x) * u128::from(y);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Builds a [`Shape`] from pairs of words: two lanes, each mixing a pair
/// with one multiplication, with their own constants and the pair's
/// words in the opposite roles. What is hashed always ends with a pair,
/// whose mixing is the last step.
#[derive(Clone, Copy)]
struct ShapeHasher(u64, u64);

impl ShapeHasher {
    /// Starts a node of kind `tag` (below 2^8) with `count` parts (members,
    /// enumerators, parameters, dimensions: below 2^56). Both lanes come
    /// from one product, which is distinct for each pair of the two.
    #[inline(always)]
    fn new(tag: u64, count: u64) -> Self {
        let product = u128::from(tag << 56 ^ count ^ 0x243f_6a88_85a3_08d3)
            * u128::from(0x9e37_79b9_7f4a_7c15u64);
        ShapeHasher(
            product as u64 ^ 0x1319_8a2e_0370_7344,
            (product >> 64) as u64 ^ 0xa409_3822_299f_31d0,
        )
    }

    #[inline(always)]
    fn pair(self, first: u64, second: u64) -> Self {
        ShapeHasher(
            mum(
                self.0 ^ first ^ 0x9e37_79b9_7f4a_7c15,
                second ^ 0xa076_1d64_78bd_642f,
            ),
            mum(
                self.1 ^ second ^ 0xe703_7ed1_a0b4_28db,
                first ^ 0x8ebc_6af0_9c88_c6e3,
            ),
        )
    }

    #[inline(always)]
    fn shape(self, shape: Shape) -> Self {
        self.pair(shape.0, shape.1)
    }

    #[inline(always)]
    fn finish(self) -> Shape {
        Shape(self.0, self.1)
    }
}

/// A name as one word: its address, and its length above bit 48. Equal
/// words mean the same bytes of the same section (a name copied elsewhere
/// is only missed). `None` for an address or length too large to pack
/// (none on x86-64 or arm64, whose user addresses take 48 bits at most).
#[inline(always)]
fn name_word(name: Option<&str>) -> Option<u64> {
    let Some(name) = name else {
        // No &str has address 0.
        return Some(0);
    };
    let address = name.as_ptr() as u64;
    let len = name.len() as u64;
    (address < 1 << 48 && len < 1 << 16).then_some(address | len << 48)
}

/// Two numbers as one word, the first below bit 40; `None` when either
/// does not fit (the lowering refuses such offsets anyway).
#[inline(always)]
fn packed(low: u64, high: u64) -> Option<u64> {
    (low < 1 << 40 && high < 1 << 24).then_some(low | high << 40)
}

/// What a reference to void contributes.
const VOID: Shape = Shape(0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b);

/// Where a node's shape stands while shapes are computed.
const UNVISITED: u8 = 0;
/// On the walk's stack: meeting it again closes a cycle.
const OPEN: u8 = 1;
const SHAPED: u8 = 2;
/// Done, without a shape.
const UNSHAPED: u8 = 3;

/// The shapes of a CU's nodes (see [`shapes`]).
pub(super) struct Shapes {
    state: Vec<u8>,
    shape: Vec<Shape>,
}

impl Shapes {
    /// The shape of node `index`, if it has one.
    #[inline]
    pub(super) fn get(&self, index: usize) -> Option<Shape> {
        match self.state.get(index) {
            Some(&SHAPED) => self.shape.get(index).copied(),
            _ => None,
        }
    }
}

/// The shape of each node of `cu` (none for a node that reaches a cycle,
/// or whose lowering adds types of its own), `index` being what the CU's
/// arrays are indexed by (see `lower_types`).
///
/// Each shape's slot in `known_types` starts loading as soon as the shape
/// is known: `lower_types` looks every shape up once the whole CU is
/// shaped, and by then the slots (about 100 KB for a CU of average size)
/// are in the core's cache. Looked up cold, the load of the slot took a
/// fifth of `lower_types`' samples on Debian 6.1's vmlinux (`perf`, cpu
/// clock); prefetching it here took about 3% off btfenc's CPU time for
/// 0.1% more instructions.
pub(super) fn shapes(
    cu: &CuModel<'_, '_>,
    index: Option<Shape>,
    known_types: &KnownTypes,
) -> Shapes {
    let count = cu.nodes.len();
    let mut state = vec![UNVISITED; count];
    // Read only where `state` says SHAPED.
    let mut shape = vec![Shape(0, 0); count];
    let mut stack: Vec<u32> = Vec::new();
    for root in 0..count {
        if state[root] != UNVISITED {
            continue;
        }
        stack.push(root as u32);
        while let Some(&top) = stack.last() {
            let node = top as usize;
            let Some(this) = cu.nodes.get(node) else {
                stack.pop();
                continue;
            };
            match state[node] {
                UNVISITED => {
                    state[node] = OPEN;
                    // Targets not yet visited go on the stack; the node is
                    // shaped when it is on top again with all of them done.
                    // One that is open (a cycle back to this node) or has
                    // no shape settles it at once: neither has this node,
                    // and the targets not visited yet are left for later.
                    let before = stack.len();
                    let may_have_shape = all_targets(this, |target| match target {
                        TypeRef::Void => true,
                        TypeRef::Node(t) => match state.get(t.0 as usize) {
                            Some(&UNVISITED) => {
                                stack.push(t.0);
                                true
                            }
                            Some(&SHAPED) => true,
                            _ => false,
                        },
                    });
                    if !may_have_shape {
                        stack.truncate(before);
                        stack.pop();
                        state[node] = UNSHAPED;
                        continue;
                    }
                    if stack.len() > before {
                        continue;
                    }
                }
                OPEN => {}
                // Pushed twice, done since.
                _ => {
                    stack.pop();
                    continue;
                }
            }
            stack.pop();
            // Every target is done, or open: on a cycle back to this node.
            let target_shape = |target: TypeRef| -> Option<Shape> {
                match target {
                    TypeRef::Void => Some(VOID),
                    TypeRef::Node(t) => match state.get(t.0 as usize) {
                        Some(&SHAPED) => shape.get(t.0 as usize).copied(),
                        _ => None,
                    },
                }
            };
            let (new_state, new_shape) = match shape_of(this, index, target_shape) {
                Some(found) => {
                    known_types.prefetch(found);
                    (SHAPED, found)
                }
                None => (UNSHAPED, VOID),
            };
            state[node] = new_state;
            shape[node] = new_shape;
        }
    }
    Shapes { state, shape }
}

/// Calls `f` with each reference of a node, in order, until it returns
/// false; whether it never did.
#[inline(always)]
fn all_targets(node: &Node<'_, '_>, mut f: impl FnMut(TypeRef) -> bool) -> bool {
    match node {
        Node::Base { .. } | Node::Enum { .. } | Node::Unsupported { .. } => true,
        Node::Pointer { target, .. }
        | Node::Qualified { target, .. }
        | Node::Typedef { target, .. } => f(*target),
        Node::Array { elem, .. } => f(*elem),
        Node::Composite { members, .. } => members.iter().all(|m| f(m.ty)),
        Node::Subroutine { ret, params, .. } => f(*ret) && params.iter().all(|p| f(p.ty)),
    }
}

fn composite_tag(kind: CompositeKind) -> u64 {
    match kind {
        CompositeKind::Struct => 0,
        CompositeKind::Union => 1,
        CompositeKind::Class => 2,
    }
}

fn encoding_word(encoding: BaseEncoding) -> u64 {
    match encoding {
        BaseEncoding::Signed => 1,
        BaseEncoding::Unsigned => 2,
        BaseEncoding::SignedChar => 3,
        BaseEncoding::UnsignedChar => 4,
        BaseEncoding::Boolean => 5,
        BaseEncoding::Float => 6,
        BaseEncoding::Other(value) => 0x100 | u64::from(value),
    }
}

fn qualifier_word(qualifier: Qualifier) -> u64 {
    match qualifier {
        Qualifier::Const => 1,
        Qualifier::Volatile => 2,
        Qualifier::Restrict => 3,
        Qualifier::Atomic => 4,
    }
}

/// A node's shape from its fields and its targets' shapes. Every field is
/// named (no `..`), so that a field added to the model does not go
/// unhashed unnoticed.
fn shape_of(
    node: &Node<'_, '_>,
    index: Option<Shape>,
    target: impl Fn(TypeRef) -> Option<Shape>,
) -> Option<Shape> {
    Some(match *node {
        Node::Base {
            name,
            byte_size,
            encoding,
            bit_size,
        } => ShapeHasher::new(1, bit_size.map_or(1 << 32, u64::from))
            .pair(
                name_word(Some(name))?,
                packed(u64::from(byte_size), encoding_word(encoding))?,
            )
            .finish(),
        Node::Pointer {
            target: to,
            type_tags,
        } => {
            // Tags lower to TYPE_TAGs of their own, after the nodes.
            if !type_tags.is_empty() {
                return None;
            }
            ShapeHasher::new(2, 0).shape(target(to)?).finish()
        }
        Node::Qualified {
            qualifier,
            target: to,
        } => ShapeHasher::new(3, qualifier_word(qualifier))
            .shape(target(to)?)
            .finish(),
        Node::Typedef {
            name,
            target: to,
            decl_tags,
        } => {
            // Tags lower to DECL_TAGs of their own, after the nodes.
            if !decl_tags.is_empty() {
                return None;
            }
            ShapeHasher::new(4, 0)
                .pair(name_word(Some(name))?, 0)
                .shape(target(to)?)
                .finish()
        }
        Node::Array { elem, dims } => {
            // Its index is the CU's `int`, whatever that is.
            let mut h = ShapeHasher::new(5, dims.len() as u64)
                .shape(index?)
                .shape(target(elem)?);
            for pair in dims.chunks(2) {
                h = h.pair(pair[0], pair.get(1).copied().unwrap_or(0));
            }
            h.finish()
        }
        Node::Composite {
            kind,
            name,
            byte_size,
            declaration,
            members,
            decl_tags,
        } => {
            if !decl_tags.is_empty() {
                return None;
            }
            let mut h = ShapeHasher::new(6, members.len() as u64).pair(
                name_word(name)?,
                packed(
                    u64::from(byte_size),
                    composite_tag(kind) << 1 | u64::from(declaration),
                )?,
            );
            for &Member {
                name,
                ty,
                bit_offset,
                bitfield_size,
                decl_tags,
            } in members
            {
                if !decl_tags.is_empty() {
                    return None;
                }
                h = h
                    .pair(
                        name_word(name)?,
                        packed(bit_offset, u64::from(bitfield_size))?,
                    )
                    .shape(target(ty)?);
            }
            h.finish()
        }
        Node::Enum {
            name,
            byte_size,
            declaration,
            underlying_signed,
            enumerators,
        } => {
            let signed = underlying_signed.map_or(2, u64::from);
            let mut h = ShapeHasher::new(7, enumerators.len() as u64).pair(
                name_word(name)?,
                packed(u64::from(byte_size), signed << 1 | u64::from(declaration))?,
            );
            for &Enumerator {
                name,
                value,
                negative,
            } in enumerators
            {
                // The sign goes with the name: both fit one word.
                let name = name_word(Some(name))?;
                if name & 1 << 47 != 0 {
                    return None;
                }
                h = h.pair(name | u64::from(negative) << 47, value);
            }
            h.finish()
        }
        Node::Subroutine {
            ret,
            params,
            varargs,
        } => {
            let mut h = ShapeHasher::new(8, (params.len() as u64) << 1 | u64::from(varargs))
                .shape(target(ret)?);
            // A prototype's parameters have no location; only their names
            // and types are lowered.
            for &Param {
                name,
                ty,
                decl_tags,
                ..
            } in params
            {
                if !decl_tags.is_empty() {
                    return None;
                }
                h = h.shape(target(ty)?).pair(name_word(name)?, 0);
            }
            h.finish()
        }
        Node::Unsupported { tag } => ShapeHasher::new(9, 0).pair(u64::from(tag), 0).finish(),
    })
}

/// The shape of a node that refers to no other (a base type: the CU's
/// `int`, which indexes its arrays).
pub(super) fn shape_of_leaf(node: &Node<'_, '_>) -> Option<Shape> {
    shape_of(node, None, |_| None)
}

/// What an array is indexed by when its CU has no `int` of its own and
/// lowering adds one (see `lower_types`).
pub(super) const ADDED_INT: Shape = Shape(0x4528_21e6_38d0_1377, 0xbe54_66cf_34e9_0c6c);

/// The table ids of the shapes filed so far (see the module docs): one
/// writer at a time in the pipeline (whoever adds a CU to the table) and
/// any number of readers (the workers lowering the next CUs), without a
/// lock.
///
/// An open-addressing table of a fixed number of slots: filing stops at
/// three quarters full, which only means later copies are lowered again.
/// A slot is two words: the shape's first half (with its top bit set; 0
/// marks a free slot, `CLAIMED` one being filled) and, below it, 32 bits
/// of its second half and the table id. A writer claims a free slot, then
/// stores the second word, then the first with release ordering: a reader
/// that sees the first word sees the second.
#[derive(Debug)]
pub struct KnownTypes {
    /// Two words per slot.
    words: Box<[AtomicU64]>,
    filed: AtomicUsize,
}

/// The first word of a slot being filled (no shape's: those have their
/// top bit set).
const CLAIMED: u64 = 1;

/// The most slots a registry takes.
const MAX_SLOTS: usize = 1 << 30;

impl KnownTypes {
    /// A registry of `slots` slots (rounded up to a power of two, at most
    /// 2^30; 0 files nothing). Each takes 16 bytes, zeroed by the system
    /// and so resident only once used.
    pub fn new(slots: usize) -> Self {
        let slots = match slots {
            0 => 0,
            _ => slots.min(MAX_SLOTS).next_power_of_two(),
        };
        let words = Box::<[AtomicU64]>::new_zeroed_slice(2 * slots);
        // SAFETY: all zero bits are a valid AtomicU64 (0).
        let words = unsafe { words.assume_init() };
        KnownTypes {
            words,
            filed: AtomicUsize::new(0),
        }
    }

    fn slot_count(&self) -> usize {
        self.words.len() / 2
    }

    /// The mask of slot indexes, and the slot where probing for `shape`
    /// starts; `None` for a registry of no slots.
    #[inline(always)]
    fn home(&self, shape: Shape) -> Option<(usize, usize)> {
        let mask = self.slot_count().checked_sub(1)?;
        Some((mask, (shape.1 as usize) & mask))
    }

    fn first_word(shape: Shape) -> u64 {
        shape.0 | 1 << 63
    }

    /// Starts loading the slot where a lookup of `shape` begins (see
    /// [`shapes`]): a hint, with no effect on any result.
    #[inline(always)]
    fn prefetch(&self, shape: Shape) {
        let Some((_, at)) = self.home(shape) else {
            return;
        };
        if let Some(word) = self.words.get(2 * at) {
            crate::cache_hint::prefetch(word);
        }
    }

    /// The table id filed under `shape`, if any.
    #[inline]
    pub fn get(&self, shape: Shape) -> Option<u32> {
        let (mask, mut at) = self.home(shape)?;
        let first = Self::first_word(shape);
        loop {
            let word = self.words.get(2 * at)?.load(Ordering::Acquire);
            if word == 0 {
                return None;
            }
            if word == first {
                let second = self.words.get(2 * at + 1)?.load(Ordering::Relaxed);
                if second >> 32 == shape.1 >> 32 {
                    return Some(second as u32);
                }
            }
            at = (at + 1) & mask;
        }
    }

    /// Files `id` under `shape`, unless some id already is or the table is
    /// three quarters full. Any thread may file and look up meanwhile;
    /// two filing one shape at once may both file it (a lookup then finds
    /// one of the two).
    pub fn file(&self, shape: Shape, id: u32) {
        let Some((mask, mut at)) = self.home(shape) else {
            return;
        };
        if (self.filed.load(Ordering::Relaxed) + 1) * 4 > self.slot_count() * 3 {
            return;
        }
        let first = Self::first_word(shape);
        loop {
            let (Some(head), Some(rest)) = (self.words.get(2 * at), self.words.get(2 * at + 1))
            else {
                return;
            };
            match head.compare_exchange(0, CLAIMED, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => {
                    rest.store((shape.1 >> 32) << 32 | u64::from(id), Ordering::Relaxed);
                    head.store(first, Ordering::Release);
                    self.filed.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Err(word) if word == first => {
                    if rest.load(Ordering::Relaxed) >> 32 == shape.1 >> 32 {
                        return;
                    }
                }
                Err(_) => {}
            }
            at = (at + 1) & mask;
        }
    }

    /// How many shapes are filed.
    pub fn len(&self) -> usize {
        self.filed.load(Ordering::Relaxed)
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::test_support::{base, composite, cu_with, node};
    use dwarf::model::{CuModel, Node};

    // One copy of each name, so that equal names are at one address, as
    // names in one `.debug_str` are.
    const INT: &str = "int";
    const LONG: &str = "long";
    const S: &str = "s";
    const A: &str = "a";
    const B: &str = "b";

    fn shape_in(cu: &CuModel<'_, '_>, index: usize) -> Option<Shape> {
        shapes(cu, Some(ADDED_INT), &KnownTypes::new(0)).get(index)
    }

    fn member(name: &'static str, ty: TypeRef, bit_offset: u64) -> Member<'static, 'static> {
        Member {
            name: Some(name),
            ty,
            bit_offset,
            bitfield_size: 0,
            decl_tags: &[],
        }
    }

    /// The nodes a struct's variants are built on: 0 `int`, 1 `long`.
    fn with_struct(s: Node<'static, 'static>) -> Option<Shape> {
        let cu = cu_with(vec![
            base(INT, 4, BaseEncoding::Signed),
            base(LONG, 8, BaseEncoding::Signed),
            s,
        ]);
        shape_in(&cu, 2)
    }

    fn leak<T>(items: Vec<T>) -> &'static [T] {
        Box::leak(items.into_boxed_slice())
    }

    /// The same node in two CUs, at other indexes and with other nodes
    /// around it, has one shape; changing any one field the lowering reads
    /// changes it.
    #[test]
    fn a_shape_is_the_same_for_a_copy_and_differs_for_any_change() {
        let members = leak(vec![member(A, node(0), 0), member(B, node(1), 64)]);
        let original = composite(CompositeKind::Struct, Some(S), 16, false, members);
        let shape = with_struct(original).expect("shaped");
        // A copy elsewhere in another CU.
        let members_again = leak(vec![member(A, node(3), 0), member(B, node(1), 64)]);
        let other_cu = cu_with(vec![
            Node::Pointer {
                target: node(2),
                type_tags: &[],
            },
            base(LONG, 8, BaseEncoding::Signed),
            composite(CompositeKind::Struct, Some(S), 16, false, members_again),
            base(INT, 4, BaseEncoding::Signed),
        ]);
        assert_eq!(shape_in(&other_cu, 2), Some(shape));

        let variants: Vec<(&str, Node<'static, 'static>)> = vec![
            (
                "kind",
                composite(CompositeKind::Union, Some(S), 16, false, members),
            ),
            (
                "name",
                composite(CompositeKind::Struct, Some(A), 16, false, members),
            ),
            (
                "anonymous",
                composite(CompositeKind::Struct, None, 16, false, members),
            ),
            (
                "size",
                composite(CompositeKind::Struct, Some(S), 24, false, members),
            ),
            (
                "declaration",
                composite(CompositeKind::Struct, Some(S), 16, true, members),
            ),
            (
                "member name",
                composite(
                    CompositeKind::Struct,
                    Some(S),
                    16,
                    false,
                    leak(vec![member(B, node(0), 0), member(B, node(1), 64)]),
                ),
            ),
            (
                "member type",
                composite(
                    CompositeKind::Struct,
                    Some(S),
                    16,
                    false,
                    leak(vec![member(A, node(1), 0), member(B, node(1), 64)]),
                ),
            ),
            (
                "member offset",
                composite(
                    CompositeKind::Struct,
                    Some(S),
                    16,
                    false,
                    leak(vec![member(A, node(0), 0), member(B, node(1), 32)]),
                ),
            ),
            (
                "bitfield",
                composite(
                    CompositeKind::Struct,
                    Some(S),
                    16,
                    false,
                    leak(vec![
                        Member {
                            bitfield_size: 3,
                            ..member(A, node(0), 0)
                        },
                        member(B, node(1), 64),
                    ]),
                ),
            ),
            (
                "a member fewer",
                composite(
                    CompositeKind::Struct,
                    Some(S),
                    16,
                    false,
                    leak(vec![member(A, node(0), 0)]),
                ),
            ),
        ];
        for (what, variant) in variants {
            assert_ne!(with_struct(variant), Some(shape), "{what}");
        }
    }

    /// Equal bytes at another address are another name: missed, never
    /// confused.
    #[test]
    fn names_count_by_address() {
        let copy: &'static str = Box::leak(String::from(INT).into_boxed_str());
        let a = cu_with(vec![base(INT, 4, BaseEncoding::Signed)]);
        let b = cu_with(vec![base(copy, 4, BaseEncoding::Signed)]);
        assert_ne!(shape_in(&a, 0), shape_in(&b, 0));
    }

    #[test]
    fn base_enum_array_and_prototype_fields_count() {
        let one = |n: Node<'static, 'static>| {
            let cu = cu_with(vec![base(INT, 4, BaseEncoding::Signed), n]);
            shape_in(&cu, 1).expect("shaped")
        };
        let int = |size, encoding, bit_size| Node::Base {
            name: INT,
            byte_size: size,
            encoding,
            bit_size,
        };
        let bases = [
            one(int(4, BaseEncoding::Signed, None)),
            one(int(8, BaseEncoding::Signed, None)),
            one(int(4, BaseEncoding::Unsigned, None)),
            one(int(4, BaseEncoding::Signed, Some(31))),
        ];
        let enumerator = |name, value, negative| Enumerator {
            name,
            value,
            negative,
        };
        let an_enum = |values: Vec<Enumerator<'static>>, signed| Node::Enum {
            name: Some(S),
            byte_size: 4,
            declaration: false,
            underlying_signed: signed,
            enumerators: leak(values),
        };
        let enums = [
            one(an_enum(vec![enumerator(A, 1, false)], Some(true))),
            one(an_enum(vec![enumerator(A, 1, true)], Some(true))),
            one(an_enum(vec![enumerator(A, 2, false)], Some(true))),
            one(an_enum(vec![enumerator(B, 1, false)], Some(true))),
            one(an_enum(vec![enumerator(A, 1, false)], None)),
            one(an_enum(vec![], Some(true))),
        ];
        let array = |dims: Vec<u64>| Node::Array {
            elem: node(0),
            dims: leak(dims),
        };
        let arrays = [
            one(array(vec![4])),
            one(array(vec![5])),
            one(array(vec![4, 1])),
            one(array(vec![])),
        ];
        let proto = |ret, params: Vec<Param<'static, 'static>>, varargs| Node::Subroutine {
            ret,
            params: leak(params),
            varargs,
        };
        let p = |name, ty| Param::of_prototype(name, ty);
        let protos = [
            one(proto(node(0), vec![p(Some(A), node(0))], false)),
            one(proto(TypeRef::Void, vec![p(Some(A), node(0))], false)),
            one(proto(node(0), vec![p(Some(B), node(0))], false)),
            one(proto(node(0), vec![p(None, node(0))], false)),
            one(proto(node(0), vec![p(Some(A), TypeRef::Void)], false)),
            one(proto(node(0), vec![p(Some(A), node(0))], true)),
            one(proto(node(0), vec![], false)),
        ];
        let all: Vec<Shape> = [&bases[..], &enums, &arrays, &protos].concat();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // An array's index is part of its shape.
        let cu = cu_with(vec![base(INT, 4, BaseEncoding::Signed), array(vec![4])]);
        assert_ne!(
            shapes(&cu, Some(ADDED_INT), &KnownTypes::new(0)).get(1),
            shapes(
                &cu,
                shape_of_leaf(&base(INT, 4, BaseEncoding::Signed)),
                &KnownTypes::new(0)
            )
            .get(1)
        );
        assert_eq!(shapes(&cu, None, &KnownTypes::new(0)).get(1), None);
    }

    /// A struct and the pointer back to it reach a cycle, and so does all
    /// that reaches them; what they reach does not.
    #[test]
    fn what_reaches_a_cycle_has_no_shape() {
        let members = leak(vec![member(A, node(2), 0), member(B, node(3), 64)]);
        let cu = cu_with(vec![
            // 0: a typedef of the struct, reaching the cycle.
            Node::Typedef {
                name: S,
                target: node(1),
                decl_tags: &[],
            },
            // 1: the struct, 2: a pointer to it.
            composite(CompositeKind::Struct, Some(S), 16, false, members),
            Node::Pointer {
                target: node(1),
                type_tags: &[],
            },
            // 3: a plain int.
            base(INT, 4, BaseEncoding::Signed),
        ]);
        let found = shapes(&cu, Some(ADDED_INT), &KnownTypes::new(0));
        assert_eq!(
            (0..4).map(|i| found.get(i).is_some()).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        // Whatever node the walk starts from.
        let reordered = cu_with(vec![
            base(INT, 4, BaseEncoding::Signed),
            Node::Pointer {
                target: node(2),
                type_tags: &[],
            },
            composite(
                CompositeKind::Struct,
                Some(S),
                16,
                false,
                leak(vec![member(A, node(1), 0), member(B, node(0), 64)]),
            ),
        ]);
        let found = shapes(&reordered, Some(ADDED_INT), &KnownTypes::new(0));
        assert!(found.get(0).is_some() && found.get(1).is_none() && found.get(2).is_none());
    }

    /// Tags lower to types of their own: a tagged node has no shape.
    #[test]
    fn tagged_nodes_have_no_shape() {
        let tags: &'static [&'static str] = leak(vec!["user"]);
        let cu = cu_with(vec![
            base(INT, 4, BaseEncoding::Signed),
            Node::Pointer {
                target: node(0),
                type_tags: tags,
            },
            Node::Typedef {
                name: S,
                target: node(0),
                decl_tags: tags,
            },
            Node::Composite {
                kind: CompositeKind::Struct,
                name: Some(S),
                byte_size: 4,
                declaration: false,
                members: leak(vec![Member {
                    decl_tags: tags,
                    ..member(A, node(0), 0)
                }]),
                decl_tags: &[],
            },
        ]);
        let found = shapes(&cu, Some(ADDED_INT), &KnownTypes::new(0));
        assert!(found.get(0).is_some());
        assert!((1..4).all(|i| found.get(i).is_none()));
    }

    #[test]
    fn the_registry_keeps_the_first_id_and_stops_when_full() {
        let shape = |n: u64| ShapeHasher::new(1, n).pair(n, n).finish();
        let known = KnownTypes::new(8);
        assert_eq!(known.get(shape(1)), None);
        known.file(shape(1), 10);
        known.file(shape(1), 11);
        assert_eq!(known.get(shape(1)), Some(10));
        // Three quarters of 8 slots: 6 shapes.
        for n in 2..20 {
            known.file(shape(n), 10 + n as u32);
        }
        assert_eq!(known.len(), 6);
        for n in 2..=6 {
            assert_eq!(known.get(shape(n)), Some(10 + n as u32), "{n}");
        }
        assert_eq!(known.get(shape(7)), None);
        // Same first half, another second: not the same shape.
        let s = shape(3);
        assert_eq!(known.get(Shape(s.0, s.1 ^ 1 << 40)), None);
        let huge = KnownTypes::new(usize::MAX);
        assert_eq!(huge.slot_count(), MAX_SLOTS);
        drop(huge);
        let none = KnownTypes::new(0);
        none.file(shape(1), 1);
        assert_eq!((none.get(shape(1)), none.len()), (None, 0));
    }

    /// Writers on several threads, readers meanwhile: a lookup finds the
    /// id filed under its shape or nothing, never another's.
    #[test]
    fn the_registry_holds_under_concurrent_filing() {
        let shape = |n: u64| ShapeHasher::new(2, n).pair(n, !n).finish();
        let known = KnownTypes::new(1 << 12);
        std::thread::scope(|threads| {
            for writer in 0..4u64 {
                let known = &known;
                threads.spawn(move || {
                    for n in (writer * 500)..(writer * 500 + 500) {
                        known.file(shape(n), n as u32);
                    }
                });
            }
            for _ in 0..2 {
                let known = &known;
                threads.spawn(move || {
                    for _ in 0..20 {
                        for n in 0..2000u64 {
                            if let Some(id) = known.get(shape(n)) {
                                assert_eq!(id, n as u32);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(known.len(), 2000);
        assert!((0..2000u64).all(|n| known.get(shape(n)) == Some(n as u32)));
    }
}
