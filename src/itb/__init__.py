"""ITB: transport benchmark on emulated, real and simulated long-distance networks."""

__version__ = "0.1.0"
