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
    pub open: Phase,
    /// Walking DIEs and lowering each CU (parallel).
    pub walk_and_lower: Phase,
    /// Concatenating CUs and selecting FUNC/VAR.
    pub assemble: Phase,
    /// Deduplication.
    pub dedup: Phase,
    /// Serialization.
    pub write: Phase,
    /// Compilation units.
    pub cus: usize,
    /// DIEs visited.
    pub dies: u64,
    /// Types before dedup.
    pub types_before: usize,
    /// Types after dedup.
    pub types_after: usize,
}

/// How long one phase took: wall-clock time, and the CPU time the whole
/// process spent meanwhile. On a shared machine the wall time says how busy
/// the others were; the CPU time is what the phase costs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Phase {
    /// Elapsed wall-clock time.
    pub wall: Duration,
    /// User + system CPU time of all threads.
    pub cpu: Duration,
}

/// A phase being timed.
struct PhaseTimer {
    wall: Instant,
    cpu: Duration,
}

impl PhaseTimer {
    fn start() -> Self {
        PhaseTimer { wall: Instant::now(), cpu: process_cpu_time() }
    }

    fn stop(self) -> Phase {
        Phase { wall: self.wall.elapsed(), cpu: process_cpu_time().saturating_sub(self.cpu) }
    }
}

/// Hands memory that was freed back to the system. `assemble` frees the
/// CUs' type tables (allocated on several threads) after copying them into
/// one table; glibc keeps that memory in its per-thread arenas, and what
/// dedup allocates next mostly does not reuse it: measured, it added
/// ~150 MB to the peak on a vmlinux.
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// User + system time of every thread of this process so far.
fn process_cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

impl Stats {
    /// Prints the figures on stderr, one phase a line.
    pub fn report(&self, path: &Path) {
        let line = |name: &str, phase: Phase, what: String| {
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            eprintln!("  {name:<12} {:9.1} ms  cpu {:9.1} ms{what}", ms(phase.wall), ms(phase.cpu));
        };
        eprintln!("btfenc: {}:", path.display());
        line("open", self.open, String::new());
        line("walk+lower", self.walk_and_lower, format!("  ({} CUs, {} DIEs)", self.cus, self.dies));
        line("assemble", self.assemble, format!("  ({} types before dedup)", self.types_before));
        line("dedup", self.dedup, format!("  ({} types after dedup)", self.types_after));
        line("write", self.write, String::new());
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
    let phase = PhaseTimer::start();
    let elf = ElfFile::open(path)?;
    let symbols = elf.symbols()?;
    let dwarf = elf.dwarf()?;
    let mut ctx = lower::Context::new(config.features, &symbols);
    ctx.lang_exclude = config.lang_exclude.clone();
    ctx.pointer_size = if elf.is_64() { 8 } else { 4 };
    ctx.relocatable = matches!(elf.kind(), dwarf::ElfKind::Relocatable);
    ctx.register_params = lower::register_params_for_machine(elf.machine());
    let endian = if elf.is_big_endian() { Endian::Big } else { Endian::Little };
    stats.open = phase.stop();

    let phase = PhaseTimer::start();
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
    // Only .debug_str is read from now on (names borrow it).
    elf.release_resident_pages();
    stats.walk_and_lower = phase.stop();

    let phase = PhaseTimer::start();
    let split = base.map(|b| SplitBase { type_count: b.total_type_count(), str_len: b.str_end() });
    let cus = lowered.into_iter().map(|(_, cu)| cu).collect();
    let assembled = lower::assemble(cus, &ctx, split).with_context(|| format!("{}", path.display()))?;
    stats.types_before = assembled.types.len();
    return_freed_memory();
    stats.assemble = phase.stop();

    let phase = PhaseTimer::start();
    let deduped = btf::dedup::dedup(&assembled, base.map(|b| &b.btf))
        .with_context(|| format!("{}: dedup", path.display()))?;
    stats.types_after = deduped.btf.types.len();
    stats.dedup = phase.stop();

    let phase = PhaseTimer::start();
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
    stats.write = phase.stop();
    Ok(Encoded { btf: bytes, stats })
}
