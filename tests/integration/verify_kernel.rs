//! `btfenc verify` against the judge it imitates: for at least 1,000
//! deterministically mutated BTF blobs, its verdict must equal the running
//! kernel's `BPF_BTF_LOAD` verdict, every time.
//!
//! The blobs come from a fixture's BTF (always) and, when the reference
//! files are there, Debian 6.1's vmlinux BTF and a module's split BTF
//! joined with it into one blob (the kernel takes no base with
//! `BPF_BTF_LOAD`, so a split is seen as one BTF with the base's types
//! first). The mutations hit header fields, type info words, sizes and
//! referenced ids, name offsets, member/param/enumerator words, string
//! bytes, vlen and the blob's length, so that blobs are rejected for many
//! different reasons and some are still accepted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use btfenc_tests::{
    btfenc, encode_detached, fixture, kernel_accepts_btf, kernel_load_btf, report_skip, Encoder,
    LoadResult,
};

use btfenc_tests::rng::Rng;

use crate::fixtures::{read, scratch};

const SEED: u64 = 0x6274_6665_6e63_0015;
/// The Debian 6.1 reference outputs (`$BTFENC_REFERENCE`, else
/// `../shared/reference` beside the workspace).
fn reference() -> PathBuf {
    btfenc_tests::reference_root().join("debian-6.1.0-56-cloud-amd64")
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn put(b: &mut [u8], at: usize, v: u32) {
    if let Some(w) = b.get_mut(at..at + 4) {
        w.copy_from_slice(&v.to_le_bytes());
    }
}

/// Where a little-endian blob's sections are, from Documentation/bpf/btf.rst.
struct Layout {
    hdr_len: usize,
    types: std::ops::Range<usize>,
    strings: std::ops::Range<usize>,
}

fn layout(b: &[u8]) -> Layout {
    let hdr_len = u32_at(b, 4) as usize;
    let at = |off: usize, len: usize| {
        let start = hdr_len + u32_at(b, off) as usize;
        start..start + u32_at(b, len) as usize
    };
    Layout {
        hdr_len,
        types: at(8, 12),
        strings: at(16, 20),
    }
}

/// A type record: where it starts and the number of 4-byte words after
/// the 12-byte head (btf.rst section 2.2).
struct Record {
    at: usize,
    words: usize,
}

fn records(b: &[u8]) -> Vec<Record> {
    let l = layout(b);
    let mut out = Vec::new();
    let mut at = l.types.start;
    while at + 12 <= l.types.end {
        let info = u32_at(b, at + 4);
        let (kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
        let words = match kind {
            1 | 14 | 17 => 1,
            3 => 3,
            4 | 5 | 15 | 19 => 3 * vlen,
            6 | 13 => 2 * vlen,
            _ => 0,
        };
        out.push(Record { at, words });
        at += 12 + 4 * words;
    }
    out
}

/// One mutation of `blob`, chosen by `rng`; returns what it did.
fn mutate(blob: &mut Vec<u8>, rng: &mut Rng, recs: &[Record], nr_types: u32) -> &'static str {
    let l = layout(blob);
    let str_len = l.strings.len() as u32;
    let rec = &recs[rng.below(recs.len())];
    let random_id = |rng: &mut Rng| match rng.below(5) {
        0 => 0,
        1 => nr_types + rng.below(3) as u32,
        2 => rng.below(nr_types as usize + 1) as u32,
        3 => 0x000f_ffff + rng.below(2) as u32,
        _ => rng.next_u64() as u32,
    };
    let small_change = |rng: &mut Rng, v: u32| match rng.below(6) {
        0 => v.wrapping_add(1),
        1 => v.wrapping_sub(1),
        2 => v ^ (1 << rng.below(32)),
        3 => v.wrapping_add(8 * (1 + rng.below(64) as u32)),
        4 => 0,
        _ => rng.next_u64() as u32,
    };
    match rng.below(12) {
        0 => {
            // a header field (magic, version, flags, hdr_len, offsets, lengths)
            let at = 4 * rng.below(l.hdr_len.min(32) / 4);
            if at == 0 {
                let byte = rng.below(4);
                blob[byte] ^= 1 << rng.below(8);
            } else {
                let v = small_change(rng, u32_at(blob, at));
                put(blob, at, v);
            }
            "header"
        }
        1 => {
            // the kind bits of info
            let info = u32_at(blob, rec.at + 4);
            put(
                blob,
                rec.at + 4,
                (info & !(0x1f << 24)) | ((rng.below(32) as u32) << 24),
            );
            "info.kind"
        }
        2 => {
            // kind_flag or one of the reserved bits
            let info = u32_at(blob, rec.at + 4);
            let bit = [31, 30, 29, 16, 20, 23][rng.below(6)];
            put(blob, rec.at + 4, info ^ (1 << bit));
            "info.flag"
        }
        3 => {
            // vlen
            let info = u32_at(blob, rec.at + 4);
            let vlen = info & 0xffff;
            let new = if rng.below(2) == 0 {
                vlen.wrapping_add(1)
            } else {
                vlen.wrapping_sub(1)
            } & 0xffff;
            put(blob, rec.at + 4, (info & !0xffff) | new);
            "info.vlen"
        }
        4 => {
            // size, or the referenced type id
            let v = u32_at(blob, rec.at + 8);
            let new = if rng.below(2) == 0 {
                random_id(rng)
            } else {
                small_change(rng, v)
            };
            put(blob, rec.at + 8, new);
            "size_or_type"
        }
        5 => {
            // name offset
            let new = match rng.below(5) {
                0 => 0,
                1 => str_len + rng.below(4) as u32,
                2 => str_len.saturating_sub(1 + rng.below(2) as u32),
                3 => 0x0100_0000,
                _ => rng.below(str_len as usize) as u32,
            };
            put(blob, rec.at, new);
            "name_off"
        }
        6 | 7 => {
            // a member / parameter / enumerator / array / var / secinfo word
            let with_words: Vec<&Record> = recs.iter().filter(|r| r.words > 0).collect();
            let Some(rec) = with_words.get(rng.below(with_words.len())) else {
                return "none";
            };
            let at = rec.at + 12 + 4 * rng.below(rec.words);
            let v = u32_at(blob, at);
            let new = match rng.below(3) {
                0 => random_id(rng),
                1 => rng.below(str_len as usize + 2) as u32,
                _ => small_change(rng, v),
            };
            put(blob, at, new);
            "trailing"
        }
        8 => {
            // a self or near reference: loops and bad targets
            // ids start at 1 in every blob here
            let id = recs.iter().position(|r| r.at == rec.at).unwrap_or(0) as u32 + 1;
            let target = id.wrapping_add(rng.below(3) as u32).wrapping_sub(1);
            let at = if rec.words > 0 && rng.below(2) == 0 {
                rec.at + 12 + 4 * rng.below(rec.words)
            } else {
                rec.at + 8
            };
            put(blob, at, target);
            "self_reference"
        }
        9 | 10 => {
            // a byte of the string section
            if l.strings.is_empty() {
                return "none";
            }
            let at = l.strings.start + rng.below(l.strings.len());
            let byte = [0u8, b'-', b' ', 0xe9, 0xc3, 0x80, b'9', b'.', b'a', 0x7f][rng.below(10)];
            if let Some(b) = blob.get_mut(at) {
                *b = byte;
            }
            "string_byte"
        }
        _ => {
            // the blob's length
            if rng.below(2) == 0 {
                let cut = 1 + rng.below(8);
                blob.truncate(blob.len().saturating_sub(cut));
            } else {
                let extra = 1 + rng.below(8);
                blob.resize(blob.len() + extra, 0);
            }
            "length"
        }
    }
}

/// One blob from a split and its base: the base's types then the split's,
/// the base's strings then the split's, under a 24-byte header.
fn join(base: &[u8], split: &[u8]) -> Vec<u8> {
    let (b, s) = (layout(base), layout(split));
    let type_len = b.types.len() + s.types.len();
    let str_len = b.strings.len() + s.strings.len();
    let mut out = vec![0x9f, 0xeb, 1, 0];
    for v in [24, 0, type_len, type_len, str_len] {
        out.extend_from_slice(&(v as u32).to_le_bytes());
    }
    out.extend_from_slice(&base[b.types]);
    out.extend_from_slice(&split[s.types]);
    out.extend_from_slice(&base[b.strings]);
    out.extend_from_slice(&split[s.strings]);
    out
}

struct Source {
    name: String,
    blob: Vec<u8>,
    count: usize,
}

fn sources(dir: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    for (name, fixture_path, count) in [
        ("fixture multi-cu gcc", "obj/multi-cu/gcc-dwarf5.o", 400),
        ("fixture bpfel tags", "obj/bpf/tags-bpfel.o", 300),
    ] {
        let file = dir.join(format!("{}.btf", out.len()));
        let features = concat!("--btf_features=", kernel_features!());
        encode_detached(Encoder::Btfenc, &fixture(fixture_path), &file, &[features])
            .assert_success();
        out.push(Source {
            name: name.to_string(),
            blob: read(&file),
            count,
        });
    }
    let reference = reference();
    let vmlinux = reference.join("vmlinux.btf");
    let module = reference.join("modules/tcp_bbr.btf");
    if vmlinux.exists() && module.exists() {
        let base = read(&vmlinux);
        let split = read(&module);
        out.push(Source {
            name: "vmlinux (Debian 6.1)".to_string(),
            blob: base.clone(),
            count: 170,
        });
        out.push(Source {
            name: "tcp_bbr + vmlinux joined".to_string(),
            blob: join(&base, &split),
            count: 130,
        });
    } else {
        report_skip(
            "verify_kernel vmlinux mutants",
            &format!(
                "{} is not here; only fixture BTF is mutated",
                reference.display()
            ),
        );
        // Still at least 1,000 blobs.
        for s in &mut out {
            s.count += 150;
        }
    }
    out
}

/// `btfenc verify` on many files at once: the set of files it rejected,
/// and for each its first line.
fn verify_batch(files: &[PathBuf]) -> BTreeMap<String, String> {
    let args: Vec<&std::ffi::OsStr> = std::iter::once(std::ffi::OsStr::new("verify"))
        .chain(files.iter().map(|f| f.as_os_str()))
        .collect();
    let run = btfenc(&args);
    let code = run.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "btfenc verify failed on mutants\n{}",
        run.describe()
    );
    let mut rejected = BTreeMap::new();
    for line in run.stdout_text().lines() {
        if let Some((file, rest)) = line.split_once(": ") {
            rejected
                .entry(file.to_string())
                .or_insert_with(|| rest.to_string());
        }
    }
    rejected
}

#[derive(Default)]
struct Tally {
    n: usize,
    kernel_ok: usize,
    verify_ok: usize,
    disagree: usize,
}

#[test]
fn verify_agrees_with_the_kernel_on_mutated_btf() {
    let dir = scratch();
    let srcs = sources(dir.path());
    for s in &srcs {
        match kernel_load_btf(&s.blob) {
            LoadResult::Loaded => {}
            LoadResult::Skipped(reason) => {
                report_skip("verify_agrees_with_the_kernel_on_mutated_btf", &reason);
                return;
            }
            LoadResult::Rejected { log, .. } => {
                panic!("the kernel rejects the unmutated {}: {log}", s.name)
            }
        }
    }
    let mut rng = Rng(SEED);
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut rules: BTreeMap<String, usize> = BTreeMap::new();
    let mut disagreements = Vec::new();
    let mut total = 0;
    for s in &srcs {
        let recs = records(&s.blob);
        let nr_types = recs.len() as u32 + 1;
        // Big blobs go through in chunks, to keep the scratch space small.
        let chunk = if s.blob.len() > 1 << 20 { 25 } else { s.count };
        let mut done = 0;
        while done < s.count {
            let n = chunk.min(s.count - done);
            let mut batch = Vec::new();
            for i in 0..n {
                let mut blob = s.blob.clone();
                let mut what = Vec::new();
                // Mostly one mutation, sometimes two or three.
                for _ in 0..[1, 1, 1, 2, 3][rng.below(5)] {
                    what.push(mutate(&mut blob, &mut rng, &recs, nr_types));
                }
                let path = dir.path().join(format!("m{}.btf", done + i));
                std::fs::write(&path, &blob).expect("writing a mutant");
                batch.push((path, blob, what));
            }
            let paths: Vec<PathBuf> = batch.iter().map(|(p, _, _)| p.clone()).collect();
            let rejected = verify_batch(&paths);
            for (path, blob, what) in batch {
                let key = path.display().to_string();
                let ours = rejected.get(&key);
                let kernel_ok = match kernel_accepts_btf(&blob) {
                    Ok(verdict) => verdict,
                    Err(reason) => panic!("kernel check stopped working: {reason}"),
                };
                let t = tallies.entry(s.name.clone()).or_default();
                t.n += 1;
                total += 1;
                t.kernel_ok += usize::from(kernel_ok);
                t.verify_ok += usize::from(ours.is_none());
                if let Some(line) = ours {
                    let rule = line
                        .rsplit_once('(')
                        .map_or("?", |(_, r)| r.trim_end_matches(')'));
                    *rules.entry(rule.to_string()).or_default() += 1;
                }
                if kernel_ok != ours.is_none() {
                    t.disagree += 1;
                    let log = match kernel_load_btf(&blob) {
                        LoadResult::Rejected { log, .. } => {
                            log.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
                        }
                        _ => "accepted".to_string(),
                    };
                    if disagreements.len() < 20 {
                        disagreements.push(format!(
                            "{} #{key} ({what:?}): kernel: {log}; verify: {}",
                            s.name,
                            ours.map_or("accepted", |s| s.as_str())
                        ));
                    }
                    // Keep the mutant for a look afterwards.
                    let keep = std::env::temp_dir().join(format!(
                        "btfenc-verify-disagreement-{}.btf",
                        tallies.values().map(|t| t.disagree).sum::<usize>()
                    ));
                    let _ = std::fs::write(keep, &blob);
                }
                let _ = std::fs::remove_file(&path);
            }
            done += n;
        }
    }
    let mut table = String::from("source: blobs kernel_accepted verify_accepted disagreements\n");
    for (name, t) in &tallies {
        table.push_str(&format!(
            "{name}: {} {} {} {}\n",
            t.n, t.kernel_ok, t.verify_ok, t.disagree
        ));
    }
    table.push_str("rejections by rule:\n");
    for (rule, n) in &rules {
        table.push_str(&format!("  {rule}: {n}\n"));
    }
    eprintln!("{table}");
    assert!(total >= 1000, "only {total} mutants");
    assert!(
        disagreements.is_empty(),
        "btfenc verify disagrees with the kernel:\n{}\n{table}",
        disagreements.join("\n")
    );
}

/// Blobs by hand (btf.rst's layouts) for the rules mutations seldom reach
/// and kernels changed over time: which bytes a name may hold (the
/// kernel's ctype is ISO 8859-1), DATASEC names, kind_flag on tags, FUNC
/// linkage, a 32-byte header. The kernel decides each; verify must agree.
#[test]
fn verify_agrees_with_the_kernel_on_hand_made_edge_cases() {
    fn info(kind: u32, vlen: u32, kflag: u32) -> u32 {
        (kflag << 31) | (kind << 24) | vlen
    }
    fn label_of(what: &str, bytes: &str) -> &'static str {
        Box::leak(format!("{what} {bytes}").into_boxed_str())
    }
    fn blob(words: &[u32], strs: &[u8]) -> Vec<u8> {
        let type_len = (words.len() * 4) as u32;
        let mut out = vec![0x9f, 0xeb, 1, 0];
        for v in [24, 0, type_len, type_len, strs.len() as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(strs);
        out
    }
    let int = [1, info(1, 0, 0), 4, (1 << 24) | 32];
    let with_int = |more: &[u32]| [&int[..], more].concat();
    // "\0int\0" then the name under test at offset 5
    let named = |name: &[u8]| [b"\0int\0".as_slice(), name, b"\0"].concat();
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    for (label, name) in [
        ("struct a.b", b"a.b".as_slice()),
        ("struct latin1", b"caf\xe9"),
        ("struct utf8", "café".as_bytes()),
        ("struct a-b", b"a-b"),
        ("struct 1a", b"1a"),
        ("struct C1 control", b"a\x85"),
    ] {
        cases.push((label, blob(&with_int(&[5, info(4, 0, 0), 4]), &named(name))));
    }
    let long = vec![b'a'; 512];
    let longer = vec![b'a'; 513];
    cases.push((
        "typedef 512 bytes",
        blob(&with_int(&[5, info(8, 0, 0), 1]), &named(&long)),
    ));
    cases.push((
        "typedef 513 bytes",
        blob(&with_int(&[5, info(8, 0, 0), 1]), &named(&longer)),
    ));
    for (label, sec) in [
        ("datasec .data", b".data".as_slice()),
        ("datasec .data-x", b".data-x"),
        ("datasec space", b".data x"),
        ("datasec latin1", b".data\xe9"),
        ("datasec C1 control", b".data\x85"),
        ("datasec tab", b".data\t"),
    ] {
        let strs = [b"\0int\0v\0".as_slice(), sec, b"\0"].concat();
        let words = with_int(&[5, info(14, 0, 0), 1, 1, 7, info(15, 1, 0), 4, 2, 0, 4]);
        cases.push((label, blob(&words, &strs)));
    }
    for (label, kflag, idx) in [
        ("decl_tag", 0, u32::MAX),
        ("decl_tag kflag", 1, u32::MAX),
        ("decl_tag kflag member", 1, 0),
        ("decl_tag member 1 of 1", 0, 1),
        ("decl_tag idx -2", 0, u32::MAX - 1),
    ] {
        let words = with_int(&[5, info(4, 1, 0), 4, 7, 1, 0, 9, info(17, 0, kflag), 2, idx]);
        cases.push((label, blob(&words, b"\0int\0s\0m\0tag\0")));
    }
    for (label, kflag) in [("type_tag", 0), ("type_tag kflag", 1)] {
        let words = with_int(&[5, info(18, 0, kflag), 1, 0, info(2, 0, 0), 2]);
        cases.push((label, blob(&words, b"\0int\0tag\0")));
    }
    for linkage in 0..4 {
        let words = with_int(&[0, info(13, 0, 0), 1, 5, info(12, linkage, 0), 2]);
        cases.push((
            [
                "func static",
                "func global",
                "func extern",
                "func linkage 3",
            ][linkage as usize],
            blob(&words, b"\0int\0f\0"),
        ));
    }
    cases.push((
        "enum kflag",
        blob(&with_int(&[5, info(6, 1, 1), 4, 1, u32::MAX]), &named(b"e")),
    ));
    cases.push((
        "enum size 0",
        blob(&with_int(&[5, info(6, 0, 0), 0]), &named(b"e")),
    ));
    cases.push((
        "float named a-b",
        blob(&with_int(&[5, info(16, 0, 0), 8]), &named(b"a-b")),
    ));
    cases.push((
        "int named a-b",
        blob(&[5, info(1, 0, 0), 4, (1 << 24) | 32], &named(b"a-b")),
    ));
    cases.push((
        "ptr named",
        blob(&with_int(&[5, info(2, 0, 0), 1]), &named(b"p")),
    ));
    // Bytes that are not UTF-8 in every kind of name (issue 15): ISO 8859-1
    // letters, a C1 control byte, and the names the kernel does not check.
    for (label, name) in [("latin1", b"\xe9t\xe9".as_slice()), ("C1", b"a\x85")] {
        let strs = [b"\0int\0s\0".as_slice(), name, b"\0"].concat();
        let member = with_int(&[5, info(4, 1, 0), 4, 7, 1, 0]);
        cases.push((label_of("member", label), blob(&member, &strs)));
        let enumerator = with_int(&[5, info(6, 1, 0), 4, 7, 1]);
        cases.push((label_of("enumerator", label), blob(&enumerator, &strs)));
        let param = with_int(&[0, info(13, 1, 0), 1, 7, 1]);
        cases.push((label_of("param", label), blob(&param, &strs)));
        let func = with_int(&[0, info(13, 0, 0), 1, 7, info(12, 1, 0), 2]);
        cases.push((label_of("func", label), blob(&func, &strs)));
        let var = with_int(&[7, info(14, 0, 0), 1, 1]);
        cases.push((label_of("var", label), blob(&var, &strs)));
        let tag = with_int(&[5, info(4, 1, 0), 4, 5, 1, 0, 7, info(17, 0, 0), 2, u32::MAX]);
        cases.push((label_of("decl_tag value", label), blob(&tag, &strs)));
        let type_tag = with_int(&[7, info(18, 0, 0), 1]);
        cases.push((label_of("type_tag", label), blob(&type_tag, &strs)));
        cases.push((
            label_of("int name", label),
            blob(&[7, info(1, 0, 0), 4, (1 << 24) | 32], &strs),
        ));
        cases.push((
            label_of("float name", label),
            blob(&with_int(&[7, info(16, 0, 0), 8]), &strs),
        ));
        cases.push((
            label_of("fwd", label),
            blob(&with_int(&[7, info(7, 0, 0), 0]), &strs),
        ));
    }
    let mut header32 = blob(&int, &named(b"x"));
    header32[4] = 32;
    header32.splice(24..24, [0u8; 8]);
    cases.push(("32-byte header, zero tail", header32.clone()));
    header32[28] = 1;
    cases.push(("32-byte header, layout_len 1", header32));

    let dir = scratch();
    let files: Vec<PathBuf> = cases
        .iter()
        .enumerate()
        .map(|(i, (_, b))| {
            let path = dir.path().join(format!("case{i}.btf"));
            std::fs::write(&path, b).expect("writing a case");
            path
        })
        .collect();
    let rejected = verify_batch(&files);
    let mut wrong = Vec::new();
    for ((label, b), path) in cases.iter().zip(&files) {
        let kernel_ok = match kernel_accepts_btf(b) {
            Ok(v) => v,
            Err(reason) => {
                report_skip(
                    "verify_agrees_with_the_kernel_on_hand_made_edge_cases",
                    &reason,
                );
                return;
            }
        };
        let ours = rejected.get(&path.display().to_string());
        if kernel_ok != ours.is_none() {
            wrong.push(format!(
                "{label}: kernel accepts: {kernel_ok}; verify: {ours:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "verify disagrees with the kernel:\n{}",
        wrong.join("\n")
    );
}

/// A base the kernel would refuse (here: a FUNC with extern linkage, which
/// btfenc's reader takes but `btf_func_check_meta` does not) is refused as
/// `--btf_base` and as `relocate`'s base: one line naming it, no output.
#[test]
fn a_base_the_kernel_rejects_is_refused() {
    let dir = scratch();
    let good = dir.path().join("base.btf");
    let features = concat!("--btf_features=", kernel_features!());
    let object = fixture("obj/multi-cu/gcc-dwarf5.o");
    encode_detached(Encoder::Btfenc, &object, &good, &[features]).assert_success();
    let mut blob = read(&good);
    let func = records(&blob)
        .into_iter()
        .find(|r| (u32_at(&blob, r.at + 4) >> 24) & 0x1f == 12)
        .expect("the fixture has a FUNC");
    let info = u32_at(&blob, func.at + 4);
    put(&mut blob, func.at + 4, (info & !0xffff) | 2);
    let bad = dir.path().join("bad-base.btf");
    std::fs::write(&bad, &blob).expect("writing the bad base");
    let bad_name = bad.display().to_string();

    let out = dir.path().join("split.btf");
    let base_arg = format!("--btf_base={bad_name}");
    let run = encode_detached(Encoder::Btfenc, &object, &out, &[features, &base_arg]);
    btfenc_tests::assert_clean_failure(&run, &bad_name);
    assert!(
        run.stderr.contains("Invalid func linkage"),
        "{}",
        run.describe()
    );
    assert!(!out.exists(), "an output was written on a bad base");

    // verify says the same, on the raw file
    let run = btfenc(&["verify", &bad_name]);
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert!(run.stdout_text().contains("FUNC"), "{}", run.describe());
}

/// With one input file, only the base types the split refers to are
/// resolved as the kernel would (a kernel build runs a process per module,
/// on a vmlinux BTF the kernel resolved when it booted); a batch resolves
/// all of the base once. A base with two typedefs naming each other that
/// nothing refers to ("Loop detected" to the kernel and `verify`) takes
/// one module, which the kernel loads joined with the base without them,
/// and refuses a batch, naming the base.
#[test]
fn a_base_is_resolved_as_far_as_one_split_reaches() {
    let dir = scratch();
    let good = dir.path().join("base.btf");
    let features = concat!("--btf_features=", kernel_features!());
    let object = fixture("obj/multi-cu/gcc-dwarf5.o");
    encode_detached(Encoder::Btfenc, &object, &good, &[features]).assert_success();
    let good_blob = read(&good);
    let l = layout(&good_blob);
    assert_eq!(l.hdr_len, 24);
    let count = records(&good_blob).len() as u32;
    // The first name that is an identifier.
    let strings = &good_blob[l.strings.clone()];
    let name_off = strings
        .split(|&b| b == 0)
        .scan(0usize, |at, piece| {
            let here = *at;
            *at += piece.len() + 1;
            Some((here, piece))
        })
        .find(|(_, piece)| {
            piece.first().is_some_and(u8::is_ascii_alphabetic)
                && piece
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .map(|(at, _)| at as u32)
        .expect("an identifier among the base's names");
    // [count + 1] typedef -> [count + 2], [count + 2] typedef -> [count + 1].
    let typedef = |target: u32| [name_off, 8 << 24, target];
    let mut blob = good_blob[..l.types.end].to_vec();
    for word in typedef(count + 2).into_iter().chain(typedef(count + 1)) {
        blob.extend_from_slice(&word.to_le_bytes());
    }
    blob.extend_from_slice(strings);
    let type_len = u32_at(&blob, 12);
    put(&mut blob, 12, type_len + 24);
    let str_off = u32_at(&blob, 16);
    put(&mut blob, 16, str_off + 24);
    let bad = dir.path().join("looping-base.btf");
    std::fs::write(&bad, &blob).expect("writing the base");
    let bad_name = bad.display().to_string();
    let run = btfenc(&["verify", &bad_name]);
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert!(
        run.stdout_text().contains("Loop detected"),
        "{}",
        run.describe()
    );

    let base_arg = format!("--btf_base={bad_name}");
    let module = fixture("obj/gcc-dwarf5/structs.o");
    let split = dir.path().join("split.btf");
    encode_detached(Encoder::Btfenc, &module, &split, &[features, &base_arg]).assert_success();
    // What the split refers to is in the good base too, with the same ids.
    let joined = join(&good_blob, &read(&split));
    match kernel_accepts_btf(&joined) {
        Ok(accepted) => assert!(accepted, "{:?}", kernel_load_btf(&joined)),
        Err(reason) => report_skip("a_base_is_resolved_as_far_as_one_split_reaches", &reason),
    }

    let outputs = dir.path().join("batch");
    std::fs::create_dir(&outputs).expect("an output directory");
    let outputs_arg = format!("--btf_encode_detached={}", outputs.display());
    let run = btfenc(&[
        "-J",
        features,
        &base_arg,
        &outputs_arg,
        &module.display().to_string(),
        &fixture("obj/gcc-dwarf5/kinds.o").display().to_string(),
    ]);
    btfenc_tests::assert_clean_failure(&run, &bad_name);
    assert!(run.stderr.contains("Loop detected"), "{}", run.describe());
}

/// A base whose names are not UTF-8 but that the kernel loads (issue 15:
/// the reader used to refuse it): every name of four bytes or more ending
/// in a lowercase ASCII letter gets an ISO 8859-1 'é' (0xe9, a letter to
/// the kernel's ctype) instead. The kernel and `verify` accept it, and
/// btfenc reads it as they do: `dump`, a module encoded split on it (which
/// the kernel loads joined with it), `dedup` and a distilled pair relocated
/// onto it, each keeping the names' bytes.
#[test]
fn names_that_are_not_utf8_read_as_the_kernel_reads_them() {
    let dir = scratch();
    let good = dir.path().join("base.btf");
    let object = fixture("obj/multi-cu/gcc-dwarf5.o");
    encode_detached(Encoder::Btfenc, &object, &good, &[]).assert_success();
    let mut blob = read(&good);
    let strings = layout(&blob).strings;
    let mut at = strings.start;
    let mut changed = 0;
    while at < strings.end {
        let len = blob[at..strings.end].iter().position(|&b| b == 0).unwrap();
        if len >= 4 && blob[at + len - 1].is_ascii_lowercase() {
            blob[at + len - 1] = 0xe9;
            changed += 1;
        }
        at += len + 1;
    }
    assert!(changed > 10, "only {changed} names changed");
    assert!(std::str::from_utf8(&blob[strings]).is_err());
    let base = dir.path().join("latin1-base.btf");
    std::fs::write(&base, &blob).expect("writing the base");
    let base_name = base.display().to_string();
    match kernel_accepts_btf(&blob) {
        Ok(true) => {}
        Ok(false) => panic!("the kernel rejects the base: {:?}", kernel_load_btf(&blob)),
        Err(reason) => {
            report_skip(
                "names_that_are_not_utf8_read_as_the_kernel_reads_them",
                &reason,
            );
            return;
        }
    }
    let run = btfenc(&["verify", &base_name]);
    assert!(run.success() && run.stdout.is_empty(), "{}", run.describe());

    let dump = btfenc(&["dump", &base_name]);
    assert!(
        dump.success() && dump.stderr.is_empty(),
        "{}",
        dump.describe()
    );
    assert!(
        dump.stdout_text().contains('\u{fffd}'),
        "{}",
        dump.describe()
    );

    let module = fixture("obj/gcc-dwarf5/structs.o");
    let split = dir.path().join("split.btf");
    let base_arg = format!("--btf_base={base_name}");
    encode_detached(Encoder::Btfenc, &module, &split, &[&base_arg]).assert_success();
    let joined = join(&blob, &read(&split));
    assert_eq!(kernel_load_btf(&joined), LoadResult::Loaded);

    let deduped = dir.path().join("dedup.btf");
    let run = btfenc(&["dedup", &base_name, "-o", &deduped.display().to_string()]);
    assert!(run.success(), "{}", run.describe());
    let deduped = read(&deduped);
    assert!(deduped.windows(2).any(|w| w[0] == 0xe9 && w[1] == 0));
    assert_eq!(kernel_load_btf(&deduped), LoadResult::Loaded);

    let pair = dir.path().join("pair.btf");
    let distilled = concat!("--btf_features=", kernel_features!(), ",distilled_base");
    encode_detached(Encoder::Btfenc, &module, &pair, &[&base_arg, distilled]).assert_success();
    let moved = dir.path().join("moved.btf");
    let run = btfenc(&[
        "relocate",
        &pair.display().to_string(),
        "--distilled-base",
        &format!("{}.base", pair.display()),
        "--base",
        &base_name,
        "-o",
        &moved.display().to_string(),
    ]);
    assert!(run.success(), "{}", run.describe());
    assert_eq!(
        kernel_load_btf(&join(&blob, &read(&moved))),
        LoadResult::Loaded
    );
}
