//! How sure a race verdict is: binomial bounds on the per-trial failure rate and the test that
//! decides whether two race counts differ by more than chance.
//!
//! Pure functions over counts; the distributions come from `statrs` (Beta quantiles for the
//! Clopper–Pearson interval) and `fishers_exact` (Fisher's exact test), not from hand-written
//! numerics.

use statrs::distribution::{Beta, Binomial, ContinuousCDF, DiscreteCDF};
use statrs::statistics::{Data, Median};

/// The median of `v` (the mean of the two middle values for an even count, `statrs`'s
/// definition); NaN for none.
pub fn median(v: &[f64]) -> f64 {
    Data::new(v.to_vec()).median()
}

/// The one-sided 95% upper bound on a per-trial probability after `n` failures in `t`
/// trials (Clopper–Pearson). For `n = 0` it is `1 − 0.05^(1/t)` (≈ 3/t, the "rule of three");
/// for `n > 0` the 0.95 quantile of Beta(n + 1, t − n).
///
/// Takes counts; returns a probability in [0, 1]. `t = 0` (nothing observed) returns 1.
/// Source: Clopper & Pearson (1934), Biometrika 26(4); Hanley & Lippman-Hand (1983), JAMA
/// 249(13) for the rule of three.
pub fn upper95(n: usize, t: usize) -> f64 {
    if t == 0 || n >= t {
        return 1.0;
    }
    if n == 0 {
        return 1.0 - 0.05f64.powf(1.0 / t as f64);
    }
    beta_quantile(n as f64 + 1.0, (t - n) as f64, 0.95)
}

/// The two-sided 95% Clopper–Pearson interval `[low, high]` for a per-trial probability after
/// `n` events in `t` trials: the 0.025 quantile of Beta(n, t − n + 1) and the 0.975 quantile
/// of Beta(n + 1, t − n), with 0 and 1 at the edges. `t = 0` returns `[0, 1]`.
pub fn interval95(n: usize, t: usize) -> [f64; 2] {
    if t == 0 {
        return [0.0, 1.0];
    }
    let n = n.min(t);
    let low = if n == 0 { 0.0 } else { beta_quantile(n as f64, (t - n) as f64 + 1.0, 0.025) };
    let high = if n == t { 1.0 } else { beta_quantile(n as f64 + 1.0, (t - n) as f64, 0.975) };
    [low, high]
}

fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    // shape parameters are ≥ 1 here, which Beta::new accepts
    Beta::new(a, b).map_or(1.0, |d| d.inverse_cdf(p).clamp(0.0, 1.0))
}

/// Fisher's exact test (two-tailed) of whether `a_hits` of `a_trials` and `b_hits` of
/// `b_trials` come from one rate. Returns the p-value in [0, 1]; counts larger than
/// `u32::MAX` are clamped. Source: Fisher (1922); the `fishers_exact` crate computes it.
pub fn fisher_p(a_hits: usize, a_trials: usize, b_hits: usize, b_trials: usize) -> f64 {
    let c = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    let table = [c(a_hits), c(a_trials.saturating_sub(a_hits)), c(b_hits), c(b_trials.saturating_sub(b_hits))];
    fishers_exact::fishers_exact(&table).map_or(1.0, |p| p.two_tail_pvalue.clamp(0.0, 1.0))
}

/// The one-sided exact binomial test of whether `hits` in `trials` is *below* the rate `p`:
/// returns P(X ≤ hits) for X ~ Binomial(trials, p), the p-value (small = significantly
/// below). `trials = 0` returns 1 (no evidence either way).
pub fn below_p(hits: usize, trials: usize, p: f64) -> f64 {
    if trials == 0 {
        return 1.0;
    }
    Binomial::new(p.clamp(0.0, 1.0), trials as u64).map_or(1.0, |b| b.cdf(hits.min(trials) as u64).clamp(0.0, 1.0))
}

/// The significance level below which two race counts are called different (the race-truth
/// issue: p < 0.001, so that a busy machine's noise does not fail a regression check).
pub const SIGNIFICANT_P: f64 = 0.001;

#[cfg(test)]
mod tests {
    use super::{below_p, fisher_p, interval95, upper95, SIGNIFICANT_P};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn zero_failures_follow_the_rule_of_three() {
        assert!(close(upper95(0, 100), 0.029_513, 1e-6), "{}", upper95(0, 100));
        assert!(close(upper95(0, 200), 0.014_867, 1e-6), "{}", upper95(0, 200));
        assert!(close(upper95(0, 1000), 0.002_991, 1e-6));
        assert_eq!(upper95(0, 0), 1.0);
        // the rule of three: about 3/t
        assert!(close(upper95(0, 300) * 300.0, 3.0, 0.03));
    }

    #[test]
    fn clopper_pearson_matches_published_values() {
        // R: binom.test(5, 100)$conf.int = 0.01643140 0.11283491
        let [lo, hi] = interval95(5, 100);
        assert!(close(lo, 0.016_431_4, 1e-6), "{lo}");
        assert!(close(hi, 0.112_834_9, 1e-6), "{hi}");
        // R: binom.test(0, 10)$conf.int = 0 0.3084971
        let [lo, hi] = interval95(0, 10);
        assert_eq!(lo, 0.0);
        assert!(close(hi, 0.308_497_1, 1e-6), "{hi}");
        assert_eq!(interval95(10, 10)[1], 1.0);
        // one-sided upper bound for 1/20: qbeta(0.95, 2, 19) = 0.2161058
        assert!(close(upper95(1, 20), 0.216_105_8, 1e-6), "{}", upper95(1, 20));
    }

    #[test]
    fn binomial_test_below_a_rate() {
        // R: pbinom(15, 20, 0.9) = 0.04317; pbinom(16, 20, 0.9) = 0.1329533
        assert!(close(below_p(15, 20, 0.9), 0.043_17, 1e-4), "{}", below_p(15, 20, 0.9));
        assert!(close(below_p(16, 20, 0.9), 0.132_953, 1e-5));
        assert_eq!(below_p(20, 20, 0.9), 1.0);
        assert_eq!(below_p(0, 0, 0.9), 1.0);
        // R: pbinom(1, 25, 0.2) = 0.02738
        assert!(close(below_p(1, 25, 0.2), 0.027_38, 1e-4));
    }

    #[test]
    fn fisher_matches_the_textbook_example() {
        // Fisher's exact test example (Wikipedia, "Fisher's exact test"): [[1, 9], [11, 3]],
        // two-tailed p = 0.002759
        let p = fisher_p(1, 10, 11, 14);
        assert!(close(p, 0.002_759, 1e-5), "{p}");
        // 0/200 against 1/200 is noise; 0/200 against 40/200 is not
        assert!(fisher_p(0, 200, 1, 200) > SIGNIFICANT_P);
        assert!(fisher_p(0, 200, 40, 200) < SIGNIFICANT_P);
        assert!(close(fisher_p(5, 100, 5, 100), 1.0, 1e-9));
    }
}
