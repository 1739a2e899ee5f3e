//! The fast path: the commonest DIEs read at the byte offsets of their
//! declaration's fixed layout (`layout.rs`), without decoding a plan.

use super::layout::{Die, Kind, Layout};
use super::rules::Value;
use super::scope::Scope;
use super::Walker;
use crate::error::Result;
use crate::model::{Member, Node, Param, TypeRef};

impl<'a, 'input, 'arena> Walker<'a, 'input, 'arena> {
    /// Handles a DIE read through its [layout](super::layout), making what
    /// [`Walker::visit`] makes of the same attributes, and opens the scope
    /// of its children if it `has_children`. `false`, with nothing done,
    /// for a parameter of a function (not of a function type): those take
    /// the general path.
    ///
    /// Inlined into the walk's loop, its one caller: called, its frame
    /// (registers saved and restored, the `Result` written to memory) cost
    /// 2% of the instructions of Debian's vmlinux (cachegrind, `-j1`).
    /// One match on the kind serves every DIE: the kinds without children
    /// return from their arm, where a second function matching them again
    /// cost 0.8% more.
    #[inline(always)]
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
            Kind::Member => {
                let name = self.fixed_name(layout, &die, offset)?;
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
                return Ok(true);
            }
            Kind::Bitfield => {
                let name = self.fixed_name(layout, &die, offset)?;
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
                return Ok(true);
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
                return Ok(true);
            }
            Kind::Qualified(qualifier) => {
                let id = self.node_id(offset);
                let target = self.fixed_type(layout.ty(&die));
                self.set_node(id, Node::Qualified { qualifier, target });
                return Ok(true);
            }
            Kind::Typedef => {
                let id = self.node_id(offset);
                let name = self.fixed_name(layout, &die, offset)?;
                let name = self.required_name(name);
                let target = self.fixed_type(layout.ty(&die));
                self.set_node(
                    id,
                    Node::Typedef {
                        name,
                        target,
                        decl_tags: &[],
                    },
                );
                return Ok(true);
            }
            Kind::Enumerator => {
                let name = self.fixed_name(layout, &die, offset)?;
                let name = self.required_name(name);
                if let (Some(Scope::Enum(pending)), Some(value)) =
                    (self.stack.last_mut(), layout.constant(&die))
                {
                    pending.enumerators.push((name, value));
                }
                return Ok(true);
            }
            Kind::Subrange => {
                let count = layout.subrange_count(&die);
                if let Some(Scope::Array { dims, .. }) = self.stack.last_mut() {
                    dims.push(count);
                }
                return Ok(true);
            }
            Kind::Param => {
                if !matches!(self.stack.last(), Some(Scope::Subroutine { .. })) {
                    return Ok(false);
                }
                let name = self.fixed_name(layout, &die, offset)?;
                let ty = self.fixed_type(layout.ty(&die));
                // Checked above: the parameter belongs to a prototype.
                self.open_params.push(Param::of_prototype(name, ty));
                return Ok(true);
            }
        };
        if has_children {
            self.stack.push(scope);
        } else {
            self.close(scope);
        }
        Ok(true)
    }

    /// The name of a DIE read through a layout. A `.debug_str` offset
    /// (gcc), an index into the unit's string offsets (clang's DWARF 5) or
    /// an inline name, nearly every name, is taken straight away: going
    /// through the attribute value the general path would have decoded
    /// costs more than the lookup itself. The name is noted
    /// ([`Walker::note_required_name`]).
    #[inline(always)]
    pub(super) fn fixed_name(
        &mut self,
        layout: &Layout,
        die: &Die<'input>,
        offset: u64,
    ) -> Result<Option<&'input str>> {
        if let Some(text) = layout.strp(die).and_then(|strp| self.debug_str_noted(strp)) {
            return Ok(Some(text));
        }
        if let Some(text) = layout
            .strx(die)
            .and_then(|index| self.strx_offset(index))
            .and_then(|strp| self.debug_str_noted(strp))
        {
            return Ok(Some(text));
        }
        if let Some(text) = layout
            .inline_name(die)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
        {
            self.note_required_name(text);
            // Copied where the caller wants, as `Walker::string_value` does.
            return Ok(Some(match self.inline_names {
                Some(names) => names.keep(text),
                None => text,
            }));
        }
        // Next commonest: no name at all (a prototype's parameters, most
        // of them; anonymous members).
        if layout.is_nameless() {
            return Ok(None);
        }
        self.fixed_name_slowly(layout.name(die), offset)
    }

    /// [`Walker::fixed_name`] for the other cases, and for errors.
    pub(super) fn fixed_name_slowly(
        &mut self,
        name: Option<Value<'input>>,
        offset: u64,
    ) -> Result<Option<&'input str>> {
        match name {
            Some(value) => self.noted_name_at(value, offset).map(Some),
            None => Ok(None),
        }
    }

    /// The type at a unit offset read through a layout.
    #[inline]
    pub(super) fn fixed_type(&mut self, target: Option<u64>) -> TypeRef {
        match target {
            Some(target) => TypeRef::Node(self.node_id(self.unit_offset + target)),
            None => TypeRef::Void,
        }
    }
}
