//! Calendar days of times (UTC, proleptic Gregorian), through `chrono`: the one place
//! Amber turns a time into a date or a date into days.

use chrono::{DateTime, Datelike, NaiveDate, TimeDelta};

use crate::Millis;

/// A day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

fn epoch() -> NaiveDate {
    DateTime::UNIX_EPOCH.date_naive()
}

/// Days since 1970-01-01 of a date; None when there is no such date.
pub fn days_from(year: i64, month: u32, day: u32) -> Option<i64> {
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    Some((date - epoch()).num_days())
}

/// (year, month 1-12, day) of a day since 1970-01-01 (clamped to the dates `chrono`
/// knows, some 260,000 years either way).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let date = TimeDelta::try_days(days).and_then(|d| epoch().checked_add_signed(d)).unwrap_or(if days < 0 {
        NaiveDate::MIN
    } else {
        NaiveDate::MAX
    });
    (i64::from(date.year()), date.month(), date.day())
}

/// `YYYY-MM-DD` (UTC) of a time.
pub fn date(t: Millis) -> String {
    let (y, m, d) = civil(t.div_euclid(DAY_MS));
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_dates_round_trip() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_796_256_000_000 - 1), "2026-12-02");
        assert_eq!(date(-86_400_000), "1969-12-31");
        assert_eq!(days_from(2023, 5, 30), Some(1_685_490_000_000_i64.div_euclid(DAY_MS)));
        assert_eq!(days_from(2023, 2, 29), None);
        for d in [-1000, 0, 59, 60, 10_000, 19_507, 30_000] {
            let (y, m, dd) = civil(d);
            assert_eq!(days_from(y, m, dd), Some(d));
        }
    }
}
