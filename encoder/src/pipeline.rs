/*!
One file's encoding: ELF + DWARF → per-CU model → BTF → dedup → bytes.

CUs are walked and lowered in parallel, each in its own arena that is
dropped as soon as the CU is lowered, so peak memory holds lowered BTF, not
DWARF models. Results are collected in `.debug_info` order before anything
assigns global ids, which is what makes the output independent of the
thread count.
*/

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use bumpalo::Bump;
use rayon::prelude::*;

use btf::lower::{self, Features, LoweredCu, SplitBase};
use btf::raw::Endian;
use btf::read::Parsed;
use dwarf::ElfFile;

/// What one encoding needs to know besides the input file.
#[derive(Debug)]
pub struct Config {
    /// Features and selection rules.
    pub features: Features,
    /// Languages whose CUs are skipped.
    pub lang_exclude: Vec<dwarf::model::Language>,
}

/// Per-phase times and counts, for `-V`.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Opening the ELF, symbols, DWARF section setup.
    pub open: Duration,
    /// Walking DIEs and lowering each CU (parallel).
    pub walk_and_lower: Duration,
    /// Concatenating CUs and selecting FUNC/VAR.
    pub assemble: Duration,
    /// Deduplication.
    pub dedup: Duration,
    /// Serialization.
    pub write: Duration,
    /// Compilation units.
    pub cus: usize,
    /// DIEs visited.
    pub dies: u64,
    /// Types before dedup.
    pub types_before: usize,
    /// Types after dedup.
    pub types_after: usize,
}

impl Stats {
    /// Prints the figures on stderr, one phase a line.
    pub fn report(&self, path: &Path) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        eprintln!("btfenc: {}:", path.display());
        eprintln!("  open          {:9.1} ms", ms(self.open));
        eprintln!("  walk+lower    {:9.1} ms  ({} CUs, {} DIEs)", ms(self.walk_and_lower), self.cus, self.dies);
        eprintln!("  assemble      {:9.1} ms  ({} types before dedup)", ms(self.assemble), self.types_before);
        eprintln!("  dedup         {:9.1} ms  ({} types after dedup)", ms(self.dedup), self.types_after);
        eprintln!("  write         {:9.1} ms", ms(self.write));
    }
}

/// The encoded BTF of one file.
#[derive(Debug)]
pub struct Encoded {
    /// `.BTF` contents.
    pub btf: Vec<u8>,
    /// Figures for `-V`.
    pub stats: Stats,
}

/// Encodes `path`, split on `base` when given.
pub fn encode(path: &Path, config: &Config, base: Option<&Parsed<'_>>) -> Result<Encoded> {
    let mut stats = Stats::default();
    let started = Instant::now();
    let elf = ElfFile::open(path)?;
    let symbols = elf.symbols()?;
    let dwarf = elf.dwarf()?;
    let mut ctx = lower::Context::new(config.features, &symbols);
    ctx.lang_exclude = config.lang_exclude.clone();
    ctx.pointer_size = if elf.is_64() { 8 } else { 4 };
    ctx.relocatable = matches!(elf.kind(), dwarf::ElfKind::Relocatable);
    ctx.register_params = lower::register_params_for_machine(elf.machine());
    let endian = if elf.is_big_endian() { Endian::Big } else { Endian::Little };
    stats.open = started.elapsed();

    let phase = Instant::now();
    let units = dwarf.units();
    stats.cus = units.len();
    let lowered: Vec<(u64, LoweredCu<'_>)> = units
        .par_iter()
        .map(|unit| {
            let arena = Bump::new();
            let cu = dwarf::walk::walk_unit(&dwarf, unit, &arena)?;
            let lowered = lower::lower_cu(&cu, &ctx)
                .with_context(|| format!("{}: CU at .debug_info+{:#x}", path.display(), cu.offset))?;
            Ok((cu.die_count, lowered))
        })
        .collect::<Result<_>>()?;
    stats.dies = lowered.iter().map(|(dies, _)| dies).sum();
    stats.walk_and_lower = phase.elapsed();

    let phase = Instant::now();
    let split = base.map(|b| SplitBase { type_count: b.total_type_count(), str_len: b.str_end() });
    let cus = lowered.into_iter().map(|(_, cu)| cu).collect();
    let assembled = lower::assemble(cus, &ctx, split).with_context(|| format!("{}", path.display()))?;
    stats.types_before = assembled.types.len();
    stats.assemble = phase.elapsed();

    let phase = Instant::now();
    let deduped = btf::dedup::dedup(&assembled, base.map(|b| &b.btf))
        .with_context(|| format!("{}: dedup", path.display()))?;
    stats.types_after = deduped.btf.types.len();
    stats.dedup = phase.elapsed();

    let phase = Instant::now();
    // Freeing millions of pre-dedup types takes longer than writing the
    // result; the two are independent, so the freeing overlaps the write.
    let ((), bytes) = rayon::join(
        move || drop(assembled),
        || match base {
            Some(base) => btf::write::write_split(&deduped.btf, &base.string_index(), endian),
            None => btf::write::write(&deduped.btf, endian),
        },
    );
    let bytes = bytes.with_context(|| format!("{}: writing BTF", path.display()))?;
    stats.write = phase.elapsed();
    Ok(Encoded { btf: bytes, stats })
}
