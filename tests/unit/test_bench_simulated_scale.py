"""A simulated benchmark's classes (docs/simulation.md): every class at the documents'
C = 10 Gbit/s — K = 10 unscaled (C_a = 1 Gbit/s), K = 1000 at C_a = 10 Mbit/s, with no
cap for classes of many sources — and every BU source a transfer of its own."""

from itb.suite import apps
from itb.suite.classes import CLASSES
from itb.suite.scaling import make_scale

GBIT = 1_000_000_000


def test_a_simulated_class_runs_at_the_documents_10_gbit_s():
    s = make_scale(factor=None, capacity_bps=None, transfer_time_s=5.0, simulated=True)
    b, a = s.of(CLASSES["B"]), s.of(CLASSES["A"])
    assert (b.capacity_bps, b.access_bps, b.factor) == (10 * GBIT, GBIT, 1.0)
    # K = 1000: C_a = 10 Gbit/s / 1000 = 10 Mbit/s; not capped at 200 Mbit/s as emulated
    assert (a.capacity_bps, a.access_bps, a.factor) == (10 * GBIT, 10_000_000, 100.0)
    # 5 s at C_a: 625 MB at 1 Gbit/s, 6.25 MB at 10 Mbit/s
    assert (b.bu_volume, a.bu_volume) == (625_000_000, 6_250_000)
    assert s.to_json()["simulated"] is True and b.to_json()["simulated"] is True


def test_an_emulated_scale_keeps_its_key_and_its_many_sources_cap():
    s = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=5.0)
    assert "simulated" not in s.to_json()
    assert s.of(CLASSES["A"]).capacity_bps == 200_000_000  # MANY_SOURCES_MAX_BPS


def test_a_simulated_k1000_class_has_800_sources_each_a_transfer_over_100_pairs():
    s = make_scale(factor=None, capacity_bps=None, transfer_time_s=5.0, simulated=True)
    cs = s.of(CLASSES["A"])
    g = apps.generate(apps.Cell("BU", CLASSES["A"], "cubic"), cs, 1, 1.0, 1, 200, 1)
    fwd = [t for t in g.doc["transfer"] if t["id"].startswith("bu.")]
    assert len(fwd) == 800 and {t["streams"] for t in fwd} == {1}
    assert {t["rate"] for t in fwd} == {"10Mbit"}
    assert g.doc["dumbbell"]["pairs"] == 100  # 8 sources a host pair
    # emulated, the same class bundles its sources (at most 64 streams a transfer)
    e = make_scale(factor=None, capacity_bps=GBIT, transfer_time_s=5.0).of(CLASSES["A"])
    g = apps.generate(apps.Cell("BU", CLASSES["A"], "cubic"), e, 1, 1.0, 1, 200, 1)
    assert len([t for t in g.doc["transfer"] if t["id"].startswith("bu.")]) < 800
