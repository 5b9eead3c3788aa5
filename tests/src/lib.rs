//! Integration tests of the whole product.
