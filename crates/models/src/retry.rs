//! Retry decisions: what counts as transient, how long to wait, and the
//! server hints (`x-should-retry`, `retry-after-ms`, `retry-after`, "try
//! again in N s") that override the backoff.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use crate::types::{ModelError, RetryPolicy};

/// How one attempt ended when it did not produce a response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// Worth sending the request again. `delay` is what the server asked
    /// for, if anything; otherwise the backoff applies.
    Transient {
        reason: String,
        delay: Option<Duration>,
    },
    /// Retrying cannot help.
    Fatal(ModelError),
}

impl Failure {
    pub(crate) fn transient(reason: impl Into<String>) -> Failure {
        Failure::Transient {
            reason: reason.into(),
            delay: None,
        }
    }
}

/// Exponential backoff for the retry numbered `retry` (0 = the first retry):
/// `min(base·2ⁿ, max)` minus 0–25 % jitter, so that clients that failed
/// together do not come back together.
pub(crate) fn backoff_delay(policy: &RetryPolicy, retry: u32) -> Duration {
    let factor = 1u64.checked_shl(retry.min(32)).unwrap_or(u64::MAX);
    let full = policy
        .base_delay_ms
        .saturating_mul(factor)
        .min(policy.max_delay_ms);
    let jitter = rand::random::<f64>() * 0.25;
    Duration::from_millis((full as f64 * (1.0 - jitter)).round() as u64)
}

/// What the response headers say about retrying.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct RetryHints {
    /// `x-should-retry: true|false`, which beats the status-code rules.
    pub should_retry: Option<bool>,
    /// From `retry-after-ms`, else `retry-after`.
    pub delay: Option<Duration>,
}

pub(crate) fn retry_hints(headers: &HeaderMap) -> RetryHints {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let should_retry = match text("x-should-retry") {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    // Precedence as in the OpenAI and Anthropic SDKs: the millisecond
    // header is the more precise one.
    let delay = text("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_millis(ms.round() as u64))
        .or_else(|| text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())));
    RetryHints {
        should_retry,
        delay,
    }
}

/// `Retry-After` is either delta-seconds or an HTTP-date.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the IMF-fixdate form of an HTTP-date (`Sun, 06 Nov 1994
/// 08:49:37 GMT`), the only form servers are allowed to send (RFC 9110).
pub(crate) fn parse_http_date(value: &str) -> Option<SystemTime> {
    let rest = value.split_once(", ")?.1;
    let mut parts = rest.split_ascii_whitespace();
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm), so no date crate is needed for one header.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Finds "try again in 11.054s" (or "in 20ms", "in 1m30s", "in 2 seconds")
/// in an error message: OpenAI puts its rate-limit delay only there.
pub(crate) fn parse_try_again_delay(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let start = lower.find("try again in")? + "try again in".len();
    parse_duration_text(&lower[start..])
}

/// Parses a Go-style duration at the start of `text`, tolerating spaces
/// and spelled-out units: `1m30s`, `11.054s`, `250ms`, `3 seconds`.
fn parse_duration_text(text: &str) -> Option<Duration> {
    let mut rest = text.trim_start();
    let mut total = 0.0f64;
    let mut matched = false;
    loop {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            break;
        }
        let Ok(value) = rest[..num_len].parse::<f64>() else {
            break;
        };
        let after = rest[num_len..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let scale = match &after[..unit_len] {
            "ms" | "msec" | "millisecond" | "milliseconds" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hour" | "hours" => 3600.0,
            _ => break,
        };
        total += value * scale;
        matched = true;
        rest = &after[unit_len..];
    }
    (matched && total.is_finite()).then(|| Duration::from_secs_f64(total))
}

/// HTTP statuses worth retrying: timeouts, lock conflicts, rate limits,
/// server errors and Anthropic's 529 "overloaded".
pub(crate) fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn policy() -> RetryPolicy {
        RetryPolicy {
            base_delay_ms: 100,
            max_delay_ms: 1_000,
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn backoff_doubles_caps_and_jitters_down_at_most_a_quarter() {
        for _ in 0..50 {
            let d0 = backoff_delay(&policy(), 0).as_millis();
            assert!((75..=100).contains(&d0), "{d0}");
            let d2 = backoff_delay(&policy(), 2).as_millis();
            assert!((300..=400).contains(&d2), "{d2}");
            let d9 = backoff_delay(&policy(), 9).as_millis();
            assert!((750..=1000).contains(&d9), "{d9}");
            let huge = backoff_delay(&policy(), 200).as_millis();
            assert!((750..=1000).contains(&huge), "{huge}");
        }
    }

    #[test]
    fn try_again_text_in_its_usual_shapes() {
        let p = parse_try_again_delay;
        let ms = |s: &str| p(s).map(|d| d.as_millis());
        assert_eq!(
            ms("Rate limit reached ... Please try again in 11.054s. Visit ..."),
            Some(11_054)
        );
        assert_eq!(ms("Please try again in 20ms."), Some(20));
        assert_eq!(ms("Try again in 1m30s"), Some(90_000));
        assert_eq!(ms("please TRY AGAIN IN 2 seconds"), Some(2_000));
        assert_eq!(ms("try again in 6m0s."), Some(360_000));
        assert_eq!(ms("try again later"), None);
        assert_eq!(ms("no hint here"), None);
    }

    #[test]
    fn retry_after_seconds_and_http_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // 06 Nov 1994 08:49:37
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("1.5", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        // A date in the past means "now".
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn http_date_matches_known_epochs() {
        let secs = |s: &str| {
            parse_http_date(s)
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        assert_eq!(secs("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
        assert_eq!(secs("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777);
        assert_eq!(secs("Tue, 29 Feb 2028 12:00:00 GMT"), 1_835_438_400);
        assert!(parse_http_date("Sun, 06 Foo 1994 08:49:37 GMT").is_none());
        assert!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST").is_none());
    }

    #[test]
    fn header_precedence() {
        let mut h = HeaderMap::new();
        let mut set = |k: &'static str, v: &'static str| {
            h.insert(HeaderName::from_static(k), HeaderValue::from_static(v));
        };
        set("retry-after", "3");
        set("retry-after-ms", "250");
        set("x-should-retry", "false");
        let hints = retry_hints(&h);
        assert_eq!(hints.should_retry, Some(false));
        assert_eq!(hints.delay, Some(Duration::from_millis(250)));

        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_hints(&h).delay, Some(Duration::from_secs(3)));
        assert_eq!(retry_hints(&h).should_retry, None);
        assert_eq!(retry_hints(&HeaderMap::new()), RetryHints::default());
    }

    #[test]
    fn transient_statuses() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(is_transient_status(s), "{s}");
        }
        for s in [400, 401, 402, 403, 404, 413, 422] {
            assert!(!is_transient_status(s), "{s}");
        }
    }
}
