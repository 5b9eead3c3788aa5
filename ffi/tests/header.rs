//! `ffi/include/gemm.h` is what cbindgen makes of `ffi/src/lib.rs`: this test regenerates it and
//! fails on any difference, so the header can never drift from the code. `GEMM_BLESS=1` rewrites
//! the header instead (then review the diff).

use std::path::Path;

#[test]
fn header_is_in_step() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/lib.rs"))
        .generate()
        .expect("cbindgen reads src/lib.rs");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("header is UTF-8");
    let path = root.join("include/gemm.h");
    if std::env::var_os("GEMM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed.lines().zip(generated.lines()).position(|(a, b)| a != b);
        panic!(
            "ffi/include/gemm.h is out of step with ffi/src/lib.rs (first differing line: {first:?}).\n\
             Regenerate with `GEMM_BLESS=1 cargo test -p gemm-ffi --test header` and review the diff."
        );
    }
}
