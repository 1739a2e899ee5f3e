//! Pass 2: every reference resolves, without loops and within the depth
//! limit (`btf_check_all_types`, `btf_resolve`, the `env_stack_*`
//! functions, the kinds' `*_resolve` and `*_check_member`,
//! `btf_func_proto_check`), then `btf_check_type_tags`.

use super::{
    bits_roundup_bytes, kind, kind_str, Checked, Ty, Violation, MAX_RESOLVE_DEPTH, PTR_SIZE,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    NotVisited,
    Visited,
    Resolved,
}

/// `enum resolve_mode`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Tbd,
    Ptr,
    StructOrArray,
}

/// `struct resolve_vertex`.
#[derive(Clone, Copy)]
struct Vertex<'a> {
    t: Ty<'a>,
    id: u32,
    next_member: u16,
}

/// Why resolution stopped.
enum Fail {
    /// A check failed; the kernel logged this.
    Rule(Violation),
    /// `env_stack_push`: -E2BIG.
    TooDeep,
    /// `env_stack_push`: -EEXIST.
    Loop,
}

impl From<Violation> for Fail {
    fn from(v: Violation) -> Self {
        Fail::Rule(v)
    }
}

/// A member record.
#[derive(Clone, Copy)]
struct Member {
    name_off: u32,
    ty: u32,
    offset: u32,
}

/// `struct btf_verifier_env`, resolution part.
struct Env<'c, 'a> {
    btf: &'c mut Checked<'a>,
    visit: Vec<Visit>,
    stack: Vec<Vertex<'a>>,
    mode: Mode,
}

impl<'a> Env<'_, 'a> {
    fn local(&self, id: u32) -> Option<usize> {
        id.checked_sub(self.btf.start_id).map(|l| l as usize)
    }

    fn fail(&self, t: &Ty<'_>, id: u32, rule: &'static str, message: impl Into<String>) -> Fail {
        Fail::Rule(Violation {
            type_id: id,
            kind: kind_str(t.kind()),
            name: self.btf.display_name(t.name_off),
            rule,
            message: message.into(),
        })
    }

    fn fail_member(&self, v: &Vertex<'_>, m: &Member, rule: &'static str, message: &str) -> Fail {
        let name = self.btf.display_name(m.name_off);
        self.fail(&v.t, v.id, rule, format!("member {name}: {message}"))
    }

    /// `env_type_is_resolve_sink`.
    fn is_sink(&self, next: &Ty<'_>) -> bool {
        match self.mode {
            Mode::Tbd => !next.needs_resolve(),
            Mode::Ptr => !next.is_modifier() && !next.is(kind::PTR),
            Mode::StructOrArray => {
                !next.is_modifier() && !next.is(kind::ARRAY) && !next.is_struct()
            }
        }
    }

    /// `env_type_is_resolved`.
    fn is_resolved(&self, id: u32) -> bool {
        match self.local(id) {
            None => true, // base BTF types are resolved
            Some(l) => self.visit.get(l) == Some(&Visit::Resolved),
        }
    }

    /// `env_stack_push`.
    fn push(&mut self, t: Ty<'a>, id: u32) -> Result<(), Fail> {
        if self.stack.len() == MAX_RESOLVE_DEPTH {
            return Err(Fail::TooDeep);
        }
        let Some(l) = self.local(id) else {
            return Err(Fail::Loop);
        };
        match self.visit.get_mut(l) {
            Some(state @ Visit::NotVisited) => *state = Visit::Visited,
            _ => return Err(Fail::Loop),
        }
        self.stack.push(Vertex {
            t,
            id,
            next_member: 0,
        });
        if self.mode == Mode::Tbd {
            if t.is(kind::PTR) {
                self.mode = Mode::Ptr;
            } else if t.is_struct() || t.is(kind::ARRAY) {
                self.mode = Mode::StructOrArray;
            }
        }
        Ok(())
    }

    /// `env_stack_set_next_member`.
    fn set_next_member(&mut self, next: u16) {
        if let Some(top) = self.stack.last_mut() {
            top.next_member = next;
        }
    }

    /// `env_stack_pop_resolved`.
    fn pop_resolved(&mut self, resolved_id: u32, resolved_size: u32) {
        let Some(v) = self.stack.pop() else { return };
        if let Some(l) = self.local(v.id) {
            if let Some(slot) = self.btf.resolved_sizes.get_mut(l) {
                *slot = resolved_size;
            }
            if let Some(slot) = self.btf.resolved_ids.get_mut(l) {
                *slot = resolved_id;
            }
            if let Some(slot) = self.visit.get_mut(l) {
                *slot = Visit::Resolved;
            }
        }
    }

    /// `btf_type_id_resolve`.
    fn id_resolve(&self, id: &mut u32) -> Option<Ty<'a>> {
        *id = self.btf.resolved_id(*id);
        self.btf.type_by_id(*id)
    }

    /// `btf_type_id_size`: the type with a size that `id` stands for
    /// (following resolved modifiers and VARs), and that size.
    fn id_size(&self, id: &mut u32, size: Option<&mut u32>) -> Option<Ty<'a>> {
        let btf = &*self.btf;
        let mut size_id = *id;
        let mut t = btf.type_by_id(size_id).filter(|t| !t.nosize())?;
        let s = if t.has_size() {
            t.size
        } else if t.is(kind::ARRAY) {
            btf.resolved_size(size_id)
        } else if t.is(kind::PTR) {
            PTR_SIZE
        } else {
            if !t.is_modifier() && !t.is(kind::VAR) {
                return None;
            }
            size_id = btf.resolved_id(size_id);
            t = btf.type_by_id(size_id).filter(|t| !t.nosize())?;
            if t.has_size() {
                t.size
            } else if t.is(kind::ARRAY) {
                btf.resolved_size(size_id)
            } else if t.is(kind::PTR) {
                PTR_SIZE
            } else {
                return None;
            }
        };
        *id = size_id;
        if let Some(out) = size {
            *out = s;
        }
        Some(t)
    }

    fn member(t: &Ty<'_>, i: usize) -> Member {
        Member {
            name_off: t.word(3 * i),
            ty: t.word(3 * i + 1),
            offset: t.word(3 * i + 2),
        }
    }

    /// `btf_resolve`.
    fn resolve(&mut self, t: Ty<'a>, id: u32) -> Result<(), Fail> {
        self.mode = Mode::Tbd;
        let _ = self.push(t, id);
        let mut result = Ok(());
        while result.is_ok() {
            let Some(&v) = self.stack.last() else { break };
            result = self.resolve_vertex(v);
        }
        match result {
            Err(Fail::TooDeep) => {
                return Err(self.fail(
                    &t,
                    id,
                    "btf_resolve",
                    format!("Exceeded max resolving depth:{MAX_RESOLVE_DEPTH}"),
                ))
            }
            Err(Fail::Loop) => return Err(self.fail(&t, id, "btf_resolve", "Loop detected")),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        if !self.resolve_valid(&t, id) {
            return Err(self.fail(&t, id, "btf_resolve_valid", "Invalid resolve state"));
        }
        Ok(())
    }

    /// `kind_ops[kind]->resolve`.
    fn resolve_vertex(&mut self, v: Vertex<'a>) -> Result<(), Fail> {
        let t = v.t;
        if t.is_modifier() {
            self.resolve_ref(v, RefKind::Modifier)
        } else if t.is(kind::PTR) {
            self.resolve_ref(v, RefKind::Ptr)
        } else if t.is(kind::VAR) {
            self.resolve_ref(v, RefKind::Var)
        } else if t.is(kind::ARRAY) {
            self.array_resolve(v)
        } else if t.is_struct() {
            self.struct_resolve(v)
        } else if t.is(kind::DATASEC) {
            self.datasec_resolve(v)
        } else if t.is(kind::FUNC) {
            self.func_check(&t, v.id)?;
            self.pop_resolved(t.size, 0);
            Ok(())
        } else if t.is(kind::DECL_TAG) {
            self.decl_tag_resolve(v)
        } else {
            Err(self.fail(&t, v.id, "btf_df_resolve", "Unsupported resolve"))
        }
    }

    /// `btf_modifier_resolve`, `btf_ptr_resolve` and `btf_var_resolve`.
    fn resolve_ref(&mut self, v: Vertex<'a>, which: RefKind) -> Result<(), Fail> {
        let rule = match which {
            RefKind::Modifier => "btf_modifier_resolve",
            RefKind::Ptr => "btf_ptr_resolve",
            RefKind::Var => "btf_var_resolve",
        };
        let t = v.t;
        let mut next_id = t.size;
        let next = match self.btf.type_by_id(next_id) {
            Some(n) if !n.resolve_source_only() => n,
            _ => return Err(self.fail(&t, v.id, rule, "Invalid type_id")),
        };
        if !self.is_sink(&next) && !self.is_resolved(next_id) {
            return self.push(next, next_id);
        }
        if which != RefKind::Modifier && next.is_modifier() {
            // If the modifier was resolved during RESOLVE_STRUCT_OR_ARRAY, it
            // may have stopped at a pointer; continue from that pointer so
            // that it cannot refer back to this one.
            let mut rid = next_id;
            if let Some(rt) = self.id_resolve(&mut rid) {
                if rt.is(kind::PTR) && !self.is_sink(&rt) && !self.is_resolved(rid) {
                    return self.push(rt, rid);
                }
            }
        }
        if self.id_size(&mut next_id, None).is_none() {
            if which == RefKind::Var {
                // A variable must resolve to something with a size.
                return Err(self.fail(&t, v.id, rule, "Invalid type_id"));
            }
            let mut nt = Some(next);
            if self.is_resolved(next_id) {
                nt = self.id_resolve(&mut next_id);
            }
            // "typedef void new_void", "const void"...
            let ok = nt.is_some_and(|n| n.void || n.is(kind::FWD) || n.is(kind::FUNC_PROTO));
            if !ok {
                return Err(self.fail(&t, v.id, rule, "Invalid type_id"));
            }
        }
        self.pop_resolved(next_id, 0);
        Ok(())
    }

    /// `btf_array_resolve`.
    fn array_resolve(&mut self, v: Vertex<'a>) -> Result<(), Fail> {
        const R: &str = "btf_array_resolve";
        let t = v.t;
        let (elem_id0, index_id0, nelems) = (t.word(0), t.word(1), t.word(2));

        let mut index_id = index_id0;
        let index = match self.btf.type_by_id(index_id) {
            Some(i) if !i.nosize() && !i.resolve_source_only() => i,
            _ => return Err(self.fail(&t, v.id, R, "Invalid index")),
        };
        if !self.is_sink(&index) && !self.is_resolved(index_id) {
            return self.push(index, index_id);
        }
        match self.id_size(&mut index_id, None) {
            Some(i) if i.is(kind::INT) && i.int_is_regular() => {}
            _ => return Err(self.fail(&t, v.id, R, "Invalid index")),
        }

        let mut elem_id = elem_id0;
        let elem = match self.btf.type_by_id(elem_id) {
            Some(e) if !e.nosize() && !e.resolve_source_only() => e,
            _ => return Err(self.fail(&t, v.id, R, "Invalid elem")),
        };
        if !self.is_sink(&elem) && !self.is_resolved(elem_id) {
            return self.push(elem, elem_id);
        }
        let mut elem_size = 0;
        let Some(elem) = self.id_size(&mut elem_id, Some(&mut elem_size)) else {
            return Err(self.fail(&t, v.id, R, "Invalid elem"));
        };
        if elem.is(kind::INT) && !elem.int_is_regular() {
            return Err(self.fail(&t, v.id, R, "Invalid array of int"));
        }
        if nelems != 0 && elem_size > u32::MAX / nelems {
            return Err(self.fail(&t, v.id, R, "Array size overflows U32_MAX"));
        }
        self.pop_resolved(elem_id, elem_size.wrapping_mul(nelems));
        Ok(())
    }

    /// `btf_struct_resolve`.
    fn struct_resolve(&mut self, v: Vertex<'a>) -> Result<(), Fail> {
        const R: &str = "btf_struct_resolve";
        let t = v.t;
        if v.next_member > 0 {
            // The last member pushed must now be resolved to a type with a
            // size.
            let last = Self::member(&t, usize::from(v.next_member) - 1);
            if !self.is_resolved(last.ty) {
                return Err(self.fail(&t, v.id, R, "member not resolved (WARN_ON_ONCE)"));
            }
            if let Some(lt) = self.btf.type_by_id(last.ty) {
                self.check_member(&v, last, &lt, t.kflag())?;
            }
        }
        for i in usize::from(v.next_member)..t.vlen() as usize {
            let m = Self::member(&t, i);
            let mt = match self.btf.type_by_id(m.ty) {
                Some(mt) if !mt.nosize() && !mt.resolve_source_only() => mt,
                _ => return Err(self.fail_member(&v, &m, R, "Invalid member")),
            };
            if !self.is_sink(&mt) && !self.is_resolved(m.ty) {
                self.set_next_member((i + 1) as u16);
                return self.push(mt, m.ty);
            }
            self.check_member(&v, m, &mt, t.kflag())?;
        }
        self.pop_resolved(0, 0);
        Ok(())
    }

    /// `kind_ops[member_type]->check_member` / `->check_kflag_member`.
    fn check_member(
        &self,
        v: &Vertex<'a>,
        m: Member,
        mt: &Ty<'a>,
        kflag: bool,
    ) -> Result<(), Fail> {
        let struct_size = v.t.size;
        if mt.is_modifier() {
            // btf_modifier_check_member, btf_modifier_check_kflag_member
            let mut rid = m.ty;
            let Some(rt) = self.id_size(&mut rid, None) else {
                let r = if kflag {
                    "btf_modifier_check_kflag_member"
                } else {
                    "btf_modifier_check_member"
                };
                return Err(self.fail_member(v, &m, r, "Invalid member"));
            };
            let resolved = Member { ty: rid, ..m };
            return self.check_member(v, resolved, &rt, kflag);
        }
        if kflag {
            if mt.is(kind::INT) {
                return self.int_check_kflag_member(v, &m, mt);
            }
            if mt.is(kind::ENUM) || mt.is(kind::ENUM64) {
                return self.enum_check_kflag_member(v, &m);
            }
            if mt.is(kind::PTR) || mt.is(kind::ARRAY) || mt.is_struct() || mt.is(kind::FLOAT) {
                // btf_generic_check_kflag_member
                if m.offset >> 24 != 0 {
                    return Err(self.fail_member(
                        v,
                        &m,
                        "btf_generic_check_kflag_member",
                        "Invalid member bitfield_size",
                    ));
                }
                return self.check_member(v, m, mt, false);
            }
            return Err(self.fail(
                &v.t,
                v.id,
                "btf_df_check_kflag_member",
                "Unsupported check_kflag_member",
            ));
        }
        let bits_off = m.offset;
        let bytes_offset = bits_off >> 3;
        if mt.is(kind::INT) {
            // btf_int_check_member
            const R: &str = "btf_int_check_member";
            let int_data = mt.word(0);
            let int_off = (int_data >> 16) & 0xff;
            if u32::MAX - bits_off < int_off {
                return Err(self.fail_member(v, &m, R, "bits_offset exceeds U32_MAX"));
            }
            let bits_off = bits_off + int_off;
            let bytes_offset = bits_off >> 3;
            let nr_copy_bits = (int_data & 0xff) + (bits_off & 7);
            if nr_copy_bits > 128 {
                return Err(self.fail_member(v, &m, R, "nr_copy_bits exceeds 128"));
            }
            if struct_size < bytes_offset
                || struct_size - bytes_offset < bits_roundup_bytes(nr_copy_bits)
            {
                return Err(self.fail_member(v, &m, R, "Member exceeds struct_size"));
            }
            return Ok(());
        }
        if mt.is(kind::FLOAT) {
            // btf_float_check_member
            const R: &str = "btf_float_check_member";
            let align_bytes = u64::from(PTR_SIZE.min(mt.size));
            let align_bits = align_bytes * 8;
            if align_bits == 0 || u64::from(bits_off) % align_bits != 0 {
                return Err(self.fail_member(v, &m, R, "Member is not properly aligned"));
            }
            let end = u64::from(bits_off / 8) + u64::from(mt.size);
            if end > u64::from(struct_size) {
                return Err(self.fail_member(v, &m, R, "Member exceeds struct_size"));
            }
            return Ok(());
        }
        let (rule, member_size) = if mt.is(kind::PTR) {
            ("btf_ptr_check_member", PTR_SIZE)
        } else if mt.is(kind::ARRAY) {
            let mut aid = m.ty;
            let mut size = 0;
            let _ = self.id_size(&mut aid, Some(&mut size));
            ("btf_array_check_member", size)
        } else if mt.is_struct() {
            ("btf_struct_check_member", mt.size)
        } else if mt.is(kind::ENUM) || mt.is(kind::ENUM64) {
            ("btf_enum_check_member", mt.size)
        } else {
            return Err(self.fail(
                &v.t,
                v.id,
                "btf_df_check_member",
                "Unsupported check_member",
            ));
        };
        if bits_off & 7 != 0 {
            return Err(self.fail_member(v, &m, rule, "Member is not byte aligned"));
        }
        if struct_size.wrapping_sub(bytes_offset) < member_size {
            return Err(self.fail_member(v, &m, rule, "Member exceeds struct_size"));
        }
        Ok(())
    }

    /// `btf_int_check_kflag_member`.
    fn int_check_kflag_member(&self, v: &Vertex<'a>, m: &Member, mt: &Ty<'a>) -> Result<(), Fail> {
        const R: &str = "btf_int_check_kflag_member";
        if !mt.int_is_regular() {
            return Err(self.fail_member(v, m, R, "Invalid member base type"));
        }
        let mut nr_bits = m.offset >> 24;
        let bits_off = m.offset & 0x00ff_ffff;
        let nr_int_data_bits = mt.word(0) & 0xff;
        if nr_bits == 0 {
            if bits_off & 7 != 0 {
                return Err(self.fail_member(v, m, R, "Invalid member offset"));
            }
            nr_bits = nr_int_data_bits;
        } else if nr_bits > nr_int_data_bits {
            return Err(self.fail_member(v, m, R, "Invalid member bitfield_size"));
        }
        let bytes_offset = bits_off >> 3;
        let nr_copy_bits = nr_bits + (bits_off & 7);
        if nr_copy_bits > 128 {
            return Err(self.fail_member(v, m, R, "nr_copy_bits exceeds 128"));
        }
        let struct_size = v.t.size;
        if struct_size < bytes_offset
            || struct_size - bytes_offset < bits_roundup_bytes(nr_copy_bits)
        {
            return Err(self.fail_member(v, m, R, "Member exceeds struct_size"));
        }
        Ok(())
    }

    /// `btf_enum_check_kflag_member`.
    fn enum_check_kflag_member(&self, v: &Vertex<'a>, m: &Member) -> Result<(), Fail> {
        const R: &str = "btf_enum_check_kflag_member";
        let int_bitsize = 32;
        let bits_off = m.offset & 0x00ff_ffff;
        let mut nr_bits = m.offset >> 24;
        if nr_bits == 0 {
            if bits_off & 7 != 0 {
                return Err(self.fail_member(v, m, R, "Member is not byte aligned"));
            }
            nr_bits = int_bitsize;
        } else if nr_bits > int_bitsize {
            return Err(self.fail_member(v, m, R, "Invalid member bitfield_size"));
        }
        let bytes_end = bits_roundup_bytes(bits_off + nr_bits);
        if v.t.size < bytes_end {
            return Err(self.fail_member(v, m, R, "Member exceeds struct_size"));
        }
        Ok(())
    }

    /// `btf_datasec_resolve`.
    fn datasec_resolve(&mut self, v: Vertex<'a>) -> Result<(), Fail> {
        const R: &str = "btf_datasec_resolve";
        let t = v.t;
        self.mode = Mode::Tbd;
        for i in usize::from(v.next_member)..t.vlen() as usize {
            let (var_id, offset, size) = (t.word(3 * i), t.word(3 * i + 1), t.word(3 * i + 2));
            let vsi = |env: &Self, message: &str| {
                env.fail(
                    &t,
                    v.id,
                    R,
                    format!("type_id={var_id} offset={offset} size={size}: {message}"),
                )
            };
            let var = match self.btf.type_by_id(var_id) {
                Some(var) if var.is(kind::VAR) => var,
                _ => return Err(vsi(self, "Not a VAR kind member")),
            };
            if !self.is_sink(&var) && !self.is_resolved(var_id) {
                self.set_next_member((i + 1) as u16);
                return self.push(var, var_id);
            }
            let mut type_id = var.size;
            let mut type_size = 0;
            if self.id_size(&mut type_id, Some(&mut type_size)).is_none() {
                return Err(vsi(self, "Invalid type"));
            }
            if size < type_size {
                return Err(vsi(self, "Invalid size"));
            }
        }
        self.pop_resolved(0, 0);
        Ok(())
    }

    /// `btf_decl_tag_resolve`.
    fn decl_tag_resolve(&mut self, v: Vertex<'a>) -> Result<(), Fail> {
        const R: &str = "btf_decl_tag_resolve";
        let t = v.t;
        let next_id = t.size;
        let next = match self.btf.type_by_id(next_id) {
            Some(n) if n.is_decl_tag_target() => n,
            _ => return Err(self.fail(&t, v.id, R, "Invalid type_id")),
        };
        if !self.is_sink(&next) && !self.is_resolved(next_id) {
            return self.push(next, next_id);
        }
        let component_idx = t.word(0) as i32;
        if component_idx != -1 {
            if next.is(kind::VAR) || next.is(kind::TYPEDEF) {
                return Err(self.fail(&t, v.id, R, "Invalid component_idx"));
            }
            let vlen = if next.is_struct() {
                next.vlen()
            } else {
                // next is a function: its prototype's parameters
                self.btf.type_by_id(next.size).map_or(0, |p| p.vlen())
            };
            if component_idx as u32 >= vlen {
                return Err(self.fail(&t, v.id, R, "Invalid component_idx"));
            }
        }
        self.pop_resolved(next_id, 0);
        Ok(())
    }

    /// `btf_func_check`.
    fn func_check(&self, t: &Ty<'a>, id: u32) -> Result<(), Fail> {
        const R: &str = "btf_func_check";
        let proto = match self.btf.type_by_id(t.size) {
            Some(p) if p.is(kind::FUNC_PROTO) => p,
            _ => return Err(self.fail(t, id, R, "Invalid type_id")),
        };
        for i in 0..proto.vlen() as usize {
            let (name_off, ty) = (proto.word(2 * i), proto.word(2 * i + 1));
            if name_off == 0 && ty != 0 {
                return Err(self.fail(t, id, R, format!("Invalid arg#{}", i + 1)));
            }
        }
        Ok(())
    }

    /// `btf_func_proto_check`.
    fn func_proto_check(&mut self, t: Ty<'a>, id: u32) -> Result<(), Fail> {
        const R: &str = "btf_func_proto_check";
        if t.size != 0 {
            let mut ret_id = t.size;
            let ret = match self.btf.type_by_id(ret_id) {
                Some(r) if !r.resolve_source_only() => r,
                _ => return Err(self.fail(&t, id, R, "Invalid return type")),
            };
            if ret.needs_resolve() && !self.is_resolved(ret_id) {
                self.resolve(ret, ret_id)?;
            }
            if self.id_size(&mut ret_id, None).is_none() {
                return Err(self.fail(&t, id, R, "Invalid return type"));
            }
        }
        let mut nr_args = t.vlen() as usize;
        if nr_args == 0 {
            return Ok(());
        }
        let arg = |i: usize| (t.word(2 * i), t.word(2 * i + 1));
        // The last argument may be void: a vararg.
        let (last_name, last_type) = arg(nr_args - 1);
        if last_type == 0 {
            if last_name != 0 {
                return Err(self.fail(&t, id, R, format!("Invalid arg#{nr_args}")));
            }
            nr_args -= 1;
        }
        for i in 0..nr_args {
            let (name_off, mut arg_id) = arg(i);
            let bad = |env: &Self| env.fail(&t, id, R, format!("Invalid arg#{}", i + 1));
            let arg_t = match self.btf.type_by_id(arg_id) {
                Some(a) if !a.resolve_source_only() => a,
                _ => return Err(bad(self)),
            };
            if name_off != 0
                && (!self.btf.name_offset_valid(name_off)
                    || !self.btf.name_valid_identifier(name_off))
            {
                return Err(bad(self));
            }
            if arg_t.needs_resolve() && !self.is_resolved(arg_id) {
                self.resolve(arg_t, arg_id)?;
            }
            if self.id_size(&mut arg_id, None).is_none() {
                return Err(bad(self));
            }
        }
        Ok(())
    }

    /// `btf_resolve_valid`: the final sanity check of a resolved type.
    fn resolve_valid(&self, t: &Ty<'a>, id: u32) -> bool {
        if !self.is_resolved(id) {
            return false;
        }
        let btf = &*self.btf;
        if t.is_struct() || t.is(kind::DATASEC) {
            return btf.resolved_id(id) == 0 && btf.resolved_size(id) == 0;
        }
        if t.is(kind::DECL_TAG) || t.is(kind::FUNC) {
            return btf.resolved_id(id) != 0 && btf.resolved_size(id) == 0;
        }
        if t.is_modifier() || t.is(kind::PTR) || t.is(kind::VAR) {
            let mut rid = id;
            return self
                .id_resolve(&mut rid)
                .is_some_and(|r| !r.is_modifier() && !r.is(kind::VAR) && !r.is(kind::DATASEC));
        }
        if t.is(kind::ARRAY) {
            let mut elem_id = t.word(0);
            let mut elem_size = 0;
            return self
                .id_size(&mut elem_id, Some(&mut elem_size))
                .is_some_and(|e| !e.is_modifier())
                && t.word(2).wrapping_mul(elem_size) == btf.resolved_size(id);
        }
        false
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RefKind {
    Modifier,
    Ptr,
    Var,
}

fn unwrap_fail(f: Fail) -> Violation {
    match f {
        Fail::Rule(v) => v,
        // btf_resolve turns these into violations; they never escape it.
        Fail::TooDeep | Fail::Loop => Violation {
            type_id: 0,
            kind: "",
            name: String::new(),
            rule: "btf_resolve",
            message: "resolution failed".to_string(),
        },
    }
}

/// `btf_check_all_types`.
pub(super) fn check_all_types(btf: &mut Checked<'_>) -> Result<(), Vec<Violation>> {
    let first = u32::from(btf.base.is_none());
    let ids = btf.start_id + first..btf.total_types();
    check_types(btf, ids)
}

/// `btf_check_all_types`' loop over `ids` (ascending): each type that
/// needs it is resolved (with whatever it reaches), and each FUNC_PROTO
/// checked. Of a base, `ids` may be only the types a split refers to (see
/// [`super::UnresolvedBase`]).
pub(super) fn check_types(
    btf: &mut Checked<'_>,
    ids: impl Iterator<Item = u32>,
) -> Result<(), Vec<Violation>> {
    let n = btf.type_at.len();
    btf.resolved_ids = vec![0; n];
    btf.resolved_sizes = vec![0; n];
    let mut env = Env {
        btf,
        visit: vec![Visit::NotVisited; n],
        stack: Vec::with_capacity(MAX_RESOLVE_DEPTH),
        mode: Mode::Tbd,
    };
    for id in ids {
        let Some(t) = env.btf.type_by_id(id) else {
            continue;
        };
        if t.needs_resolve() && !env.is_resolved(id) {
            env.resolve(t, id).map_err(|f| vec![unwrap_fail(f)])?;
        }
        if t.is(kind::FUNC_PROTO) {
            env.func_proto_check(t, id)
                .map_err(|f| vec![unwrap_fail(f)])?;
        }
    }
    Ok(())
}

/// `btf_check_type_tags`: type tags come before any other modifier in a
/// chain of modifiers, and no chain is longer than 32.
pub(super) fn check_type_tags(btf: &Checked<'_>, start_id: u32) -> Result<(), Vec<Violation>> {
    const R: &str = "btf_check_type_tags";
    let fail = |id: u32, t: Option<&Ty<'_>>, message: &str| {
        vec![Violation {
            type_id: id,
            kind: t.map_or("", |t| kind_str(t.kind())),
            name: t.map_or_else(String::new, |t| btf.display_name(t.name_off)),
            rule: R,
            message: message.to_string(),
        }]
    };
    let n = btf.total_types();
    let mut good_id = start_id - 1;
    for i in start_id..n {
        let Some(start) = btf.type_by_id(i) else {
            return Err(fail(i, None, "type not found"));
        };
        if !start.is_modifier() {
            continue;
        }
        let mut t = start;
        let mut chain_limit = 32;
        let mut cur_id = i;
        let mut in_tags = t.is(kind::TYPE_TAG);
        while t.is_modifier() {
            if chain_limit == 0 {
                return Err(fail(i, Some(&start), "Max chain length or cycle detected"));
            }
            chain_limit -= 1;
            if t.is(kind::TYPE_TAG) {
                if !in_tags {
                    return Err(fail(i, Some(&start), "Type tags don't precede modifiers"));
                }
            } else if in_tags {
                in_tags = false;
            }
            if cur_id <= good_id {
                break;
            }
            cur_id = t.size;
            match btf.type_by_id(cur_id) {
                Some(next) => t = next,
                None => return Err(fail(i, Some(&start), "type not found")),
            }
        }
        good_id = i;
    }
    Ok(())
}
