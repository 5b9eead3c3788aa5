//! Any byte string through the code object reader: it must return, never panic, and a
//! successful parse must describe code inside the input.
#![no_main]

use gemm_codeobject::CodeObject;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(co) = CodeObject::parse(data) {
        for k in &co.kernels {
            assert!(k.code.len() <= data.len());
            let _ = k.descriptor.to_bytes();
        }
    }
});
