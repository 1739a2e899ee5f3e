//! What an open DIE with children collects ([`Scope`]), and which
//! children each kind of scope wants decoded ([`wanted_in`]): the rest are
//! skipped with their subtrees. Visiting is `visit.rs` and `fixed.rs`,
//! closing `close.rs`.

use gimli::constants as dw;

use super::pending::PendingEnum;
use super::rules::{is_type_tag, DW_TAG_LLVM_ANNOTATION};
use crate::model::{CompositeKind, NodeId, TypeRef};

/// A growing list allocated in the CU's arena: it becomes the model's slice
/// without a copy, and costs no heap allocation and free per aggregate.
pub(super) type ArenaVec<'arena, T> = bumpalo::collections::Vec<'arena, T>;

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

    /// This scope's bit in the [`wanted_in`] masks: a child DIE whose
    /// declaration's mask has it is worth decoding here; all others are
    /// skipped with their subtrees. One bit test per DIE instead of
    /// matching its tag against the scope's list.
    #[inline(always)]
    fn wants_bit(&self) -> u16 {
        1 << self.class() as u16
    }
}

/// The open scopes, innermost last, with the innermost one's
/// [`Scope::wants_bit`] kept beside them as they are pushed and popped:
/// every DIE is tested against it, and matching the scope for it each time
/// cost 0.9% of the instructions (Debian's vmlinux, `-j1`).
#[derive(Default)]
pub(super) struct Scopes<'input, 'arena> {
    open: Vec<Scope<'input, 'arena>>,
    /// The last scope's bit, 0 when none is open.
    top_wants: u16,
}

impl<'input, 'arena> Scopes<'input, 'arena> {
    /// Opens a scope for the children of the DIE just read.
    #[inline(always)]
    pub(super) fn push(&mut self, scope: Scope<'input, 'arena>) {
        self.top_wants = scope.wants_bit();
        self.open.push(scope);
    }

    /// Takes the innermost open scope off.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Scope<'input, 'arena>> {
        let scope = self.open.pop();
        self.top_wants = self.open.last().map_or(0, Scope::wants_bit);
        scope
    }

    #[inline(always)]
    pub(super) fn last(&self) -> Option<&Scope<'input, 'arena>> {
        self.open.last()
    }

    /// The innermost scope, to collect into: its kind cannot change here.
    #[inline(always)]
    pub(super) fn last_mut(&mut self) -> Option<&mut Scope<'input, 'arena>> {
        self.open.last_mut()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Whether a child DIE whose declaration has the [`wanted_in`] mask
    /// `wanted_in` is worth decoding in the innermost scope (never when
    /// none is open).
    #[inline(always)]
    pub(super) fn wants(&self, wanted_in: u16) -> bool {
        // `last_mut` lets a caller collect into the innermost scope; one
        // that replaced it would leave `top_wants` stale.
        debug_assert_eq!(
            self.top_wants,
            self.open.last().map_or(0, Scope::wants_bit),
            "the innermost scope changed kind without a push or pop"
        );
        wanted_in & self.top_wants != 0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_bit_follows_pushes_and_pops() {
        let mut scopes = Scopes::default();
        assert!(!scopes.wants(u16::MAX));
        scopes.push(Scope::Unit);
        scopes.push(Scope::Body);
        assert!(scopes.wants(Scope::Body.wants_bit()));
        assert!(!scopes.wants(Scope::Unit.wants_bit()));
        scopes.pop();
        assert!(scopes.wants(Scope::Unit.wants_bit()));
        scopes.pop();
        assert!(!scopes.wants(u16::MAX));
    }

    /// Replacing the innermost scope through `last_mut` bypasses the bit;
    /// debug builds catch it at the next test.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "changed kind without a push or pop")]
    fn a_scope_replaced_in_place_is_caught() {
        let mut scopes = Scopes::default();
        scopes.push(Scope::Unit);
        if let Some(top) = scopes.last_mut() {
            *top = Scope::Body;
        }
        scopes.wants(0);
    }
}
