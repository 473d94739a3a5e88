//! Dates as the Info dictionary (PDF date strings) and XMP (ISO 8601) write them.

use std::time::{SystemTime, UNIX_EPOCH};

/// A date as PDF and XMP write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// Offset from UTC in minutes.
    offset: i32,
}

impl Date {
    /// `now` in UTC.
    pub fn utc(now: SystemTime) -> Self {
        let secs = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            offset: 0,
        }
    }

    /// A PDF date string (`D:YYYYMMDDHHmmSSOHH'mm'`, the later parts optional); `None` when
    /// it does not parse or is out of range.
    pub fn parse_pdf(s: &str) -> Option<Self> {
        let s = s.trim().strip_prefix("D:").unwrap_or(s.trim());
        let digits = |from: usize, len: usize| -> Option<u32> {
            let part = s.get(from..from + len)?;
            part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
        };
        let year = digits(0, 4)? as i32;
        let field = |from: usize, default: u32| if s.len() > from { digits(from, 2) } else { Some(default) };
        let (month, day) = (field(4, 1)?, field(6, 1)?);
        let (hour, minute, second) = (field(8, 0)?, field(10, 0)?, field(12, 0)?);
        let offset = match s.as_bytes().get(14) {
            None | Some(b'Z') => 0,
            Some(&sign @ (b'+' | b'-')) => {
                let hh = digits(15, 2)? as i32;
                let mm = s
                    .get(17..)
                    .map(|r| r.trim_start_matches('\''))
                    .and_then(|r| r.get(..2))
                    .map_or(Some(0), |r| if r.bytes().all(|c| c.is_ascii_digit()) { r.parse().ok() } else { None })?;
                let v = hh * 60 + mm;
                if sign == b'-' {
                    -v
                } else {
                    v
                }
            }
            Some(_) => return None,
        };
        let ok = (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second < 60
            && offset.abs() < 24 * 60;
        ok.then_some(Date { year, month, day, hour, minute, second, offset })
    }

    fn offset_parts(&self) -> (char, i32, i32) {
        (if self.offset < 0 { '-' } else { '+' }, self.offset.abs() / 60, self.offset.abs() % 60)
    }

    /// `D:YYYYMMDDHHmmSS+HH'mm'`.
    pub fn pdf(&self) -> String {
        let (sign, h, m) = self.offset_parts();
        format!(
            "D:{:04}{:02}{:02}{:02}{:02}{:02}{sign}{h:02}'{m:02}'",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// ISO 8601, as XMP writes dates.
    pub fn xmp(&self) -> String {
        let (sign, h, m) = self.offset_parts();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{sign}{h:02}:{m:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_pdf_date_with_its_offset_becomes_the_same_instant_in_xmp() {
        let d = Date::parse_pdf("D:20240229235958+05'30'").unwrap();
        assert_eq!(d.xmp(), "2024-02-29T23:59:58+05:30");
        assert_eq!(d.pdf(), "D:20240229235958+05'30'");
        assert_eq!(Date::parse_pdf("D:2019").unwrap().xmp(), "2019-01-01T00:00:00+00:00");
        assert_eq!(Date::parse_pdf("D:20190102030405Z").unwrap().xmp(), "2019-01-02T03:04:05+00:00");
        assert_eq!(Date::parse_pdf("D:20190102030405-08'00").unwrap().xmp(), "2019-01-02T03:04:05-08:00");
    }

    #[test]
    fn dates_that_do_not_parse_are_refused() {
        for bad in ["", "D:", "yesterday", "D:20191302", "D:20190132", "D:2019010225", "D:20190102030405X"] {
            assert_eq!(Date::parse_pdf(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_utc_date_of_a_unix_time_is_the_calendar_one() {
        let t = UNIX_EPOCH + Duration::from_secs(1_709_251_199); // 2024-02-29T23:59:59Z
        assert_eq!(Date::utc(t).xmp(), "2024-02-29T23:59:59+00:00");
        assert_eq!(Date::utc(UNIX_EPOCH).pdf(), "D:19700101000000+00'00'");
    }
}
