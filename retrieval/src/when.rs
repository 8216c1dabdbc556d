//! Time expressions in a query ("last Saturday", "in April", "two weeks ago", "the past
//! few months"), resolved against the query's "now" into a window of time.
//!
//! Only the shapes of English time expressions are recognised; nothing here is tied to
//! any data set. A query with no such expression has no window.

use amber_core::Millis;

const DAY: Millis = 86_400_000;
const WEEKDAYS: [&str; 7] = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// A span of time named by the query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeWindow {
    /// Start (inclusive), ms since the epoch, UTC.
    pub from: Millis,
    /// End (inclusive).
    pub to: Millis,
    /// The words that named it.
    pub expression: String,
}

fn number(word: &str) -> Option<i64> {
    let n = match word {
        "a" | "an" | "one" => 1,
        "two" | "couple" => 2,
        "three" | "few" => 3,
        "four" | "several" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        w => return w.parse().ok().filter(|n| (1..=400).contains(n)),
    };
    Some(n)
}

fn unit_days(word: &str) -> Option<i64> {
    match word.trim_end_matches('s') {
        "day" => Some(1),
        "week" => Some(7),
        "month" => Some(31),
        "year" => Some(366),
        _ => None,
    }
}

use amber_core::calendar::{civil, days_from};

/// The time window named in `text`, relative to `now`, if any. Day-granular windows are
/// widened by a day on each side: "last Saturday" said late in the evening in one time
/// zone is another day in UTC.
pub fn time_window(text: &str, now: Millis) -> Option<TimeWindow> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let today = now.div_euclid(DAY);
    let window = |from_day: i64, to_day: i64, expr: String| TimeWindow {
        from: (from_day - 1) * DAY,
        to: (to_day + 2) * DAY - 1,
        expression: expr,
    };
    for i in 0..words.len() {
        let w = words[i];
        let next = words.get(i + 1).copied().unwrap_or("");
        let next2 = words.get(i + 2).copied().unwrap_or("");
        match w {
            "yesterday" => return Some(window(today - 1, today - 1, w.into())),
            "today" | "tonight" => return Some(window(today, today, w.into())),
            "last" | "past" | "previous" | "recent" => {
                // last saturday
                if let Some(wd) = WEEKDAYS.iter().position(|d| *d == next) {
                    let now_wd = (today + 3).rem_euclid(7); // 1970-01-01 was a Thursday (3)
                    let mut back = (now_wd - wd as i64).rem_euclid(7);
                    if back == 0 {
                        back = 7;
                    }
                    return Some(window(today - back, today - back, format!("{w} {next}")));
                }
                // last week / past month / last year
                if let Some(days) = unit_days(next).filter(|_| !next.ends_with('s')) {
                    return Some(window(today - days, today, format!("{w} {next}")));
                }
                // past two weeks / last few months / past couple of days
                let (n_word, u_word) = if next2 == "of" {
                    (next, words.get(i + 3).copied().unwrap_or(""))
                } else {
                    (next, next2)
                };
                if let (Some(n), Some(days)) = (number(n_word), unit_days(u_word)) {
                    return Some(window(today - n * days, today, format!("{w} {n_word} {u_word}")));
                }
            }
            "ago" if i >= 2 => {
                // two weeks ago / 3 days ago / a month ago: that point, give or take a unit
                let (n_word, u_word) = (words[i - 2], words[i - 1]);
                if let (Some(n), Some(days)) = (number(n_word), unit_days(u_word)) {
                    let at = today - n * days;
                    let slack = days.min(31);
                    return Some(window(at - slack, at + slack, format!("{n_word} {u_word} ago")));
                }
            }
            "in" | "during" | "since" | "throughout" => {
                if let Some(m) = MONTHS.iter().position(|x| *x == next) {
                    // the latest such month that is not after now
                    let (y, now_m, _) = civil(today);
                    let m = m as u32 + 1;
                    let year = if m <= now_m { y } else { y - 1 };
                    let start = days_from(year, m, 1)?;
                    let end =
                        if m == 12 { days_from(year + 1, 1, 1)? } else { days_from(year, m + 1, 1)? } - 1;
                    let end = if w == "since" { today } else { end };
                    return Some(window(start, end, format!("{w} {next}")));
                }
            }
            "this" => {
                if let Some(days) = unit_days(next).filter(|_| !next.ends_with('s')) {
                    return Some(window(today - days, today, format!("{w} {next}")));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn days_from(y: i64, m: u32, d: u32) -> i64 {
        amber_core::calendar::days_from(y, m, d).unwrap()
    }

    // 2023-05-30 (a Tuesday) 23:40 UTC
    const NOW: Millis = 1_685_490_000_000;

    fn days(w: &TimeWindow) -> (i64, i64) {
        (w.from.div_euclid(DAY), w.to.div_euclid(DAY))
    }

    #[test]
    fn recognises_common_expressions() {
        let today = days_from(2023, 5, 30);
        let w = time_window("Who gave me jewelry last Saturday?", NOW).unwrap();
        // the Saturday before Tuesday 30 May is the 27th; widened by a day each side
        assert_eq!(days(&w), (days_from(2023, 5, 26), days_from(2023, 5, 28)));
        let w = time_window("How many days did I spend at workshops in April?", NOW).unwrap();
        assert_eq!(days(&w), (days_from(2023, 3, 31), days_from(2023, 5, 1)));
        let w = time_window("what did I buy in the past two months", NOW).unwrap();
        assert_eq!(days(&w), (today - 62 - 1, today + 1));
        let w = time_window("the last few months", NOW).unwrap();
        assert_eq!(days(&w), (today - 93 - 1, today + 1));
        let w = time_window("a couple of weeks ago", NOW);
        assert!(w.is_none(), "'a couple of weeks ago' has no number right before the unit");
        let w = time_window("two weeks ago I went hiking", NOW).unwrap();
        assert_eq!(days(&w), (today - 21 - 1, today - 7 + 1));
        let w = time_window("what happened yesterday", NOW).unwrap();
        assert_eq!(days(&w), (today - 2, today));
        // a month later than now's month means last year's
        let w = time_window("in December", NOW).unwrap();
        assert_eq!(days(&w).0, days_from(2022, 12, 1) - 1);
    }

    #[test]
    fn no_expression_no_window() {
        for q in
            ["What breed is my dog?", "How long have I been in my current role?", "may I ask", "the last one"]
        {
            assert_eq!(time_window(q, NOW), None, "{q}");
        }
    }
}
