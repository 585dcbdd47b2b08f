"""Neural-network building blocks on top of the engine."""
from . import functional
from . import init
from .layers import AvgPool2d, Conv2d, Flatten, Linear, MaxPool2d, ReLU
from .module import Module, Parameter, Sequential

__all__ = ["functional", "init", "Module", "Parameter", "Sequential", "Conv2d", "MaxPool2d",
           "AvgPool2d", "ReLU", "Linear", "Flatten"]
