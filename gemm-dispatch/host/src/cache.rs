//! The per-user store of f32 path measurements, so that a measurement made once on a machine
//! (`GEMM_HOST_TUNE=1`, see [`crate::dispatch`]) serves every later process instead of being
//! repeated at each first use.
//!
//! * **Where**: `$GEMM_HOST_CACHE_DIR` if set (empty: no store), else `$XDG_CACHE_HOME/amd-gemm`,
//!   else `$HOME/.cache/amd-gemm`; the file is `host-paths.tsv` in it.
//! * **Keyed** by the library version, the CPU ([`cpu_identity`]: CPUID brand string, family,
//!   model and stepping, the cache sizes and the features the paths use), the thread count and the
//!   f32 size class: a measurement is reused only on the CPU, thread count and code it was made
//!   with. A new version of the library ignores the old lines (and replaces them as it measures).
//! * **Safe under concurrent processes**: readers read the file whole, without a lock; writers take
//!   an exclusive `flock` on `host-paths.lock`, merge their lines into what the file holds now,
//!   write a temporary file beside it and `rename` it over the old one, so a reader sees either
//!   the old file or the new one, never half of one, and two writers do not drop each other's
//!   lines.
//! * **Ignored when corrupt**: a line that does not parse (wrong field count, a number that is
//!   not a positive finite value, an unknown size class) is skipped; a file without the header
//!   line is ignored whole. Nothing in the file can make a call fail: at worst the rule decides.
//!
//! The format is one header line ([`HEADER`]) and one tab-separated line per measurement:
//! `version  cpu  threads  side  faer_seconds  avx512_seconds  median_ratio  pairs` (the
//! [`crate::dispatch::F32Timing`] fields), from which [`crate::dispatch::decide`] derives the path
//! again, so the file stores evidence, not verdicts.

use crate::dispatch::{F32Class, F32Timing, F32_CLASSES};
use std::path::{Path, PathBuf};

/// The environment variable that moves (or, empty, disables) the store.
pub const ENV_DIR: &str = "GEMM_HOST_CACHE_DIR";
/// The file name inside the cache directory.
pub const FILE: &str = "host-paths.tsv";
/// The first line of the file; a file that does not start with it is ignored.
pub const HEADER: &str = "# amd-gemm host f32 path measurements v1: version cpu threads side faer_s avx512_s median_faer_speedup pairs (delete to forget)";

/// The library version the lines are keyed by.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The cache directory from the environment: `$GEMM_HOST_CACHE_DIR` (empty: none), else
/// `$XDG_CACHE_HOME/amd-gemm`, else `$HOME/.cache/amd-gemm`.
pub fn dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = std::env::var_os(ENV_DIR) {
        return (!d.is_empty()).then(|| PathBuf::from(d));
    }
    if let Some(x) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(x).join("amd-gemm"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".cache").join("amd-gemm"))
}

/// What identifies this CPU for the store: brand string, family/model/stepping, L1d and L2 sizes
/// and the features the paths depend on (read once per process). Tabs and line breaks never occur
/// in it (they would break the format).
pub fn cpu_identity() -> String {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let caches = crate::cpu::CacheSizes::detect();
        let id = format!(
            "{} ({}; L1d {} KiB, L2 {} KiB; {})",
            brand().unwrap_or_else(|| "unknown CPU".into()),
            signature(),
            caches.l1d >> 10,
            caches.l2 >> 10,
            crate::cpu::CpuFeatures::detect().names()
        );
        clean(&id)
    })
    .clone()
}

fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().to_string()
}

/// The CPUID brand string (leaves 0x8000_0002..4).
#[cfg(target_arch = "x86_64")]
fn brand() -> Option<String> {
    use core::arch::x86_64::__cpuid;
    // SAFETY (for each __cpuid): CPUID exists on every x86_64 CPU and only reads registers.
    if __cpuid(0x8000_0000).eax < 0x8000_0004 {
        return None;
    }
    let mut bytes = Vec::with_capacity(48);
    for leaf in 0x8000_0002u32..=0x8000_0004 {
        let r = __cpuid(leaf);
        for v in [r.eax, r.ebx, r.ecx, r.edx] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    let s = String::from_utf8_lossy(&bytes).trim_matches(char::from(0)).trim().to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(not(target_arch = "x86_64"))]
fn brand() -> Option<String> {
    None
}

/// `family F model M stepping S` from CPUID leaf 1 (with the extended family and model folded in
/// as the SDM and AMD's APM define the displayed values).
#[cfg(target_arch = "x86_64")]
fn signature() -> String {
    let eax = core::arch::x86_64::__cpuid(1).eax;
    let (base_family, base_model, stepping) = ((eax >> 8) & 0xf, (eax >> 4) & 0xf, eax & 0xf);
    let family = if base_family == 0xf { base_family + ((eax >> 20) & 0xff) } else { base_family };
    let model =
        if base_family == 0xf || base_family == 0x6 { base_model | (((eax >> 16) & 0xf) << 4) } else { base_model };
    format!("family {family} model {model} stepping {stepping}")
}

#[cfg(not(target_arch = "x86_64"))]
fn signature() -> String {
    std::env::consts::ARCH.to_string()
}

/// One stored measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub version: String,
    pub cpu: String,
    pub timing: F32Timing,
}

impl Entry {
    fn key(&self) -> (&str, &str, usize, usize) {
        (&self.version, &self.cpu, self.timing.threads, self.timing.class.side)
    }

    /// The entry's line (without the line break).
    pub fn line(&self) -> String {
        let t = &self.timing;
        format!(
            "{}\t{}\t{}\t{}\t{:e}\t{:e}\t{:e}\t{}",
            clean(&self.version),
            clean(&self.cpu),
            t.threads,
            t.class.side,
            t.faer,
            t.avx512,
            t.faer_speedup,
            t.rounds
        )
    }

    /// Parses one line; `None` for anything malformed.
    pub fn parse(line: &str) -> Option<Entry> {
        let f: Vec<&str> = line.split('\t').collect();
        let [version, cpu, threads, side, faer, avx512, ratio, rounds] = f[..] else {
            return None;
        };
        let positive = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
        let side: usize = side.parse().ok()?;
        let class: F32Class = F32_CLASSES.into_iter().find(|c| c.side == side)?;
        let threads: usize = threads.parse().ok().filter(|&t| t > 0)?;
        let rounds: usize = rounds.parse().ok().filter(|&r| r > 0)?;
        if version.is_empty() || cpu.is_empty() {
            return None;
        }
        Some(Entry {
            version: version.to_string(),
            cpu: cpu.to_string(),
            timing: F32Timing {
                faer: positive(faer)?,
                avx512: positive(avx512)?,
                faer_speedup: positive(ratio)?,
                class,
                threads,
                rounds,
            },
        })
    }
}

/// The entries of a file's text: none unless it starts with [`HEADER`]; malformed lines skipped.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Vec::new();
    }
    lines.filter_map(Entry::parse).collect()
}

/// The file's text for `entries` (header first).
pub fn format(entries: &[Entry]) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    for e in entries {
        s.push_str(&e.line());
        s.push('\n');
    }
    s
}

/// `old` with `new` added, replacing an old entry of the same version, CPU, threads and class.
pub fn merge(mut old: Vec<Entry>, new: Entry) -> Vec<Entry> {
    old.retain(|e| e.key() != new.key());
    old.push(new);
    old
}

/// The stored timing for this version, `cpu`, `threads` and `class` in the store at `dir`.
pub fn lookup(dir: &Path, cpu: &str, threads: usize, class: F32Class) -> Option<F32Timing> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    parse(&text)
        .into_iter()
        .rev()
        .find(|e| e.version == VERSION && e.cpu == clean(cpu) && e.timing.threads == threads && e.timing.class == class)
        .map(|e| e.timing)
}

/// Stores `timing` for this version and `cpu` in the store at `dir` (created if missing), under
/// the lock, merged into the lines already there, replaced atomically.
pub fn store(dir: &Path, cpu: &str, timing: F32Timing) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let _lock = Lock::take(&dir.join("host-paths.lock"))?;
    let path = dir.join(FILE);
    let old = std::fs::read_to_string(&path).map(|t| parse(&t)).unwrap_or_default();
    let all = merge(old, Entry { version: VERSION.to_string(), cpu: clean(cpu), timing });
    let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, format(&all))?;
    std::fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// An exclusive `flock` held until dropped (closing the file releases it).
struct Lock(#[allow(dead_code)] std::fs::File);

impl Lock {
    fn take(path: &Path) -> std::io::Result<Lock> {
        let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock on a descriptor this function owns; it touches no memory of ours.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(Lock(file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(side: usize, threads: usize, ratio: f64) -> F32Timing {
        let class = F32_CLASSES.into_iter().find(|c| c.side == side).unwrap();
        F32Timing { faer: 0.25, avx512: 0.25 * ratio, faer_speedup: ratio, class, threads, rounds: 5 }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gemm-host-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn lines_round_trip_and_malformed_ones_are_skipped() {
        let e = Entry { version: VERSION.into(), cpu: "AMD EPYC (family 26)".into(), timing: timing(2048, 2, 1.07) };
        assert_eq!(Entry::parse(&e.line()), Some(e.clone()));
        let good = e.line();
        let text = format!(
            "{HEADER}\n{good}\ngarbage\n{}\n{}\n{}\n{}\n\n{good}",
            good.replace("\t2048\t", "\t2047\t"), // not a size class
            good.replace("\t2\t", "\t0\t"),       // zero threads
            good.replacen("2.5e-1", "NaN", 1),    // not a positive number
            &good[..good.len() - 3]               // truncated
        );
        assert_eq!(parse(&text), vec![e.clone(), e.clone()]);
        // Without the header the file is not ours (or is from another format): ignored whole.
        assert_eq!(parse(&good), vec![]);
        assert_eq!(parse(""), vec![]);
        assert_eq!(parse("\u{0}\u{1}binary"), vec![]);
        // Control characters in the CPU name cannot break the format.
        let odd = Entry { cpu: "a\tb\nc".into(), ..e.clone() };
        assert_eq!(Entry::parse(&odd.line()).unwrap().cpu, "a b c");
    }

    #[test]
    fn merge_replaces_the_same_key_only() {
        let e = |side, threads, ratio| Entry {
            version: VERSION.into(),
            cpu: "x".into(),
            timing: timing(side, threads, ratio),
        };
        let all = merge(vec![e(2048, 2, 1.0), e(1024, 2, 1.0), e(2048, 4, 1.0)], e(2048, 2, 1.3));
        assert_eq!(all, vec![e(1024, 2, 1.0), e(2048, 4, 1.0), e(2048, 2, 1.3)]);
        let other_version = Entry { version: "0.0.1".into(), ..e(512, 2, 1.0) };
        assert_eq!(merge(vec![other_version.clone()], e(512, 2, 1.1)).len(), 2);
    }

    #[test]
    fn store_then_lookup_by_cpu_threads_class_and_version() {
        let d = temp_dir("store");
        let c2048 = F32_CLASSES[2];
        assert_eq!(lookup(&d, "cpu A", 2, c2048), None, "no file yet");
        store(&d, "cpu A", timing(2048, 2, 1.2)).unwrap();
        store(&d, "cpu A", timing(1024, 2, 0.9)).unwrap();
        store(&d, "cpu B", timing(2048, 2, 0.8)).unwrap();
        assert_eq!(lookup(&d, "cpu A", 2, c2048), Some(timing(2048, 2, 1.2)));
        assert_eq!(lookup(&d, "cpu B", 2, c2048), Some(timing(2048, 2, 0.8)));
        assert_eq!(lookup(&d, "cpu A", 4, c2048), None, "other thread count");
        assert_eq!(lookup(&d, "cpu A", 2, F32_CLASSES[3]), None, "other size class");
        // A newer measurement replaces the old one; the other lines stay.
        store(&d, "cpu A", timing(2048, 2, 0.95)).unwrap();
        assert_eq!(lookup(&d, "cpu A", 2, c2048), Some(timing(2048, 2, 0.95)));
        assert_eq!(lookup(&d, "cpu A", 2, F32_CLASSES[1]), Some(timing(1024, 2, 0.9)));
        // Lines of another version are not used.
        let text = std::fs::read_to_string(d.join(FILE)).unwrap().replace(&format!("\n{VERSION}\t"), "\n0.0.0-old\t");
        std::fs::write(d.join(FILE), text).unwrap();
        assert_eq!(lookup(&d, "cpu A", 2, c2048), None);
        // A corrupt file is ignored, and the next store replaces it with a good one.
        std::fs::write(d.join(FILE), b"\xff\xfe not a cache").unwrap();
        assert_eq!(lookup(&d, "cpu A", 2, c2048), None);
        store(&d, "cpu A", timing(2048, 2, 1.1)).unwrap();
        assert_eq!(lookup(&d, "cpu A", 2, c2048), Some(timing(2048, 2, 1.1)));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn concurrent_writers_keep_every_line() {
        let d = temp_dir("concurrent");
        std::thread::scope(|s| {
            for t in 1..=8 {
                let d = &d;
                s.spawn(move || {
                    for class in F32_CLASSES {
                        store(d, "cpu", timing(class.side, t, 1.0 + t as f64 / 100.0)).unwrap();
                    }
                });
            }
        });
        let all = parse(&std::fs::read_to_string(d.join(FILE)).unwrap());
        assert_eq!(all.len(), 8 * F32_CLASSES.len());
        for t in 1..=8 {
            for class in F32_CLASSES {
                assert_eq!(lookup(&d, "cpu", t, class), Some(timing(class.side, t, 1.0 + t as f64 / 100.0)));
            }
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn the_cpu_identity_is_one_clean_line() {
        let id = cpu_identity();
        assert!(!id.is_empty() && !id.contains('\t') && !id.contains('\n'), "{id:?}");
        assert!(id.contains("L1d") && id.contains("KiB"), "{id}");
    }
}
