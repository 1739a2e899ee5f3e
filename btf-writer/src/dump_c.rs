//! BTF as a compilable C header: what `bpftool btf dump file X format c`
//! prints (and `bpftool btf dump -B BASE file X format c` for split BTF),
//! reproduced byte for byte.
//!
//! The reference is Debian bookworm's bpftool 7.1 (`7.1.0+6.1.192-2`),
//! built from the Linux 6.1 stable tree, whose `tools/lib/bpf` carries
//! backported `btf_dump.c` fixes: it prints as libbpf 1.1.0 does (the
//! padding rules and packed detection reworked in December 2022) plus
//! `(void)` for a prototype without parameters (libbpf 1.5), but without
//! the `mode(byte)`/`mode(word)` attributes on odd-sized enums that 1.1.0
//! added. Each of these was checked against the installed binary (a
//! one-byte enum; the Debian 6.1 vmlinux, whose padding and packed structs
//! differ under the older rules). The rules, as that `btf_dump.c` applies
//! them:
//!
//! - Every type id from 1 up (for split BTF the base's too) is a root in
//!   turn. Its dependencies are topologically sorted first: a type embedded
//!   in another (no pointer on the way, or anonymous and so written inline)
//!   must be complete before it; one reached through a pointer only needs a
//!   forward declaration, written when the full definition is not out yet.
//!   Named structs, unions, enums, forwards and typedefs are definitions of
//!   their own; anonymous ones are written inline where used, except an
//!   anonymous enum nothing refers to (a block of constants).
//! - Struct, union and enum names share one namespace and typedef names and
//!   enumerators another; the Nth definition of a name gets the suffix
//!   `___N` (N > 1).
//! - A struct is `packed` when a non-bitfield member is not naturally
//!   aligned or its size is not a multiple of its alignment. Gaps the
//!   compiler would not fill by itself are written as anonymous bitfields
//!   (`long: 64;` ...).
//! - Declarators follow C: modifiers of the base type before it, of pointers
//!   after them, arrays and function prototypes with parentheses where
//!   needed; const/volatile on arrays and function prototypes are dropped
//!   (compiler quirks), a prototype with one `void` parameter prints as
//!   `()`, a trailing `void` parameter as `...`.
//!
//! Pointer size is libbpf's guess: the size of the first integer named as a
//! spelling of `long` or `unsigned long`, else 8.

use std::io::{self, Write};

use hashbrown::HashMap;

use crate::types::{Btf, Composite, Enum, Type, TypeId};

const HEADER: &str = "#ifndef __VMLINUX_H__\n#define __VMLINUX_H__\n\n\
#ifndef BPF_NO_PRESERVE_ACCESS_INDEX\n\
#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)\n\
#endif\n\n";

const FOOTER: &str =
    "#ifndef BPF_NO_PRESERVE_ACCESS_INDEX\n#pragma clang attribute pop\n#endif\n\n\
#endif /* __VMLINUX_H__ */\n";

/// Nesting beyond which the input is taken for a reference cycle (valid
/// BTF nests a few dozen levels at most).
const MAX_DEPTH: u32 = 512;

/// Writes `btf` as a C header, exactly as bpftool 7.1's `format c` does.
///
/// For split BTF pass its `base`; as bpftool does, the base's types are
/// written too (they come first), then the split's.
pub fn dump_c(out: &mut dyn Write, btf: &Btf, base: Option<&Btf>) -> io::Result<()> {
    let mut types: Vec<&Type<'_>> = Vec::new();
    match base {
        Some(base) => {
            if base.count() != btf.base_type_count || base.base_type_count != 0 {
                return Err(invalid(format!(
                    "the split BTF expects a base of {} types, the base has {}",
                    btf.base_type_count,
                    base.count()
                )));
            }
            types.extend(base.types.iter());
        }
        None if btf.base_type_count != 0 => {
            return Err(invalid("split BTF needs its base".to_string()));
        }
        None => {}
    }
    types.extend(btf.types.iter());
    check_references(&types)?;

    let mut d = CDump::new(types);
    let mut sink = Sink {
        out,
        buf: Vec::with_capacity(1 << 18),
    };
    d.out.extend_from_slice(HEADER.as_bytes());
    for id in 1..=d.types.len() as u32 {
        d.dump_type(id);
        if let Some(err) = d.failed.take() {
            sink.buf.append(&mut d.out);
            sink.flush()?;
            return Err(invalid(err));
        }
        if d.out.len() >= 1 << 18 {
            sink.buf.append(&mut d.out);
            sink.flush()?;
        }
    }
    d.out.extend_from_slice(FOOTER.as_bytes());
    sink.buf.append(&mut d.out);
    sink.flush()?;
    sink.out.flush()
}

/// The most C text one type's padding may grow the output buffer to.
const PAD_TEXT_LIMIT: usize = 16 << 20;

struct Sink<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
}

impl Sink<'_> {
    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Every id a type refers to exists (the reader checks this for files; the
/// dumper may be handed a model built otherwise).
fn check_references(types: &[&Type<'_>]) -> io::Result<()> {
    let count = types.len() as u32;
    for (index, ty) in types.iter().enumerate() {
        let id = index as u32 + 1;
        let mut bad = None;
        ty.for_each_ref(|target| {
            if target.0 > count && bad.is_none() {
                bad = Some(target.0);
            }
        });
        if let Some(target) = bad {
            return Err(invalid(format!(
                "type [{id}] refers to type [{target}], beyond the last type [{count}]"
            )));
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    NotOrdered,
    Ordering,
    Ordered,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Emit {
    NotEmitted,
    Emitting,
    Emitted,
}

/// Per-type state of the sort and the emission.
#[derive(Clone, Copy)]
struct State {
    order: Order,
    emit: Emit,
    /// A forward declaration (or, for a typedef, the typedef) is out.
    fwd_emitted: bool,
    /// Some type refers to this one.
    referenced: bool,
    /// 0 until the name is resolved; then its occurrence number (1: the
    /// name as is, N > 1: with the `___N` suffix).
    dup: u32,
}

/// Which namespace a name is counted in.
#[derive(Clone, Copy)]
enum Space {
    /// struct, union and enum tags (and, as libbpf does, int names).
    Tags,
    /// typedef names and enumerators.
    Idents,
}

/// Cached layout facts; `UNKNOWN` until computed.
const UNKNOWN: i32 = i32::MIN;

struct CDump<'t, 'a> {
    /// `types[id - 1]` is the type with `id`.
    types: Vec<&'t Type<'a>>,
    state: Vec<State>,
    align: Vec<i32>,
    ptr_size: u32,
    queue: Vec<u32>,
    decl_stack: Vec<u32>,
    tags: HashMap<&'a str, u32, foldhash::fast::FixedState>,
    idents: HashMap<&'a str, u32, foldhash::fast::FixedState>,
    out: Vec<u8>,
    depth: u32,
    failed: Option<String>,
}

fn is_mod(ty: &Type<'_>) -> bool {
    matches!(
        ty,
        Type::Volatile(_) | Type::Const(_) | Type::Restrict(_) | Type::TypeTag(_)
    )
}

/// The members of a struct or union (offsets and widths as the file's
/// kind_flag encodes them, decoded by the reader).
fn members<'c, 'a>(c: &'c Composite<'a>) -> &'c [crate::types::Member<'a>] {
    &c.members
}

impl<'t, 'a> CDump<'t, 'a> {
    fn new(types: Vec<&'t Type<'a>>) -> Self {
        let count = types.len() + 1;
        let mut state = vec![
            State {
                order: Order::NotOrdered,
                emit: Emit::NotEmitted,
                fwd_emitted: false,
                referenced: false,
                dup: 0,
            };
            count
        ];
        // void is always there.
        state[0].order = Order::Ordered;
        state[0].emit = Emit::Emitted;
        for ty in &types {
            ty.for_each_ref(|target| state[target.0 as usize].referenced = true);
        }
        let ptr_size = pointer_size(&types);
        CDump {
            types,
            state,
            align: vec![UNKNOWN; count],
            ptr_size,
            queue: Vec::new(),
            decl_stack: Vec::new(),
            tags: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0)),
            idents: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0)),
            out: Vec::with_capacity(1 << 19),
            depth: 0,
            failed: None,
        }
    }

    /// The type with `id`; `None` for void. Ids were checked on entry.
    fn ty(&self, id: u32) -> Option<&'t Type<'a>> {
        id.checked_sub(1)
            .and_then(|i| self.types.get(i as usize).copied())
    }

    fn fail(&mut self, message: String) {
        if self.failed.is_none() {
            self.failed = Some(message);
        }
    }

    fn enter(&mut self, id: u32) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if self.depth >= MAX_DEPTH {
            self.fail(format!(
                "type [{id}]: references nest too deep (a reference cycle?)"
            ));
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn put(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn put_num(&mut self, n: impl std::fmt::Display) {
        // Writing to a Vec cannot fail.
        let _ = write!(self.out, "{n}");
    }

    fn indent(&mut self, level: u32) {
        const TABS: &[u8] = b"\t\t\t\t\t\t\t\t\t\t\t\t\t";
        let n = (level as usize).min(TABS.len());
        self.out.extend_from_slice(&TABS[..n]);
    }

    // ---- the sort ----

    /// One root: its dependencies in order, then their definitions.
    fn dump_type(&mut self, id: u32) {
        self.queue.clear();
        if self.order_type(id, false).is_none() {
            return;
        }
        let queue = std::mem::take(&mut self.queue);
        for &queued in &queue {
            self.emit_type(queued, 0);
            if self.failed.is_some() {
                break;
            }
        }
        self.queue = queue;
    }

    /// libbpf's `btf_dump_order_type`: `Some(true)` for a strong link (the
    /// type must be complete first), `Some(false)` for a weak one, `None`
    /// on an unsatisfiable cycle (recorded in `failed`).
    fn order_type(&mut self, id: u32, through_ptr: bool) -> Option<bool> {
        let idx = id as usize;
        if self.state[idx].order == Order::Ordered {
            return Some(true);
        }
        let ty = self.ty(id)?;
        let named = !ty.name().is_empty();
        if self.state[idx].order == Order::Ordering {
            if matches!(ty, Type::Struct(_) | Type::Union(_)) && through_ptr && named {
                return Some(false);
            }
            self.fail(format!("unsatisfiable type cycle, id:[{id}]"));
            return None;
        }
        if !self.enter(id) {
            return None;
        }
        let result = self.order_kind(id, ty, named, through_ptr);
        self.leave();
        result
    }

    fn order_kind(
        &mut self,
        id: u32,
        ty: &'t Type<'a>,
        named: bool,
        through_ptr: bool,
    ) -> Option<bool> {
        let idx = id as usize;
        match ty {
            Type::Int(_) | Type::Float(_) => {
                self.state[idx].order = Order::Ordered;
                Some(false)
            }
            Type::Ptr(target) => {
                let strong = self.order_type(target.0, true);
                self.state[idx].order = Order::Ordered;
                strong
            }
            Type::Array(array) => self.order_type(array.elem.0, false),
            Type::Struct(c) | Type::Union(c) => {
                if through_ptr && named {
                    return Some(false);
                }
                self.state[idx].order = Order::Ordering;
                for m in members(c) {
                    self.order_type(m.ty.0, false)?;
                }
                if named {
                    self.queue.push(id);
                }
                self.state[idx].order = Order::Ordered;
                Some(true)
            }
            Type::Enum(_) | Type::Enum64(_) | Type::Fwd(_) => {
                if named || !self.state[idx].referenced {
                    self.queue.push(id);
                }
                self.state[idx].order = Order::Ordered;
                Some(true)
            }
            Type::Typedef(named_ty) => {
                let strong = self.order_type(named_ty.ty.0, through_ptr)?;
                if through_ptr && !strong {
                    return Some(false);
                }
                self.queue.push(id);
                self.state[idx].order = Order::Ordered;
                Some(true)
            }
            Type::Volatile(target) | Type::Const(target) | Type::Restrict(target) => {
                self.order_type(target.0, through_ptr)
            }
            Type::TypeTag(named_ty) => self.order_type(named_ty.ty.0, through_ptr),
            Type::FuncProto(proto) => {
                let mut strong = self.order_type(proto.ret.0, through_ptr)?;
                for p in proto.params.iter() {
                    strong |= self.order_type(p.ty.0, through_ptr)?;
                }
                Some(strong)
            }
            Type::Func(_) | Type::Var(_) | Type::Datasec(_) | Type::DeclTag(_) => {
                self.state[idx].order = Order::Ordered;
                Some(false)
            }
        }
    }

    // ---- emission ----

    fn is_blacklisted(ty: &Type<'_>) -> bool {
        ty.name() == "__builtin_va_list"
    }

    /// libbpf's `btf_dump_emit_type`: definitions (and forward
    /// declarations) `id` needs, then `id` itself when top level
    /// (`cont_id` 0); `cont_id` is the struct being defined otherwise.
    fn emit_type(&mut self, id: u32, cont_id: u32) {
        let idx = id as usize;
        if self.state[idx].emit == Emit::Emitted {
            return;
        }
        let Some(ty) = self.ty(id) else { return };
        if !self.enter(id) {
            return;
        }
        self.emit_type_inner(id, idx, ty, cont_id);
        self.leave();
    }

    fn emit_type_inner(&mut self, id: u32, idx: usize, ty: &'t Type<'a>, cont_id: u32) {
        let top_level = cont_id == 0;
        let named = !ty.name().is_empty();
        if self.state[idx].emit == Emit::Emitting {
            if self.state[idx].fwd_emitted {
                return;
            }
            match ty {
                Type::Struct(_) | Type::Union(_) => {
                    if id == cont_id || !named {
                        // Inside itself, or an anonymous loop (libbpf
                        // warns and goes on).
                        return;
                    }
                    self.emit_struct_fwd(id, ty);
                    self.put(";\n\n");
                    self.state[idx].fwd_emitted = true;
                }
                Type::Typedef(_) => {
                    if !Self::is_blacklisted(ty) {
                        self.emit_typedef_def(id, ty, 0);
                        self.put(";\n\n");
                    }
                    self.state[idx].fwd_emitted = true;
                }
                _ => {}
            }
            return;
        }
        match ty {
            Type::Int(_) => {
                self.emit_missing_aliases(id);
                self.state[idx].emit = Emit::Emitted;
            }
            Type::Enum(_) | Type::Enum64(_) => {
                if top_level {
                    self.emit_enum_def(id, ty, 0);
                    self.put(";\n\n");
                }
                self.state[idx].emit = Emit::Emitted;
            }
            Type::Ptr(target)
            | Type::Volatile(target)
            | Type::Const(target)
            | Type::Restrict(target) => self.emit_type(target.0, cont_id),
            Type::TypeTag(named_ty) => self.emit_type(named_ty.ty.0, cont_id),
            Type::Array(array) => self.emit_type(array.elem.0, cont_id),
            Type::Fwd(_) => {
                self.emit_fwd_def(id, ty);
                self.put(";\n\n");
                self.state[idx].emit = Emit::Emitted;
            }
            Type::Typedef(named_ty) => {
                self.state[idx].emit = Emit::Emitting;
                self.emit_type(named_ty.ty.0, id);
                // Someone may have needed it as a forward declaration
                // meanwhile, and then it is out already.
                if !self.state[idx].fwd_emitted && !Self::is_blacklisted(ty) {
                    self.emit_typedef_def(id, ty, 0);
                    self.put(";\n\n");
                }
                self.state[idx].emit = Emit::Emitted;
            }
            Type::Struct(c) | Type::Union(c) => {
                self.state[idx].emit = Emit::Emitting;
                if top_level || !named {
                    let new_cont = if named { id } else { cont_id };
                    for m in members(c) {
                        self.emit_type(m.ty.0, new_cont);
                    }
                } else if !self.state[idx].fwd_emitted && id != cont_id {
                    self.emit_struct_fwd(id, ty);
                    self.put(";\n\n");
                    self.state[idx].fwd_emitted = true;
                }
                if top_level {
                    self.emit_struct_def(id, ty, c, 0);
                    self.put(";\n\n");
                    self.state[idx].emit = Emit::Emitted;
                } else {
                    self.state[idx].emit = Emit::NotEmitted;
                }
            }
            Type::FuncProto(proto) => {
                self.emit_type(proto.ret.0, cont_id);
                for p in proto.params.iter() {
                    self.emit_type(p.ty.0, cont_id);
                }
            }
            Type::Func(_) | Type::Var(_) | Type::Datasec(_) | Type::DeclTag(_) | Type::Float(_) => {
            }
        }
    }

    // ---- names ----

    /// Resolves (once) the name of `id` in `space`; returns the raw name
    /// and its occurrence number (> 1: print with `___N`).
    fn resolve_name(&mut self, id: u32, space: Space) -> (&'a str, u32) {
        let Some(ty) = self.ty(id) else {
            return ("", 1);
        };
        let name = ty.name();
        if name.is_empty() {
            return ("", 1);
        }
        let idx = id as usize;
        if self.state[idx].dup != 0 {
            return (name, self.state[idx].dup);
        }
        let counted = match ty {
            Type::Fwd(_) => false,
            Type::Enum(e) => !e.values.is_empty(),
            _ => true,
        };
        let dup = if counted {
            self.count_name(name, space)
        } else {
            1
        };
        self.state[idx].dup = dup;
        (name, dup)
    }

    fn count_name(&mut self, name: &'a str, space: Space) -> u32 {
        let map = match space {
            Space::Tags => &mut self.tags,
            Space::Idents => &mut self.idents,
        };
        let count = map.entry(name).or_insert(0);
        *count += 1;
        *count
    }

    fn put_name(&mut self, name: &str, dup: u32) {
        self.put(name);
        if dup > 1 {
            self.put("___");
            self.put_num(dup);
        }
    }

    fn put_type_name(&mut self, id: u32) {
        let (name, dup) = self.resolve_name(id, Space::Tags);
        self.put_name(name, dup);
    }

    fn put_ident_name(&mut self, id: u32) {
        let (name, dup) = self.resolve_name(id, Space::Idents);
        self.put_name(name, dup);
    }

    // ---- definitions ----

    fn emit_missing_aliases(&mut self, id: u32) {
        const ALIASES: [(&str, &str); 4] = [
            ("__Poly8_t", "unsigned char"),
            ("__Poly16_t", "unsigned short"),
            ("__Poly64_t", "unsigned long long"),
            ("__Poly128_t", "unsigned __int128"),
        ];
        let (name, dup) = self.resolve_name(id, Space::Tags);
        if dup > 1 {
            // Never one of the aliases' names: those carry no suffix.
            return;
        }
        if let Some((_, alias)) = ALIASES.iter().find(|(n, _)| *n == name) {
            self.put("typedef ");
            self.put(alias);
            self.put(" ");
            self.put(name);
            self.put(";\n\n");
        }
    }

    fn emit_struct_fwd(&mut self, id: u32, ty: &Type<'_>) {
        let named = !ty.name().is_empty();
        self.put(if matches!(ty, Type::Struct(_)) {
            "struct"
        } else {
            "union"
        });
        if named {
            self.put(" ");
        }
        self.put_type_name(id);
    }

    fn emit_struct_def(&mut self, id: u32, ty: &'t Type<'a>, c: &'t Composite<'a>, level: u32) {
        if !self.enter(id) {
            return;
        }
        let is_struct = matches!(ty, Type::Struct(_));
        let packed = is_struct && self.is_struct_packed(c);
        self.emit_struct_fwd(id, ty);
        self.put(" {");
        let align = self.align_of(id);
        let mut off: i64 = 0;
        let mut prev_bitfield = false;
        for m in members(c) {
            let m_sz = i64::from(m.bitfield_size);
            let m_off = i64::from(m.bit_offset);
            let m_align = if packed { 1 } else { self.align_of(m.ty.0) };
            let in_bitfield = prev_bitfield && m_sz != 0;
            self.emit_bit_padding(off, m_off, m_align, in_bitfield, level + 1);
            self.put("\n");
            self.indent(level + 1);
            self.emit_type_decl(m.ty.0, m.name.as_str(), level + 1);
            if m_sz != 0 {
                self.put(": ");
                self.put_num(m_sz);
                off = m_off + m_sz;
                prev_bitfield = true;
            } else {
                let size = self.resolve_size(m.ty.0).max(0);
                off = m_off + size * 8;
                prev_bitfield = false;
            }
            self.put(";");
        }
        if is_struct {
            self.emit_bit_padding(off, i64::from(c.size) * 8, align, false, level + 1);
        }
        // `struct empty {}` stays on one line.
        if !c.members.is_empty() || c.size != 0 {
            self.put("\n");
            self.indent(level);
        }
        self.put("}");
        if packed {
            self.put(" __attribute__((packed))");
        }
        self.leave();
    }

    fn is_struct_packed(&mut self, c: &Composite<'_>) -> bool {
        let mut max_align = 1;
        for m in members(c) {
            let align = self.align_of(m.ty.0);
            if align != 0
                && m.bitfield_size == 0
                && i64::from(m.bit_offset) % (8 * i64::from(align)) != 0
            {
                return true;
            }
            max_align = max_align.max(align);
        }
        i64::from(c.size) % i64::from(max_align) != 0
    }

    /// Anonymous bitfields filling the gap from `cur_off` to `next_off`
    /// (bits) where the compiler would not leave it by itself; the next
    /// member has alignment `next_align` and continues a bitfield run when
    /// `in_bitfield`.
    fn emit_bit_padding(
        &mut self,
        cur_off: i64,
        next_off: i64,
        next_align: i32,
        in_bitfield: bool,
        level: u32,
    ) {
        if cur_off >= next_off {
            return;
        }
        let pads: [(&str, i64); 4] = [
            ("long", i64::from(self.ptr_size) * 8),
            ("int", 32),
            ("short", 16),
            ("char", 8),
        ];
        let round_up = |x: i64, to: i64| if to == 0 { x } else { (x + to - 1) / to * to };
        // The widest padding type whose next boundary is not past the gap.
        let mut pick = pads.len() - 1;
        let mut new_off = 0;
        for (i, &(_, bits)) in pads.iter().enumerate() {
            pick = i;
            new_off = round_up(cur_off, bits);
            if new_off <= next_off {
                break;
            }
        }
        let (mut pad_type, mut pad_bits) = pads[pick];
        let mut cur = cur_off;
        if new_off > cur && new_off <= next_off {
            // An explicit `type: 0` where the compiler would not align the
            // next member there by itself, or where `type: N` would fit in
            // the hole and be ignored; within a bitfield run, the count.
            if in_bitfield
                || (new_off == next_off && round_up(cur, i64::from(next_align) * 8) != new_off)
                || (new_off != next_off && next_off - new_off <= new_off - cur)
            {
                self.put_pad(level, pad_type, if in_bitfield { new_off - cur } else { 0 });
            }
            cur = new_off;
        }
        while cur != next_off {
            // A hole of gigabytes (a crafted struct size) would be
            // billions of padding lines, all held until the type is
            // written: past PAD_TEXT_LIMIT the dump stops with an error
            // instead (bpftool prints them all; no real type comes close).
            if self.out.len() > PAD_TEXT_LIMIT {
                self.fail(format!(
                    "a hole of {} bits in a struct: its padding exceeds {} MiB of C",
                    next_off - cur,
                    PAD_TEXT_LIMIT >> 20
                ));
                return;
            }
            let bits = (next_off - cur).min(pad_bits);
            if bits == pad_bits {
                self.put_pad(level, pad_type, pad_bits);
                cur += bits;
                continue;
            }
            // The rest with the smallest type that holds it.
            for &(name, size) in pads.iter().rev() {
                pad_type = name;
                pad_bits = size;
                if size < bits {
                    continue;
                }
                self.put_pad(level, name, bits);
                cur += bits;
                break;
            }
        }
    }

    fn put_pad(&mut self, level: u32, name: &str, bits: i64) {
        self.put("\n");
        self.indent(level);
        self.put(name);
        self.put(": ");
        self.put_num(bits);
        self.put(";");
    }

    fn emit_enum_def(&mut self, id: u32, ty: &'t Type<'a>, level: u32) {
        let (e, wide): (&'t Enum<'a>, bool) = match ty {
            Type::Enum(e) => (e, false),
            Type::Enum64(e) => (e, true),
            _ => return,
        };
        self.put("enum");
        if !e.name.is_empty() {
            self.put(" ");
        }
        self.put_type_name(id);
        if e.values.is_empty() {
            return;
        }
        self.put(" {");
        for v in e.values.iter() {
            let dup = self.count_name(v.name, Space::Idents);
            self.put("\n");
            self.indent(level + 1);
            self.put_name(v.name, dup);
            self.put(" = ");
            match (wide, e.signed) {
                (false, false) => self.put_num(v.value as u32),
                (false, true) => self.put_num(v.value as u32 as i32),
                (true, false) => {
                    self.put_num(v.value);
                    self.put("ULL");
                }
                (true, true) => {
                    self.put_num(v.value as i64);
                    self.put("LL");
                }
            }
            self.put(",");
        }
        self.put("\n");
        self.indent(level);
        self.put("}");
    }

    fn emit_fwd_def(&mut self, id: u32, ty: &Type<'_>) {
        let union = matches!(ty, Type::Fwd(f) if f.union);
        self.put(if union { "union " } else { "struct " });
        self.put_type_name(id);
    }

    fn emit_typedef_def(&mut self, id: u32, ty: &Type<'_>, level: u32) {
        let Type::Typedef(named) = ty else { return };
        let (name, dup) = self.resolve_name(id, Space::Idents);
        // Old GCCs typedef __gnuc_va_list to void; libbpf repairs it.
        if named.ty == TypeId::VOID && name == "__gnuc_va_list" && dup <= 1 {
            self.put("typedef __builtin_va_list __gnuc_va_list");
            return;
        }
        self.put("typedef ");
        let full = if dup > 1 {
            format!("{name}___{dup}")
        } else {
            name.to_string()
        };
        self.emit_type_decl(named.ty.0, &full, level);
    }

    // ---- declarators ----

    /// `btf_dump_emit_type_decl`: the chain from `id` down to a named
    /// type, then the declaration of `fname` with it.
    fn emit_type_decl(&mut self, mut id: u32, fname: &str, level: u32) {
        let start = self.decl_stack.len();
        let mut steps = 0u32;
        loop {
            self.decl_stack.push(id);
            let Some(ty) = self.ty(id) else { break };
            id = match ty {
                Type::Ptr(t) | Type::Volatile(t) | Type::Const(t) | Type::Restrict(t) => t.0,
                Type::TypeTag(n) => n.ty.0,
                Type::FuncProto(p) => p.ret.0,
                Type::Array(a) => a.elem.0,
                _ => break,
            };
            steps += 1;
            if steps > MAX_DEPTH {
                self.fail(format!(
                    "type [{id}]: declaration chain too long (a reference cycle?)"
                ));
                self.decl_stack.truncate(start);
                return;
            }
        }
        let mut count = self.decl_stack.len() - start;
        self.emit_type_chain(start, &mut count, fname, level);
        self.decl_stack.truncate(start);
    }

    fn top(&self, start: usize, count: usize) -> Option<&'t Type<'a>> {
        self.ty(self.decl_stack[start + count - 1])
    }

    fn emit_mods(&mut self, start: usize, count: &mut usize) {
        while *count > 0 {
            let text = match self.top(start, *count) {
                Some(Type::Volatile(_)) => "volatile ",
                Some(Type::Const(_)) => "const ",
                Some(Type::Restrict(_)) => "restrict ",
                _ => return,
            };
            self.put(text);
            *count -= 1;
        }
    }

    fn drop_mods(&mut self, start: usize, count: &mut usize) {
        while *count > 0 && self.top(start, *count).is_some_and(is_mod) {
            *count -= 1;
        }
    }

    fn emit_name(&mut self, name: &str, last_was_ptr: bool) {
        if !name.is_empty() && !last_was_ptr {
            self.put(" ");
        }
        self.put(name);
    }

    fn emit_type_chain(&mut self, start: usize, count: &mut usize, fname: &str, level: u32) {
        if !self.enter(self.decl_stack[start]) {
            return;
        }
        self.emit_chain_inner(start, count, fname, level);
        self.leave();
    }

    fn emit_chain_inner(&mut self, start: usize, count: &mut usize, fname: &str, level: u32) {
        let mut last_was_ptr = true;
        while *count > 0 {
            *count -= 1;
            let id = self.decl_stack[start + *count];
            let Some(ty) = self.ty(id) else {
                self.emit_mods(start, count);
                self.put("void");
                last_was_ptr = false;
                continue;
            };
            match ty {
                Type::Int(_) | Type::Float(_) => {
                    self.emit_mods(start, count);
                    self.put(ty.name());
                }
                Type::Struct(c) | Type::Union(c) => {
                    self.emit_mods(start, count);
                    if c.name.is_empty() {
                        self.emit_struct_def(id, ty, c, level);
                    } else {
                        self.emit_struct_fwd(id, ty);
                    }
                }
                Type::Enum(e) | Type::Enum64(e) => {
                    self.emit_mods(start, count);
                    if e.name.is_empty() {
                        self.emit_enum_def(id, ty, level);
                    } else {
                        self.put("enum ");
                        self.put_type_name(id);
                    }
                }
                Type::Fwd(_) => {
                    self.emit_mods(start, count);
                    self.emit_fwd_def(id, ty);
                }
                Type::Typedef(_) => {
                    self.emit_mods(start, count);
                    self.put_ident_name(id);
                }
                Type::Ptr(_) => self.put(if last_was_ptr { "*" } else { " *" }),
                Type::Volatile(_) => self.put(" volatile"),
                Type::Const(_) => self.put(" const"),
                Type::Restrict(_) => self.put(" restrict"),
                Type::TypeTag(tag) => {
                    self.emit_mods(start, count);
                    self.put(" __attribute__((btf_type_tag(\"");
                    self.put(tag.name);
                    self.put("\")))");
                }
                Type::Array(array) => {
                    // GCC repeats the element's qualifiers on the array.
                    self.drop_mods(start, count);
                    if *count == 0 {
                        self.emit_name(fname, last_was_ptr);
                    } else {
                        let multidim = matches!(self.top(start, *count), Some(Type::Array(_)));
                        if !fname.is_empty() && !last_was_ptr {
                            self.put(" ");
                        }
                        if !multidim {
                            self.put("(");
                        }
                        self.emit_type_chain(start, count, fname, level);
                        if !multidim {
                            self.put(")");
                        }
                    }
                    self.put("[");
                    self.put_num(array.nelems);
                    self.put("]");
                    return;
                }
                Type::FuncProto(proto) => {
                    // GCC marks noreturn function pointers volatile.
                    self.drop_mods(start, count);
                    if *count > 0 {
                        self.put(" (");
                        self.emit_type_chain(start, count, fname, level);
                        self.put(")");
                    } else {
                        self.emit_name(fname, last_was_ptr);
                    }
                    self.put("(");
                    let params = &proto.params;
                    if params.is_empty() || (params.len() == 1 && params[0].ty == TypeId::VOID) {
                        self.put("void)");
                        return;
                    }
                    for (i, p) in params.iter().enumerate() {
                        if i > 0 {
                            self.put(", ");
                        }
                        if i == params.len() - 1 && p.ty == TypeId::VOID {
                            self.put("...");
                            break;
                        }
                        self.emit_type_decl(p.ty.0, p.name.as_str(), level);
                    }
                    self.put(")");
                    return;
                }
                // Not a declarator (libbpf warns and stops the chain).
                Type::Func(_) | Type::Var(_) | Type::Datasec(_) | Type::DeclTag(_) => return,
            }
            last_was_ptr = matches!(ty, Type::Ptr(_));
        }
        self.emit_name(fname, last_was_ptr);
    }

    // ---- layout ----

    /// libbpf's `btf__align_of` (0 when unknown).
    fn align_of(&mut self, id: u32) -> i32 {
        let cached = self.align[id as usize];
        if cached != UNKNOWN {
            return cached;
        }
        if !self.enter(id) {
            return 0;
        }
        let align = self.compute_align(id);
        self.leave();
        self.align[id as usize] = align;
        align
    }

    fn compute_align(&mut self, id: u32) -> i32 {
        let ptr = self.ptr_size as i32;
        let Some(ty) = self.ty(id) else { return 0 };
        match ty {
            Type::Int(t) => ptr.min(t.size as i32),
            Type::Enum(e) | Type::Enum64(e) => ptr.min(e.size as i32),
            Type::Float(f) => ptr.min(f.size as i32),
            Type::Ptr(_) => ptr,
            Type::Typedef(n) => self.align_of(n.ty.0),
            Type::TypeTag(n) => self.align_of(n.ty.0),
            Type::Volatile(t) | Type::Const(t) | Type::Restrict(t) => self.align_of(t.0),
            Type::Array(a) => self.align_of(a.elem.0),
            Type::Struct(c) | Type::Union(c) => {
                let mut max_align = 1;
                for m in members(c) {
                    let align = self.align_of(m.ty.0);
                    if align <= 0 {
                        return align;
                    }
                    max_align = max_align.max(align);
                    if m.bitfield_size == 0 && i64::from(m.bit_offset) % (8 * i64::from(align)) != 0
                    {
                        return 1;
                    }
                }
                if i64::from(c.size) % i64::from(max_align) != 0 {
                    return 1;
                }
                max_align
            }
            _ => 0,
        }
    }

    /// libbpf's `btf__resolve_size` (negative when unknown).
    fn resolve_size(&self, mut id: u32) -> i64 {
        let mut nelems: u32 = 1;
        let mut size: i64 = -1;
        for _ in 0..32 {
            let Some(ty) = self.ty(id) else { break };
            id = match ty {
                Type::Int(t) => {
                    size = i64::from(t.size);
                    break;
                }
                Type::Struct(c) | Type::Union(c) => {
                    size = i64::from(c.size);
                    break;
                }
                Type::Enum(e) | Type::Enum64(e) => {
                    size = i64::from(e.size);
                    break;
                }
                Type::Datasec(s) => {
                    size = i64::from(s.size);
                    break;
                }
                Type::Float(f) => {
                    size = i64::from(f.size);
                    break;
                }
                Type::Ptr(_) => {
                    size = i64::from(self.ptr_size);
                    break;
                }
                Type::Typedef(n) => n.ty.0,
                Type::TypeTag(n) => n.ty.0,
                Type::Volatile(t) | Type::Const(t) | Type::Restrict(t) => t.0,
                Type::Var(o) => o.ty.0,
                Type::DeclTag(t) => t.ty.0,
                Type::Array(a) => {
                    if nelems != 0 && a.nelems > u32::MAX / nelems {
                        return -1;
                    }
                    nelems *= a.nelems;
                    a.elem.0
                }
                // FWD reads as void; FUNC and FUNC_PROTO have no size.
                Type::Fwd(_) | Type::Func(_) | Type::FuncProto(_) => break,
            };
        }
        if size < 0 {
            return -1;
        }
        if nelems != 0 && size > i64::from(u32::MAX / nelems) {
            return -1;
        }
        i64::from(nelems) * size
    }
}

/// libbpf's pointer size guess.
fn pointer_size(types: &[&Type<'_>]) -> u32 {
    const LONG: [&str; 11] = [
        "long",
        "long int",
        "int long",
        "unsigned long",
        "long unsigned",
        "unsigned long int",
        "unsigned int long",
        "long unsigned int",
        "long int unsigned",
        "int unsigned long",
        "int long unsigned",
    ];
    types
        .iter()
        .find_map(|ty| match ty {
            Type::Int(t) if (t.size == 4 || t.size == 8) && LONG.contains(&t.name) => Some(t.size),
            _ => None,
        })
        .unwrap_or(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_types::{int, test_name};
    use crate::types::{Composite, Member};

    fn dump(btf: &Btf<'_>, base: Option<&Btf<'_>>) -> io::Result<String> {
        let mut out = Vec::new();
        dump_c(&mut out, btf, base)?;
        Ok(String::from_utf8(out).expect("the header is text"))
    }

    fn member(name: &'static str, ty: u32, bit_offset: u32) -> Member<'static> {
        Member {
            name: test_name(name),
            ty: TypeId(ty),
            bit_offset,
            bitfield_size: 0,
        }
    }

    fn body(header: &str) -> &str {
        header
            .strip_prefix(HEADER)
            .and_then(|rest| rest.strip_suffix(FOOTER))
            .expect("guard, pragma block and footer around the types")
    }

    /// A struct of 4 GiB with one int (found by the `btf_read` fuzz target:
    /// its dump ran for minutes towards 500 million padding lines): the
    /// dump stops past PAD_TEXT_LIMIT with an error, quickly.
    #[test]
    fn a_hole_of_gigabytes_is_an_error() {
        let mut btf = Btf::default();
        btf.add(int("int", 4, 1));
        btf.add(Type::Struct(Composite {
            name: "huge",
            size: u32::MAX,
            members: vec![member("x", 1, 0)].into(),
            kind_flag: false,
        }));
        let start = std::time::Instant::now();
        let err = dump(&btf, None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("padding exceeds 16 MiB"), "{err}");
        assert!(start.elapsed().as_secs() < 30);
    }

    /// A self-referencing list node: one definition, the pointer to itself
    /// needs no forward declaration (written by hand from the C rules).
    #[test]
    fn self_referencing_struct() {
        let mut btf = Btf::default();
        btf.add(int("int", 4, 1));
        btf.add(Type::Struct(Composite {
            name: "node",
            size: 16,
            members: vec![member("value", 1, 0), member("next", 3, 64)].into(),
            kind_flag: false,
        }));
        btf.add(Type::Ptr(TypeId(2)));
        let header = dump(&btf, None).expect("valid BTF");
        assert_eq!(
            body(&header),
            "struct node {\n\tint value;\n\tstruct node *next;\n};\n\n"
        );
    }

    /// Two structs pointing at each other: the second is forward-declared
    /// before the first's definition; a padding hole after a char before a
    /// long needs nothing written, the compiler leaves it.
    #[test]
    fn mutual_pointers_get_a_forward_declaration() {
        let mut btf = Btf::default();
        btf.add(int("char", 1, 2)); // 1
        btf.add(Type::Struct(Composite {
            name: "a",
            size: 16,
            members: vec![member("tag", 1, 0), member("b", 4, 64)].into(),
            kind_flag: false,
        })); // 2
        btf.add(Type::Struct(Composite {
            name: "b",
            size: 8,
            members: vec![member("a", 5, 0)].into(),
            kind_flag: false,
        })); // 3
        btf.add(Type::Ptr(TypeId(3))); // 4
        btf.add(Type::Ptr(TypeId(2))); // 5
        let header = dump(&btf, None).expect("valid BTF");
        assert_eq!(
            body(&header),
            "struct b;\n\nstruct a {\n\tchar tag;\n\tstruct b *b;\n};\n\nstruct b {\n\tstruct a *a;\n};\n\n"
        );
    }

    /// A pointer cycle through modifiers only (PTR -> CONST -> PTR) is not
    /// C; libbpf recurses until it crashes. We stop with an error.
    #[test]
    fn modifier_cycle_is_an_error() {
        let mut btf = Btf::default();
        btf.add(Type::Ptr(TypeId(2)));
        btf.add(Type::Const(TypeId(1)));
        let err = dump(&btf, None).expect_err("a cycle");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("cycle"), "{err}");
    }

    /// An anonymous struct that contains a pointer to itself can only be
    /// written inline, endlessly: libbpf's "unsatisfiable type cycle".
    #[test]
    fn anonymous_struct_cycle_is_an_error() {
        let mut btf = Btf::default();
        btf.add(Type::Struct(Composite {
            name: "",
            size: 8,
            members: vec![member("me", 2, 0)].into(),
            kind_flag: false,
        }));
        btf.add(Type::Ptr(TypeId(1)));
        let err = dump(&btf, None).expect_err("a cycle");
        assert!(
            err.to_string().contains("unsatisfiable type cycle, id:[1]"),
            "{err}"
        );
    }

    #[test]
    fn split_needs_its_base() {
        let btf = Btf {
            base_type_count: 3,
            ..Btf::default()
        };
        assert!(dump(&btf, None).is_err());
        let base = Btf::default();
        assert!(dump(&btf, Some(&base)).is_err(), "a base of the wrong size");
    }

    #[test]
    fn dangling_reference_is_an_error() {
        let mut btf = Btf::default();
        btf.add(Type::Ptr(TypeId(7)));
        let err = dump(&btf, None).expect_err("dangling");
        assert!(
            err.to_string().contains("type [1] refers to type [7]"),
            "{err}"
        );
    }
}
