"""rulecli's version, in a module of its own: model files record it, and importing it must
not import the package's face (which hands the API on)."""

__version__ = "0.1.0"
