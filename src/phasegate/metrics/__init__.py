"""Metrics from run logs: streaming aggregation (pure) and its renderings."""
