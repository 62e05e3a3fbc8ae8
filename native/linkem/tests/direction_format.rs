//! linkem's link direction held to its schema (../direction-format.json), which ITB's
//! Python writes (tests/unit/test_direction_format.py) and itb-sim reads
//! (tests/sim/test_sim_direction_format.py): a field renamed there fails here.

use linkem::config::{Config, DirConfig, LossConfig, LossModel, Update};
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn schema() -> Value {
    serde_json::from_str(include_str!("../direction-format.json")).expect("the schema is JSON")
}

fn properties(def: &str) -> BTreeSet<String> {
    schema()["$defs"][def]["properties"].as_object().expect("properties").keys().cloned().collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().expect("an object").keys().cloned().collect()
}

#[test]
fn a_configured_direction_has_exactly_the_schemas_fields() {
    let d = serde_json::to_value(DirConfig::default()).unwrap();
    assert_eq!(keys(&d), properties("direction"));
    assert_eq!(keys(&d["loss"]), properties("loss"));
}

#[test]
fn every_loss_model_of_the_schema_is_one_of_linkems_and_back() {
    let models: BTreeSet<String> = schema()["$defs"]["loss"]["properties"]["model"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let ours: BTreeSet<String> = [LossModel::None, LossModel::Bernoulli, LossModel::GilbertElliott]
        .iter()
        .map(|m| serde_json::to_value(m).unwrap().as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ours);
}

#[test]
fn a_direction_written_with_the_schemas_fields_is_read_as_written() {
    // 100 Mbit/s, 10 ms, a 100-packet queue, Gilbert-Elliott loss
    let dir = json!({"rate_bps": 100_000_000, "delay_us": 10_000, "queue_bytes": null,
                     "queue_packets": 100, "loss": {"model": "gilbert_elliott", "p": 0.01,
                     "r": 0.5, "loss_good": 0.0, "loss_bad": 0.2}});
    assert_eq!(keys(&dir), properties("direction"));
    let conf = json!({"interfaces": ["a0", "b0"], "log_dir": "/tmp/x",
                      "directions": {"ab": dir, "ba": dir}});
    let c = Config::parse(&conf.to_string()).expect("read");
    let ab = &c.directions.ab;
    assert_eq!(
        (ab.rate_bps, ab.delay_us, ab.queue_bytes, ab.queue_packets),
        (Some(100_000_000), 10_000, None, Some(100))
    );
    assert_eq!(
        ab.loss,
        LossConfig { model: LossModel::GilbertElliott, p: 0.01, r: 0.5, loss_good: 0.0, loss_bad: 0.2 }
    );
}

#[test]
fn a_field_the_schema_has_not_is_refused_in_a_configuration() {
    let dir = json!({"rate": 100, "delay_us": 0, "queue_bytes": null, "queue_packets": null,
                     "loss": {"model": "none", "p": 0.0, "r": 1.0, "loss_good": 0.0, "loss_bad": 1.0}});
    let conf = json!({"interfaces": ["a0", "b0"], "log_dir": "/tmp/x", "directions": {"ab": dir, "ba": dir}});
    let err = Config::parse(&conf.to_string()).unwrap_err();
    assert!(err.contains("unknown field `rate`"), "{err}");
}

#[test]
fn an_update_takes_every_field_of_the_schemas_update_and_no_other() {
    let sample = json!({"dir": "ba", "rate_bps": 5_000_000, "delay_us": 2_000, "queue_bytes": 10_000,
                        "queue_packets": null, "loss": {"model": "bernoulli", "p": 0.001, "r": 1.0,
                        "loss_good": 0.0, "loss_bad": 1.0}});
    assert_eq!(keys(&sample), properties("update"));
    let u = Update::parse(&sample.to_string()).expect("an update");
    assert_eq!(u.dir, 1);
    assert_eq!(
        (u.rate_bps, u.delay_us, u.queue_bytes, u.queue_packets),
        (Some(Some(5_000_000)), Some(2_000), Some(Some(10_000)), Some(None))
    );
    let err = Update::parse(r#"{"dir": "ab", "rate": 5}"#).unwrap_err();
    assert!(err.contains("unknown field \"rate\""), "{err}");
}
