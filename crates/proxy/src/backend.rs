//! TODO(proxy-http helper)
