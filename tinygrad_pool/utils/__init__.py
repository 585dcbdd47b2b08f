"""Utilities beside the engine, as ``torch.utils``: ``utils.data`` (datasets and DataLoader)."""
from . import data

__all__ = ["data"]
