//! Values that are valid but probably a unit slip (kbit/s given as bit/s,
//! seconds as milliseconds): warnings, not errors, each naming its field.
//! The run goes ahead; Python issues each as an `ImplausibleValue` warning,
//! which can be silenced per field or all at once.

use super::check::FieldError;
use super::document::Scenario;
use crate::net::dynamics::spec::Schedule;

/// A link slower than this (10 kbit/s) is probably given in kbit/s.
pub const MIN_PLAUSIBLE_RATE_BPS: f64 = 10e3;
/// A propagation delay below this (0.1 ms, 20 km of fibre) but above zero
/// is probably given in seconds.
pub const MIN_PLAUSIBLE_DELAY_MS: f64 = 0.1;
/// A link that cannot send one packet of this size within the run carries
/// nothing the run can measure.
pub const FULL_PACKET_BYTES: f64 = 1500.0;

/// The scenario's implausible values (the scenario is valid).
pub fn check(s: &Scenario) -> Vec<FieldError> {
    let mut w = Vec::new();
    for (i, l) in s.links.iter().enumerate() {
        let mut dirs = vec![(
            format!("links[{i}]"),
            l.rate_bps.as_ref(),
            Some(&l.delay_ms),
        )];
        for (side, d) in [("ab", &l.ab), ("ba", &l.ba)] {
            if let Some(d) = d {
                dirs.push((
                    format!("links[{i}].{side}"),
                    d.rate_bps.as_ref(),
                    d.delay_ms.as_ref(),
                ));
            }
        }
        for (p, rate, delay) in dirs {
            // A schedule warns once, on its lowest value.
            let lowest = |x: &Schedule| x.values().into_iter().fold(f64::INFINITY, f64::min);
            if let Some(r) = rate.map(lowest) {
                rate_warnings(&p, r, s.duration_s, &mut w);
            }
            let small = |d: &f64| *d > 0.0 && *d < MIN_PLAUSIBLE_DELAY_MS;
            let tiny = delay.and_then(|d| d.values().into_iter().find(small));
            if let Some(d) = tiny {
                let msg = format!(
                    "{d} ms is below {MIN_PLAUSIBLE_DELAY_MS} ms of propagation delay: seconds given as milliseconds?"
                );
                w.push(FieldError::new(format!("{p}.delay_ms"), msg));
            }
        }
    }
    w
}

fn rate_warnings(p: &str, r: f64, duration_s: f64, w: &mut Vec<FieldError>) {
    if r < MIN_PLAUSIBLE_RATE_BPS {
        let msg = format!(
            "{r} bit/s is below {} kbit/s: kbit/s or Mbit/s given as bit/s?",
            MIN_PLAUSIBLE_RATE_BPS / 1e3
        );
        w.push(FieldError::new(format!("{p}.rate_bps"), msg));
    } else if r * duration_s / 8.0 < FULL_PACKET_BYTES {
        let msg = format!(
            "at {r} bit/s the link cannot send one {FULL_PACKET_BYTES}-byte packet in the run's {duration_s} s"
        );
        w.push(FieldError::new(format!("{p}.rate_bps"), msg));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(link: serde_json::Value, duration_s: f64) -> Vec<String> {
        let v = serde_json::json!({"duration_s": duration_s, "nodes": [{"name": "a"}, {"name": "b"}],
                                   "links": [link]});
        let s: Scenario = serde_json::from_value(v).expect("a scenario");
        check(&s).into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn unit_slips_are_flagged_at_their_field_and_ordinary_values_are_not() {
        let l =
            |r: f64, d: f64| serde_json::json!({"a": "a", "b": "b", "rate_bps": r, "delay_ms": d});
        assert!(warnings(l(2e6, 10.0), 10.0).is_empty());
        assert!(warnings(l(10e3, 0.1), 10.0).is_empty());
        assert!(warnings(l(1e6, 0.0), 10.0).is_empty());
        assert_eq!(warnings(l(2000.0, 10.0), 10.0), ["links[0].rate_bps"]);
        assert_eq!(warnings(l(1e6, 0.04), 10.0), ["links[0].delay_ms"]);
        // 11 kbit/s for 1 s is 1375 bytes: not one full packet.
        assert_eq!(warnings(l(11e3, 5.0), 1.0), ["links[0].rate_bps"]);
        // 12 kbit/s for 1 s is exactly one.
        assert!(warnings(l(12e3, 5.0), 1.0).is_empty());
        let mut one_way = l(1e6, 10.0);
        one_way["ba"] = serde_json::json!({"rate_bps": 500.0});
        assert_eq!(warnings(one_way, 10.0), ["links[0].ba.rate_bps"]);
    }
}
