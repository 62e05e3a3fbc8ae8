"""Studies: sweeps with an analysis of their own (`itb study ...`)."""
