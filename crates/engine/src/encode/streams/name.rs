//! A row's labels as the streams encoder handles them: each name kept as
//! VictoriaLogs spells it plus how Loki prints it, so dotted names need no
//! allocation, and the category Loki files the label under.

use std::cmp::Ordering;

use crate::labels::is_valid_label_name;

/// A label name as Loki reports it, kept as the raw VictoriaLogs name plus
/// how to print it, so that dotted names need no allocation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Name<'s> {
    pub(super) raw: &'s str,
    /// `raw` is already a valid label name.
    pub(super) clean: bool,
    /// Loki appended `_extracted` (collision with a stream label).
    pub(super) extracted: bool,
}

impl<'s> Name<'s> {
    pub(super) fn new(raw: &'s str) -> Self {
        Self {
            raw,
            clean: is_valid_label_name(raw),
            extracted: false,
        }
    }

    /// The Loki form's bytes: `_` for a leading digit, `_` for every
    /// character outside `[a-zA-Z0-9_]`, then the `_extracted` suffix.
    pub(super) fn bytes(&self) -> impl Iterator<Item = u8> + Clone + 's {
        let clean = self.clean;
        let lead =
            (!clean && self.raw.as_bytes().first().is_some_and(u8::is_ascii_digit)).then_some(b'_');
        // One `_` per non-ASCII character: its lead byte maps to `_` and its
        // continuation bytes (0x80..0xC0) are dropped, so no UTF-8 decoding.
        let body = self
            .raw
            .bytes()
            .filter(|b| !(0x80..0xC0).contains(b))
            .map(move |b| {
                if clean || b.is_ascii_alphanumeric() || b == b'_' {
                    b
                } else {
                    b'_'
                }
            });
        let suffix: &'static [u8] = if self.extracted { b"_extracted" } else { b"" };
        lead.into_iter().chain(body).chain(suffix.iter().copied())
    }

    /// Whether the Loki form of this name is `loki`.
    pub(super) fn is(&self, loki: &str) -> bool {
        if self.clean && !self.extracted {
            self.raw == loki
        } else {
            self.bytes().eq(loki.bytes())
        }
    }

    pub(super) fn cmp(&self, other: &Name<'_>) -> Ordering {
        if self.clean && other.clean && !self.extracted && !other.extracted {
            self.raw.cmp(other.raw)
        } else {
            self.bytes().cmp(other.bytes())
        }
    }

    /// Appends the Loki form to `out` (it is ASCII when not `clean`).
    pub(super) fn push_to(&self, out: &mut String) {
        if self.clean {
            out.push_str(self.raw);
            if self.extracted {
                out.push_str("_extracted");
            }
        } else {
            out.extend(self.bytes().map(char::from));
        }
    }

    pub(super) fn write(&self, out: &mut Vec<u8>) {
        if self.clean {
            out.extend_from_slice(self.raw.as_bytes());
            if self.extracted {
                out.extend_from_slice(b"_extracted");
            }
        } else {
            out.extend(self.bytes());
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Stream,
    Metadata,
    Parsed,
}

/// One label of a row.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lbl<'s> {
    pub(super) name: Name<'s>,
    pub(super) value: &'s str,
    pub(super) kind: Kind,
}
