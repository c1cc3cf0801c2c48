//! TODO(codec helper)
