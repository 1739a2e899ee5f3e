//! `-V`: what each phase of an encoding cost, on stderr.

use std::path::Path;
use std::time::Duration;

use btf::encode::{Phase, Stats};

/// Prints `stats` on stderr, one phase a line.
pub fn report(stats: &Stats, path: &Path) {
    let line = |name: &str, phase: Phase, what: String| {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        say!(
            "  {name:<12} {:9.1} ms  cpu {:9.1} ms{what}",
            ms(phase.wall),
            ms(phase.cpu)
        );
    };
    say!("btfenc: {}:", path.display());
    line("open", stats.open, String::new());
    line(
        "walk+lower",
        stats.walk_and_lower,
        format!(
            "  ({} CUs, {} DIEs, {} types, {} of them known from an earlier CU)",
            stats.cus, stats.walk.dies, stats.walk.types, stats.walk.known
        ),
    );
    // The parts of the phase above, as CPU time: they overlap in time.
    let part = |name: &str, cpu: Duration, what: &str| {
        say!(
            "    {name:<10} {:>12} cpu {:9.1} ms{what}",
            "",
            cpu.as_secs_f64() * 1000.0
        );
    };
    part(
        "walk",
        stats.walk.walk_cpu,
        "  (DIEs to CU models, on the workers)",
    );
    part(
        "lower",
        stats.walk.lower_cpu,
        "  (CU models to BTF, on the workers)",
    );
    part(
        "collapse",
        stats.walk.adding_cpu,
        &format!(
            "  (CUs added in order, one worker at a time; at most {} lowered ahead waited)",
            stats.walk.most_waiting
        ),
    );
    part(
        "dedup",
        stats.walk.early_dedup_cpu,
        "  (the passes that need no later CU, after each add)",
    );
    line(
        "assemble",
        stats.assemble,
        format!("  ({} types before dedup)", stats.types_before),
    );
    line(
        "dedup",
        stats.dedup,
        format!("  ({} types after dedup)", stats.types_after),
    );
    line("write", stats.write, String::new());
}
