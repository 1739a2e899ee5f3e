/*!
Walking and lowering a file's units in parallel while one thread adds them
to the pre-dedup table in `.debug_info` order.

The table collapses exact duplicates as CUs are added
([`btf::dedup::Collapser`]), so each CU's own types are freed soon after
it is lowered instead of all CUs waiting for an assembly at the end: that
is what bounds the peak memory. Workers take units in `.debug_info` order,
so the CUs waiting for their turn stay few; the table only ever sees them
in that order, which keeps the output independent of the thread count.
*/

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result};
use bumpalo::Bump;

use btf::lower::{self, Assembler, ReadyCu, SplitBase};
use dwarf::{Dwarf, ElfFile, UnitHeader};

/// Units walked between two releases of every mapped page. Units share
/// pages of the other sections (location and range lists, abbreviations,
/// strings) that no single unit can give back, and reading one unit's
/// header maps the pages around it (fault-around): released now and then,
/// they never add up. Pages still in use are simply read back.
const RELEASE_EVERY: usize = 64;

/// What the walk counted.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    /// DIEs visited.
    pub dies: u64,
    /// Types the CUs lowered to, before collapsing.
    pub types: usize,
    /// CPU time the workers spent walking DIEs, summed over CUs.
    pub walk_cpu: Duration,
    /// CPU time the workers spent lowering to BTF and preparing the CUs
    /// for the table, summed over CUs.
    pub lower_cpu: Duration,
    /// CPU time of the thread that added the CUs to the table: the
    /// sequential part of the phase.
    pub adding_cpu: Duration,
}

/// What one unit cost its worker.
#[derive(Debug, Default, Clone, Copy)]
struct UnitCosts {
    dies: u64,
    walk_cpu: Duration,
    lower_cpu: Duration,
}

/// Walks, lowers and adds every unit of `units` (see the module docs).
/// `inline_names` has one arena per unit for the names stored in
/// `.debug_info` itself.
pub(crate) fn walk_and_assemble<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    units: &[UnitHeader<'input>],
    inline_names: &'input mut [Bump],
    ctx: &lower::Context<'_, 'input>,
    split: Option<SplitBase>,
) -> Result<(Assembler<'input>, Counts)> {
    let path = dwarf.path();
    let work = Mutex::new(units.iter().zip(inline_names.iter_mut()).enumerate());
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<(usize, Result<(UnitCosts, ReadyCu<'input>)>)>();

    std::thread::scope(|scope| {
        let stop = &stop;
        let assembling = scope.spawn(move || {
            let added = add_in_order(receiver, split);
            if added.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            added
        });
        let work = &work;
        rayon::scope(|workers| {
            for _ in 0..rayon::current_num_threads() {
                let sender = sender.clone();
                workers.spawn(move |_| loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let next = work.lock().ok().and_then(|mut units| units.next());
                    let Some((index, (unit, names))) = next else { break };
                    let names: &'input Bump = names;
                    let ready = walk_and_lower(elf, dwarf, unit, names, ctx);
                    if index % RELEASE_EVERY == RELEASE_EVERY - 1 {
                        elf.release_resident_pages();
                    }
                    if ready.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if sender.send((index, ready)).is_err() {
                        break;
                    }
                });
            }
        });
        drop(sender);
        assembling
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("{}: the assembling thread panicked", path.display())))
    })
}

/// One unit, up to the point where it needs the others.
fn walk_and_lower<'input>(
    elf: &ElfFile,
    dwarf: &Dwarf<'input>,
    unit: &UnitHeader<'input>,
    names: &'input Bump,
    ctx: &lower::Context<'_, 'input>,
) -> Result<(UnitCosts, ReadyCu<'input>)> {
    let start = thread_cpu_time();
    let arena = Bump::new();
    let cu = dwarf::walk::walk_unit_copying_inline_names(dwarf, unit, &arena, names)?;
    // Nothing borrows the unit's bytes any more: keeping them resident
    // would only add to the peak.
    elf.release_pages_of(dwarf.unit_bytes(unit));
    let walked = thread_cpu_time();
    let ready = lower::lower_cu(&cu, ctx)
        .and_then(lower::LoweredCu::prepare)
        .with_context(|| format!("{}: CU at .debug_info+{:#x}", dwarf.path().display(), cu.offset))?;
    let costs = UnitCosts {
        dies: cu.die_count,
        walk_cpu: walked.saturating_sub(start),
        lower_cpu: thread_cpu_time().saturating_sub(walked),
    };
    Ok((costs, ready))
}

/// Adds units to a new table in index order as they arrive in any order.
/// The first failure in index order is the one reported.
fn add_in_order<'input>(
    arrivals: mpsc::Receiver<(usize, Result<(UnitCosts, ReadyCu<'input>)>)>,
    split: Option<SplitBase>,
) -> Result<(Assembler<'input>, Counts)> {
    let mut assembler = Assembler::new(split);
    let mut counts = Counts::default();
    let mut waiting = BTreeMap::new();
    let mut next = 0;
    for (index, ready) in arrivals {
        waiting.insert(index, ready);
        while let Some(ready) = waiting.remove(&next) {
            next += 1;
            let (costs, cu) = ready?;
            counts.dies += costs.dies;
            counts.walk_cpu += costs.walk_cpu;
            counts.lower_cpu += costs.lower_cpu;
            counts.types += cu.type_count();
            assembler.add(cu)?;
        }
    }
    counts.adding_cpu = thread_cpu_time();
    Ok((assembler, counts))
}

/// CPU time of the calling thread so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the struct it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// Whether walking failed only because a DIE refers into another unit.
pub(crate) fn is_cross_unit_reference(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<dwarf::Error>()
            .is_some_and(|e| matches!(e.kind(), dwarf::ErrorKind::CrossUnitReference(_)))
    })
}
