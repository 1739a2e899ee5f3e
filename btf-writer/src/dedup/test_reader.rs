//! A minimal little-endian raw BTF reader, only for testing dedup against
//! pahole's reference blobs before the real reader lands. Panics on
//! malformed input, which is acceptable in tests only.

use crate::types::*;

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

fn str_at<'a>(strs: &'a [u8], base_str_len: u32, off: u32) -> &'a str {
    let off = (off - base_str_len) as usize;
    let end = strs[off..].iter().position(|&c| c == 0).map_or(strs.len(), |p| off + p);
    std::str::from_utf8(&strs[off..end]).unwrap_or("")
}

/// Parses `data`; for split BTF, pass the base's type count and string
/// length (string offsets below it belong to the base, which the caller
/// must resolve; here they only occur for names shared with the base, so
/// we look them up in `base_strs`).
pub(super) fn parse<'a>(data: &'a [u8], base: Option<(&Btf<'a>, &'a [u8])>) -> (Btf<'a>, &'a [u8]) {
    assert_eq!(u32::from(u16::from_le_bytes([data[0], data[1]])), 0xeb9f);
    let hdr_len = u32_at(data, 4) as usize;
    let type_off = u32_at(data, 8) as usize;
    let type_len = u32_at(data, 12) as usize;
    let str_off = u32_at(data, 16) as usize;
    let str_len = u32_at(data, 20) as usize;
    let types_bytes = &data[hdr_len + type_off..hdr_len + type_off + type_len];
    let strs = &data[hdr_len + str_off..hdr_len + str_off + str_len];
    let (base_type_count, base_str_len, base_strs) = match base {
        Some((b, s)) => (b.count(), s.len() as u32, s),
        None => (0, 0, &[][..]),
    };
    let name = |off: u32| -> &'a str {
        if off < base_str_len {
            str_at(base_strs, 0, off)
        } else {
            str_at(strs, base_str_len, off)
        }
    };
    let mut types = Vec::new();
    let mut p = 0;
    while p < types_bytes.len() {
        let name_off = u32_at(types_bytes, p);
        let info = u32_at(types_bytes, p + 4);
        let size_type = u32_at(types_bytes, p + 8);
        p += 12;
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        let kflag = info >> 31 == 1;
        let n = name(name_off);
        let linkage = |v: u32| match v {
            0 => Linkage::Static,
            1 => Linkage::Global,
            _ => Linkage::Extern,
        };
        let t = match kind {
            1 => {
                let v = u32_at(types_bytes, p);
                p += 4;
                Type::Int(Int {
                    name: n,
                    size: size_type,
                    encoding: IntEncoding((v >> 24) as u8 & 0xf),
                    offset: (v >> 16) as u8,
                    bits: v as u8,
                })
            }
            2 => Type::Ptr(TypeId(size_type)),
            3 => {
                let a = Array {
                    elem: TypeId(u32_at(types_bytes, p)),
                    index: TypeId(u32_at(types_bytes, p + 4)),
                    nelems: u32_at(types_bytes, p + 8),
                };
                p += 12;
                Type::Array(a)
            }
            4 | 5 => {
                let mut members = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    let off = u32_at(types_bytes, p + 8);
                    members.push(Member {
                        name: name(u32_at(types_bytes, p)),
                        ty: TypeId(u32_at(types_bytes, p + 4)),
                        bit_offset: if kflag { off & 0xff_ffff } else { off },
                        bitfield_size: if kflag { (off >> 24) as u8 } else { 0 },
                    });
                    p += 12;
                }
                let c = Composite { name: n, size: size_type, members, kind_flag: kflag };
                if kind == 4 {
                    Type::Struct(c)
                } else {
                    Type::Union(c)
                }
            }
            6 | 19 => {
                let mut values = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    let vname = name(u32_at(types_bytes, p));
                    let value = if kind == 6 {
                        p += 8;
                        u32_at(types_bytes, p - 4) as u64
                    } else {
                        p += 12;
                        u32_at(types_bytes, p - 8) as u64 | (u32_at(types_bytes, p - 4) as u64) << 32
                    };
                    values.push(EnumValue { name: vname, value });
                }
                let e = Enum { name: n, size: size_type, signed: kflag, values };
                if kind == 6 {
                    Type::Enum(e)
                } else {
                    Type::Enum64(e)
                }
            }
            7 => Type::Fwd(Fwd { name: n, union: kflag }),
            8 => Type::Typedef(Named { name: n, ty: TypeId(size_type) }),
            9 => Type::Volatile(TypeId(size_type)),
            10 => Type::Const(TypeId(size_type)),
            11 => Type::Restrict(TypeId(size_type)),
            12 => Type::Func(Object { name: n, ty: TypeId(size_type), linkage: linkage(vlen as u32) }),
            13 => {
                let mut params = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    params.push(Param {
                        name: name(u32_at(types_bytes, p)),
                        ty: TypeId(u32_at(types_bytes, p + 4)),
                    });
                    p += 8;
                }
                Type::FuncProto(FuncProto { ret: TypeId(size_type), params })
            }
            14 => {
                let l = u32_at(types_bytes, p);
                p += 4;
                Type::Var(Object { name: n, ty: TypeId(size_type), linkage: linkage(l) })
            }
            15 => {
                let mut vars = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    vars.push(VarSecInfo {
                        ty: TypeId(u32_at(types_bytes, p)),
                        offset: u32_at(types_bytes, p + 4),
                        size: u32_at(types_bytes, p + 8),
                    });
                    p += 12;
                }
                Type::Datasec(Datasec { name: n, size: size_type, vars })
            }
            16 => Type::Float(Float { name: n, size: size_type }),
            17 => {
                let idx = u32_at(types_bytes, p) as i32;
                p += 4;
                Type::DeclTag(DeclTag { name: n, ty: TypeId(size_type), component_idx: idx })
            }
            18 => Type::TypeTag(Named { name: n, ty: TypeId(size_type) }),
            k => panic!("unknown BTF kind {k}"),
        };
        types.push(t);
    }
    (Btf { types, base_type_count, base_str_len }, strs)
}
