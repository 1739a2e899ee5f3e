//! Synthetic per-CU BTF cut from a real, deduplicated BTF: each "CU" is the
//! closure of a few random roots in which structs reached only through a
//! pointer are, at random, just declared (FWD), the type order is
//! sometimes shuffled, and pointers are sometimes duplicated within the CU
//! (as compilers occasionally do). Concatenated, these look like what the
//! lowering hands to dedup, with all the FWD resolution, ambiguity and
//! ordering effects that real CUs have.

use std::collections::HashMap;

use crate::types::*;

/// A small deterministic PRNG (xorshift64*).
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// How unlike a tidy CU the synthetic CUs are.
#[derive(Clone, Copy, Debug)]
pub(super) struct Quirks {
    /// Chance that a CU lists its types in random order.
    pub(super) shuffle_percent: u64,
    /// Chance that a struct member's pointer is a duplicate PTR record.
    pub(super) duplicate_ptr_percent: u64,
}

/// One CU built from `src` around `roots`.
fn cut<'a>(
    src: &Btf<'a>,
    roots: &[u32],
    rng: &mut Rng,
    fwd_percent: u64,
    quirks: Quirks,
) -> Vec<Type<'a>> {
    let get = |id: u32| id.checked_sub(1).and_then(|i| src.types.get(i as usize));
    let mut full: Vec<u32> = Vec::new();
    let mut included: HashMap<u32, ()> = HashMap::new();
    let mut declared: HashMap<u32, ()> = HashMap::new();
    let mut queue: Vec<u32> = roots.to_vec();
    let mut weak: Vec<u32> = Vec::new();
    loop {
        while let Some(id) = queue.pop() {
            if id == 0 || included.contains_key(&id) {
                continue;
            }
            let Some(t) = get(id) else { continue };
            included.insert(id, ());
            declared.remove(&id);
            full.push(id);
            let via_ptr = matches!(t, Type::Ptr(_));
            t.for_each_ref(|TypeId(r)| {
                let named_aggregate = matches!(
                    get(r),
                    Some(Type::Struct(c) | Type::Union(c)) if !c.name.is_empty()
                );
                if via_ptr && named_aggregate {
                    weak.push(r);
                } else {
                    queue.push(r);
                }
            });
        }
        // Pointer-only aggregates: define some, declare the others.
        let mut progressed = false;
        for r in std::mem::take(&mut weak) {
            if included.contains_key(&r) || declared.contains_key(&r) {
                continue;
            }
            if rng.chance(fwd_percent) {
                declared.insert(r, ());
            } else {
                queue.push(r);
                progressed = true;
            }
        }
        if !progressed && queue.is_empty() {
            break;
        }
    }
    let mut ids: Vec<u32> = full.into_iter().chain(declared.keys().copied()).collect();
    ids.sort_unstable();
    if rng.chance(quirks.shuffle_percent) {
        for i in (1..ids.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            ids.swap(i, j);
        }
    }
    // Local ids start at 1; duplicated pointers go at the end.
    let mut local: HashMap<u32, u32> = HashMap::new();
    for (i, &id) in ids.iter().enumerate() {
        local.insert(id, i as u32 + 1);
    }
    let mut types: Vec<Type<'a>> = ids
        .iter()
        .map(|&id| match get(id) {
            Some(Type::Struct(c) | Type::Union(c)) if declared.contains_key(&id) => {
                Type::Fwd(Fwd {
                    name: c.name,
                    union: matches!(get(id), Some(Type::Union(_))),
                })
            }
            Some(t) => t.clone(),
            None => Type::Int(Int {
                name: "?",
                size: 0,
                encoding: IntEncoding(0),
                offset: 0,
                bits: 0,
            }),
        })
        .collect();
    for t in &mut types {
        let _ = t.remap_refs(|r| -> Result<TypeId, ()> {
            Ok(TypeId(if r.0 == 0 {
                0
            } else {
                local.get(&r.0).copied().unwrap_or(0)
            }))
        });
    }
    // Within-CU duplicate pointers for some struct members.
    let count = types.len();
    let mut extra = Vec::new();
    for i in 0..count {
        let Type::Struct(c) = &types[i] else { continue };
        let mut c = c.clone();
        let mut changed = false;
        for m in &mut c.members {
            let target = m.ty.0.checked_sub(1).and_then(|j| types.get(j as usize));
            if matches!(target, Some(Type::Ptr(_))) && rng.chance(quirks.duplicate_ptr_percent) {
                if let Some(p) = target.cloned() {
                    extra.push(p);
                    m.ty = TypeId((count + extra.len()) as u32);
                    changed = true;
                }
            }
        }
        if changed {
            types[i] = Type::Struct(c);
        }
    }
    types.extend(extra);
    types
}

/// `cus` CUs cut from `src`, concatenated with ids shifted.
pub(super) fn concatenated_cus<'a>(
    src: &Btf<'a>,
    seed: u64,
    cus: usize,
    roots_per_cu: usize,
    quirks: Quirks,
) -> Btf<'a> {
    let mut rng = Rng::new(seed);
    let n = src.types.len() as u64;
    let mut all: Vec<Type<'a>> = Vec::new();
    for _ in 0..cus {
        let roots: Vec<u32> = (0..roots_per_cu).map(|_| rng.below(n) as u32 + 1).collect();
        let fwd_percent = rng.below(80);
        let cu = cut(src, &roots, &mut rng, fwd_percent, quirks);
        let shift = all.len() as u32;
        for mut t in cu {
            let _ = t.remap_refs(|r| -> Result<TypeId, ()> {
                Ok(if r.0 == 0 { r } else { TypeId(r.0 + shift) })
            });
            all.push(t);
        }
    }
    Btf {
        types: all,
        base_type_count: 0,
        base_str_len: 0,
    }
}
