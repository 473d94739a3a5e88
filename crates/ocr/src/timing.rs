//! Diagnostics of the pipeline's cost: per-stage wall and CPU times on stderr, and the
//! process's CPU time (wall time on a shared machine says more about the neighbours).

/// CPU time of the whole process (every thread), in milliseconds, from `/proc/self/stat`
/// (10 ms ticks): `OCR_TIMING=1` reports it beside wall time, since on a shared machine wall
/// time says more about the neighbours than about the pipeline.
pub fn process_cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) * 10.0
}

/// Per-stage wall and CPU times on stderr when [`OcrTuning::timing`](crate::OcrTuning::timing) is on.
pub struct StageTimer {
    on: bool,
    wall: std::time::Instant,
    cpu: f64,
}

impl StageTimer {
    /// Starts timing (a no-op unless `on`).
    pub fn new(on: bool) -> Self {
        Self { on, wall: std::time::Instant::now(), cpu: if on { process_cpu_ms() } else { 0.0 } }
    }

    /// Prints the time since the last mark under `stage` and restarts.
    pub fn mark(&mut self, stage: &str) {
        if !self.on {
            return;
        }
        let cpu = process_cpu_ms();
        eprintln!(
            "stage {stage:<12} wall {:>8.1} ms cpu {:>8.1} ms",
            self.wall.elapsed().as_secs_f64() * 1000.0,
            cpu - self.cpu
        );
        self.wall = std::time::Instant::now();
        self.cpu = cpu;
    }
}
