//! Closing a scope: what an open DIE collected from its children becomes
//! when they end (members, parameters, enumerators, dimensions, tags).

use super::scope::{AnnotationTarget, Scope};
use super::Walker;
use crate::model::Node;

/// `items` copied into `arena`, or the empty slice without a call: most
/// lists of tags are empty (a copy of none still cost a `memcpy` call and
/// an allocation, once per struct, union and function).
#[inline(always)]
fn copied<'arena, T: Copy>(arena: &'arena bumpalo::Bump, items: &[T]) -> &'arena [T] {
    if items.is_empty() {
        &[]
    } else {
        arena.alloc_slice_copy(items)
    }
}

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
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
                let params = copied(
                    self.arena,
                    self.open_function_params.get(first_param..).unwrap_or(&[]),
                );
                self.open_function_params.truncate(first_param);
                let decl_tags = copied(self.arena, &decl_tags);
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
                let members = copied(
                    self.arena,
                    self.open_members.get(first_member..).unwrap_or(&[]),
                );
                self.open_members.truncate(first_member);
                let decl_tags = copied(self.arena, &decl_tags);
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
                let params = copied(
                    self.arena,
                    self.open_params.get(first_param..).unwrap_or(&[]),
                );
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
