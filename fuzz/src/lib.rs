//! What each fuzz target runs on its input, and what it requires of the
//! result. A panic (libFuzzer reports it as a crash), a run past
//! libFuzzer's `-timeout` (a hang) or past its `-rss_limit_mb` (OOM) is a
//! finding; so is any of the properties below failing (it panics with
//! what failed):
//!
//! - `elf_dwarf`: ELF + DWARF bytes encoded as `btfenc -J` would, in one of
//!   four modes picked by the input's length (standalone with the kernel's
//!   `--btf_features` list; split on a fixed base; standalone with 1.24's
//!   legacy flags; split with a distilled base). Encoded BTF must pass the
//!   kernel's checks (`btf::validate`) and read back.
//! - `btf_read`: a raw BTF blob, or an ELF carrying `.BTF` (and
//!   `.BTF.base`), read; what reads is dumped (raw and C), written back,
//!   and must read back as the same types.
//! - `btf_read_split`: the same for a split on a fixed base.
//! - `validate`: the kernel's checks on a blob, standalone and as a split
//!   on the fixed base; whatever they accept the reader must read; and,
//!   when `bpf(BPF_BTF_LOAD)` is permitted, the verdict must be the running
//!   kernel's (`BTFENC_FUZZ_KERNEL=0` turns that off).
//! - `relocate`: a distilled base followed by its split (the first blob's
//!   header gives its length), moved onto the fixed base as `btfenc
//!   relocate` does (also `--dedup`); unchecked inputs must not panic (the
//!   way `dump` and `diff` read a module), and from inputs the kernel
//!   accepts, the output must pass its checks.
//!
//! Every target runs on libFuzzer's own thread alone (see [`one_thread`]).
//!
//! The fixed base is the BTF of `fixtures/obj/multi-cu/gcc-dwarf5.o`,
//! encoded at start-up as `btfenc -J` does without flags (the seeds of the
//! split targets are encoded on the same bytes: see `seeds.sh`).

use std::io::sink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use btf::encode::{encode, Options as EncodeOptions, SplitOn};
use btf::lower::{Features, LegacyFlags};
use btf::raw::Endian;
use btf::read::{parse_file_with, parse_with, NameArena, Parsed};
use btf::validate::{validate, Checked, Options};
use btfenc_tests::kernel::kernel_accepts_btf;

/// The fixture whose BTF is the base of the split targets.
pub const BASE_FIXTURE: &str = "fixtures/obj/multi-cu/gcc-dwarf5.o";

/// The checks btfenc applies to what it writes and reads.
const AS_WRITTEN: Options = Options::AS_WRITTEN;

/// Makes rayon's global pool this thread alone (`use_current_thread`, one
/// thread): every parallel step then runs inline on libFuzzer's thread.
/// With idle workers, how often they spin before sleeping is timing and
/// they are instrumented too, so runs from one `-seed` would see other
/// coverage and go elsewhere; this way `make fuzz-smoke` replays the same
/// inputs on every machine. (The parallel split points are the same code
/// with one thread: dedup's results do not depend on the thread count.)
fn one_thread() {
    static POOL: OnceLock<()> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build_global()
            .expect("rayon's global pool is built here first");
    });
}

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(relative)
}

/// The fixed base, its parse, its check, and the split bases the encoder
/// builds on it (one per dedup flavour).
struct Base {
    bytes: &'static [u8],
    parsed: &'static Parsed<'static>,
    checked: Checked<'static>,
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let path = repo_path(BASE_FIXTURE);
        let encoded = encode(&path, &EncodeOptions::new(Features::pahole_default()), None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let bytes: &'static [u8] = Box::leak(encoded.btf.into_boxed_slice());
        let arena: &'static NameArena = Box::leak(Box::default());
        let parsed: &'static Parsed<'static> = Box::leak(Box::new(
            parse_with(bytes, None, arena).unwrap_or_else(|e| panic!("base: {e}")),
        ));
        let checked =
            validate(bytes, None, AS_WRITTEN).unwrap_or_else(|v| panic!("base: {}", v[0]));
        Base {
            bytes,
            parsed,
            checked,
        }
    })
}

/// The base as the encoder takes it for `features`' dedup flavour.
fn split_on(features: &Features) -> &'static SplitOn<'static, 'static> {
    static ON_1_31: OnceLock<SplitOn<'static, 'static>> = OnceLock::new();
    static ON_1_24: OnceLock<SplitOn<'static, 'static>> = OnceLock::new();
    let cell = match features.rules {
        btf::lower::Rules::V1_24 => &ON_1_24,
        btf::lower::Rules::V1_31 => &ON_1_31,
    };
    cell.get_or_init(|| {
        SplitOn::new(
            Path::new("base.btf"),
            base().parsed,
            base().bytes,
            features,
            btf::encode::SplitsOn::One,
        )
            .unwrap_or_else(|e| panic!("base: {e}"))
    })
}

/// A file of this process's own to hand the encoder (it reads a path).
fn scratch_file() -> &'static Path {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = Path::new("/dev/shm");
        let dir = if dir.is_dir() {
            dir.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        // The process id keeps fork mode's processes apart; padded, so
        // that the path (which the encoder keeps, in arenas among others)
        // has one length whatever the id, and a replay takes the same
        // code paths.
        dir.join(format!("btfenc-fuzz-{:010}.o", std::process::id()))
    })
}

fn first(violations: &[btf::validate::Violation]) -> String {
    violations
        .first()
        .map_or_else(String::new, ToString::to_string)
}

/// `elf_dwarf`: see the crate documentation.
pub fn elf_dwarf(data: &[u8]) {
    one_thread();
    let kernel_list = || {
        Features::parse(
            "encode_force,var,float,enum64,decl_tag,type_tag,optimized_func,\
             consistent_func,decl_tag_kfuncs",
            false,
        )
        .expect("a known list")
    };
    let (features, split) = match data.len() % 4 {
        0 => (kernel_list(), false),
        1 => (kernel_list(), true),
        2 => (
            Features::legacy(LegacyFlags {
                btf_gen_floats: true,
                ..LegacyFlags::default()
            }),
            false,
        ),
        _ => (
            Features {
                distilled_base: true,
                ..kernel_list()
            },
            true,
        ),
    };
    let path = scratch_file();
    std::fs::write(path, data).expect("writing the scratch file");
    let on = split.then(|| split_on(&features));
    let encoded = match encode(path, &EncodeOptions::new(features), on) {
        Ok(encoded) => encoded,
        // The encoder's last check refused its own output: every rule one
        // unit can judge belongs to the lowering, with an error naming the
        // DIE (or encode_force's leave-out), so reaching this is a finding.
        Err(err) if is_rejected_output(&err) => {
            panic!("encoded BTF the kernel rejects: {}", err.one_line())
        }
        Err(_) => return,
    };
    // `encode` checked its output already; checked again here, so that
    // the library's check (encode/check.rs) cannot silently go.
    let base = base();
    if let Some(distilled) = &encoded.distilled_base {
        let small = validate(distilled, None, AS_WRITTEN)
            .unwrap_or_else(|v| panic!("distilled base the kernel rejects: {}", first(&v)));
        if let Err(v) = validate(&encoded.btf, Some(&small), AS_WRITTEN) {
            panic!(
                "split on a distilled base the kernel rejects: {}",
                first(&v)
            );
        }
        let arena = NameArena::new();
        let small = parse_with(distilled, None, &arena).expect("the distilled base reads back");
        parse_with(&encoded.btf, Some(&small), &arena)
            .expect("the split reads back on its distilled base");
        return;
    }
    let checked_base = split.then_some(&base.checked);
    if let Err(v) = validate(&encoded.btf, checked_base, AS_WRITTEN) {
        panic!("encoded BTF the kernel rejects: {}", first(&v));
    }
    let arena = NameArena::new();
    parse_with(&encoded.btf, split.then_some(base.parsed), &arena).expect("encoded BTF reads back");
}

/// Whether `err` is [`btf::encode::encode`] refusing BTF it wrote because
/// the kernel's checks reject it.
fn is_rejected_output(err: &btf::Error) -> bool {
    matches!(
        err.root(),
        btf::Error::Format(btf::FormatError {
            kind: btf::ErrorKind::WouldBeRejected { output: true, .. },
            ..
        })
    )
}

/// Dumps, writes back and re-reads `parsed` (split on `on` when given).
fn exercise(parsed: &Parsed<'_>, on: Option<&Parsed<'_>>) {
    let on_btf = on.map(|b| &b.btf);
    let _ = btf::dump::dump_raw(&mut sink(), &parsed.btf, on_btf);
    let _ = btf::dump_c::dump_c(&mut sink(), &parsed.btf, on_btf);
    let written = match on {
        None => btf::write::write(&parsed.btf, parsed.endian),
        Some(base) => btf::write::write_split(&parsed.btf, &base.string_index(), parsed.endian),
    };
    let Ok(written) = written else {
        return;
    };
    let arena = NameArena::new();
    let again = parse_with(&written, on, &arena)
        .unwrap_or_else(|e| panic!("written BTF does not read: {e}"));
    assert!(
        again.btf.types == parsed.btf.types,
        "written BTF reads back as other types"
    );
}

/// `btf_read`: see the crate documentation.
pub fn btf_read(data: &[u8]) {
    one_thread();
    let arena = NameArena::new();
    if data.starts_with(b"\x7fELF") {
        if let Ok(parsed) = parse_file_with(data, None, &arena) {
            exercise(&parsed, None);
        }
        if let Ok(Some(small)) = btf::read::elf_section(data, ".BTF.base") {
            if let (Ok(small), Ok(Some(raw))) = (
                parse_with(small, None, &arena),
                btf::read::elf_section(data, ".BTF"),
            ) {
                if let Ok(split) = parse_with(raw, Some(&small), &arena) {
                    exercise(&split, Some(&small));
                }
            }
        }
        return;
    }
    if let Ok(parsed) = parse_with(data, None, &arena) {
        exercise(&parsed, None);
    }
}

/// `btf_read_split`: see the crate documentation.
pub fn btf_read_split(data: &[u8]) {
    one_thread();
    let base = base();
    let arena = NameArena::new();
    if let Ok(parsed) = parse_with(data, Some(base.parsed), &arena) {
        exercise(&parsed, Some(base.parsed));
    }
}

/// Whether `BPF_BTF_LOAD` may be asked (`None` after a one-time notice when
/// it may not, or when `BTFENC_FUZZ_KERNEL=0`).
fn kernel_judges() -> bool {
    static JUDGES: OnceLock<bool> = OnceLock::new();
    *JUDGES.get_or_init(|| {
        if std::env::var_os("BTFENC_FUZZ_KERNEL").is_some_and(|v| v == "0") {
            return false;
        }
        match kernel_accepts_btf(base().bytes) {
            Ok(true) => true,
            Ok(false) => {
                eprintln!("btfenc-fuzz: the kernel rejects the fixed base: no kernel verdicts");
                false
            }
            Err(reason) => {
                eprintln!("btfenc-fuzz: no kernel verdicts: {reason}");
                false
            }
        }
    })
}

/// `validate`: see the crate documentation.
pub fn validate_target(data: &[u8]) {
    one_thread();
    let arena = NameArena::new();
    let verdict = validate(data, None, Options::default());
    if verdict.is_ok() {
        // What the kernel takes, btfenc must be able to read (as a base,
        // a `relocate` input, a blob to dump).
        if let Err(e) = parse_with(data, None, &arena) {
            panic!("the kernel's checks accept a blob the reader refuses: {e}");
        }
    }
    if kernel_judges() {
        if let Ok(accepted) = kernel_accepts_btf(data) {
            assert!(
                accepted == verdict.is_ok(),
                "the kernel {} it, btf::validate {}",
                if accepted { "accepts" } else { "rejects" },
                match &verdict {
                    Ok(_) => "accepts".to_string(),
                    Err(v) => format!("rejects: {}", first(v)),
                }
            );
        }
    }
    let _ = validate(data, None, AS_WRITTEN);
    let base = base();
    if validate(data, Some(&base.checked), Options::default()).is_ok() {
        if let Err(e) = parse_with(data, Some(base.parsed), &arena) {
            panic!("the kernel's checks accept a split the reader refuses: {e}");
        }
    }
}

/// Length of the BTF blob at the start of `data`, from its header (its
/// header, then the later end of its two sections), at most `data.len()`.
fn blob_len(data: &[u8]) -> usize {
    let word = |at: usize| -> u64 {
        data.get(at..at + 4).map_or(0, |w| {
            u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        })
    };
    let hdr_len = word(4);
    let end = hdr_len + (word(8) + word(12)).max(word(16) + word(20));
    usize::try_from(end).map_or(data.len(), |end| end.min(data.len()))
}

/// `relocate`: see the crate documentation.
pub fn relocate(data: &[u8]) {
    one_thread();
    let cut = blob_len(data);
    let (distilled, split) = data.split_at(cut);
    let base = base();
    let arena = NameArena::new();
    let Ok(small) = parse_with(distilled, None, &arena) else {
        return;
    };
    let Ok(split_parsed) = parse_with(split, Some(&small), &arena) else {
        return;
    };
    let Ok(moved) = btf::relocate::relocate(&split_parsed.btf, &small.btf, &base.parsed.btf) else {
        return;
    };
    // dump and diff show relocated BTF without checking it first.
    let _ = btf::dump::dump_raw(&mut sink(), &moved, Some(&base.parsed.btf));
    let folded = btf::relocate::fold_distilled_copies(&moved, &base.parsed.btf).ok();
    let inputs_valid = validate(distilled, None, AS_WRITTEN)
        .ok()
        .is_some_and(|small| validate(split, Some(&small), AS_WRITTEN).is_ok());
    for (what, mut result) in [("relocate", Some(moved)), ("relocate --dedup", folded)] {
        let Some(result) = result.as_mut() else {
            continue;
        };
        result.base_str_len = base.parsed.str_end();
        let written =
            btf::write::write_split(result, &base.parsed.string_index(), split_parsed.endian);
        if !inputs_valid || split_parsed.endian != Endian::Little {
            continue;
        }
        let written = written.unwrap_or_else(|e| panic!("{what}: valid inputs, no output: {e}"));
        if let Err(v) = validate(&written, Some(&base.checked), AS_WRITTEN) {
            panic!(
                "{what}: valid inputs, output the kernel rejects: {}",
                first(&v)
            );
        }
    }
}
