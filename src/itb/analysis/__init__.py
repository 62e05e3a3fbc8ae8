"""Analysis of a run directory's tidy tables: metrics (docs/metrics.md) and the fair-share ideal."""

from itb.analysis.fairshare import (
    compare_to_ideal,
    fair_share_summary,
    ideal_completion_times,
    max_min_rates,
    tcp_payload_share,
)
from itb.analysis.metrics import run_metrics
from itb.analysis.series import (
    aggregate_goodput,
    bottleneck_throughput,
    efficiency,
    goodput_distribution,
    queueing_delay,
    transfer_goodput,
    utilisation,
)
from itb.analysis.statistics import completion_stats, fit_linear, jain_index, margins
from itb.analysis.tables import validate

__all__ = [
    "aggregate_goodput",
    "bottleneck_throughput",
    "compare_to_ideal",
    "completion_stats",
    "efficiency",
    "fair_share_summary",
    "fit_linear",
    "goodput_distribution",
    "ideal_completion_times",
    "jain_index",
    "margins",
    "max_min_rates",
    "queueing_delay",
    "run_metrics",
    "tcp_payload_share",
    "transfer_goodput",
    "utilisation",
    "validate",
]
