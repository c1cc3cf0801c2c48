//! The `lokivl` binary. TODO(proxy-http helper)
fn main() {}
