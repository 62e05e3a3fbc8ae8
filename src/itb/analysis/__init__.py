"""Analysis of a run directory's tidy tables: metrics (docs/metrics.md) and the fair-share ideal."""

from itb.analysis.fairshare import (
    compare_to_ideal,
    fair_share_summary,
    ideal_completion_times,
    max_min_rates,
    tcp_payload_share,
)
from itb.analysis.metrics import (
    aggregate_goodput,
    bottleneck_throughput,
    completion_stats,
    efficiency,
    fit_linear,
    goodput_distribution,
    jain_index,
    margins,
    queueing_delay,
    run_metrics,
    transfer_goodput,
    utilisation,
)
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
