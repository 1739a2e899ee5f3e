//! Pass 1: each type's own fields (`btf_check_all_metas`, `btf_check_meta`
//! and the kinds' `*_check_meta`).

use super::{bits_roundup_bytes, kind, kind_str, Checked, Ty, Violation, BTF_MAX_TYPE};

/// `BTF_INFO_MASK`.
const INFO_MASK: u32 = 0x9f00_ffff;
/// `BTF_INT_MASK`.
const INT_MASK: u32 = 0x0fff_ffff;
/// `BTF_FUNC_GLOBAL`: the largest FUNC linkage.
const FUNC_GLOBAL: u32 = 1;

/// `BTF_TYPE_ID_VALID`.
fn id_valid(id: u32) -> bool {
    id <= BTF_MAX_TYPE
}

struct Meta<'c, 'a> {
    btf: &'c Checked<'a>,
    t: Ty<'a>,
    id: u32,
}

impl Meta<'_, '_> {
    fn fail(&self, rule: &'static str, message: impl Into<String>) -> Violation {
        Violation {
            type_id: self.id,
            kind: kind_str(self.t.kind()),
            name: self.btf.display_name(self.t.name_off),
            rule,
            message: message.into(),
        }
    }

    /// A member's problem, named as `btf_verifier_log_member` does.
    fn member(&self, rule: &'static str, name_off: u32, message: &str) -> Violation {
        let name = self.btf.display_name(name_off);
        self.fail(rule, format!("member {name}: {message}"))
    }

    fn need(&self, rule: &'static str, meta_left: u32, needed: u64) -> Result<u32, Violation> {
        if u64::from(meta_left) < needed {
            return Err(self.fail(rule, format!("meta_left:{meta_left} meta_needed:{needed}")));
        }
        Ok(needed as u32)
    }

    fn no_vlen(&self, rule: &'static str) -> Result<(), Violation> {
        if self.t.vlen() != 0 {
            return Err(self.fail(rule, "vlen != 0"));
        }
        Ok(())
    }

    fn no_kflag(&self, rule: &'static str) -> Result<(), Violation> {
        if self.t.kflag() {
            return Err(self.fail(rule, "Invalid btf_info kind_flag"));
        }
        Ok(())
    }

    /// `btf_int_check_meta`.
    fn int(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_int_check_meta";
        let needed = self.need(R, meta_left, 4)?;
        self.no_vlen(R)?;
        self.no_kflag(R)?;
        let int_data = self.t.word(0);
        if int_data & !INT_MASK != 0 {
            return Err(self.fail(R, format!("Invalid int_data:{int_data:x}")));
        }
        let nr_bits = (int_data & 0xff) + ((int_data >> 16) & 0xff);
        if nr_bits > 128 {
            return Err(self.fail(R, "nr_bits exceeds 128"));
        }
        if bits_roundup_bytes(nr_bits) > self.t.size {
            return Err(self.fail(R, "nr_bits exceeds type_size"));
        }
        let encoding = (int_data >> 24) & 0x0f;
        if !matches!(encoding, 0 | 1 | 2 | 4) {
            return Err(self.fail(R, "Unsupported encoding"));
        }
        Ok(needed)
    }

    /// `btf_ref_type_check_meta` (PTR, TYPEDEF, VOLATILE, CONST, RESTRICT,
    /// TYPE_TAG).
    fn ref_type(&self) -> Result<u32, Violation> {
        const R: &str = "btf_ref_type_check_meta";
        self.no_vlen(R)?;
        // 6.18 (since 6.14) allows kind_flag on TYPE_TAG: an attribute.
        if self.t.kflag() && self.t.kind() != kind::TYPE_TAG {
            return Err(self.fail(R, "Invalid btf_info kind_flag"));
        }
        if !id_valid(self.t.size) {
            return Err(self.fail(R, "Invalid type_id"));
        }
        let name_ok = match self.t.kind() {
            kind::TYPEDEF => {
                self.t.name_off != 0 && self.btf.name_valid_identifier(self.t.name_off)
            }
            kind::TYPE_TAG => self
                .btf
                .str_by_offset(self.t.name_off)
                .is_some_and(|v| v.first().is_some_and(|&b| b != 0)),
            _ => self.t.name_off == 0,
        };
        if !name_ok {
            return Err(self.fail(R, "Invalid name"));
        }
        Ok(0)
    }

    /// `btf_fwd_check_meta`.
    fn fwd(&self) -> Result<u32, Violation> {
        const R: &str = "btf_fwd_check_meta";
        self.no_vlen(R)?;
        if self.t.size != 0 {
            return Err(self.fail(R, "type != 0"));
        }
        if self.t.name_off == 0 || !self.btf.name_valid_identifier(self.t.name_off) {
            return Err(self.fail(R, "Invalid name"));
        }
        Ok(0)
    }

    /// `btf_array_check_meta`.
    fn array(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_array_check_meta";
        let needed = self.need(R, meta_left, 12)?;
        if self.t.name_off != 0 {
            return Err(self.fail(R, "Invalid name"));
        }
        self.no_vlen(R)?;
        self.no_kflag(R)?;
        if self.t.size != 0 {
            return Err(self.fail(R, "size != 0"));
        }
        let (elem, index) = (self.t.word(0), self.t.word(1));
        if elem == 0 || !id_valid(elem) {
            return Err(self.fail(R, "Invalid elem"));
        }
        if index == 0 || !id_valid(index) {
            return Err(self.fail(R, "Invalid index"));
        }
        Ok(needed)
    }

    /// `btf_struct_check_meta` (STRUCT, UNION).
    fn structure(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_struct_check_meta";
        let is_union = self.t.kind() == kind::UNION;
        let vlen = self.t.vlen();
        let needed = self.need(R, meta_left, u64::from(vlen) * 12)?;
        if self.t.name_off != 0 && !self.btf.name_valid_identifier(self.t.name_off) {
            return Err(self.fail(R, "Invalid name"));
        }
        let mut last_offset = 0;
        for i in 0..vlen as usize {
            let (name_off, ty, raw) = (
                self.t.word(3 * i),
                self.t.word(3 * i + 1),
                self.t.word(3 * i + 2),
            );
            if !self.btf.name_offset_valid(name_off) {
                return Err(self.fail(R, format!("Invalid member name_offset:{name_off}")));
            }
            if name_off != 0 && !self.btf.name_valid_identifier(name_off) {
                return Err(self.member(R, name_off, "Invalid name"));
            }
            if ty == 0 || !id_valid(ty) {
                return Err(self.member(R, name_off, "Invalid type_id"));
            }
            // __btf_member_bit_offset
            let offset = if self.t.kflag() {
                raw & 0x00ff_ffff
            } else {
                raw
            };
            if is_union && offset != 0 {
                return Err(self.member(R, name_off, "Invalid member bits_offset"));
            }
            // ">" instead of ">=": the last member could be "char a[0];".
            if last_offset > offset {
                return Err(self.member(R, name_off, "Invalid member bits_offset"));
            }
            if bits_roundup_bytes(offset) > self.t.size {
                return Err(self.member(R, name_off, "Member bits_offset exceeds its struct size"));
            }
            last_offset = offset;
        }
        Ok(needed)
    }

    /// `btf_enum_check_meta` and `btf_enum64_check_meta`.
    fn enumeration(&self, meta_left: u32, entry_words: usize) -> Result<u32, Violation> {
        let r = if entry_words == 2 {
            "btf_enum_check_meta"
        } else {
            "btf_enum64_check_meta"
        };
        let vlen = self.t.vlen();
        let needed = self.need(r, meta_left, u64::from(vlen) * 4 * entry_words as u64)?;
        if self.t.size > 8 || !self.t.size.is_power_of_two() {
            return Err(self.fail(r, "Unexpected size"));
        }
        if self.t.name_off != 0 && !self.btf.name_valid_identifier(self.t.name_off) {
            return Err(self.fail(r, "Invalid name"));
        }
        for i in 0..vlen as usize {
            let name_off = self.t.word(entry_words * i);
            if !self.btf.name_offset_valid(name_off) {
                return Err(self.fail(r, format!("Invalid name_offset:{name_off}")));
            }
            if name_off == 0 || !self.btf.name_valid_identifier(name_off) {
                let name = self.btf.display_name(name_off);
                return Err(self.fail(r, format!("enumerator {name}: Invalid name")));
            }
        }
        Ok(needed)
    }

    /// `btf_func_proto_check_meta`.
    fn func_proto(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_func_proto_check_meta";
        let needed = self.need(R, meta_left, u64::from(self.t.vlen()) * 8)?;
        if self.t.name_off != 0 {
            return Err(self.fail(R, "Invalid name"));
        }
        self.no_kflag(R)?;
        Ok(needed)
    }

    /// `btf_func_check_meta`.
    fn func(&self) -> Result<u32, Violation> {
        const R: &str = "btf_func_check_meta";
        if self.t.name_off == 0 || !self.btf.name_valid_identifier(self.t.name_off) {
            return Err(self.fail(R, "Invalid name"));
        }
        if self.t.vlen() > FUNC_GLOBAL {
            return Err(self.fail(R, "Invalid func linkage"));
        }
        self.no_kflag(R)?;
        Ok(0)
    }

    /// `btf_var_check_meta`.
    fn var(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_var_check_meta";
        let needed = self.need(R, meta_left, 4)?;
        self.no_vlen(R)?;
        self.no_kflag(R)?;
        if self.t.name_off == 0 || !self.btf.name_valid_identifier(self.t.name_off) {
            return Err(self.fail(R, "Invalid name"));
        }
        if self.t.size == 0 || !id_valid(self.t.size) {
            return Err(self.fail(R, "Invalid type_id"));
        }
        let linkage = self.t.word(0);
        // BTF_VAR_STATIC, BTF_VAR_GLOBAL_ALLOCATED
        if linkage != 0 && linkage != 1 {
            return Err(self.fail(R, "Linkage not supported"));
        }
        Ok(needed)
    }

    /// `btf_datasec_check_meta`.
    fn datasec(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_datasec_check_meta";
        let vlen = self.t.vlen();
        let needed = self.need(R, meta_left, u64::from(vlen) * 12)?;
        if self.t.size == 0 {
            return Err(self.fail(R, "size == 0"));
        }
        self.no_kflag(R)?;
        if self.t.name_off == 0 || !self.btf.name_valid_section(self.t.name_off) {
            return Err(self.fail(R, "Invalid name"));
        }
        let size = u64::from(self.t.size);
        let (mut last_end, mut sum) = (0u64, 0u64);
        for i in 0..vlen as usize {
            let (ty, offset, vsize) = (
                self.t.word(3 * i),
                self.t.word(3 * i + 1),
                self.t.word(3 * i + 2),
            );
            let vsi = |message: &str| {
                self.fail(
                    R,
                    format!("type_id={ty} offset={offset} size={vsize}: {message}"),
                )
            };
            if ty == 0 || !id_valid(ty) {
                return Err(vsi("Invalid type_id"));
            }
            if u64::from(offset) < last_end || u64::from(offset) >= size {
                return Err(vsi("Invalid offset"));
            }
            if vsize == 0 || u64::from(vsize) > size {
                return Err(vsi("Invalid size"));
            }
            last_end = u64::from(offset) + u64::from(vsize);
            if last_end > size {
                return Err(vsi("Invalid offset+size"));
            }
            sum += u64::from(vsize);
        }
        if size < sum {
            return Err(self.fail(R, "Invalid btf_info size"));
        }
        Ok(needed)
    }

    /// `btf_float_check_meta`.
    fn float(&self) -> Result<u32, Violation> {
        const R: &str = "btf_float_check_meta";
        self.no_vlen(R)?;
        self.no_kflag(R)?;
        if !matches!(self.t.size, 2 | 4 | 8 | 12 | 16) {
            return Err(self.fail(R, "Invalid type_size"));
        }
        Ok(0)
    }

    /// `btf_decl_tag_check_meta`.
    fn decl_tag(&self, meta_left: u32) -> Result<u32, Violation> {
        const R: &str = "btf_decl_tag_check_meta";
        let needed = self.need(R, meta_left, 4)?;
        let value_ok = self
            .btf
            .str_by_offset(self.t.name_off)
            .is_some_and(|v| v.first().is_some_and(|&b| b != 0));
        if !value_ok {
            return Err(self.fail(R, "Invalid value"));
        }
        self.no_vlen(R)?;
        // 6.18 (since 6.14) allows kind_flag (an attribute rather than a
        // tag), for any component.
        let component_idx = self.t.word(0) as i32;
        if component_idx < -1 {
            return Err(self.fail(R, "Invalid component_idx"));
        }
        Ok(needed)
    }
}

/// `btf_check_all_metas`: walks the type section, checking each record
/// and recording where it lies. Continues past a record whose length is
/// still known, so that every such violation is reported.
pub(super) fn check_all_metas(
    btf: &mut Checked<'_>,
    types_at: usize,
    type_len: usize,
) -> Result<(), Vec<Violation>> {
    if let Some(type_at) = all_metas_in_parallel(btf, types_at, type_len) {
        btf.type_at = type_at;
        return Ok(());
    }
    check_all_metas_in_order(btf, types_at, type_len)
}

/// Records checked by one task of [`all_metas_in_parallel`].
const RECORDS_PER_TASK: usize = 1 << 12;

/// [`check_all_metas`] for BTF that passes, as nearly all does (what
/// btfenc writes is checked before it leaves the library): where each
/// record starts is found first, from its kind and vlen alone, and the
/// records are then checked side by side (the meta checks read nothing but
/// their own record and the strings). `None` at the first thing out of
/// the ordinary (any violation, a record whose kind says nothing of its
/// length, a table near the kernel's type limit): the kernel's own order
/// then finds it and words it ([`check_all_metas_in_order`]). A big BTF's
/// checks were a third of the kernel's checks of a vmlinux, on the
/// sequential tail.
pub(super) fn all_metas_in_parallel(
    btf: &Checked<'_>,
    types_at: usize,
    type_len: usize,
) -> Option<Vec<u32>> {
    use rayon::prelude::*;

    let end = types_at.checked_add(type_len)?;
    let mut type_at = Vec::new();
    if btf.base.is_none() {
        type_at.push(u32::MAX);
    }
    let first = type_at.len();
    let mut cur = types_at;
    while cur < end {
        if end - cur < 12 {
            return None;
        }
        let t = Ty::read(btf.data, btf.endian, cur);
        if t.info & !INFO_MASK != 0 || t.kind() > kind::MAX || t.kind() == 0 {
            return None;
        }
        let trailing = trailing_len(&t)?;
        if trailing > end - cur - 12 {
            return None;
        }
        type_at.push(u32::try_from(cur).ok()?);
        cur += 12 + trailing;
    }
    // Far from BTF_MAX_TYPE, where `btf_add_type` would refuse to grow.
    let count = u64::from(btf.start_id) + type_at.len() as u64;
    if count >= u64::from(BTF_MAX_TYPE) / 2 {
        return None;
    }
    let first_id = if btf.base.is_some() { btf.start_id } else { 1 };
    let records = type_at.get(first..)?;
    let all_pass = records
        .par_chunks(RECORDS_PER_TASK)
        .enumerate()
        .all(|(task, chunk)| {
            chunk.iter().enumerate().all(|(i, &at)| {
                let id = first_id.wrapping_add((task * RECORDS_PER_TASK + i) as u32);
                let at = at as usize;
                let t = Ty::read(btf.data, btf.endian, at);
                let left = (end - at - 12) as u32;
                btf.name_offset_valid(t.name_off)
                    && check_meta(&Meta { btf, t, id }, left).ok()
                        == trailing_len(&t).map(|n| n as u32)
            })
        });
    all_pass.then_some(type_at)
}

/// The kind's `*_check_meta` of one record, with `left` bytes after its
/// head: the bytes of the record after the head, or what is wrong.
fn check_meta(meta: &Meta<'_, '_>, left: u32) -> Result<u32, Violation> {
    match meta.t.kind() {
        kind::INT => meta.int(left),
        kind::PTR
        | kind::TYPEDEF
        | kind::VOLATILE
        | kind::CONST
        | kind::RESTRICT
        | kind::TYPE_TAG => meta.ref_type(),
        kind::ARRAY => meta.array(left),
        kind::STRUCT | kind::UNION => meta.structure(left),
        kind::ENUM => meta.enumeration(left, 2),
        kind::ENUM64 => meta.enumeration(left, 3),
        kind::FWD => meta.fwd(),
        kind::FUNC => meta.func(),
        kind::FUNC_PROTO => meta.func_proto(left),
        kind::VAR => meta.var(left),
        kind::DATASEC => meta.datasec(left),
        kind::FLOAT => meta.float(),
        _ => meta.decl_tag(left),
    }
}

/// `btf_check_all_metas`, record after record, as the kernel does: every
/// violation it reports, in its order.
pub(super) fn check_all_metas_in_order(
    btf: &mut Checked<'_>,
    types_at: usize,
    type_len: usize,
) -> Result<(), Vec<Violation>> {
    let data = btf.data;
    let end = types_at + type_len;
    let mut cur = types_at;
    let mut violations = Vec::new();
    // btf_add_type: the kernel grows its array by a quarter (at least 16)
    // up to BTF_MAX_TYPE, and refuses to grow it past that.
    let mut types_size: u32 = 0;
    let mut nr_types: u32 = 0;
    if btf.base.is_none() {
        btf.type_at.push(u32::MAX);
    }
    let mut log_type_id = if btf.base.is_some() { btf.start_id } else { 1 };
    while cur < end {
        let meta_left = (end - cur) as u32;
        if meta_left < 12 {
            violations.push(Violation {
                type_id: log_type_id,
                kind: "",
                name: String::new(),
                rule: "btf_check_meta",
                message: format!("[{log_type_id}] meta_left:{meta_left} meta_needed:12"),
            });
            break;
        }
        let t = Ty::read(data, btf.endian, cur);
        let generic = |message: String| Violation {
            type_id: log_type_id,
            kind: "",
            name: String::new(),
            rule: "btf_check_meta",
            message,
        };
        if t.info & !INFO_MASK != 0 {
            violations.push(generic(format!(
                "[{log_type_id}] Invalid btf_info:{:x}",
                t.info
            )));
            break;
        }
        let k = t.kind();
        if k > kind::MAX || k == 0 {
            violations.push(generic(format!("[{log_type_id}] Invalid kind:{k}")));
            break;
        }
        if !btf.name_offset_valid(t.name_off) {
            violations.push(generic(format!(
                "[{log_type_id}] Invalid name_offset:{}",
                t.name_off
            )));
            // The record's length is still known from its kind.
        }
        let meta = Meta {
            btf,
            t,
            id: log_type_id,
        };
        let left = meta_left - 12;
        let result = check_meta(&meta, left);
        let trailing = match result {
            Ok(n) => n as usize,
            Err(v) => {
                let known = trailing_len(&t);
                let fits = known.is_some_and(|n| n <= left as usize);
                if btf.name_offset_valid(t.name_off) || !fits {
                    violations.push(v);
                }
                match known {
                    Some(n) if n <= left as usize => n,
                    _ => break,
                }
            }
        };
        // btf_add_type
        if nr_types == types_size {
            if btf.start_id.wrapping_add(types_size) == BTF_MAX_TYPE {
                violations.push(generic("Exceeded max num of types".to_string()));
                break;
            }
            let expand_by = (types_size >> 2).max(16);
            types_size = BTF_MAX_TYPE.min(types_size + expand_by);
            if nr_types == 0 && btf.base.is_none() {
                nr_types += 1; // void
            }
        }
        nr_types += 1;
        btf.type_at.push(cur as u32);
        cur += 12 + trailing;
        log_type_id = log_type_id.wrapping_add(1);
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(violations)
    }
}

/// The bytes after the 12-byte head, by kind and vlen.
fn trailing_len(t: &Ty<'_>) -> Option<usize> {
    let vlen = t.vlen() as usize;
    Some(match t.kind() {
        kind::INT | kind::VAR | kind::DECL_TAG => 4,
        kind::ARRAY => 12,
        kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 12 * vlen,
        kind::ENUM | kind::FUNC_PROTO => 8 * vlen,
        kind::PTR
        | kind::FWD
        | kind::TYPEDEF
        | kind::VOLATILE
        | kind::CONST
        | kind::RESTRICT
        | kind::FUNC
        | kind::FLOAT
        | kind::TYPE_TAG => 0,
        _ => return None,
    })
}
