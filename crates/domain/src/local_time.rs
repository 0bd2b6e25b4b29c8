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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_brasilia() {
        assert_eq!(brasilia_time(0), "31/12/1969 21:00");
        assert_eq!(brasilia_time(1_764_072_000), "25/11/2025 09:00");
        assert_eq!(brasilia_time(i64::MAX), "—");
    }
}
