//! A minimal little-endian raw BTF reader, only for testing dedup against
//! pahole's reference blobs before the real reader lands. Panics on
//! malformed input, which is acceptable in tests only.

use crate::types::*;

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

fn str_at(strs: &[u8], base_str_len: u32, off: u32) -> &str {
    let off = (off - base_str_len) as usize;
    let end = strs[off..]
        .iter()
        .position(|&c| c == 0)
        .map_or(strs.len(), |p| off + p);
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
                let c = Composite {
                    name: n,
                    size: size_type,
                    members,
                    kind_flag: kflag,
                };
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
                        // Signed 32-bit values are kept sign-extended, as
                        // the lowering keeps them.
                        let v = u32_at(types_bytes, p - 4);
                        if kflag {
                            v as i32 as i64 as u64
                        } else {
                            v as u64
                        }
                    } else {
                        p += 12;
                        u32_at(types_bytes, p - 8) as u64
                            | (u32_at(types_bytes, p - 4) as u64) << 32
                    };
                    values.push(EnumValue { name: vname, value });
                }
                let e = Enum {
                    name: n,
                    size: size_type,
                    signed: kflag,
                    values,
                };
                if kind == 6 {
                    Type::Enum(e)
                } else {
                    Type::Enum64(e)
                }
            }
            7 => Type::Fwd(Fwd {
                name: n,
                union: kflag,
            }),
            8 => Type::Typedef(Named {
                name: n,
                ty: TypeId(size_type),
            }),
            9 => Type::Volatile(TypeId(size_type)),
            10 => Type::Const(TypeId(size_type)),
            11 => Type::Restrict(TypeId(size_type)),
            12 => Type::Func(Object {
                name: n,
                ty: TypeId(size_type),
                linkage: linkage(vlen as u32),
            }),
            13 => {
                let mut params = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    params.push(Param {
                        name: name(u32_at(types_bytes, p)),
                        ty: TypeId(u32_at(types_bytes, p + 4)),
                    });
                    p += 8;
                }
                Type::FuncProto(FuncProto {
                    ret: TypeId(size_type),
                    params,
                })
            }
            14 => {
                let l = u32_at(types_bytes, p);
                p += 4;
                Type::Var(Object {
                    name: n,
                    ty: TypeId(size_type),
                    linkage: linkage(l),
                })
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
                Type::Datasec(Datasec {
                    name: n,
                    size: size_type,
                    vars,
                })
            }
            16 => Type::Float(Float {
                name: n,
                size: size_type,
            }),
            17 => {
                let idx = u32_at(types_bytes, p) as i32;
                p += 4;
                Type::DeclTag(DeclTag {
                    name: n,
                    ty: TypeId(size_type),
                    component_idx: idx,
                })
            }
            18 => Type::TypeTag(Named {
                name: n,
                ty: TypeId(size_type),
            }),
            k => panic!("unknown BTF kind {k}"),
        };
        types.push(t);
    }
    (
        Btf {
            types,
            base_type_count,
            base_str_len,
        },
        strs,
    )
}

/// Serializes `btf` as little-endian raw BTF. For split BTF, string
/// offsets continue after `btf.base_str_len` and every name is stored
/// locally (libbpf's dedup moves shared names to the base's offsets).
pub(super) fn write(btf: &Btf<'_>) -> Vec<u8> {
    write_on(btf, btf.base_str_len)
}

/// [`write`] with string offsets starting at `base`.
fn write_on(btf: &Btf<'_>, base: u32) -> Vec<u8> {
    let mut strs: Vec<u8> = vec![0];
    let mut offsets: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut s = |name: &str| -> u32 {
        if name.is_empty() {
            return 0;
        }
        if let Some(&o) = offsets.get(name) {
            return o;
        }
        let o = base + strs.len() as u32;
        strs.extend_from_slice(name.as_bytes());
        strs.push(0);
        offsets.insert(name.to_string(), o);
        o
    };
    let mut out: Vec<u8> = Vec::new();
    let w = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let linkage = |l: Linkage| match l {
        Linkage::Static => 0,
        Linkage::Global => 1,
        Linkage::Extern => 2,
    };
    for t in &btf.types {
        let info = super::view::info(Some(t));
        let name = s(super::view::name(Some(t)));
        w(&mut out, name);
        w(&mut out, info);
        w(&mut out, super::view::size_or_type(Some(t)));
        match t {
            Type::Int(x) => w(
                &mut out,
                (x.encoding.0 as u32) << 24 | (x.offset as u32) << 16 | x.bits as u32,
            ),
            Type::Array(a) => {
                w(&mut out, a.elem.0);
                w(&mut out, a.index.0);
                w(&mut out, a.nelems);
            }
            Type::Struct(c) | Type::Union(c) => {
                for m in &c.members {
                    let n = s(m.name);
                    w(&mut out, n);
                    w(&mut out, m.ty.0);
                    let off = if c.kind_flag {
                        (m.bitfield_size as u32) << 24 | m.bit_offset
                    } else {
                        m.bit_offset
                    };
                    w(&mut out, off);
                }
            }
            Type::Enum(e) => {
                for v in &e.values {
                    let n = s(v.name);
                    w(&mut out, n);
                    w(&mut out, v.value as u32);
                }
            }
            Type::Enum64(e) => {
                for v in &e.values {
                    let n = s(v.name);
                    w(&mut out, n);
                    w(&mut out, v.value as u32);
                    w(&mut out, (v.value >> 32) as u32);
                }
            }
            Type::FuncProto(p) => {
                for param in &p.params {
                    let n = s(param.name);
                    w(&mut out, n);
                    w(&mut out, param.ty.0);
                }
            }
            Type::Var(v) => w(&mut out, linkage(v.linkage)),
            Type::Datasec(d) => {
                for v in &d.vars {
                    w(&mut out, v.ty.0);
                    w(&mut out, v.offset);
                    w(&mut out, v.size);
                }
            }
            Type::DeclTag(d) => w(&mut out, d.component_idx as u32),
            _ => {}
        }
    }
    let mut blob = Vec::new();
    blob.extend_from_slice(&0xeb9fu16.to_le_bytes());
    blob.push(1);
    blob.push(0);
    for v in [
        24u32,
        0,
        out.len() as u32,
        out.len() as u32,
        strs.len() as u32,
    ] {
        blob.extend_from_slice(&v.to_le_bytes());
    }
    blob.extend_from_slice(&out);
    blob.extend_from_slice(&strs);
    blob
}

/// The C source of a tiny oracle: libbpf's own `btf__dedup` on a raw
/// BTF file (optionally split on a raw base), written back raw.
const ORACLE_C: &str = r#"
#include <bpf/btf.h>
#include <stdio.h>
int main(int argc, char **argv) {
    struct btf *base = NULL, *btf;
    const void *data;
    __u32 size;
    FILE *f;
    int err;
    if (argc > 3) {
        base = btf__parse_raw(argv[3]);
        if (!base) return 2;
    }
    btf = base ? btf__parse_raw_split(argv[1], base) : btf__parse_raw(argv[1]);
    if (!btf) return 3;
    err = btf__dedup(btf, NULL);
    if (err) { fprintf(stderr, "btf__dedup: %d\n", err); return 4; }
    data = btf__raw_data(btf, &size);
    f = fopen(argv[2], "wb");
    if (!f || fwrite(data, 1, size, f) != size) return 5;
    fclose(f);
    return 0;
}
"#;

/// Builds the oracle against the system libbpf (1.1 on this machine, the
/// one pahole 1.24 uses); `None` when gcc or libbpf is missing.
pub(super) fn oracle() -> Option<std::path::PathBuf> {
    use std::sync::OnceLock;
    static ORACLE: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    ORACLE
        .get_or_init(|| {
            let dir =
                std::env::temp_dir().join(format!("btfenc-dedup-oracle-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let src = dir.join("oracle.c");
            let exe = dir.join("oracle");
            std::fs::write(&src, ORACLE_C).ok()?;
            let ok = std::process::Command::new("gcc")
                .arg("-O1")
                .arg("-o")
                .arg(&exe)
                .arg(&src)
                .arg("-lbpf")
                .status()
                .ok()?
                .success();
            ok.then_some(exe)
        })
        .clone()
}

/// What the oracle produced: the deduplicated raw BTF and the raw base it
/// was split on.
pub(super) struct OracleOutput {
    pub(super) deduped: Vec<u8>,
    pub(super) base: Option<Vec<u8>>,
}

/// Runs libbpf's dedup on `btf` (split on `base` if given); `None` when
/// the oracle is unavailable, `Err(exit status)` when libbpf failed.
pub(super) fn libbpf_dedup(
    btf: &Btf<'_>,
    base: Option<&Btf<'_>>,
) -> Option<Result<OracleOutput, i32>> {
    let exe = oracle()?;
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = exe.parent()?.to_path_buf();
    let input = dir.join(format!("in{n}.btf"));
    let output = dir.join(format!("out{n}.btf"));
    let mut cmd = std::process::Command::new(&exe);
    cmd.arg(&input).arg(&output);
    let mut base_blob = None;
    let mut base_str_len = 0;
    if let Some(base) = base {
        let blob = write(base);
        base_str_len = u32_at(&blob, 20);
        let base_path = dir.join(format!("base{n}.btf"));
        std::fs::write(&base_path, &blob).ok()?;
        cmd.arg(&base_path);
        base_blob = Some(blob);
    }
    std::fs::write(&input, write_on(btf, base_str_len)).ok()?;
    let status = cmd.status().ok()?;
    let result = if status.success() {
        std::fs::read(&output)
            .map(|deduped| OracleOutput {
                deduped,
                base: base_blob,
            })
            .map_err(|_| -1)
    } else {
        Err(status.code().unwrap_or(-1))
    };
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&output);
    Some(result)
}
