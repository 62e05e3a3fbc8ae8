"""eWAN calibration: micro-benchmarks that tell how far the testbed is from its configuration."""
