//! The request mix: the routes under load, their weights, and the scheduler
//! that decides which route each scheduled request goes to.

use std::fmt;
use std::str::FromStr;

/// A route the load generator sends requests to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Route {
    /// `POST /api/token/verify/` with an access token.
    Verify,
    /// `POST /api/token/refresh/` with the newest refresh token of a pool slot.
    Refresh,
    /// `POST /api/perfil/dados/` with an OAuth2 access token holding every scope.
    Profile,
    /// `POST /api/token/pair/` with a seeded user's right password.
    Pair,
}

impl Route {
    /// Every route, in the order of the report.
    pub const ALL: [Route; 4] = [Route::Verify, Route::Refresh, Route::Profile, Route::Pair];

    /// The name used in `--mix` and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Route::Verify => "verify",
            Route::Refresh => "refresh",
            Route::Profile => "profile",
            Route::Pair => "pair",
        }
    }

    /// The path the route is served at.
    pub fn path(self) -> &'static str {
        match self {
            Route::Verify => "/api/token/verify/",
            Route::Refresh => "/api/token/refresh/",
            Route::Profile => "/api/perfil/dados/",
            Route::Pair => "/api/token/pair/",
        }
    }

    /// Position in [`Route::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Relative weights of the routes, e.g. `verify=70,refresh=10,profile=15,pair=5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    weights: [u32; 4],
}

impl Mix {
    /// The route's weight.
    pub fn weight(&self, route: Route) -> u32 {
        self.weights[route.index()]
    }

    /// The route's share of all requests, between 0 and 1.
    pub fn share(&self, route: Route) -> f64 {
        f64::from(self.weight(route)) / f64::from(self.total())
    }

    /// Sum of the weights (never zero).
    pub fn total(&self) -> u32 {
        self.weights.iter().sum()
    }

    /// A fresh scheduler for this mix.
    pub fn scheduler(&self) -> Scheduler {
        Scheduler { weights: self.weights.map(i64::from), current: [0; 4], total: i64::from(self.total()) }
    }
}

impl Default for Mix {
    /// The soak's mix: verify 70 %, refresh 10 %, profile 15 %, pair 5 %.
    fn default() -> Self {
        Mix { weights: [70, 10, 15, 5] }
    }
}

impl FromStr for Mix {
    type Err = String;

    /// `route=weight` pairs separated by commas; a route left out weighs 0.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut weights = [0u32; 4];
        let mut seen = [false; 4];
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, weight) = part.split_once('=').ok_or_else(|| format!("{part:?}: expected route=weight"))?;
            let route = Route::ALL
                .into_iter()
                .find(|r| r.name() == name.trim())
                .ok_or_else(|| format!("{:?}: unknown route (verify, refresh, profile, pair)", name.trim()))?;
            if seen[route.index()] {
                return Err(format!("{route} appears twice"));
            }
            seen[route.index()] = true;
            weights[route.index()] =
                weight.trim().parse().map_err(|_| format!("{part:?}: the weight must be a whole number"))?;
        }
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return Err("at least one route needs a positive weight".into());
        }
        if total > 1_000_000 {
            return Err("the weights add up to more than 1,000,000".into());
        }
        Ok(Mix { weights })
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = Route::ALL
            .into_iter()
            .filter(|&r| self.weight(r) > 0)
            .map(|r| format!("{}={}", r.name(), self.weight(r)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Smooth weighted round-robin (as nginx balances upstreams): deterministic,
/// exact proportions in every run of `total` consecutive picks, and each
/// route's picks spread evenly rather than in bursts.
#[derive(Debug, Clone)]
pub struct Scheduler {
    weights: [i64; 4],
    current: [i64; 4],
    total: i64,
}

impl Scheduler {
    /// The route of the next scheduled request.
    pub fn next_route(&mut self) -> Route {
        let mut best = 0;
        for i in 0..self.weights.len() {
            self.current[i] += self.weights[i];
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= self.total;
        Route::ALL[best]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(scheduler: &mut Scheduler, picks: usize) -> [usize; 4] {
        let mut counts = [0; 4];
        for _ in 0..picks {
            counts[scheduler.next_route().index()] += 1;
        }
        counts
    }

    #[test]
    fn the_default_mix_is_the_issues_proportions() {
        let mix = Mix::default();
        assert_eq!(mix.to_string(), "verify=70,refresh=10,profile=15,pair=5");
        assert_eq!("verify=70,refresh=10,profile=15,pair=5".parse::<Mix>(), Ok(mix));
        assert!((mix.share(Route::Profile) - 0.15).abs() < 1e-12);
    }

    #[test]
    fn the_scheduler_picks_routes_in_the_mix_proportions() {
        let mut scheduler = Mix::default().scheduler();
        assert_eq!(counts(&mut scheduler, 100_000), [70_000, 10_000, 15_000, 5_000]);
    }

    #[test]
    fn every_window_of_one_cycle_holds_the_exact_proportions() {
        // Not only the totals: any 100 consecutive requests (wherever the
        // measurement window starts) hold 70/10/15/5.
        let mut scheduler = Mix::default().scheduler();
        let picks: Vec<Route> = (0..1_000).map(|_| scheduler.next_route()).collect();
        for window in picks.windows(100) {
            let mut counts = [0; 4];
            for route in window {
                counts[route.index()] += 1;
            }
            assert_eq!(counts, [70, 10, 15, 5]);
        }
    }

    #[test]
    fn a_small_share_is_spread_out_not_sent_in_a_burst() {
        let mut scheduler = Mix::default().scheduler();
        let pairs: Vec<usize> = (0..1_000).filter(|_| scheduler.next_route() == Route::Pair).collect();
        let gaps: Vec<usize> = pairs.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(pairs.len(), 50);
        assert!(gaps.iter().all(|&g| g == 20), "{gaps:?}");
    }

    #[test]
    fn uneven_weights_keep_their_proportions() {
        let mix: Mix = "verify=3, pair=1, profile=2".parse().expect("valid mix");
        assert_eq!(mix.weight(Route::Refresh), 0);
        let mut scheduler = mix.scheduler();
        assert_eq!(counts(&mut scheduler, 6_000), [3_000, 0, 2_000, 1_000]);
    }

    #[test]
    fn a_single_route_takes_every_request() {
        let mut scheduler = "profile=1".parse::<Mix>().expect("valid mix").scheduler();
        assert_eq!(counts(&mut scheduler, 50), [0, 0, 50, 0]);
    }

    #[test]
    fn malformed_mixes_are_refused_with_a_reason() {
        for (text, reason) in [
            ("", "positive weight"),
            ("verify=0", "positive weight"),
            ("verify", "route=weight"),
            ("login=5", "unknown route"),
            ("verify=-1", "whole number"),
            ("verify=1.5", "whole number"),
            ("verify=1,verify=2", "twice"),
        ] {
            let error = text.parse::<Mix>().expect_err(text);
            assert!(error.contains(reason), "{text:?}: {error}");
        }
    }
}
