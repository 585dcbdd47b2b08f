"""Neural-network building blocks on top of the engine."""
from . import functional

__all__ = ["functional"]
