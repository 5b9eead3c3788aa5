//! Per-wave timelines as Chrome trace JSON (opens in Perfetto / chrome://tracing): one
//! track per wave of the simulated CU, one span per issued instruction (MFMAs last their
//! pipe time, memory instructions until their data lands), timestamps in microseconds at
//! the modelled clock.

use super::cu::WaveTiming;
use super::Prediction;
use std::fmt::Write as _;

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The trace of a prediction's simulated CU.
pub fn chrome_trace(p: &Prediction) -> String {
    let us = |c: u64| c as f64 / p.mhz;
    let mut s = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push_str(",\n");
        }
        first = false;
    };
    for w in &p.waves {
        let WaveTiming { uid, wg, wave, simd, .. } = w;
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{simd},\"tid\":{uid},\"args\":{{\"name\":\"wg {wg} wave {wave}\"}}}}"
        );
    }
    for simd in 0..4 {
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{simd},\"args\":{{\"name\":\"SIMD {simd}\"}}}}"
        );
    }
    let simd_of: std::collections::HashMap<usize, usize> = p.waves.iter().map(|w| (w.uid, w.simd)).collect();
    for sp in &p.spans {
        sep(&mut s);
        let pid = simd_of.get(&sp.wave_uid).copied().unwrap_or(0);
        let _ = write!(
            s,
            "{{\"ph\":\"X\",\"name\":\"{}\",\"pid\":{pid},\"tid\":{},\"ts\":{:.4},\"dur\":{:.4}}}",
            esc(&sp.name),
            sp.wave_uid,
            us(sp.start),
            us(sp.dur)
        );
    }
    s.push_str("\n]}\n");
    s
}
