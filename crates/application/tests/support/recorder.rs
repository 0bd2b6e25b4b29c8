//! A recorder of the `metrics` crate that keeps every series in memory, so
//! that a test reads what the use cases recorded through `Metrics`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use credencial_application::Metrics;
use metrics::{Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit};

/// The samples of one histogram.
#[derive(Default)]
struct Samples(Mutex<Vec<f64>>);

impl HistogramFn for Samples {
    fn record(&self, value: f64) {
        self.0.lock().expect("lock").push(value);
    }
}

/// Every series registered, by name and labels (`name{a=x,b=y}`, labels
/// sorted).
#[derive(Clone, Default)]
pub struct Recorded {
    counters: Arc<Mutex<HashMap<String, Arc<AtomicU64>>>>,
    gauges: Arc<Mutex<HashMap<String, Arc<AtomicU64>>>>,
    histograms: Arc<Mutex<HashMap<String, Arc<Samples>>>>,
}

fn id(key: &Key) -> String {
    let mut labels: Vec<String> = key.labels().map(|l| format!("{}={}", l.key(), l.value())).collect();
    labels.sort();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

fn id_of(name: &str, labels: &[(&str, &str)]) -> String {
    let mut labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    labels.sort();
    format!("{name}{{{}}}", labels.join(","))
}

impl Recorder for Recorded {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::clone(self.counters.lock().expect("lock").entry(id(key)).or_default()))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::clone(self.gauges.lock().expect("lock").entry(id(key)).or_default()))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::clone(self.histograms.lock().expect("lock").entry(id(key)).or_default()))
    }
}

impl Recorded {
    /// Metrics recording into a new in-memory recorder, and the recorder.
    pub fn metrics() -> (Metrics, Self) {
        let recorded = Self::default();
        (Metrics::recording(Arc::new(recorded.clone()), None), recorded)
    }

    /// The value of the counter `name{labels}`; panics if it was never
    /// registered.
    pub fn counter(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        let id = id_of(name, labels);
        let counters = self.counters.lock().expect("lock");
        counters.get(&id).unwrap_or_else(|| panic!("no counter {id}")).load(Ordering::SeqCst)
    }

    /// The value of the gauge `name{labels}`.
    pub fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let id = id_of(name, labels);
        let gauges = self.gauges.lock().expect("lock");
        f64::from_bits(gauges.get(&id).unwrap_or_else(|| panic!("no gauge {id}")).load(Ordering::SeqCst))
    }

    /// The samples of the histogram `name{labels}`.
    pub fn histogram(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        let id = id_of(name, labels);
        let histograms = self.histograms.lock().expect("lock");
        let samples =
            histograms.get(&id).unwrap_or_else(|| panic!("no histogram {id}")).0.lock().expect("lock").clone();
        samples
    }
}
