//! Times as people in Brazil read them: the panel's pages and the CLI's
//! tables show the same `dd/mm/aaaa hh:mm` in Brasília time.

/// `at` (seconds since the epoch) as `dd/mm/aaaa hh:mm` in Brasília time
/// (UTC−3; Brazil has had no daylight-saving time since 2019); `—` for a
/// time out of range.
pub fn brasilia_time(at: i64) -> String {
    let offset = time::UtcOffset::from_hms(-3, 0, 0).unwrap_or(time::UtcOffset::UTC);
    match time::OffsetDateTime::from_unix_timestamp(at) {
        Ok(t) => {
            let t = t.to_offset(offset);
            format!("{:02}/{:02}/{} {:02}:{:02}", t.day(), u8::from(t.month()), t.year(), t.hour(), t.minute())
        }
        Err(_) => "—".into(),
    }
}

/// The Unix time a database writes as text: `2026-11-29 16:42:40+00`
/// (PostgreSQL), `2026-11-29T16:42:40Z` or `2026-11-29 16:42:40` (SQLite,
/// UTC), with optional fractions of a second and an offset of `±HH` or
/// `±HH:MM`; `None` for any other text.
pub fn timestamp_from_text(text: &str) -> Option<i64> {
    let text = text.trim();
    let all_digits = |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    let (date, rest) = (text.get(..10)?, text.get(10..)?);
    let mut parts = date.split('-');
    let (year, month, day) = (parts.next()?.parse::<i32>().ok()?, parts.next()?, parts.next()?);
    if !rest.starts_with([' ', 'T']) || !all_digits(date.get(..4)?, 4) || !all_digits(month, 2) || !all_digits(day, 2) {
        return None;
    }
    let month = time::Month::try_from(month.parse::<u8>().ok()?).ok()?;
    let date = time::Date::from_calendar_date(year, month, day.parse().ok()?).ok()?;
    let clock = rest.get(1..9)?;
    let mut hms = clock.split(':').map(|n| all_digits(n, 2).then(|| n.parse::<u8>().ok()).flatten());
    let at = time::Time::from_hms(hms.next()??, hms.next()??, hms.next()??).ok()?;
    // Fractions of a second, then the offset (none: UTC).
    let mut zone = rest.get(9..)?;
    if let Some(fraction) = zone.strip_prefix('.') {
        zone = fraction.trim_start_matches(|c: char| c.is_ascii_digit());
        if zone.len() == fraction.len() {
            return None;
        }
    }
    let offset_secs = match zone {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match zone.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
            if !(digits.len() == 2 || digits.len() == 4) || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let hours: i64 = digits[..2].parse().ok().filter(|h| *h <= 14)?;
            let minutes: i64 = digits.get(2..).filter(|m| !m.is_empty()).map_or(Some(0), |m| m.parse().ok())?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    Some(time::PrimitiveDateTime::new(date, at).assume_utc().unix_timestamp() - offset_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_timestamps_are_read_with_their_offset() {
        let at = 1_796_000_000; // 2026-11-29 ...
        let utc = time::OffsetDateTime::from_unix_timestamp(at).expect("time");
        let text = format!(
            "{}-{:02}-{:02} {:02}:{:02}:{:02}",
            utc.year(),
            u8::from(utc.month()),
            utc.day(),
            utc.hour(),
            utc.minute(),
            utc.second()
        );
        assert_eq!(timestamp_from_text(&text), Some(at));
        assert_eq!(timestamp_from_text(&format!("{text}+00")), Some(at));
        assert_eq!(timestamp_from_text(&format!("{}Z", text.replace(' ', "T"))), Some(at));
        assert_eq!(timestamp_from_text(&format!("{text}.123456+00:00")), Some(at));
        assert_eq!(timestamp_from_text(&format!("{text}-03")), Some(at + 3 * 3600));
        assert_eq!(timestamp_from_text(&format!("{text}+05:30")), Some(at - 5 * 3600 - 30 * 60));
        for junk in [
            "",
            "ana",
            "2026-11-29",
            "2026-13-01 00:00:00",
            "2026-11-29 25:00:00",
            "2026-11-29 10:00:00+x",
            "52998224725",
            "2026-11-29 10:00:00+123",
            "2026-+1-01 00:00:00",
            "2026-11-29 +1:00:00",
            "2026-11-29 10:00:00.",
            "2026-11-29 10:00:00+99",
        ] {
            assert_eq!(timestamp_from_text(junk), None, "{junk}");
        }
    }

    #[test]
    fn times_are_shown_in_brasilia() {
        assert_eq!(brasilia_time(0), "31/12/1969 21:00");
        assert_eq!(brasilia_time(1_764_072_000), "25/11/2025 09:00");
        assert_eq!(brasilia_time(i64::MAX), "—");
    }
}
