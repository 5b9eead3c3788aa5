//! Any byte string through the msgpack decoder and the metadata schema; what decodes
//! must re-encode and decode to the same value.
#![no_main]

use gemm_codeobject::metadata::Metadata;
use gemm_codeobject::msgpack;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = msgpack::decode(data) {
        let again = msgpack::decode(&msgpack::encode(&v)).expect("re-encoding decodes");
        // NaN payloads aside, values survive a round trip.
        if !format!("{v}").contains("NaN") {
            assert_eq!(again, v);
        }
        if let Ok(m) = Metadata::from_value(&v) {
            let back = Metadata::from_value(&m.to_value()).expect("our metadata parses");
            assert_eq!(back, m);
        }
    }
});
