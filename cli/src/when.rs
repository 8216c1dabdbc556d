//! Times as a person reads them: ISO 8601 in the local time zone, to the second, with
//! its offset (`2026-12-06T21:30:24+01:00`). The daemon and `--json` keep Unix
//! milliseconds; every time the command line prints for a person goes through here.

use amber_core::Millis;
use chrono::{Local, SecondsFormat, TimeZone};

/// `t` (Unix milliseconds) in the local time zone, ISO 8601; the bare number when it is
/// not a time `chrono` can show.
pub(crate) fn local(t: Millis) -> String {
    match Local.timestamp_millis_opt(t).single() {
        Some(at) => at.to_rfc3339_opts(SecondsFormat::Secs, false),
        None => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_times_are_iso_8601_with_their_offset() {
        let t = 1_796_256_000_000; // 2026-12-03T00:00:00Z
        let s = local(t);
        let back = chrono::DateTime::parse_from_rfc3339(&s).expect("RFC 3339");
        assert_eq!(back.timestamp_millis(), t);
        assert_eq!(s.len(), "2026-12-03T00:00:00+00:00".len(), "{s}");
        assert_eq!(&s[10..11], "T");
        assert_eq!(local(i64::MAX), i64::MAX.to_string());
    }
}
